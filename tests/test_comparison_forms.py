"""Two revisions compared in everyday words: "is v2 stricter than v1?", "diff between the old
and the current churn rate", "member churn rate: old vs new", "compare the member churn rate
definitions". They were answered from one revision, or asked back for a date, instead of citing
both revisions with what each states (the `comparison` field). A comparative ("stricter than",
"more … than") between two named versions, a pair of relative revision words ("old and new",
"previous vs current") beside a comparison word, and "compare" before the plural of a revision
noun each compare (canon/ask/understanding/temporal.py `find_versions`, `is_comparison`).

A fitness-club domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask. The member churn rate changed on 2026-02-01."""

from __future__ import annotations

import datetime as dt
import functools

import pytest
from corpus_context import metric_revision, module_context

from canon.ask.pipeline import ask

V1, V2 = "metric.member_churn_rate.v1", "metric.member_churn_rate.v2"


revision = functools.partial(metric_revision, "metric.member_churn_rate", "metric.fitness.member_churn_rate", "member churn rate")


DOCS = [
    revision("1", "2025-01-01", "2026-02-01", "The member churn rate is the share of members active at the start "
             "of the month who cancel during it. Frozen memberships count as active."),
    revision("2", "2026-02-01", None, "The member churn rate is the share of members active at the start of the "
             "month who cancel during it. Frozen memberships are excluded from both counts."),
]

ctx = module_context("fitness", DOCS)


@pytest.mark.parametrize("question", [
    "Is member churn rate v2 stricter than v1?",
    "Is the v1 member churn rate more lenient than v2?",
    "diff between the old and the current member churn rate",
    "member churn rate: old vs new",
    "Compare the member churn rate definitions",
    "How does the previous member churn rate definition compare with the current one?",
    "What is the difference between the original and the latest member churn rate?",
])
def test_two_revisions_compared_in_everyday_words_cite_both(ctx, question):
    resp = ask(ctx, question, "analyst", as_of=dt.date(2026, 11, 1))
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence] == [V1, V2], (question, [e.doc_id for e in resp.evidence])
    assert resp.comparison and "Frozen memberships are excluded from both counts." in resp.comparison["only_in_to"]


@pytest.mark.parametrize("question, doc_id", [
    ("What is the current member churn rate definition?", V2),
    ("Show me the old member churn rate definition", V1),
    ("Is the member churn rate definition stricter than the industry standard?", V2),
])
def test_one_revision_asked_for_is_no_comparison(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst", as_of=dt.date(2026, 11, 1))
    assert resp.action == "answer" and resp.comparison is None, (question, resp.action, resp.comparison)
    assert resp.evidence[0].doc_id == doc_id, (question, [e.doc_id for e in resp.evidence])


@pytest.mark.parametrize("question", [
    "What's the difference between the current member churn rate and the one used in January 2026?",
    "Compare the member churn rate definition on 2026-01-15 with the one on 2026-06-01",
    "member churn rate definition: January 2026 vs June 2026",
])
def test_revisions_compared_by_the_days_they_governed_cite_both(ctx, question):
    """Compared by dates rather than version numbers, one revision was answered."""
    resp = ask(ctx, question, "analyst", as_of=None)
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence] == [V1, V2], (question, [e.doc_id for e in resp.evidence])
    assert resp.comparison is not None


def test_two_days_one_revision_governs_are_asked_back(ctx):
    resp = ask(ctx, "Compare the member churn rate definition on 2026-03-01 with the one on 2026-06-01", "analyst")
    assert resp.action == "clarify" and resp.reason == "version_not_found", (resp.action, resp.reason)


def test_a_value_over_two_periods_is_no_comparison_of_definitions():
    from canon.ask.understanding.parse import parse_question
    p = parse_question("What was the member churn rate in January 2026 vs June 2026?", {})
    assert not p.compare and len(p.periods) == 2
