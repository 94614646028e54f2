"""A name whose head is replaced by another noun names another measure: "How is block time
variance defined?" was answered with block time adherence, because coverage reads the phrase
up to its measure word ("block time") and the words of the name cover that. The question
writes every word of the name but its head and then another noun in the head's place
(`coverage.renames`): no governed object has that name, so it abstains `no_matching_object`,
as a name match that goes on otherwise does (`coverage.continues_otherwise`). So does a whole
name followed by a statistic of it ("the run time adherence <variance>", "… <deviation>"): its
spread, or its gap to a plan, is another measure than the definition (`coverage.MEASURE_NOUNS`).

A public-transit domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

DWELL, RUN = "metric.dwell_time_compliance.v1", "metric.run_time_adherence.v1"
DOCS = [
    governed_doc(DWELL, "metric.transit.dwell_time_compliance", "Dwell time compliance governed definition v1",
                 "Governed metric dwell time compliance version 1. Dwell time compliance is the share of scheduled "
                 "bus stop events whose doors-open time is 30 seconds or less. Stops skipped at the driver's "
                 "discretion are excluded."),
    governed_doc(RUN, "metric.transit.run_time_adherence", "Run time adherence governed definition v1",
                 "Governed metric run time adherence version 1. Run time adherence is the share of completed trips "
                 "whose terminal-to-terminal running time is within 3 minutes of the scheduled running time."),
    governed_doc("model.fct_stop_events.v1", "model.transit.fct_stop_events", "dbt model schema fct_stop_events v1",
                 "dbt model model.transit.fct_stop_events.v1. Grain: one row per trip per stop. Primary key: "
                 "(trip_id, stop_sequence). Important fields: trip_id, stop_id, doors_open_seconds, skipped.",
                 kind="model_schema", authority=90),
]

ctx = module_context("transit", DOCS)


@pytest.mark.parametrize("question", [
    "How is dwell time variance defined?",
    "What does dwell time deviation measure?",
    "how do we calculate run time slippage",
    "What is the run time adherence variance?",
    "how is dwell time compliance deviation defined",
])
def test_a_name_with_another_head_is_no_governed_object(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (
        question, resp.action, resp.reason, [e.doc_id for e in resp.evidence])


@pytest.mark.parametrize("question, doc_id", [
    ("How is dwell time compliance defined?", DWELL),
    ("What does run time adherence measure?", RUN),
    ("how do we calculate the dwell time compliance for skipped stops", DWELL),
    ("How is the share of trips whose running time is within 3 minutes of schedule defined?", RUN),
])
def test_the_name_itself_and_a_description_still_resolve(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (
        question, resp.action, resp.reason, [e.doc_id for e in resp.evidence])
