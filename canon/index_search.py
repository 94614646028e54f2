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
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import duckdb
import lancedb
import numpy as np

from canon.errors import CanonInputError, CanonRunError
from canon.index_rows import RETURN_COLUMNS
from canon.index_store import get_revision, served_revision

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


def sql_literal(value: object) -> str:
    """A SQL string literal for LanceDB (DataFusion) filters: quotes doubled,
    NUL refused. Use for every user-influenced value in a filter."""
    s = str(value)
    if "\x00" in s:
        raise CanonInputError("<filter>", "NUL character in a filter value")
    return "'" + s.replace("'", "''") + "'"


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


def _pin(lancedb_dir, con, revision_id: str | None):
    """(revision, table checked out at its version). Retries briefly when the
    served version is pruned under us by a concurrent cleanup."""
    last_exc: Exception | None = None
    for attempt in range(4):
        rev = get_revision(con, revision_id) if revision_id else served_revision(con)
        if rev is None:
            raise IndexNotReady(f"no index revision {revision_id!r}" if revision_id
                                else "no ready index revision has been published yet")
        if rev["status"] != "ready":
            raise IndexNotReady(f"index revision {rev['revision_id']} is {rev['status']}, not ready")
        try:
            tbl = lancedb.connect(str(lancedb_dir)).open_table(rev["lance_table"])
            tbl.checkout(int(rev["lance_version"]))
            return rev, tbl
        except Exception as exc:  # version pruned / table missing
            last_exc = exc
            if revision_id:
                break
            time.sleep(0.05 * (attempt + 1))
    raise IndexNotReady(
        f"LanceDB version of index revision {revision_id or 'served'} is not readable "
        f"(pruned by cleanup?): {last_exc}")


def _attrs(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row.get(k) for k in RETURN_COLUMNS}


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
) -> list[Hit]:
    """Top-k chunks of the served (or the given ready) revision for `role`.

    `where` is an extra SQL predicate written by Canon code (never raw user
    text; build values with `sql_literal`). `model_id`, if given, must match
    the revision's embedding model (query vectors from another model are
    meaningless). In hybrid mode a missing text or vector degrades to the
    other list.
    """
    if mode not in MODES:
        raise CanonInputError("<query>", f"mode must be one of {MODES}, got {mode!r}", field="mode")
    if k <= 0:
        return []
    flt = build_prefilter(role, exclude_doc_ids, statuses, where)
    rev, tbl = _pin(lancedb_dir, con, revision_id)
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
    cols = list(RETURN_COLUMNS)

    fts_rows: list[dict[str, Any]] = []
    if use_fts:
        from lancedb.query import MatchQuery

        # MatchQuery: the user's words are terms, never query syntax.
        fts_rows = (tbl.search(MatchQuery(query_text, "text"), query_type="fts")
                    .where(flt, prefilter=True).select(cols + ["_score"]).limit(n).to_list())
        fts_rows.sort(key=lambda r: (-r["_score"], r["chunk_id"]))
    vec_rows: list[dict[str, Any]] = []
    if use_vec:
        vec = np.asarray(query_vector, dtype=np.float32).reshape(-1)
        dims = int(tbl.schema.field("vector").type.list_size)
        if vec.shape[0] != dims or not np.isfinite(vec).all():
            raise CanonInputError("<query>", f"query vector must be {dims} finite floats, got {vec.shape[0]}",
                                  field="query_vector")
        vec_rows = (tbl.search(vec, vector_column_name="vector", query_type="vector")
                    .distance_type("cosine").where(flt, prefilter=True)
                    .select(cols + ["_distance"]).limit(n).to_list())
        vec_rows.sort(key=lambda r: (r["_distance"], r["chunk_id"]))

    rid = rev["revision_id"]
    if mode == "fts" or (mode == "hybrid" and not use_vec):
        return [Hit(r["chunk_id"], r["doc_id"], float(r["_score"]), i + 1, rid, fts_rank=i + 1,
                    fts_score=float(r["_score"]), attrs=_attrs(r)) for i, r in enumerate(fts_rows[:k])]
    if mode == "vector" or (mode == "hybrid" and not use_fts):
        return [Hit(r["chunk_id"], r["doc_id"], 1.0 - float(r["_distance"]), i + 1, rid, vector_rank=i + 1,
                    vector_score=1.0 - float(r["_distance"]), attrs=_attrs(r)) for i, r in enumerate(vec_rows[:k])]
    return rrf_fuse(fts_rows, vec_rows, k=k, revision_id=rid)


def rrf_fuse(fts_rows: list[dict[str, Any]], vec_rows: list[dict[str, Any]], *, k: int,
             revision_id: str, rrf_k: int = RRF_K) -> list[Hit]:
    fused: dict[str, Hit] = {}
    for i, r in enumerate(fts_rows):
        h = fused.setdefault(r["chunk_id"], Hit(r["chunk_id"], r["doc_id"], 0.0, 0, revision_id, attrs=_attrs(r)))
        h.fts_rank, h.fts_score = i + 1, float(r["_score"])
        h.score += 1.0 / (rrf_k + i + 1)
    for i, r in enumerate(vec_rows):
        h = fused.setdefault(r["chunk_id"], Hit(r["chunk_id"], r["doc_id"], 0.0, 0, revision_id, attrs=_attrs(r)))
        h.vector_rank, h.vector_score = i + 1, 1.0 - float(r["_distance"])
        h.score += 1.0 / (rrf_k + i + 1)
    big = 1 << 30
    ordered = sorted(fused.values(), key=lambda h: (-h.score, min(h.fts_rank or big, h.vector_rank or big),
                                                   h.chunk_id))
    for i, h in enumerate(ordered[:k]):
        h.rank = i + 1
    return ordered[:k]
