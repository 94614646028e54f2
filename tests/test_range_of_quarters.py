"""Quarters joined as a range ("Q1-Q2 2026", "Q4 2025-Q2 2026"), in a domain no gold set uses: a
bike-share scheme.

"missed collection rate definition for Q1-Q2 2026" (waste / pharmacy probe) was answered with the
revision of Q2 alone, the wrong one for Q1: only "Q2 2026" was read. Quarters or halves joined by
a dash or "to", the year once at the end, are one range; two whole periods joined so ("Q4 2025-Q2
2026") are its ends, not two periods asked apart (canon/ask/understanding/temporal.py,
`_PART_RANGE`, `find_range`, `find_periods`)."""

from __future__ import annotations

import datetime as dt
from functools import partial

import pytest
from corpus_context import metric_revision, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.temporal import find_periods, find_range

revision = partial(metric_revision, "bikes.dock_availability", "metric.bikes.dock_availability", "dock availability")
V1 = revision("1", "2025-01-01", "2026-04-01", "Minutes a dock had a bike and a free slot over minutes in service.")
V2 = revision("2", "2026-04-01", None, "Minutes a dock had a bike and a free slot over minutes in service, "
                                       "docks closed for events left out.")

ctx = module_context("bike_share", [V1, V2])


@pytest.mark.parametrize("question", [
    "dock availability definition for Q1-Q2 2026",
    "dock availability definition from Q1 to Q2 2026",
    "dock availability definition for Q4 2025-Q2 2026",
])
def test_a_range_across_the_change_is_asked_back(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "clarify" and {o["evidence_id"] for o in r.options} == {V1["doc_id"], V2["doc_id"]}, (
        question, r.action, r.reason, [e.doc_id for e in r.evidence])


def test_a_range_after_the_change_is_answered(ctx):
    r = ask(ctx, "dock availability definition for Q2-Q3 2026", "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == V2["doc_id"], (r.action, r.reason)


def test_ranges_and_lists():
    assert find_range("for Q1-Q2 2026") == ((dt.date(2026, 1, 1), dt.date(2026, 7, 1)), "Q1 to Q2 2026")
    assert find_range("H1-H2 2026")[0] == (dt.date(2026, 1, 1), dt.date(2027, 1, 1))
    assert find_range("for Q4 2025-Q2 2026")[0] == (dt.date(2025, 10, 1), dt.date(2026, 7, 1))
    assert find_periods("for Q4 2025-Q2 2026") == []
    # "and" without "between" names two periods, as before.
    assert [label for _, label in find_periods("Q2 and Q3 2026")] == ["Q2 2026", "Q3 2026"]
