"""A value asked for by a request to work it out, or broken down after a name's measure head, in
a domain no gold set uses: a bakery chain.

"compute the fare evasion rate for Q3 2026" (transit / veterinary probe) was answered with the
definition: no value word stood in it. A question opening with a request to work a figure out
("compute", "calculate", "work out") asks for a value (canon/ask/understanding/parse.py,
`INTENT_PATTERNS["value"]`), which Canon does not compute without a semantic layer;
"calculate how … is defined" still asks for the definition. And "vaccine reminder conversion
rate by clinic" matched the object by the name its id gives ("vaccine reminder conversion"), so
"by clinic" did not follow the name and the breakdown was dropped: a measure head the name leaves
out ("<rate>") now stands between them (canon/ask/understanding/qualifiers.py, `breakdown`).

An approved definition's title names its object in full too ("Markdown conversion rate …" of
metric.bakery.markdown_conversion; canon/ask/understanding/match.py, `object_catalog`): "How is
the markdown conversion rate calculated?" abstained before, the extra "rate" read as another
measure. Of two names written from the same word the longer ends the name (coverage.py,
`_name_span`): it was whichever a set gave first, so "per store" after "rate" was read as a ratio
in one process and not in another."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import name_end

DOCS = [
    governed_doc("bakery.markdown_conversion.v1", "metric.bakery.markdown_conversion",
                 "Markdown conversion rate governed definition v1",
                 "Governed metric markdown conversion rate version 1. Loaves reduced after 16:00 that sell before "
                 "closing divided by loaves reduced after 16:00."),
    governed_doc("bakery.oven_utilisation.v1", "metric.bakery.oven_utilisation",
                 "Oven utilisation governed definition v1",
                 "Governed metric oven utilisation version 1. Baking minutes divided by the oven's staffed minutes."),
]

ctx = module_context("bakery", DOCS)


@pytest.mark.parametrize("question", [
    "compute the oven utilisation for Q3 2026",
    "Calculate oven utilisation for 2026-10-31",
    "can you work out the markdown conversion rate for October 2026?",
])
def test_a_request_to_work_it_out_asks_for_a_value(ctx, question):
    r = ask(ctx, question, "analyst")
    assert (r.action, r.reason) == ("abstain", "no_semantic_layer"), (question, r.action, r.reason)


def test_a_breakdown_after_the_measure_head(ctx):
    r = ask(ctx, "markdown conversion rate by store for October 2026", "analyst")
    assert (r.action, r.reason) == ("abstain", "metric_not_computable"), (r.action, r.reason, r.answer)


@pytest.mark.parametrize("question, doc_id", [
    ("calculate how the oven utilisation is defined", "bakery.oven_utilisation.v1"),
    ("How is the markdown conversion rate calculated?", "bakery.markdown_conversion.v1"),
])
def test_how_it_is_worked_out_is_the_definition(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason)


def test_the_longer_of_two_names_starting_together_ends_the_name():
    # The catalog's names are a set: of "markdown conversion" (the id's) and "markdown conversion
    # rate" (the title's), whichever came first ended the name, so "per store" after "rate" was
    # read as a ratio in one process and not in another.
    toks = tuple("markdown conversion rate per store".split())
    for names in (["markdown conversion", "markdown conversion rate"], ["markdown conversion rate", "markdown conversion"]):
        assert name_end(toks, names) == 3


def test_a_ratio_after_the_title_name_is_another_measure(ctx):
    r = ask(ctx, "markdown conversion rate per store for October 2026", "analyst")
    assert r.action == "abstain", (r.action, r.reason, [e.doc_id for e in r.evidence])
