"""Supersedes records that contradict themselves (a cycle, or an approved revision
claiming to supersede a later one) go to a person: `human_review` from resolve and
ask, and a failing canon/definitions check. Energy-domain documents, a domain no
gold set uses."""

from __future__ import annotations

import datetime as dt

from canon.ask.pipeline import AskContext, ask
from canon.ask.resolve import resolve
from canon.models.documents import Document
from canon.registry import checks
from canon.registry.policy import Policy
from canon.registry.temporal import resolve_revision, supersedes_contradictions

D = dt.date.fromisoformat
LOAD = "metric.energy.grid_load_factor"
SAIDI = "metric.energy.outage_minutes_per_customer"


def _doc(doc_id: str, object_id: str, version: str, start: str, end: str | None, supersedes: str | None,
         status: str = "approved", title: str = "") -> Document:
    return Document(doc_id=doc_id, object_id=object_id, kind="metric_definition",
                    title=title or object_id.rsplit(".", 1)[1].replace("_", " ").title(), status=status,
                    authority=90, version=version, valid_from=D(start), valid_to=D(end) if end else None,
                    allowed_roles=("analyst",), supersedes=supersedes,
                    text=f"{object_id} version {version}. It is computed from metered feeder readings.")


def _corpus() -> list[Document]:
    return [
        # v2 and v3 each claim to supersede the other; they do not overlap in time.
        _doc("metric.grid_load_factor.v1", LOAD, "1", "2024-01-01", "2025-01-01", None),
        _doc("metric.grid_load_factor.v2", LOAD, "2", "2025-01-01", "2026-01-01", "metric.grid_load_factor.v3"),
        _doc("metric.grid_load_factor.v3", LOAD, "3", "2026-01-01", None, "metric.grid_load_factor.v2"),
        # The earlier approved v1 claims to supersede the later v2.
        _doc("metric.outage_minutes.v1", SAIDI, "1", "2025-01-01", "2026-04-01", "metric.outage_minutes.v2"),
        _doc("metric.outage_minutes.v2", SAIDI, "2", "2026-04-01", None, None),
    ]


def test_cycle_and_inversion_are_found_and_an_ordinary_chain_is_not():
    found = {(a.doc_id, b.doc_id, why) for a, b, why in supersedes_contradictions(_corpus())}
    assert found == {
        ("metric.grid_load_factor.v2", "metric.grid_load_factor.v3", "supersedes_cycle"),
        ("metric.grid_load_factor.v3", "metric.grid_load_factor.v2", "supersedes_cycle"),
        ("metric.outage_minutes.v1", "metric.outage_minutes.v2", "supersedes_later_revision"),
    }
    chain = [_doc("m.v1", "metric.energy.peak_demand", "1", "2024-01-01", "2025-01-01", None),
             _doc("m.v2", "metric.energy.peak_demand", "2", "2025-01-01", None, "m.v1")]
    assert supersedes_contradictions(chain) == []
    assert resolve_revision(chain, D("2025-06-01")).chosen.doc_id == "m.v2"


def test_a_three_revision_cycle_is_a_contradiction():
    loop = [_doc("h.v1", "metric.health.bed_occupancy", "1", "2024-01-01", "2025-01-01", "h.v3"),
            _doc("h.v2", "metric.health.bed_occupancy", "2", "2025-01-01", "2026-01-01", "h.v1"),
            _doc("h.v3", "metric.health.bed_occupancy", "3", "2026-01-01", None, "h.v2")]
    assert {why for _, _, why in supersedes_contradictions(loop)} == {"supersedes_cycle"}
    assert resolve_revision(loop, D("2024-06-01")).outcome == "contradiction"


def test_resolve_sends_every_date_either_governs_to_human_review():
    docs = _corpus()
    for day in ("2025-03-15", "2026-08-31"):
        resp = resolve(docs, LOAD, D(day), "analyst", Policy())
        assert resp.action == "human_review" and resp.reason == "supersedes_contradiction", day
        assert [(e.doc_id, e.use) for e in resp.evidence] == [
            ("metric.grid_load_factor.v2", "conflict"), ("metric.grid_load_factor.v3", "conflict")]
    # v1 is in no contradiction: the date it alone governs is answered from it.
    resp = resolve(docs, LOAD, D("2024-06-01"), "analyst", Policy())
    assert resp.action == "answer" and resp.evidence[0].doc_id == "metric.grid_load_factor.v1"
    for day in ("2025-06-01", "2026-08-31"):
        resp = resolve(docs, SAIDI, D(day), "analyst", Policy())
        assert resp.action == "human_review" and resp.reason == "supersedes_contradiction"
        assert {e.doc_id for e in resp.evidence} == {"metric.outage_minutes.v1", "metric.outage_minutes.v2"}


def test_ask_answers_human_review_with_both_as_conflicts():
    ctx = AskContext(docs=_corpus(), policy=Policy(), log_answers=False)
    resp = ask(ctx, "Which grid load factor definition applies on 2025-03-15?", "analyst")
    assert resp.action == "human_review" and resp.reason == "supersedes_contradiction"
    assert {e.use for e in resp.evidence} == {"conflict"}
    assert {e.doc_id for e in resp.evidence} == {"metric.grid_load_factor.v2", "metric.grid_load_factor.v3"}
    resp = ask(ctx, "How are outage minutes per customer defined for 2026-08-31?", "analyst")
    assert resp.action == "human_review" and resp.reason == "supersedes_contradiction"


def test_definitions_check_lists_each_contradiction():
    rows = checks.contradicting_supersedes(_corpus())
    assert [(r["doc_id"], r["supersedes"], r["reason"]) for r in rows] == [
        ("metric.grid_load_factor.v2", "metric.grid_load_factor.v3", "supersedes_cycle"),
        ("metric.grid_load_factor.v3", "metric.grid_load_factor.v2", "supersedes_cycle"),
        ("metric.outage_minutes.v1", "metric.outage_minutes.v2", "supersedes_later_revision"),
    ]
    assert rows[2]["doc_period"] == "2025-01-01..2026-04-01" and rows[2]["superseded_period"] == "2026-04-01..open"
