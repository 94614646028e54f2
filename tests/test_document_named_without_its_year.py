"""A dated document is named without its year as readily as with it: "what does the winter
staffing plan say about overtime?" of "Winter staffing plan 2027", "the road repair backlog
targets" of "Road repair backlog 2027 targets". Only the dated names were the document's, so a
role that may not see it got no_matching_object instead of a denial, and a role that may got no
answer. A title or id segment less its year is a name too, unless it is another object's name
("road repair backlog" stays the metric's) (canon/ask/understanding/match.py `object_catalog`,
`_YEAR`).

A city-services domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.match import object_catalog
from canon.models.documents import Document


def memo(doc_id: str, object_id: str, title: str, text: str) -> dict:
    doc = governed_doc(doc_id, object_id, title, text, kind="restricted_memo", authority=80)
    doc["allowed_roles"] = ["director"]
    return doc


BACKLOG = "metric.road_repair_backlog.v1"
DOCS = [
    governed_doc(BACKLOG, "metric.streets.road_repair_backlog", "Road repair backlog governed definition v1",
                 "Governed metric road repair backlog version 1. Open road defects reported more than 14 days ago "
                 "and not yet repaired, counted at month end."),
    memo("memo.streets.winter_staffing_plan_2027", "memo.streets.winter_staffing_plan_2027",
         "Winter staffing plan 2027", "The winter crews add two night shifts; overtime is capped at 12 hours a week."),
    memo("memo.streets.road_repair_backlog_2027", "memo.streets.road_repair_backlog_2027",
         "Road repair backlog 2027 targets", "The backlog target for 2027 is under 400 open defects at month end."),
]

ctx = module_context("city", DOCS)


@pytest.mark.parametrize("question", [
    "What does the winter staffing plan say about overtime?",
    "Summarise the winter staffing plan",
    "What are the road repair backlog targets?",
    "What's the road repair backlog target for 2027?",
])
def test_a_hidden_document_named_without_its_year_is_denied(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "deny" and resp.evidence == [], (question, resp.action, resp.reason)


def test_a_role_that_may_see_it_gets_it(ctx):
    resp = ask(ctx, "What does the winter staffing plan say about overtime?", "director")
    assert resp.action == "answer" and resp.evidence[0].doc_id == "memo.streets.winter_staffing_plan_2027", (
        resp.action, resp.reason)


def test_a_name_less_its_year_that_another_object_has_stays_that_objects(ctx):
    resp = ask(ctx, "What is the road repair backlog?", "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == BACKLOG
    catalog = object_catalog([Document.model_validate(d) for d in DOCS])
    assert "road repair backlog" not in catalog["memo.streets.road_repair_backlog_2027"].names
    assert "road repair backlog targets" in catalog["memo.streets.road_repair_backlog_2027"].names
    assert "winter staffing plan" in catalog["memo.streets.winter_staffing_plan_2027"].names
