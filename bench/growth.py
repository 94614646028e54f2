"""Section 6, growth (child side; the figures are bench/figures.py's): one cold build with the
HashingEmbedder of an N-document corpus, and what each store holds afterwards."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from bench.pipeline import TimedEmbedder, disk_mb, pipeline, public
from bench.workdir import fresh_dir
from canon.index.embedding.hashing import HashingEmbedder
from canon.registry import store as registry
from canon.registry.tombstones import has_table


def _rows(con, table: str) -> int | None:
    return con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0] if has_table(con, table) else None


def case_growth(p: dict[str, Any]) -> dict[str, Any]:
    """One cold build (HashingEmbedder) of an N-document corpus: what each store holds afterwards."""
    ws = fresh_dir(Path(p["ws"]))
    b = pipeline(Path(p["corpus"]), ws, TimedEmbedder(HashingEmbedder()), run_id="growth")
    lance = ws / "lancedb"
    fts_mb = sum(f.stat().st_size for f in lance.rglob("_indices/**/*") if f.is_file()) / 1e6
    con = registry.connect(ws / "canon.duckdb", read_only=True)
    try:
        rows = {t: _rows(con, t) for t in ("documents", "document_versions", "definitions", "quarantine",
                                           "corpus_files", "chunk_lineage", "embedding_lineage", "answer_log")}
    finally:
        con.close()
    out = {"build": public(b), "docs": b["docs"], "chunks": b["chunks"], "vectors_mb": b["chunks"] * 384 * 4 / 1e6,
           "fts_index_mb": round(fts_mb, 1), **disk_mb(ws), "rows": rows}
    shutil.rmtree(ws, ignore_errors=True)
    return out
