"""A description of a metric that writes a quantity its definition spells out by initials ("which
metric divides commission revenue by GBV?" beside "… divided by gross booking value") abstained:
the initials were no word of the definition. A word that may be an initialism (in capitals, or
no English word: canon/ask/understanding/match.py `initialism_words`) now counts as used when it
is the initials of words the text writes out (canon/ask/understanding/coverage.py
`text_initialisms`, `description_support`, `restates_definition`).

The other side of the same class: "what is refunds as a share of GBV?" was answered from the
bookings model, because its grain ("one row per booking") read as a ratio that "share"
describes, and its text names the quantity set aside as the share's whole. A grain is no ratio
(canon/ask/understanding/measure_shape.py `_GRAIN`); once a whole name is set aside as a part
of the measure asked about, neither that object nor one only its words describe stands for the
description (canon/ask/pipeline.py `_aside`).

A travel-marketplace domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import description_support, text_initialisms
from canon.ask.understanding.measure_shape import aggregate_words

CM, GBV, ROAS, MODEL = ("metric.commission_margin.v1", "metric.gross_booking_value.v1",
                        "metric.return_on_ad_spend.v1", "model.fct_bookings.v1")
MODEL_TEXT = ("dbt model model.travel.fct_bookings.v1. Grain: one row per booking. Primary key: booking_id. "
              "Important fields: booking_id, hotel_id, booking_value_eur, refund_amount_eur, cancelled_at. "
              "This model supports metric.travel.gross_booking_value version 1.")
CM_TEXT = ("Governed metric commission margin version 1. The commission margin is commission revenue earned from "
           "hotel partners divided by gross booking value, after partner rebates.")
DOCS = [
    governed_doc(CM, "metric.travel.commission_margin", "Commission margin governed definition v1", CM_TEXT),
    governed_doc(GBV, "metric.travel.gross_booking_value", "Gross booking value governed definition v1",
                 "Governed metric gross booking value version 1. The total value of bookings made on the site "
                 "before cancellations, in euros."),
    governed_doc(ROAS, "metric.travel.return_on_ad_spend", "Return on ad spend governed definition v1",
                 "Governed metric return on ad spend version 1. Booking revenue attributed to paid campaigns divided "
                 "by advertising spend on those campaigns."),
    governed_doc(MODEL, "model.travel.fct_bookings", "dbt model schema fct_bookings v1", MODEL_TEXT,
                 kind="model_schema"),
]

ctx = module_context("travel", DOCS)


@pytest.mark.parametrize("question", [
    "Which metric divides commission revenue by GBV?",
    "Which metric divides commission revenue by gbv?",     # lower case, no English word: initials still
])
def test_a_metric_described_with_the_initials_of_what_it_divides_by_is_answered(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == CM, (resp.action, resp.reason)


@pytest.mark.parametrize("question", [
    "What is refunds as a share of GBV?",
    "How do we define refunds as a percentage of gross booking value?",
    "Which metric divides refunds by GBV?",
])
def test_a_share_of_a_governed_quantity_nothing_else_describes_abstains(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (
        question, resp.action, [e.doc_id for e in resp.evidence])


def test_initials_count_in_capitals_or_when_no_english_word():
    assert {"gbv", "ref"} <= text_initialisms(CM_TEXT)   # "revenue earned from": "ref" is a word
    assert description_support("commission revenue by GBV", CM_TEXT) == (3, 3)
    assert description_support("commission revenue by gbv", CM_TEXT) == (3, 3)
    assert description_support("commission revenue ref", CM_TEXT) == (2, 3)
    assert description_support("commission revenue REF", CM_TEXT) == (3, 3)


def test_a_grain_is_no_ratio():
    assert aggregate_words(MODEL_TEXT) == []
    assert "share" in aggregate_words(CM_TEXT)
