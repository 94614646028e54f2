"""A question that describes a governed metric by the parts its definition lists ("compute
spend, storage spend and network egress spend, divided by the tenants that made an API call")
finds that metric even when a part it names holds the metric's first word ("... egress spend"
beside "spend per active tenant") and when a verb stands before the part ("what do we call
network egress spend ...": a subject pronoun's verb is no word of the phrase). Such a phrase
reads like a modifier put before the name ("<customer> return rate" beside return to sender
rate is another measure), so it is accepted only when the definition states the phrase whole,
outside what it excludes, and the question restates more of the definition beside it
(canon/ask/understanding/coverage.py `restates_definition`). A freshness word before what a
description counts ("loaded kilometres") asks no freshness (parse.py `_modifiers_before_nouns`).

A cloud cost (FinOps) domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import datetime as dt

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import _stated_part, coverage
from canon.ask.understanding.parse import detect_intents

AS_OF = dt.date(2026, 10, 31)

DOCS = [
    governed_doc("metric.spend_per_active_tenant.v1", "metric.finops.spend_per_active_tenant",
                 "Spend per active tenant governed definition v1",
                 "Governed metric spend per active tenant version 1. Spend per active tenant is compute spend plus "
                 "storage spend plus network egress spend for the billing month, divided by the tenants with at "
                 "least one API call in that month. Provider credits and marketplace fees are excluded."),
    governed_doc("metric.reserved_capacity_coverage.v1", "metric.finops.reserved_capacity_coverage",
                 "Reserved capacity coverage governed definition v1",
                 "Governed metric reserved capacity coverage version 1. Reserved capacity coverage is the share "
                 "of compute hours in the month billed at a reserved or committed price, over all compute hours."),
]

ctx = module_context("finops", DOCS)


@pytest.mark.parametrize("question", [
    "What do we call network egress spend plus compute and storage spend for the month, divided by tenants "
    "that made at least one API call?",
    "How is the measure defined that takes network egress spend plus storage and compute spend for a billing "
    "month over tenants with at least one API call?",
    "What would you call storage spend plus compute spend for the billing month, divided by the tenants that "
    "made an API call?",
    # the parts in the definition's own order, read before this change too
    "Which metric adds compute spend, storage spend and network egress spend for the billing month and "
    "divides by the tenants with an API call?",
])
def test_a_description_naming_a_listed_part_finds_the_metric(ctx, question):
    resp = ask(ctx, question, "analyst", as_of=AS_OF)
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence][:1] == ["metric.spend_per_active_tenant.v1"]


@pytest.mark.parametrize("question", [
    # a part named alone, with nothing of the definition beside it
    "How is network egress spend defined?",
    "What is the storage spend?",
])
def test_a_part_without_the_rest_of_the_definition_abstains(ctx, question):
    resp = ask(ctx, question, "analyst", as_of=AS_OF)
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (question, resp.action, resp.reason)


def test_the_verb_after_a_subject_pronoun_is_no_word_of_the_phrase():
    cov = coverage("What do we call network egress spend plus compute spend?", {"spend per active tenant"})
    assert cov.phrase == ["network", "egress", "spend"]
    assert _stated_part(["takes", "network", "egress", "spend"],
                        "It is compute spend plus network egress spend. Credits are excluded.") == [
        "network", "egress", "spend"]
    # a part only an exclusion sentence states is no part of the definition
    assert _stated_part(["marketplace", "fees"], "It is compute spend. Marketplace fees are excluded.") == []


def test_the_metric_asked_for_by_name_is_answered(ctx):
    resp = ask(ctx, "What is spend per active tenant?", "analyst", as_of=AS_OF)
    assert resp.action == "answer" and [e.doc_id for e in resp.evidence] == ["metric.spend_per_active_tenant.v1"]


def test_a_freshness_word_before_what_is_counted_asks_no_freshness():
    assert "freshness" not in detect_intents("What do we call loaded kilometres driven by the fleet?")
    assert "freshness" not in detect_intents("What share of late deliveries does it count?")
    assert "freshness" in detect_intents("Is the carrier charges data loaded yet?")
    assert "freshness" in detect_intents("When was the parcel data last loaded?")
    assert "freshness" in detect_intents("Is the orders table late today?")
