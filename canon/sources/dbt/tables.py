"""Stores a parsed dbt artifact bundle in DuckDB: `dbt_nodes`, `lineage_edges`,
`dbt_run_results` and `source_freshness`, replaced together in one transaction
(parsing finishes before it starts, so a bad artifact never half-writes).
Each load is recorded in `dbt_artifact_revisions`, its summary holding the row
counts, the files read and what the absent artifacts cost (`missing`), which
the build summary prints (canon/ops/summary.py)."""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa

from canon.core import schema

FRESHNESS_SCHEMA = pa.schema([
    ("unique_id", pa.string()), ("source", pa.string()), ("max_loaded_at", pa.string()),
    ("snapshotted_at", pa.string()), ("age_seconds", pa.float64()), ("status", pa.string()),
    ("warn_after_minutes", pa.float64()), ("error_after_minutes", pa.float64()),
    ("artifact_revision", pa.string()),
])


def freshness_table(freshness: list[dict], revision: str) -> pa.Table:
    cols = {f.name: [] for f in FRESHNESS_SCHEMA}
    for r in freshness:
        for name in cols:
            cols[name].append(revision if name == "artifact_revision" else r.get(name))
    return pa.table(cols, schema=FRESHNESS_SCHEMA)


def store_bundle(con: duckdb.DuckDBPyConnection, bundle) -> dict[str, int]:
    tables = {
        "dbt_nodes": bundle.nodes,
        "lineage_edges": bundle.edges,
        "dbt_run_results": bundle.run_results,
        "source_freshness": freshness_table(bundle.freshness, bundle.revision),
    }
    con.execute("BEGIN TRANSACTION")
    try:
        for name, table in tables.items():
            view = f"_incoming_{name}"
            con.register(view, table)
            con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM {view}")
            con.unregister(view)
        schema.ensure_dbt_artifact_revisions(con)
        counts = {name: t.num_rows for name, t in tables.items()}
        con.execute(
            "INSERT INTO dbt_artifact_revisions (revision, schema_version, summary) VALUES (?, ?, ?)",
            [bundle.revision, bundle.schema_version,
             json.dumps({**counts, "files": dict(getattr(bundle, "files", {}) or {}),
                         "missing": dict(getattr(bundle, "missing", {}) or {})}, sort_keys=True)],
        )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return counts
