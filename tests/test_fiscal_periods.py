"""Fiscal periods. "Which definition applied in fiscal Q1 2027?" was read as the calendar's
Q1 2027 (January to March 2027) and answered from the revision in force then: a confident
wrong-version answer for any organisation whose fiscal year is not the calendar year. "FY2026",
"Q1 FY27", "last fiscal year" were asked back as a bare "which reporting date?", and "the
current fiscal year" was read as today. Now the configuration's `calendar` keys say when the
fiscal year starts and which year names it (canon/core/fiscal_calendar.py); fiscal phrases are
read in it (canon/ask/understanding/fiscal_periods.py) like calendar periods are (edges,
relations, the period a value is computed over); without the keys a fiscal period is asked back,
naming the key, never read as a calendar period.

A retail domain no gold set uses: the fiscal year starts in February and is named by the year it
ends in (FY2027 is 2026-02-01 to 2027-01-31). The sell-through rate changed on 2026-05-01, the
first day of Q2 FY2027."""

from __future__ import annotations

import datetime as dt
import functools

import pytest
from corpus_context import metric_revision, module_context

from canon.ask.context import ask_context
from canon.ask.pipeline import ask
from canon.ask.understanding.fiscal_periods import find_fiscal
from canon.core.fiscal_calendar import FiscalCalendar

V1, V2 = "metric.sell_through_rate.v1", "metric.sell_through_rate.v2"
TODAY = dt.date(2026, 12, 4)            # in Q4 FY2027 (2026-11-01 to 2027-01-31)
RETAIL = FiscalCalendar(2, "end")


revision = functools.partial(metric_revision, "metric.sell_through_rate", "metric.retail.sell_through_rate", "sell-through rate")


DOCS = [
    revision("1", "2025-01-01", "2026-05-01", "The sell-through rate is units sold over units received in the "
             "fiscal month, per store."),
    revision("2", "2026-05-01", None, "The sell-through rate is units sold over units received plus opening "
             "stock in the fiscal month, per store; transfers between stores are excluded."),
]

_ctx = module_context("retail_fiscal", DOCS)


@pytest.fixture()
def ctx(_ctx):
    """The module's context with the retailer's calendar and clock; both put back after the test."""
    calendar, clock = _ctx.calendar, _ctx.clock
    _ctx.calendar, _ctx.clock = RETAIL, (lambda: TODAY)
    yield _ctx
    _ctx.calendar, _ctx.clock = calendar, clock


def primary(resp) -> str:
    return resp.evidence[0].doc_id if resp.evidence else ""


# ---------------------------------------------------------------- the calendar's arithmetic

@pytest.mark.parametrize("calendar, fy, start, end", [
    (FiscalCalendar(2, "end"), 2027, "2026-02-01", "2027-02-01"),
    (FiscalCalendar(2, "start"), 2027, "2027-02-01", "2028-02-01"),
    (FiscalCalendar(7, "end"), 2027, "2026-07-01", "2027-07-01"),
    (FiscalCalendar(10, "end"), 2026, "2025-10-01", "2026-10-01"),
    (FiscalCalendar(1), 2026, "2026-01-01", "2027-01-01"),
    (FiscalCalendar(1, "start"), 2026, "2026-01-01", "2027-01-01"),
])
def test_a_fiscal_year_is_the_twelve_months_its_calendar_names(calendar, fy, start, end):
    assert calendar.year(fy) == (dt.date.fromisoformat(start), dt.date.fromisoformat(end))
    assert calendar.fiscal_year_of(dt.date.fromisoformat(start)) == fy
    assert calendar.fiscal_year_of(dt.date.fromisoformat(end) - dt.timedelta(days=1)) == fy
    assert calendar.fiscal_year_of(dt.date.fromisoformat(end)) == fy + 1


def test_quarters_and_halves_count_from_the_fiscal_years_first_month():
    jul = FiscalCalendar(7, "end")
    assert jul.quarter(2027, 3) == (dt.date(2027, 1, 1), dt.date(2027, 4, 1))
    assert jul.half(2027, 2) == (dt.date(2027, 1, 1), dt.date(2027, 7, 1))
    assert jul.quarter_of(dt.date(2026, 12, 31)) == (2027, 2)
    assert jul.quarter_of(dt.date(2027, 6, 30)) == (2027, 4)
    assert RETAIL.quarter_of(dt.date(2027, 1, 31)) == (2027, 4)
    assert RETAIL.half_of(dt.date(2026, 8, 1)) == (2027, 2)


@pytest.mark.parametrize("month, named_by", [(0, "end"), (13, "end"), (7, "middle")])
def test_a_calendar_that_cannot_be_is_refused(month, named_by):
    with pytest.raises(ValueError):
        FiscalCalendar(month, named_by)


# ---------------------------------------------------------------- the phrases

