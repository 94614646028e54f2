"""A value broken down by a dimension, asked without a value word ("ticket yield by gallery for Q3
2026?", "visitor count for each site in September 2026"), in a domain no gold set uses: a museum
group.

A definition has no members of a dimension, so a breakdown after the object's name asks for values
(canon/ask/understanding/parse.py, `_intents_of`): Canon computes one total per period and says
so (`metric_not_computable`), instead of answering the definition with the breakdown dropped. A
name followed by "per <noun>" its definitions never measure per is set aside as another ratio;
a runbook whose text mentions the name and that noun ("when the visitor count in a gallery …") is
then no description of the question: one word beside the set-aside name describes nothing
(canon/ask/pipeline.py, `_aside`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.parse import detect_intents


def _metric(stem: str, name: str, text: str) -> dict:
    return governed_doc(f"museum.{stem}.v1", f"metric.museum.{stem}", f"{name} governed definition v1",
                        f"Governed metric {name.lower()} version 1. {text}")


DOCS = [
    _metric("visitor_count", "Visitor count",
            "The number of distinct admissions scanned at any entrance gate of a site in the period; "
            "members and school groups count, staff and contractors do not."),
    _metric("ticket_yield", "Ticket yield",
            "Ticket revenue net of refunds divided by paid admissions in the period."),
    governed_doc("museum.runbook.gallery_crowding", "runbook.museum.gallery_crowding", "Gallery crowding runbook",
                 "When the visitor count in a gallery exceeds 300 for fifteen minutes, close the gallery's entrance "
                 "and open the overflow route. Report the visitor count per gallery to the duty manager every hour.",
                 kind="runbook"),
]

ctx = module_context("museum", DOCS)


@pytest.mark.parametrize("question", [
    "ticket yield by gallery for Q3 2026?",
    "visitor count by site in September 2026",
    "visitor count for each site in September 2026",
    "Visitor count broken down by entrance gate, October 2026",
])
def test_a_breakdown_asks_for_values(ctx, question):
    r = ask(ctx, question, "analyst")
    assert (r.action, r.reason) == ("abstain", "metric_not_computable"), (question, r.action, r.reason, r.answer)
    assert "breakdown by" in r.answer


@pytest.mark.parametrize("question", [
    "visitor count per gallery in November 2026?",
    "What is the visitor count per gallery for November 2026?",
])
def test_a_text_mentioning_the_name_and_the_noun_is_not_the_answer(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action != "answer" and all(e.doc_id != "museum.runbook.gallery_crowding" for e in r.evidence), (
        question, r.action, r.reason, [e.doc_id for e in r.evidence])


@pytest.mark.parametrize("question, doc_id", [
    ("How is ticket yield defined?", "museum.ticket_yield.v1"),
    ("visitor count definition for 2026-09-01", "museum.visitor_count.v1"),
    # a breakdown beside a word asking for the definition still asks for the definition
    ("How is visitor count by site defined?", "museum.visitor_count.v1"),
    # the runbook named as what the question asks about
    ("What does the gallery crowding runbook say?", "museum.runbook.gallery_crowding"),
    # "divide X by Y" names a divisor, not a dimension
    ("Should we divide ticket yield by gallery count for 2026-09-01?", "museum.ticket_yield.v1"),
])
def test_definitions_and_the_runbook_are_still_answered(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason, r.evidence)


def test_breakdown_intent():
    assert "value" in detect_intents("ticket yield by gallery for Q3 2026?", ["ticket yield"])
    assert "value" in detect_intents("visitor count for each site", ["visitor count"])
    assert "value" not in detect_intents("How is visitor count by site defined?", ["visitor count"])
    assert "value" not in detect_intents("Which tables feed visitor count by site?", ["visitor count"])
    assert "value" not in detect_intents("Should we divide ticket yield by gallery count?", ["ticket yield"])
    # "by" after a participle names an agent, not a dimension
    assert "value" not in detect_intents("visitor count reported by finance", ["visitor count"])
