"""Intent words inside the words that name the object ask nothing, also when the question names
the object by part of its name: "how are late checkout rooms defined?" asks for the late checkout
share's definition, not for freshness ("late"), and "what counts toward total turndowns …" for
the total turndown services' definition, not a value ("total"). The intents are read again
outside those words once the object is found (canon/ask/understanding/parse.py,
`reread_intents`); a value word of the question's own ("what was", "how much") still asks for a
value.

Hotel documents, a domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc as _doc
from corpus_context import module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.parse import name_runs

DOCS = [
    _doc("metric.late_checkout_share.v1", "metric.hotel.late_checkout_share",
         "Late checkout share governed definition v1",
         "Governed metric late checkout share version 1. The late checkout share is the share of departing "
         "rooms vacated one hour or more after 11:00, over all departing rooms on the day."),
    _doc("metric.total_turndown_services.v1", "metric.hotel.total_turndown_services",
         "Total turndown services governed definition v1",
         "Governed metric total turndown services version 1. Total turndown services is the number of evening "
         "room preparations housekeeping completes for occupied rooms in the month, declined ones excluded."),
]


ctx = module_context("hotel-intents", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("How are late checkout rooms defined?", "metric.late_checkout_share.v1"),
    ("What counts as a late checkout of departing rooms?", "metric.late_checkout_share.v1"),
    ("What counts toward total turndown for evening room preparations?", "metric.total_turndown_services.v1"),
])
def test_an_intent_word_inside_part_of_the_name_asks_nothing(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst", )
    assert (resp.action, resp.evidence[0].doc_id if resp.evidence else None) == ("answer", doc_id), (
        question, resp.action, resp.reason)


def test_a_value_word_of_the_questions_own_still_asks_for_a_value(ctx):
    resp = ask(ctx, "What was total turndown for occupied rooms in May 2026?", "analyst")
    assert (resp.action, resp.reason) == ("abstain", "no_semantic_layer")


def test_name_runs_are_two_or_more_words_of_a_name_in_its_order():
    assert name_runs("How are late checkout rooms defined?", ["late checkout share"]) == ["late checkout"]
    assert name_runs("Is checkout late today?", ["late checkout share"]) == []
