"""A number beside a word only one object's name holds says which one is meant ("Ward 5" is
not "Ward 3"), in a domain no gold set uses: a hospital's wards.

"how is OTD defined for Terminal 1 departures?" (airport / charity probe) was denied to an
analyst who may read the definition: "terminal" was a word only the restricted "Terminal 2
expansion plan" memo's names held (its id writes "terminal2"), and "terminal" with its
"misspelling" "terminal2" counted as two distinctive words, enough to name the memo as strongly
as the initialism named the metric. Digits are no misspelling ("terminal1" is not
"terminal2"), and a word with the number after it is read as names write it ("ward 3" ->
"ward3"), so "Ward 3" still names the memo about it (canon/ask/understanding/match.py,
`_token_in`, `question_tokens`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.match import question_tokens

OCCUPANCY = "hosp.bed_occupancy_rate.v1"
MEMO = "memo.hosp.ward3_refurbishment_2027"

DOCS = [
    governed_doc(OCCUPANCY, "metric.hosp.bed_occupancy_rate", "Bed occupancy rate governed definition v1",
                 "Governed metric bed occupancy rate version 1. Occupied beds at midnight divided by staffed beds, "
                 "per ward."),
    {**governed_doc(MEMO, MEMO, "Ward 3 refurbishment plan 2027",
                    "Restricted. Ward 3 closes for refurbishment in March 2027 and reopens with 28 beds; code name "
                    "Kestrel.", kind="restricted_memo"),
     "allowed_roles": ["estates_lead"]},
]

ctx = module_context("hospital_wards", DOCS)


@pytest.mark.parametrize("question", [
    "how is BOR defined for Ward 5?",
    "What was BOR on Ward 1 last week?",
])
def test_another_number_names_no_restricted_memo(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action != "deny", (question, r.action, r.reason)
    assert r.evidence and r.evidence[0].doc_id == OCCUPANCY, (question, r.action, r.reason)


def test_the_same_number_still_names_it(ctx):
    r = ask(ctx, "How many beds will Ward 3 have after the refurbishment?", "analyst")
    assert r.action == "deny" and "Kestrel" not in r.answer, (r.action, r.reason)


def test_a_word_and_its_number_are_read_together():
    assert {"ward", "3", "ward3"} <= question_tokens("how many beds will ward 3 have")
    assert "ward5" not in question_tokens("ward 3 and 5")
