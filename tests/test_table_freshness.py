"""Freshness questions that name a source table or a snapshot by its time: the
newest visible snapshot observing the table (with that table's readings), and a
named time of day picks the newest snapshot observed by then. Healthcare
documents, a domain no gold set uses."""

from __future__ import annotations

import datetime as dt

import pytest

from canon.ask.pipeline import AskContext, ask
from canon.ask.understanding.parse import find_tables, find_time_of_day
from canon.models.documents import Document
from canon.registry.policy import Policy

D = dt.date.fromisoformat


def _snapshot(hhmm: str, admissions_loaded: str) -> Document:
    return Document(
        doc_id=f"freshness.health.2026-05-04T{hhmm.replace(':', '')}Z", object_id="freshness.health.bed_occupancy",
        kind="freshness_snapshot", title=f"Ward loads snapshot {hhmm}", status="observed", authority=90,
        version=f"2026-05-04T{hhmm}:00Z", valid_from=D("2026-05-04"), valid_to=D("2026-05-05"),
        allowed_roles=("analyst",),
        text=f"Observed at 2026-05-04T{hhmm}:00Z. raw.ehr.admissions max_loaded_at {admissions_loaded}, SLA 2 hours. "
             f"raw.ehr.discharges max_loaded_at 2026-05-04T{hhmm}:00Z, SLA 4 hours.")


@pytest.fixture
def ctx():
    metric = Document(doc_id="metric.bed_occupancy.v1", object_id="metric.health.bed_occupancy",
                      kind="metric_definition", title="Bed occupancy", status="approved", authority=90, version="1",
                      valid_from=D("2025-01-01"), allowed_roles=("analyst",),
                      text="Bed occupancy is occupied staffed beds over staffed beds at midnight.")
    return AskContext(docs=[metric, _snapshot("06:00", "2026-05-04T01:00:00Z"),
                            _snapshot("18:00", "2026-05-04T17:30:00Z")], policy=Policy(), log_answers=False)


def test_a_named_source_table_is_answered_from_the_newest_snapshot_observing_it(ctx):
    for q in ("Is raw.ehr.admissions fresh on 2026-05-04?", "How old is the latest load of raw.ehr.admissions "
              "on May 4, 2026?", "Was RAW.EHR.ADMISSIONS loaded within its SLA on 4 May 2026?"):
        resp = ask(ctx, q, "analyst")
        assert resp.action == "calculate", q
        assert [e.doc_id for e in resp.evidence] == ["freshness.health.2026-05-04T1800Z"], q
        assert [(f.source, f.age_minutes, f.fresh) for f in resp.freshness] == [("raw.ehr.admissions", 30, True)], q


def test_a_snapshot_named_by_its_time_is_that_snapshot(ctx):
    resp = ask(ctx, "Was raw.ehr.admissions fresh in the 06:00 UTC snapshot on 2026-05-04?", "analyst")
    assert resp.action == "calculate"
    assert [e.doc_id for e in resp.evidence] == ["freshness.health.2026-05-04T0600Z"]
    assert [(f.source, f.age_minutes, f.fresh) for f in resp.freshness] == [("raw.ehr.admissions", 300, False)]
    # Through the metric, "as of" a time: the newest snapshot observed by then.
    resp = ask(ctx, "Was bed occupancy data fresh as of 2026-05-04T07:00:00Z?", "analyst")
    assert [e.doc_id for e in resp.evidence] == ["freshness.health.2026-05-04T0600Z"]
    assert {f.source for f in resp.freshness} == {"raw.ehr.admissions", "raw.ehr.discharges"}


def test_a_table_no_snapshot_covers_on_the_day_abstains(ctx):
    resp = ask(ctx, "Is raw.ehr.admissions fresh on 2026-05-09?", "analyst")
    assert resp.action == "abstain" and resp.reason == "no_observation"
    resp = ask(ctx, "Is raw.ehr.lab_results fresh on 2026-05-04?", "analyst")
    assert resp.action == "abstain" and resp.evidence == []


def test_tables_and_times_of_day_are_read_from_the_question():
    assert find_tables("Is raw.ehr.admissions fresh, or RAW.EHR.DISCHARGES? (v2.1)") == [
        "raw.ehr.admissions", "raw.ehr.discharges"]
    assert find_time_of_day("the 08:00 UTC snapshot") == dt.time(8, 0)
    assert find_time_of_day("as of 2026-05-04T07:00:00Z") == dt.time(7, 0)
    assert find_time_of_day("at 10:15 pm") == dt.time(22, 15)
    assert find_time_of_day("at 14:30+02:00") == dt.time(12, 30)
    assert find_time_of_day("on 2026-05-04") is None


