"""A draft named by its status alone ("like the draft does", "as the proposal suggests"), in a
domain no gold set uses: a wine estate.

"The draft" is a revision of the object the question asks about: another metric's "(draft)" is
not it, even when both names end in "rate", and an object without a draft has no draft to weigh
against (canon/ask/pipeline.py, `_named_conflicts`, `_related`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

BARREL_LOSS = "metric.winery.barrel_loss_rate"

DOCS = [
    governed_doc("winery.barrel_loss_rate.v1", BARREL_LOSS, "Barrel loss rate governed definition v1",
                 "Governed metric barrel loss rate version 1. Litres lost to evaporation and leaks during barrel "
                 "ageing, divided by litres filled; topping-up wine is not counted as a loss.",
                 valid_from="2025-01-01", valid_to="2026-07-01"),
    governed_doc("winery.barrel_loss_rate.v2", BARREL_LOSS, "Barrel loss rate governed definition v2",
                 "Governed metric barrel loss rate version 2. Litres lost to evaporation, leaks and sampling "
                 "during barrel ageing, divided by litres filled; topping-up wine is not counted as a loss.",
                 version="2", valid_from="2026-07-01", supersedes="winery.barrel_loss_rate.v1"),
    governed_doc("winery.barrel_loss_rate.v3_proposal", BARREL_LOSS, "Barrel loss rate v3 proposal",
                 "DRAFT proposal, not approved. Barrel loss rate version 3 would count topping-up wine as a loss "
                 "and would divide by litres bottled instead of litres filled.",
                 status="draft", version="3", valid_from="2027-01-01", valid_to=None,
                 supersedes="winery.barrel_loss_rate.v2"),
    governed_doc("winery.cellar_door_conversion_rate.v1", "metric.winery.cellar_door_conversion_rate",
                 "Cellar door conversion rate (draft)",
                 "DRAFT, not approved. The share of tasting-room visitors who buy at least one bottle the same day.",
                 status="draft", valid_to=None),
    governed_doc("winery.bottling_line_efficiency.v1", "metric.winery.bottling_line_efficiency",
                 "Bottling line efficiency governed definition v1",
                 "Governed metric bottling line efficiency version 1. Bottles filled and labelled divided by the "
                 "line's rated capacity over scheduled hours; sparkling wine runs count."),
]

ctx = module_context("winery", DOCS)


@pytest.mark.parametrize("question", [
    "Should topping-up wine count as a loss in the barrel loss rate for 2026-10-01, like the draft does?",
    "Do we count topping-up wine in the barrel loss rate for October 2026, as the draft suggests?",
    "The draft says topping-up wine is a loss. Is that the barrel loss rate rule for 2026-10-01?",
    "Should topping-up wine count in the barrel loss rate for 2026-10-01, like the proposal does?",
])
def test_the_draft_is_the_objects_own(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer_conflict", (question, r.action, r.reason)
    uses = [(e.doc_id, e.use) for e in r.evidence]
    assert uses[0] == ("winery.barrel_loss_rate.v2", "primary")
    assert ("winery.barrel_loss_rate.v3_proposal", "conflict") in uses
    assert all(e.doc_id != "winery.cellar_door_conversion_rate.v1" for e in r.evidence), uses


@pytest.mark.parametrize("question", [
    "Should sparkling wine be left out of bottling line efficiency for 2026-10-01, like the draft does?",
    "Is bottling line efficiency measured over scheduled hours for 2026-10-01, as the draft says?",
])
def test_no_other_objects_draft_for_an_object_without_one(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == "winery.bottling_line_efficiency.v1", (
        question, r.action, r.reason)
    assert all(e.doc_id != "winery.cellar_door_conversion_rate.v1" for e in r.evidence), r.evidence
