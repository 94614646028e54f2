"""A phrase whose words come from two names of one object, or from its domain and one name
word, names nothing: "How do we measure the average incurred loss on claims closed with
payment?" was answered from the claim cycle time (probe), whose name holds "claims" and whose
stated name "days to close" holds "closed", and, once that was fixed, from a claims runbook on
the month-end close ("claims" is the domain, "closed" one word of its name). Neither object is
named: the question describes another metric (`_names_in_discovery`,
canon/ask/understanding/coverage.py `words_in_one_name`). It answers from what it describes or
abstains; never from the object whose words it scattered.

A building permits domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import words_in_one_name

CYCLE, FEE, RUNBOOK = "metric.permit_cycle_time.v1", "metric.permit_fee.v1", "runbook.permits.issue_review"
DOCS = [
    governed_doc(CYCLE, "metric.permits.permit_cycle_time", "Permit cycle time governed definition v1",
                 "Governed metric permit cycle time version 1. Permit cycle time, also called days to issue, is the "
                 "median number of calendar days from a complete application to the permit being issued."),
    governed_doc(FEE, "metric.permits.inspection_fee_yield", "Inspection fee yield governed definition v1",
                 "Governed metric inspection fee yield version 1. The mean fee collected per permit issued with an "
                 "inspection, over permits issued in the month."),
    governed_doc(RUNBOOK, "runbook.permits.issue_review", "Permit month-end issue review runbook",
                 "Approved runbook. At month end review every issue raised on an open application.",
                 kind="runbook", authority=80),
]

ctx = module_context("permits", DOCS)


@pytest.mark.parametrize("question", [
    "How do we measure the average collected fee on permits issued with an inspection?",
    "What is the mean fee on permits issued after an inspection?",
    "How do we measure the average refund paid on permits issued in error?",
    "How do we count appeals lodged against permits issued to a contractor?",
])
def test_scattered_name_words_are_no_name(ctx, question):
    resp = ask(ctx, question, "analyst")
    primary = resp.evidence[0].doc_id if resp.evidence else None
    assert primary not in (CYCLE, RUNBOOK), (question, resp.action, primary)
    assert (resp.action, primary) in (("answer", FEE), ("abstain", None)), (question, resp.action, primary)


@pytest.mark.parametrize("question, doc_id", [
    ("How is permit cycle time defined?", CYCLE),
    ("days to issue definition", CYCLE),
    ("What does the permit month-end issue review runbook say?", RUNBOOK),
])
def test_a_name_still_names_it(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)


def test_one_name_must_hold_the_words():
    names = {"permit cycle time", "days to issue"}
    assert words_in_one_name(["first", "time"], {"first response time"})   # a gap in one name is judged elsewhere
    assert words_in_one_name(["permit", "cycle"], names)
    assert not words_in_one_name(["permits", "issued"], names)