def test_a_source_table_named_by_its_words(ctx):
    resp = ask(ctx, "How stale is the admissions source table on 2026-05-04?", "analyst")
    assert resp.action == "calculate"
    assert [e.doc_id for e in resp.evidence] == ["freshness.health.2026-05-04T1800Z"]
    assert [f.source for f in resp.freshness] == ["raw.ehr.admissions"]
    # A table no snapshot observes names none (without "table", the words alone: below).
    assert ask(ctx, "Is the lab results table fresh on 2026-05-04?", "analyst").action == "abstain"
    assert ask(ctx, "Are lab results fresh on 2026-05-04?", "analyst").action == "abstain"


def test_words_naming_two_observed_tables_name_neither(ctx):
    twin = _snapshot("12:00", "2026-05-04T11:00:00Z").model_copy(update={
        "doc_id": "freshness.billing.2026-05-04T1200Z", "object_id": "freshness.billing.claims",
        "text": "Observed at 2026-05-04T12:00:00Z. raw.billing.admissions max_loaded_at 2026-05-04T11:00:00Z, "
                "SLA 2 hours."})
    ctx.docs = [*ctx.docs, twin]
    assert ask(ctx, "How stale is the admissions source table on 2026-05-04?", "analyst").action == "abstain"
    resp = ask(ctx, "How stale is raw.billing.admissions on 2026-05-04?", "analyst")
    assert [e.doc_id for e in resp.evidence] == ["freshness.billing.2026-05-04T1200Z"]


def test_a_table_named_by_longer_words_or_its_identifier_is_that_table(ctx):
    """"admissions" is part of "ward admissions": with raw.ehr.ward_admissions observed too, the
    longer run names that table; an identifier written out ("ward_admissions") needs no table
    noun; and a governed text that uses the same words ("a runbook about ward admissions") is
    not what the question asks about: the table is named before retrieval proposes anything."""
    ward = _snapshot("12:00", "2026-05-04T11:00:00Z").model_copy(update={
        "doc_id": "freshness.ward.2026-05-04T1200Z", "object_id": "freshness.health.ward",
        "text": "Observed at 2026-05-04T12:00:00Z. raw.ehr.ward_admissions max_loaded_at 2026-05-04T11:00:00Z, "
                "SLA 2 hours."})
    runbook = Document(doc_id="runbook.ward_admissions", object_id="runbook.health.ward_admissions", kind="runbook",
                       title="Ward admissions runbook", status="approved", authority=80, version="1",
                       valid_from=D("2025-01-01"), allowed_roles=("analyst",),
                       text="When the ward admissions table is late, page the EHR on-call.")
    ctx.docs = [*ctx.docs, ward, runbook]
    for q in ("Is the ward admissions table fresh on 2026-05-04?", "Is ward_admissions fresh on 2026-05-04?"):
        resp = ask(ctx, q, "analyst")
        assert resp.action == "calculate", (q, resp.action, resp.evidence)
        assert [f.source for f in resp.freshness] == ["raw.ehr.ward_admissions"], q
    # "admissions" alone still names raw.ehr.admissions: it is no part of a longer run there.
    resp = ask(ctx, "How stale is the admissions source table on 2026-05-04?", "analyst")
    assert [f.source for f in resp.freshness] == ["raw.ehr.admissions"]


@pytest.mark.parametrize("question, source", [
    # the table named by the words of its last segment, no "table" beside them
    ("Are admissions fresh?", "raw.ehr.admissions"),
    ("How fresh are the discharges?", "raw.ehr.discharges"),
    ("Are the ehr admissions up to date?", "raw.ehr.admissions"),
    ("Were discharges loaded on time?", "raw.ehr.discharges"),
    ("Is admissions data stale?", "raw.ehr.admissions"),
])
def test_a_table_named_by_its_words_alone_is_answered_from_its_snapshot(ctx, question, source):
    resp = ask(ctx, question, "analyst", D("2026-05-04"))
    assert resp.action == "calculate", (question, resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence] == ["freshness.health.2026-05-04T1800Z"]
    assert [f.source for f in resp.freshness] == [source], question


def test_loaded_from_asks_where_the_data_comes_from_not_how_fresh():
    from canon.ask.understanding.parse import detect_intents
    for q in ("Which raw table is bed occupancy loaded from?", "How is bed occupancy defined and which raw table "
              "is it loaded from?", "Where are admissions loaded into the warehouse from?"):
        intents = detect_intents(q)
        assert "lineage" in intents and "freshness" not in intents, (q, intents)
    assert "freshness" in detect_intents("Were discharges loaded on time?")
