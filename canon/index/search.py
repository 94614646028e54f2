"""Queries over one pinned index revision: full-text, vector, hybrid.

Authorization is a PREFILTER: the role, status and exclusion conditions go
into LanceDB's `where(..., prefilter=True)`, so rows a role may not read are
never candidates — not dropped after ranking (which could leak through
"k results, some removed") and never scored.

Hybrid = our own reciprocal-rank fusion over the two ranked lists
(score = sum over lists of 1 / (60 + rank)). We fuse ourselves rather than use
LanceDB's RRFReranker so that both lists are prefiltered identically, ties
break deterministically (best single rank, then chunk_id) and no pandas is
needed.

Latency: a query is one trip to LanceDB's event loop — the FTS and vector
lists run concurrently and read ids only, the fusion runs there, and only the
final top-k rows are read in full (one take by row id on the same pinned
version). Pinned tables are reused across queries (their index caches stay
warm) while their version exists. The role prefilter is served by the
LABEL_LIST index and large tables by the vector index of `canon.index.tuning`
(IVF_FLAT, or IVF_RQ with refine on the largest).
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import duckdb
import lancedb
import numpy as np
from lancedb.background_loop import LOOP

from canon.core.db import sql_literal
from canon.core.errors import CanonInputError, CanonRunError
from canon.index.rows import RETURN_COLUMNS
from canon.index.tuning import ann_params

RRF_K = 60
MODES = ("hybrid", "fts", "vector")


class IndexNotReady(CanonRunError):
    """No ready index revision to serve (nothing published yet, or the pinned
    revision is not ready / was pruned)."""


@dataclass
class Hit:
    chunk_id: str
    doc_id: str
    score: float
    rank: int
    revision_id: str
    fts_rank: int | None = None
    vector_rank: int | None = None
    fts_score: float | None = None
    vector_score: float | None = None   # cosine similarity
    attrs: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.attrs[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)


def build_prefilter(role: str, exclude_doc_ids: Iterable[str] = (), statuses: Iterable[str] | None = None,
                    where: str | None = None) -> str:
    if not role or not str(role).strip():
        raise CanonInputError("<query>", "a role is required for every index query", field="role")
    parts = [f"array_has_any(allowed_roles, [{sql_literal(role)}])"]
    excl = sorted({str(d) for d in exclude_doc_ids})
    if excl:
        parts.append(f"doc_id NOT IN ({', '.join(sql_literal(d) for d in excl)})")
    if statuses is not None:
        st = sorted({str(s) for s in statuses})
        parts.append(f"status IN ({', '.join(sql_literal(s) for s in st)})" if st else "false")
    if where:
        parts.append(f"({where})")
    return " AND ".join(parts)


# ------------------------------------------------------------------ pinned tables

# Open LanceDB tables by (directory, table, version). Reusing the handle keeps
# LanceDB's index and metadata caches warm between queries (reopening per query
# re-read the FTS posting lists and the vector partitions every time). A handle
# is only reused while its version's manifest still exists, so a version pruned
# by cleanup/forget is never read from a stale handle.
_TABLES: "OrderedDict[tuple[str, str, int], _Pinned]" = OrderedDict()
_TABLES_MAX = 4
_TABLES_LOCK = threading.Lock()
_U64 = (1 << 64) - 1


@dataclass
class _Pinned:
    tbl: Any
    dims: int
    vector_index: str | None    # the type of the ANN index on `vector` in this version, if any


def _manifest_exists(lancedb_dir, table: str, version: int) -> bool:
    d = os.path.join(str(lancedb_dir), f"{table}.lance", "_versions")
    return (os.path.exists(os.path.join(d, f"{_U64 - version:020d}.manifest"))
            or os.path.exists(os.path.join(d, f"{version}.manifest")))


def _open_pinned(lancedb_dir, table: str, version: int) -> _Pinned:
    key = (os.path.abspath(str(lancedb_dir)), table, int(version))
    with _TABLES_LOCK:
        hit = _TABLES.get(key)
        if hit is not None:
            _TABLES.move_to_end(key)
    if hit is not None and _manifest_exists(lancedb_dir, table, version):
        return hit
    tbl = lancedb.connect(str(lancedb_dir)).open_table(table)
    tbl.checkout(int(version))
    pinned = _Pinned(tbl=tbl, dims=int(tbl.schema.field("vector").type.list_size),
                     vector_index=next((i.index_type for i in tbl.list_indices()
                                        if "vector" in i.columns and i.index_type not in ("FTS", "INVERTED")), None))
    with _TABLES_LOCK:
        _TABLES[key] = pinned
        _TABLES.move_to_end(key)
        while len(_TABLES) > _TABLES_MAX:
            _TABLES.popitem(last=False)
    return pinned


def _forget_pinned(lancedb_dir, table: str, version: int) -> None:
    with _TABLES_LOCK:
        _TABLES.pop((os.path.abspath(str(lancedb_dir)), table, int(version)), None)


def release_tables() -> None:
    """Close every pinned table, and with them LanceDB's caches of their indexes (a one-shot
    process that has made its last query: canon/core/memory.py)."""
    with _TABLES_LOCK:
        _TABLES.clear()


_REV_COLUMNS = ("revision_id", "status", "lance_table", "lance_version", "embedding_model_id")


def _revision_row(con, revision_id: str | None) -> dict[str, Any] | None:
    """The served (latest ready) or the named revision: what a query needs of
    `index_store.served_revision` / `get_revision`, in one narrow statement."""
    cols = ", ".join(_REV_COLUMNS)
    try:
        if revision_id:
            row = con.execute(f"SELECT {cols} FROM index_revisions WHERE revision_id = ?", [revision_id]).fetchone()
        else:
            row = con.execute(f"SELECT {cols} FROM index_revisions WHERE status = 'ready' "
                              "ORDER BY seq DESC LIMIT 1").fetchone()
    except duckdb.CatalogException:
        return None   # no index schema: nothing published yet
    return dict(zip(_REV_COLUMNS, row)) if row else None


def _pin(lancedb_dir, con, revision_id: str | None, revision: dict[str, Any] | None = None):
    """(revision, pinned table at its version). `revision` is a ready revision row
    the caller already resolved (a Retriever pins the served revision once, when it
    is built); otherwise the served (or the named) revision is read from DuckDB.
    Retries briefly when the served version is pruned under us by a concurrent cleanup."""
    if revision is not None:
        if revision.get("status") != "ready":
            raise IndexNotReady(f"index revision {revision.get('revision_id')} is {revision.get('status')}, not ready")
        if not _manifest_exists(lancedb_dir, revision["lance_table"], int(revision["lance_version"])):
            _forget_pinned(lancedb_dir, revision["lance_table"], int(revision["lance_version"]))
            raise IndexNotReady(f"LanceDB version of index revision {revision['revision_id']} is not readable "
                                "(pruned by cleanup?)")
        try:
            return revision, _open_pinned(lancedb_dir, revision["lance_table"], int(revision["lance_version"]))
        except Exception as exc:
            raise IndexNotReady(f"LanceDB version of index revision {revision['revision_id']} is not readable "
                                f"(pruned by cleanup?): {exc}") from None
    last_exc: Exception | None = None
    for attempt in range(4):
        rev = _revision_row(con, revision_id)
        if rev is None:
            raise IndexNotReady(f"no index revision {revision_id!r}" if revision_id
                                else "no ready index revision has been published yet")
        if rev["status"] != "ready":
            raise IndexNotReady(f"index revision {rev['revision_id']} is {rev['status']}, not ready")
        try:
            return rev, _open_pinned(lancedb_dir, rev["lance_table"], int(rev["lance_version"]))
        except Exception as exc:  # version pruned / table missing
            last_exc = exc
            if revision_id:
                break
            time.sleep(0.05 * (attempt + 1))
    raise IndexNotReady(
        f"LanceDB version of index revision {revision_id or 'served'} is not readable "
        f"(pruned by cleanup?): {last_exc}")


def _attrs(row: dict[str, Any], columns: Sequence[str] = RETURN_COLUMNS) -> dict[str, Any]:
    return {k: row.get(k) for k in columns}


# Columns every ranked list carries; the rest is read for the final top-k only.
_RANK_COLUMNS = ["chunk_id", "doc_id"]


def search(
    lancedb_dir: str | os.PathLike,
    con: duckdb.DuckDBPyConnection,
    query_text: str | None,
    query_vector: Sequence[float] | np.ndarray | None,
    *,
    role: str,
    exclude_doc_ids: Iterable[str] = (),
    where: str | None = None,
    k: int = 10,
    mode: str = "hybrid",
    revision_id: str | None = None,
    statuses: Iterable[str] | None = None,
    model_id: str | None = None,
    candidates: int | None = None,
    columns: Sequence[str] | None = None,
    revision: dict[str, Any] | None = None,
) -> list[Hit]:
    """Top-k chunks of the served (or the given ready) revision for `role`.

    `where` is an extra SQL predicate written by Canon code (never raw user
    text; build values with `sql_literal`). `model_id`, if given, must match
    the revision's embedding model (query vectors from another model are
    meaningless). In hybrid mode a missing text or vector degrades to the
    other list. `columns` (a subset of RETURN_COLUMNS; default all) are the
    attributes each Hit carries: both ranked lists read only ids, and only the
    final top-k rows are read in full. `revision` is a ready revision row the
    caller resolved already (no DuckDB read per query).
    """
    if mode not in MODES:
        raise CanonInputError("<query>", f"mode must be one of {MODES}, got {mode!r}", field="mode")
    if k <= 0:
        return []
    cols = list(RETURN_COLUMNS) if columns is None else list(dict.fromkeys(columns))
    unknown = [c for c in cols if c not in RETURN_COLUMNS]
    if unknown:
        raise CanonInputError("<query>", f"unknown columns {unknown}", field="columns")
    flt = build_prefilter(role, exclude_doc_ids, statuses, where)
    rev, pinned = _pin(lancedb_dir, con, revision_id, revision)
    if model_id is not None and model_id != rev["embedding_model_id"]:
        raise CanonInputError("<query>", f"query embedded with {model_id} but revision {rev['revision_id']} "
                                         f"holds {rev['embedding_model_id']}", field="model_id")
    n = candidates or max(4 * k, 40)
    use_fts = mode in ("hybrid", "fts") and bool(query_text and query_text.strip())
    use_vec = mode in ("hybrid", "vector") and query_vector is not None
    if mode == "fts" and not use_fts:
        raise CanonInputError("<query>", "fts mode needs query_text", field="query_text")
    if mode == "vector" and not use_vec:
        raise CanonInputError("<query>", "vector mode needs query_vector", field="query_vector")
    vec = None
    if use_vec:
        vec = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        if vec.shape[0] != pinned.dims or not np.isfinite(vec).all():
            raise CanonInputError("<query>", f"query vector must be {pinned.dims} finite floats, got {vec.shape[0]}",
                                  field="query_vector")

    rid = rev["revision_id"]

    def rank(fts_rows: list[dict[str, Any]], vec_rows: list[dict[str, Any]]) -> list[Hit]:
        fts_rows.sort(key=lambda r: (-r["_score"], r["chunk_id"]))
        vec_rows.sort(key=lambda r: (r["_distance"], r["chunk_id"]))
        if mode == "fts" or (mode == "hybrid" and not use_vec):
            return [Hit(r["chunk_id"], r["doc_id"], float(r["_score"]), i + 1, rid, fts_rank=i + 1,
                        fts_score=float(r["_score"]), attrs=_attrs(r, cols)) for i, r in enumerate(fts_rows[:k])]
        if mode == "vector" or (mode == "hybrid" and not use_fts):
            return [Hit(r["chunk_id"], r["doc_id"], 1.0 - float(r["_distance"]), i + 1, rid, vector_rank=i + 1,
                        vector_score=1.0 - float(r["_distance"]), attrs=_attrs(r, cols))
                    for i, r in enumerate(vec_rows[:k])]
        return rrf_fuse(fts_rows, vec_rows, k=k, revision_id=rid, columns=cols)

    return LOOP.run(_search(pinned, flt, query_text if use_fts else None, vec, n, cols, rank))


async def _search(pinned: _Pinned, flt: str, text: str | None, vec: np.ndarray | None, n: int,
                  cols: list[str], rank) -> list[Hit]:
    """One trip to LanceDB's event loop: both ranked lists concurrently (ids only),
    the fusion, then the wide columns of the final hits (one take by row id, same version)."""
    from lancedb.query import MatchQuery

    atbl = pinned.tbl._table   # the AsyncTable behind the pinned (checked-out) table
    queries = []
    if text is not None:
        # MatchQuery: the user's words are terms, never query syntax. where() is a prefilter.
        queries.append(atbl.query().nearest_to_text(MatchQuery(text, "text")).where(flt)
                       .select(_RANK_COLUMNS + ["_score"]).with_row_id().limit(n))
    if vec is not None:
        vq = atbl.query().nearest_to(vec).column("vector").distance_type("cosine").where(flt)
        if pinned.vector_index:
            vq = ann_params(vq, pinned.vector_index)
        queries.append(vq.select(_RANK_COLUMNS + ["_distance"]).with_row_id().limit(n))
    got = [t.to_pylist() for t in await asyncio.gather(*(q.to_arrow() for q in queries))]
    fts_rows = got.pop(0) if text is not None else []
    vec_rows = got.pop(0) if vec is not None else []
    hits = rank(fts_rows, vec_rows)
    rest = [c for c in cols if c not in _RANK_COLUMNS]
    if hits and rest:
        rowids = {r["chunk_id"]: r["_rowid"] for r in fts_rows + vec_rows}
        rows = (await atbl.take_row_ids([rowids[h.chunk_id] for h in hits]).select(["chunk_id"] + rest)
                .to_arrow()).to_pylist()
        by_id = {r["chunk_id"]: r for r in rows}
        for h in hits:
            r = by_id[h.chunk_id]
            h.attrs = {c: (h.attrs.get(c) if c in _RANK_COLUMNS else r.get(c)) for c in cols}
    return hits


def rrf_fuse(fts_rows: list[dict[str, Any]], vec_rows: list[dict[str, Any]], *, k: int,
             revision_id: str, rrf_k: int = RRF_K, columns: Sequence[str] = RETURN_COLUMNS) -> list[Hit]:
    fused: dict[str, Hit] = {}

    def hit(r: dict[str, Any]) -> Hit:
        h = fused.get(r["chunk_id"])
        if h is None:
            h = fused[r["chunk_id"]] = Hit(r["chunk_id"], r["doc_id"], 0.0, 0, revision_id, attrs=_attrs(r, columns))
        return h

    for i, r in enumerate(fts_rows):
        h = hit(r)
        h.fts_rank, h.fts_score = i + 1, float(r["_score"])
        h.score += 1.0 / (rrf_k + i + 1)
    for i, r in enumerate(vec_rows):
        h = hit(r)
        h.vector_rank, h.vector_score = i + 1, 1.0 - float(r["_distance"])
        h.score += 1.0 / (rrf_k + i + 1)
    big = 1 << 30
    ordered = sorted(fused.values(), key=lambda h: (-h.score, min(h.fts_rank or big, h.vector_rank or big),
                                                   h.chunk_id))
    for i, h in enumerate(ordered[:k]):
        h.rank = i + 1
    return ordered[:k]
