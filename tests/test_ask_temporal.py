"""Dates, periods, named versions and comparisons in `canon ask` (canon/ask/understanding/temporal.py,
canon/ask/revisions.py), on documents of domains the evaluation sets do not use (energy, healthcare):
the real pipeline over an in-memory registry, with an injected clock."""

from __future__ import annotations

import datetime as dt

import pytest

from canon.ask.pipeline import AskContext, ask
from canon.ask.understanding import temporal
from canon.core.dates import find_date
from canon.models.documents import Document
from canon.registry.policy import Policy

D = dt.date.fromisoformat
ROLES = ("analyst",)


def _doc(doc_id, object_id, version, valid_from, valid_to, text, status="approved", title=None, roles=ROLES):
    return Document(doc_id=doc_id, object_id=object_id, kind="metric_definition", title=title or doc_id,
                    status=status, authority=90 if status == "approved" else 20, version=version,
                    valid_from=D(valid_from), valid_to=D(valid_to) if valid_to else None,
                    allowed_roles=roles, text=text)


# Energy: grid availability changed on 2026-05-01; a draft v3 is proposed.
GRID = "metric.energy.grid_availability"
GRID_DOCS = [
    _doc("metric.grid_availability.v1", GRID, "1", "2025-01-01", "2026-05-01",
         "Grid availability is the share of hours a feeder is energised. Planned outages count as unavailable.",
         title="Grid availability governed definition v1"),
    _doc("metric.grid_availability.v2", GRID, "2", "2026-05-01", None,
         "Grid availability is the share of hours a feeder is energised. Planned outages are excluded.",
         title="Grid availability governed definition v2"),
    _doc("metric.grid_availability.v3", GRID, "3", "2027-01-01", None,
         "Grid availability counts minutes instead of hours.", status="draft",
         title="Grid availability proposal v3"),
]
# Healthcare: bed occupancy changed on 2026-08-15, in the middle of Q3.
BEDS = "metric.health.bed_occupancy"
BED_DOCS = [
    _doc("metric.bed_occupancy.v1", BEDS, "1", "2025-06-01", "2026-08-15",
         "Bed occupancy divides occupied beds at midnight by staffed beds.", title="Bed occupancy definition v1"),
    _doc("metric.bed_occupancy.v2", BEDS, "2", "2026-08-15", None,
         "Bed occupancy divides occupied bed-days by staffed bed-days.", title="Bed occupancy definition v2"),
]


@pytest.fixture
def ctx():
    return AskContext(docs=GRID_DOCS + BED_DOCS, policy=Policy(), log_answers=False,
                      clock=lambda: D("2026-12-01"))


def _ids(resp):
    return [e.doc_id for e in resp.evidence]


def test_a_period_one_revision_governs_is_answered_with_it(ctx):
    for q in ("Which grid availability definition applied in Q3 2026?",
              "grid availability definition for the second half of 2026",
              "How was grid availability defined in Jun 2026?", "grid availability definition for 2026-06",
              "How was grid availability defined from June to September 2026?"):
        resp = ask(ctx, q, "analyst")
        assert (resp.action, _ids(resp)) == ("answer", ["metric.grid_availability.v2"]), q
        assert resp.as_of is not None and resp.evidence[0].valid_from <= resp.as_of, q


def test_a_period_spanning_a_change_clarifies_with_each_sub_period(ctx):
    resp = ask(ctx, "Which bed occupancy definition applied in Q3 2026?", "analyst")
    assert resp.action == "clarify" and resp.reason == "period_spans_change"
    assert [(o["evidence_id"], o["applies_from"], o["applies_to"]) for o in resp.options] == [
        ("metric.bed_occupancy.v1", "2026-07-01", "2026-08-15"),
        ("metric.bed_occupancy.v2", "2026-08-15", "2026-10-01")]
    assert ask(ctx, "bed occupancy definition for the 2026 calendar year", "analyst").action == "clarify"


def test_the_end_of_a_month_is_a_day_not_the_month(ctx):
    resp = ask(ctx, "Which bed occupancy definition applied at the end of August 2026?", "analyst")
    assert (resp.action, _ids(resp), resp.as_of) == ("answer", ["metric.bed_occupancy.v2"], D("2026-08-31"))
    resp = ask(ctx, "bed occupancy definition for the July 2026 close", "analyst")
    assert (resp.action, _ids(resp), resp.as_of) == ("answer", ["metric.bed_occupancy.v1"], D("2026-07-31"))


