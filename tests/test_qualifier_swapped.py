"""A name's qualifier swapped for another word ("<dock> utilisation" beside pallet position
utilisation), in a domain no gold set uses: a cold-storage warehouse.

Its definition counts positions "beside the dock doors", so "dock" is a word it states.

"How is grid availability defined as of 2026-06-01?" (library / wind probe) was answered with
turbine availability: the object answers to "availability" (its id) and its definition mentions
"grid outages", so "grid" passed as a modifier the definition states. The object's own longer
name puts another word there ("<turbine> availability"); a word the text never puts before the
name names a sibling measure, and the question abstains (canon/ask/understanding/coverage.py,
`qualifier_swapped`; canon/ask/pipeline.py, `_pick_concept`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import qualifier_swapped

UTILISATION = "cold.utilisation.v1"

DOCS = [
    governed_doc(UTILISATION, "metric.cold.utilisation", "Pallet position utilisation governed definition v1",
                 "Governed metric pallet position utilisation version 1. Occupied pallet positions divided by "
                 "rackable pallet positions at 06:00, averaged over the days of the period. Positions beside the "
                 "dock doors count as rackable. Also reported as storage utilisation."),
    governed_doc("cold.temperature_excursions.v1", "metric.cold.temperature_excursions",
                 "Temperature excursions governed definition v1",
                 "Governed metric temperature excursions version 1. Chamber readings above the product's limit "
                 "for 30 minutes or more."),
]

ctx = module_context("cold_storage", DOCS)


@pytest.mark.parametrize("question", [
    "How is dock utilisation defined?",
    "What is the definition of door utilisation?",
])
def test_another_qualifier_names_a_sibling(ctx, question):
    r = ask(ctx, question, "analyst")
    assert not any(e.doc_id == UTILISATION for e in r.evidence), (question, r.action, r.reason)
    assert r.action == "abstain", (question, r.action, r.reason)


@pytest.mark.parametrize("question", [
    "How is pallet position utilisation defined?",
    "How is utilisation defined?",
    # a qualifier the text itself puts before the name
    "How is storage utilisation defined?",
    "What's the definition behind utilisation?",
])
def test_the_names_own_qualifier_or_one_the_text_states(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == UTILISATION, (question, r.action, r.reason)


def test_qualifier_swapped():
    names = {"utilisation", "pallet position utilisation"}
    text = "Positions beside the dock doors count as rackable. Also reported as storage utilisation."
    assert qualifier_swapped("how is dock utilisation defined", "utilisation", names, text)
    assert not qualifier_swapped("how is storage utilisation defined", "utilisation", names, text)
    assert not qualifier_swapped("how is pallet position utilisation defined", "utilisation", names, text)
    assert not qualifier_swapped("how is the utilisation defined", "utilisation", names, text)
    # a verb after a noun is no qualifier of the name
    assert not qualifier_swapped("which columns does the model supporting utilisation have", "utilisation", names, text)
    assert not qualifier_swapped("an old page claims utilisation includes aisles", "utilisation", names, text)
    # a preposition after an intent word places the name (airport / charity probe: "the grain of
    # the model behind turnaround time" abstained, "behind" read as another qualifier)
    assert not qualifier_swapped("what is the grain of the model behind utilisation", "utilisation", names, text)
    assert not qualifier_swapped("which tables are under utilisation", "utilisation", names, text)
