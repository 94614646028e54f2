"""A name whose head says how much ("average basket <value>") written with a word saying how
many in its place ("average basket <count>") names another measure, in a domain no gold set
uses: a bookshop chain.

"Count", "number", "value" and "amount" are grammar words of a question ("what was the
<value> of …", "the <number> for July"), so the swapped head was left out of the phrase and
the rest of the name covered it: "How was the average basket count defined?" was answered with
the average basket value. In a name's head's place a word of the other group (how many / how
much) renames it, as another noun does (canon/ask/understanding/coverage.py, `renames`,
`_QUANTITY_GROUPS`); a word of the same group ("amount" for "value") does not. A noun naming
an object ("… <sessions> definition") ends the phrase as a grammar word does."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import renames

DOCS = [
    governed_doc("books.average_basket_value.v1", "metric.books.average_basket_value",
                 "Average basket value governed definition v1",
                 "Governed metric average basket value version 1. Till receipts' net sales divided by the count of "
                 "till receipts, gift cards excluded."),
    governed_doc("books.loyalty_signup_count.v1", "metric.books.loyalty_signup_count",
                 "Loyalty signup count governed definition v1",
                 "Governed metric loyalty signup count version 1. The number of new loyalty cards registered at the "
                 "till or online, duplicates by email removed."),
    governed_doc("books.sell_through_rate.v1", "metric.books.sell_through_rate",
                 "Sell-through rate governed definition v1",
                 "Governed metric sell-through rate version 1. Units sold divided by units received for a title."),
]

ctx = module_context("bookshop", DOCS)


@pytest.mark.parametrize("question", [
    "How was the average basket count defined on 2026-06-01?",
    "average basket count definition",
    "What is the average basket number?",
    "How is the loyalty signup value defined?",
    "loyalty signup amount definition for 2026-03-31",
])
def test_a_quantity_word_in_the_heads_place_names_another_measure(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "abstain" and r.reason == "no_matching_object", (question, r.action, r.reason,
                                                                        [e.doc_id for e in r.evidence])


@pytest.mark.parametrize("question, doc_id", [
    ("How was the average basket value defined on 2026-06-01?", "books.average_basket_value.v1"),
    ("average basket amount definition", "books.average_basket_value.v1"),
    ("How is the loyalty signup count defined?", "books.loyalty_signup_count.v1"),
    ("loyalty signup number definition", "books.loyalty_signup_count.v1"),
    ("What is the sell-through rate's definition?", "books.sell_through_rate.v1"),
])
def test_the_name_or_a_word_of_its_group_is_answered(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason)


def test_renames_reads_quantity_words_by_group():
    assert renames("average basket count definition", ["average basket value"])
    assert not renames("average basket amount definition", ["average basket value"])
    assert not renames("what was the average basket value", ["average basket value"])
    # another noun heading the phrase before a slot noun renames too
    assert renames("the daily active sessions definition", ["daily active users"])
