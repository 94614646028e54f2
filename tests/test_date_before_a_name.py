"""A reporting date written right before a metric's name ("for the <2026-06-30> non-revenue water
ratio"), in a domain no gold set uses: a water utility.

"For the 2026-06-30 capacity factor, can we use gross generation like the old O&M wiki does?"
(library / wind probe) abstained `no_matching_object`: the date's parts ("06", "30") were read as
numbers modifying the name ("the <90>-day …"), which the definition never states. A date, or a
year, before a name says when, not which measure (canon/ask/understanding/coverage.py,
`modifiers_before`); a number that is no date still makes another measure of it."""

from __future__ import annotations

import functools

import pytest
from corpus_context import governed_doc, metric_revision, module_context

from canon.ask.pipeline import ask

revision = functools.partial(metric_revision, "water.non_revenue_water_ratio", "metric.water.non_revenue_water_ratio",
                             "non-revenue water ratio")
WIKI = "wiki.water.operations_old"

DOCS = [
    revision("1", "2025-01-01", "2026-04-01", "Water put into supply less billed consumption, over water put into "
                                              "supply; firefighting use counted as loss."),
    revision("2", "2026-04-01", None, "Water put into supply less billed and metered unbilled consumption, over water "
                                      "put into supply; metered firefighting use is not loss."),
    governed_doc(WIKI, "wiki.water.operations", "Operations handbook — old operations wiki",
                 "Old wiki page. The non-revenue water ratio leaves out all firefighting use, metered or not.",
                 kind="wiki", status="superseded", authority=30),
]

ctx = module_context("water", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("the 2026-03-31 non-revenue water ratio definition", "water.non_revenue_water_ratio.v1"),
    ("How was the 2026-06-30 non-revenue water ratio defined?", "water.non_revenue_water_ratio.v2"),
])
def test_a_date_before_the_name_is_when(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason)


def test_a_claim_about_the_dated_metric_is_weighed(ctx):
    r = ask(ctx, "For the 2026-06-30 non-revenue water ratio, can we leave out all firefighting use like the old "
                 "operations wiki does?", "analyst")
    uses = [(e.doc_id, e.use) for e in r.evidence]
    assert r.action == "answer_conflict" and uses[0] == ("water.non_revenue_water_ratio.v2", "primary") \
        and (WIKI, "conflict") in uses, (r.action, r.reason, uses)


def test_a_number_that_is_no_date_still_names_another_measure(ctx):
    r = ask(ctx, "How is the 12-month non-revenue water ratio defined on 2026-06-30?", "analyst")
    assert r.action == "abstain", (r.action, r.reason, [e.doc_id for e in r.evidence])
