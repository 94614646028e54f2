"""The knowledge index's routine publish: the registry's live documents, projected
through the live policy, published by `canon.index.publish.publish` -- unless nothing it
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

from canon.core import schema
from canon.index import rows as index_rows
from canon.index.embedding.base import Embedder
from canon.index.revisions import DEFAULT_TABLE, PublishResult, pending_outbox, served_revision
from canon.registry import store as registry
from canon.registry.policy import Policy, project

# canon.index.publish (and with it lancedb, ~2.5 s to import) is imported only when there is work:
# a no-op in a fresh process -- a sensor tick, a scheduled run -- stays well under a second.



def input_digest(con: duckdb.DuckDBPyConnection, policy: Policy, embedder: Embedder, options: dict[str, Any]) -> str:
    """sha256 over everything the served rows are a function of (see the module doc)."""
    parts = [
        json.dumps([str(v) for v in registry.table_signature(con, "documents")]),
        policy.model_dump_json(),
        embedder.identity.to_json(),
        json.dumps(options, sort_keys=True, default=str),
        index_rows.ROW_CODE,
    ]
    return hashlib.sha256("\n".join(parts).encode("utf-8")).hexdigest()


def lance_versions(lancedb_dir: Path, table: str) -> str:
    """The table's version manifests, as a digest of their file names: every LanceDB commit
    (add, delete, index, compaction, cleanup) adds or removes one. '' if there is no table."""
    folder = lancedb_dir / f"{table}.lance" / "_versions"
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".manifest"))
    except FileNotFoundError:
        return ""
    return hashlib.sha256("\n".join(names).encode("utf-8")).hexdigest() if names else ""


def _served_if_current(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, digest: str,
                       table: str) -> dict[str, Any] | None:
    served = served_revision(con)
    if served is None or served["lance_table"] != table or pending_outbox(con):
        return None
    rows = con.execute("SELECT input_digest, lance_versions FROM index_inputs WHERE revision_id = ?",
                       [served["revision_id"]]).fetchall()
    if not rows or rows[0][0] != digest:
        return None
    versions = lance_versions(lancedb_dir, table)
    if not versions or rows[0][1] != versions:
        return None  # something wrote LanceDB since: let publish reconcile
    return served


def build_index(con: duckdb.DuckDBPyConnection, lancedb_dir: str | os.PathLike, embedder: Embedder,
                policy: Policy, *, run_id: str, **options: Any) -> PublishResult:
    """Publish the registry's live documents under `policy`; a no-op without loading them
    when the served revision was built from the same inputs."""
    lancedb_dir = Path(lancedb_dir)
    table = options.get("table", DEFAULT_TABLE)
    registry.ensure_schema(con)
    schema.ensure_index_inputs(con)
    con.execute("ALTER TABLE index_inputs ADD COLUMN IF NOT EXISTS lance_versions VARCHAR DEFAULT ''")
    digest = input_digest(con, policy, embedder, options)
    served = _served_if_current(con, lancedb_dir, digest, table)
    if served is not None:
        return PublishResult(
            revision_id=served["revision_id"], lance_version=served["lance_version"],
            chunks=served["chunk_count"] or 0, reused=served["chunk_count"] or 0,
            documents=served["doc_count"] or 0, noop=True)
    from canon.index import publish as index

    docs = project(registry.load_documents(con), policy)
    result = index.publish(con, lancedb_dir, docs, embedder, policy_revision=policy.revision, run_id=run_id,
                           **options)
    # The revision now served holds exactly the rows these inputs produce (publish verified or wrote
    # them), and LanceDB is at its version: publish holds the only writer's lock until it returns.
    con.execute("INSERT OR REPLACE INTO index_inputs VALUES (?, ?, ?)",
                [result.revision_id, digest, lance_versions(lancedb_dir, table)])
    return result
