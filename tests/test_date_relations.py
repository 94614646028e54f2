"""Dates in relation and in ranges. "The definition before April 2026", "prior to 2026-04-01",
"pre-April 2026" were read as April itself and answered from the revision in force then: a
confident wrong-version answer. Ranges ("between 2026-03-15 and 2026-04-15", "July–September
2026", "2026-07-01 to 2026-09-30", "Feb-Mar 2026", "the week of 2026-03-30") were read as their
first date or their last month, and a value question over one was calculated for a day or a
month only. "Before v2", "the definition v2 replaced", "after version 1" selected the version
named instead of its neighbour. "Last month" with `--as-of` was read as the as-of day instead of
the month before it, and "the end of last quarter" or "the first day of this year" as the whole
period instead of its edge, a day. (canon/ask/understanding/temporal.py `read_time`, `find_range`,
`find_relation`; canon/ask/revisions.py `pick`.)

An insurance domain no gold set uses, through the real pipeline: the contract gate, a LanceDB
index (HashingEmbedder), ask. The claim settlement rate changed on 2026-04-01."""

from __future__ import annotations

import datetime as dt
import functools

import pytest
from corpus_context import metric_revision, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.temporal import find_period, find_range, read_time
from canon.core.dates import find_date

V1, V2 = "metric.claim_settlement_rate.v1", "metric.claim_settlement_rate.v2"
TODAY = dt.date(2026, 12, 4)


revision = functools.partial(metric_revision, "metric.claim_settlement_rate", "metric.insurance.claim_settlement_rate", "claim settlement rate")


DOCS = [
    revision("1", "2025-01-01", "2026-04-01", "The claim settlement rate is the share of claims closed with a "
             "payment within 30 days of first notice of loss, over all claims closed in the month."),
    revision("2", "2026-04-01", None, "The claim settlement rate is the share of claims closed with a payment "
             "within 20 business days of first notice of loss, over all claims closed in the month; withdrawn "
             "claims are excluded."),
]

ctx = module_context("insurance", DOCS)


def primary(resp) -> str:
    return resp.evidence[0].doc_id if resp.evidence else ""


@pytest.mark.parametrize("question, doc_id, as_of", [
    ("How was the claim settlement rate defined before April 2026?", V1, "2026-03-31"),
    ("claim settlement rate definition prior to 2026-04-01", V1, "2026-03-31"),
    ("Show me the pre-April 2026 claim settlement rate definition", V1, "2026-03-31"),
    ("Which claim settlement rate definition applied until the end of March 2026?", V1, "2026-03-31"),
    ("claim settlement rate definition after March 2026", V2, "2026-04-01"),
    ("Which claim settlement rate definition applied after 2026-03-31?", V2, "2026-04-01"),
])
def test_before_and_after_a_date_select_the_revision_on_that_side(ctx, question, doc_id, as_of):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert primary(resp) == doc_id and resp.as_of == dt.date.fromisoformat(as_of), (question, primary(resp), resp.as_of)


