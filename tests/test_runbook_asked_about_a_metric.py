""""What does the <runbook> say about <metric>?", in a domain no gold set uses: a city parks
department.

The approved runbook the question names by its kind and words of its title is what it
asks about; the metric it names is only the topic. Before, the metric's whole name won: the
runbook became "conflict" evidence beside the metric's definition, or the question was asked
back for a date because the metric's definition changed. "According to the runbook, what …?"
asks what the runbook says too; "according to the runbook, <a claim>. Right?" weighs the claim
against the metric (canon/ask/pipeline.py, `_subject_document`; `NamedSource.asked`)."""

from __future__ import annotations

import functools

import pytest
from corpus_context import governed_doc, metric_revision, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.named_sources import extract_named_sources

revision = functools.partial(metric_revision, "parks.playground_defect_rate", "metric.parks.playground_defect_rate",
                             "playground defect rate")

RUNBOOK = "runbook.parks.playground_inspection"

DOCS = [
    revision("1", "2025-01-01", "2026-05-01", "Share of inspected play items with a defect of any severity."),
    revision("2", "2026-05-01", None, "Share of inspected play items with a defect of severity 2 or 3."),
    governed_doc("parks.canopy_cover.v1", "metric.parks.canopy_cover", "Canopy cover governed definition v1",
                 "Governed metric canopy cover version 1. Share of park area under tree crowns in summer imagery."),
    governed_doc(RUNBOOK, RUNBOOK, "Playground inspection and closure runbook",
                 "When the playground defect rate of a park exceeds 10 percent, close the affected play items and "
                 "book a repair within two working days.", kind="runbook"),
    governed_doc("runbook.parks.irrigation", "runbook.parks.irrigation", "Irrigation fault runbook",
                 "When a zone's flow exceeds plan by 20 percent, shut the zone valve and raise a ticket.",
                 kind="runbook"),
]

ctx = module_context("parks", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("What does the playground inspection runbook say about the playground defect rate?", RUNBOOK),
    ("What does the closure runbook say about the playground defect rate?", RUNBOOK),
    ("What does the playground inspection runbook say?", RUNBOOK),
    ("What does the irrigation fault playbook say about canopy cover?", "runbook.parks.irrigation"),
    # "according to" the runbook, then the user's own question: what the runbook says is asked
    ("According to the playground inspection runbook, what happens when the playground defect rate is above "
     "10 percent?", RUNBOOK),
    ("According to the closure runbook, above what playground defect rate do we close play items?", RUNBOOK),
])
def test_the_named_runbook_is_the_answer(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer", (question, r.action, r.reason)
    assert [(e.doc_id, e.use) for e in r.evidence][0] == (doc_id, "primary")


@pytest.mark.parametrize("question", [
    # a runbook named by a word no runbook's title has is no subject: the metric is asked about
    "What does the maintenance runbook say about the playground defect rate on 2026-06-01?",
    # "the runbook" with no describing word names no one runbook
    "What does the runbook say about the playground defect rate on 2026-06-01?",
])
def test_a_runbook_no_title_fits_leaves_the_metric(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.evidence and r.evidence[0].doc_id == "parks.playground_defect_rate.v2", (
        question, r.action, r.reason, [e.doc_id for e in r.evidence])


def test_a_claim_according_to_the_runbook_is_weighed_against_the_metric(ctx):
    r = ask(ctx, "According to the playground inspection runbook, the playground defect rate counts every "
                 "defect. Is that right for 2026-06-01?", "analyst")
    assert r.evidence and r.evidence[0].doc_id == "parks.playground_defect_rate.v2", (r.action, r.evidence)


def test_the_metric_alone_is_still_its_definition(ctx):
    r = ask(ctx, "How is the playground defect rate defined on 2026-06-01?", "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == "parks.playground_defect_rate.v2"


def test_asked_according_to_is_the_sources_own_reading():
    (asked,) = extract_named_sources("According to the closure runbook, above what rate do we close play items?")
    assert asked.asked and not asked.subject
    (claim,) = extract_named_sources("According to the closure runbook, every defect counts. Is that right?")
    assert not claim.asked
