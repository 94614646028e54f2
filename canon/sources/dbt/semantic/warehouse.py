"""Running compiled metric SQL on the warehouse the dbt target names, read-only.

Three warehouses, one interface (`catalog`, `catalogs`, `dialect`, `session()`):

- DuckDBWarehouse: a DuckDB file opened read-only; its `attach` entries are
  attached read-only when a relation lives in one.
- AdapterWarehouse: any other dbt adapter (PostgreSQL through dbt-postgres). The
  connection is opened by the adapter's own connection manager
  (`<Adapter>.ConnectionManager.open`, what `dbt run` calls: the profile's host,
  port, sslmode, search_path, role, keepalives and retries), and the SQL runs on
  its DB-API cursor in a read-only transaction that is rolled back. Measured
  (2026-12-01, the 2-core machine at load 6, tests/fixtures/projects/warehouse_shop
  on the PostgreSQL 15 server of tests/test_warehouse_targets.py): 24-32 ms per
  value once dbt is imported, against 13.2 s for the first
  `dbtRunner().invoke(["show", "--inline", sql])` and 2.3 s for the next (it
  parses the project and renders its macros each time, prints its table to
  stdout, where `canon ask --json` writes, and needs a project folder).
- ConfiguredWarehouse: the configured dbt target, rendered on first use
  (canon/sources/dbt/semantic/target.py), then one of the two above; or the
  reason there is none (artifacts mode without a profile), raised as
  NotComputable so an answer says why it has no number.
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

import duckdb

from canon.core.errors import CanonRunError
from canon.sources.dbt.semantic.errors import NotComputable
from canon.sources.dbt.semantic.sql import MetricQuery, query_id_of
from canon.sources.dbt.semantic.target import quiet_dbt, safe_message


@dataclass
class QueryResult:
    """The value of one metric (or metric input), with the rows it scanned and the SQL it ran."""

    value: float | None
    exact: Decimal | None
    rows: int
    queries: list[dict] = field(default_factory=list)
    unit: str = ""


class Session(Protocol):
    def rows(self, q: MetricQuery) -> list[tuple]: ...


class Warehouse(Protocol):
    catalog: str                 # the connection's own catalog: relations in it are written schema.alias
    dialect: str                 # "duckdb", or dbt's adapter type

    @property
    def catalogs(self) -> frozenset[str]: ...

    def session(self, catalogs: set[str]) -> contextlib.AbstractContextManager[Session]: ...


def _duckdb_catalog(path: Path | str) -> str:
    """The catalog DuckDB (and dbt-duckdb) name a database file by: the first dot-separated part."""
    return Path(path).name.lstrip(".").split(".")[0] or "memory"


class _DuckDBSession:
    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def rows(self, q: MetricQuery) -> list[tuple]:
        try:
            return self.con.execute(q.sql).fetchall()
        except duckdb.CatalogException as exc:
            raise NotComputable(f"metric {q.metric!r}: {q.relation} is not in the warehouse: {exc}") from exc


@dataclass
class DuckDBWarehouse:
    path: Path
    catalog: str = ""
    attached: tuple = ()          # canon.sources.dbt.semantic.target.Attached
    dialect: str = "duckdb"

    def __post_init__(self):
        self.path = Path(self.path)
        self.catalog = self.catalog or _duckdb_catalog(self.path)

    @property
    def catalogs(self) -> frozenset[str]:
        return frozenset({self.catalog, *(a.alias for a in self.attached)})

    @contextlib.contextmanager
    def session(self, catalogs: set[str]) -> Iterator[Session]:
        if not self.path.exists():
            raise NotComputable(f"warehouse {self.path} does not exist (dbt has not built it)")
        try:
            con = duckdb.connect(str(self.path), read_only=True)
        except duckdb.Error as exc:  # e.g. a writer holds the file's lock
            raise CanonRunError(f"{self.path}: cannot open the warehouse read-only: {exc}") from exc
        try:
            for a in self.attached:
                if a.alias in catalogs and a.alias != self.catalog:
                    self._attach(con, a)
            yield _DuckDBSession(con)
        finally:
            con.close()

    def _attach(self, con: duckdb.DuckDBPyConnection, a) -> None:
        if "://" not in a.path and not Path(a.path).exists():
            raise NotComputable(f"warehouse catalog {a.alias!r}: {a.path} does not exist (dbt has not built it)")
        options = ["READ_ONLY"] + ([f"TYPE {a.type}"] if a.type and a.type.isidentifier() else [])
        alias = '"' + a.alias.replace('"', '""') + '"'
        try:
            con.execute(f"ATTACH '{a.path.replace(chr(39), chr(39) * 2)}' AS {alias} ({', '.join(options)})")
        except duckdb.Error as exc:
            raise CanonRunError(f"{a.path}: cannot attach catalog {a.alias!r} read-only: {exc}") from exc


class _AdapterSession:
    def __init__(self, cursor: Any, errors: tuple[type[BaseException], ...], where: str):
        self.cursor, self.errors, self.where = cursor, errors, where

    def rows(self, q: MetricQuery) -> list[tuple]:
        try:
            self.cursor.execute(q.sql)
            return list(self.cursor.fetchall())
        except self.errors as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise NotComputable(f"metric {q.metric!r}: the query on {q.relation} failed on {self.where}: {first}") from exc


@dataclass
class AdapterWarehouse:
    target: Any                   # canon.sources.dbt.semantic.target.WarehouseTarget

    @property
    def catalog(self) -> str:
        return self.target.database

    @property
    def dialect(self) -> str:
        return self.target.adapter

    @property
    def catalogs(self) -> frozenset[str]:
        # One database per connection (PostgreSQL has no cross-database query).
        return frozenset({self.target.database})

    @contextlib.contextmanager
    def session(self, catalogs: set[str]) -> Iterator[Session]:
        from dbt.adapters.contracts.connection import Connection
        from dbt.adapters.factory import FACTORY

        t = self.target
        try:
            manager = FACTORY.get_plugin_by_name(t.adapter).adapter.ConnectionManager
        except Exception as exc:
            raise NotComputable(f"{t.describe}: dbt adapter {t.adapter!r} is not installed: {exc}") from None
        conn = Connection(type=t.adapter, name="canon_metric_value", credentials=t.credentials)
        try:
            with quiet_dbt():
                manager.open(conn)
        except Exception as exc:  # dbt's FailedToConnectError: the message names host and database, no password
            raise CanonRunError(f"{t.describe}: cannot connect to the {t.adapter} warehouse: "
                                f"{safe_message(exc, os.environ)}") from None
        handle = conn.handle
        errors = tuple(e for e in (getattr(_dbapi_module(handle), "Error", None),) if isinstance(e, type)) or (Exception,)
        try:
            if hasattr(handle, "set_session"):   # psycopg2: a read-only transaction, whatever the role may do
                handle.set_session(readonly=True)
            yield _AdapterSession(handle.cursor(), errors, f"{t.adapter} database {t.database!r}")
        finally:
            with contextlib.suppress(Exception):
                handle.rollback()
            with contextlib.suppress(Exception):
                handle.close()


def _dbapi_module(handle: Any):
    import sys
    return sys.modules.get(type(handle).__module__.split(".")[0])


class ConfiguredWarehouse:
    """The configured dbt target's warehouse, resolved once on first use; `resolve` returns a
    DuckDBWarehouse or AdapterWarehouse, or raises NotComputable with the reason."""

    def __init__(self, resolve: Callable[[], Any]):
        self._resolve = resolve
        self._lock = threading.Lock()
        self._resolved: Any = None
        self._reason: str | None = None

    def resolved(self):
        with self._lock:
            if self._resolved is None and self._reason is None:
                try:
                    self._resolved = self._resolve()
                except NotComputable as exc:
                    self._reason = str(exc)
            if self._reason is not None:
                raise NotComputable(self._reason)
            return self._resolved

    @property
    def catalog(self) -> str:
        return self.resolved().catalog

    @property
    def dialect(self) -> str:
        return self.resolved().dialect

    @property
    def catalogs(self) -> frozenset[str]:
        return self.resolved().catalogs

    def session(self, catalogs: set[str]):
        return self.resolved().session(catalogs)


def warehouse_of(target) -> DuckDBWarehouse | AdapterWarehouse:
    """The warehouse a rendered dbt target names."""
    if target.adapter == "duckdb":
        return DuckDBWarehouse(target.path, catalog=_duckdb_catalog(target.path), attached=target.attached)
    return AdapterWarehouse(target)


def execute(q: MetricQuery, session: Session, unit: str) -> QueryResult:
    rows = session.rows(q)
    raw, scanned = (rows[0] if rows else (None, 0))
    if raw is None and q.fill_nulls_with is not None:
        raw = q.fill_nulls_with
    exact = raw if isinstance(raw, Decimal) else None
    value = None if raw is None else float(raw)
    return QueryResult(value=value, exact=exact, rows=int(scanned or 0), unit=unit,
                       queries=[{"metric": q.metric, "sql": q.sql, "query_id": query_id_of(q.sql),
                                 "relation": q.relation, "time_dimension": q.time_dimension,
                                 "value": value, "rows_scanned": int(scanned or 0)}])
