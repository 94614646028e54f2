"""An initialism in a title's parentheses that takes a letter from each part of a closed
compound ("Payback period (PBP)": pay-back period), in a domain no gold set uses: a solar
installer.

"TAT definition for 2026-09-01" (airport / charity probe; the title "Aircraft turnaround time
(TAT) …", the id metric.airport.turnaround_time) abstained no_matching_object, and "the old ops
wiki says TAT runs from touchdown to take-off" was sent to another metric's human review: a
title's initialism named the object only when it was the initials of the words before it, and
the id's name. A closed compound gives a letter for each of its English parts, and an initialism
of the id's own name names the object alone (canon/ask/understanding/match.py,
`parenthesized_names`, `_abbreviated_in_parts`)."""

from __future__ import annotations

import functools

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.match import parenthesized_names

V1 = "solar.payback_period.v1"
V2 = "solar.payback_period.v2"
WIKI = "wiki.solar.sales_glossary_old"

revision = functools.partial(governed_doc, object_id="metric.solar.payback_period")

DOCS = [
    revision(V1, title="Installation payback period (PBP) governed definition v1",
             text="Governed metric installation payback period version 1. Years until the bill savings of an "
                  "installation repay its price, before the export tariff.", valid_to="2026-04-01"),
    revision(V2, title="Installation payback period (PBP) governed definition v2",
             text="Governed metric installation payback period version 2. Years until the bill savings and the "
                  "export tariff of an installation repay its price net of grants.", version="2",
             valid_from="2026-04-01", supersedes=V1),
    governed_doc(WIKI, "wiki.solar.sales_glossary", "Sales glossary — old sales wiki",
                 "Old wiki page. The payback period ignores grants and counts the export tariff at list price.",
                 kind="wiki", status="superseded", authority=30),
    governed_doc("solar.panel_degradation.v1", "metric.solar.panel_degradation",
                 "Panel degradation rate governed definition v1",
                 "Governed metric panel degradation rate version 1. Yearly loss of rated output, in percent."),
]

ctx = module_context("solar", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("PBP definition for 2026-09-01", V2),
    ("which PBP definition did v2 replace?", V1),
    ("is PBP net of grants on 2026-02-01?", V1),
])
def test_the_initialism_names_the_object(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason, r.answer)


def test_a_source_beside_the_initialism_is_conflict_evidence(ctx):
    r = ask(ctx, "the old sales wiki says PBP ignores grants - right for 2026-06-30?", "analyst")
    uses = [(e.doc_id, e.use) for e in r.evidence]
    assert r.action == "answer_conflict" and uses[0] == (V2, "primary") and (WIKI, "conflict") in uses, (
        r.action, r.reason, uses)


def test_only_the_compounds_parts_give_letters():
    title = "Installation payback period (PBP) governed definition v1"
    assert parenthesized_names(title, "payback period") == {"installation payback period", "installation pbp", "pbp"}
    # Letters no split of the words before them gives name nothing.
    assert parenthesized_names("Installation payback period (IPX) governed definition v1", "payback period") == set()
    # The id's own name spelled before the initialism, as before.
    assert parenthesized_names("Panel degradation rate (PDR) governed definition v1", "panel degradation rate") == {
        "pdr"}
