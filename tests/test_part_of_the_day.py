"""A freshness question that names a part of the day ("the morning snapshot", "fresh in the
evening of 2026-03-09") was answered from the day's newest snapshot, whatever its time: the
word was read as nothing. A part of the day is read as UTC hours (canon/ask/understanding/
parse.py `DAY_PARTS`, `find_day_part`): on a date, the newest snapshot observed by the part's
end; with no date, one observed in that part of some day (canon/ask/pipeline.py
`_pick_snapshot`). A greeting ("Good morning!") and a word of a governed name ("evening peak
demand") name no time.

A water-utility domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import datetime as dt

import pytest
from corpus_context import governed_doc, module_context, snapshot_doc

from canon.ask.pipeline import ask
from canon.ask.understanding.parse import find_day_part, parse_question

DAY = dt.date(2026, 3, 9)


def snapshot(doc_id: str, observed: str, readings: str) -> dict:
    return snapshot_doc(doc_id, "freshness.water.non_revenue_water",
                        f"Water network raw loads freshness snapshot {observed[:10]} {observed[11:16]} UTC",
                        observed, readings, valid_to="2026-03-11")


EARLY, LATE, NEXT_NIGHT = ("freshness.water.2026-03-09T0630Z", "freshness.water.2026-03-09T1930Z",
                           "freshness.water.2026-03-10T0200Z")
DOCS = [
    governed_doc("metric.non_revenue_water.v1", "metric.water.non_revenue_water",
                 "Non-revenue water governed definition v1",
                 "Governed metric non-revenue water version 1. Non-revenue water is the share of water put into "
                 "the network that is never billed: leaks, theft and metering error. Raw sources are "
                 "raw.scada.flow_reads and raw.billing.consumption."),
    governed_doc("metric.evening_peak_demand.v1", "metric.water.evening_peak_demand",
                 "Evening peak demand governed definition v1",
                 "Governed metric evening peak demand version 1. The largest hourly draw between 17:00 and 22:00."),
    snapshot(EARLY, "2026-03-09T06:30:00Z", "raw.scada.flow_reads max_loaded_at 2026-03-09T06:10:00Z, SLA 1 hours. "
             "raw.billing.consumption max_loaded_at 2026-03-08T23:00:00Z, SLA 24 hours."),
    snapshot(LATE, "2026-03-09T19:30:00Z", "raw.scada.flow_reads max_loaded_at 2026-03-09T15:00:00Z, SLA 1 hours. "
             "raw.billing.consumption max_loaded_at 2026-03-09T12:00:00Z, SLA 24 hours."),
    snapshot(NEXT_NIGHT, "2026-03-10T02:00:00Z", "raw.scada.flow_reads max_loaded_at 2026-03-10T01:50:00Z, SLA 1 "
             "hours. raw.billing.consumption max_loaded_at 2026-03-09T12:00:00Z, SLA 24 hours."),
]

ctx = module_context("water", DOCS)


@pytest.mark.parametrize("question, as_of, doc_id", [
    ("Was non-revenue water data fresh in the morning snapshot?", DAY, EARLY),
    ("Were the non-revenue water sources fresh on the morning of 2026-03-09?", None, EARLY),
    ("Was non-revenue water fresh in the afternoon of 2026-03-09?", None, EARLY),    # newest by 17:00
    ("Was non-revenue water fresh in the evening snapshot on 9 March 2026?", None, LATE),
    ("Non-revenue water freshness on the night of 2026-03-09", None, NEXT_NIGHT),
    ("Were non-revenue water sources fresh in the morning load?", None, EARLY),     # no date: any morning
])
def test_a_part_of_the_day_picks_the_snapshot_observed_by_then(ctx, question, as_of, doc_id):
    resp = ask(ctx, question, "analyst", as_of=as_of)
    assert resp.action == "calculate", (question, resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence] == [doc_id], question


def test_a_greeting_names_no_time(ctx):
    resp = ask(ctx, "Good morning! Were the non-revenue water sources fresh?", "analyst", as_of=DAY)
    assert [e.doc_id for e in resp.evidence] == [LATE]


def test_a_word_of_a_governed_name_is_no_time(ctx):
    assert parse_question("Is evening peak demand data fresh?", ctx.catalog).day_part is None
    assert parse_question("Is non-revenue water data fresh this evening?", ctx.catalog).day_part == (
        dt.time(17), dt.time(22))


def test_the_parts_of_the_day():
    assert find_day_part("the morning snapshot") == (dt.time(5), dt.time(12))
    assert find_day_part("last night's load") == (dt.time(22), dt.time(5))
    assert find_day_part("were sources fresh") is None
