"""A measure's head word that one name in the catalog happens to hold alone ("share") names no
object, in a domain no gold set uses: a returns-processing warehouse.

"which metric measures the share of departures from timepoints that leave on schedule …"
(transit / veterinary probe) abstained `not_authoritative` with "The document you name is draft
text": the only name holding "share" was a draft's ("Telemedicine consult share"), so "share"
plus "metric" matched it as its distinctive word. A head word ("share", "rate", "count") counts
as a distinctive word only beside another of the name's own words ("somatic cell <count>")
(canon/ask/understanding/match.py, `_token_score`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

DOCS = [
    governed_doc("returns.refurbish_yield.v1", "metric.returns.refurbish_yield", "Refurbish yield governed definition v1",
                 "Governed metric refurbish yield version 1. Returned units graded A or B after inspection divided "
                 "by returned units inspected; units from the liquidation lane are left out."),
    governed_doc("returns.restock_share.draft", "metric.returns.restock_share", "Restock share (draft)",
                 "DRAFT, not approved. The restock share would be units put back on sale within 48 hours.",
                 status="draft", authority=20),
]

ctx = module_context("returns", DOCS)


def test_a_head_word_alone_names_no_draft(ctx):
    r = ask(ctx, "which metric measures the share of returned units graded A or B after inspection?", "analyst")
    assert r.reason != "not_authoritative", (r.action, r.reason, r.answer)
    assert r.action == "answer" and r.evidence[0].doc_id == "returns.refurbish_yield.v1", (
        r.action, r.reason, [e.doc_id for e in r.evidence])


@pytest.mark.parametrize("question, reason", [
    ("What is the restock share?", "no_approved_revision"),
    ("What does the restock share draft say?", "not_authoritative"),
])
def test_the_drafts_own_words_still_name_it(ctx, question, reason):
    r = ask(ctx, question, "analyst")
    assert (r.action, r.reason) == ("abstain", reason), (question, r.action, r.reason)
