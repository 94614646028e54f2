"""Retrieval may rank a model first for a question that describes a metric built on its rows
("how do we define the share of loans renewed at least once before their due date?"): the model
states the same words in its columns. A model is never what a question asking for a measure
describes (canon/ask/pipeline.py `_described_by`), and a grain ("one row per loan per month") is
no ratio; the described metric below it is the answer (`_described_in_discovery`). With the
bundled model this held the people retention rate on the dev set, which once the model stopped
being "described" had abstained.

The ranking is the retriever's, so the test hands `_described_in_discovery` the candidates in
the order that failed: model first. A public-library domain, through the real pipeline
otherwise: the contract gate, a LanceDB index (HashingEmbedder), ask's own parse."""

from __future__ import annotations

from corpus_context import governed_doc, module_context

from canon.ask import pipeline
from canon.ask.understanding.coverage import asking_part
from canon.ask.understanding.parse import parse_question

RENEWALS, MODEL = "metric.loan_renewal_rate.v1", "model.fct_circulation.v1"
DOCS = [
    governed_doc(RENEWALS, "metric.library.loan_renewal_rate", "Loan renewal rate governed definition v1",
                 "Governed metric loan renewal rate version 1. The share of loans renewed at least once before "
                 "their due date, over all loans issued in the month."),
    governed_doc(MODEL, "model.library.fct_circulation", "dbt model schema fct_circulation v1",
                 "dbt model model.library.fct_circulation.v1. Grain: one row per loan per month. Important fields: "
                 "loan_id, issued_at, due_date, renewed_at, renewal_count. Loans renewed before the due date carry "
                 "renewed_at. This model supports metric.library.loan_renewal_rate version 1.", kind="model_schema"),
]

ctx = module_context("library_models", DOCS)


def _resolved(ctx, question: str) -> str | None:
    p = parse_question(question, ctx.catalog)
    view = ctx.view("analyst")
    ranked = [view.by_id[MODEL], view.by_id[RENEWALS]]          # the model first, as retrieval had it
    covs = {d.object_id: pipeline._coverage(ctx, d.object_id, p.text, "analyst") for d in ranked}
    return pipeline._described_in_discovery(ctx, p, "analyst", ranked, covs, asking_part(p.text))


def test_a_model_ranked_first_yields_to_the_metric_the_question_describes(ctx):
    assert _resolved(ctx, "How do we define the share of loans renewed at least once before their due date?") == (
        "metric.library.loan_renewal_rate")


def test_a_question_about_a_model_keeps_it(ctx):
    assert pipeline.ask(ctx, "What is the grain of fct_circulation?", "analyst").evidence[0].doc_id == MODEL
