"""A dbt-style identifier in a question ("fct_payments") is one object's whole name, word for word: a model whose name only shares some of them (fct_claim_payments) is not it, whether the
name is matched, found by retrieval, or hidden from the role (no deny for a model nobody built);
a plural dropped still names it (canon/ask/understanding/identifiers.py).

Insurance documents, a domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.identifiers import identifier_unnamed, identifiers


def _model(name: str, text: str, roles=("analyst",)) -> dict:
    d = governed_doc(f"model.{name}.v1", f"model.insurance.{name}", f"dbt model schema {name} v1",
                     f"dbt model model.insurance.{name}.v1. {text}", kind="model_schema", authority=90)
    d["allowed_roles"] = list(roles)
    return d


DOCS = [
    _model("fct_claim_payments", "Grain: one row per payment made on a claim. Primary key: payment_id. "
                                 "Important fields: payment_id, claim_id, paid_at, amount."),
    _model("dim_policy_holders", "Grain: one row per policy holder. Primary key: holder_id."),
    _model("fct_premium_refunds", "Grain: one row per refunded premium. Primary key: refund_id.",
           roles=("actuary",)),
]


ctx = module_context("insurance", DOCS)


@pytest.mark.parametrize("question", [
    "Is fct_payments deprecated?",
    "What is the grain of fct_claims?",
    "Which columns does fct_payments have?",
    "What is fct_holders?",
])
def test_an_identifier_no_object_has_names_no_object(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (question, resp.action, resp.evidence)


@pytest.mark.parametrize("question, doc_id", [
    ("What is the grain of fct_claim_payments?", "model.fct_claim_payments.v1"),
    ("Which columns does fct_claim_payment have?", "model.fct_claim_payments.v1"),   # a plural dropped
    ("Who owns dim_policy_holders?", "model.dim_policy_holders.v1"),
])
def test_the_identifier_written_out_names_its_object(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and [e.doc_id for e in resp.evidence] == [doc_id], (question, resp.action)


def test_a_hidden_model_sharing_words_with_the_identifier_is_no_deny(ctx):
    assert ask(ctx, "What is the grain of fct_refunds?", "analyst").action == "abstain"
    assert ask(ctx, "What is the grain of fct_premium_refunds?", "analyst").action == "deny"


def test_what_an_identifier_is():
    assert identifiers("is fct_claim_payments or dim_holders fresh?") == (("fct", "claim", "payments"),
                                                                          ("dim", "holders"))
    assert identifiers("is raw.claims.payment_lines fresh?") == ()   # a relation, not a model name
    assert identifiers("lineage of fct_claim_payments_v2") == (("fct", "claim", "payments"),)   # dbt's version suffix
    assert identifiers("is stg_claims__payments fresh") == (("stg", "claims", "payments"),)   # dbt's double underscore
    assert identifier_unnamed("grain of fct_payments", ["fct", "payments"], ["fct claim payments"])
    assert not identifier_unnamed("grain of fct_claim_payment", ["fct", "claim", "payment"], ["fct claim payments"])
    # A phrase outside the identifier is not judged by it.
    assert not identifier_unnamed("claim payments beside fct_x_y", ["claim", "payments"], ["fct claim payments"])
