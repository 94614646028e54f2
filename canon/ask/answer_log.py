"""The answer log: one row per answer, ids and versions only (never the
prompt or any evidence text), so audits and impact analysis are queries.

Two stores hold the same row (docs/contracts.md, "Answer log"):
- the `answer_log` table of a DuckDB registry the caller already writes (the
  evaluation's scratch registry, in-process callers);
- `AnswerLogFile`, $CANON_HOME/answer_log.sqlite, which `canon ask` writes: a
  SQLite file in WAL mode, so any number of ask processes append at once
  without taking canon.duckdb's single write lock (docs/design.md,
  "Concurrent readers"). `canon impact` and deletion audits read both.
  `HeldAnswerLog` is the same file for the context server, which keeps its
  connection between answers.
"""

import datetime as dt
import hashlib
import json
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path

import duckdb

from canon.core import db, schema
from canon.core.clock import utcnow
from canon.models.responses import Response

RESOLVER_VERSION = "canon-ask-1"


ensure_schema = schema.ensure_answer_log


def new_answer_id() -> str:
    return str(uuid.uuid4())


COLUMNS = ("answer_id", "asked_at", "role", "question_sha256", "as_of", "index_revision", "policy_revision",
           "resolver_version", "action", "cited_json", "principal", "transport")


def _row(resp: Response, principal: str | None = None, transport: str | None = None) -> list:
    """The row for `resp`, in COLUMNS order. `principal` and `transport` name who asked and
    how when the context server (canon/serve/) asked; null from the CLI."""
    cited = [
        {"doc_id": e.doc_id, "content_hash": e.content_hash, "chunk_ids": e.chunk_ids, "use": e.use,
         "claims": sum(1 for c in resp.claims if c.evidence_id == e.doc_id)}
        for e in resp.evidence
    ]
    return [resp.answer_id, utcnow(), resp.role,
            hashlib.sha256(resp.question.strip().lower().encode()).hexdigest(), resp.as_of,
            resp.index_revision, resp.policy_revision, RESOLVER_VERSION, resp.action, json.dumps(cited),
            principal, transport]


# The columns impact analysis reads, in this order, from either store.
CITING_COLUMNS = ("answer_id, asked_at, role, as_of, action, index_revision, policy_revision, resolver_version, "
                  "cited_json")
_INSERT = f"INSERT INTO answer_log ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})"


def record(con: duckdb.DuckDBPyConnection, resp: Response, *, principal: str | None = None,
           transport: str | None = None) -> None:
    """Write the row for `resp` (whose answer_id is already set). The table is created (or given
    the columns added since its first release) on the first insert that finds it lacking,
    rather than running `ensure_schema` before every answer."""
    row = _row(resp, principal, transport)
    insert = _INSERT
    try:
        con.execute(insert, row)
    except (duckdb.CatalogException, duckdb.BinderException):  # no table yet, or one without the new columns
        ensure_schema(con)
        con.execute(insert, row)


SQLITE_DDL = """
CREATE TABLE IF NOT EXISTS answer_log (
    answer_id TEXT PRIMARY KEY,
    asked_at TEXT NOT NULL,          -- naive UTC, ISO 8601
    role TEXT NOT NULL,
    question_sha256 TEXT NOT NULL,
    as_of TEXT,                      -- ISO date
    index_revision TEXT NOT NULL,
    policy_revision TEXT NOT NULL,
    resolver_version TEXT NOT NULL,
    action TEXT NOT NULL,
    cited_json TEXT NOT NULL,
    principal TEXT,                  -- the context server's principal; null from the CLI
    transport TEXT
)
"""
# SQLite waits this long for another writer's transaction (WAL allows one at a time,
# each a single short INSERT), and retries setting up the file as long.
BUSY_SECONDS = 30.0


