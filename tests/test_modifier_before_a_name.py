"""A modifier written before a governed metric's whole name that its definition never states
makes another measure: "the wheelchair baggage mishandling rate", "the 90-day baggage
mishandling rate" (the definition counts 7 days), "the net passenger throughput" were answered
from the metric, a confident answer about a measure nothing governs. A modifier the definition
states ("the transfer baggage mishandling rate" where transfer bags are its subject, "the
7-day …"), the domain ("the airport …") or a word that only says which definition ("the
official …") still names the metric (canon/ask/understanding/coverage.py
`unstated_modifiers`; canon/ask/pipeline.py `_pick_concept`, `_names_in_discovery`).

An airport domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import unstated_modifiers

BAGS, FLOW = "metric.baggage_mishandling_rate.v1", "metric.passenger_throughput.v1"
BAGS_TEXT = ("Governed metric baggage mishandling rate version 1. The baggage mishandling rate is the number of "
             "checked bags reported delayed, damaged or lost within 7 days of arrival per 1,000 departing "
             "passengers; transfer bags count at the airport of the last transfer.")

DOCS = [
    governed_doc(BAGS, "metric.airport.baggage_mishandling_rate", "Baggage mishandling rate governed definition v1",
                 BAGS_TEXT),
    governed_doc(FLOW, "metric.airport.passenger_throughput", "Passenger throughput governed definition v1",
                 "Governed metric passenger throughput version 1. Passenger throughput is the number of departing "
                 "passengers screened at security checkpoints per hour of opening."),
]

ctx = module_context("airport", DOCS)


@pytest.mark.parametrize("question", [
    "How is the wheelchair baggage mishandling rate defined?",
    "What is the 90-day baggage mishandling rate definition?",
    "How is net passenger throughput defined?",
    "What is the overnight passenger throughput?",
    "How is the wheelchair BMR defined?",          # the initialism of its name, derived
])
def test_a_modifier_the_definition_never_states_abstains(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (question, resp.action, resp.reason)
    assert resp.evidence == []


@pytest.mark.parametrize("question, doc_id", [
    ("How is the baggage mishandling rate defined?", BAGS),
    ("How is the transfer baggage mishandling rate defined?", BAGS),
    ("What is the 7-day baggage mishandling rate?", BAGS),
    ("What is the official baggage mishandling rate definition?", BAGS),
    ("How is the airport passenger throughput defined?", FLOW),
    ("What is our passenger throughput?", FLOW),
    ("How is the transfer BMR defined?", BAGS),
    ("What is the standard baggage mishandling rate definition?", BAGS),
    ("How is the headline passenger throughput defined?", FLOW),
])
def test_a_modifier_the_definition_states_still_names_the_metric(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)


def test_unstated_modifiers():
    names = ["baggage mishandling rate"]
    assert unstated_modifiers("How is the wheelchair baggage mishandling rate defined?", names, BAGS_TEXT) == ["wheelchair"]
    assert unstated_modifiers("the 90-day baggage mishandling rate", names, BAGS_TEXT) == ["90"]
    assert unstated_modifiers("the 7-day baggage mishandling rate", names, BAGS_TEXT) == []
    assert unstated_modifiers("our official baggage mishandling rate", names, BAGS_TEXT) == []


def test_a_frequency_or_a_revision_word_is_no_modifier():
    for q in ("the monthly baggage mishandling rate", "the legacy baggage mishandling rate",
              "the new baggage mishandling rate", "the draft baggage mishandling rate"):
        assert unstated_modifiers(q, ["baggage mishandling rate"], BAGS_TEXT) == [], q


@pytest.mark.parametrize("question, doc_id", [
    # an imperative that opens the question is no modifier of the name after it
    ("Check baggage mishandling rate definition", BAGS),
    ("Verify passenger throughput definition for me", FLOW),
    ("Pull passenger throughput definition", FLOW),
    ("Confirm baggage mishandling rate is defined per 1,000 passengers", BAGS),
])
def test_an_imperative_verb_is_no_modifier(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)


@pytest.mark.parametrize("question", [
    "Compare baggage mishandling rate in June 2026 and July 2026",          # an imperative opens it
    "is everything feeding baggage mishandling rate fresh?",                # a pronoun, a participle
    "the runbook says to publish baggage mishandling rate from the metric",  # an infinitive
])
def test_no_modifier_outside_a_noun_phrase_an_article_or_a_preposition_opens(question):
    assert unstated_modifiers(question, ["baggage mishandling rate"], BAGS_TEXT) == []


def test_a_verb_before_the_name_leaves_it_answered(ctx):
    resp = ask(ctx, "Compare passenger throughput definitions", "analyst")
    assert resp.reason != "no_matching_object", (resp.action, resp.reason)


def test_the_questions_first_word_is_a_modifier_unless_a_verb():
    assert unstated_modifiers("Wheelchair baggage mishandling rate definition?", ["baggage mishandling rate"],
                              BAGS_TEXT) == ["wheelchair"]
    assert unstated_modifiers("Explain baggage mishandling rate", ["baggage mishandling rate"], BAGS_TEXT) == []
