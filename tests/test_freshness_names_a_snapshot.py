"""A freshness question that names a snapshot family by what its snapshots observe ("are the
grid meter raw loads fresh?") is answered from that family's snapshot: observed text is the
authority on freshness. It was refused as "the document you name is observed text, not an
authoritative source", or answered from another family whose id segment ("raw loads") the
question also wrote. A snapshot's title less its time and the kind's own nouns is a name of its
family (canon/ask/understanding/match.py `observed_name`); the pipeline picks the family whose
names account for the question's object phrase (canon/ask/pipeline.py `_named_snapshot`).

An energy-utility domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import datetime as dt

import pytest
from corpus_context import governed_doc, module_context, snapshot_doc

from canon.ask.pipeline import ask
from canon.ask.understanding.match import observed_name

DAY = dt.date(2026, 5, 4)


def snapshot(doc_id: str, object_id: str, title: str, observed: str, readings: str) -> dict:
    return snapshot_doc(doc_id, object_id, title, observed, readings, valid_to="2026-05-05")


DOCS = [
    governed_doc("metric.meter_read_rate.v1", "metric.energy.meter_read_rate", "Meter read rate governed definition v1",
                 "Governed metric meter read rate version 1. Meter read rate is the share of smart meters that sent "
                 "at least one interval read in the billing day, over all installed smart meters."),
    snapshot("freshness.energy.2026-05-04T0600Z", "freshness.energy.meter_read_rate",
             "Grid meter raw loads freshness snapshot 2026-05-04 06:00 UTC", "2026-05-04T06:00:00Z",
             "raw.ami.interval_reads max_loaded_at 2026-05-04T05:30:00Z, SLA 1 hours. "
             "raw.ami.meter_registry max_loaded_at 2026-05-03T12:00:00Z, SLA 24 hours."),
    snapshot("freshness.energy.2026-05-04T1800Z", "freshness.energy.meter_read_rate",
             "Grid meter raw loads freshness snapshot 2026-05-04 18:00 UTC", "2026-05-04T18:00:00Z",
             "raw.ami.interval_reads max_loaded_at 2026-05-04T14:00:00Z, SLA 1 hours. "
             "raw.ami.meter_registry max_loaded_at 2026-05-04T12:00:00Z, SLA 24 hours."),
    snapshot("freshness.billing.2026-05-04T0700Z", "freshness.billing.raw_loads",
             "Tariff billing raw loads freshness snapshot 2026-05-04 07:00 UTC", "2026-05-04T07:00:00Z",
             "raw.billing.invoices max_loaded_at 2026-05-04T06:50:00Z, SLA 2 hours."),
    # a second family whose id segment is also "raw loads"
    snapshot("freshness.outage.2026-05-04T0800Z", "freshness.outage.raw_loads",
             "Outage tickets raw loads freshness snapshot 2026-05-04 08:00 UTC", "2026-05-04T08:00:00Z",
             "raw.outage.tickets max_loaded_at 2026-05-04T07:55:00Z, SLA 1 hours."),
]

ctx = module_context("energy", DOCS)


def test_a_snapshot_title_names_what_it_observes():
    assert observed_name("Grid meter raw loads freshness snapshot 2026-05-04 06:00 UTC") == "grid meter raw loads"
    assert observed_name("dbt source freshness snapshot") == "dbt source"
    assert observed_name("Orders snapshot 2026-05-04T06:00:00Z") == "orders"


@pytest.mark.parametrize("question, doc_id", [
    ("Are the grid meter raw loads fresh?", "freshness.energy.2026-05-04T1800Z"),
    ("Is the grid meter raw loads freshness snapshot within its SLAs?", "freshness.energy.2026-05-04T1800Z"),
    ("Were the grid meter raw loads late in the 06:00 UTC snapshot?", "freshness.energy.2026-05-04T0600Z"),
    # "raw loads" is also the billing family's own id segment: the longer name is the one asked about
    ("How stale are the tariff billing raw loads?", "freshness.billing.2026-05-04T0700Z"),
])
def test_a_named_snapshot_family_answers_freshness(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst", as_of=DAY)
    assert resp.action == "calculate", (question, resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence] == [doc_id]


def test_the_stale_source_is_said(ctx):
    resp = ask(ctx, "Were the grid meter raw loads late in the 18:00 UTC snapshot?", "analyst", as_of=DAY)
    assert resp.action == "calculate" and resp.calculation["all_fresh"] is False
    assert "raw.ami.interval_reads 4 h 00 min old (SLA 60 min, STALE)" in resp.answer


@pytest.mark.parametrize("question", [
    "Are the water meter raw loads fresh?",     # a family nothing observes, beside one that is
    "Are the gas network raw loads late?",
])
def test_a_family_the_question_does_not_name_is_neither_answered_nor_refused_as_a_document(ctx, question):
    resp = ask(ctx, question, "analyst", as_of=DAY)
    assert resp.action == "abstain", (question, resp.action, resp.reason)
    assert resp.reason != "not_authoritative"
    assert not any(e.doc_id.startswith("freshness.") for e in resp.evidence)


def test_two_families_a_name_names_alike_are_asked_back(ctx):
    resp = ask(ctx, "Are the raw loads fresh?", "analyst", as_of=DAY)
    assert resp.action == "clarify", (resp.action, resp.reason)
    assert sorted(o["object_id"] for o in resp.options) == ["freshness.billing.raw_loads", "freshness.outage.raw_loads"]
    assert not resp.evidence


@pytest.mark.parametrize("question, doc_id", [
    # a time of day in words: the snapshot observed by then, not the day's newest
    ("Were the grid meter raw loads late in the 6am snapshot?", "freshness.energy.2026-05-04T0600Z"),
    ("Were the grid meter raw loads fresh at 7 a.m. UTC?", "freshness.energy.2026-05-04T0600Z"),
    ("Were the grid meter raw loads fresh at noon?", "freshness.energy.2026-05-04T0600Z"),
    ("Were the grid meter raw loads fresh at midday UTC?", "freshness.energy.2026-05-04T0600Z"),
    ("Were the grid meter raw loads fresh at 6:30pm?", "freshness.energy.2026-05-04T1800Z"),
])
def test_a_time_of_day_in_words_picks_the_snapshot_observed_by_then(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst", as_of=DAY)
    assert resp.action == "calculate", (question, resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence] == [doc_id], question
