"""DuckDB side of the LanceDB index: revisions, lineage and the outbox.

LanceDB holds the chunk rows; DuckDB (Canon's `canon.duckdb`) holds the
record of which LanceDB table version is a *ready* index revision, the
chunk/embedding lineage (docs/design.md, "Lineage at two grains"), and `index_outbox`, the intent rows that
keep the two stores consistent (transactional outbox): the intent is committed
in DuckDB before LanceDB is written, and lineage + readiness are applied from
it afterwards — by the same publish, or by the repair step at the start of the
next one if the publisher died in between.

One Canon database serves one LanceDB index directory: `chunk_lineage` is
keyed by chunk_id alone.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Any

import duckdb
import pyarrow as pa

from canon.core import ids, schema
from canon.core.clock import utcnow

DEFAULT_TABLE = "chunks"


@dataclass
class PublishResult:
    revision_id: str | None
    lance_version: int | None
    chunks: int = 0
    embedded: int = 0
    reused: int = 0
    deleted: int = 0
    rewritten_metadata_only: int = 0
    documents: int = 0
    noop: bool = False
    repaired: list[str] = field(default_factory=list)
    rows_rebuilt: int = 0    # documents chunked and hashed this time (the rest came from canon.index.memo)

    @property
    def counts(self) -> dict[str, int]:
        return {"chunks": self.chunks, "embedded": self.embedded, "reused": self.reused,
                "deleted": self.deleted, "rewritten_metadata_only": self.rewritten_metadata_only}



LINEAGE_FIELDS = (
    "chunk_id", "doc_id", "doc_version", "object_id", "source_uri", "contract_version",
    "chunker", "span_start", "span_end", "embedding_key",
)


ensure_schema = schema.ensure_index


def has_schema(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'index_revisions' "
        "AND schema_name = current_schema() AND database_name = current_database()"
    ).fetchall()
    return bool(row and row[0][0])


def _rows_as_dicts(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def served_revision(con: duckdb.DuckDBPyConnection) -> dict[str, Any] | None:
    """The latest ready revision (what queries pin), or None."""
    if not has_schema(con):
        return None
    rows = _rows_as_dicts(con.execute(
        "SELECT * FROM index_revisions WHERE status = 'ready' ORDER BY seq DESC LIMIT 1"))
    return rows[0] if rows else None


def get_revision(con: duckdb.DuckDBPyConnection, revision_id: str) -> dict[str, Any] | None:
    if not has_schema(con):
        return None
    rows = _rows_as_dicts(con.execute("SELECT * FROM index_revisions WHERE revision_id = ?", [revision_id]))
    return rows[0] if rows else None


def pending_outbox(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    return _rows_as_dicts(con.execute(
        "SELECT o.*, r.run_id, r.seq FROM index_outbox o JOIN index_revisions r USING (revision_id) "
        "WHERE o.status = 'pending' ORDER BY r.seq"))


def revision_id(seq: int, *parts: str) -> str:
    """The id of revision number `seq`; `parts` say what made it (table, run, cause)."""
    return f"rev-{seq:06d}-{ids.h(*parts, str(seq), n=8)}"


def next_seq(con: duckdb.DuckDBPyConnection) -> int:
    return int(con.execute("SELECT coalesce(max(seq), 0) + 1 FROM index_revisions").fetchall()[0][0])


class Txn:
    """BEGIN/COMMIT around a block; ROLLBACK on any exception."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con

    def __enter__(self) -> duckdb.DuckDBPyConnection:
        self.con.execute("BEGIN TRANSACTION")
        return self.con

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.con.execute("COMMIT")
        else:
            self.con.execute("ROLLBACK")


def insert_revision(con: duckdb.DuckDBPyConnection, rev: dict[str, Any]) -> None:
    cols = list(rev)
    con.execute(
        f"INSERT INTO index_revisions ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
        [rev[c] for c in cols],
    )


def insert_outbox(con: duckdb.DuckDBPyConnection, *, revision_id: str, lance_table: str, base_version: int | None,
                  expected_rows: int, expected_digest: str, payload: dict[str, Any]) -> None:
    con.execute(
        "INSERT INTO index_outbox VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, NULL, NULL)",
        [f"outbox-{revision_id}", revision_id, lance_table, base_version, expected_rows,
         expected_digest, json.dumps(payload, separators=(",", ":")), utcnow()],
    )