@pytest.mark.parametrize("question, doc_id", [
    ("claim settlement rate definition from 2026-05-01 to 2026-08-31", V2),
    ("claim settlement rate definition for July–September 2026", V2),
    ("claim settlement rate definition Feb-Mar 2026", V1),
    ("claim settlement rate definition between 1 January 2026 and 15 March 2026", V1),
])
def test_a_range_one_revision_governs_is_answered_with_it(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and primary(resp) == doc_id, (question, resp.action, resp.reason, primary(resp))


@pytest.mark.parametrize("question", [
    "claim settlement rate definition between 2026-03-15 and 2026-04-15",
    "Which claim settlement rate definition applies for March 2026 - May 2026?",
    "claim settlement rate definition for the week of 2026-03-30",
    "How was the claim settlement rate defined from 03/15/2026 to 04/15/2026?",
])
def test_a_range_that_spans_the_change_is_asked_back(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "clarify" and resp.reason == "period_spans_change", (question, resp.action, resp.reason)
    assert [o["evidence_id"] for o in resp.options] == [V1, V2]


@pytest.mark.parametrize("question, doc_id", [
    ("What did the claim settlement rate mean prior to v2?", V1),
    ("Show me the claim settlement rate definition that v2 replaced", V1),
    ("claim settlement rate before version 2", V1),
    ("Which claim settlement rate definition came after version 1?", V2),
    ("What replaced claim settlement rate v1?", V2),
])
def test_a_version_named_in_relation_selects_its_neighbour(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and primary(resp) == doc_id, (question, resp.action, resp.reason, primary(resp))


def test_there_is_no_revision_before_the_first(ctx):
    resp = ask(ctx, "What was the claim settlement rate definition before v1?", "analyst")
    assert resp.action == "clarify" and resp.reason == "version_not_found", (resp.action, resp.reason)


@pytest.mark.parametrize("question, as_of, doc_id", [
    ("claim settlement rate definition last month", dt.date(2026, 4, 15), V1),     # March 2026
    ("claim settlement rate definition last quarter", dt.date(2026, 7, 15), V2),   # Q2 2026
    ("claim settlement rate definition this month", dt.date(2026, 3, 10), V1),
])
def test_a_relative_period_counts_from_as_of(ctx, question, as_of, doc_id):
    resp = ask(ctx, question, "analyst", as_of=as_of)
    assert resp.action == "answer" and primary(resp) == doc_id, (question, resp.action, resp.reason, primary(resp))


@pytest.mark.parametrize("question, doc_id", [
    ("claim settlement rate definition at the start of this year", V1),
    ("which claim settlement rate definition applied on the first day of this year?", V1),
    ("claim settlement rate definition at the end of this year", V2),
    ("which claim settlement rate definition applied on the last day of this year?", V2),
    ("which claim settlement rate definition was in force at the end of last year?", V1),
])
def test_the_edge_of_a_relative_period_is_a_day(ctx, question, doc_id):
    # "This year" spans the change on 2026-04-01 (asked back, below); its first and last days do not.
    resp = ask(ctx, question, "analyst", as_of=dt.date(2026, 8, 15))
    assert resp.action == "answer" and primary(resp) == doc_id, (question, resp.action, resp.reason, primary(resp))


@pytest.mark.parametrize("text, day", [
    ("on the last day of Q2 2026", "2026-06-30"),
    ("the final day of 2026-03", "2026-03-31"),
    ("the first day of July 2026", "2026-07-01"),
    ("at the end of June 2026", "2026-06-30"),
])
def test_the_first_or_last_day_of_a_named_period_is_a_day(text, day):
    period, _, edge = find_period(text)
    assert period is None and edge is not None and edge.isoformat() == day, (text, period, edge)


def test_a_relative_period_across_the_change_is_asked_back(ctx):
    resp = ask(ctx, "claim settlement rate definition this year", "analyst", as_of=dt.date(2026, 8, 15))
    assert resp.action == "clarify" and resp.reason == "period_spans_change", (resp.action, resp.reason)


@pytest.mark.parametrize("text, period", [
    ("net revenue for July–September 2026", ("2026-07-01", "2026-10-01")),
    ("net revenue Jul-Sep 2026", ("2026-07-01", "2026-10-01")),
    ("net revenue July 2026 - September 2026", ("2026-07-01", "2026-10-01")),
    ("net revenue for 2026-07-01 to 2026-09-30", ("2026-07-01", "2026-10-01")),
    ("net revenue from June 15, 2026 through July 14, 2026", ("2026-06-15", "2026-07-15")),
    ("net revenue between November 2025 and February 2026", ("2025-11-01", "2026-03-01")),
    ("the week of 2026-03-30", ("2026-03-30", "2026-04-06")),
    ("the week of Wednesday 2026-04-01", ("2026-03-30", "2026-04-06")),
])
def test_ranges_are_read_whole(text, period):
    found = find_range(text)
    assert found is not None, text
    assert (found[0][0].isoformat(), found[0][1].isoformat()) == period


@pytest.mark.parametrize("text", [
    "net revenue for July 2026",                       # one month: a period, not a range
    "what changed between v1 and v2",
    "orders from 2026-07-01",                           # one date
    "the 2025-2026 season",                             # years are no month range
])
def test_no_range_where_there_is_none(text):
    assert find_range(text) is None


def test_a_value_over_a_range_is_over_the_whole_range():
    t = read_time("What was net revenue for Jul-Sep 2026?", "what was # for jul sep 2026", None, TODAY, find_date)
    assert t.period == (dt.date(2026, 7, 1), dt.date(2026, 10, 1)) and t.day is None


@pytest.mark.parametrize("question", [
    "Today I'm reconciling March 2026: which claim settlement rate definition applies?",
    "For the March 2026 close that we're redoing today, how is the claim settlement rate defined?",
    "Did the claim settlement rate exclude withdrawn claims in March 2026, or is that only now?",
    "I know the new claim settlement rate excludes withdrawn claims, but what was the rule on 2026-03-01?",
])
def test_a_date_named_outright_wins_over_a_relative_word(ctx, question):
    """"today", "now", "the new …" beside March 2026 answered from the revision in force today."""
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer", (question, resp.action, resp.reason)
    assert primary(resp) == V1, (question, primary(resp))


@pytest.mark.parametrize("question, doc_id", [
    ("claim settlement rate definition for Mar '26", V1),
    ("How is the claim settlement rate defined for Sept ’26?", V2),
])
def test_a_month_with_a_two_digit_year(ctx, question, doc_id):
    """"Aug '26" was no date: the question was asked back for one."""
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and primary(resp) == doc_id, (question, resp.action, resp.reason)
