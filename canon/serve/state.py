"""The server's warm state: the ask context (documents, catalog, per-role
visible sets), the served index revision and its embedder, kept between calls.

Before every call the registry is opened (as `canon ask` opens it: answers are
logged) and three things are compared with what is held:

- the served index revision (canon/index/revisions.py, `served_revision`) and
  a fingerprint of the registry's documents: either changed → the documents,
  the retriever and the context are rebuilt; the embedder is kept while the
  revision's embedding model is the same;
- the live policy (canon/registry/workspace.py reads policy.yml on every call):
  assigned to the context, whose visible sets are keyed by the policy's
  revision and rules (canon/ask/pipeline.py, `AskContext.view`), so a
  revocation denies on the very next call.

The registry connection is not held between calls: a DuckDB file has one
writer, and the Dagster job must be able to publish while the server runs.
"""

from __future__ import annotations

import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from canon.ask.context import ask_context, embedder_for
from canon.ask.pipeline import AskContext
from canon.index import revisions as index_store
from canon.registry.policy import Policy
from canon.registry.workspace import Workspace


@dataclass
class Session:
    """One call's view: the open workspace and the warm context (its `con` and
    `policy` are this call's)."""

    ws: Workspace
    ctx: AskContext
    policy: Policy


class ServedState:
    def __init__(self, home: str | os.PathLike | None = None, embedder=None):
        self.home = home
        self._lock = threading.Lock()   # tools run in worker threads; one call at a time uses the state
        self._key: tuple | None = None
        self._ctx: AskContext | None = None
        self._embedder = embedder       # given: used for every revision (tests pass the hashing embedder)
        self._fixed_embedder = embedder is not None
        self._embedder_model: str | None = None
        self.rebuilds = 0               # how many times the context was rebuilt (warm-state tests read it)

    @contextmanager
    def session(self) -> Iterator[Session]:
        with self._lock:
            # Read-only, from the writers' snapshot: calls never take canon.duckdb's write lock, so a
            # Dagster run can publish meanwhile (docs/design.md, "Concurrent readers").
            ws = Workspace.open(self.home, read_only=True)
            try:
                yield self._refresh(ws)
            finally:
                ws.close()

    def _fingerprint(self, ws: Workspace) -> tuple:
        rev = index_store.served_revision(ws.con)
        docs = ws.con.execute("SELECT count(*), max(updated_at), max(deleted_at), "
                              "count(deleted_at) FROM documents").fetchall()[0]
        return (rev["revision_id"] if rev else None, tuple(docs)), rev

    def _refresh(self, ws: Workspace) -> Session:
        policy = ws.policy()
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
        return Session(ws=ws, ctx=ctx, policy=policy)
