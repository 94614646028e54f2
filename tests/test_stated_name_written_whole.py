"""A name a definition states ("also called average fare") written whole in a question
whose first word the catalog's names also hold (the id's "average ticket"), in a domain no gold
set uses: a theatre.

"how is average donation defined for 2026-09-30?" (airport / charity probe; "the average gift
size, also called average donation", a median from v2) abstained no_matching_object: the
catalog's names covered "average", the uncovered "donation" closing the phrase was dropped, and
"average <donation>" read as the id's "average gift" with another noun in its head's place; the
names the text states were read only when the catalog's left words uncovered. They are read as
well when the question writes one of them out whole (canon/ask/pipeline.py, `_coverage`).

And a name's start before another measure's head is another measure ("average <ticket> count"
beside "average ticket yield"; canon/ask/understanding/coverage.py, `head_swapped`)."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

YIELD_V1 = "theatre.average_ticket_yield.v1"
YIELD_V2 = "theatre.average_ticket_yield.v2"

DOCS = [
    governed_doc(YIELD_V1, "metric.theatre.average_ticket", "Average ticket yield governed definition v1",
                 "Governed metric average ticket yield version 1. The average ticket yield, also called average "
                 "fare, is box office income net of booking fees over tickets sold.", valid_to="2026-07-01"),
    governed_doc(YIELD_V2, "metric.theatre.average_ticket", "Average ticket yield governed definition v2",
                 "Governed metric average ticket yield version 2. The average ticket yield, also called average "
                 "fare, is the median box office income per ticket sold, net of booking fees and VAT, comps "
                 "excluded.",
                 version="2", valid_from="2026-07-01", supersedes=YIELD_V1),
    governed_doc("theatre.average_run_length.v1", "metric.theatre.average_run_length",
                 "Average run length governed definition v1",
                 "Governed metric average run length version 1. Performances per production, mean over productions "
                 "that closed in the period."),
]

ctx = module_context("theatre", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("how is average fare defined for 2026-09-30?", YIELD_V2),
    ("average fare definition for 2026-03-15", YIELD_V1),
])
def test_the_stated_name_finds_the_measure(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason)


def test_undated_it_is_asked_back_for_the_revision(ctx):
    r = ask(ctx, "how is average fare defined?", "analyst")
    assert r.action == "clarify" and {o["evidence_id"] for o in r.options} == {YIELD_V1, YIELD_V2}, (r.action, r.reason)


def test_a_word_no_name_states_is_still_another_measure(ctx):
    r = ask(ctx, "how is average ticket count defined for 2026-09-30?", "analyst")
    assert r.action == "abstain", (r.action, r.reason, [e.doc_id for e in r.evidence])