@pytest.mark.parametrize("text, label, start, end", [
    ("for FY2027", "FY2027", "2026-02-01", "2027-02-01"),
    ("in FY27", "FY2027", "2026-02-01", "2027-02-01"),
    ("in FY '27", "FY2027", "2026-02-01", "2027-02-01"),
    ("during fiscal 2026", "FY2026", "2025-02-01", "2026-02-01"),
    ("for fiscal year 2026", "FY2026", "2025-02-01", "2026-02-01"),
    ("over the 2027 fiscal year", "FY2027", "2026-02-01", "2027-02-01"),
    ("for FY2026/27", "FY2026/27", "2026-02-01", "2027-02-01"),
    ("for fiscal year 2025-26", "FY2025/26", "2025-02-01", "2026-02-01"),
    ("in Q1 FY2027", "Q1 FY2027", "2026-02-01", "2026-05-01"),
    ("in FY27 Q2", "Q2 FY2027", "2026-05-01", "2026-08-01"),
    ("in FY27Q3", "Q3 FY2027", "2026-08-01", "2026-11-01"),
    ("in fiscal Q4 2027", "Q4 FY2027", "2026-11-01", "2027-02-01"),
    ("in the third quarter of fiscal 2027", "Q3 FY2027", "2026-08-01", "2026-11-01"),
    ("in the second fiscal quarter of 2027", "Q2 FY2027", "2026-05-01", "2026-08-01"),
    ("in H2 FY27", "H2 FY2027", "2026-08-01", "2027-02-01"),
    ("in the first half of FY2027", "H1 FY2027", "2026-02-01", "2026-08-01"),
    ("last fiscal year", "FY2026", "2025-02-01", "2026-02-01"),
    ("this fiscal quarter", "Q4 FY2027", "2026-11-01", "2027-02-01"),
    ("the previous fiscal quarter", "Q3 FY2027", "2026-08-01", "2026-11-01"),
    ("next fiscal half", "H1 FY2028", "2027-02-01", "2027-08-01"),
])
def test_fiscal_phrases_are_read_in_the_calendar(text, label, start, end):
    found = find_fiscal(text, RETAIL, TODAY)
    assert len(found) == 1 and found[0].label == label, (text, found)
    assert found[0].period == (dt.date.fromisoformat(start), dt.date.fromisoformat(end)), (text, found[0].period)


@pytest.mark.parametrize("text", ["the FYI 2027 note", "fiscal policy in 2027", "FY2026-2028 plan", "Q3 2026",
                                  "the year 2027", "a fiscal year"])
def test_words_that_name_no_fiscal_period(text):
    assert find_fiscal(text, RETAIL, TODAY) == []


def test_without_a_calendar_a_fiscal_period_is_found_but_not_placed():
    (found,) = find_fiscal("sell-through in fiscal Q3 2026", None, TODAY)
    assert found.period is None and found.phrase == "fiscal Q3 2026" and "no fiscal calendar" in found.problem


def test_a_split_year_is_no_fiscal_year_of_a_calendar_year_calendar():
    (found,) = find_fiscal("for FY2025/26", FiscalCalendar(1), TODAY)
    assert found.period is None and "two calendar years" in found.problem


# ---------------------------------------------------------------- through ask

@pytest.mark.parametrize("question, doc_id, as_of", [
    # Fiscal Q1 2027 is February to April 2026 (v1), not the calendar's January to March 2027 (v2).
    ("Which sell-through rate definition applied in fiscal Q1 2027?", V1, "2026-04-30"),
    ("How was sell-through rate defined for Q1 FY27?", V1, "2026-04-30"),
    ("sell-through rate definition in FY2027 Q2", V2, "2026-07-31"),
    ("What did the sell-through rate mean over the third quarter of fiscal 2027?", V2, "2026-10-31"),
    ("Which sell-through rate definition governed FY2026?", V1, "2026-01-31"),
    ("sell-through rate definition for fiscal year 2025-26", V1, "2026-01-31"),
    ("How was the sell-through rate defined last fiscal year?", V1, "2026-01-31"),
    ("sell-through rate definition this fiscal quarter", V2, "2027-01-31"),
])
def test_a_fiscal_period_one_revision_governs_is_answered_with_it(ctx, question, doc_id, as_of):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and primary(resp) == doc_id, (question, resp.action, resp.reason, primary(resp))
    assert resp.as_of == dt.date.fromisoformat(as_of), (question, resp.as_of)


