"""What a question writes after a whole name can ask for another thing than the governed
object (canon/ask/understanding/qualifiers.py):

- "net revenue per order" is a ratio nothing governs: it was answered with net revenue's
  definition, a confident answer from a non-matching object. A ratio the names or the
  definition already state ("… per outage" of a mean over outages) or a time unit ("per
  month") is still the object.
- "net revenue by region in July 2026" asks for one value per region: it was answered with
  July's total, as if no breakdown were asked. The semantic layer computes totals only: the
  answer is an `abstain` `metric_not_computable` that says so. "by month in Q3 2026" asks for
  one value per month: it was Q3's total; it is now a value per month, each under the revision
  that governs it (`metric_value_by_period`).

A utilities domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask. No semantic layer here: a plain value question abstains
"no_semantic_layer", and a breakdown abstains before any is asked for."""

from __future__ import annotations

import datetime as dt

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.qualifiers import (
    breakdown,
    left_out_after,
    ratio_after,
    ratio_stated,
    split_by_grain,
    time_grain,
)

ENERGY, OUTAGE, READS = "metric.billed_energy.v1", "metric.outage_duration.v1", "metric.meter_reads.v1"
DOCS = [
    governed_doc(ENERGY, "metric.utilities.billed_energy_volume", "Billed energy volume governed definition v1",
                 "Governed metric billed energy volume version 1. Billed energy volume is the sum of kilowatt "
                 "hours on issued customer invoices in the month, net of rebilled corrections. Estimated reads are "
                 "excluded."),
    # A lineage document named by the metric's name: not the object of a ratio question either.
    governed_doc("lineage.billed_energy.v1", "lineage.utilities.billed_energy_volume",
                 "Lineage for billed energy volume v1",
                 "Lineage for metric.utilities.billed_energy_volume v1: raw.billing.invoice_lines -> "
                 "stg.billing.invoice_lines, which feed the billed energy volume.", kind="lineage", authority=95),
    governed_doc(OUTAGE, "metric.utilities.average_outage_duration", "Average outage duration governed definition v1",
                 "Governed metric average outage duration version 1. The mean minutes from the first customer "
                 "call to the restoration of supply, averaged over the outages closed in the month."),
    governed_doc(READS, "metric.utilities.meter_read_success_rate", "Meter read success rate governed definition v1",
                 "Governed metric meter read success rate version 1. The share of scheduled smart meter reads "
                 "that arrive within four hours, over all scheduled reads in the day."),
]

ctx = module_context("utilities", DOCS)


