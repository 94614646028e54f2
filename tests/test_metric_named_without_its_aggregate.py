"""A metric named without its aggregate word ("overdraft fees" for the total overdraft fees),
where the dbt model implementing it carries that shorter name whole (fct_overdraft_fees), is the
metric when the question asks for a definition or a value: "how is the overdraft fees metric
calculated?" and "what were overdraft fees in October 2026?" were answered from the model's
schema, a confident answer from an object the question did not ask about. A question about the
model (its grain, columns, identifier, "the … model") still gets the model, and a model whose
name no metric's name holds ("card transactions") is still the answer to "how are card
transactions defined?" (canon/ask/pipeline.py `_metric_of_model_name`).

A retail-banking domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask. No semantic layer: a value question abstains."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask


def model(name: str, grain: str, supports: str) -> dict:
    return governed_doc(f"model.{name}.v1", f"model.banking.{name}", f"dbt model schema {name} v1",
                        f"dbt model model.banking.{name}.v1. Grain: {grain}. This model supports "
                        f"metric.banking.{supports} version 1.", kind="model_schema", authority=90)


DOCS = [
    governed_doc("metric.total_overdraft_fees.v1", "metric.banking.total_overdraft_fees",
                 "Total overdraft fees governed definition v1",
                 "Governed metric total overdraft fees version 1. Total overdraft fees is the sum in EUR of the fees "
                 "charged when a current account goes below its arranged limit, net of fees refunded within 14 days. "
                 "Supporting model is model.banking.fct_overdraft_fees.v1."),
    model("fct_overdraft_fees", "one row per overdraft fee charged", "total_overdraft_fees"),
    governed_doc("metric.average_loan_balance.v1", "metric.banking.average_loan_balance",
                 "Average loan balance governed definition v1",
                 "Governed metric average loan balance version 1. Average loan balance is the mean end-of-day "
                 "outstanding principal over open consumer loans in the month. Supporting model is "
                 "model.banking.fct_loan_balance.v1."),
    model("fct_loan_balance", "one row per open loan per day", "average_loan_balance"),
    governed_doc("metric.card_spend_per_customer.v1", "metric.banking.card_spend_per_customer",
                 "Card spend per customer governed definition v1",
                 "Governed metric card spend per customer version 1. Card spend per customer is the settled card "
                 "purchase amount in EUR over active card customers in the month. Supporting model is "
                 "model.banking.fct_card_transactions.v1."),
    model("fct_card_transactions", "one row per settled card transaction", "card_spend_per_customer"),
]

ctx = module_context("banking", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("What is the overdraft fees definition?", "metric.total_overdraft_fees.v1"),
    ("How is the overdraft fees metric calculated?", "metric.total_overdraft_fees.v1"),
    ("How are overdraft fees defined?", "metric.total_overdraft_fees.v1"),
    ("Which definition of loan balance applies today?", "metric.average_loan_balance.v1"),
    ("How is the loan balance metric defined?", "metric.average_loan_balance.v1"),
])
def test_a_definition_asked_by_the_models_name_is_the_metrics(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert resp.evidence[0].doc_id == doc_id, (question, [e.doc_id for e in resp.evidence])


@pytest.mark.parametrize("question", [
    "What were overdraft fees in October 2026?",
    "How much were overdraft fees in Q3 2026?",
])
def test_a_value_asked_by_the_models_name_is_the_metrics(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_semantic_layer", (question, resp.action, resp.reason)


@pytest.mark.parametrize("question, doc_id", [
    ("What is the grain of the overdraft fees model?", "model.fct_overdraft_fees.v1"),
    ("What is fct_overdraft_fees?", "model.fct_overdraft_fees.v1"),
    ("Which columns does the loan balance table have?", "model.fct_loan_balance.v1"),
    ("How are card transactions defined?", "model.fct_card_transactions.v1"),
])
def test_the_model_asked_about_is_still_the_model(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert resp.evidence[0].doc_id == doc_id, (question, [e.doc_id for e in resp.evidence])
