"""A measure built on a governed name that the governed object is not, in a domain no gold set
uses: an orchestra.

- Another measure divided by the object: "How is the cost per volunteer hour defined?"
  (airport / charity probe) was answered with the volunteer hours definition. A measure's words
  before "per <name>" make the object a denominator, unless its names or definitions write them
  before "per" (canon/ask/understanding/qualifiers.py, `ratio_before`).
- Another head after a name an id shortened: "How is the grant win value defined?" was answered
  with the "Trust and foundation grant win rate" (id metric.charity.grant_win). When the
  object's longer names put another measure's head after the words the question wrote, the
  question names another measure (canon/ask/understanding/coverage.py, `head_swapped`).
Both abstain `no_matching_object`."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import head_swapped
from canon.ask.understanding.qualifiers import ratio_before

HOURS = "orch.rehearsal_hours.v1"
RENEWAL = "orch.subscription_renewal.v1"
FEE = "orch.fee_per_rehearsal_hour.v1"

DOCS = [
    governed_doc(HOURS, "metric.orch.rehearsal_hours", "Rehearsal hours governed definition v1",
                 "Governed metric rehearsal hours version 1. Hours the full orchestra rehearsed in the period, "
                 "sectionals excluded."),
    governed_doc(RENEWAL, "metric.orch.subscription_renewal", "Season subscription renewal rate governed definition v1",
                 "Governed metric season subscription renewal rate version 1. Subscribers of last season who "
                 "bought a subscription for this season, over last season's subscribers."),
    governed_doc(FEE, "metric.orch.fee_per_rehearsal_hour", "Deputy fee per rehearsal hour governed definition v1",
                 "Governed metric deputy fee per rehearsal hour version 1. Fees paid to deputy players divided by "
                 "the rehearsal hours they played."),
]

ctx = module_context("orchestra", DOCS)


@pytest.mark.parametrize("question", [
    "How is the hall cost per rehearsal hour defined?",
    "What is the definition of ticket income per rehearsal hour?",
    "How is the subscription renewal value defined?",
    "subscription renewal count definition",
    # "… rate per venue" after a long name written in part ("subscription renewal rate" of "season
    # subscription renewal rate", id "subscription renewal"): the ratio is read after all of it
    "subscription renewal rate per venue in 2026-10",
    # another head after a name's first word, or a head that is an amount (airport / charity /
    # pharmacy probes: "the owing <value>", "the generic substitution <saving>")
    "How is the rehearsal value defined?",
    "How is the subscription renewal saving defined?",
])
def test_another_measure_abstains(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "abstain" and r.reason == "no_matching_object", (question, r.action, r.reason,
                                                                         [e.doc_id for e in r.evidence])


@pytest.mark.parametrize("question, doc_id", [
    ("How are rehearsal hours defined?", HOURS),
    ("How is the deputy fee per rehearsal hour defined?", FEE),
    ("How is the subscription renewal rate defined?", RENEWAL),
    ("subscription renewal definition", RENEWAL),
])
def test_the_object_itself_is_answered(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason)


def test_a_breakdown_after_a_long_name_written_in_part_is_not_computed(ctx):
    r = ask(ctx, "What was the subscription renewal rate by venue in October 2026?", "analyst")
    assert r.action == "abstain" and r.reason == "metric_not_computable", (r.action, r.reason, r.answer)


def test_the_words_before_per_and_after_the_name():
    names = {"rehearsal hours"}
    assert ratio_before("How is the hall cost per rehearsal hour defined?", names) == ["hall", "cost"]
    assert ratio_before("one row per rehearsal hour", names) == []
    assert ratio_before("How many players per rehearsal hour?", names) == ["players"]
    assert ratio_before("How are rehearsal hours defined?", names) == []
    longer = {"subscription renewal", "season subscription renewal rate"}
    assert head_swapped("how is the subscription renewal value defined", "subscription renewal", longer)
    assert not head_swapped("how is the subscription renewal rate defined", "subscription renewal", longer)
    assert not head_swapped("subscription renewal definition", "subscription renewal", longer)
    assert not head_swapped("net revenue value for july", "net revenue", {"net revenue"})
