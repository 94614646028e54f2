"""A verb that attributes a claim ends the object phrase before it. "The circulation slack
thread says loan renewal includes auto-renewals. Right?" abstained `no_matching_object`: the
object phrase ran "circulation slack thread says loan renewal", so the loan renewal rate,
named there without its head noun, covered only part of it. "Does loan renewal include
auto-renewals?" was answered. It happened where a name the definition states ends in a word of
the shortened name ("also called item renewal": "renewal" heads a name). "says", "told", "claimed", "mentioned" … are no words of a
measure's name (canon/ask/understanding/coverage.py BOUNDARY); the nouns "claims", "states",
"reads" are, and stay in it ("meter reads", "claims paid ratio"). A source named with a
relative clause ("a slack thread that said …") was no named source: the claim was answered
without it (canon/ask/understanding/named_sources.py).

A public library domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import coverage

RENEWAL, ACTIVE, SLACK = "metric.loan_renewal_rate.v1", "metric.active_borrower_rate.v1", "note.library.slack"
DOCS = [
    governed_doc(RENEWAL, "metric.library.loan_renewal_rate", "Loan renewal rate governed definition v1",
                 "Governed metric loan renewal rate version 1. Loan renewal rate, also called item renewal, is the share of loans renewed at least once before "
                 "their due date, over all loans issued in the month. Automatic renewals are excluded."),
    governed_doc(ACTIVE, "metric.library.active_borrower_rate", "Active borrower rate governed definition v1",
                 "Governed metric active borrower rate version 1. The share of card holders with at least one "
                 "loan in the last twelve months, over all card holders on the last day of the month."),
    {**governed_doc(SLACK, "note.untrusted.library_circulation_slack", "Circulation team slack thread",
                    "Pasted from the circulation slack channel: loan renewal counts the automatic renewals too.",
                    kind="untrusted_note", status="untrusted", authority=0), "valid_to": None},
]

ctx = module_context("library", DOCS)


@pytest.mark.parametrize("question", [
    "The circulation slack thread says loan renewal includes automatic renewals. Right?",
    "Someone on slack told me loan renewal counts automatic renewals. Is that so?",
    "the circulation slack thread claimed loan renewal counts automatic renewals - true?",
    # A relative clause attributes the claim as the verb alone does.
    "Someone pasted a slack thread that said loan renewal counts automatic renewals. True?",
    "There is a circulation slack thread which says the loan renewal rate counts automatic renewals. Right?",
])
def test_a_name_after_an_attribution_verb_is_the_object(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer_conflict", (question, resp.action, resp.reason)
    assert [(e.doc_id, e.use) for e in resp.evidence] == [(RENEWAL, "primary"), (SLACK, "conflict")]


def test_the_object_phrase_stops_at_the_verb():
    names = {"loan renewal rate", "item renewal"}
    cov = coverage("The circulation slack thread says loan renewal includes automatic renewals", names)
    assert cov.phrase == ["loan", "renewal"] and cov.covered
    # A noun spelled like a verb stays in the phrase: "claims" of an insurance measure.
    assert coverage("How is the claims paid ratio defined?", {"claims paid ratio"}).covered
