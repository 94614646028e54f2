"""Contractions are read as the words they stand for: "what's jab rate?" was read as
"what s jab rate", and the stray "s" became a word of the object phrase no name holds: an
abstention where "what is jab rate?" is answered. (canon/ask/understanding/contractions.py, applied by
`compounds.as_read` before the question is read.)

A veterinary domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.contractions import expand_contractions

DOCS = [
    governed_doc("metric.vaccination_compliance_rate.v1", "metric.clinic.vaccination_compliance_rate",
                 "Vaccination compliance rate governed definition v1",
                 "Governed metric vaccination compliance rate version 1. The vaccination compliance rate, also called "
                 "the jab rate, is the share of registered pets whose core vaccinations are in date on the last day of "
                 "the month, over all registered pets; boosters given late still count once given."),
    governed_doc("metric.average_consult_length.v1", "metric.clinic.average_consult_length",
                 "Average consult length governed definition v1",
                 "Governed metric average consult length version 1. Average consult length is the total minutes of "
                 "booked consultations divided by the number of consultations held in the month."),
]

ctx = module_context("clinic", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    # the stray "s" right before the name was a word of its phrase
    ("what's jab rate?", "metric.vaccination_compliance_rate.v1"),
    ("What\u2019s vaccination compliance?", "metric.vaccination_compliance_rate.v1"),
    ("what's consult length?", "metric.average_consult_length.v1"),
    ("how's jab rate defined?", "metric.vaccination_compliance_rate.v1"),
    # read alike before and after
    ("Doesn't the vaccination compliance rate count boosters?", "metric.vaccination_compliance_rate.v1"),
    ("What is the clinic's vaccination compliance rate?", "metric.vaccination_compliance_rate.v1"),
])
def test_a_contraction_is_read_as_its_words(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert resp.evidence[0].doc_id == doc_id
    assert resp.question == question   # the response states the question as it was asked


@pytest.mark.parametrize("text, read", [
    ("what's unit delivery cost?", "what is unit delivery cost?"),
    ("What\u2019s retention?", "What is retention?"),
    ("doesn't it include VAT", "does not it include VAT"),
    ("won't it change? can't it?", "will not it change? can not it?"),
    ("the team's churn rate", "the team's churn rate"),   # a possessive is left as written
    ("We're rebuilding; I'd like it; I'm asking; they've said; it'll do", 
     "We are rebuilding; I would like it; I am asking; they have said; it will do"),
    ("let's see", "let us see"),
    ("net revenue for May '26", "net revenue for May '26"),
])
def test_expand_contractions(text, read):
    assert expand_contractions(text) == read
