"""A proposal named by the shorter name its own title gives the metric ("the deferral rate v2
proposal" of the donor deferral rate), in a domain no gold set uses: a blood service.

"What does the no-show rate v3 proposal say?" (transit / veterinary probe) was asked back for a
date: the metric is the appointment no-show rate, and only its proposal's title ("No-show rate
v3 proposal") calls it the no-show rate, so no object was named and the proposal was not found
as what the question asks about. A draft revision's title names its object too, where no other
object answers to that name (canon/ask/understanding/match.py, `object_catalog`). "Summarize the
no-show rate v3 proposal" (no verb of saying) was still asked back for a date: a verb asking what
a document says, opening the question, makes the document its subject as "what does … say?"
does (canon/ask/understanding/named_sources.py, `_ASKING_TO_DESCRIBE`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

V1 = "blood.donor_lapse_rate.v1"
PROPOSAL = "blood.donor_lapse_rate.v2_proposal"

DOCS = [
    governed_doc(V1, "metric.blood.donor_lapse_rate", "Donor lapse rate governed definition v1",
                 "Governed metric donor lapse rate version 1. Registered donors who gave no donation in 24 "
                 "months divided by registered donors."),
    {**governed_doc(PROPOSAL, "metric.blood.donor_lapse_rate", "Donor drop-out rate v2 proposal",
                    "DRAFT proposal, not approved. The drop-out rate would count donors who gave no donation in "
                    "12 months.", status="draft", authority=20,
                    version="2", valid_from="2026-09-01", valid_to=None),
     "supersedes": V1},
    governed_doc("blood.units_collected.v1", "metric.blood.units_collected", "Units collected governed definition v1",
                 "Governed metric units collected version 1. Whole blood units labelled at collection sites."),
]

ctx = module_context("blood_service", DOCS)


@pytest.mark.parametrize("question", [
    "What does the donor drop-out rate v2 proposal say?",
    "What does the drop-out rate proposal say?",
    "Summarize the donor drop-out rate v2 proposal",
    "Can you outline the drop-out rate proposal?",
])
def test_the_proposal_is_what_is_asked_about(ctx, question):
    r = ask(ctx, question, "analyst")
    assert (r.action, r.reason) == ("abstain", "not_authoritative"), (question, r.action, r.reason)


def test_a_claim_of_the_proposal_is_weighed_against_the_metric(ctx):
    r = ask(ctx, "The donor drop-out rate v2 proposal counts donors idle for 12 months. Is that the rule for 2026-06-01?",
            "analyst")
    uses = [(e.doc_id, e.use) for e in r.evidence]
    assert r.action == "answer_conflict" and uses[0] == (V1, "primary") and (PROPOSAL, "conflict") in uses, (
        r.action, r.reason, uses)


def test_the_metric_by_its_own_name(ctx):
    r = ask(ctx, "How is the donor lapse rate defined?", "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == V1, (r.action, r.reason)
