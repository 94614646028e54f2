"""A document's title named with a word left out ("Who owns the fraud ring runbook?" of "Fraud
ring takedown runbook") abstained `no_matching_object` (probe): the rule that a measure's name
less a middle word names another measure ("the rework rate" is not the rework scrap rate,
tests/test_name_words_apart.py) was applied to runbooks and wikis too. A document is named by
its title's words in order with some left out; a measure is not
(canon/ask/pipeline.py `_phrase_in_one_name`).

A wildfire service domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

RUNBOOK = "runbook.fire.evacuation_staging"
DOCS = [
    {**governed_doc(RUNBOOK, RUNBOOK, "Wildfire evacuation staging runbook",
                    "Approved runbook. Stage buses at the nearest school before the evacuation order.",
                    kind="runbook", authority=80), "owner": "incident-logistics"},
    governed_doc("metric.spread_rate.v1", "metric.fire.crown_fire_spread_rate", "Crown fire spread rate governed definition v1",
                 "Governed metric crown fire spread rate version 1. The median metres per minute a crown fire front "
                 "advances, over fronts mapped in the day."),
]

ctx = module_context("wildfire", DOCS)


@pytest.mark.parametrize("question", [
    "Who owns the wildfire staging runbook?",
    "Who maintains the evacuation runbook?",
    "What does the wildfire evacuation runbook say?",
])
def test_a_runbook_named_with_a_title_word_left_out_is_named(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == RUNBOOK, (question, resp.action, resp.reason)


def test_a_measure_named_with_a_word_left_out_is_still_another_measure(ctx):
    resp = ask(ctx, "How is the crown spread rate defined?", "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (resp.action, resp.reason)
