"""A freshness question naming a metric by its name less the head noun, with or without "data"
after it: "Is appointment no-show data fresh on 2026-10-01?" abstained `no_matching_object`
("data" was read as a word of the object phrase the names do not hold), and "Is appointment
no-show fresh on 2026-10-01?" was answered with the definition: the misspelt-name window
("appointment no-show <fresh>" aligns with "appointment no-show rate") swallowed the intent
word. "data" ends an object phrase now, as "table" and "sources" do
(canon/ask/understanding/coverage.py BOUNDARY), and an intent word at the edge of a fuzzy name
window that is no word of the name stays an intent word (canon/ask/understanding/parse.py
`_without_names`).

A veterinary clinic domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask. The metric's sources come from its lineage document; the
snapshot family is named after the clinic's loads, not the metric."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context, snapshot_doc

from canon.ask.pipeline import ask
from canon.ask.understanding.parse import detect_intents, parse_question

SNAP = "freshness.clinic.2026-10-01T0600Z"
DOCS = [
    governed_doc("metric.no_show.v1", "metric.clinic.appointment_no_show_rate", "Appointment no-show rate governed definition v1",
                 "Governed metric appointment no-show rate version 1. The share of booked appointments whose pet "
                 "never arrives and that were not cancelled, over all booked appointments in the week."),
    governed_doc("lineage.no_show.v1", "lineage.clinic.appointment_no_show_rate", "Lineage for appointment no-show rate v1",
                 "Lineage for metric.clinic.appointment_no_show_rate v1: raw.pms.appointments -> stg.pms.appointments; "
                 "raw.pms.cancellations -> stg.pms.cancellations. These staging models feed "
                 "model.clinic.fct_appointments.v1, which supports metric.clinic.appointment_no_show_rate v1.",
                 kind="lineage", authority=95),
    snapshot_doc(SNAP, "freshness.clinic.practice_loads", "Practice system raw loads freshness snapshot 2026-10-01 06:00 UTC",
                 "2026-10-01T06:00:00Z", "raw.pms.appointments max_loaded_at 2026-10-01T05:00:00Z, SLA 24 hours. "
                 "raw.pms.cancellations max_loaded_at 2026-09-29T05:00:00Z, SLA 24 hours.", valid_to="2026-10-02"),
]

ctx = module_context("clinic", DOCS)


@pytest.mark.parametrize("question", [
    "Is appointment no-show data fresh on 2026-10-01?",
    "Is appointment no-show fresh on 2026-10-01?",
    "Was the appointment no-show rate fresh on 2026-10-01?",
    "is the apointment no-show data stale on 2026-10-01?",
])
def test_a_metric_named_short_in_a_freshness_question_gets_its_sources_readings(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "calculate" and resp.evidence[0].doc_id == SNAP, (question, resp.action, resp.reason)
    assert {f.source: f.fresh for f in resp.freshness} == {"raw.pms.appointments": True,
                                                           "raw.pms.cancellations": False}


def test_the_intent_word_beside_a_misspelt_name_still_asks(ctx):
    question = "Is appointment no-show fresh on 2026-10-01?"
    assert parse_question(question, ctx.catalog).intent == "freshness"
    assert "freshness" in detect_intents(question)
