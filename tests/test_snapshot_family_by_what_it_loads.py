"""A freshness snapshot family is named by what its loads are of as readily as by its whole
name: "was the terminal data fresh in the 06:00 snapshot?", "are the terminal sources stale?"
of "Terminal raw loads freshness snapshot …". Only "terminal raw loads" named the family, so
these abstained. The family's name less its load nouns ("raw", "loads", "data", "sources", …)
is a name of it too, unless another object has that name (canon/ask/understanding/match.py
`object_catalog`, `_LOAD_NOUNS`).

A container-port domain no gold set uses, through the real pipeline: the contract gate, a
LanceDB index (HashingEmbedder), ask."""

from __future__ import annotations

import datetime as dt

import pytest
from corpus_context import governed_doc, module_context, snapshot_doc

from canon.ask.pipeline import ask

DAY = dt.date(2026, 6, 2)


def snapshot(doc_id: str, object_id: str, title: str, observed: str, readings: str) -> dict:
    return snapshot_doc(doc_id, object_id, title, observed, readings, valid_to="2026-06-03")


EARLY, LATE, GATE = ("freshness.port.2026-06-02T0600Z", "freshness.port.2026-06-02T1800Z",
                     "freshness.gate.2026-06-02T0700Z")
DOCS = [
    governed_doc("metric.berth_occupancy.v1", "metric.port.berth_occupancy", "Berth occupancy governed definition v1",
                 "Governed metric berth occupancy version 1. Hours a berth holds a vessel over hours in the month."),
    snapshot(EARLY, "freshness.port.terminal_raw_loads", "Terminal raw loads freshness snapshot 2026-06-02 06:00 UTC",
             "2026-06-02T06:00:00Z", "raw.tos.vessel_calls max_loaded_at 2026-06-02T05:40:00Z, SLA 1 hours."),
    snapshot(LATE, "freshness.port.terminal_raw_loads", "Terminal raw loads freshness snapshot 2026-06-02 18:00 UTC",
             "2026-06-02T18:00:00Z", "raw.tos.vessel_calls max_loaded_at 2026-06-02T13:00:00Z, SLA 1 hours."),
    snapshot(GATE, "freshness.gate.truck_gate_raw_loads", "Truck gate raw loads freshness snapshot 2026-06-02 07:00 UTC",
             "2026-06-02T07:00:00Z", "raw.gate.transactions max_loaded_at 2026-06-02T06:58:00Z, SLA 1 hours."),
]

ctx = module_context("port", DOCS)


@pytest.mark.parametrize("question, as_of, doc_id", [
    ("Was the terminal data fresh in the 06:00 snapshot on 2026-06-02?", None, EARLY),
    ("Are the terminal sources stale?", DAY, LATE),
    ("Is the truck gate data fresh?", DAY, GATE),
    ("Were the terminal raw loads fresh?", DAY, LATE),
])
def test_a_family_named_by_what_it_loads_answers_freshness(ctx, question, as_of, doc_id):
    resp = ask(ctx, question, "analyst", as_of=as_of)
    assert resp.action == "calculate", (question, resp.action, resp.reason)
    assert [e.doc_id for e in resp.evidence] == [doc_id], question
