"""A question may describe what a measure counts in one clause and ask about it in the next by
pointing back ("Loans renewed online before the due date - what's that rate's definition?"). The
participle saying which things are counted ("renewed") was read only after "share of" / "rate
of", so the first clause's words described the on-time return rate well enough to answer from
it: a confident answer about a measure nothing governs. The clause a later "that rate" / "this
share" / "that metric" points back to is now what the measure takes (canon/ask/understanding/
counted_condition.py `counted_part`), and a definition must state its participles.

A public-library domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.counted_condition import counted_part

RETURNS = "metric.on_time_return_rate.v1"
DOCS = [
    governed_doc(RETURNS, "metric.library.on_time_return_rate", "On-time return rate governed definition v1",
                 "Governed metric on-time return rate version 1. The on-time return rate is the share of loans "
                 "returned on or before their due date, over all loans due in the month. Lost items count as "
                 "late."),
    governed_doc("metric.card_signups.v1", "metric.library.card_signups", "Card signups governed definition v1",
                 "Governed metric card signups version 1. New library cards issued in the month, counted once "
                 "per patron."),
]

ctx = module_context("library", DOCS)


@pytest.mark.parametrize("question", [
    "Loans renewed online before the due date - what's that rate's definition?",
    "Loans recalled before their due date; how is that rate defined?",
    "Items reserved by patrons in the month. How is that metric defined?",
])
def test_a_clause_pointed_back_to_must_be_what_a_definition_counts(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain", (question, resp.action, [e.doc_id for e in resp.evidence])


def test_what_the_definition_counts_is_still_described(ctx):
    resp = ask(ctx, "Loans returned on or before the due date - how is that rate defined?", "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == RETURNS, (resp.action, resp.reason)


def test_the_clause_pointed_back_to():
    assert counted_part("Loans renewed online - what's that rate?") == ("loans", "renewed", "online")
    assert counted_part("Loans renewed online - what's the on-time return rate?") == ()
