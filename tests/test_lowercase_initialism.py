"""An initialism written in lower case ("srr definition") abstained: only
words in capitals could be initialisms, so that an English word spelling one ("car") is never
read as a name. A short lower-case word that is no English word (the bundled model's
vocabulary) may be an initialism too (canon/ask/understanding/match.py `initialism_words`);
an English word still is none, in matching and in coverage ("is the car rate defined?" had been
answered from the chronic absence rate, whose initials are "car": canon/ask/understanding/
coverage.py `coverage`).

A hospital-laboratory domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.match import initialism_words

SRR, TAT, CAR = "metric.specimen_rejection_rate.v1", "metric.turnaround_time.v1", "metric.chronic_absence_rate.v1"
DOCS = [
    governed_doc(SRR, "metric.lab.specimen_rejection_rate", "Specimen rejection rate governed definition v1",
                 "Governed metric specimen rejection rate version 1. Specimens rejected on receipt (haemolysed, "
                 "mislabelled, insufficient) over all specimens received."),
    governed_doc(TAT, "metric.lab.turnaround_time", "Turnaround time governed definition v1",
                 "Governed metric turnaround time version 1. Median minutes from specimen receipt to result "
                 "verification, for routine tests."),
    governed_doc(CAR, "metric.staff.chronic_absence_rate", "Chronic absence rate governed definition v1",
                 "Governed metric chronic absence rate version 1. Staff absent 10% or more of scheduled shifts in "
                 "a quarter, over all staff."),
]

ctx = module_context("laboratory", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("srr definition", SRR),
    ("how is the srr defined for 2026-01-01?", SRR),
    ("What does the srr count?", SRR),
    ("How is CAR defined?", CAR),           # in capitals, an English word is an initialism still
])
def test_a_lower_case_initialism_names_its_object(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)


@pytest.mark.parametrize("question", ["is the car rate defined?", "How is the car count defined?"])
def test_an_english_word_spelling_an_initialism_names_nothing(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action != "answer", (question, [e.doc_id for e in resp.evidence])


def test_which_words_may_be_initialisms():
    assert initialism_words("srr definition") == {"srr"}
    assert initialism_words("the car rate") == frozenset()
    assert initialism_words("the CAR rate") == {"car"}
