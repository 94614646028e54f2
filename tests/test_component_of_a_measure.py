"""A governed name written as a part of another measure is not what the question asks about:
"the share of GMV that the marketplace keeps as fees", "fees as a percentage of gross
merchandise value", "which metric divides marketplace fees by GMV" were answered with the
definition of gross merchandise value, a confident answer from the wrong object. The whole a share
is taken of, or what is divided by, describes the measure built on it: the take rate when the
description fits it, else no matching object (canon/ask/understanding/coverage.py
`names_a_component`; canon/ask/pipeline.py `_pick_concept`, `_names_in_discovery`).

A marketplace-payments domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import names_a_component

GMV, TAKE = "metric.gross_merchandise_value.v1", "metric.take_rate.v1"

DOCS = [
    governed_doc(GMV, "metric.payments.gross_merchandise_value", "Gross merchandise value governed definition v1",
                 "Governed metric gross merchandise value version 1. Gross merchandise value, also called GMV, is the "
                 "total price of items sold on the marketplace in the month, before refunds, excluding shipping."),
    governed_doc(TAKE, "metric.payments.take_rate", "Take rate governed definition v1",
                 "Governed metric take rate version 1. The take rate is the share of gross merchandise value the "
                 "marketplace keeps as fees: seller commission plus payment processing fees, divided by gross "
                 "merchandise value in the month."),
]

ctx = module_context("payments", DOCS)


@pytest.mark.parametrize("question", [
    "How do we define the share of GMV that the marketplace keeps as fees?",
    "How do we define fees as a percentage of gross merchandise value?",
    "Which metric divides marketplace fees by GMV?",
    "What share of gross merchandise value do we keep as fees, and how is that defined?",
])
def test_a_name_written_as_part_of_another_measure_is_not_answered(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert not (resp.action == "answer" and resp.evidence and resp.evidence[0].doc_id == GMV), (
        question, resp.action, [e.doc_id for e in resp.evidence])
    assert resp.action in ("answer", "abstain"), (question, resp.action, resp.reason)
    if resp.action == "answer":
        assert resp.evidence[0].doc_id == TAKE


def test_the_share_kept_as_fees_is_the_take_rate(ctx):
    resp = ask(ctx, "How do we define the share of gross merchandise value the marketplace keeps as fees?", "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == TAKE, (resp.action, resp.reason)


@pytest.mark.parametrize("question, doc_id", [
    ("How is GMV defined?", GMV),
    ("What is the definition of gross merchandise value by month?", GMV),
    ("How is the take rate defined?", TAKE),
])
def test_a_name_asked_about_is_still_answered(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)


@pytest.mark.parametrize("question, phrase, part", [
    ("fees as a percentage of gross merchandise value", ["gross", "merchandise", "value"], True),
    ("which metric divides fees by gmv", ["gmv"], True),
    ("net revenue relative to gmv", ["gmv"], True),
    ("how is gmv defined", ["gmv"], False),
    ("gmv by region", ["gmv"], False),
])
def test_names_a_component(question, phrase, part):
    assert names_a_component(question, phrase) is part


def test_part_of_a_measure_is_no_share_of_it():
    # "fees are never part of take rate" says what the take rate includes
    assert names_a_component("processing fees are never part of take rate", ["take", "rate"]) is False
