"""A one-word qualifier a definition's title puts in parentheses after its name ("Rack power
utilisation (peak-based)") names the measure with the name, in a domain no gold set uses: a
data centre.

"How is time-based availability defined for 2026-06-30?" (library / wind probe; the title is
"Turbine availability (time-based) …", the id metric.wind.availability) abstained
no_matching_object: a title's parentheses gave names only for an initialism ("(CF)"). A
qualifier gives "<qualifier> <name>", and "<qualifier> <id name>" where the id's name ends the
title's (canon/ask/understanding/match.py, `qualified_names`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.match import qualified_names

POWER = "dc.power_utilisation.v1"
COOLING = "dc.cooling_utilisation.v1"

DOCS = [
    governed_doc(POWER, "metric.dc.utilisation", "Rack power utilisation (peak-based) governed definition v1",
                 "Governed metric rack power utilisation version 1. The peak 15-minute power draw of a rack over "
                 "its contracted power, per month."),
    governed_doc(COOLING, "metric.dc.cooling_utilisation", "Cooling plant utilisation governed definition v1",
                 "Governed metric cooling plant utilisation version 1. Chiller load over installed chiller "
                 "capacity, hourly mean."),
]

ctx = module_context("data_centre", DOCS)


@pytest.mark.parametrize("question", [
    "peak-based utilisation definition for 2026-03-31",
    "How is peak based rack power utilisation defined for 2026-03-31?",
])
def test_the_qualified_name_finds_the_measure(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == POWER, (question, r.action, r.reason, r.answer)


def test_only_a_qualifier_of_the_measure_names_it():
    assert qualified_names("Rack power utilisation (peak-based) governed definition v1", "utilisation") == {
        "peak based rack power utilisation", "peak based utilisation"}
    assert qualified_names("Rack power utilisation (peak-based) governed definition v1", "power utilisation") == {
        "peak based rack power utilisation", "peak based power utilisation"}
    # A status word, an initialism (in any case) or a title without parentheses names nothing more.
    assert qualified_names("Rack power utilisation (draft) v2", "utilisation") == set()
    assert qualified_names("Rack power utilisation (RPU) governed definition v1", "utilisation") == set()
    assert qualified_names("Rack power utilisation (rpu) governed definition v1", "utilisation") == set()
    assert qualified_names("Rack power utilisation governed definition v1", "utilisation") == set()
