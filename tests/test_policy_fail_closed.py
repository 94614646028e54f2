"""The live policy fails closed (docs/contracts.md, "Access policy"): every
shape of a policy Canon cannot trust makes `canon ask` and `canon resolve`
answer `deny` / `policy_unavailable` with nothing of any document, until a
valid policy is back; the policy path comes from CANON_POLICY / CANON_CORPUS,
never from the corpus root a build recorded. Driven through the real console
script on a real built workspace (tests/cli_workspace.py)."""

from __future__ import annotations

import json
import shutil

import cli_workspace
import pytest

from canon.ops.policy_check import policy_available
from canon.registry import store as registry

UNAVAILABLE_SHAPES = {
    "empty": "",
    "blank": "\n   \n",
    "revokes_typo": 'revision: "p3"\nrevokes:\n  - role: analyst\n    object_id: "metric.finance.*"\n',
    "rule_without_target": 'revision: "p3"\nrevoke:\n  - role: analyst\n',
    "unknown_rule_key": 'revision: "p3"\nrevoke:\n  - role: analyst\n    objectid: "metric.finance.*"\n',
    "nul_in_glob": 'revision: "p3"\nrevoke:\n  - role: "analyst\\0"\n    object_id: "metric.finance.*"\n',
    "control_char_in_glob": 'revision: "p3"\nrevoke:\n  - role: analyst\n    object_id: "metric.\\x1bfinance.*"\n',
    "not_yaml": "revision: [unclosed\n",
    "not_a_mapping": "- role: analyst\n",
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    return cli_workspace.build(tmp_path_factory.mktemp("policy_ws"))


def _assert_unavailable(resp: dict) -> None:
    assert resp["action"] == "deny" and resp["reason"] == "policy_unavailable"
    assert resp["evidence"] == [] and resp["claims"] == [] and resp["options"] == [] and resp["freshness"] == []
    assert resp["policy_revision"] == "unavailable"
    # Nothing of any document: no id, no object, no text of the dossier.
    dumped = json.dumps({k: v for k, v in resp.items() if k != "question"})
    for leak in ("metric.", "net_revenue", "memo.", "credit notes", "fct_revenue"):
        assert leak not in dumped, leak


def _assert_answers(ws) -> None:
    assert ws.ask()["action"] == "answer"
    assert ws.resolve()["action"] == "answer"


@pytest.mark.parametrize("shape", sorted(UNAVAILABLE_SHAPES))
def test_an_untrustworthy_policy_denies_every_query_until_a_valid_one_is_back(ws, shape):
    ws.policy.write_text(UNAVAILABLE_SHAPES[shape])
    out = ws.run("ask", cli_workspace.Q, "--role", "analyst", "--json")
    assert out.returncode == 0 and "Traceback" not in out.stderr
    _assert_unavailable(json.loads(out.stdout))
    assert "policy.yml" in out.stderr and "unavailable" in out.stderr  # the operator learns which file
    _assert_unavailable(ws.resolve())
    ws.policy.write_text(cli_workspace.VALID)
    _assert_answers(ws)


def test_a_directory_where_the_policy_should_be_denies_without_a_traceback(ws):
    ws.policy.unlink()
    ws.policy.mkdir()
    try:
        out = ws.run("resolve", cli_workspace.OBJECT, "--as-of", cli_workspace.AS_OF, "--role", "analyst", "--json")
        assert out.returncode == 0 and "Traceback" not in out.stderr and "is a directory" in out.stderr
        _assert_unavailable(json.loads(out.stdout))
        _assert_unavailable(ws.ask())
    finally:
        ws.policy.rmdir()
        ws.policy.write_text(cli_workspace.VALID)
    _assert_answers(ws)


def test_a_policy_deleted_after_the_build_denies_until_it_is_back(ws):
    ws.policy.write_text(cli_workspace.VALID)
    ws.policy.unlink()
    _assert_unavailable(ws.ask())
    _assert_unavailable(ws.resolve())
    # Every role gets the same answer, whatever the documents' ACL would have said.
    _assert_unavailable(ws.ask(role="finance_controller"))
    _assert_unavailable(ws.json("lineage", cli_workspace.OBJECT, "--as-of", cli_workspace.AS_OF, "--role", "analyst"))
    ws.policy.write_text(cli_workspace.VALID)
    _assert_answers(ws)


def test_a_corpus_that_never_had_a_policy_has_no_revocations_until_one_appears_and_vanishes(tmp_path):
    ws = cli_workspace.build(tmp_path, policy_text=None)
    _assert_answers(ws)
    ws.policy.write_text(cli_workspace.REVOKE_ANALYST)
    assert ws.ask()["reason"] == "not_authorized"   # the first query sees it, and the registry remembers it
    ws.policy.unlink()
    _assert_unavailable(ws.resolve())
    _assert_unavailable(ws.ask())


def test_moving_the_corpus_keeps_its_revocations(tmp_path):
    ws = cli_workspace.build(tmp_path, policy_text=cli_workspace.REVOKE_ANALYST)
    assert ws.ask()["reason"] == "not_authorized" and ws.resolve()["reason"] == "not_authorized"
    moved = tmp_path / "moved"
    shutil.move(str(ws.corpus), str(moved))
    ws.corpus = moved   # CANON_CORPUS follows the corpus; the registry still records the old folder
    via_policy = {"CANON_POLICY": str(moved / "policy.yml"), "CANON_CORPUS": str(tmp_path / "elsewhere")}
    for env in ({}, via_policy):   # CANON_CORPUS alone, then CANON_POLICY winning over another corpus
        for resp in (ws.ask(env=env), ws.resolve(env=env)):
            assert resp["action"] == "deny" and resp["reason"] == "not_authorized" and resp["evidence"] == []
        assert ws.ask(role="finance_controller", env=env)["action"] == "answer"


def test_the_policy_check_fails_while_the_policy_is_unavailable(ws):
    con = registry.connect(ws.home / "canon.duckdb")
    try:
        ws.policy.write_text(UNAVAILABLE_SHAPES["revokes_typo"])
        policy, outcome = policy_available(con, ws.policy)
        assert not policy.available and not outcome.passed and outcome.severity == "ERROR"
        assert "policy.yml" in outcome.summary and "revokes" in outcome.summary
        ws.policy.write_text(cli_workspace.VALID)
        policy, outcome = policy_available(con, ws.policy)
        assert policy.available and outcome.passed and outcome.metadata["policy_revision"] == "p1"
    finally:
        con.close()
        ws.policy.write_text(cli_workspace.VALID)
