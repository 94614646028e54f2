"""A phrase that ends two governed names of one domain, and is the whole name of neither, is
asked back: "how is wait time defined?" beside the elective surgery wait time and the outpatient
appointment wait time, "the lead time" beside the supplier and the manufacturing lead time. One
of them was answered, which one depending on the phrasing (retrieval's order, or a fuzzy match
of one name). Writing more of a name, or a name whole, picks it (canon/ask/pipeline.py
`_others_named_in_part`, `_same_phrase_elsewhere`).

A manufacturing domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

SUPPLIER, MAKE, CYCLE = ("metric.supplier_lead_time.v1", "metric.manufacturing_lead_time.v1",
                         "metric.order_cycle_time.v1")

DOCS = [
    governed_doc(SUPPLIER, "metric.plant.supplier_lead_time", "Supplier lead time governed definition v1",
                 "Governed metric supplier lead time version 1. Supplier lead time is the median number of calendar "
                 "days from a purchase order being sent to the goods being received at the dock."),
    governed_doc(MAKE, "metric.plant.manufacturing_lead_time", "Manufacturing lead time governed definition v1",
                 "Governed metric manufacturing lead time version 1. Manufacturing lead time is the median number of "
                 "working hours from a work order being released to the finished goods being booked into stock."),
    governed_doc(CYCLE, "metric.plant.order_cycle_time", "Order cycle time governed definition v1",
                 "Governed metric order cycle time version 1. Order cycle time is the median number of days from a "
                 "customer order being placed to its shipment."),
]

ctx = module_context("plant", DOCS)


@pytest.mark.parametrize("question", [
    "How is lead time defined?",
    "What is the lead time?",
    "lead time definition",
    "How are lead times measured?",
])
def test_a_phrase_that_ends_two_names_is_asked_back(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "clarify" and resp.reason == "ambiguous_object", (question, resp.action, resp.reason)
    assert sorted(o["object_id"] for o in resp.options) == ["metric.plant.manufacturing_lead_time",
                                                            "metric.plant.supplier_lead_time"]
    assert resp.evidence == []


@pytest.mark.parametrize("question, doc_id", [
    ("How is the supplier lead time defined?", SUPPLIER),
    ("What is the manufacturing lead time?", MAKE),
    ("How is cycle time defined?", CYCLE),       # the end of one name only
])
def test_a_name_written_in_full_or_one_name_alone_is_answered(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)
