"""A question about another measure built from a governed metric's words is no question about
that metric: a count where the metric is a rate ("the container lift count" beside the crane
lift rate), a value set for the metric after its whole name ("the berth occupancy target"),
and an asking word written in the place of a name's word ("the lift count per crane" beside
lift cost per crane). Each abstains with no_matching_object instead of answering the metric
(canon/ask/understanding/measure_shape.py `aggregates`, coverage.py `MEASURE_NOUNS` and
`grammar_word_in_name_place`); the metric asked for plainly is still answered.

A port-operations domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import grammar_word_in_name_place
from canon.ask.understanding.measure_shape import aggregates

DOCS = [
    governed_doc("metric.crane_lift_rate.v1", "metric.port.crane_lift_rate", "Crane lift rate governed definition v1",
                 "Governed metric crane lift rate version 1. The crane lift rate is the container lifts completed "
                 "by a quay crane per 100 operating minutes; lifts cancelled before hoisting are not counted."),
    governed_doc("metric.berth_occupancy.v1", "metric.port.berth_occupancy", "Berth occupancy governed definition v1",
                 "Governed metric berth occupancy version 1. Berth occupancy is the share of hours in the month "
                 "in which a vessel is moored at the berth, over all hours of the month."),
    governed_doc("metric.lift_cost_per_crane.v1", "metric.port.lift_cost_per_crane",
                 "Lift cost per crane governed definition v1",
                 "Governed metric lift cost per crane version 1. Lift cost per crane is the energy and maintenance "
                 "spend of the month divided by the quay cranes in service that month."),
]

ctx = module_context("port", DOCS)


@pytest.mark.parametrize("question", [
    "What is the container lift count?",
    "How is the container lift count defined?",
    "What is the berth occupancy target?",
    "How is the berth occupancy threshold set?",
    "What is the crane lift rate forecast?",
    "How do we define the container lift count per crane?",
])
def test_another_measure_beside_a_governed_name_abstains(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (question, resp.action, resp.reason)
    assert resp.evidence == []


@pytest.mark.parametrize("question, doc_id", [
    ("What is the crane lift rate?", "metric.crane_lift_rate.v1"),
    ("How is berth occupancy defined?", "metric.berth_occupancy.v1"),
    ("What is the lift cost per crane?", "metric.lift_cost_per_crane.v1"),
])
def test_the_metric_asked_for_plainly_is_answered(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and [e.doc_id for e in resp.evidence] == [doc_id], (question, resp.action)


def test_an_aggregate_noun_heading_a_phrase_is_read_and_a_verb_is_not():
    assert aggregates("What is the container lift count?") == {"count"}
    assert aggregates("the weekly lift count in June") == {"count"}
    assert aggregates("cancelled lifts count as failures") == set()
    assert aggregates("the cranes share the berth") == set()


def test_an_asking_word_in_the_place_of_a_names_word():
    assert grammar_word_in_name_place("the lift count per crane", ["per", "crane"], {"lift cost per crane"})
    assert not grammar_word_in_name_place("the lift cost per crane", ["lift", "cost", "per", "crane"],
                                          {"lift cost per crane"})
    # a grammar word beside the phrase unlike the name's word in its place ("as on time")
    assert not grammar_word_in_name_place("count it as on time for june", ["on", "time"], {"on time arrival rate"})
