"""A claim about what a metric counts, set in a scene a runbook's steps share, in a domain no gold
set uses: a car rental company.

"For 2026-09-01 the front desk still uses the old hospital wiki, which counts all cancellations
as no-shows - ok?" (transit / veterinary probe) was answered with an outage runbook as "the
governing evidence" and the wiki as conflict: the runbook's steps share the scene's words ("the
front desk") and its text mentions cancellations and no-shows, while the metric's definition
uses none of the scene's words. What is counted is a metric's to say: a runbook ranked first
yields to a metric the question or the attributed claim describes, unless the question asks
what to do or names a runbook (canon/ask/pipeline.py, `_described_in_discovery`).

A question asking what to do that names no object ("What do we do when a light rail line is
blocked?", the same probe) abstained `no_matching_object`: no name was written. What to do is the
runbook's whose steps use the question's words (`_discover`, `parse.asks_procedure`); words its
steps do not use find none."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask

METRIC = "car.reservation_no_show_rate.v1"
RUNBOOK = "runbook.car.counter_outage"
WIKI = "wiki.car.branch_glossary_old"

DOCS = [
    governed_doc(METRIC, "metric.car.reservation_no_show_rate", "Reservation no-show rate governed definition v1",
                 "Governed metric reservation no-show rate version 1. Reservations whose customer did not collect "
                 "the car within 2 hours of the pick-up time, divided by reservations due in the period. "
                 "Cancellations made before the pick-up time are excluded."),
    governed_doc("car.fleet_utilisation.v1", "metric.car.fleet_utilisation", "Fleet utilisation governed definition v1",
                 "Governed metric fleet utilisation version 1. Rented car-days divided by available car-days."),
    governed_doc(RUNBOOK, RUNBOOK, "Counter system outage runbook",
                 "When the rental counter system is down, the counter staff switch to paper rental agreements. "
                 "Reservations missed during an outage are logged as system cancellations, not no-shows. Escalate "
                 "to the branch manager when the outage lasts more than 2 hours.", kind="runbook"),
    governed_doc(WIKI, "wiki.car.branch_glossary", "Rental desk glossary — old branch wiki",
                 "Old wiki page. Every cancellation is a no-show, whenever it is made.", kind="wiki",
                 status="superseded", authority=30),
]

ctx = module_context("car_rental", DOCS)


@pytest.mark.parametrize("question", [
    "For 2026-09-01 the counter staff still use the old branch wiki, which counts every cancellation as a "
    "no-show - ok?",
    "Our counter staff go by the old branch wiki, which treats all cancellations as no-shows. Is that right for "
    "2026-09-01?",
])
def test_the_claim_is_weighed_against_the_metric(ctx, question):
    r = ask(ctx, question, "analyst")
    uses = [(e.doc_id, e.use) for e in r.evidence]
    assert r.action == "answer_conflict" and uses[0] == (METRIC, "primary") and (WIKI, "conflict") in uses, (
        question, r.action, r.reason, uses)


@pytest.mark.parametrize("question", [
    "What do we do when the counter system is down?",
    "What does the counter system outage runbook say about no-shows?",
])
def test_a_procedure_or_a_named_runbook_is_still_the_runbook(ctx, question):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == RUNBOOK, (question, r.action, r.reason,
                                                                       [e.doc_id for e in r.evidence])


def test_a_procedure_no_runbook_describes_finds_none(ctx):
    r = ask(ctx, "What do we do when the counter printer catches fire?", "analyst")
    assert not any(e.doc_id == RUNBOOK for e in r.evidence), (r.action, r.reason, [e.doc_id for e in r.evidence])
