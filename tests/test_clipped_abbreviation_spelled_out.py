"""A title's spelled-out name beside an abbreviation made of word beginnings. "revenue per available
room definition on 15 March 2026" (a hotel probe) abstained: the title "Revenue per available room
(RevPAR) governed definition v1" gave its object only the name "revpar", because "RevPAR" is no
string of initials ("rpar"): it takes "rev" of "revenue". An abbreviation may take one or more
first letters of each word in turn (canon/ask/understanding/match.py `abbreviates`), so the words
before it are a name too ("capital expenditure" of "CapEx", "revenue per available seat hour" of
"RevPASH").

A restaurant domain no gold set uses, through the real pipeline."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.match import abbreviates

REVPASH = "metric.revpash.v1"
CAPEX = "metric.capex.v1"

DOCS = [
    governed_doc(REVPASH, "metric.restaurant.revpash", "Revenue per available seat hour (RevPASH) governed definition v1",
                 "Governed metric. RevPASH is food and beverage revenue divided by the seats available times the "
                 "opening hours of the day."),
    governed_doc(CAPEX, "metric.restaurant.capex", "Capital expenditure (CapEx) governed definition v1",
                 "Governed metric. CapEx is the spend on kitchen equipment, fit-out and furniture capitalised in "
                 "the month, per restaurant."),
]

ctx = module_context("restaurant", DOCS)


def primary(resp) -> str:
    return resp.evidence[0].doc_id if resp.evidence else ""


@pytest.mark.parametrize("question, doc_id", [
    ("revenue per available seat hour definition for 2026-05-01", REVPASH),
    ("revenue per available seat hour definition", REVPASH),
    ("capital expenditure definition on 1 May 2026", CAPEX),
    ("What is the capital expenditure definition?", CAPEX),
    ("How is RevPASH defined?", REVPASH),
])
def test_the_spelled_out_name_and_the_abbreviation_both_name_it(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and primary(resp) == doc_id, (question, resp.action, resp.reason, primary(resp))


@pytest.mark.parametrize("short, words, abbreviated", [
    ("revpar", "revenue per available room", True),
    ("capex", "capital expenditure", True),
    ("mtta", "mean time to acknowledge", True),
    ("mta", "mean time to acknowledge", True),
    ("rpa", "revenue per available room", False),       # "room" gives no letter
    ("xyz", "revenue per available room", False),
])
def test_an_abbreviation_takes_first_letters_of_each_word_in_turn(short, words, abbreviated):
    assert abbreviates(short, words.split()) is abbreviated
