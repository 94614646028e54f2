"""Numeric dates (read by dateutil's parser, canon/core/dates.py), ISO weeks, "last week" and
"N days / weeks / months ago" (canon/ask/understanding/temporal.py), on a water utility's
metric whose definition changed on 2026-04-08, a Wednesday of ISO week 15: a domain no gold set
uses."""

from __future__ import annotations

import datetime as dt

import pytest

from canon.ask.pipeline import AskContext, ask
from canon.ask.understanding import temporal
from canon.core.dates import AmbiguousDate, find_date, parse_as_of
from canon.core.errors import CanonInputError
from canon.models.documents import Document
from canon.registry.policy import Policy

D = dt.date.fromisoformat
NRW = "metric.water.non_revenue_water"


def _rev(version: str, valid_from: str, valid_to: str | None, text: str) -> Document:
    return Document(doc_id=f"metric.non_revenue_water.v{version}", object_id=NRW, kind="metric_definition",
                    title=f"Non-revenue water governed definition v{version}", status="approved", authority=100,
                    version=version, valid_from=D(valid_from), valid_to=D(valid_to) if valid_to else None,
                    allowed_roles=("analyst",), text=text)


@pytest.fixture
def ctx():
    return AskContext(docs=[
        _rev("1", "2025-01-01", "2026-04-08", "Non-revenue water is the share of supplied volume that is not billed."),
        _rev("2", "2026-04-08", None, "Non-revenue water is the share of supplied volume that is not billed, "
                                      "unbilled authorised use (firefighting) excluded."),
    ], policy=Policy(), log_answers=False, clock=lambda: D("2026-04-20"))


@pytest.mark.parametrize("text, day", [
    ("as of 31/08/2026", "2026-08-31"),         # day first: 31 is no month
    ("on 08/31/2026", "2026-08-31"),            # month first
    ("the 31.08.2026 close", "2026-08-31"),
    ("for 31-08-2026", "2026-08-31"),
    ("on 2026/08/31", "2026-08-31"),            # year first: the month is second
    ("on 05/05/2026", "2026-05-05"),            # both readings are one day
])
def test_a_numeric_date_that_reads_one_way_is_that_day(text, day):
    assert find_date(text) == D(day)


def test_a_numeric_date_that_reads_two_ways_is_ambiguous_and_an_impossible_one_an_error():
    with pytest.raises(AmbiguousDate) as e:
        find_date("on 08/07/2026")
    assert e.value.readings == (D("2026-08-07"), D("2026-07-08"))
    with pytest.raises(CanonInputError, match="not a real date"):
        find_date("on 31/31/2026")
    # A version or a dotted number is no date.
    assert find_date("release 1.2.2026.4 of the model") is None
    # --as-of names the ambiguity rather than "not a date".
    with pytest.raises(AmbiguousDate, match="month/day/year"):
        parse_as_of("08/07/2026")
    assert parse_as_of("31/08/2026") == D("2026-08-31")


def test_iso_weeks_are_periods_monday_to_sunday():
    for text in ("in 2026-W15", "for W15 2026", "in week 15 of 2026", "ISO week 15, 2026"):
        period, label, edge = temporal.find_period(text)
        assert period == (D("2026-04-06"), D("2026-04-13")) and label == "2026-W15" and edge is None, text
    # "in 2026-W15" is the week, not the year 2026.
    assert temporal.find_period("net revenue in 2026-W15")[1] == "2026-W15"
    with pytest.raises(CanonInputError, match="outside the dates"):
        temporal.find_period("in week 53 of 2025")   # 2025 has 52 ISO weeks


def test_days_counted_back_from_the_clock():
    clock = D("2026-03-31")
    assert temporal.days_ago("three days ago", clock) == D("2026-03-28")
    assert temporal.days_ago("2 weeks ago", clock) == D("2026-03-17")
    assert temporal.days_ago("a fortnight ago", clock) == D("2026-03-17")
    assert temporal.days_ago("a month ago", clock) == D("2026-02-28")   # relativedelta clamps the day
    assert temporal.days_ago("the last 3 days", clock) is None
    assert temporal.relative_period("last week", D("2026-04-20")) == ((D("2026-04-13"), D("2026-04-20")), "2026-W16")


def test_ask_reads_each_form_against_the_revisions(ctx):
    day_first = ask(ctx, "Which non-revenue water definition applied on 31/03/2026?", "analyst")
    assert day_first.action == "answer" and day_first.as_of == D("2026-03-31")
    assert [e.doc_id for e in day_first.evidence] == ["metric.non_revenue_water.v1"]
    # Ambiguous: asked back, each reading with the revision that governs it.
    both = ask(ctx, "Which non-revenue water definition applied on 04/05/2026?", "analyst")
    assert both.action == "clarify" and both.reason == "date_ambiguous"
    assert both.options == [
        {"date": "2026-04-05", "reading": "month/day/year", "evidence_id": "metric.non_revenue_water.v1"},
        {"date": "2026-05-04", "reading": "day/month/year", "evidence_id": "metric.non_revenue_water.v2"}]
    # With a reporting date given, the question's date is not asked about.
    assert ask(ctx, "non-revenue water on 04/05/2026", "analyst", D("2026-03-01")).as_of == D("2026-03-01")
    # The week the definition changed in spans the change; the week after is one revision's.
    assert ask(ctx, "non-revenue water definition for week 15 of 2026", "analyst").reason == "period_spans_change"
    week = ask(ctx, "non-revenue water definition for 2026-W16", "analyst")
    assert week.action == "answer" and [e.doc_id for e in week.evidence] == ["metric.non_revenue_water.v2"]
    # The words of the date ("covers ISO week", "14 days ago") are no part of the object's name.
    covers = ask(ctx, "Which non-revenue water definition covers ISO week 16, 2026?", "analyst")
    assert [e.doc_id for e in covers.evidence] == ["metric.non_revenue_water.v2"]
    fortnight = ask(ctx, "Non-revenue water definition a fortnight ago", "analyst")
    assert fortnight.as_of == D("2026-04-06") and [e.doc_id for e in fortnight.evidence] == ["metric.non_revenue_water.v1"]
    ago = ask(ctx, "How was non-revenue water defined three weeks ago?", "analyst")
    assert ago.as_of == D("2026-03-30") and [e.doc_id for e in ago.evidence] == ["metric.non_revenue_water.v1"]
    last = ask(ctx, "non-revenue water definition last week", "analyst")
    assert last.action == "answer" and [e.doc_id for e in last.evidence] == ["metric.non_revenue_water.v2"]
