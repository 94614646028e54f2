"""Two or more periods named apart in one question ("What was net revenue in June and July
2026?", "June vs July 2026", "Q2 and Q3 2026") are each read: a value question was calculated for
the last one named alone, dropping the other without a word. A value is computed for each period
under the revision that governs it, never added up (canon/ask/pipeline.py
`_value_per_named_period`, through the real semantic layer in tests/test_pipeline_e2e.py); a
definition question reads the periods' hull (a clarify when the definition changes within it).
Here: what canon/ask/understanding/temporal.py `find_periods` reads."""

from __future__ import annotations

import datetime as dt

import pytest

from canon.ask.understanding.temporal import find_periods, read_time
from canon.core.dates import find_date

D = dt.date


@pytest.mark.parametrize("text, labels", [
    ("What was net revenue in June and July 2026?", ["June 2026", "July 2026"]),
    ("net revenue June vs July 2026", ["June 2026", "July 2026"]),
    ("Compare the claim rate in June 2026 and in August 2026", ["June 2026", "August 2026"]),
    ("bookings for Q2 and Q3 2026", ["Q2 2026", "Q3 2026"]),
    ("bookings in June, July and August 2026", ["June 2026", "July 2026", "August 2026"]),
    ("bookings in Q1 2026 compared with Q1 2025", ["Q1 2026", "Q1 2025"]),
])
def test_periods_named_apart_are_each_read(text, labels):
    assert [label for _, label in find_periods(text)] == labels


@pytest.mark.parametrize("text", [
    "net revenue for July 2026",                     # one period
    "net revenue from May to August 2026",           # a range, read whole (find_range)
    "net revenue at the end of June 2026",           # the edge of a period is a day
    "net revenue in Q3 2026, that is July 2026 to September 2026",
])
def test_one_period_or_a_range_is_no_list(text):
    assert find_periods(text) == []


def test_the_question_carries_every_period_and_their_hull():
    t = read_time("What was net revenue in June and July 2026?", "what was # in june and july 2026", None,
                  D(2026, 12, 4), find_date)
    assert [p for p, _ in t.periods] == [(D(2026, 6, 1), D(2026, 7, 1)), (D(2026, 7, 1), D(2026, 8, 1))]
    assert t.period == (D(2026, 6, 1), D(2026, 8, 1)) and t.period_label == "June 2026 and July 2026"
