"""A measure described as a ratio in its definition's own words:

- "How do we measure the average service hours per locomotive per day?" abstained
  no_matching_object: "average service hours" is covered by words of the service hour
  utilization's name and the definition's aggregate, but no one name holds them, and the
  description path took only a phrase of one word as unnamed. Words no one name holds name
  nothing, so the question is judged as a description (pipeline `_unnamed`).
- "… per locomotive day" was answered with the model of locomotive days: its rows' words
  described the question. A ratio ("per" a noun that is no time unit) is a measure, which no
  model's rows are, as an aggregate is (qualifiers.divides_per); "fuel burn per locomotive day",
  which nothing governs, is not the model either. A model's grain ("one row per locomotive per
  day") is no ratio.

A freight-rail domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.qualifiers import divides_per

UTIL, DWELL, MODEL = "metric.service_hour_utilization.v1", "metric.terminal_dwell.v1", "model.fct_locomotive_days.v1"
DOCS = [
    governed_doc(UTIL, "metric.rail.service_hour_utilization", "Service hour utilization governed definition v1",
                 "Governed metric service hour utilization version 1. Service hour utilization is the average number "
                 "of active service hours per locomotive per day, where active service runs from departure to "
                 "arrival. Locomotives stored unserviceable are excluded from the fleet count."),
    governed_doc(DWELL, "metric.rail.terminal_dwell_time", "Terminal dwell time governed definition v1",
                 "Governed metric terminal dwell time version 1. Terminal dwell time is the median hours a railcar "
                 "spends in a terminal from inbound arrival to outbound departure."),
    governed_doc(MODEL, "model.rail.fct_locomotive_days", "dbt model schema fct_locomotive_days v1",
                 "dbt model model.rail.fct_locomotive_days.v1. Grain: one row per locomotive per day. Primary key: "
                 "(locomotive_id, service_date). Important fields: locomotive_id, service_date, active_service_hours, "
                 "stored_unserviceable, fuel_burn_gallons.", kind="model_schema", authority=90),
]

ctx = module_context("freight_rail", DOCS)


@pytest.mark.parametrize("question", [
    "How do we measure the average service hours per locomotive per day?",
    "How do we measure service hours per locomotive day?",
    "what's the metric for the average service hours worked per locomotive each day",
])
def test_a_ratio_in_the_definitions_words_is_the_metric_not_its_model(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == UTIL, (
        question, resp.action, resp.reason, [e.doc_id for e in resp.evidence])


@pytest.mark.parametrize("question", [
    "What is the fuel burn per locomotive day?",
    "How is fuel burn per locomotive day defined?",
    "How do we measure locomotive days per depot?",   # the model's words, then a ratio of its rows
])
def test_a_ratio_nothing_governs_is_not_the_model_of_its_unit(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (
        question, resp.action, resp.reason, [e.doc_id for e in resp.evidence])


@pytest.mark.parametrize("question", [
    "What is the grain of fct_locomotive_days?",
    "which model has one row per locomotive per day?",
])
def test_the_model_is_still_named_by_its_grain_and_its_name(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == MODEL, (
        question, resp.action, resp.reason, [e.doc_id for e in resp.evidence])


def test_a_ratio_is_per_a_noun_that_is_no_time_unit_nor_a_grain():
    assert divides_per("block hours flown per aircraft day")
    assert divides_per("claims per 1,000 policies")
    assert not divides_per("active service hours per day")          # a time unit
    assert not divides_per("which model has one row per locomotive")  # a grain
