""""What do we do when <metric> …?" and "<runbook>: <question>?", in a domain no gold set uses:
a ferry operator.

A question that asks what to do (who to escalate to, when to act) about a metric asks for the
approved runbook that covers the metric, not for the metric's definition. Before, the metric's
name won: the definition was the answer, or the question was asked back for a date because the
definition changed. A runbook named before a colon and followed by the user's own question
("cancellation runbook: who do we escalate to …?") is asked about, as "according to the
runbook, …?" is (canon/ask/understanding/named_sources.py, `NamedSource.asked`;
canon/ask/pipeline.py, `_procedure_runbook`; canon/ask/understanding/parse.py, `asks_procedure`)."""

from __future__ import annotations

import datetime as dt
import functools

import pytest
from corpus_context import governed_doc, metric_revision, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.named_sources import extract_named_sources
from canon.ask.understanding.parse import asks_procedure, parse_question

revision = functools.partial(metric_revision, "ferry.sailing_cancellation_rate", "metric.ferry.sailing_cancellation_rate",
                             "sailing cancellation rate")

WEATHER = "runbook.ferry.weather_disruption"
DECK = "runbook.ferry.vehicle_deck_loading"

DOCS = [
    revision("1", "2025-01-01", "2026-04-01", "Share of scheduled sailings cancelled for any reason."),
    revision("2", "2026-04-01", None, "Share of scheduled sailings cancelled less than 24 hours before departure."),
    governed_doc("ferry.vehicle_deck_utilisation.v1", "metric.ferry.vehicle_deck_utilisation",
                 "Vehicle deck utilisation governed definition v1",
                 "Governed metric vehicle deck utilisation version 1. Lane metres occupied by vehicles divided by "
                 "lane metres available on the sailing."),
    governed_doc("ferry.passenger_count.v1", "metric.ferry.passenger_count", "Passenger count governed definition v1",
                 "Governed metric passenger count version 1. Passengers boarded per sailing from gate scans."),
    governed_doc(WEATHER, WEATHER, "Weather disruption runbook",
                 "When the sailing cancellation rate of a route exceeds 15 percent in a day, escalate to the "
                 "duty fleet manager and publish the disruption notice. Rebook foot passengers onto the next "
                 "sailing. Confirm raw.ferry.departures loaded within its 1-hour SLA before publishing the sailing "
                 "cancellation rate.", kind="runbook", valid_from="2026-03-01"),
    governed_doc(DECK, DECK, "Vehicle deck loading runbook",
                 "When vehicle deck utilisation passes 95 percent at check-in, close online sales for the sailing "
                 "and page the loading master.", kind="runbook"),
]

ctx = module_context("ferry", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    # the metric changed definition on 2026-04-01: no date is asked, the runbook is the answer
    ("What do we do when the sailing cancellation rate of a route passes 15 percent?", WEATHER),
    ("who do we escalate to when the sailing cancellation rate spikes?", WEATHER),
    ("What should I do if vehicle deck utilisation is above 95 percent at check-in?", DECK),
    ("How do we handle a vehicle deck utilisation over 95 percent?", DECK),
    # "behind last year" is what the figure is measured against, not the day asked about (the
    # runbook is in effect from 2026-03-01: read as 2025, no approved revision would govern)
    ("What do we do when the sailing cancellation rate is 5 points higher than last year?", WEATHER),
    # a step that must come before publishing the metric: the runbook's, not the data's freshness now
    ("Which table must have loaded before we publish the sailing cancellation rate?", WEATHER),
    ("before publishing the sailing cancellation rate, which table has to be loaded?", WEATHER),
    # a runbook named before a colon, then the user's own question
    ("weather disruption runbook: who do we escalate to when the sailing cancellation rate passes 15 percent?",
     WEATHER),
    ("deck loading runbook: when do we close online sales?", DECK),
    # telling or warning someone is a step too (airport / charity probe: "when do we tell the
    # finance director about a failed direct debit run?" went to an unrelated metric)
    ("when do we tell the loading master that online sales are closed?", DECK),
])
def test_a_procedure_is_answered_from_the_runbook(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer", (question, r.action, r.reason)
    assert [(e.doc_id, e.use) for e in r.evidence][0] == (doc_id, "primary")


@pytest.mark.parametrize("question, doc_id", [
    # asking what a metric is called, counts or means is no procedure
    ("What do we call the lane metres occupied by vehicles divided by the lane metres available?",
     "ferry.vehicle_deck_utilisation.v1"),
    ("How is the sailing cancellation rate defined on 2026-06-01?", "ferry.sailing_cancellation_rate.v2"),
    # an acting verb beside a word naming the definition asks for the definition
    ("Which sailing cancellation rate definition do we publish for June 2026?", "ferry.sailing_cancellation_rate.v2"),
    # a procedure about a metric no runbook covers: the runbooks about other metrics are not it
    ("What do we do when the passenger count of a sailing is over capacity?", "ferry.passenger_count.v1"),
])
def test_other_questions_keep_the_metric(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.evidence and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason, [e.doc_id for e in r.evidence])


def test_freshness_asked_without_a_step_is_no_procedure(ctx):
    r = ask(ctx, "Is the sailing cancellation rate data fresh on 2026-06-01?", "analyst")
    assert not any(e.doc_id == WEATHER for e in r.evidence), (r.action, r.reason, [e.doc_id for e in r.evidence])


def test_procedure_wording():
    assert asks_procedure("What do we do when the cancellation rate spikes?")
    assert asks_procedure("Who should I escalate to if the rate passes 15 percent?")
    assert asks_procedure("What steps do we take when the deck is full?")
    assert not asks_procedure("What do we call the share of sailings cancelled?")
    assert not asks_procedure("What do we count as a cancelled sailing?")
    assert not asks_procedure("How is the cancellation rate defined?")
    assert asks_procedure("Which table must have loaded before we publish the cancellation rate?")
    assert not asks_procedure("Which cancellation rate definition applies before we publish June?")
    assert asks_procedure("When do we tell the duty manager about a cancelled sailing?")
    assert not asks_procedure("What does the old wiki tell us about the cancellation rate?")


def test_a_source_before_a_colon_is_asked_about():
    (asked,) = extract_named_sources("weather disruption runbook: who do we escalate to?")
    assert asked.asked and asked.kinds
    # a colon after the source and then its claim is still the source's claim, not a question
    (claim,) = extract_named_sources("From the old ferry wiki: cancellations count from the day before. Right?")
    assert not claim.asked


def test_a_baseline_period_is_not_the_period_asked_about(ctx):
    def period(question):
        return parse_question(question, ctx.catalog, today=dt.date(2026, 12, 5)).period
    assert period("Is the passenger count 10 percent behind last year?") is None
    assert period("more sailings cancelled than last month") is None
    assert period("the passenger count last month") == (dt.date(2026, 11, 1), dt.date(2026, 12, 1))
