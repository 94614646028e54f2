"""Two measures named whole, one taken in by the other ("does attendance include season pass
visits?"), in a domain no gold set uses: a theme park.

"Does circulation include e-book checkouts on 2026-09-01?" (library / wind probe) was answered
from the e-book checkouts metric: of two whole names the longer won. The object of "include",
"exclude" or "count", or the subject of "counted in" / "included in", is a part of the measure
asked about (canon/ask/understanding/coverage.py, `taken_in_as_part`; canon/ask/pipeline.py,
`_pick_concept`); named alone, it is still asked about."""

from __future__ import annotations

import functools

import pytest
from corpus_context import governed_doc, metric_revision, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import taken_in_as_part

revision = functools.partial(metric_revision, "park.attendance", "metric.park.attendance", "attendance")

DOCS = [
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