class AnswerLogFile:
    """The answer log as a SQLite file in WAL mode (see the module docstring)."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def _connect(self, *, any_thread: bool = False) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + BUSY_SECONDS
        while True:
            con = sqlite3.connect(self.path, timeout=BUSY_SECONDS, isolation_level=None,
                                  check_same_thread=not any_thread)
            try:
                con.execute("PRAGMA journal_mode=WAL")  # needs a moment alone on a brand-new file
                con.execute(SQLITE_DDL)
                return con
            except sqlite3.OperationalError as exc:
                con.close()
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)

    def record(self, resp: Response, *, principal: str | None = None, transport: str | None = None) -> None:
        row = _row(resp, principal, transport)
        row[1] = row[1].isoformat()
        row[4] = row[4].isoformat() if row[4] else None
        con = self._connect()
        try:
            con.execute(_INSERT, row)
        finally:
            con.close()

    def given(self, answer_id: str, principal: str) -> tuple | None:
        """(answer_id, asked_at, action, as_of, index_revision, policy_revision, resolver_version,
        cited_json, transport) of an answer logged for `principal`, else None."""
        if not self.path.exists():
            return None
        con = self._connect()
        try:
            rows = con.execute("SELECT answer_id, asked_at, action, as_of, index_revision, policy_revision, "
                               "resolver_version, cited_json, transport FROM answer_log "
                               "WHERE answer_id = ? AND principal = ?", [answer_id, principal]).fetchall()
        finally:
            con.close()
        if not rows:
            return None
        aid, asked, action, as_of, *rest = rows[0]
        return (aid, dt.datetime.fromisoformat(asked), action, dt.date.fromisoformat(as_of) if as_of else None,
                *rest)

    def citing(self, doc_id: str) -> list[tuple]:
        """Rows (CITING_COLUMNS, asked_at a datetime and as_of a date, as DuckDB returns them)
        whose citations name `doc_id`."""
        if not self.path.exists():
            return []
        con = self._connect()
        try:
            rows = con.execute(f"SELECT {CITING_COLUMNS} FROM answer_log WHERE instr(cited_json, ?) > 0",
                               [json.dumps(doc_id)]).fetchall()
        finally:
            con.close()
        return [(aid, dt.datetime.fromisoformat(asked), role, dt.date.fromisoformat(as_of) if as_of else None,
                 *rest) for aid, asked, role, as_of, *rest in rows]


def citing(con: duckdb.DuckDBPyConnection | None, log_file: AnswerLogFile | None, doc_id: str) -> list[tuple]:
    """Every answer, in either store, that cited `doc_id`, oldest first (CITING_COLUMNS)."""
    rows: list[tuple] = []
    if con is not None and db.has_table(con, "answer_log"):
        rows += con.execute(f"SELECT {CITING_COLUMNS} FROM answer_log WHERE contains(cited_json, ?)",
                            [json.dumps(doc_id)]).fetchall()
    if log_file is not None:
        rows += log_file.citing(doc_id)
    return sorted(rows, key=lambda r: (r[1], r[0]))


class HeldAnswerLog(AnswerLogFile):
    """The same file for a long-running process (the context server, canon/serve/state.py): one
    connection kept between answers. A connection per answer costs ~2.5 ms, most of it the
    checkpoint SQLite runs when a file's last connection closes; a held one appends in ~0.5 ms.
    WAL lets `canon ask` processes and readers (impact, deletion audits) use the file meanwhile.
    The file is stat'ed before each append: one deleted or replaced is reopened (and recreated),
    so no row goes to an unlinked file."""

    def __init__(self, path: Path):
        super().__init__(path)
        self._lock = threading.Lock()   # callers may append from different threads
        self._con: sqlite3.Connection | None = None
        self._file: tuple | None = None

    def _identity(self) -> tuple | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return (st.st_dev, st.st_ino)

    def record(self, resp: Response, *, principal: str | None = None, transport: str | None = None) -> None:
        row = _row(resp, principal, transport)
        row[1] = row[1].isoformat()
        row[4] = row[4].isoformat() if row[4] else None
        with self._lock:
            if self._con is None or self._identity() != self._file:
                self._close()
                before = self._identity()   # before connecting: a file swapped meanwhile is reopened next time
                self._con = self._connect(any_thread=True)
                self._file = before if before is not None else self._identity()
            try:
                self._con.execute(_INSERT, row)
            except sqlite3.Error:
                self._close()   # the next answer starts from a fresh connection
                raise

    def _close(self) -> None:
        if self._con is not None:
            con, self._con, self._file = self._con, None, None
            con.close()

    def close(self) -> None:
        with self._lock:
            self._close()

