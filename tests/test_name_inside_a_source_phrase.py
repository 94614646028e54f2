"""A claim attributed to a revision named by its metric's name ("The screen occupancy v3 proposal
counts complimentary tickets. Is that the rule …?"), where a dbt model's name repeats the
metric's, in a domain no gold set uses: a cinema chain.

The metric's name inside the source's phrase names the source, so it was set aside as the
question's object, while the model's title ("dbt model schema fct_screen_occupancy v2") was
matched fuzzily on the same words and left standing: the model became the primary evidence of a
definition question. The words that name what a model holds (its title less its schema words
and layer prefix) are judged inside the source's phrase as the metric's name is
(canon/ask/pipeline.py, `_beside_sources`)."""

from __future__ import annotations

import functools

import pytest
from corpus_context import governed_doc, metric_revision, model_revision, module_context

from canon.ask.pipeline import ask

OBJECT = "metric.cinema.screen_occupancy"
revision = functools.partial(metric_revision, "cinema.screen_occupancy", OBJECT, "screen occupancy")


_model = functools.partial(model_revision, "cinema", "fct_screen_occupancy")


DOCS = [
    revision("1", "2025-01-01", "2026-06-01", "Tickets scanned divided by seats on sale, per screening. "
                                              "Supporting model is model.cinema.fct_screen_occupancy.v1."),
    revision("2", "2026-06-01", None, "Tickets scanned divided by seats on sale, per screening; complimentary "
                                      "tickets excluded. Supporting model is model.cinema.fct_screen_occupancy.v2."),
    governed_doc("cinema.screen_occupancy.v3_proposal", OBJECT, "Screen occupancy v3 proposal",
                 "DRAFT proposal, not approved. Screen occupancy version 3 would count complimentary tickets and "
                 "divide by seats sold.", status="draft", version="3", valid_from="2027-01-01", valid_to=None,
                 supersedes="cinema.screen_occupancy.v2"),
    _model("1", "2025-01-01", "2026-06-01", "one row per screening."),
    _model("2", "2026-06-01", None, "one row per screening."),
]

ctx = module_context("cinema", DOCS)


@pytest.mark.parametrize("question", [
    "The screen occupancy v3 proposal would count complimentary tickets. Is that the rule for 2026-09-30?",
    "The screen occupancy v3 proposal counts complimentary tickets. Is that the rule for 2026-09-30?",
    "The screen occupancy proposal says complimentary tickets count. Does that hold on September 30, 2026?",
    "The v3 proposal counts complimentary tickets in screen occupancy. Is that the rule for 2026-09-30?",
])
def test_the_metric_is_primary_and_the_proposal_its_conflict(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer_conflict", (question, r.action, r.reason)
    assert [(e.doc_id, e.use) for e in r.evidence][:2] == [
        ("cinema.screen_occupancy.v2", "primary"), ("cinema.screen_occupancy.v3_proposal", "conflict")]


def test_the_model_asked_for_is_still_the_model(ctx):
    r = ask(ctx, "Which model supports screen occupancy on 2026-09-30?", "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == "model.fct_screen_occupancy.v2"
