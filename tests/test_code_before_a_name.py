"""A code of letters and digits written before a governed name ("the 5G dropped call rate", "the
B2B dropped call rate") makes another measure when the definition never states it, as a word
does ("the wheelchair …", tests/test_modifier_before_a_name.py): it was read as no word at all
and the metric answered. A version, a period or a window ("v2", "Q3", "H1", "FY26", "30d") says
which revision or when, and is no such code (canon/ask/understanding/coverage.py `_CODE`).

A whole name set aside as another measure's leaves none of its words to a longer name matched
in part: "the 5G dropped call rate" was then answered from the roaming dropped call rate,
whose name holds "dropped call rate" (canon/ask/pipeline.py `_pick_concept`, `_discover`).

A telecom domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import modifiers_before

DCR, ROAM = "metric.dropped_call_rate.v1", "metric.roaming_dropped_call_rate.v1"
DOCS = [
    governed_doc(DCR, "metric.network.dropped_call_rate", "Dropped call rate governed definition v1",
                 "Governed metric dropped call rate version 1. The dropped call rate is the share of voice calls "
                 "carried on the 4G network that end without either party hanging up, over all connected calls."),
    governed_doc(ROAM, "metric.network.roaming_dropped_call_rate", "Roaming dropped call rate governed definition v1",
                 "Governed metric roaming dropped call rate version 1. The roaming dropped call rate is the dropped "
                 "call rate of calls made by visiting subscribers on partner networks."),
]

ctx = module_context("telecom", DOCS)


@pytest.mark.parametrize("question", [
    "How is the 5G dropped call rate defined?",
    "What is the B2B dropped call rate?",
    "What does the 5G dropped call rate count?",
])
def test_a_code_the_definition_never_states_names_another_measure(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (
        question, resp.action, [e.doc_id for e in resp.evidence])


@pytest.mark.parametrize("question, doc_id", [
    ("How is the 4G dropped call rate defined?", DCR),           # the definition states it
    ("Q3 dropped call rate definition", DCR),                     # a period, not a code
    ("What is the v1 dropped call rate definition?", DCR),        # a version
    ("How is the roaming dropped call rate defined?", ROAM),
    ("How is the dropped call rate defined?", DCR),
])
def test_a_stated_code_a_period_or_a_version_leaves_the_name_answered(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (question, resp.action, resp.reason)


def test_which_codes_are_modifiers():
    name = ["dropped call rate"]
    assert modifiers_before("the 5G dropped call rate", name) == ["5g"]
    assert modifiers_before("the b2b dropped call rate", name) == ["b2b"]
    for q in ("the v2 dropped call rate", "the Q3 dropped call rate", "the H1 dropped call rate",
              "the FY26 dropped call rate", "the 30d dropped call rate", "the 18th dropped call rate"):
        assert modifiers_before(q, name) == [], q
