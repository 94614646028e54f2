"""Retrieval can rank first a neighbour that a description does not describe, with the
described object just below it (canon/ask/pipeline.py, `_clearly_described`; on the real
model's dev split, "the share of shipments sent back to the merchant because every delivery
attempt failed" ranked the on-time delivery rate above the return-to-sender rate). A candidate
of the top hit's kind that the question describes, using `CLEARER_BY` more of its content
words than the top hit and `CLEARER_SHARE` of them, stands in for it. One described about as
well does not, and neither does one of another kind.

Library documents, a domain no gold set uses, in a real registry and LanceDB index
(HashingEmbedder). Retrieval over two documents ranks the better-described one first, so the
ranking the rule is for is given to it directly."""

from __future__ import annotations

from corpus_context import governed_doc, module_context

from canon.ask.pipeline import _clearly_described, _coverage, ask

LATE = ("Governed metric late return rate version 1. The late return rate is the share of borrowed books "
        "handed back after their due date, over all books borrowed in the month.")
VOLUME = ("Governed metric loan volume version 1. Loan volume is the books borrowed in the month at every "
          "branch, online or at the desk.")
MODEL = ("dbt model model.library.fct_loans.v1. Grain: one row per loan. Primary key: loan_id. Important fields: "
         "loan_id, book_id, borrowed_at, due_date, handed_back_at. One row per book borrowed in the month, "
         "with its due date and when it was handed back.")
DOCS = [
    governed_doc("metric.loan_volume.v1", "metric.library.loan_volume", "Loan volume governed definition v1",
                 VOLUME),
    governed_doc("metric.late_return_rate.v1", "metric.library.late_return_rate",
                 "Late return rate governed definition v1", LATE),
    governed_doc("model.fct_loans.v1", "model.library.fct_loans", "dbt model schema fct_loans v1", MODEL,
                 kind="model_schema"),
]
LATE_Q = "How do we define the share of books borrowed in the month that are handed back after the due date?"


ctx = module_context("library", DOCS)


def _standing_in(ctx, question, top_id, below_ids):
    ask(ctx, question, "analyst")   # loads the documents retrieval reaches into the role's view
    by_id = ctx.view("analyst").by_id
    ranked = [by_id[top_id], *(by_id[d] for d in below_ids)]
    covs = {d.object_id: _coverage(ctx, d.object_id, question, "analyst") for d in ranked}
    return _clearly_described(ctx, ranked[0], ranked, covs, question, "analyst")


def test_a_clearly_better_described_candidate_below_the_top_stands_in(ctx):
    assert _standing_in(ctx, LATE_Q, "metric.loan_volume.v1", ["metric.late_return_rate.v1"]) == \
        "metric.library.late_return_rate"
    resp = ask(ctx, LATE_Q, "analyst")
    assert (resp.action, resp.evidence[0].doc_id) == ("answer", "metric.late_return_rate.v1")


def test_one_described_about_as_well_does_not(ctx):
    # Loan volume uses five of the question's words, the late return rate six: no clear winner.
    q = "How do we define the books borrowed in the month at every branch that are handed back?"
    assert _standing_in(ctx, q, "metric.loan_volume.v1", ["metric.late_return_rate.v1"]) is None


def test_one_of_another_kind_does_not(ctx):
    # The loans model states every word of the question, but a metric ranked first is not displaced by a model.
    assert _standing_in(ctx, LATE_Q, "metric.loan_volume.v1", ["model.fct_loans.v1"]) is None
