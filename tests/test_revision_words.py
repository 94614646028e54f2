"""Everyday words for a revision and for how many revisions: "the legacy / superseded / retired
definition" is the previous one, "the updated / revised definition" the latest, "the two …
definitions" and "both … definitions" are every revision compared. "Legacy" was read as nothing
(the revision asked back for a date), "updated" as a modifier the definition never states
(abstained no_matching_object), and "the two … definitions" as one too (canon/ask/understanding/
temporal.py `_RELATIVE_WORDS`, `_COMPARE_ALL`; canon/ask/understanding/coverage.py
`_WHICH_REVISION`, `_COUNT_WORDS`).

A farming-cooperative domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

V1, V2 = "metric.yield_per_hectare.v1", "metric.yield_per_hectare.v2"
OBJECT = "metric.farming.yield_per_hectare"


def revision(doc_id: str, version: str, valid_from: str, valid_to: str | None, supersedes: str | None,
             text: str) -> dict:
    doc = governed_doc(doc_id, OBJECT, f"Yield per hectare governed definition v{version}", text)
    doc.update(version=version, valid_from=valid_from, valid_to=valid_to, supersedes=supersedes)
    return doc


DOCS = [
    revision(V1, "1", "2025-01-01", "2026-04-01", None,
             "Governed metric yield per hectare version 1. Harvested tonnes divided by planted hectares."),
    revision(V2, "2", "2026-04-01", None, V1,
             "Governed metric yield per hectare version 2. Harvested tonnes at 14% moisture divided by "
             "harvested hectares; fields lost to flooding are excluded."),
]

ctx = module_context("farming", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("What is the legacy yield per hectare definition?", V1),
    ("Show me the superseded yield per hectare definition", V1),
    ("What was the retired yield per hectare definition?", V1),
    ("the updated yield per hectare definition", V2),
    ("How does the revised yield per hectare definition read?", V2),
])
def test_a_revision_word_selects_that_revision(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and [e.doc_id for e in resp.evidence] == [doc_id], (
        question, resp.action, resp.reason, [e.doc_id for e in resp.evidence])


@pytest.mark.parametrize("question", [
    "What's the difference between the two yield per hectare definitions?",
    "Compare both yield per hectare definitions",
])
def test_the_two_definitions_are_both_revisions(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and {e.doc_id for e in resp.evidence} >= {V1, V2}, (
        question, resp.action, resp.reason)
    assert resp.comparison is not None
