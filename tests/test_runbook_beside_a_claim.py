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

from canon.ask.pipeline import _runbook_described, ask
from canon.ask.understanding.parse import parse_question

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
    governed_doc("runbook.car.fleet_downtime", "runbook.car.fleet_downtime", "Fleet downtime runbook",
                 "If more than 2 cars at one branch are off the road for over a day, escalate to the regional "
                 "fleet manager.", kind="runbook"),
    # Models whose columns share the question's words, ranked above the runbook by retrieval.
    *[governed_doc(f"model.fct_branch_cars_{k}.v1", f"model.car.fct_branch_cars_{k}", f"dbt model schema fct_branch_cars_{k} v1",
                   f"dbt model. Grain: one row per car per branch per day. Columns: car_id, branch_id, day, "
                   f"off_road_days, cars_at_branch, road_status_{k}.", kind="model_schema", authority=90)
      for k in range(6)],
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


def test_a_procedure_finds_its_runbook_below_the_retrieved_ones(ctx):
    r = ask(ctx, "three cars at one branch have been off the road for two days - who do we escalate to?", "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == "runbook.car.fleet_downtime", (
        r.action, r.reason, [e.doc_id for e in r.evidence])


def test_the_runbooks_are_read_when_retrieval_ranks_none_of_them(ctx):
    # the probe's case: retrieval ranked five models above the runbook, so none was among the
    # governed hits read; the role's runbooks are read then
    p = parse_question("three cars at one branch have been off the road for two days - who do we escalate to?",
                       ctx.catalog)
    assert _runbook_described(ctx, p, "analyst", []) == "runbook.car.fleet_downtime"
    assert _runbook_described(ctx, parse_question("what do we do when the printer jams?", ctx.catalog),
                              "analyst", []) is None


def test_a_procedure_no_runbook_describes_finds_none(ctx):
    r = ask(ctx, "What do we do when the counter printer catches fire?", "analyst")
    assert not any(e.doc_id == RUNBOOK for e in r.evidence), (r.action, r.reason, [e.doc_id for e in r.evidence])
