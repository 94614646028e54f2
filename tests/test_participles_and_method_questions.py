"""Two ways a question that describes or asks how a metric is measured was misread:

- A past participle after the first words of a name is a clause about the things counted, not
  another head in the name's place: "tickets <opened> before month end that are still
  unresolved" describes the ticket backlog, whose name starts with "ticket" (as "claims <closed>
  with payment" describes a claim measure). It was read as naming another ticket object
  (`coverage.renames`), and the description of the backlog was never considered.
- "late" beside a verb asking how a measure is taken ("is it measured from … or from late
  reporting?", "are tickets acknowledged late counted in …?") or what it takes in ("how many
  minutes late can a flight be and still count as on time?", "what is considered late?") says
  which things the metric counts, not that data is late: it was answered with a freshness
  calculation, and "how many" made the last a value question.
- "What's the metric for how many support tickets … are still unresolved?" asks which metric
  a description is: "how many" and "late" inside the description ask for no value and no
  freshness (`parse._WHICH_METRIC`).

An IT service-desk domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import pytest
from corpus_context import governed_doc, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding.coverage import renames
from canon.ask.understanding.parse import detect_intents

BACKLOG, REOPEN, MTTA = "metric.ticket_backlog.v1", "metric.ticket_reopen_rate.v1", "metric.mtta.v1"
DOCS = [
    governed_doc(BACKLOG, "metric.service_desk.ticket_backlog", "Ticket backlog governed definition v1",
                 "Governed metric ticket backlog version 1. Ticket backlog is the count of support tickets opened "
                 "before the end of the month that are still unresolved at month end. Tickets merged as duplicates "
                 "are excluded."),
    governed_doc(REOPEN, "metric.service_desk.ticket_reopen_rate", "Ticket reopen rate governed definition v1",
                 "Governed metric ticket reopen rate version 1. The share of tickets resolved in the month that the "
                 "requester reopens within 14 days of resolution."),
    governed_doc(MTTA, "metric.service_desk.mean_time_to_acknowledge",
                 "Mean time to acknowledge governed definition v1",
                 "Governed metric mean time to acknowledge version 1. The mean minutes from ticket creation to the "
                 "first agent acknowledgement, measured on tickets created in the month. Tickets acknowledged late "
                 "by the on-call rota are included; tickets created by monitoring alerts are excluded."),
    governed_doc("model.fct_tickets.v1", "model.service_desk.fct_tickets", "dbt model schema fct_tickets v1",
                 "dbt model model.service_desk.fct_tickets.v1. Grain: one row per ticket. Primary key: ticket_id. "
                 "Important fields: ticket_id, created_at, acknowledged_at, resolved_at, reopened_at, merged_into.",
                 kind="model_schema", authority=90),
]

ctx = module_context("service_desk", DOCS)


@pytest.mark.parametrize("question", [
    "How do we count tickets opened before month end that are still unresolved?",
    "What counts as tickets opened before the end of the month and still unresolved at month end?",
    "how are support tickets opened before the end of the month but still unresolved counted",
])
def test_a_participle_after_a_names_first_word_describes(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == BACKLOG, (
        question, resp.action, resp.reason, [e.doc_id for e in resp.evidence])


def test_a_participle_is_no_head_but_a_noun_still_is():
    assert not renames("how do we count tickets opened before month end", ["ticket backlog"])
    assert not renames("claims closed with payment", ["claim severity"])
    assert renames("how are ticket escalations counted", ["ticket backlog"])
    assert renames("daily active sessions", ["daily active users"])


@pytest.mark.parametrize("question", [
    "Are tickets acknowledged late counted in the mean time to acknowledge?",
    "Is mean time to acknowledge measured from ticket creation or from late reporting?",
    "how is the mean time to acknowledge calculated when the on-call rota is late?",
    "How many minutes late can an acknowledgement be and still count as acknowledged in the mean time to acknowledge?",
    "What is considered a late acknowledgement in the mean time to acknowledge?",
])
def test_late_beside_a_verb_of_measuring_asks_for_the_definition(ctx, question):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == MTTA, (
        question, resp.action, resp.reason, [e.doc_id for e in resp.evidence])


@pytest.mark.parametrize("question, freshness", [
    ("Is mean time to acknowledge measured from late reporting?", False),
    ("Are late tickets counted in the backlog?", False),
    ("Is the mean time to acknowledge data late today?", True),
    ("Is the ticket backlog late?", True),
    ("Is the ticket backlog stale, and how is it counted?", True),   # another freshness word still asks
    ("how many minutes late can a ticket be and still count as acknowledged?", False),
    ("is the ticket data 2 hours late?", True),
    ("is the backlog data considered stale?", True),
])
def test_freshness_is_the_state_of_data_not_a_measured_modifier(question, freshness):
    assert ("freshness" in detect_intents(question)) is freshness, question


@pytest.mark.parametrize("question, value", [
    ("how many minutes late can a ticket be and still count as acknowledged?", False),
    ("How many tickets qualify as backlog under the definition?", False),
    ("How many tickets were in the backlog in July 2026?", True),
])
def test_a_question_about_what_counts_asks_no_value(question, value):
    assert ("value" in detect_intents(question)) is value, question


@pytest.mark.parametrize("question, doc_id", [
    ("what's the metric for how many support tickets opened before the end of the month are still unresolved?",
     BACKLOG),
    ("Which metric tells how many resolved tickets the requester reopens within 14 days?", REOPEN),
    ("which KPI measures how many minutes pass from ticket creation to the first agent acknowledgement, when the "
     "rota is late?", MTTA),
])
def test_asking_which_metric_a_description_is_asks_no_value(ctx, question, doc_id):
    resp = ask(ctx, question, "analyst")
    assert resp.action == "answer" and resp.evidence[0].doc_id == doc_id, (
        question, resp.action, resp.reason, [e.doc_id for e in resp.evidence])


@pytest.mark.parametrize("question, intents", [
    ("What was the metric value for July 2026?", {"value"}),
    ("Which metric is stale?", {"freshness"}),
])
def test_a_value_or_the_state_of_data_is_still_asked(question, intents):
    assert detect_intents(question) == intents, question
