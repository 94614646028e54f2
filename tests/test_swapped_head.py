"""A name written with its head noun swapped ("paid room <upgrades>" beside paid room nights)
names another object, though the object's definition uses every word of the question: the
question abstains with `no_matching_object` instead of being answered from the look-alike
(canon/ask/understanding/coverage.py, `renames`). A name headed by a measure noun is different:
the units it counts, named in the head's place ("express checkout <guests>" for the express
checkout share), are what its definition defines, and the question is answered.

Hotel documents, a domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc as _doc
from corpus_context import module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import renames

DOCS = [
    _doc("metric.paid_room_nights.v1", "metric.hotel.paid_room_nights", "Paid room nights governed definition v1",
         "Governed metric paid room nights version 1. Paid room nights are the nights sold to paying guests in "
         "the month; paid room upgrades and early checkouts are counted once each."),
    _doc("metric.express_checkout_share.v1", "metric.hotel.express_checkout_share",
         "Express checkout share governed definition v1",
         "Governed metric express checkout share version 1. The express checkout share is the share of "
         "departing guests who settle their bill in the app without visiting the desk, over all departing "
         "guests on the day."),
]


ctx = module_context("hotel-heads", DOCS)


@pytest.mark.parametrize("question", [
    "How are paid room upgrades defined?",
    "What is the definition of paid room checkouts for 2026-05-31?",
    "Define paid room upgrades.",
])
def test_a_name_with_its_head_swapped_names_another_object(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert (resp.action, resp.reason, resp.evidence) == ("abstain", "no_matching_object", []), question


@pytest.mark.parametrize("question", [
    "How are express checkout guests defined?",
    "What counts as an express checkout guest on 2026-05-31?",
    "How are paid room nights defined?",
])
def test_the_units_a_measure_counts_and_the_whole_name_are_answered(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)


def test_the_rule_swaps_only_a_head_that_counts_units():
    assert renames("define paid room upgrades", ["paid room nights"])
    assert not renames("define paid room nights", ["paid room nights"])
    # A measure noun heads the name: the question names the units it measures.
    assert not renames("define express checkout guests", ["express checkout share"])
    # A one-word name has no modifiers to write before another head.
    assert not renames("define headcount payroll", ["headcount"])
