""""Late" inside a question about a definition's criteria, in a domain no gold set uses: a
school bus contractor.

"Does the on-time arrival rate allow buses 5 minutes late?" was read as a freshness question
("late" is a freshness word): undated it was answered with the freshness snapshot's SLA figures,
dated it abstained `no_observation`. A verb of a rule admitting or classing things ("allow",
"permit", "count … as", "treat … as") asks about the definition's criteria, and a duration
before "late" ("6 minutes late") says how late a counted thing is, unless the question is about
data ("is the GPS data 3 hours late?"; canon/ask/understanding/parse.py, `_CRITERIA_VERBS`,
`_DURATION_LATE`). So do a limit the rule sets ("how late can a run arrive before …",
`_LATE_LIMIT`) and a rule that stops counting a thing ("stop counting as", `CRITERIA_WORDS`)."""

from __future__ import annotations

import functools

import pytest
from corpus_context import governed_doc, metric_revision, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.parse import detect_intents

revision = functools.partial(metric_revision, "schoolbus.on_time_arrival_rate", "metric.schoolbus.on_time_arrival_rate",
                             "on-time arrival rate")

SNAPSHOT = "freshness.schoolbus.gps_loads.2026-05-04T0700Z"

DOCS = [
    revision("1", "2025-01-01", "2026-01-01", "Share of school runs arriving no later than the bell."),
    revision("2", "2026-01-01", None, "Share of school runs arriving no more than 5 minutes after the bell; runs "
                                      "cancelled for weather are left out."),
    governed_doc("schoolbus.seat_utilisation.v1", "metric.schoolbus.seat_utilisation",
                 "Seat utilisation governed definition v1",
                 "Governed metric seat utilisation version 1. Pupils boarded divided by seats on the run."),
    {"doc_id": SNAPSHOT, "object_id": "freshness.schoolbus.gps_loads", "kind": "freshness_snapshot",
     "title": "School bus GPS raw loads freshness snapshot 2026-05-04 07:00 UTC", "status": "observed",
     "authority": 90, "version": "2026-05-04T07:00:00Z", "valid_from": "2026-05-04", "valid_to": "2026-05-05",
     "allowed_roles": ["analyst"], "supersedes": None, "content_hash": f"sha256:{SNAPSHOT}",
     "text": "Observed at 2026-05-04T07:00:00Z. raw.gps.bus_pings max_loaded_at 2026-05-04T06:55:00Z, SLA 15 minutes."},
]

ctx = module_context("schoolbus", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("Does the on-time arrival rate allow buses 5 minutes late on 2026-05-04?", "schoolbus.on_time_arrival_rate.v2"),
    ("Do we count 5 minutes late as on time in the on-time arrival rate for 2025-10-01?",
     "schoolbus.on_time_arrival_rate.v1"),
    ("Is a run 4 minutes late on time in the on-time arrival rate for 2026-03-02?", "schoolbus.on_time_arrival_rate.v2"),
    ("Does the on-time arrival rate treat runs 3 minutes late as on time on 2026-02-01?",
     "schoolbus.on_time_arrival_rate.v2"),
    # a limit the rule sets ("how late can …"), a rule stopping to count a thing ("counting as")
    ("How late can a run arrive before it drops out of the on-time arrival rate on 2026-05-04?",
     "schoolbus.on_time_arrival_rate.v2"),
    ("When does a late run stop counting as on time in the on-time arrival rate for 2026-05-04?",
     "schoolbus.on_time_arrival_rate.v2"),
    # weeks and months are durations too (airport / charity probe: "shifts logged 3 weeks late")
    ("Do runs logged 2 weeks late count in the on-time arrival rate for 2026-05-04?",
     "schoolbus.on_time_arrival_rate.v2"),
])
def test_late_in_a_criteria_question_asks_for_the_definition(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason,
                                                                      [e.doc_id for e in r.evidence])


def test_undated_it_asks_for_the_date_not_the_snapshot(ctx):
    r = ask(ctx, "Does the on-time arrival rate allow buses 5 minutes late?", "analyst")
    assert (r.action, r.reason) == ("clarify", "date_required"), (r.action, r.reason, [e.doc_id for e in r.evidence])


@pytest.mark.parametrize("question", [
    "Is the school bus GPS data 3 hours late on 2026-05-04?",
    "Is the school bus GPS data fresh on 2026-05-04?",
])
def test_late_data_is_still_freshness(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "calculate" and r.evidence[0].doc_id == SNAPSHOT, (question, r.action, r.reason)


def test_intents():
    assert "freshness" not in detect_intents("does the rate allow buses 5 minutes late?")
    assert "freshness" not in detect_intents("is a run 4 minutes late on time?")
    assert "freshness" in detect_intents("is the gps data 3 hours late?")
    assert "freshness" in detect_intents("are the bus loads late today?")
    assert "freshness" not in detect_intents("how late can a run arrive before it drops out of the rate?")
    assert "freshness" in detect_intents("how late can the GPS data be?")
