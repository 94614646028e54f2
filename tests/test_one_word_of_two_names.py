"""One word that two governed names share, and nothing else, names neither. "How is the booking
metric defined?" (a hotel probe, beside booking window and booking pace) was answered with
booking window, retrieval's first hit: one content word that is part of its name counted as a
description of it. "How is the outage metric defined?" was the same on the grid. The question is
asked back with the objects whose names hold the word (canon/ask/pipeline.py
`_sharing_its_one_word`); a measure or aggregate word beside it ("the claim <count>",
"<total> goodwill") asks for a measure of its own and is judged as before. "KPI" is a word
saying what is asked, like "metric" (canon/ask/understanding/coverage.py BOUNDARY).

A municipal waste collection domain no gold set uses, through the real pipeline."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

COMPLETION = "metric.collection_completion_rate.v1"
EFFICIENCY = "metric.collection_route_efficiency.v1"
CONTAMINATION = "metric.recycling_contamination_rate.v1"
BOTH = {"metric.waste.collection_completion_rate", "metric.waste.collection_route_efficiency"}

DOCS = [
    governed_doc(COMPLETION, "metric.waste.collection_completion_rate", "Collection completion rate governed definition v1",
                 "Governed metric. The collection completion rate is the share of scheduled bin lifts completed on "
                 "the scheduled day, over all scheduled bin lifts in the week."),
    governed_doc(EFFICIENCY, "metric.waste.collection_route_efficiency",
                 "Collection route efficiency governed definition v1",
                 "Governed metric. Collection route efficiency is the number of bin lifts per route hour, over "
                 "all completed routes in the week."),
    governed_doc(CONTAMINATION, "metric.waste.recycling_contamination_rate",
                 "Recycling contamination rate governed definition v1",
                 "Governed metric. The recycling contamination rate is the share of inspected recycling bins "
                 "holding non-recyclable material, over all inspected recycling bins in the month."),
]

ctx = module_context("waste", DOCS)


def primary(resp) -> str:
    return resp.evidence[0].doc_id if resp.evidence else ""


@pytest.mark.parametrize("question", [
    "How is the collection metric defined?",
    "What's the collection KPI definition?",
    "define the collection KPI",
    "collection definition for 2026-05-01",
])
def test_a_word_two_names_share_is_asked_back(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "clarify" and resp.reason == "ambiguous_object", (question, resp.action, resp.reason,
                                                                           primary(resp))
    assert {o["object_id"] for o in resp.options} == BOTH, resp.options


@pytest.mark.parametrize("question, action, doc_id", [
    ("How is the collection completion rate defined?", "answer", COMPLETION),
    ("How is collection route efficiency defined?", "answer", EFFICIENCY),
    ("How is the recycling metric defined?", "answer", CONTAMINATION),       # one name holds the word
])
def test_a_whole_name_or_a_word_of_one_name_is_not_asked_back(ctx, question, action, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == action and primary(resp) == doc_id, (question, resp.action, resp.reason, primary(resp))
