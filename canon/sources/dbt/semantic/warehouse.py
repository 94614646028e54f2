"""Running compiled metric SQL against the dbt-built DuckDB warehouse, opened read-only."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import duckdb

from canon.core.errors import CanonRunError
from canon.sources.dbt.semantic.errors import NotComputable
from canon.sources.dbt.semantic.sql import MetricQuery, query_id_of


@dataclass
class QueryResult:
    """The value of one metric (or metric input), with the rows it scanned and the SQL it ran."""

    value: float | None
    exact: Decimal | None
    rows: int
    queries: list[dict] = field(default_factory=list)
    unit: str = ""


def connect_read_only(warehouse_db: Path) -> duckdb.DuckDBPyConnection:
    if not warehouse_db.exists():
        raise NotComputable(f"warehouse {warehouse_db} does not exist (dbt has not built it)")
    try:
        return duckdb.connect(str(warehouse_db), read_only=True)
    except duckdb.Error as exc:  # e.g. a writer holds the file's lock
        raise CanonRunError(f"{warehouse_db}: cannot open the warehouse read-only: {exc}") from exc


def execute(q: MetricQuery, con: duckdb.DuckDBPyConnection, unit: str) -> QueryResult:
    try:
        rows = con.execute(q.sql).fetchall()
    except duckdb.CatalogException as exc:
        raise NotComputable(f"metric {q.metric!r}: {q.relation} is not in the warehouse: {exc}") from exc
    raw, scanned = (rows[0] if rows else (None, 0))
    if raw is None and q.fill_nulls_with is not None:
        raw = q.fill_nulls_with
    exact = raw if isinstance(raw, Decimal) else None
    value = None if raw is None else float(raw)
    return QueryResult(value=value, exact=exact, rows=int(scanned or 0), unit=unit,
                       queries=[{"metric": q.metric, "sql": q.sql, "query_id": query_id_of(q.sql),
                                 "relation": q.relation, "time_dimension": q.time_dimension,
                                 "value": value, "rows_scanned": int(scanned or 0)}])
