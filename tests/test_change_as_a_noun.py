""""change" as a noun asks about no change of a definition: "Above what case reserve change do
we escalate to the claims director?" and "What does the escalation runbook say about changes
above 250,000?" were read as questions about what changed between revisions (probe), and the
answer was a question back about a revision the runbook does not have. The bare "change" is a
verb only after an auxiliary ("how did X change"), and no "change(s)" after a preposition is one
(canon/ask/understanding/temporal.py `_asks_a_change`). "What changed …", "what are the changes
in …" still ask what changed.

A mountain rescue domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.parse import parse_question

RUNBOOK = "runbook.rescue.callout_escalation"
DOCS = [
    governed_doc(RUNBOOK, RUNBOOK, "Call-out escalation runbook",
                 "Approved runbook. Escalate to the duty controller when a team's risk score change exceeds 3 "
                 "points, or when changes above 2 hours to the estimated rescue time are logged.",
                 kind="runbook", authority=80),
    governed_doc("metric.callout_time.v1", "metric.rescue.callout_response_time",
                 "Call-out response time governed definition v1",
                 "Governed metric call-out response time version 1. The median minutes from the alert to the first "
                 "team leaving base.", valid_to="2026-06-01"),
    governed_doc("metric.callout_time.v2", "metric.rescue.callout_response_time",
                 "Call-out response time governed definition v2",
                 "Governed metric call-out response time version 2. Effective 2026-06-01, the median minutes from "
                 "the alert to the first team member arriving at the scene.", version="2", valid_from="2026-06-01",
                 supersedes="metric.callout_time.v1"),
]

ctx = module_context("rescue", DOCS)


@pytest.mark.parametrize("question", [
    "Above what risk score change do we escalate according to the call-out escalation runbook?",
    "What does the call-out escalation runbook say about changes above 2 hours?",
])
def test_a_change_as_a_noun_asks_what_the_document_says(ctx, question):
    assert not parse_question(question, ctx.catalog).compare, question
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == RUNBOOK, (question, resp.action, resp.reason)


@pytest.mark.parametrize("question", [
    "What changed in the call-out response time definition?",
    "How did the call-out response time definition change?",
    "What are the changes in the call-out response time definition?",
])
def test_a_change_asked_about_compares_the_revisions(ctx, question):
    assert parse_question(question, ctx.catalog).compare, question
    resp = ask(ctx, question, "analyst")
    assert resp.comparison is not None and [e.doc_id for e in resp.evidence] == [
        "metric.callout_time.v1", "metric.callout_time.v2"], (question, resp.action, resp.reason)
