"""A definition's title that says what it is before its name ("Metric definition: Hygiene
recall rate, version 1", "KPI – Chair utilisation"), in a domain no gold set uses: a dental
practice.

On the waste / pharmacy probe every pharmacy metric titled "Metric definition: <Name>, version N"
abstained no_matching_object (51 cases, denials among them): a title's noise was read from its
first noise word to its end, and "Metric definition" opens it, so nothing was left of the name,
and the ids were short ("rx_fill_rate"). A kind word and a colon, a bar or a spaced dash before
the name are set aside first (canon/ask/understanding/match.py, `title_body`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.match import title_body

R1, R2 = "metric.dental.recall.r1", "metric.dental.recall.r2"
CHAIR = "metric.dental.chair.r1"

DOCS = [
    governed_doc(R1, "metric.dental.recall", "Metric definition: Hygiene recall rate, version 1",
                 "Patients seen by a hygienist who booked their next recall within 6 months, over patients seen.",
                 valid_to="2026-03-01"),
    governed_doc(R2, "metric.dental.recall", "Metric definition: Hygiene recall rate, version 2",
                 "Patients seen by a hygienist who booked their next recall before leaving, over patients seen.",
                 version="2", valid_from="2026-03-01", supersedes=R1),
    governed_doc(CHAIR, "metric.dental.chair", "KPI – Chair utilisation, version 1",
                 "Minutes a surgery chair is booked over the minutes the surgery is open."),
]

ctx = module_context("dental", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("hygiene recall rate definition for 2026-02-28", R1),
    ("How was the hygiene recall rate defined on 1 March 2026?", R2),
    ("how is chair utilisation defined?", CHAIR),
])
def test_the_name_after_the_prefix_names_the_object(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason)


def test_undated_a_changed_definition_is_asked_back(ctx):
    r = ask(ctx, "How is the hygiene recall rate defined?", "analyst")
    assert r.action == "clarify" and {o["evidence_id"] for o in r.options} == {R1, R2}, (r.action, r.reason)


def test_only_a_kind_word_with_a_separator_is_a_prefix():
    assert title_body("Metric definition: Hygiene recall rate, version 1") == "Hygiene recall rate, version 1"
    assert title_body("KPI – Chair utilisation") == "Chair utilisation"
    assert title_body("Metric | Chair utilisation") == "Chair utilisation"
    # A word of the name, or a hyphen inside one, is no prefix.
    assert title_body("Metric-driven referrals governed definition v1") == "Metric-driven referrals governed definition v1"
    assert title_body("Hygiene recall rate governed definition v1") == "Hygiene recall rate governed definition v1"
