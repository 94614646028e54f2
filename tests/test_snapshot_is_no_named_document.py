"""A question that is not about freshness is never refused because its words also name a
freshness snapshot family. "Which occupancy definition applies ..., and which source
supports it?" wrote "source", the last id segment of the family `freshness.ward.sources`, and
"occupancy" alone names no object (a runbook shares it); the pipeline took the family for a
document the question names and abstained "not_authoritative" (observed text is no
authority on a definition) before discovery could propose the metric. The demo's worked
example failed the same way on `freshness.dbt.sources` (tests/test_pipeline_e2e.py). A snapshot family is
the authority on freshness and nothing else: it is never a named document
(canon/ask/pipeline.py, the `named` list in `_answer`).

A hospital domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import datetime as dt

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

DAY = dt.date(2026, 5, 4)


def snapshot(doc_id: str, object_id: str, title: str, observed: str, readings: str) -> dict:
    return {"doc_id": doc_id, "object_id": object_id, "kind": "freshness_snapshot", "title": title,
            "status": "observed", "authority": 90, "version": observed, "valid_from": observed[:10],
            "valid_to": "2026-05-05", "allowed_roles": ["analyst"], "supersedes": None,
            "content_hash": f"sha256:{doc_id}", "text": f"Observed at {observed}. {readings}"}


DOCS = [
    governed_doc("metric.bed_occupancy.v1", "metric.ward.bed_occupancy", "Bed occupancy governed definition v1",
                 "Governed metric bed occupancy version 1. Bed occupancy is the share of staffed inpatient beds "
                 "holding a patient at the midnight census, over all staffed inpatient beds."),
    governed_doc("wiki.discharge_lounge", "wiki.ward.discharge_lounge", "Discharge lounge wiki page",
                 "The discharge lounge holds patients waiting for transport after discharge.",
                 kind="wiki", status="draft", authority=30),
    # "occupancy" names two objects, so it is not the metric's distinctive word
    governed_doc("runbook.occupancy_census", "runbook.ward.occupancy_census", "Occupancy census runbook",
                 "Run the midnight census export before 01:00 and reconcile it with the bed board.",
                 kind="runbook", status="draft", authority=40),
    snapshot("freshness.ward_sources.2026-05-04T0600Z", "freshness.ward.sources",
             "Ward source freshness snapshot 2026-05-04 06:00 UTC", "2026-05-04T06:00:00Z",
             "raw.adt.census max_loaded_at 2026-05-04T05:30:00Z, SLA 1 hours."),
]

ctx = module_context("hospital", DOCS)


@pytest.mark.parametrize("question", [
    # "occupancy" alone is too weak to name the metric: retrieval proposes it (discovery)
    "Which occupancy definition applies for 2026-05-04, and which source supports it?",
    "Which occupancy definition applies for reporting date 2026-05-04, and which source/model/version supports it?",
    "How is occupancy defined and which source supports it?",
    "Which bed occupancy definition applies for 2026-05-04, and which source supports it?",
])
def test_a_definition_question_that_writes_a_family_name_is_answered(ctx, question):
    resp = ask(ctx, question, "analyst", as_of=DAY)
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert resp.reason != "not_authoritative"
    assert resp.evidence[0].doc_id == "metric.bed_occupancy.v1"
    assert not any(e.doc_id.startswith("freshness.") for e in resp.evidence)


def test_the_family_still_answers_freshness(ctx):
    resp = ask(ctx, "Are the ward source feeds fresh?", "analyst", as_of=DAY)
    assert resp.action == "calculate", (resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence] == ["freshness.ward_sources.2026-05-04T0600Z"]

