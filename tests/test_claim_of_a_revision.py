"""A claim attributed to a draft or proposed revision of a governed object, with the object named
only inside the claim ("The v2 proposal says duty time starts at hotel pickup. Is that the rule
for March 2026?"), abstained no_matching_object: retrieval over the whole question found no
governed name. The proposal is a revision of one object: that object is what the question asks
about, its governing revision the answer and the proposal the conflict beside it. When the
words name several objects' proposals ("the v2 proposal"), the object the question's words also
name decides (canon/ask/pipeline.py `_object_of_claim_source`).

An airline-crew domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask


def revision(doc_id: str, object_id: str, title: str, status: str, supersedes: str | None, text: str) -> dict:
    doc = governed_doc(doc_id, object_id, title, text, status=status, authority=100 if status == "approved" else 60)
    doc.update(version=doc_id.rsplit(".", 1)[1].lstrip("v").split("_")[0], supersedes=supersedes)
    if status != "approved":
        doc.update(valid_from="2026-01-01", valid_to=None)
    return doc


DUTY, DUTY_V2, FUEL, FUEL_V2 = ("metric.crew_duty_time.v1", "metric.crew_duty_time.v2_proposal",
                                "metric.fuel_burn_rate.v1", "metric.fuel_burn_rate.v2_proposal")
DOCS = [
    revision(DUTY, "metric.crew.crew_duty_time", "Crew duty time governed definition v1", "approved", None,
             "Governed metric crew duty time version 1. Minutes from report time at the crew room to release "
             "after the last sector's engine shutdown plus 30 minutes."),
    revision(DUTY_V2, "metric.crew.crew_duty_time", "Crew duty time v2 proposal", "draft", DUTY,
             "Proposal: crew duty time would start at hotel pickup rather than at report time."),
    revision(FUEL, "metric.crew.fuel_burn_rate", "Fuel burn rate governed definition v1", "approved", None,
             "Governed metric fuel burn rate version 1. Kilograms of fuel burned per block hour."),
    revision(FUEL_V2, "metric.crew.fuel_burn_rate", "Fuel burn rate v2 proposal", "draft", FUEL,
             "Proposal: fuel burn rate would count taxi fuel separately."),
]

ctx = module_context("airline_crew", DOCS)


@pytest.mark.parametrize("question, primary, conflict", [
    ("The v2 proposal says duty time starts at hotel pickup. Is that the rule for March 2026?", DUTY, DUTY_V2),
    ("The v2 proposal says fuel burn counts taxi fuel separately. Is that the rule for 2026-03-31?", FUEL, FUEL_V2),
])
def test_a_claim_of_a_proposed_revision_is_answered_beside_the_governing_one(ctx, question, primary, conflict):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer_conflict", (question, resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence][:2] == [primary, conflict]


def test_a_proposal_of_no_object_the_question_names_decides_nothing(ctx):
    resp = ask(ctx, "The v2 proposal says a 90-minute buffer applies. Is that the rule for March 2026?", "analyst")
    assert resp.action == "abstain" and resp.evidence == [], (resp.action, resp.reason)


@pytest.mark.parametrize("question", [
    "What does the crew duty time v2 proposal say?",
    "What does the fuel burn rate v2 proposal say about taxi fuel?",
])
def test_a_proposed_revision_asked_about_is_not_authoritative(ctx, question):
    """The question's subject is the proposal itself: a revision that does not govern is no
    authority, as any document that is not (canon/ask/pipeline.py `_subject_revision_statuses`);
    it had been asked back for a date as if the governed metric were asked about."""
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "not_authoritative", (question, resp.action, resp.reason)
    assert "draft" in resp.answer
