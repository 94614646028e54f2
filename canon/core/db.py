"""DuckDB connections and the small SQL helpers every store shares.

DuckDB allows one writer process per file, and a read-only open fails while
another process holds the file read-write. So (docs/design.md, "Concurrent
readers"): every writer publishes a read-only snapshot of the registry
(`publish_snapshot`, a fresh logical copy swapped in atomically) before it
lets go of the file, and readers open that snapshot instead of the live file.
A lock that is still in the way (two writers, or a workspace with no snapshot
yet) is waited for with a bounded retry (`connect_waiting`) and then reported
as busy — a `CanonRunError` naming the file (exit 1), never bad input.
`opened()` closes a connection even when the body raises (a leaked connection
would keep the file from being rewritten).
"""

from __future__ import annotations

import contextlib
import os
import time
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


# How long a process waits for another one's lock before it reports the file busy.
LOCK_WAIT_ENV = "CANON_LOCK_WAIT_SECONDS"
DEFAULT_LOCK_WAIT_SECONDS = 60.0


def lock_wait_seconds() -> float:
    raw = os.environ.get(LOCK_WAIT_ENV)
    if raw is None:
        return DEFAULT_LOCK_WAIT_SECONDS
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise CanonInputError(LOCK_WAIT_ENV, f"not a number of seconds: {raw!r}") from None


def is_lock_error(exc: BaseException) -> bool:
    return isinstance(exc, duckdb.IOException) and "lock" in str(exc).lower()


def connect_waiting(path: Path, *, read_only: bool = False, wait: float | None = None) -> duckdb.DuckDBPyConnection:
    """`connect`, retrying while another process holds the file's lock, for at most
    `wait` seconds ($CANON_LOCK_WAIT_SECONDS, default 60); then a `CanonRunError`
    that names the file and says it is busy."""
    wait = lock_wait_seconds() if wait is None else wait
    deadline = time.monotonic() + wait
    delay = 0.05
    while True:
        try:
            return connect(path, read_only=read_only)
        except duckdb.IOException as exc:
            left = deadline - time.monotonic()
            if not is_lock_error(exc):
                raise
            if left <= 0:
                raise CanonRunError(f"{path}: busy — another process held the Canon database for more than "
                                    f"{wait:g} s ({exc}); run again when it is free") from None
            time.sleep(min(delay, left))
            delay = min(delay * 2, 1.0)


def snapshot_of(path: Path) -> Path:
    """Where the read-only snapshot of the database at `path` is published."""
    path = Path(path)
    return path.with_name(f"{path.stem}.read{path.suffix}")


# Tables copied in an order that keeps together the rows one read takes: a new `canon ask`
# process reads every revision of the objects its question names (canon/ask/scope.py), and
# DuckDB reads a whole block for any row of it, so one object's revisions scattered over the
# table cost it a block each (at 100k documents, 50 MB of blocks for the texts of 300).
CLUSTERED = {"documents": "object_id, doc_id"}


def copy_database(con: duckdb.DuckDBPyConnection, target: Path, *, alias: str) -> None:
    """A logical copy of the database `con` is on into a new file `target`: the schema
    (COPY FROM DATABASE … (SCHEMA)), then each table's live rows, the `CLUSTERED` ones
    in that order. Only live rows are written, so deleted rows leave no bytes behind."""
    name = con.execute("SELECT current_database()").fetchall()[0][0]
    con.execute(f"ATTACH {sql_literal(str(target))} AS {alias}")
    try:
        con.execute(f'COPY FROM DATABASE "{name}" TO {alias} (SCHEMA)')
        tables = con.execute("SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = ? "
                             "ORDER BY schema_name, table_name", [name]).fetchall()
        for schema_name, table in tables:
            order = CLUSTERED.get(table) if schema_name == "main" else None
            con.execute(f'INSERT INTO {alias}."{schema_name}"."{table}" SELECT * FROM "{name}"."{schema_name}"."{table}"'
                        + (f" ORDER BY {order}" if order else ""))
    finally:
        con.execute(f"DETACH {alias}")


