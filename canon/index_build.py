"""The knowledge index's routine publish: the registry's live documents, projected
through the live policy, published by `canon.index.publish` -- unless nothing it
depends on changed since the served revision, in which case nothing is loaded.

`index.publish` already writes nothing when its rows are unchanged, but to find
that out it loads, projects and chunks every document (~3 s at 10,000 documents).
Here a digest of everything the rows are a function of is compared first:

- every registry row, whole (text, metadata, roles, dates, timestamps), by
  `registry.table_signature`;
- the policy's full content (its projection decides the served roles);
- the embedder's identity and the publish options (table, chunker, sizes);
- the source of the code that turns documents into rows (chunking, row building).

A ready revision remembers the digest it was verified against (`index_inputs`).
When the served revision's digest matches, no publish is pending repair and the
LanceDB table is still at the served version, the publish is a no-op.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import duckdb

from canon import chunking, index, index_rows, registry
from canon.embedding import Embedder
from canon.index_store import pending_outbox, served_revision
from canon.policy import Policy, project

SCHEMA = """
CREATE TABLE IF NOT EXISTS index_inputs (
    revision_id  VARCHAR PRIMARY KEY,
    input_digest VARCHAR NOT NULL
);
"""

# The code that maps a document to its rows: a Canon upgrade that changes it re-checks every row.
_ROW_CODE = hashlib.sha256(b"".join(Path(m.__file__).read_bytes() for m in (chunking, index_rows))).hexdigest()


def input_digest(con: duckdb.DuckDBPyConnection, policy: Policy, embedder: Embedder, options: dict[str, Any]) -> str:
    """sha256 over everything the served rows are a function of (see the module doc)."""
    parts = [
        json.dumps([str(v) for v in registry.table_signature(con, "documents")]),
        policy.model_dump_json(),
        embedder.identity.to_json(),
        json.dumps(options, sort_keys=True, default=str),
        _ROW_CODE,
    ]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def _served_if_current(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, digest: str,
                       table: str) -> dict[str, Any] | None:
    served = served_revision(con)
    if served is None or served["lance_table"] != table or pending_outbox(con):
        return None
    rows = con.execute("SELECT input_digest FROM index_inputs WHERE revision_id = ?",
                       [served["revision_id"]]).fetchall()
    if not rows or rows[0][0] != digest:
        return None
    tbl = index._open(index._connect(lancedb_dir), table)
    if tbl is None or tbl.version != served["lance_version"]:
        return None  # someone wrote LanceDB since: let publish reconcile
    return served


def build_index(con: duckdb.DuckDBPyConnection, lancedb_dir: str | os.PathLike, embedder: Embedder,
                policy: Policy, *, run_id: str, **options: Any) -> index.PublishResult:
    """Publish the registry's live documents under `policy`; a no-op without loading them
    when the served revision was built from the same inputs."""
    lancedb_dir = Path(lancedb_dir)
    registry.ensure_schema(con)
    con.execute(SCHEMA)
    digest = input_digest(con, policy, embedder, options)
    served = _served_if_current(con, lancedb_dir, digest, options.get("table", index.DEFAULT_TABLE))
    if served is not None:
        return index.PublishResult(
            revision_id=served["revision_id"], lance_version=served["lance_version"],
            chunks=served["chunk_count"] or 0, reused=served["chunk_count"] or 0,
            documents=served["doc_count"] or 0, noop=True)
    docs = project(registry.load_documents(con), policy)
    result = index.publish(con, lancedb_dir, docs, embedder, policy_revision=policy.revision, run_id=run_id,
                           **options)
    # The revision now served holds exactly the rows these inputs produce (publish verified or wrote them).
    con.execute("INSERT OR REPLACE INTO index_inputs VALUES (?, ?)", [result.revision_id, digest])
    return result
