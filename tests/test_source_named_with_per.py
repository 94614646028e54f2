"""A draft named by a metric name that holds "per" ("the revenue per skier visit v3 proposal"),
and a proposal's claim stated with a modal ("… would count season passes"), in a domain no gold
set uses: a ski resort.

"per" broke the source phrase, so the proposal was no named source: the claim got a plain answer
and "what does … proposal say?" was asked back for a date instead of being refused as draft
text (canon/ask/understanding/named_sources.py, `_phrase_start`, `_PROPOSING_MODALS`)."""

from __future__ import annotations

import functools

import pytest
from corpus_context import governed_doc, metric_revision, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.named_sources import extract_named_sources

OBJECT = "metric.resort.revenue_per_skier_visit"
revision = functools.partial(metric_revision, "resort.revenue_per_skier_visit", OBJECT, "revenue per skier visit")

DOCS = [
    revision("1", "2025-01-01", "2026-11-01", "Lift ticket revenue divided by skier visits; season passes excluded."),
    revision("2", "2026-11-01", None, "Lift ticket and lesson revenue divided by skier visits; season passes "
                                      "excluded."),
    governed_doc("resort.revenue_per_skier_visit.v3_proposal", OBJECT, "Revenue per skier visit v3 proposal",
                 "DRAFT proposal, not approved. Revenue per skier visit version 3 would count season pass revenue, "
                 "spread over the pass holders' visits.", status="draft", version="3", valid_from="2027-11-01",
                 valid_to=None, supersedes="resort.revenue_per_skier_visit.v2"),
    governed_doc("resort.snowmaking_hours.v1", "metric.resort.snowmaking_hours", "Snowmaking hours governed "
                 "definition v1", "Governed metric snowmaking hours version 1. Hours any snow gun ran."),
]

ctx = module_context("resort", DOCS)


@pytest.mark.parametrize("question", [
    "The revenue per skier visit v3 proposal adds season passes. Is that the rule for 2026-12-15?",
    "The revenue per skier visit v3 proposal would count season passes. Is that right for 2026-12-15?",
    "Should season passes count in revenue per skier visit for 2026-12-15, like the revenue per skier visit "
    "proposal does?",
])
def test_the_proposal_is_the_conflicting_source(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer_conflict", (question, r.action, r.reason)
    assert [(e.doc_id, e.use) for e in r.evidence][:2] == [
        ("resort.revenue_per_skier_visit.v2", "primary"), ("resort.revenue_per_skier_visit.v3_proposal", "conflict")]


@pytest.mark.parametrize("question", [
    "What does the revenue per skier visit v3 proposal say?",
    "What does the revenue per skier visit (v3) proposal say?",
])
def test_the_proposal_asked_about_is_not_authoritative(ctx, question):
    r = ask(ctx, question, "analyst")
    assert (r.action, r.reason) == ("abstain", "not_authoritative"), (question, r.action, r.reason)


def test_per_inside_a_source_phrase():
    (ns,) = extract_named_sources("The revenue per skier visit v3 proposal adds season passes.")
    assert ns.words == ("revenue", "per", "skier", "visit", "v3", "proposal")
    (ns,) = extract_named_sources("What does the revenue per skier visit v3 proposal say?")
    assert ns.subject
    # "per the wiki" attributes; it is no word of the wiki's name
    (ns,) = extract_named_sources("Are season passes counted, per the wiki?")
    assert ns.words == ("wiki",)
    # a modal after a phrase that opens no sentence attributes nothing
    assert extract_named_sources("Is revenue per skier visit what the proposal would use?") == []
