"""A sentence saying who asks is no question about an owner. "Can you tell me how RevPAR is
calculated? The owner's rep is asking." (a hotel probe) was read as "who owns RevPAR" and answered
as of today with the owner, where the definition question needs a date (RevPAR changed). Beside a
sentence that asks, a statement that names none of the matched objects asks about no owner and no
deprecation (canon/ask/understanding/parse.py `detect_intents`); one that names the object still
does ("X is deprecated, I heard. Is that so?").

An airport security domain no gold set uses, through the real pipeline. The checkpoint wait time
changed on 2026-06-01, so a definition question without a date is asked back; a question about
its owner or its deprecation is answered for today."""

from __future__ import annotations

import functools

import pytest
from corpus_context import metric_revision, module_context

from canon.ask.pipeline import ask

revision = functools.partial(metric_revision, "metric.checkpoint_wait_time", "metric.airport.checkpoint_wait_time", "checkpoint wait time")


DOCS = [
    revision("1", "2025-01-01", "2026-06-01", "Checkpoint wait time is the median minutes from joining the "
             "security queue to reaching the scanner, per hour."),
    revision("2", "2026-06-01", None, "Checkpoint wait time is the 90th percentile of minutes from joining the "
             "security queue to reaching the scanner, per hour; fast-track lanes are excluded."),
]

ctx = module_context("airport_security", DOCS)


@pytest.mark.parametrize("question", [
    "How is checkpoint wait time calculated? The owner's assistant is asking.",
    "Can you explain checkpoint wait time? Asking for the terminal owner's office.",
    "What does checkpoint wait time measure? Our owners want a summary.",
])
def test_a_statement_about_who_asks_leaves_the_definition_question(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "clarify" and resp.reason == "date_required", (question, resp.action, resp.reason)


@pytest.mark.parametrize("question", [
    "Who owns checkpoint wait time? The owner's assistant is asking.",
    "Checkpoint wait time is deprecated, I heard. Is that so?",
    "Is checkpoint wait time deprecated?",
])
def test_owner_and_deprecation_questions_are_still_answered_for_today(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == "metric.checkpoint_wait_time.v2", (
        question, resp.action, resp.reason)
