"""A freshness snapshot asked for by its domain and its time ("show me the 6am marina freshness
snapshot for 2026-05-04"), in a domain no gold set uses: a marina beside a ski resort.

A family was found only by the words of its own name ("marina berth booking raw loads"); the
domain's name alone, with the kind's nouns, named none. It names the domain's one snapshot
family; a domain with two families is named by neither (canon/ask/pipeline.py,
`_snapshot_of_domain`)."""

from __future__ import annotations

import pytest
from corpus_context import module_context

from canon.ask.pipeline import ask

DAY = "2026-05-04"


def snapshot(family: str, title: str, hour: str, readings: str) -> dict:
    doc_id = f"freshness.{family}.{DAY}T{hour}00Z"
    return {"doc_id": doc_id, "object_id": f"freshness.{family}", "kind": "freshness_snapshot",
            "title": f"{title} freshness snapshot {DAY} {hour}:00 UTC", "status": "observed", "authority": 90,
            "version": f"{DAY}T{hour}:00:00Z", "valid_from": DAY, "valid_to": "2026-05-05",
            "allowed_roles": ["analyst"], "supersedes": None, "content_hash": f"sha256:{doc_id}",
            "text": f"Observed at {DAY}T{hour}:00:00Z. {readings}"}


DOCS = [
    snapshot("marina.berth_loads", "Marina berth booking raw loads", "06",
             "raw.berths.bookings max_loaded_at 2026-05-04T05:40:00Z, SLA 2 hours."),
    snapshot("marina.berth_loads", "Marina berth booking raw loads", "18",
             "raw.berths.bookings max_loaded_at 2026-05-04T17:50:00Z, SLA 2 hours."),
    snapshot("resort.lift_loads", "Lift scans raw loads", "06", "raw.lifts.scans max_loaded_at 2026-05-04T05:00:00Z, "
                                                               "SLA 2 hours."),
    snapshot("resort.rental_loads", "Rental shop raw loads", "06",
             "raw.rentals.orders max_loaded_at 2026-05-04T05:10:00Z, SLA 2 hours."),
]

ctx = module_context("marina", DOCS)


@pytest.mark.parametrize("question, doc_id", [
    ("show me the 6am marina freshness snapshot for 2026-05-04", "freshness.marina.berth_loads.2026-05-04T0600Z"),
    ("show the 6pm marina freshness snapshot for 2026-05-04", "freshness.marina.berth_loads.2026-05-04T1800Z"),
    ("show me the 18:00 UTC marina snapshot for 2026-05-04", "freshness.marina.berth_loads.2026-05-04T1800Z"),
    ("Is the marina data fresh on 2026-05-04?", "freshness.marina.berth_loads.2026-05-04T1800Z"),
])
def test_the_domains_one_family(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "calculate" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason, r.evidence)


def test_a_domain_of_two_families_names_neither(ctx):
    r = ask(ctx, "show me the 6am resort freshness snapshot for 2026-05-04", "analyst")
    assert r.action != "calculate", (r.action, r.evidence)