@pytest.mark.parametrize("question, doc_id, as_of", [
    ("Which sell-through rate definition applied at the end of Q1 FY2027?", V1, "2026-04-30"),
    ("sell-through rate definition at the start of Q2 FY2027", V2, "2026-05-01"),
    ("How was sell-through rate defined before Q2 FY27?", V1, "2026-04-30"),
    ("sell-through rate definition after fiscal Q1 2027", V2, "2026-05-01"),
    ("Which sell-through rate definition applied at the end of last fiscal quarter?", V2, "2026-10-31"),
    ("sell-through rate definition on the first day of this fiscal year", V1, "2026-02-01"),
])
def test_the_edge_of_a_fiscal_period_or_a_relation_to_it_is_a_day(ctx, question, doc_id, as_of):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and primary(resp) == doc_id, (question, resp.action, resp.reason, primary(resp))
    assert resp.as_of == dt.date.fromisoformat(as_of), (question, resp.as_of)


@pytest.mark.parametrize("question, label", [
    ("Which sell-through rate definition applies in FY2027?", "FY2027"),
    ("How is the sell-through rate defined in the current fiscal year?", "FY2027"),
    ("sell-through rate definition for H1 FY2027", "H1 FY2027"),
])
def test_a_fiscal_period_spanning_the_change_lists_each_revision(ctx, question, label):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "clarify" and resp.reason == "period_spans_change", (question, resp.action, resp.reason)
    assert {o["evidence_id"] for o in resp.options} == {V1, V2} and label in resp.answer, resp.answer


def test_a_value_over_a_fiscal_quarter_is_over_its_days(ctx):
    resp = ask(ctx, "What was the sell-through rate in Q2 FY2027?", "analyst")
    assert resp.action == "abstain" and resp.reason == "no_semantic_layer", (resp.action, resp.reason)
    assert primary(resp) == V2 and "Q2 FY2027" in resp.answer, (primary(resp), resp.answer)


@pytest.mark.parametrize("question, phrase", [
    ("Which sell-through rate definition applied in fiscal Q1 2027?", "fiscal Q1 2027"),
    ("How was sell-through rate defined for FY2026?", "FY2026"),
    ("sell-through rate definition at the end of FY2026", "FY2026"),
    ("How was the sell-through rate defined last fiscal year?", "last fiscal year"),
    ("sell-through rate definition in the current fiscal year", "current fiscal year"),
])
def test_without_a_calendar_a_fiscal_period_is_asked_back(_ctx, question, phrase):
    assert _ctx.calendar is None   # the module's context as built: no configuration names a calendar
    resp = ask(_ctx, question, "analyst")
    assert resp.action == "clarify" and resp.reason == "date_required", (question, resp.action, resp.reason)
    assert {o["evidence_id"] for o in resp.options} == {V1, V2}
    assert phrase in resp.answer and "calendar.fiscal_year_start" in resp.answer, resp.answer


def test_a_calendar_year_question_is_unchanged_by_a_fiscal_calendar(ctx):
    resp = ask(ctx, "Which sell-through rate definition applied in Q1 2027?", "analyst")
    assert resp.action == "answer" and primary(resp) == V2 and resp.as_of == dt.date(2027, 3, 31), (
        resp.action, primary(resp), resp.as_of)


def test_the_context_reads_the_configured_calendar(monkeypatch, tmp_path, _ctx):
    (tmp_path / "docs").mkdir()
    (tmp_path / "canon.yml").write_text("documents: [docs]\ncalendar: {fiscal_year_start: February}\n")
    monkeypatch.setenv("CANON_CONFIG", str(tmp_path / "canon.yml"))
    for var in ("CANON_HOME", "CANON_CORPUS", "CANON_POLICY"):
        monkeypatch.delenv(var, raising=False)
    configured = ask_context(_ctx.con, tmp_path / "no_index", _ctx.docs, _ctx.policy, log_answers=False)
    assert configured.calendar == RETAIL
    configured.clock = lambda: TODAY
    resp = ask(configured, "Which sell-through rate definition applied in fiscal Q1 2027?", "analyst")
    assert resp.action == "answer" and primary(resp) == V1, (resp.action, resp.reason, primary(resp))


def test_doctor_says_the_calendar(monkeypatch, tmp_path):
    from canon.cli.doctor import diagnose, render

    (tmp_path / "docs").mkdir()
    for var in ("CANON_HOME", "CANON_CORPUS", "CANON_POLICY"):
        monkeypatch.delenv(var, raising=False)
    (tmp_path / "canon.yml").write_text("documents: [docs]\n")
    monkeypatch.setenv("CANON_CONFIG", str(tmp_path / "canon.yml"))
    assert "calendar       no fiscal year configured (calendar.fiscal_year_start): fiscal periods are asked back" \
        in render(diagnose()[0])
    (tmp_path / "with.yml").write_text("documents: [docs]\ncalendar: {fiscal_year_start: feb}\n")
    monkeypatch.setenv("CANON_CONFIG", str(tmp_path / "with.yml"))
    report, problems = diagnose()
    assert not problems and report["calendar"]["fiscal_year_start"] == 2
    assert "calendar       fiscal years start on February 1 and are named by the calendar year they end in" \
        in render(report)
