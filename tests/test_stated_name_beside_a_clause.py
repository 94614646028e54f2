"""A question that names a metric only by a name its definition states ("the pure premium, also
called the burning cost") and goes on to a clause of its own ("… and where does that data come
from?", "which model supports the burning cost and …") abstained no_matching_object: the stated
names were read only when the catalog's names left a word uncovered, not when they named
nothing, and the clause's words then failed the description. They are read in both cases
(canon/ask/pipeline.py `_coverage`).

An insurance domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

LINEAGE = ["metric.pure_premium.v1", "model.fct_claims.v1", "lineage.pure_premium.v1"]
DOCS = [
    governed_doc("metric.pure_premium.v1", "metric.insurance.pure_premium", "Pure premium governed definition v1",
                 "Governed metric pure premium version 1. The pure premium, also called the burning cost, is "
                 "incurred losses divided by earned exposure units in the quarter. Supporting model is "
                 "model.insurance.fct_claims.v1."),
    governed_doc("model.fct_claims.v1", "model.insurance.fct_claims", "dbt model schema fct_claims v1",
                 "dbt model model.insurance.fct_claims.v1. Grain: one row per claim per quarter. This model "
                 "supports metric.insurance.pure_premium version 1.", kind="model_schema", authority=90),
    governed_doc("lineage.pure_premium.v1", "lineage.insurance.pure_premium", "Lineage for pure premium v1",
                 "Lineage for metric.insurance.pure_premium v1: raw.policy.claims -> stg.policy.claims; "
                 "raw.finance.premiums -> stg.finance.premiums. These staging models feed "
                 "model.insurance.fct_claims.v1, which supports metric.insurance.pure_premium v1.",
                 kind="lineage", authority=95),
    governed_doc("metric.combined_ratio.v1", "metric.insurance.combined_ratio", "Combined ratio governed definition v1",
                 "Governed metric combined ratio version 1. The loss ratio plus the expense ratio."),
    governed_doc("metric.claim_cost.v1", "metric.insurance.average_claim_cost", "Average claim cost governed definition v1",
                 "Governed metric average claim cost version 1. Incurred losses divided by the number of claims."),
]

ctx = module_context("insurance", DOCS)


@pytest.mark.parametrize("question", [
    "How is the burning cost calculated and where does that data come from?",
    "Which model supports the burning cost and where does its data come from?",
    "How is the burning cost defined, and which raw tables feed it?",
])
def test_a_stated_name_beside_a_lineage_clause_gets_the_lineage(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence] == LINEAGE, question


def test_the_stated_name_alone_still_answers(ctx):
    resp = ask(ctx, "How is the burning cost calculated?", "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == "metric.pure_premium.v1"
