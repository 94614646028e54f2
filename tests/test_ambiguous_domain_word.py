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


def test_a_word_beside_a_shared_name_that_one_objects_other_names_hold_settles_it():
    """Two metrics named "availability rate" in two domains: "the availability rate for
    vehicles" is the fleet one, whose other name is "vehicle availability rate"; a date's
    number or the shared name alone settles nothing (canon/ask/pipeline.py,
    `_settled_by_other_names`)."""
    import datetime as dt

    from canon.ask.pipeline import AskContext
    from canon.models.documents import Document
    from canon.registry.policy import Policy

    def metric(domain: str, alias: str, text: str) -> Document:
        return Document(doc_id=f"metric.{domain}_availability.v1", object_id=f"metric.{domain}.availability_rate",
                        kind="metric_definition", title=f"Availability rate ({domain}) governed definition v1",
                        status="approved", authority=100, version="1", valid_from=dt.date(2025, 1, 1),
                        allowed_roles=("analyst",), text=text, metadata={"aliases": [alias]})

    ctx = AskContext(docs=[
        metric("fleet", "vehicle availability rate", "Availability rate is the share of vehicle days in service."),
        metric("network", "link availability rate", "Availability rate is the share of minutes each link is up."),
    ], policy=Policy(), log_answers=False)
    for q, doc_id in (("What is the availability rate for vehicles?", "metric.fleet_availability.v1"),
                      ("How is the availability rate of links defined?", "metric.network_availability.v1")):
        resp = ask(ctx, q, "analyst")
        assert resp.action == "answer" and [e.doc_id for e in resp.evidence] == [doc_id], q
    for q in ("What is the availability rate?", "Availability rate definition for 2026-06-30"):
        assert ask(ctx, q, "analyst").reason == "ambiguous_object", q
