"""The build summary stays short on a large project (canon/ops/summary.py): a line names at
most SUMMARY_ITEMS items and counts the rest, and the freshness line names the sources past
their SLA before those within it."""

from __future__ import annotations

import duckdb

from canon.ops.summary import SUMMARY_ITEMS, listed, workspace_summary


def test_a_line_names_a_few_items_and_counts_the_rest():
    assert listed(["a", "b"]) == "a, b"
    items = [f"s{i}" for i in range(SUMMARY_ITEMS + 7)]
    assert listed(items) == ", ".join(items[:SUMMARY_ITEMS]) + " and 7 more"


def test_freshness_names_the_stale_sources_first():
    con = duckdb.connect()
    con.execute("CREATE TABLE source_freshness (source VARCHAR, status VARCHAR, age_seconds DOUBLE)")
    rows = [(f"raw.s{i:03d}", "pass", 60.0) for i in range(200)] + [("raw.z_late", "error", 7200.0),
                                                                       ("raw.y_slow", "warn", 3600.0)]
    con.executemany("INSERT INTO source_freshness VALUES (?, ?, ?)", rows)
    line = next(x for x in workspace_summary(con) if x.startswith("freshness"))
    assert line.startswith("freshness      raw.y_slow warn (60 min), raw.z_late error (120 min), raw.s000 pass")
    assert line.endswith(f" and {len(rows) - SUMMARY_ITEMS} more")
