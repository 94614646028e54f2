"""A clause asking for lineage beside a metric named only in part is no part of the metric's
description: "which raw sources support the occupancy definition?", "how is occupancy defined
and which sources support it?". Retrieval proposes the metric (one word of its name names
nothing by itself), and a description must use the question's content words; "raw" (of "raw
sources / raw tables") and the clause's verb in its plural form ("support", beside the
"supports" already read as grammar) were counted as words of the description, which the
definition does not use, and the question abstained no_matching_object while "which sources
feed it" was answered (canon/ask/understanding/coverage.py `_asking_clause`).

A hospital domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import datetime as dt

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import description_support

DAY = dt.date(2026, 5, 4)
LINEAGE = ["metric.bed_occupancy.v1", "model.fct_bed_census.v1", "lineage.bed_occupancy.v1"]

DOCS = [
    governed_doc("metric.bed_occupancy.v1", "metric.ward.bed_occupancy", "Bed occupancy governed definition v1",
                 "Governed metric bed occupancy version 1. Bed occupancy is the share of staffed inpatient beds "
                 "holding a patient at the midnight census, over all staffed inpatient beds. Supporting model is "
                 "model.ward.fct_bed_census.v1."),
    governed_doc("model.fct_bed_census.v1", "model.ward.fct_bed_census", "dbt model schema fct_bed_census v1",
                 "dbt model model.ward.fct_bed_census.v1. Grain: one row per staffed bed per midnight census. "
                 "This model supports metric.ward.bed_occupancy version 1.", kind="model_schema", authority=90),
    governed_doc("lineage.bed_occupancy.v1", "lineage.ward.bed_occupancy", "Lineage for bed occupancy v1",
                 "Lineage for metric.ward.bed_occupancy v1: raw.adt.census -> stg.adt.census; raw.adt.beds -> "
                 "stg.adt.beds. These staging models feed model.ward.fct_bed_census.v1, which supports "
                 "metric.ward.bed_occupancy v1.", kind="lineage", authority=95),
    # "occupancy" names two objects, so it is not the metric's distinctive word
    governed_doc("runbook.occupancy_census", "runbook.ward.occupancy_census", "Occupancy census runbook",
                 "Run the midnight census export before 01:00 and reconcile it with the bed board.",
                 kind="runbook", status="draft", authority=40),
]

ctx = module_context("hospital_lineage", DOCS)


@pytest.mark.parametrize("question", [
    "Which raw sources support the occupancy definition?",
    "Which sources support the occupancy definition?",
    "How is occupancy defined and which sources support it?",
    "How is occupancy defined, and which raw tables feed it?",
    "What raw tables power the occupancy definition?",
    "How is occupancy defined and which source systems populate it?",
])
def test_a_lineage_clause_beside_a_partly_named_metric_gets_its_lineage(ctx, question):
    resp = ask(ctx, question, "analyst", as_of=DAY)
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence] == LINEAGE
    assert "raw.adt.census" in resp.answer


@pytest.mark.parametrize("question, used, content", [
    ("Which raw sources support the occupancy definition?", 1, 1),
    ("How is occupancy defined and which sources support it?", 1, 1),
    # a noun after the clause's noun is no verb of it: "quality rules" is described ("data" is
    # a grammar word of coverage, as "table" is: tests/test_freshness_of_a_shortened_name.py)
    ("Which data quality rules cover occupancy?", 1, 4),
])
def test_the_clause_words_are_no_content_words(question, used, content):
    text = "bed occupancy is the share of staffed inpatient beds holding a patient at the midnight census"
    assert description_support(question, text) == (used, content)
