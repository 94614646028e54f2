"""LanceDB indexes that make the role-prefiltered queries fast, built with the
FTS index at every write of the chunk table (publish, repair, cleanup, forget).

- `allowed_roles`: a LABEL_LIST scalar index. The role prefilter
  (`array_has_any(allowed_roles, [role])`) then reads a bitmap instead of
  scanning the list column of every row; it stays a prefilter.
- `vector`: without an index every query re-reads and decodes every vector
  from the data files (~0.3 s at 100k chunks). From `ANN_MIN_ROWS` rows the
  table gets an IVF_FLAT index: raw vectors grouped by partition and held in
  LanceDB's index cache. Queries probe at least `ANN_MIN_PROBES` partitions and
  have no probe limit, so LanceDB keeps probing until no unprobed partition can
  hold a closer row: the results are the exact scan's (up to the order of rows
  at exactly equal distance). From `RQ_MIN_ROWS` rows it is IVF_RQ instead
  (RaBitQ codes of `RQ_BITS` bits per dimension: a sixteenth of the bytes),
  probed the same way, and the best `RQ_REFINE` x limit candidates are
  re-ranked on their full vectors (`refine_factor`), so the distances returned
  are exact and only a row the quantization pushed out of that candidate list
  can be missed. An index of older builds, IVF_SQ (8 bits per dimension), is
  queried with `SQ_REFINE` until the next write re-trains it as IVF_RQ.

The thresholds are the crossovers measured on the benchmark tables (first N
rows of the 106k-chunk bench corpus, analyst prefilter, 60 queries, see the
report): IVF_FLAT beats the flat scan from a few thousand rows, a quantized
index with refine beats IVF_FLAT from ~50k rows; both kept recall@10/@40
against the exact scan at 1.000 (up to ties). Below `ANN_MIN_ROWS` there is no
vector index (an existing one is dropped).

Why IVF_RQ at 2 bits with a refine of 10 (README, "Performance"): a new
`canon ask` process loads every partition it probes, so the index's size is
its memory. On the 169,678-chunk table (100 queries against the exact scan)
IVF_SQ was 65 MB and recall@10/@40 1.000/0.997; IVF_RQ 2 bits 20 MB and
1.000/0.996 with refine 10 (0.998/0.979 with 4); 1 bit 11 MB but 0.997/0.966
even with refine 20; 4 bits 36 MB.

Rows written after the vector index was trained are searched exactly beside it
(LanceDB's flat search of unindexed fragments), so results stay complete; the
index is re-trained when those rows pass `RETRAIN_SHARE` of the table or when
the table crosses a threshold.
"""

from __future__ import annotations

import math
from typing import Any

ROLE_INDEX = "allowed_roles_idx"
VECTOR_INDEX = "vector_idx"

ANN_MIN_ROWS = 5_000          # IVF_FLAT from here (exact results, vectors served from the index cache)
RQ_MIN_ROWS = 50_000          # IVF_RQ + refine from here
ANN_ROWS_PER_PARTITION = 4096
ANN_MIN_PROBES = 20
ANN_MAX_PROBES = 0            # 0 = no limit (exhaustive unless LanceDB proves the rest farther)
RQ_BITS = 2                   # IVF_RQ: bits per dimension of the RaBitQ codes
RQ_REFINE = 10                # IVF_RQ: re-rank RQ_REFINE x limit candidates on full vectors
SQ_REFINE = 4                 # the same for an IVF_SQ index an older build trained
RETRAIN_SHARE = 0.10


def ann_partitions(rows: int) -> int:
    return max(1, min(rows, math.ceil(rows / ANN_ROWS_PER_PARTITION)))


def vector_index_type(rows: int, *, ann_min_rows: int | None = None, rq_min_rows: int | None = None) -> str | None:
    """IVF_FLAT, IVF_RQ or None (no vector index) for a table of `rows` rows."""
    if rows < (ANN_MIN_ROWS if ann_min_rows is None else ann_min_rows):
        return None
    return "IVF_RQ" if rows >= (RQ_MIN_ROWS if rq_min_rows is None else rq_min_rows) else "IVF_FLAT"


def tune_indexes(tbl, *, ann_min_rows: int | None = None, rq_min_rows: int | None = None) -> dict[str, Any]:
    """Create or refresh the scalar and vector indexes of the chunk table (each a
    new table version: call before the version is recorded as a revision)."""
    from lancedb.index import IvfFlat, IvfRq, LabelList

    rows = tbl.count_rows()
    out: dict[str, Any] = {"rows": rows, "role_index": False, "vector_index": None}
    if rows == 0:
        return out
    tbl.create_index("allowed_roles", config=LabelList(), replace=True, name=ROLE_INDEX)
    out["role_index"] = True
    existing = {i.name for i in tbl.list_indices()}
    want = vector_index_type(rows, ann_min_rows=ann_min_rows, rq_min_rows=rq_min_rows)
    if want is None:
        if VECTOR_INDEX in existing:
            tbl.drop_index(VECTOR_INDEX)
            out["vector_index"] = "dropped"
        return out
    if VECTOR_INDEX in existing:
        stats = tbl.index_stats(VECTOR_INDEX)
        unindexed = getattr(stats, "num_unindexed_rows", rows) if stats is not None else rows
        if getattr(stats, "index_type", None) == want and unindexed <= RETRAIN_SHARE * rows:
            out["vector_index"] = f"{want} kept ({unindexed} newer rows searched exactly beside it)"
            return out
    parts = ann_partitions(rows)
    config = (IvfRq(distance_type="cosine", num_partitions=parts, num_bits=RQ_BITS) if want == "IVF_RQ"
              else IvfFlat(distance_type="cosine", num_partitions=parts))
    tbl.create_index("vector", config=config, replace=True, name=VECTOR_INDEX)
    out["vector_index"] = f"{want}, {parts} partitions"
    return out


def ann_params(query, index_type: str | None):
    """Query-side settings for a table with a vector index of `index_type`."""
    q = query.maximum_nprobes(0).minimum_nprobes(ANN_MIN_PROBES)   # (LanceDB checks min <= max on each call)
    if ANN_MAX_PROBES:
        q = q.maximum_nprobes(ANN_MAX_PROBES)
    refine = {"IVF_RQ": RQ_REFINE, "IvfRq": RQ_REFINE, "IVF_SQ": SQ_REFINE, "IvfSq": SQ_REFINE}.get(index_type)
    if refine:
        q = q.refine_factor(refine)
    return q
