"""What a "what was / what were" question asks for. "What were dropped call rates in October
2026?" asks for a value, as "what was" does: it was answered with the definition (only "what
was" asked for a value). "What was the source of the dropped call rate in 2025?" and "what was
the owner of …" ask for its lineage and its owner, not a value: they abstained
"no_semantic_layer". The noun right after "what was/were" says what is asked; a value only when
it is no word of another intent (canon/ask/understanding/parse.py `detect_intents`).

A telecom domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask. No semantic layer: a value question abstains "no_semantic_layer"."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.parse import detect_intents

DOCS = [
    governed_doc("metric.dropped_call_rate.v1", "metric.telecom.dropped_call_rate", "Dropped call rate governed definition v1",
                 "Governed metric dropped call rate version 1. The dropped call rate is the share of voice calls "
                 "that end without either party hanging up, over all connected voice calls. Supporting model is "
                 "model.telecom.fct_voice_calls.v1."),
    governed_doc("model.fct_voice_calls.v1", "model.telecom.fct_voice_calls", "dbt model schema fct_voice_calls v1",
                 "dbt model model.telecom.fct_voice_calls.v1. Grain: one row per connected voice call. Primary key: "
                 "call_id. This model supports metric.telecom.dropped_call_rate version 1.",
                 kind="model_schema", authority=90),
    governed_doc("lineage.dropped_call_rate.v1", "lineage.telecom.dropped_call_rate", "Lineage for dropped call rate v1",
                 "Lineage for metric.telecom.dropped_call_rate v1: raw.switch.call_records -> stg.switch.call_records. "
                 "These staging models feed model.telecom.fct_voice_calls.v1, which supports "
                 "metric.telecom.dropped_call_rate v1.", kind="lineage", authority=95),
    governed_doc("metric.roaming_minutes.v1", "metric.telecom.roaming_minutes", "Roaming minutes governed definition v1",
                 "Governed metric roaming minutes version 1. Roaming minutes are the billed voice minutes of "
                 "subscribers attached to a partner network abroad."),
]

ctx = module_context("telecom", DOCS)


@pytest.mark.parametrize("question", [
    "What were dropped call rates in October 2026?",
    "What were the dropped call rates for Q3 2026?",
    "What were roaming minutes in September 2026?",
    "What was the dropped call rate in October 2026?",
])
def test_a_value_asked_in_either_tense_is_a_value_question(ctx, question):
    assert "value" in detect_intents(question)
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_semantic_layer", (question, resp.action, resp.reason)


@pytest.mark.parametrize("question, intent", [
    ("What was the source of the dropped call rate in 2025?", "lineage"),
    ("What were the upstream tables of the dropped call rate in 2025?", "lineage"),
    ("What was the grain of fct_voice_calls?", "model"),
])
def test_another_intent_noun_after_what_was_asks_for_no_value(ctx, question, intent):
    intents = detect_intents(question)
    assert "value" not in intents and intent in intents, intents
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)


def test_the_lineage_asked_after_what_was_is_the_metrics_lineage(ctx):
    resp = ask(ctx, "What was the source of the dropped call rate in 2025?", "analyst")
    assert [e.doc_id for e in resp.evidence] == ["metric.dropped_call_rate.v1", "model.fct_voice_calls.v1",
                                                 "lineage.dropped_call_rate.v1"]
    assert "raw.switch.call_records" in resp.answer


def test_the_owner_asked_after_what_was_is_answered_from_metadata(ctx):
    resp = ask(ctx, "What was the owner of the dropped call rate?", "analyst")
    assert resp.action == "answer", (resp.action, resp.reason)
    assert "No owner is recorded for metric.dropped_call_rate.v1" in resp.answer


@pytest.mark.parametrize("question", [
    "What was the late delivery rate in October 2026?",      # "late" is a word of the name, not its head
    "What was the table turnover rate in May 2026?",
    "What were the source conversion rates for Q3 2026?",
])
def test_an_intent_word_inside_the_name_asked_for_leaves_it_a_value(question):
    assert "value" in detect_intents(question)


@pytest.mark.parametrize("question", [
    "dropped call rate value for October 2026",
    "roaming minutes values in Q3 2026",
    "How high was the dropped call rate in October 2026?",
    "dropped call rate value Jul–Sep 2026",          # the period right after the value word
    "roaming minutes value Q3 2026",
])
def test_a_value_asked_tersely_is_a_value_question(ctx, question):
    assert "value" in detect_intents(question)
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_semantic_layer", (question, resp.action, resp.reason)


@pytest.mark.parametrize("question", ["what is the value proposition of the dropped call rate",
                                      "dropped call rate value definition"])
def test_a_value_word_before_no_period_asks_for_no_value(question):
    assert "value" not in detect_intents(question)


@pytest.mark.parametrize("question", [
    "What was the dropped call rate?",
    "What was the dropped call rate in fall 2026?",          # a season or a term: the calendar decides
    "How many roaming minutes did we bill in the winter term?",
])
def test_a_value_without_a_period_it_reads_is_asked_back(ctx, question):
    """A value is computed over a period: with none that Canon reads as dates, the question is
    asked back (`clarify`, `date_required`, the governing revision as the option), never answered
    with the definition in its place, as it was (canon/ask/pipeline.py `_value_without_period`)."""
    assert "value" in detect_intents(question)
    resp = ask(ctx, question, "analyst")
    assert resp.action == "clarify" and resp.reason == "date_required", (question, resp.action, resp.reason)
    assert [o["evidence_id"] for o in resp.options] in (["metric.dropped_call_rate.v1"], ["metric.roaming_minutes.v1"])
    assert "period" in resp.answer and not resp.evidence
