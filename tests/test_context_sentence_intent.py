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

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask


def revision(version: str, valid_from: str, valid_to: str | None, text: str) -> dict:
    d = governed_doc(f"metric.checkpoint_wait_time.v{version}", "metric.airport.checkpoint_wait_time",
                     f"Checkpoint wait time governed definition v{version}", f"Governed metric. {text}")
    d.update(version=version, valid_from=valid_from, valid_to=valid_to,
             supersedes=None if version == "1" else "metric.checkpoint_wait_time.v1")
    return d


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
