"""A measure noun written in another word of the same measure names the same metric: "the
crop loss ratio" and "the crop loss percentage" for the crop loss rate, "irrigation spend per
hectare" and "irrigation expense per hectare" for the irrigation cost per hectare. They abstained
no_matching_object: coverage compared name words by spelling only. Rate, ratio, percentage,
proportion and share are one measure; cost, spend, expense and outlay another
(canon/ask/understanding/match.py `MEASURE_SYNONYMS`). A different measure ("the crop loss
count") and a name no object has ("the crop yield ratio") still abstain.

An agriculture domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

LOSS, COST = "metric.crop_loss_rate.v1", "metric.irrigation_cost_per_hectare.v1"

DOCS = [
    governed_doc(LOSS, "metric.farm.crop_loss_rate", "Crop loss rate governed definition v1",
                 "Governed metric crop loss rate version 1. The crop loss rate is the share of planted hectares "
                 "whose harvest is written off in the season, over all planted hectares."),
    governed_doc(COST, "metric.farm.irrigation_cost_per_hectare", "Irrigation cost per hectare governed definition v1",
                 "Governed metric irrigation cost per hectare version 1. Irrigation cost per hectare is the water and "
                 "pumping energy bill of the season divided by the irrigated hectares."),
]

ctx = module_context("farm", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("How is the crop loss ratio defined?", LOSS),
    ("What is the crop loss percentage?", LOSS),
    ("crop loss proportion definition", LOSS),
    ("How is irrigation spend per hectare defined?", COST),
    ("What's the irrigation expense per hectare?", COST),
])
def test_another_word_of_the_same_measure_names_the_metric(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert resp.evidence[0].doc_id == doc_id


@pytest.mark.parametrize("question", [
    "What is the crop loss count?",
    "How is the crop yield ratio defined?",
    "What is the irrigation revenue per hectare?",
])
def test_another_measure_still_abstains(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain", (question, resp.action, resp.reason)
