"""The server's warm state: the ask context (documents, catalog, per-role
visible sets), the served index revision and its embedder, and the read-only
registry connection, kept between calls.

Before every call:

- the registry's read snapshot (canon/core/db.py) is checked: while the
  published snapshot is the one the held connection reads (same file, not
  older than the live file), the connection is kept. A snapshot never changes
  once published (a writer swaps in a new file), so nothing read from it can
  have changed either. Opening a DuckDB database costs ~30 ms, several times a
  warm ask, so a connection per call would dominate the server's latency. A new
  or stale snapshot is reopened (`Workspace.open`, which refreshes a stale
  one) and then
- the served index revision (canon/index/revisions.py, `served_revision`) and
  a fingerprint of the registry's documents are compared with what is held:
  either changed → the documents, the retriever and the context are rebuilt;
  the embedder is kept while the revision's embedding model is the same;
- the live policy file is read (`Workspace.policy`, canon/registry/workspace.py)
  and assigned to the context, whose visible sets are keyed by the policy's
  revision and rules (canon/ask/pipeline.py, `AskContext.view`), so a
  revocation denies on the very next call. The file's bytes are read on every
  call; they are parsed again only when they differ from the last call's (or
  the snapshot changed: the policy sighting is recorded against it).

Answers go to the answer-log file through one held SQLite connection
(canon/ask/answer_log.py, `HeldAnswerLog`), for the same reason.

A writer never waits for the server: it publishes a new snapshot file and the
held connection keeps the replaced one, which the next call lets go of before
it reads anything. An idle server lets go of it after IDLE_RELEASE_S, so a
replaced snapshot (say, without a forgotten document's rows) is not kept on
disk by a server nobody asks.
"""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from canon.ask.answer_log import HeldAnswerLog
from canon.ask.context import ask_context, embedder_for
from canon.ask.pipeline import AskContext
from canon.core import db
from canon.core.config import CanonPaths
from canon.core.errors import CanonInputError
from canon.index import revisions as index_store
from canon.registry.policy import Policy
from canon.registry.workspace import Workspace

# An idle server lets go of the registry snapshot after this many seconds (see the docstring).
IDLE_RELEASE_S = 5.0


@dataclass
class Session:
    """One call's view: the open workspace and the warm context (its `con` and
    `policy` are this call's)."""

    ws: Workspace
    ctx: AskContext
    policy: Policy
    answer_log: HeldAnswerLog   # where this call's answers are logged (held between calls)


