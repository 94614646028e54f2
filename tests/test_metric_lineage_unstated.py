"""Where a metric's data comes from, when no lineage document states it, in a domain no gold set
uses: a leisure centre.

The lineage of a metric is its dbt graph, its governed lineage document, or else the upstream
tables its model declares (`upstream:` in the model's front matter). With none of them Canon
abstains (`no_lineage`) and names the model the metric is built on; it never answers the
definition in the lineage's place, unless the question asks for the definition too
(canon/ask/pipeline.py, `_with_graph`, `_no_metric_lineage`). "How long it takes from A to B"
asks for a duration, not where data is taken from (canon/ask/understanding/parse.py)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.parse import detect_intents


def _metric(stem: str, name: str, text: str, model: str | None) -> dict:
    supported = f" Supporting model is model.leisure.{model}.v1." if model else ""
    return governed_doc(f"leisure.{stem}.v1", f"metric.leisure.{stem}", f"{name} governed definition v1",
                        f"Governed metric {name.lower()} version 1. {text}{supported}")


def _model(name: str, grain: str, **extra) -> dict:
    d = governed_doc(f"model.{name}.v1", f"model.leisure.{name}", f"dbt model schema {name} v1",
                     f"dbt model model.leisure.{name}.v1. Grain: {grain}", kind="model_schema", authority=90)
    d.update(extra)
    return d


DOCS = [
    _metric("swim_lesson_completion_rate", "Swim lesson completion rate",
            "Share of children enrolled in a ten-week swim course who attend at least eight lessons.",
            "fct_lesson_attendance"),
    _model("fct_lesson_attendance", "one row per child per lesson.",
           upstream=["raw.bookings.lesson_enrolments", "raw.turnstiles.pool_entries"]),
    _metric("pool_occupancy_rate", "Pool occupancy rate",
            "Swimmers in the water divided by the pool's licensed bather load, averaged over opening hours.",
            "fct_pool_counts"),
    _model("fct_pool_counts", "one row per pool per 15-minute interval."),
    _metric("membership_churn_rate", "Membership churn rate",
            "Members whose direct debit lapsed in the month divided by members at the start of the month.", None),
    _metric("time_to_first_visit", "Time to first visit",
            "Days from a membership being sold to the member's first turnstile entry.", None),
]

ctx = module_context("leisure", DOCS)


@pytest.mark.parametrize("question", [
    "Which raw tables feed the swim lesson completion rate?",
    "Where does the swim lesson completion rate data come from?",
])
def test_the_models_declared_upstreams_are_the_metrics_lineage(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer", (question, r.action, r.reason)
    assert "raw.bookings.lesson_enrolments" in r.answer and "raw.turnstiles.pool_entries" in r.answer
    assert [e.doc_id for e in r.evidence][:2] == ["leisure.swim_lesson_completion_rate.v1",
                                                   "model.fct_lesson_attendance.v1"]


@pytest.mark.parametrize("question, model", [
    ("Which raw tables feed the pool occupancy rate?", "model.fct_pool_counts.v1"),
    ("Where does the pool occupancy rate data come from?", "model.fct_pool_counts.v1"),
    ("Which sources feed the membership churn rate?", None),
])
def test_no_stated_lineage_abstains_naming_the_model(ctx, question, model):
    r = ask(ctx, question, "analyst")
    assert (r.action, r.reason) == ("abstain", "no_lineage"), (question, r.action, r.reason)
    if model:
        assert model in r.answer and model in [e.doc_id for e in r.evidence]
    assert "Governed metric" not in r.answer   # not the definition in the lineage's place


@pytest.mark.parametrize("question, doc_id", [
    # the definition asked for beside the lineage is still an answer
    ("Which pool occupancy rate definition applies, and which source supports it?", "leisure.pool_occupancy_rate.v1"),
    ("How is the pool occupancy rate defined?", "leisure.pool_occupancy_rate.v1"),
    # a duration "from A to B", not a lineage question
    ("What is our governed measure of how long it takes from a membership sale to the first visit?",
     "leisure.time_to_first_visit.v1"),
])
def test_definitions_are_still_answered(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason)


def test_how_long_it_takes_from_is_no_lineage():
    assert "lineage" not in detect_intents("how long it takes from requisition approval to offer acceptance")
    assert "lineage" in detect_intents("the pool occupancy rate takes its data from which tables?")
