"""An aggregate word beside a governed name asks for another measure when the definition
computes another aggregate: "the mean pothole repair time" beside a median, "the p90 pothole
repair time", "the median permit processing time" or "the total permit processing time" beside a mean. They were answered from the metric, a confident answer to a question about
a measure nothing governs. The aggregate the definition computes, written beside the name, is
still the metric ("the median pothole repair time"). (canon/ask/understanding/measure_shape.py
`aggregate_before`, `aggregates`; canon/ask/pipeline.py `_pick_concept`.)

A city-services domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.measure_shape import aggregate_before, aggregates

DOCS = [
    governed_doc("metric.pothole_repair_time.v1", "metric.city.pothole_repair_time",
                 "Pothole repair time governed definition v1",
                 "Governed metric pothole repair time version 1. Pothole repair time is the median number of "
                 "calendar days from a pothole report to its repair, over potholes repaired in the month."),
    governed_doc("metric.permit_processing_time.v1", "metric.city.permit_processing_time",
                 "Permit processing time governed definition v1",
                 "Governed metric permit processing time version 1. Permit processing time is the average of the "
                 "business days from a complete permit application to a decision, over decisions in the month."),
    governed_doc("metric.average_visit_length.v1", "metric.city.average_visit_length",
                 "Average visit length governed definition v1",
                 "Governed metric average visit length version 1. Average visit length is the total minutes library "
                 "members spend in a branch divided by the number of visits in the month."),
]

ctx = module_context("city", DOCS)


@pytest.mark.parametrize("question", [
    "What is the mean pothole repair time definition?",
    "How is the p90 pothole repair time defined?",
    "What is the 90th percentile pothole repair time?",
    "How is the median permit processing time defined?",
    "What is the total permit processing time?",
])
def test_another_aggregate_beside_a_name_abstains(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (question, resp.action, resp.reason)
    assert resp.evidence == []


@pytest.mark.parametrize("question, doc_id", [
    ("What is the median pothole repair time definition?", "metric.pothole_repair_time.v1"),
    ("How is pothole repair time defined?", "metric.pothole_repair_time.v1"),
    ("How is the average permit processing time defined?", "metric.permit_processing_time.v1"),
    ("What is the mean permit processing time?", "metric.permit_processing_time.v1"),
    ("How is average visit length defined?", "metric.average_visit_length.v1"),
])
def test_the_aggregate_the_definition_computes_is_the_metric(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)


def test_aggregate_words():
    assert aggregates("the p90 repair time") == {"percentile"}
    assert aggregates("How is visit count defined?") == {"count"}
    assert aggregates("what does on time mean?") == set()
    assert aggregate_before("what is mean pothole repair time", ["pothole", "repair", "time"]) == {"mean"}
    assert aggregate_before("is the 95th percentile repair time", ["repair", "time"]) == {"percentile"}
    assert aggregate_before("how is pothole repair time defined", ["pothole", "repair", "time"]) == set()