class ServedState:
    def __init__(self, home: str | os.PathLike | None = None, embedder=None):
        self.home = home
        self._lock = threading.Lock()   # tools run in worker threads; one call at a time uses the state
        self._key: tuple | None = None
        self._ctx: AskContext | None = None
        self._embedder = embedder       # given: used for every revision (tests pass the hashing embedder)
        self._fixed_embedder = embedder is not None
        self._embedder_model: str | None = None
        self._ws: Workspace | None = None
        self._ws_snapshot: tuple | None = None   # db.published_snapshot when `_ws` was opened
        self._policy_key: tuple | None = None
        self._policy: Policy | None = None
        self._answer_log: HeldAnswerLog | None = None
        self._last_call = 0.0
        self._stop = threading.Event()
        self._reaper: threading.Thread | None = None
        self.rebuilds = 0               # how many times the context was rebuilt (warm-state tests read it)
        self.opens = 0                  # how many times the registry was opened (the same tests read it)

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._lock:
            try:
                reopened = self._open()
                session = self._refresh(self._ws, reopened)
            except BaseException:   # say, the revision's embedder is missing: the next call tries again
                self._release()
                raise
            try:
                yield session
            except CanonInputError:   # the caller's input: the connection is fine
                raise
            except BaseException:     # anything else may have come from the connection: start afresh
                self._release()
                raise
            finally:
                self._last_call = time.monotonic()
        if self._reaper is None:
            self._reaper = threading.Thread(target=self._reap, name="canon-serve-idle", daemon=True)
            self._reaper.start()

    def _open(self) -> bool:
        """Keep the held workspace while its snapshot is the published one; else open it anew."""
        # Read before opening: a snapshot swapped in meanwhile then only costs one more reopen.
        published = db.published_snapshot(CanonPaths.from_env(self.home).canon_db)
        if self._ws is not None and published is not None and published == self._ws_snapshot:
            return False
        # Closed first: DuckDB shares one database per path within a process, so a connection
        # opened while the old one is open would read the replaced snapshot.
        self._release()
        # Read-only, from the writers' snapshot: calls never take canon.duckdb's write lock, so a
        # Dagster run can publish meanwhile (docs/design.md, "Concurrent readers").
        self._ws = Workspace.open(self.home, read_only=True)
        self._ws_snapshot = published
        self.opens += 1
        return True

    def _release(self) -> None:
        if self._ws is not None:
            ws, self._ws, self._ws_snapshot = self._ws, None, None
            ws.close()

    def release_idle(self, idle_s: float = 0.0) -> bool:
        """Let go of the registry if no call came for `idle_s` seconds; True if it was held."""
        with self._lock:
            if self._ws is None or time.monotonic() - self._last_call < idle_s:
                return False
            self._release()
            return True

    def _reap(self) -> None:
        while not self._stop.wait(IDLE_RELEASE_S / 2):
            self.release_idle(IDLE_RELEASE_S)

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            self._release()
            if self._answer_log is not None:
                self._answer_log.close()

    def _log_for(self, ws: Workspace) -> HeldAnswerLog:
        if self._answer_log is None or self._answer_log.path != ws.paths.answer_log_file:
            if self._answer_log is not None:
                self._answer_log.close()
            self._answer_log = HeldAnswerLog(ws.paths.answer_log_file)
        return self._answer_log

    def _fingerprint(self, ws: Workspace) -> tuple:
        rev = index_store.served_revision(ws.con)
        docs = ws.con.execute("SELECT count(*), max(updated_at), max(deleted_at), "
                              "count(deleted_at) FROM documents").fetchall()[0]
        return (rev["revision_id"] if rev else None, tuple(docs)), rev

    def _live_policy(self, ws: Workspace, reopened: bool) -> Policy:
        path = ws.policy_path()
        try:
            raw = path.read_bytes()
        except OSError:   # missing, a dangling link, a directory: Workspace.policy says which, every call
            raw = None
        key = (str(path), raw)
        if raw is not None and not reopened and key == self._policy_key and self._policy is not None:
            return self._policy
        # Written after the read: a file that changes in between is read again on the next call.
        self._policy, self._policy_key = ws.policy(), (key if raw is not None else None)
        return self._policy

    def _refresh(self, ws: Workspace, reopened: bool) -> Session:
        policy = self._live_policy(ws, reopened)
        if self._ctx is None or reopened:   # a held snapshot cannot have changed
            key, rev = self._fingerprint(ws)
            if self._ctx is None or key != self._key:
                docs = ws.documents()
                emb = self._embedder
                if rev is not None and not self._fixed_embedder and self._embedder_model != rev["embedding_model_id"]:
                    emb = embedder_for(rev["embedding_model_id"], ws.con)
                    self._embedder, self._embedder_model = emb, rev["embedding_model_id"]
                # log_answers=False: the server logs each answer itself, with the principal and transport.
                self._ctx = ask_context(ws.con, ws.paths.lancedb_dir, docs, policy, embedder=emb,
                                        metric_values=ws.metric_engine(), log_answers=False)
                self._key = key
                self.rebuilds += 1
        ctx = self._ctx
        ctx.con = ws.con
        ctx.policy = policy
        return Session(ws=ws, ctx=ctx, policy=policy, answer_log=self._log_for(ws))