@pytest.mark.parametrize("question", [
    "How is billed energy volume per customer defined?",
    "billed energy volume per meter definition",
    "What's the definition of the billed energy volume per household?",
    "What is the meter read success rate per technician?",
])
def test_a_ratio_after_a_name_is_another_measure(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (
        question, resp.action, resp.reason, [e.doc_id for e in resp.evidence])


@pytest.mark.parametrize("question, doc_id", [
    ("How is the average outage duration per outage defined?", OUTAGE),   # the mean is over outages
    ("billed energy volume per month definition", ENERGY),                 # a time unit, no denominator
    ("What is the meter read success rate per day?", READS),
    ("How is billed energy volume defined?", ENERGY),
    ("How is billed energy volume by tariff defined?", ENERGY),            # a breakdown keeps the definition
])
def test_a_ratio_already_stated_or_a_time_unit_is_the_object(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)


@pytest.mark.parametrize("question", [
    "What was billed energy volume by region in October 2026?",
    "What was the billed energy volume broken down by tariff in September 2026?",
    "What was the meter read success rate for each depot in October 2026?",
    "What was billed energy volume in Q3 2026 by customer segment?",
])
def test_a_value_broken_down_by_a_dimension_is_not_computed_as_a_total(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "metric_not_computable", (question, resp.action, resp.reason)
    assert "breakdown" in resp.answer or "broken down" in resp.answer, resp.answer
    assert resp.calculation is None


@pytest.mark.parametrize("question", [
    "What was billed energy volume in October 2026?",
    "What was the billed energy volume reported by finance in October 2026?",   # an agent, no breakdown
    "What was billed energy volume by the end of October 2026?",
])
def test_no_breakdown_asks_the_semantic_layer(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_semantic_layer", (question, resp.action, resp.reason)


def test_what_is_read_after_a_name():
    names = {"billed energy volume"}
    assert ratio_after("billed energy volume per customer", names) == ["customer"]
    assert ratio_after("billed energy volume per 1,000 customers?", names) == ["customers"]
    assert ratio_after("billed energy volume per month", names) == []
    assert ratio_after("how is billed energy volume per active meter defined?", names) == ["active", "meter"]
    assert ratio_after("billed energy volume per estimated read definition", names) == ["estimated", "read"]
    assert ratio_after("billed energy volume per cent", names) == []
    assert ratio_after("per customer, what is billed energy volume", names) == []
    assert breakdown("billed energy volume by region in July 2026", names) == ["region"]
    assert breakdown("billed energy volume for July 2026 by product line", names) == ["product", "line"]
    assert breakdown("billed energy volume reported by finance", names) == []
    assert breakdown("billed energy volume by month in 2026", names) == []
    assert breakdown("who owns billed energy volume", names) == []
    assert time_grain("billed energy volume by month in Q3 2026") == "month"
    assert time_grain("billed energy volume for each quarter of 2026") == "quarter"
    assert time_grain("billed energy volume month over month in 2026") == "month"
    assert time_grain("the monthly billed energy volume in Q3 2026") is None


def test_a_period_is_cut_at_each_grain_boundary():
    q3 = (dt.date(2026, 7, 1), dt.date(2026, 10, 1))
    assert split_by_grain(q3, "month") == [
        ((dt.date(2026, 7, 1), dt.date(2026, 8, 1)), "July 2026"),
        ((dt.date(2026, 8, 1), dt.date(2026, 9, 1)), "August 2026"),
        ((dt.date(2026, 9, 1), dt.date(2026, 10, 1)), "September 2026")]
    assert [label for _, label in split_by_grain((dt.date(2026, 1, 1), dt.date(2027, 1, 1)), "quarter")] == [
        "Q1 2026", "Q2 2026", "Q3 2026", "Q4 2026"]
    weeks = split_by_grain((dt.date(2026, 7, 1), dt.date(2026, 8, 1)), "week")
    assert weeks[0] == ((dt.date(2026, 7, 1), dt.date(2026, 7, 6)), "2026-07-01 to 2026-07-05")
    assert weeks[-1][0] == (dt.date(2026, 7, 27), dt.date(2026, 8, 1))
    assert sum(((b - a).days for (a, b), _ in weeks)) == 31


def test_a_definition_that_only_mentions_the_noun_does_not_divide_by_it():
    names = {"net sales"}
    summed = "Net sales is the gross order-line amount less discounts, converted at the daily exchange rate."
    assert not ratio_stated(["order"], names, summed)
    assert ratio_stated(["ticket"], {"average handle time"}, "The mean of active minutes per solved ticket.")
    assert ratio_stated(["outage"], {"restoration time"}, "The mean minutes, averaged over the outages closed.")
    assert ratio_stated(["parcel"], {"cost per parcel"}, "Carrier charges divided by shipments.")
    assert ratio_stated(["policy"], {"claim count"}, "Reported claims per 1,000 in-force policies.")
    assert not ratio_stated(["policy"], {"claim frequency"}, "Reported claims per 100 earned car-years.")
    assert ratio_after("claim frequency per policy", {"claim frequency"}) == ["policy"]


@pytest.mark.parametrize("question", [
    "What was billed energy volume excluding rebilled corrections in October 2026?",   # the definition nets them
    "What was billed energy volume without business customers in October 2026?",      # never said
])
def test_a_value_leaving_out_what_the_definition_counts_is_not_computed(ctx, question):
    """"net revenue excluding credit notes in July 2026" was July's governed value, which deducts
    them: another figure than the one asked. Only what the definition itself leaves out ("Estimated
    reads are excluded") is the governed value (qualifiers.left_out_after, left_out_stated)."""
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "metric_not_computable", (question, resp.action, resp.reason)
    assert resp.calculation is None


def test_a_value_leaving_out_what_the_definition_leaves_out_is_the_governed_value(ctx):
    resp = ask(ctx, "What was billed energy volume excluding estimated reads in October 2026?", "analyst")
    assert resp.action == "abstain" and resp.reason == "no_semantic_layer", (resp.action, resp.reason)
    assert left_out_after("billed energy volume excluding estimated reads in October", {"billed energy volume"}) == [
        "estimated", "reads"]
