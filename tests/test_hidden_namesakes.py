"""A restricted object that shares a name with one the role may see denies only a question
that names it (canon/ask/pipeline.py, `_names_hidden`): one naming the visible object's domain
("signalling delay rate" beside rolling stock's restricted delay rate memo) asks about that
object, and so does one written with the visible name where the hidden object's name has one
more word ("delay rate 2" is another name). A question naming the hidden object still gets
`deny`, with nothing of it shown.

Railway documents, a domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from corpus_context import module_context

from canon.ask.pipeline import ask

DAY = dt.date(2026, 6, 30)
SECRET = "Osprey-flint"


def _doc(doc_id, object_id, kind, title, text, roles, authority=100):
    return {"doc_id": doc_id, "object_id": object_id, "kind": kind, "title": title, "status": "approved",
            "authority": authority, "version": "1", "valid_from": "2025-01-01", "valid_to": None,
            "allowed_roles": roles, "supersedes": None, "content_hash": f"sha256:rail-{doc_id}", "text": text}


DOCS = [
    _doc("metric.delay_rate.v1", "metric.signalling.delay_rate", "metric_definition",
         "Delay rate governed definition v1",
         "Governed metric delay rate version 1. The delay rate is the share of train departures held more than "
         "three minutes by a signal failure, over all departures in the month.", ["analyst"]),
    _doc("metric.punctuality_share.v1", "metric.timetable.punctuality_share", "metric_definition",
         "Punctuality share governed definition v1",
         "Governed metric punctuality share version 1. The punctuality share is the share of trains arriving "
         "within five minutes of the timetable, over all trains run in the month.", ["analyst"]),
    # Restricted namesakes: the same name in another domain, and the same name with one more word.
    _doc("memo.rolling_stock.delay_rate", "memo.rolling_stock.delay_rate", "restricted_memo",
         "Board memo on fleet delay rate", f"RESTRICTED. Fleet faults doubled in May. Code name {SECRET}.",
         ["executive"], 70),
    _doc("memo.timetable.punctuality_share_2", "memo.timetable.punctuality_share_2", "restricted_memo",
         "Punctuality share 2 recovery plan", f"RESTRICTED. The recovery plan cuts 40 services. {SECRET}.",
         ["executive"], 70),
]


ctx = module_context("rail", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("How is the signalling delay rate defined?", "metric.delay_rate.v1"),
    ("What is the signalling delay rate definition for 2026-06-30?", "metric.delay_rate.v1"),
    ("How is the punctuality share defined?", "metric.punctuality_share.v1"),
    ("What is the timetable punctuality share definition?", "metric.punctuality_share.v1"),
])
def test_a_question_naming_the_visible_object_is_answered_beside_a_restricted_namesake(ctx, question, doc_id):
    r = ask(ctx, question, "analyst", DAY)
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.answer)
    assert SECRET not in json.dumps(r.to_json_dict(), default=str)


@pytest.mark.parametrize("question", [
    "What does the rolling stock delay rate memo say?",
    "Show me the board memo on fleet delay rate",
    "What does the punctuality share 2 recovery plan say?",
    "punctuality share 2 memo",
])
def test_a_question_naming_the_restricted_namesake_is_denied(ctx, question):
    r = ask(ctx, question, "analyst", DAY)
    assert r.action == "deny" and not r.evidence and SECRET not in json.dumps(r.to_json_dict(), default=str), \
        (question, r.action)
