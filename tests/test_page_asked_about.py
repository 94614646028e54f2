"""A page that is no revision of the object, asked about by a name that holds the object's
("what does the net revenue legacy wiki say?"), in a domain no gold set uses: a gym chain.

On the demo, "What does the net revenue legacy wiki say?" was asked back for a date: the metric's
name inside the page's phrase named the metric, and only a draft or superseded revision of that
metric counted as the document asked about. A page of another object none of whose named
documents is approved is asked about the same way when the object is named only inside the
page's phrase: `abstain` `not_authoritative` (canon/ask/pipeline.py, `_subject_revision_statuses`).
Beside a claim, or beside the metric asked about ("what does the old wiki say about <member
retention rate>?"), the page is conflict evidence as before."""

from __future__ import annotations

import functools

import pytest
from corpus_context import governed_doc, metric_revision, module_context

from canon.ask.pipeline import ask

revision = functools.partial(metric_revision, "gym.member_retention", "metric.gym.member_retention",
                             "member retention rate")
WIKI = "wiki.gym.member_retention_old"

DOCS = [
    revision("1", "2025-01-01", "2026-05-01", "Members active at the month's end who were active at its start."),
    revision("2", "2026-05-01", None, "Members active at the month's end who were active at its start; frozen "
                                      "memberships are left out of both."),
    governed_doc(WIKI, "wiki.gym.member_retention", "Member retention rate — old club wiki",
                 "Old wiki page. Member retention counts frozen memberships as retained.", kind="wiki",
                 status="superseded", authority=20),
]

ctx = module_context("gym", DOCS)


@pytest.mark.parametrize("question", [
    "What does the member retention old wiki say?",
    "What does the old club wiki on member retention rate say?",
    "Summarize the member retention old wiki",
])
def test_the_page_is_what_is_asked_about(ctx, question):
    r = ask(ctx, question, "analyst")
    assert (r.action, r.reason) == ("abstain", "not_authoritative"), (question, r.action, r.reason)


@pytest.mark.parametrize("question", [
    "The old club wiki counts frozen memberships as retained. Is that right for member retention rate on 2026-06-30?",
    # the metric asked about outside the page's phrase is the question's object, the page its conflict
    "What does the old club wiki say about member retention rate on 2026-06-30?",
])
def test_beside_the_metric_asked_about_the_page_is_conflict_evidence(ctx, question):
    r = ask(ctx, question, "analyst")
    uses = [(e.doc_id, e.use) for e in r.evidence]
    assert r.action == "answer_conflict" and (WIKI, "conflict") in uses, (question, r.action, r.reason, uses)
