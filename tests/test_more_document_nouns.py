"""A source named by a noun for a reader's document that was no document noun: "The old glossary
says dwell time includes the café. Right?" and "according to the dwell time primer, …" were
answered plainly, without the source the user named (probe: "the loss ratio primer", "the old
T&S glossary"). "glossary", "primer", "explainer", "handout", "notebook", "brief" … are document
nouns now (canon/ask/understanding/named_sources.py DOC_NOUNS), and the noun itself in a
document's title ("the old <glossary>" of "Visitor metrics glossary") names that document of the
question's domain as its describing words would (canon/ask/pipeline.py `_named_conflicts`).

A museum domain no gold set uses, through the real pipeline: the contract gate, a LanceDB index
(HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.named_sources import extract_named_sources

DWELL, GLOSSARY, PRIMER = "metric.dwell_time.v1", "wiki.museum.visitor_glossary", "wiki.museum.dwell_primer"
DOCS = [
    governed_doc(DWELL, "metric.museum.gallery_dwell_time", "Gallery dwell time governed definition v1",
                 "Governed metric gallery dwell time version 1. The median minutes a ticketed visitor spends inside "
                 "the galleries, from the first gallery gate to the exit gate. Time in the café and the shop is "
                 "excluded."),
    {**governed_doc(GLOSSARY, "wiki.museum.visitor_metrics_glossary", "Visitor metrics glossary (old)",
                    "Old glossary page. Dwell time includes the café.", kind="wiki", status="superseded",
                    authority=20)},
    {**governed_doc(PRIMER, "wiki.museum.dwell_time_primer", "Gallery dwell time primer",
                    "Primer for new staff. Dwell time counts from the entrance hall.", kind="wiki",
                    status="untrusted", authority=0), "valid_to": None},
]

# An approved runbook that says what the definition says.
RUNBOOK = "runbook.museum.gallery_counting"
DOCS.append(governed_doc(RUNBOOK, RUNBOOK, "Gallery counting runbook",
                         "Approved runbook. Start each visitor's dwell clock at the first gallery gate.",
                         kind="runbook", authority=80))

ctx = module_context("museum", DOCS)


@pytest.mark.parametrize("question, source", [
    ("The old glossary says gallery dwell time includes the café. Right for 2026-05-01?", GLOSSARY),
    ("The old visitor metrics glossary says dwell time includes the café - true?", GLOSSARY),
    ("According to the dwell time primer, gallery dwell time counts from the entrance hall. Is that so?", PRIMER),
])
def test_a_glossary_or_a_primer_is_a_named_source(ctx, question, source):
    assert extract_named_sources(question), question
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer_conflict", (question, resp.action, resp.reason)
    assert [(e.doc_id, e.use) for e in resp.evidence] == [(DWELL, "primary"), (source, "conflict")]


def test_a_conflict_answer_passes_no_verdict_on_the_claim(ctx):
    """The answer names which text governs; it does not open with "No —" when the source says
    what the definition says (canon/ask/compose.py `conflict_answer`)."""
    resp = ask(ctx, "The gallery counting runbook says dwell time starts at the first gallery gate. Right?",
               "analyst")
    assert resp.action == "answer_conflict", (resp.action, resp.reason)
    assert [(e.doc_id, e.use) for e in resp.evidence] == [(DWELL, "primary"), (RUNBOOK, "conflict")]
    assert not resp.answer.startswith("No"), resp.answer
    assert resp.answer.startswith(f"Gallery counting runbook ({RUNBOOK}, approved, runbook) is not the governing"), (
        resp.answer)
