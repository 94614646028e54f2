"""Two measures named whole, one taken in by the other ("does attendance include season pass
visits?"), in a domain no gold set uses: a theme park.

"Does circulation include e-book checkouts on 2026-09-01?" (library / wind probe) was answered
from the e-book checkouts metric: of two whole names the longer won. The object of "include",
"exclude" or "count", or the subject of "counted in" / "included in", is a part of the measure
asked about (canon/ask/understanding/coverage.py, `taken_in_as_part`; canon/ask/pipeline.py,
`_pick_concept`); named alone, it is still asked about. When the whole is named only inside a
source's phrase ("per the attendance v3 proposal, season pass visits count toward attendance"),
the object whose revision the source is takes the part in (`_object_of_claim_source`)."""

from __future__ import annotations

import functools

import pytest
from corpus_context import governed_doc, metric_revision, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import taken_in_as_part

revision = functools.partial(metric_revision, "park.attendance", "metric.park.attendance", "attendance")

PROPOSAL = "park.attendance.v3_proposal"

DOCS = [
    {**governed_doc(PROPOSAL, "metric.park.attendance", "Attendance v3 proposal",
                    "DRAFT proposal, not approved. Attendance would count season pass visits at half weight.",
                    status="draft", authority=20, version="3", valid_from="2026-10-01", valid_to=None),
     "supersedes": "park.attendance.v1"},
    revision("1", "2025-01-01", "2026-04-01", "Paid day tickets scanned at the gates; season pass visits excluded."),
    revision("2", "2026-04-01", None, "Paid day tickets and season pass visits scanned at the gates."),
    governed_doc("park.season_pass_visits.v1", "metric.park.season_pass_visits",
                 "Season pass visits governed definition v1",
                 "Governed metric season pass visits version 1. Gate scans of a valid season pass, one per pass per "
                 "day."),
]

ctx = module_context("theme_park", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("Does attendance include season pass visits on 2026-07-01?", "park.attendance.v2"),
    ("Are season pass visits counted in attendance for 2026-02-01?", "park.attendance.v1"),
    ("Do season pass visits count toward attendance on 2026-07-01?", "park.attendance.v2"),
    ("did attendance exclude the season pass visits in January 2026", "park.attendance.v1"),
    # the part named alone is what is asked about
    ("How are season pass visits defined?", "park.season_pass_visits.v1"),
])
def test_the_measure_that_takes_the_part_in(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason,
                                                                      [e.doc_id for e in r.evidence])


def test_taken_in_as_part():
    assert taken_in_as_part("does attendance include season pass visits", ["season", "pass", "visits"])
    assert taken_in_as_part("are season pass visits counted in attendance", ["season", "pass", "visits"])
    assert not taken_in_as_part("does attendance include season pass visits", ["attendance"])
    assert not taken_in_as_part("how are season pass visits defined", ["season", "pass", "visits"])


@pytest.mark.parametrize("question", [
    "Per the attendance v3 proposal, season pass visits count toward attendance at half weight - do they on "
    "2026-11-15?",
    # the verb runs into the phrase coverage reads ("proposal adds season pass visits"); the name
    # alone is read as well (library / wind probe: "The circulation v3 proposal adds e-book checkouts.")
    "The attendance v3 proposal adds season pass visits at half weight. Do we do that for November 2026?",
])
def test_the_part_a_proposal_takes_in_is_weighed_against_the_whole(ctx, question):
    # the only measure named outside the source's phrase is the part; the proposal is attendance's
    r = ask(ctx, question, "analyst")
    uses = [(e.doc_id, e.use) for e in r.evidence]
    assert r.action == "answer_conflict" and uses[0] == ("park.attendance.v2", "primary") \
        and (PROPOSAL, "conflict") in uses, (r.action, r.reason, uses)
