"""Tombstones of `canon forget`, read where the index stack is not needed.

The registry build asks on every run whether a doc_id was forgotten; importing
canon.lifecycle.forget for that would load LanceDB (seconds per process), so the
read lives here.
"""

from __future__ import annotations

import datetime as dt

import duckdb

from canon.core.db import has_table


def forgotten_doc_ids(con: duckdb.DuckDBPyConnection) -> dict[str, dt.date]:
    """Tombstones: doc_id -> the day its deletion was requested (any state)."""
    if not has_table(con, "deletions"):
        return {}
    return {r[0]: r[1].date() for r in con.execute("SELECT doc_id, requested_at FROM deletions").fetchall()}


def forgotten_reason(day: dt.date) -> str:
    return f"forgotten on {day.isoformat()}"
