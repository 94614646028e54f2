"""A source that is the subject of a sentence's main clause after a fronted phrase ("For the
July figure, the old wiki uses …"), in a domain no gold set uses: a brewery.

"For the 2026-07-31 capacity factor, the old O&M wiki uses gross generation - can we do the
same?" (library / wind probe) was a plain answer: a document phrase with a finite verb after it
stated a claim only when it opened the sentence or followed a verb of saying. After a comma that
closes a phrase a preposition or a discourse word opens, it opens the main clause as well
(canon/ask/understanding/named_sources.py, `_after_fronted_phrase`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.named_sources import extract_named_sources

V1 = "brew.fermentation_yield.v1"
V2 = "brew.fermentation_yield.v2"
WIKI = "wiki.brew.brewhouse_glossary_old"

DOCS = [
    governed_doc(V1, "metric.brew.fermentation_yield", "Fermentation yield governed definition v1",
                 "Governed metric fermentation yield version 1. Litres of beer racked over litres of wort "
                 "pitched; dumped batches count with zero litres.", valid_to="2026-06-01"),
    governed_doc(V2, "metric.brew.fermentation_yield", "Fermentation yield governed definition v2",
                 "Governed metric fermentation yield version 2. Litres of beer racked over litres of wort "
                 "pitched, net of trub losses; dumped batches are left out and reported apart.",
                 version="2", valid_from="2026-06-01", supersedes=V1),
    governed_doc(WIKI, "wiki.brew.brewhouse_glossary", "Brewhouse glossary — old brewhouse wiki",
                 "Old wiki page. Fermentation yield uses gross wort volume and counts dumped batches.",
                 kind="wiki", status="superseded", authority=30),
]

ctx = module_context("brewery", DOCS)


@pytest.mark.parametrize("question", [
    "For the 2026-07-31 fermentation yield, the old brewhouse wiki uses gross wort volume - can we do the same?",
    "In August 2026, the old brewhouse wiki counts dumped batches in fermentation yield. Is that right?",
    "Btw, the old brewhouse wiki counts dumped batches in fermentation yield - ok for 2026-08-31?",
])
def test_the_source_is_conflict_beside_the_governing_revision(ctx, question):
    r = ask(ctx, question, "analyst")
    uses = [(e.doc_id, e.use) for e in r.evidence]
    assert r.action == "answer_conflict" and uses[0] == (V2, "primary") and (WIKI, "conflict") in uses, (
        question, r.action, r.reason, uses)


def test_a_fronted_phrase_must_open_the_sentence_and_the_phrase_must_act():
    fronted = extract_named_sources("For June, the old wiki uses gross wort volume.")
    assert [(ns.noun, ns.statuses) for ns in fronted] == [("wiki", ("superseded", "deprecated"))]
    # A relative clause between commas, or a comma inside the user's own question, opens no main clause.
    assert not extract_named_sources("For costs, which the wiki covers, what applies?")
    assert not extract_named_sources("Is yield, the wiki page, correct?")
    assert not extract_named_sources("What is fermentation yield, and the wiki page?")
