"""A modifier before a governed name that the definition states only to leave it out ("the audit
course completion rate" beside "audit students are excluded", "the planned maintenance MTBF"
beside "planned maintenance stops are not failures") was read as stated, and the metric answered
for a measure it explicitly does not count. Only the sentences that leave nothing out state a
modifier (canon/ask/understanding/coverage.py `unstated_modifiers`, `_counted_words`).

A fitness-club domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import unstated_modifiers

RETENTION = "metric.member_retention_rate.v1"
TEXT = ("Governed metric member retention rate version 1. The member retention rate is the share of members "
        "active at the start of a quarter still active at its end; founding members count from their first "
        "visit. Members on corporate plans are excluded.")
DOCS = [governed_doc(RETENTION, "metric.club.member_retention_rate", "Member retention rate governed definition v1",
                     TEXT)]

ctx = module_context("fitness_club", DOCS)


@pytest.mark.parametrize("question", [
    "How is the corporate member retention rate defined?",
    "What is the corporate plan member retention rate?",
])
def test_a_modifier_stated_only_as_left_out_names_another_measure(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (question, resp.action, resp.reason)


def test_a_modifier_a_counting_sentence_states_leaves_the_name_answered(ctx):
    resp = ask(ctx, "How is the founding member retention rate defined?", "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == RETENTION, (resp.action, resp.reason)


def test_which_modifiers_are_stated():
    names = ["member retention rate"]
    assert unstated_modifiers("the corporate member retention rate", names, TEXT) == ["corporate"]
    assert unstated_modifiers("the founding member retention rate", names, TEXT) == []
