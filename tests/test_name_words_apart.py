"""A question naming a measure by some of a governed name's words, with a name word left out
between them ("how is order accuracy defined?" beside "order pick accuracy"), or by words taken
from two names of one object ("stock" of "dock to stock time" and "cycle time" of its stated
"receiving cycle time"), was answered from that object: a confident answer about a measure
nothing governs. When the phrase is all the question asks about, its words must stand together
in one name (canon/ask/understanding/coverage.py `phrase_in_one_name`; canon/ask/pipeline.py
`_phrase_in_one_name`). In a longer description the same words are a description's ("the
average time an agent spends …"), judged as before.

A warehouse domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import phrase_in_one_name

PICK, DOCK = "metric.order_pick_accuracy.v1", "metric.dock_to_stock_time.v1"
DOCS = [
    governed_doc(PICK, "metric.warehouse.order_pick_accuracy", "Order pick accuracy governed definition v1",
                 "Governed metric order pick accuracy version 1. The share of order lines picked with the right "
                 "item and quantity, over all order lines picked in the day."),
    governed_doc(DOCK, "metric.warehouse.dock_to_stock_time", "Dock to stock time governed definition v1",
                 "Governed metric dock to stock time version 1. Dock to stock time, also called the receiving "
                 "cycle time, is the median hours from a trailer's arrival at a dock door to its pallets being "
                 "available in stock."),
]

ctx = module_context("warehouse", DOCS)


@pytest.mark.parametrize("question", [
    "How is order accuracy defined?",
    "What's the stock cycle time?",
    "dock time definition",
])
def test_words_of_a_name_left_apart_or_mixed_name_nothing(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (
        question, resp.action, [e.doc_id for e in resp.evidence])


@pytest.mark.parametrize("question, doc_id", [
    ("How is pick accuracy defined?", PICK),
    ("How is order pick accuracy defined?", PICK),
    ("receiving cycle time definition", DOCK),
    ("What is the dock to stock time?", DOCK),
    ("How is ordr pick accuracy defined?", PICK),     # misspelt words still stand together
    ("recieving cycle time definition", DOCK),
])
def test_words_standing_together_in_one_name_name_it(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)


def test_the_words_must_stand_together_in_one_name():
    names = {"dock to stock time", "receiving cycle time"}
    assert phrase_in_one_name(["stock", "time"], names)
    assert phrase_in_one_name(["receiving", "cycle", "time"], names)
    assert not phrase_in_one_name(["dock", "time"], names)
    assert not phrase_in_one_name(["stock", "cycle", "time"], names)
