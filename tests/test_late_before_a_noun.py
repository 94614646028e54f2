"""A freshness word that describes the counted things is no freshness question: "order defect
rate - are late shipments defects?" and "Are late shipments counted as order defects?" were
answered with a freshness calculation (probe), never the definition. "late" after "are" was read
as a state of the data ("is the data late"), although a noun follows it that it describes. After
a word that says a state, a freshness word now asks about freshness only when no noun follows it
("is the data late today", "loaded yet", "late again") (canon/ask/understanding/parse.py
`_modifiers_before_nouns`).

A catering domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask. No freshness snapshot: a freshness question abstains
`no_observation`."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.parse import detect_intents

DEFECTS = "metric.event_defects.v1"
DOCS = [
    governed_doc(DEFECTS, "metric.catering.event_service_defect_rate", "Event service defect rate governed definition v1",
                 "Governed metric event service defect rate version 1. The share of catered events with a late "
                 "arrival of the crew, a missing dish or a written complaint, over all events served in the month."),
]

ctx = module_context("catering", DOCS)


@pytest.mark.parametrize("question", [
    "event service defect rate - are late arrivals defects?",
    "Are late arrivals counted as service defects?",
    "Is a late crew arrival a defect in the event service defect rate?",
])
def test_a_freshness_word_before_a_noun_asks_for_the_definition(ctx, question):
    assert "freshness" not in detect_intents(question), question
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == DEFECTS, (question, resp.action, resp.reason)


@pytest.mark.parametrize("question", [
    "Is the event service defect rate data late again?",
    "Is the event service defect rate late today?",
    "is the event service defect rate data loaded yet?",
])
def test_a_freshness_word_ending_the_phrase_asks_about_freshness(ctx, question):
    assert "freshness" in detect_intents(question), question
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_observation", (question, resp.action, resp.reason)
