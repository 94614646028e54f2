"""A hidden document of another kind that shares a visible metric's name (a restricted board
memo "on energy intensity") is no reason to deny a definition question about the metric: a
role that sees both gets the metric (a metric governs before a memo, `_pick_concept`), so the
role that sees only the metric gets the same answer. Naming the memo ("the energy intensity
memo") still asks for it, and is denied. A hidden metric of the same name is still a deny.
Manufacturing documents, a domain no gold set uses."""

from __future__ import annotations

import datetime as dt

from canon.ask.pipeline import AskContext, ask
from canon.models.documents import Document
from canon.registry.policy import Policy

D = dt.date.fromisoformat


def _doc(doc_id: str, object_id: str, kind: str, title: str, roles: tuple[str, ...], text: str) -> Document:
    return Document(doc_id=doc_id, object_id=object_id, kind=kind, title=title, status="approved", authority=100,
                    version="1", valid_from=D("2025-01-01"), allowed_roles=roles, text=text)


METRIC = _doc("metric.energy_intensity.v1", "metric.plant.energy_intensity", "metric_definition",
              "Energy intensity governed definition v1", ("analyst", "executive"),
              "Energy intensity is kilowatt-hours consumed per tonne of finished goods.")
MEMO = _doc("memo.energy_intensity.board", "memo.finance.energy_intensity", "restricted_memo",
            "Board memo on energy intensity", ("executive",),
            "The board targets a lower energy intensity next year.")


def _ctx(*docs: Document) -> AskContext:
    return AskContext(docs=list(docs), policy=Policy(), log_answers=False)


def test_the_visible_metric_is_answered_for_every_role_beside_a_hidden_memo_of_its_name():
    ctx = _ctx(METRIC, MEMO)
    for q in ("What is the energy intensity?", "How is energy intensity defined?"):
        for role in ("analyst", "executive"):
            resp = ask(ctx, q, role, D("2026-06-01"))
            assert resp.action == "answer", (q, role, resp.reason)
            assert [e.doc_id for e in resp.evidence] == ["metric.energy_intensity.v1"]


def test_naming_the_memo_asks_for_it():
    ctx = _ctx(METRIC, MEMO)
    assert ask(ctx, "What does the energy intensity memo say?", "analyst").action == "deny"
    memo = ask(ctx, "What does the energy intensity memo say?", "executive")
    assert [e.doc_id for e in memo.evidence][:1] == ["memo.energy_intensity.board"]


def test_a_hidden_metric_of_the_same_name_is_still_denied():
    hidden = _doc("metric.energy_intensity_site.v1", "metric.site.energy_intensity", "metric_definition",
                  "Energy intensity governed definition v1 (site)", ("executive",),
                  "Energy intensity is kilowatt-hours per square metre of floor space.")
    assert ask(_ctx(METRIC, hidden), "What is the energy intensity?", "analyst").action == "deny"


def test_the_kind_a_noun_names_comes_before_the_kind_that_governs():
    ctx = _ctx(METRIC, MEMO)
    for q in ("Summarise the energy intensity memo", "Show me the board memo on energy intensity"):
        resp = ask(ctx, q, "executive")
        assert [e.doc_id for e in resp.evidence][:1] == ["memo.energy_intensity.board"], q
    # The memo visible, the metric hidden: naming the memo is answered from it; asking the
    # metric's definition is denied (a role seeing both gets the metric).
    open_memo = MEMO.model_copy(update={"allowed_roles": ("analyst", "executive")})
    closed_metric = METRIC.model_copy(update={"allowed_roles": ("executive",)})
    ctx = _ctx(closed_metric, open_memo)
    resp = ask(ctx, "What does the energy intensity memo say?", "analyst")
    assert resp.action == "answer" and [e.doc_id for e in resp.evidence] == ["memo.energy_intensity.board"]
    assert ask(ctx, "What is the energy intensity?", "analyst").action == "deny"


def test_a_misspelled_name_is_the_visible_metric_not_a_deny():
    """A misspelling ("energy intensty", "enrgy intensity") matches the metric and the memo
    alike, neither written out whole: the metric governs before the memo for a role that sees
    both, so it is the answer for the role that sees only the metric, not a deny that says a
    hidden namesake exists. Naming the memo, misspelled, still asks for it."""
    ctx = _ctx(METRIC, MEMO)
    for q in ("What is the energy intensty?", "How is enrgy intensity defined?", "whats the energy intensitiy"):
        for role in ("analyst", "executive"):
            resp = ask(ctx, q, role, D("2026-06-01"))
            assert resp.action == "answer", (q, role, resp.action, resp.reason)
            assert [e.doc_id for e in resp.evidence] == ["metric.energy_intensity.v1"], (q, role)
    assert ask(ctx, "What does the energy intensty memo say?", "analyst").action == "deny"
    hidden = _doc("metric.energy_intensity_site.v1", "metric.site.energy_intensity", "metric_definition",
                  "Energy intensity governed definition v1 (site)", ("executive",),
                  "Energy intensity is kilowatt-hours per square metre of floor space.")
    assert ask(_ctx(METRIC, hidden), "What is the energy intensty?", "analyst").action == "deny"
