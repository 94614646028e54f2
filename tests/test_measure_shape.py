"""A description that uses a definition's words but asks for another computation is another
measure (canon/ask/understanding/measure_shape.py): "the median minutes a flight departs late"
beside a delay defined as a mean, "the empty seat kilometres over all available seat
kilometres" beside a load factor whose definition names empty seats only in its denominator.
A freshness word that describes what is counted ("the loaded seat kilometres") does not make a
definition question a freshness one (canon/ask/understanding/parse.py, `FRESHNESS_MODIFIERS`).

Airline documents, a domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import _same_stem
from canon.ask.understanding.measure_shape import (
    counts_what_is_negated,
    denominator_words_asked,
    negated_words,
    other_aggregate,
)
from canon.ask.understanding.parse import detect_intents

LOAD_FACTOR = ("Governed metric load factor version 1. The load factor is the loaded seat kilometres flown by "
               "paying passengers over all available seat kilometres in the month, empty seats on repositioning "
               "flights included in the denominator.")
DELAY = ("Governed metric departure delay version 1. The departure delay is the average minutes between a "
         "flight's scheduled and actual off-block time, over departed flights; cancelled flights are excluded.")
DOCS = [
    governed_doc("metric.load_factor.v1", "metric.airline.load_factor", "Load factor governed definition v1",
                 LOAD_FACTOR),
    governed_doc("metric.departure_delay.v1", "metric.airline.departure_delay",
                 "Departure delay governed definition v1", DELAY),
]


ctx = module_context("airline-shape", DOCS)


@pytest.mark.parametrize("question", [
    "How do we define the empty seat kilometres on repositioning flights over all available seat kilometres?",
    "How do we define the seat kilometres flown without paying passengers, over all available seat kilometres?",
    "How do we define the unloaded seat kilometres flown, over all available seat kilometres in the month?",
    "How do we define the median seconds between a flight's scheduled and actual off-block time, over departed flights?",
])
def test_a_description_of_another_computation_abstains(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert (resp.action, resp.reason, resp.evidence) == ("abstain", "no_matching_object", []), question


@pytest.mark.parametrize("question, doc_id", [
    ("How do we define the seat kilometres flown by paying passengers over all available seat kilometres?",
     "metric.load_factor.v1"),
    ("How do we define the loaded seat kilometres flown over all available seat kilometres in the month?",
     "metric.load_factor.v1"),
    ("How do we define the mean minutes between a flight's scheduled and actual off-block time?",
     "metric.departure_delay.v1"),
])
def test_the_same_computation_described_is_answered(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert (resp.action, resp.evidence[0].doc_id) == ("answer", doc_id), question


def test_the_rules_read_aggregates_and_ratio_sides():
    # A mean asked of a mean, a share of a ratio: nothing else is asked for.
    assert other_aggregate("the average minutes late", DELAY) == set()
    assert other_aggregate("the share of seat kilometres sold", LOAD_FACTOR) == set()
    assert other_aggregate("the median minutes late", DELAY) == {"median"}
    # "Count", "share" and "mean" as verbs name no aggregate.
    assert other_aggregate("do repositioning seats count as available?", DELAY + " The median is kept.") == set()
    assert other_aggregate("the count of passengers who check in", "a passenger who checks in, books or shares "
                           "a seat; share a seat once") == set()
    assert other_aggregate("what does departure delay mean?", "the sum of delay minutes") == set()
    assert other_aggregate("the count of departed flights", "the median minutes of delay") == {"count"}
    # Dividing by a constant converts a unit; it makes no mean.
    assert other_aggregate("the average playback hours", "the sum of playback seconds divided by 3600") == {"mean"}
    # A word the question counts, which the definition names only in what it divides by.
    assert denominator_words_asked("the empty seat kilometres over all available seat kilometres",
                                   [LOAD_FACTOR]) == ["empty"]
    # ... unless the question puts it on both sides, or the definition also counts it.
    assert denominator_words_asked("the flown seat kilometres over all seat kilometres flown", [LOAD_FACTOR]) == []
    assert denominator_words_asked("the empty seats", [LOAD_FACTOR]) == []


def test_a_freshness_word_describing_the_counted_things_asks_for_a_definition():
    assert detect_intents("How do we define the loaded seat kilometres?") == set()
    assert detect_intents("How are late departures defined?") == set()
    # Any other freshness word, or a freshness shape, still asks for freshness.
    assert detect_intents("Is the data behind the load factor definition stale?") == {"freshness"}
    assert detect_intents("When was the load factor definition's table last loaded?") >= {"freshness"}
    assert detect_intents("Is the load factor late today?") == {"freshness"}


def test_negations_read_what_the_question_leaves_out():
    assert negated_words("seat kilometres flown without a paying passenger") == ["paying"]
    assert negated_words("the unloaded seat kilometres") == ["loaded"]
    # "Not" is no negation of a counted word in a question: "could not be delivered" paraphrases
    # "every delivery attempt failed".
    assert negated_words("parcels that could not be delivered") == []
    assert counts_what_is_negated("seat kilometres flown without paying passengers", [LOAD_FACTOR]) == ["paying"]
    # A word the definition names only to exclude it, or negates as well, is restated.
    assert counts_what_is_negated("flights without a cancellation", [DELAY]) == []
    assert counts_what_is_negated("sessions without a foreground event",
                                  ["A session ends after 30 minutes with no foreground event."]) == []


def test_word_forms_are_read_through_the_index_stemmer():
    assert _same_stem("loaded", "load") and _same_stem("fails", "failed") and _same_stem("working", "work")
    assert not _same_stem("late", "rate")
