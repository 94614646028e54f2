"""What a question is asked for, set off before it ("For the production dashboard, how is GCS
defined?"), in a domain no gold set uses: a coffee roastery.

The opening clause's words ("production", "dashboard") are no description of the object: read as
one, they made a question that names its object only in part (the initialism of part of the
title) abstain. A clause whose last word says what the question is for (a dashboard, a report, a
deck, a review) is left out of the description (canon/ask/understanding/coverage.py,
`asking_part`, `_without_setting`). A question of pronouns ("How is it defined?") asks about the
sentence just before it, not the scene before that."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import asking_part

GCS = "roastery.batch_gcs.v1"

DOCS = [
    governed_doc(GCS, "metric.roastery.batch_gcs", "Roast batch green coffee shrink (GCS) governed definition v1",
                 "Governed metric roast batch green coffee shrink version 1. Green coffee weight lost in roasting, "
                 "divided by the green weight charged, per batch."),
    governed_doc("roastery.cupping_score.v1", "metric.roastery.cupping_score", "Cupping score governed definition v1",
                 "Governed metric cupping score version 1. The mean of three cuppers' scores on the 100-point form."),
    governed_doc("roastery.order_fill_rate.v1", "metric.roastery.order_fill_rate",
                 "Wholesale order fill rate governed definition v1",
                 "Governed metric wholesale order fill rate version 1. Share of ordered bags shipped in full."),
]

ctx = module_context("roastery", DOCS)


@pytest.mark.parametrize("question", [
    "How is GCS defined?",
    "For the production dashboard, how is GCS defined?",
    "For our monthly roasting report, how is GCS defined?",
    "In the Q3 board deck, how is GCS defined?",
    # a question of pronouns asks about the sentence just before it, not the scene before that
    "I'm building the monthly production report. I need the GCS. How is it defined?",
])
def test_the_setting_is_no_description(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == GCS, (question, r.action, r.reason)


def test_an_opening_clause_that_is_no_setting_stays():
    # the clause names what is measured: it is read as part of the description
    q = "For the wholesale orders, what share ships in full?"
    assert asking_part(q) == q
    assert asking_part("For the production dashboard, how is GCS defined?") == "how is GCS defined?"
    assert asking_part("I'm building the production report. I need the GCS. How is it defined?") == (
        "I need the GCS. How is it defined?")
    # one sentence before the question: it is the antecedent, and the whole question is read
    q = "We weigh green coffee before and after roasting. How is that defined?"
    assert asking_part(q) == q
