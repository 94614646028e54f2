"""Questions Canon cannot read are input errors (exit 2, a message, no
traceback), not answers: an empty question, an unknown or empty role, a date
that does not exist (docs/contracts.md, "CLI exit codes")."""

from __future__ import annotations

import cli_workspace
import pytest


@pytest.fixture(scope="module", params=[True, False], ids=["scoped", "whole-registry"])
def ws(tmp_path_factory, request):
    """With the stored catalog `canon ask` reads what its question needs; without, everything."""
    return cli_workspace.build(tmp_path_factory.mktemp("clear_ws"), catalog=request.param)


def _input_error(out, *words: str) -> None:
    assert out.returncode == 2, (out.returncode, out.stdout)
    assert "Traceback" not in out.stderr and out.stdout == ""
    for w in words:
        assert w in out.stderr, (w, out.stderr)


@pytest.mark.parametrize("question", ["", "   ", "\n\t"])
def test_an_empty_question_is_an_input_error(ws, question):
    _input_error(ws.run("ask", question, "--role", "analyst", "--json"), "question", "empty")


@pytest.mark.parametrize("question", ["What was net revenue for December 9999?",
                                      "Which net revenue definition applies for February 30, 2026?",
                                      "Which net revenue definition applies for 2026-13-01?"])
def test_a_date_that_does_not_exist_is_an_input_error(ws, question):
    _input_error(ws.run("ask", question, "--role", "analyst", "--json"), "question")


@pytest.mark.parametrize("role", ["analystt", "", "ANALYST"])
def test_an_unknown_or_empty_role_is_an_input_error(ws, role):
    _input_error(ws.run("ask", cli_workspace.Q, "--role", role, "--json"), "--role")
    _input_error(ws.run("resolve", cli_workspace.OBJECT, "--as-of", cli_workspace.AS_OF, "--role", role, "--json"),
                 "--role")
    _input_error(ws.run("lineage", cli_workspace.OBJECT, "--as-of", cli_workspace.AS_OF, "--role", role, "--json"),
                 "--role")


def test_a_role_only_the_policy_names_is_known(ws):
    ws.policy.write_text('revision: "p9"\nrevoke:\n  - role: auditor_only_in_policy\n    object_id: "memo.*"\n')
    try:
        _input_error(ws.run("ask", cli_workspace.Q, "--role", "auditor_named_nowhere", "--json"), "--role")
        resp = ws.ask(role="auditor_only_in_policy")
        assert resp["action"] == "deny" and resp["reason"] == "not_authorized"
    finally:
        ws.policy.write_text(cli_workspace.VALID)
    assert ws.ask()["action"] == "answer"