def publish_snapshot(con: duckdb.DuckDBPyConnection, path: Path) -> Path:
    """Copy the database `con` holds for writing (at `path`) into its snapshot and swap
    it in atomically. A logical copy (COPY FROM DATABASE), so rows a deletion removed
    do not survive in free blocks; readers holding the previous snapshot keep reading
    it (os.replace leaves their open file alone)."""
    snap = snapshot_of(path)
    tmp = snap.with_name(f"{snap.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        copy_database(con, tmp, alias="canon_snapshot")
        os.replace(tmp, snap)
    finally:
        tmp.unlink(missing_ok=True)
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)
    return snap


def mark_published(path: Path) -> None:
    """After the writer closed the file (closing checkpoints it, which touches it): date
    the snapshot after the live file, so a live file newer than its snapshot means a
    write that did not publish (`open_for_reading` then refreshes it)."""
    snap = snapshot_of(path)
    if snap.exists():
        os.utime(snap)


def _stale(path: Path, snap: Path) -> bool:
    wal = path.with_name(path.name + ".wal")
    newest = max((p.stat().st_mtime_ns for p in (path, wal) if p.exists()), default=0)
    return newest > snap.stat().st_mtime_ns


def published_snapshot(path: Path) -> tuple | None:
    """The identity (inode, mtime, size) of the read snapshot of `path` while it is the one a
    reader would open as it stands: None when it is missing or older than the live file (a
    write that did not publish; `open_for_reading` then refreshes it). A long-lived reader
    keeps its connection while this stays the same (canon/serve/state.py)."""
    snap = snapshot_of(path)
    try:
        st = snap.stat()
        if _stale(Path(path), snap):
            return None
    except FileNotFoundError:   # no snapshot, or it was swapped between the two stats
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


@contextlib.contextmanager
def writing(path: Path, *, wait: float | None = None) -> Iterator[duckdb.DuckDBPyConnection]:
    """The file at `path` open for writing (waiting at most `wait` s for another
    process's lock); the read snapshot is published when the body succeeds."""
    con = connect_waiting(path, wait=wait)
    try:
        yield con
        publish_snapshot(con, path)
    finally:
        con.close()
    mark_published(path)


def open_for_reading(path: Path) -> duckdb.DuckDBPyConnection:
    """A read-only connection for a reader process, always on the published snapshot
    (no lock shared with any writer). A missing snapshot, or one older than the live
    file (a write that did not publish), is refreshed first when the live file is free;
    while a writer holds it, the existing snapshot is read (the writer publishes when it
    is done), and with no snapshot at all the lock is waited for, bounded."""
    path = Path(path)
    snap = snapshot_of(path)
    if snap.exists() and not _stale(path, snap):
        return connect(snap, read_only=True)
    try:
        with writing(path, wait=0 if snap.exists() else None):
            pass
    except CanonRunError:
        if not snap.exists():
            raise
    except duckdb.ConnectionException:  # this process holds the live file otherwise configured
        if not snap.exists():
            return connect(path, read_only=True)
    return connect(snap, read_only=True)


def writer(path: Path) -> Connect:
    """A `Connect` that opens `path` for writing (waiting a bounded time for another
    process's lock) and publishes the read snapshot when the body succeeds."""
    return lambda: writing(path)


@contextlib.contextmanager
def opened(connect: Connect) -> Iterator[duckdb.DuckDBPyConnection]:
    """`with opened(connect) as con`, but the connection is closed even when the body
    raises (dagster-duckdb's get_connection only closes on success). Only a body that
    succeeded lets the context manager finish (and publish the read snapshot)."""
    cm = connect()
    con = cm.__enter__()
    try:
        yield con
    except BaseException:
        with contextlib.suppress(Exception):
            con.close()
        with contextlib.suppress(Exception):
            cm.__exit__(None, None, None)
        raise
    try:
        cm.__exit__(None, None, None)  # on success first: a writer publishes its snapshot here, on the open connection
    finally:
        with contextlib.suppress(Exception):
            con.close()


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