def test_relative_days_count_from_the_as_of_date_or_the_clock(ctx):
    resp = ask(ctx, "Which bed occupancy definition applied yesterday?", "analyst", D("2026-08-15"))
    assert (_ids(resp), resp.as_of) == (["metric.bed_occupancy.v1"], D("2026-08-14"))
    assert "2026" in resp.answer and "August 14" in resp.answer
    resp = ask(ctx, "Which bed occupancy definition is in force right now?", "analyst")
    assert (resp.action, _ids(resp), resp.as_of) == ("answer", ["metric.bed_occupancy.v2"], D("2026-12-01"))
    ctx.clock = lambda: D("2026-08-01")
    resp = ask(ctx, "Give me today's bed occupancy definition.", "analyst")
    assert (_ids(resp), resp.as_of) == (["metric.bed_occupancy.v1"], D("2026-08-01"))


def test_a_named_version_selects_that_revision_with_its_validity(ctx):
    for q, want in (("What is grid availability v1?", "metric.grid_availability.v1"),
                    ("Show me version 2 of the grid availability definition.", "metric.grid_availability.v2"),
                    ("What did the first version of grid availability say?", "metric.grid_availability.v1"),
                    ("What was the previous grid availability definition?", "metric.grid_availability.v1"),
                    ("What is the current grid availability definition?", "metric.grid_availability.v2")):
        resp = ask(ctx, q, "analyst")
        assert (resp.action, _ids(resp)) == ("answer", [want]), q
        doc = resp.evidence[0]
        assert resp.as_of is None or doc.valid_from <= resp.as_of, q
        assert doc.valid_from.isoformat() in resp.answer, q
    # A version that is only a draft is never authoritative; one that does not exist is asked about.
    assert ask(ctx, "What is grid availability v3?", "analyst").action == "abstain"
    resp = ask(ctx, "What is grid availability v7?", "analyst")
    assert resp.action == "clarify" and resp.reason == "version_not_found"


def test_previous_is_relative_to_the_as_of_date(ctx):
    resp = ask(ctx, "What was the previous bed occupancy definition?", "analyst", D("2026-09-01"))
    assert _ids(resp) == ["metric.bed_occupancy.v1"]
    resp = ask(ctx, "What was the previous bed occupancy definition?", "analyst", D("2026-03-01"))
    assert resp.action == "clarify" and resp.reason == "version_not_found"


def test_a_comparison_cites_both_revisions_and_what_each_states(ctx):
    for q in ("What changed between grid availability v1 and v2?",
              "What is the difference between the old and the new grid availability definition?",
              "How did the grid availability definition change from version 1 to version 2?"):
        resp = ask(ctx, q, "analyst")
        assert resp.action == "answer", q
        assert _ids(resp) == ["metric.grid_availability.v1", "metric.grid_availability.v2"], q
        data = resp.to_json_dict()
        cmp = data["comparison"]
        assert (cmp["from"]["doc_id"], cmp["to"]["doc_id"]) == ("metric.grid_availability.v1",
                                                                "metric.grid_availability.v2")
        assert cmp["only_in_from"] == ["Planned outages count as unavailable."]
        assert cmp["only_in_to"] == ["Planned outages are excluded."]
        assert {c.evidence_id for c in resp.claims} == set(_ids(resp))
    assert "comparison" not in ask(ctx, "What is grid availability v1?", "analyst").to_json_dict()


def test_a_name_holding_a_temporal_word_is_not_read_as_one():
    # "current" inside an object's own name is not the clock's day.
    stripped = temporal.strip_names("what is the current ratio definition", ["current ratio"])
    refs = temporal.read_time("What is the current ratio definition?", stripped, None, D("2026-12-01"), find_date)
    assert (refs.day, refs.versions) == (None, ())
    # A named source's modifier is not a version ("the old wiki says").
    refs = temporal.read_time("The old wiki says # is hourly", "the old wiki says # is hourly", None,
                              D("2026-12-01"), find_date)
    assert (refs.day, refs.versions, refs.compare) == (None, (), False)


def test_a_version_naming_a_quoted_document_is_not_the_revision_asked_for(ctx):
    # "the v3 proposal" is a source the question quotes; the date decides the governing revision.
    resp = ask(ctx, "Which grid availability definition governs on 2026-06-01? The v3 proposal counts minutes.",
               "analyst")
    assert resp.action in ("answer", "answer_conflict")
    assert [e.doc_id for e in resp.evidence if e.use == "primary"] == ["metric.grid_availability.v2"]


def test_a_year_in_an_objects_name_is_not_a_period_and_a_full_date_beats_now():
    q = "What does the grid plan for 2027 say?"
    refs = temporal.read_time(q, temporal.strip_names("what does the grid plan for 2027 say", ["grid plan for 2027"]),
                              None, D("2026-12-01"), find_date, ["grid plan for 2027"])
    assert (refs.period, refs.day) == (None, None)
    refs = temporal.read_time("Is it fresh now, on 2026-05-31?", "is it fresh now on 2026 05 31", None,
                              D("2026-12-01"), find_date)
    assert (refs.day, refs.relative_day) == (D("2026-05-31"), False)
