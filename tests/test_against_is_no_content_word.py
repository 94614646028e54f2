"""A short description question with a preposition ("Did changeovers count <against>
availability in January 2026?") abstained `no_matching_object`: "against" was read as one of its
content words, which no definition uses, and a description of three words or fewer must use all
of them (canon/ask/understanding/coverage.py `describes`). It is a grammar word of coverage now,
as "toward" and "within" are.

A tennis club domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import description_support

COURTS = "metric.court_utilisation.v1"
DOCS = [
    governed_doc(COURTS, "metric.club.court_utilisation_rate", "Court utilisation rate governed definition v1",
                 "Governed metric court utilisation rate version 1. The share of bookable court hours that members "
                 "booked in the week. Hours blocked for maintenance do not count against utilisation; coaching "
                 "sessions count as booked."),
    governed_doc("metric.member_churn.v1", "metric.club.member_churn_rate", "Member churn rate governed definition v1",
                 "Governed metric member churn rate version 1. The share of members at the start of the month whose "
                 "membership lapsed by its end. Paused memberships are not churn."),
]

ctx = module_context("club", DOCS)


@pytest.mark.parametrize("question", [
    "Does maintenance count against utilisation?",
    "Did coaching sessions count against utilisation?",
])
def test_a_short_description_with_against_finds_its_metric(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == COURTS, (question, resp.action, resp.reason)


def test_against_is_no_content_word():
    text = "hours blocked for maintenance do not count against utilisation"
    assert description_support("Does maintenance count against utilisation?", text) == (2, 2)
