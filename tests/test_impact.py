"""`canon impact`: the "policy fix" question (docs/design.md, "A policy fix and impact analysis") — which logged answers
relied on a revision that has since been corrected."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from canon.ask.context import ask_context
from canon.ask.pipeline import ask
from canon.cli.main import main
from canon.core.config import CanonPaths
from canon.core.errors import CanonInputError
from canon.index import publish as index
from canon.index.embedding.hashing import HashingEmbedder
from canon.lifecycle.impact import format_text, impact
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.registry.policy import load_policy

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "dossier" / "corpus.jsonl"
CONTRACT = load_contract(ROOT / "contracts" / "knowledge.yml")
V2 = "metric.net_revenue.v2"
Q_V2 = "Which net revenue definition applies for reporting date 2026-08-31?"
Q_V1 = "Which net revenue definition applies for reporting date 2026-06-30?"
WRONG = "Currency is converted to USD with transaction-date daily FX."


def _write_corpus(path: Path, v2_text: str | None = None, v2_hash: str | None = None) -> None:
    lines = []
    for line in CORPUS.read_text().splitlines():
        d = json.loads(line)
        if d["doc_id"] == V2 and v2_text is not None:
            d["text"], d["content_hash"] = v2_text, v2_hash
        lines.append(json.dumps(d))
    path.write_text("\n".join(lines) + "\n")


def _refresh(con, paths, corpus: Path, run_id: str, publish: bool = True):
    build_registry(con, corpus=corpus, corpus_contract=CONTRACT, run_id=run_id)
    registry.refresh_definitions(con)
    docs = registry.load_documents(con)
    if publish:
        index.publish(con, paths.lancedb_dir, docs, HashingEmbedder(), policy_revision="p1", run_id=run_id)
    return ask_context(con, paths.lancedb_dir, docs, load_policy(None))


def _version(con, content_hash: str) -> str:
    return con.execute("SELECT doc_version FROM document_versions WHERE doc_id = ? AND content_hash = ?",
                       [V2, content_hash]).fetchall()[0][0]


@pytest.fixture()
def history(tmp_path, monkeypatch):
    """Answers given before a correction of v2, after it, and while the index was stale."""
    monkeypatch.setenv("CANON_HOME", str(tmp_path / "home"))
    paths = CanonPaths.from_env().ensure()
    corpus = tmp_path / "corpus" / "corpus.jsonl"
    corpus.parent.mkdir()
    _write_corpus(corpus)
    con = registry.connect(paths.canon_db)
    original = json.loads([line for line in CORPUS.read_text().splitlines() if V2 in line.split(",")[0]][0])
    assert WRONG in original["text"]

    ctx = _refresh(con, paths, corpus, "run-a")
    wrong = [ask(ctx, Q_V2, "analyst"), ask(ctx, Q_V2, "finance_controller")]
    other = ask(ctx, Q_V1, "analyst")
    rev_a = index.served_revision(con)["revision_id"]

    # Monday: the source team corrects v2 (a new text, a new hash) and it is published.
    _write_corpus(corpus, original["text"].replace(WRONG, "Currency is converted to USD with settlement-date FX."),
                  "sha256:fixture-metric-v2-fixed")
    ctx = _refresh(con, paths, corpus, "run-b")
    fixed = [ask(ctx, Q_V2, "analyst")]
    rev_b = index.served_revision(con)["revision_id"]

    # A second correction lands in the registry before the index is republished (stale index):
    # the answer reads it live, so only its content hash is logged.
    _write_corpus(corpus, original["text"].replace(WRONG, "Currency is converted to USD with settlement-date FX "
                                                          "(daily rates)."), "sha256:fixture-metric-v2-fixed2")
    ctx = _refresh(con, paths, corpus, "run-c", publish=False)
    stale = [ask(ctx, Q_V2, "finance_controller")]
    for r in wrong + fixed + stale:
        assert r.action == "answer" and r.evidence[0].doc_id == V2 and r.evidence[0].use == "primary"
    yield {"con": con, "paths": paths, "wrong": wrong, "fixed": fixed, "stale": stale, "other": other,
           "rev_a": rev_a, "rev_b": rev_b}
    con.close()


def test_impact_finds_exactly_the_answers_that_cited_the_corrected_revision(history):
    con = history["con"]
    v_wrong = _version(con, "sha256:fixture-metric-v2")
    rep = impact(con, V2, v_wrong)
    assert [a["answer_id"] for a in rep["answers"]] == [r.answer_id for r in history["wrong"]]
    assert rep["doc_version"] == v_wrong and rep["count"] == 2
    for a, r in zip(rep["answers"], history["wrong"]):
        assert a["role"] == r.role and a["index_revision"] == history["rev_a"] and a["action"] == "answer"
        assert a["use"] == "primary" and a["claims"] == sum(c.evidence_id == V2 for c in r.claims) > 0
        assert a["matched_by"] == "chunk_ids" and a["doc_versions"] == [v_wrong] and a["current"] is False
        assert a["asked_at"].endswith("Z")
    assert rep["claims"] == sum(a["claims"] for a in rep["answers"])
    # the same revision named by its content hash
    assert [a["answer_id"] for a in impact(con, V2, "sha256:fixture-metric-v2")["answers"]] == \
        [r.answer_id for r in history["wrong"]]


def test_impact_of_later_revisions_and_of_the_whole_document(history):
    con = history["con"]
    v_fixed = _version(con, "sha256:fixture-metric-v2-fixed")
    v_stale = _version(con, "sha256:fixture-metric-v2-fixed2")
    fixed = impact(con, V2, v_fixed)
    assert [a["answer_id"] for a in fixed["answers"]] == [r.answer_id for r in history["fixed"]]
    assert fixed["answers"][0]["index_revision"] == history["rev_b"]
    stale = impact(con, V2, v_stale)
    assert [a["answer_id"] for a in stale["answers"]] == [r.answer_id for r in history["stale"]]
    assert stale["answers"][0]["matched_by"] == "content_hash" and stale["answers"][0]["chunk_ids"] == []
    assert stale["answers"][0]["current"] is True
    everything = impact(con, V2)
    assert [a["answer_id"] for a in everything["answers"]] == [
        r.answer_id for r in history["wrong"] + history["fixed"] + history["stale"]]
    assert [v["answers"] for v in everything["versions"]] == [2, 1, 1]
    assert [v["current"] for v in everything["versions"]] == [False, False, True]
    # an answer about v1 is not an answer that relied on v2
    assert history["other"].answer_id not in {a["answer_id"] for a in everything["answers"]}
    assert history["other"].answer_id in {a["answer_id"] for a in impact(con, "metric.net_revenue.v1")["answers"]}
    text = format_text(impact(con, V2, _version(con, "sha256:fixture-metric-v2")))
    assert "2 answer(s)" in text and "no longer current" in text


def test_unknown_version_is_an_input_error(history):
    with pytest.raises(CanonInputError, match="known versions"):
        impact(history["con"], V2, "nope")


def test_impact_cli(history, capsys):
    con = history["con"]
    v_wrong = _version(con, "sha256:fixture-metric-v2")
    con.close()  # the CLI opens the workspace read-only
    assert main(["impact", "--doc-id", V2, "--doc-version", v_wrong, "--role", "finance_controller", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [a["answer_id"] for a in out["answers"]] == [r.answer_id for r in history["wrong"]]
    assert main(["impact", "--doc-id", V2, "--role", "finance_controller"]) == 0
    assert "4 answer(s)" in capsys.readouterr().out
    assert main(["impact", "--doc-id", V2, "--doc-version", "nope", "--role", "finance_controller"]) == 2
    history["con"] = registry.connect(history["paths"].canon_db)


MEMO = "memo.rebate_reserve.q4_2026"
Q_MEMO = "What does the finance-only Q4 rebate reserve memo say?"
Q_LINEAGE = "Which raw sources and model version support net revenue for 2026-08-31?"


@pytest.fixture()
def memo_readers(tmp_path, monkeypatch):
    """A workspace where the finance controller read the restricted memo, logged as
    `canon ask` logs it (the answer log file under CANON_HOME)."""
    from canon.ask.answer_log import AnswerLogFile

    monkeypatch.setenv("CANON_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CANON_POLICY", raising=False)
    paths = CanonPaths.from_env().ensure()
    con = registry.connect(paths.canon_db)
    build_registry(con, corpus=CORPUS, corpus_contract=CONTRACT, run_id="run-a")
    registry.refresh_definitions(con)
    docs = registry.load_documents(con)
    index.publish(con, paths.lancedb_dir, docs, HashingEmbedder(), policy_revision="p1", run_id="run-a")
    ctx = ask_context(con, paths.lancedb_dir, docs, load_policy(None), answer_store=AnswerLogFile(paths.answer_log_file))
    read = ask(ctx, Q_MEMO, "finance_controller")
    assert read.action == "answer" and MEMO in {e.doc_id for e in read.evidence}
    both = ask(ctx, Q_LINEAGE, "finance_controller")
    assert both.action == "answer"
    con.close()
    return {"paths": paths, "read": read, "both": both}


def _impact_json(capsys, *args) -> dict:
    assert main(["impact", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_impact_requires_a_role(memo_readers, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["impact", "--doc-id", MEMO])
    assert exc.value.code == 2 and "--role" in capsys.readouterr().err


def test_impact_shows_a_restricted_documents_readers_only_to_roles_that_may_see_it(memo_readers, capsys):
    mine = _impact_json(capsys, "--doc-id", MEMO, "--role", "finance_controller")
    assert memo_readers["read"].answer_id in {a["answer_id"] for a in mine["answers"]}
    assert mine["versions"] and mine["answers"][0]["role"] == "finance_controller"

    hidden = _impact_json(capsys, "--doc-id", MEMO, "--role", "analyst")
    assert hidden["answers"] == [] and hidden["versions"] == [] and hidden["count"] == 0
    # indistinguishable from an id that does not exist
    unknown = _impact_json(capsys, "--doc-id", "memo.no_such_memo", "--role", "analyst")
    assert {k: v for k, v in hidden.items() if k != "doc_id"} == {k: v for k, v in unknown.items() if k != "doc_id"}
    # naming a version does not reveal the memo's versions either
    v = mine["versions"][0]["doc_version"]
    assert main(["impact", "--doc-id", MEMO, "--doc-version", v, "--role", "analyst"]) == 2
    assert "none recorded" in capsys.readouterr().err


def test_impact_hides_answers_that_also_cited_what_the_role_may_not_see(memo_readers, capsys, tmp_path, monkeypatch):
    both = memo_readers["both"]
    cited = [e.doc_id for e in both.evidence]
    assert len(cited) >= 2
    first, other = cited[0], cited[-1]
    shown = _impact_json(capsys, "--doc-id", first, "--role", "analyst")
    assert both.answer_id in {a["answer_id"] for a in shown["answers"]}
    # the live policy takes one of the answer's other documents away from analysts
    policy = tmp_path / "policy.yml"
    policy.write_text(f"revision: p-revoke-other\nrevoke:\n  - role: analyst\n    doc_id: {other}\n")
    monkeypatch.setenv("CANON_POLICY", str(policy))
    hidden = _impact_json(capsys, "--doc-id", first, "--role", "analyst")
    assert both.answer_id not in {a["answer_id"] for a in hidden["answers"]} and hidden["versions"]
    kept = _impact_json(capsys, "--doc-id", first, "--role", "finance_controller")
    assert both.answer_id in {a["answer_id"] for a in kept["answers"]}


def test_impact_follows_the_live_policy(memo_readers, capsys, tmp_path, monkeypatch):
    policy = tmp_path / "policy.yml"
    policy.write_text(f"revision: p-revoke\nrevoke:\n  - role: finance_controller\n    doc_id: {MEMO}\n")
    monkeypatch.setenv("CANON_POLICY", str(policy))
    revoked = _impact_json(capsys, "--doc-id", MEMO, "--role", "finance_controller")
    assert revoked["answers"] == [] and revoked["versions"] == []
