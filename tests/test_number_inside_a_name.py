"""A number inside a measure's name says which measure ("ED 4-hour compliance rate"), in a
domain no gold set uses: a hospital's emergency department.

"How is the bulky waste 7-day completion rate defined?" (waste / pharmacy probe) was answered
with the 5-day completion rate, and once its number was read, with the "NMS 28-day follow-up
completion rate" found by "day completion rate": a number right before the question's object
phrase that the object's names put another number in the place of names another measure
(canon/ask/understanding/coverage.py, `number_swapped`). A number elsewhere ("admitted after 5
hours") is none of the name's."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import number_swapped

FOUR_HOUR = "ed.four_hour_compliance.v1"
DISCHARGE = "ed.discharge_letter.v1"

DOCS = [
    governed_doc(FOUR_HOUR, "metric.ed.four_hour_compliance", "ED 4-hour compliance rate governed definition v1",
                 "Governed metric ED 4-hour compliance rate version 1. Attendances admitted, transferred or "
                 "discharged within 4 hours of arrival, over attendances."),
    governed_doc(DISCHARGE, "metric.ed.discharge_letter", "Discharge letter 24-hour completion rate governed definition v1",
                 "Governed metric discharge letter 24-hour completion rate version 1. Letters sent to the GP within "
                 "24 hours of discharge, over discharges."),
]

ctx = module_context("emergency_department", DOCS)


@pytest.mark.parametrize("question", [
    "ED 12-hour compliance rate definition",
    "How is the ED 2-hour compliance rate defined?",
    "How is the discharge letter 48-hour completion rate defined?",
])
def test_another_number_is_another_measure(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "abstain" and not r.evidence, (question, r.action, r.reason, [e.doc_id for e in r.evidence])


@pytest.mark.parametrize("question, doc_id", [
    ("How is the ED 4-hour compliance rate defined?", FOUR_HOUR),
    ("Is a patient admitted after 5 hours counted in the ED 4-hour compliance rate?", FOUR_HOUR),
    ("discharge letter 24-hour completion rate definition", DISCHARGE),
])
def test_the_names_own_number(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason)


def test_number_swapped():
    names = {"ed 4 hour compliance rate", "four hour compliance"}
    assert number_swapped("ed 12-hour compliance rate", ["hour", "compliance", "rate"], names)
    assert not number_swapped("ed 4-hour compliance rate", ["hour", "compliance", "rate"], names)
    assert not number_swapped("admitted after 5 hours in the ed", ["ed"], names)
