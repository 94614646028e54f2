"""A name with letters glued in front, or without the negation it carries, is another object.
"TRevPAR definition for 2026-09-01" was answered with RevPAR (one letter in front was left to
the fuzzy match as a possible typo), and "How is the technical loss rate defined?" with the
non-technical loss rate (a hotel and a grid probe). One letter in front of a word makes another
word unless it doubles the word's first letter (canon/ask/understanding/match.py `prefixed`);
a name that negates a word ("non resident …") is not named by the question that writes the word
plainly (`negation_dropped`, in matching and in discovery).

A public library domain no gold set uses, and one hotel metric, through the real pipeline."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.match import negation_dropped, prefixed

NRB = "metric.non_resident_borrower_rate.v1"
NPS = "metric.patron_nps.v1"
CPC = "metric.circulation_per_capita.v1"
REVPAR = "metric.revpar.v1"

DOCS = [
    governed_doc(NRB, "metric.library.non_resident_borrower_rate", "Non-resident borrower rate governed definition v1",
                 "Governed metric. The non-resident borrower rate is the share of active borrowers whose address "
                 "lies outside the library district, over all active borrowers at the end of the month."),
    governed_doc(NPS, "metric.library.patron_nps", "Patron net promoter score (NPS) governed definition v1",
                 "Governed metric. The patron NPS is the share of survey respondents scoring 9 or 10 less the "
                 "share scoring 0 to 6, on the annual patron survey."),
    governed_doc(CPC, "metric.library.circulation_per_capita", "Circulation per capita (CPC) governed definition v1",
                 "Governed metric. Circulation per capita is the number of physical and digital loans in the "
                 "year divided by the population of the library district."),
    governed_doc(REVPAR, "metric.hotel.revpar", "Revenue per available room (RevPAR) governed definition v1",
                 "Governed metric. RevPAR is room revenue divided by the number of available room nights."),
]

ctx = module_context("library", DOCS)


def primary(resp) -> str:
    return resp.evidence[0].doc_id if resp.evidence else ""


@pytest.mark.parametrize("question", [
    "How is the resident borrower rate defined?",
    "resident borrower rate definition for 2026-05-01",
    "What counts as a resident borrower in the resident borrower rate?",
    "How is TRevPAR defined?",
    "NRevPAR definition for 2026-09-01",
    "How is eNPS defined?",
    "What is the ENPS definition for 2026-03-31?",
])
def test_another_word_than_the_name_is_no_match(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "abstain" and resp.reason == "no_matching_object", (
        question, resp.action, resp.reason, primary(resp))


@pytest.mark.parametrize("question, doc_id", [
    ("How is the non-resident borrower rate defined?", NRB),
    ("non resident borrower rate definition for 2026-05-01", NRB),
    ("How is NPS defined?", NPS),
    ("How is the patron net promoter score defined?", NPS),
    ("How is CPC defined?", CPC),
    ("RevPAR definition for 2026-09-01", REVPAR),
    ("How is RRevPAR defined?", REVPAR),                    # a doubled first letter is a typo
    ("How is the ccirculation per capita defined?", CPC),       # a doubled first letter is a typo
    ("How is circulation per capita defined?", CPC),
])
def test_the_name_itself_is_still_answered(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and primary(resp) == doc_id, (question, resp.action, resp.reason, primary(resp))


@pytest.mark.parametrize("a, b, other", [
    ("revpar", "trevpar", True), ("flights", "lights", True), ("delivery", "redelivery", True),
    ("and", "land", False), ("our", "hours", False), ("ever", "never", False),
    ("revenue", "rrevenue", False), ("revpar", "revpars", False), ("trip", "strips", True), ("rate", "rate", False),
])
def test_letters_in_front_make_another_word(a, b, other):
    assert prefixed(a, b) is other and prefixed(b, a) is other


def test_a_negated_word_written_plainly_names_the_opposite():
    names = ["non resident borrower rate", "nrbr"]
    assert negation_dropped(names, tuple("how is the resident borrower rate defined".split()))
    assert not negation_dropped(names, tuple("how is the non resident borrower rate defined".split()))
    assert not negation_dropped(names + ["resident borrower share"], tuple("the resident borrower rate".split()))
