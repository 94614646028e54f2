"""DuckDB connections and the small SQL helpers every store shares.

DuckDB allows one writer process per file: `writer()` turns the lock error a
second writer gets into a `CanonRunError` that names the file, and `opened()`
closes a connection even when the body raises (a leaked connection would keep
the file from being rewritten).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Callable, ContextManager, Iterable, Iterator

import duckdb

from canon.core import schema
from canon.core.errors import CanonInputError, CanonRunError

Connect = Callable[[], ContextManager[duckdb.DuckDBPyConnection]]


def connect(path: Path, *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """The Canon database; opened for writing, it is created with the registry's tables."""
    path = Path(path)
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path), read_only=read_only)
    if not read_only:
        schema.ensure_registry(con)
    return con


def writer(path: Path) -> Connect:
    """A `Connect` that opens `path` for writing, or names the file when another process holds it."""
    @contextlib.contextmanager
    def _cm() -> Iterator[duckdb.DuckDBPyConnection]:
        try:
            con = connect(path)
        except duckdb.IOException as exc:  # another process writes it (one writer per DuckDB file)
            raise CanonRunError(f"{path}: cannot open the Canon database ({exc}); run again when it is free") from None
        try:
            yield con
        finally:
            con.close()
    return _cm


@contextlib.contextmanager
def opened(connect: Connect) -> Iterator[duckdb.DuckDBPyConnection]:
    """`with opened(connect) as con`, but the connection is closed even when the body
    raises (dagster-duckdb's get_connection only closes on success)."""
    cm = connect()
    con = cm.__enter__()
    try:
        yield con
    finally:
        with contextlib.suppress(Exception):
            con.close()
        with contextlib.suppress(Exception):
            cm.__exit__(None, None, None)


def has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND schema_name = current_schema() "
        "AND database_name = current_database()", [name]).fetchall()[0][0])


def sql_literal(value: object) -> str:
    """A SQL string literal (DuckDB, and LanceDB's DataFusion filters): quotes doubled,
    NUL refused. Use for every user-influenced value spliced into SQL."""
    s = str(value)
    if "\x00" in s:
        raise CanonInputError("<filter>", "NUL character in a filter value")
    return "'" + s.replace("'", "''") + "'"


def sql_list(values: Iterable[object]) -> str:
    """`('a', 'b')` for an `IN` clause."""
    return "(" + ", ".join(sql_literal(v) for v in values) + ")"
