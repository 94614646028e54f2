"""Canon's one time convention: DuckDB TIMESTAMP columns hold naive UTC.

Every `*_at` column is written from `utcnow()` or converted with `naive_utc()`,
so comparisons across tables (first sighting vs index revision, request vs
completion) never mix zones.
"""

from __future__ import annotations

import datetime as dt


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def naive_utc(t: dt.datetime) -> dt.datetime:
    """An aware time converted to UTC without its zone; a naive one is taken as UTC already."""
    return t.astimezone(dt.timezone.utc).replace(tzinfo=None) if t.tzinfo else t