def apply_outbox(con: duckdb.DuckDBPyConnection, outbox: dict[str, Any], *, lance_version: int,
                 run_id: str, resolution: str) -> None:
    """Apply an outbox intent whose LanceDB write is verified: lineage rows,
    revision ready, outbox applied — one DuckDB transaction."""
    payload = json.loads(outbox["payload"])
    live = pa.table({f: [r[i] for r in payload["chunks"]] for i, f in enumerate(LINEAGE_FIELDS)},
                    schema=pa.schema([(f, pa.int32() if f.startswith("span_") else pa.string())
                                      for f in LINEAGE_FIELDS]))
    now = utcnow()
    rev_id = outbox["revision_id"]
    view = f"_canon_live_{rev_id.replace('-', '_')}"
    con.register(view, live)
    try:
        with Txn(con):
            con.execute(
                f"""INSERT INTO chunk_lineage
                    SELECT chunk_id, doc_id, doc_version, object_id, source_uri, contract_version,
                           chunker, span_start, span_end, ?, ?, NULL FROM {view}
                    ON CONFLICT (chunk_id) DO UPDATE SET deleted_at = NULL,
                        source_uri = excluded.source_uri, contract_version = excluded.contract_version""",
                [run_id, now],
            )
            # Chunks no longer served leave lineage as deleted (kept, for impact analysis).
            con.execute(
                f"UPDATE chunk_lineage SET deleted_at = ? WHERE deleted_at IS NULL "
                f"AND chunk_id NOT IN (SELECT chunk_id FROM {view})", [now])
            con.execute(
                f"""INSERT INTO embedding_lineage
                    SELECT chunk_id, ?, embedding_key, ?, ? FROM {view}
                    ON CONFLICT DO NOTHING""",
                [payload["model_id"], rev_id, run_id],
            )
            con.execute(
                "UPDATE index_revisions SET status = 'ready', lance_version = ?, ready_at = ?, row_count = ? "
                "WHERE revision_id = ?",
                [lance_version, now, len(payload["chunks"]), rev_id],
            )
            con.execute(
                "UPDATE index_outbox SET status = 'applied', resolved_at = ?, resolution = ? WHERE outbox_id = ?",
                [now, resolution, outbox["outbox_id"]],
            )
    finally:
        con.unregister(view)


def note_completed_by_repair(con: duckdb.DuckDBPyConnection, revision_id: str) -> None:
    con.execute("UPDATE index_revisions SET note = 'publish (completed by repair)' WHERE revision_id = ?",
                [revision_id])


def set_row_counts(con: duckdb.DuckDBPyConnection, revision_id: str, *, rows: int, docs: int) -> None:
    """Counts of a revision rewritten without some rows (a deletion): every
    remaining row is a reused chunk."""
    con.execute("UPDATE index_revisions SET row_count = ?, chunk_count = ?, doc_count = ?, reused_count = ? "
                "WHERE revision_id = ?", [rows, rows, docs, rows, revision_id])


def mark_pruned(con: duckdb.DuckDBPyConnection, lance_table: str, remaining_versions: list[int],
                now: dt.datetime) -> None:
    """Revisions of `lance_table` whose LanceDB version no longer exists."""
    con.execute(
        f"UPDATE index_revisions SET pruned_at = ? WHERE lance_table = ? AND pruned_at IS NULL "
        f"AND lance_version IS NOT NULL AND lance_version NOT IN ({', '.join(map(str, remaining_versions))})",
        [now, lance_table])


def mark_table_dropped(con: duckdb.DuckDBPyConnection, lance_table: str, now: dt.datetime) -> None:
    """Every revision of a dropped LanceDB table is pruned (the earliest time kept)."""
    con.execute("UPDATE index_revisions SET pruned_at = coalesce(pruned_at, ?) WHERE lance_table = ?",
                [now, lance_table])


def abandon(con: duckdb.DuckDBPyConnection, revision_id: str, reason: str) -> None:
    now = utcnow()
    with Txn(con):
        con.execute(
            "UPDATE index_revisions SET status = 'failed', error = ? WHERE revision_id = ? AND status = 'building'",
            [reason[:2000], revision_id])
        con.execute(
            "UPDATE index_outbox SET status = 'abandoned', resolved_at = ?, resolution = ? "
            "WHERE revision_id = ? AND status = 'pending'",
            [now, reason[:2000], revision_id])


def copy_revision(con: duckdb.DuckDBPyConnection, source: dict[str, Any], *, revision_id: str, seq: int,
                  lance_version: int, policy_revision: str, run_id: str, note: str) -> None:
    """A new ready revision with the same rows as `source` (policy-only change,
    or a cleanup rewrite): same counts, embedding lineage copied."""
    now = utcnow()
    with Txn(con):
        rev = {k: source[k] for k in ("lance_table", "embedding_model_id", "embedding_identity_json",
                                       "row_count", "doc_count", "chunk_count")}
        rev.update(revision_id=revision_id, seq=seq, lance_version=lance_version,
                   base_version=source["lance_version"], policy_revision=policy_revision,
                   created_at=now, ready_at=now, status="ready", embedded_count=0,
                   reused_count=source["chunk_count"], rewritten_count=0, deleted_count=0,
                   run_id=run_id, note=note)
        insert_revision(con, rev)
        con.execute(
            "INSERT INTO embedding_lineage SELECT chunk_id, model_id, embedding_key, ?, ? "
            "FROM embedding_lineage WHERE index_revision = ?",
            [revision_id, run_id, source["revision_id"]])
