"""A source whose claim is reported, not said in the source's own sentence, was missed: "My
predecessor said the old wiki counts …", "someone told me the help page puts …" and "I was
pointed to the old wiki, which counts …" were answered plainly, without the source the user
named (airline / HR probe). A document phrase that opens a clause reported after a verb of
saying or perceiving, followed by a verb, states a claim, as one that opens a sentence does;
so does a clause set off by ", which <verb>" (canon/ask/understanding/named_sources.py,
`_opens_clause`). Without the comma ("the runbook that covers X") a relative clause only says
which document, and is no claim.

A ski-resort domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.named_sources import extract_named_sources

UPTIME, WIKI, HELP = "metric.lift_uptime.v1", "wiki.resort.lift_ops_old", "wiki.resort.lift_help_page"
DOCS = [
    governed_doc(UPTIME, "metric.resort.lift_uptime", "Lift uptime governed definition v1",
                 "Governed metric lift uptime version 1. Lift uptime is the share of scheduled operating minutes "
                 "in which a chairlift carries guests. Wind holds ordered by ski patrol count as downtime; "
                 "scheduled maintenance windows are excluded from the scheduled minutes."),
    governed_doc(WIKI, "wiki.resort.lift_operations_wiki", "Lift operations wiki (old)",
                 "Old lift operations page. Wind holds are excluded from lift uptime.", kind="wiki",
                 status="superseded", authority=20),
    {**governed_doc(HELP, "wiki.resort.lift_status_help_page", "Lift status help page",
                    "Guest help page. Lift uptime counts only the minutes a lift runs at full speed.", kind="wiki",
                    status="untrusted", authority=0), "valid_to": None},
]

ctx = module_context("ski_resort", DOCS)


@pytest.mark.parametrize("question, source", [
    ("My predecessor said the old lift operations wiki excludes wind holds from lift uptime; still true?", WIKI),
    ("I was pointed to the old lift operations wiki, which excludes wind holds from lift uptime. Can I keep doing "
     "that?", WIKI),
    ("Someone told me the lift status help page counts only full-speed minutes in lift uptime. Is that right?", HELP),
])
def test_a_source_in_a_reported_clause_is_a_named_source(ctx, question, source):
    assert extract_named_sources(question), question
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer_conflict", (question, resp.action, resp.reason, [e.doc_id for e in resp.evidence])
    assert [(e.doc_id, e.use) for e in resp.evidence] == [(UPTIME, "primary"), (source, "conflict")]


@pytest.mark.parametrize("question", [
    "Which metric does the wiki that covers lift holds describe?",
    "Is the old lift operations wiki still maintained?",
])
def test_a_document_named_without_a_claim_is_no_source(question):
    assert extract_named_sources(question) == [], question
