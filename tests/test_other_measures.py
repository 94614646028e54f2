"""A description that goes through another measure's name, or asks for a measure of a model's
rows, is not answered from the object whose words it shares (canon/ask/understanding/
coverage.py, `unstated_measure` and `measure_of`): "the upsell conversion share of available
nights sold to paying guests" uses the occupancy rate's words but names a share whose modifiers
its definition never states; "the share of room nights sold to paying guests" asks for a share,
a metric, not for the room nights model its words name.

Hotel documents, a domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import measure_of, unstated_measure

OCCUPANCY = ("Governed metric occupancy rate version 1. The occupancy rate is the share of available room nights "
             "sold to paying guests, over all available room nights in the month.")
DOCS = [
    governed_doc("metric.occupancy_rate.v1", "metric.hotel.occupancy_rate", "Occupancy rate governed definition v1",
                 OCCUPANCY),
    governed_doc("model.fct_room_nights.v1", "model.hotel.fct_room_nights", "dbt model schema fct_room_nights v1",
                 "dbt model model.hotel.fct_room_nights.v1. Grain: one row per room per night. Primary key: "
                 "(room_id, night_date). Important fields: room_id, night_date, is_sold, guest_id. This model "
                 "supports metric.hotel.occupancy_rate version 1.", kind="model_schema"),
]


ctx = module_context("hotel-measures", DOCS)


@pytest.mark.parametrize("question", [
    "How do we define the upsell conversion share of available nights sold to paying guests?",
    "What is our definition of the guest upgrade percentage of available nights sold to paying guests?",
])
def test_a_measure_whose_modifiers_the_definition_never_states_is_another_measure(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert (resp.action, resp.reason, resp.evidence) == ("abstain", "no_matching_object", []), question


def test_a_paraphrase_of_the_objects_own_measure_is_still_answered(ctx):
    resp = ask(ctx, "How do we define the sold room share of available room nights in the month?", "analyst")
    assert (resp.action, resp.evidence[0].doc_id) == ("answer", "metric.occupancy_rate.v1")


def test_a_measure_of_a_models_rows_asks_for_the_metric_not_the_model(ctx):
    resp = ask(ctx, "What is the definition of the share of room nights sold to paying guests?", "analyst")
    assert (resp.action, resp.evidence[0].doc_id) == ("answer", "metric.occupancy_rate.v1")
    # Asked about the model's own shape, the model answers.
    resp = ask(ctx, "What is the grain of fct_room_nights?", "analyst")
    assert resp.evidence[0].doc_id == "model.fct_room_nights.v1"


def test_the_rules_read_the_measure_phrase():
    assert unstated_measure("define the upsell conversion rate of room nights", OCCUPANCY) == [
        "upsell", "conversion", "rate"]
    assert unstated_measure("define the sold room share of room nights", OCCUPANCY) == []
    assert measure_of("the share of room nights sold", ["room", "nights"]) == "share"
    assert measure_of("how many room nights were sold", ["room", "nights"]) == ""
    assert measure_of("the share of room nights sold", []) == ""
