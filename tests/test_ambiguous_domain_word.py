"""One word shared by two governed metrics' names in two domains ("uptime" of the service
uptime and of the elevator uptime), with neither domain nor a fuller name in the question, is a
clarification listing both, not retrieval's first hit (canon/ask/pipeline.py,
`_same_phrase_elsewhere`), as two whole names in two domains are (`_pick_concept`). A word of
one object's own names settles it.

Facilities and platform documents, domains no gold set uses, through the real pipeline: the
contract gate, a LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

DOCS = [
    governed_doc("metric.service_uptime.v1", "metric.platform.service_uptime", "Service uptime governed definition v1",
                 "Governed metric service uptime version 1. Service uptime is the share of minutes in the month in "
                 "which the public API answered health checks; planned maintenance windows are excluded."),
    governed_doc("metric.elevator_uptime.v1", "metric.facilities.elevator_uptime",
                 "Elevator uptime governed definition v1",
                 "Governed metric elevator uptime version 1. Elevator uptime is the share of operating hours in the "
                 "month in which each elevator car was in service; inspections are excluded."),
]


ctx = module_context("uptime", DOCS)


@pytest.mark.parametrize("question", ["What is uptime?", "How is uptime measured?", "Define uptime for me."])
def test_a_word_two_domains_name_alike_is_asked_back(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "clarify" and resp.reason == "ambiguous_object", (question, resp.action)
    assert [o["object_id"] for o in resp.options] == ["metric.facilities.elevator_uptime",
                                                      "metric.platform.service_uptime"]
    assert {o["domain"] for o in resp.options} == {"facilities", "platform"}


@pytest.mark.parametrize("question, doc_id", [
    ("How is elevator uptime measured?", "metric.elevator_uptime.v1"),
    ("What is the service uptime?", "metric.service_uptime.v1"),
])
def test_a_word_of_one_name_settles_it(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and [e.doc_id for e in resp.evidence] == [doc_id]
