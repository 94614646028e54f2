"""A measure word alone ("how is uptime defined?", "what counts as revenue in September
2026?") describes a measure: a metric, never a runbook or a policy that retrieval ranks first
because its text repeats the word. On the demo "revenue definition for August 2026" was answered
from the approved month-end revenue close runbook as "the applicable governed revision". In
discovery a phrase of measure words alone names only a candidate that holds measures (a metric
or a model), by its description (canon/ask/pipeline.py `_names_in_discovery`); a runbook or a
policy named by its title is still answered.

A platform (SRE) domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

DOCS = [
    governed_doc("metric.service_uptime.v1", "metric.platform.service_uptime", "Service uptime governed definition v1",
                 "Governed metric service uptime version 1. Service uptime is the share of one-minute probe intervals "
                 "in the month in which the public API answered a health probe within two seconds."),
    governed_doc("runbook.uptime_incident_review", "runbook.platform.uptime_incident_review",
                 "Uptime incident review runbook",
                 "Uptime incident review. When uptime drops below the objective, the on-call engineer opens an incident "
                 "review within one business day, records the uptime minutes lost and the definition of the outage "
                 "window.", kind="runbook", status="approved", authority=60),
    governed_doc("policy.platform.uptime_reporting", "policy.platform.uptime_reporting", "Uptime reporting policy",
                 "Uptime figures are published to customers only after the incident review closes; uptime is reported "
                 "per region.", kind="policy", status="approved", authority=70),
]

ctx = module_context("platform_uptime", DOCS)


@pytest.mark.parametrize("question", [
    "How is uptime defined?",
    "What counts as uptime in September 2026?",
    "uptime definition for August 2026",
    "What is the definition of uptime?",
])
def test_a_measure_word_alone_is_answered_from_the_metric(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert resp.evidence[0].doc_id == "metric.service_uptime.v1", (question, [e.doc_id for e in resp.evidence])


@pytest.mark.parametrize("question, doc_id", [
    ("What does the uptime incident review runbook say?", "runbook.uptime_incident_review"),
    ("What does the uptime reporting policy say?", "policy.platform.uptime_reporting"),
])
def test_a_runbook_or_policy_named_by_its_title_is_still_answered(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)
