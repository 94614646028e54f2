"""What `make run` prints: the state of a workspace, in a few lines."""

import datetime as dt
import json

import duckdb

from canon.registry.graph import has_dbt_tables


def _count(con: duckdb.DuckDBPyConnection, sql: str, params=None) -> int:
    return con.execute(sql, params or []).fetchall()[0][0]


def _tables(con) -> set[str]:
    return {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}


def _last_load(con, tables: set[str]) -> dict:
    """The summary of the latest dbt artifact load (canon/sources/dbt/tables.py), {} before one."""
    if "dbt_artifact_revisions" not in tables:
        return {}
    row = con.execute("SELECT summary FROM dbt_artifact_revisions ORDER BY loaded_at DESC LIMIT 1").fetchall()
    try:
        loaded = json.loads(row[0][0]) if row and row[0][0] else {}
    except ValueError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


SUMMARY_ITEMS = 5   # a summary line names at most this many items, then counts the rest


def listed(items: list[str], limit: int = SUMMARY_ITEMS) -> str:
    """`items` joined for one summary line: the first `limit`, then how many more there are."""
    head = ", ".join(items[:limit])
    return head + (f" and {len(items) - limit} more" if len(items) > limit else "")


def workspace_summary(con: duckdb.DuckDBPyConnection, today: dt.date | None = None) -> list[str]:
    today = today or dt.date.today()
    tables = _tables(con)
    lines = []
    if has_dbt_tables(con):
        by_type = con.execute("SELECT resource_type, count(*) FROM dbt_nodes GROUP BY 1 ORDER BY 1").fetchall()
        lines.append("dbt nodes      " + ", ".join(f"{n} {t}" for t, n in by_type)
                     + f"; {_count(con, 'SELECT count(*) FROM lineage_edges')} lineage edges")
        lines += [f"dbt missing    {why}" for why in _last_load(con, tables).get("missing", {}).values()]
    if "source_freshness" in tables:
        fresh = con.execute("SELECT source, status, round(age_seconds / 60) FROM source_freshness ORDER BY 1").fetchall()
        # The sources past their SLA first: on a large project the line names those, not hundreds.
        fresh.sort(key=lambda r: (r[1] == "pass", r[0]))
        lines.append("freshness      " + (listed([f"{s} {st} ({int(a or 0)} min)" for s, st, a in fresh])
                                          or "no source freshness results (no sources.json, or it is empty)"))
    if "documents" in tables:
        kinds = con.execute("SELECT kind, count(*) FROM documents WHERE deleted_at IS NULL GROUP BY 1 ORDER BY 1").fetchall()
        lines.append(f"registry       {_count(con, 'SELECT count(*) FROM documents WHERE deleted_at IS NULL')} documents ("
                     + ", ".join(f"{n} {k}" for k, n in kinds) + ")")
        q = _count(con, "SELECT count(*) FROM quarantine WHERE released_at IS NULL")
        lines.append(f"quarantine     {q} document(s) held back" + ("" if q == 0 else " — see the evidence_registry materialization"))
    if "definitions" in tables:
        governing = con.execute(
            "SELECT object_id, evidence_id FROM definitions_as_of(?) WHERE status = 'approved' "
            "AND kind = 'metric_definition' ORDER BY 1", [today]).fetchall()
        lines.append(f"definitions    {_count(con, 'SELECT count(*) FROM definitions')} revisions; governing today: "
                     + (listed([o if o == e else f"{o} → {e}" for o, e in governing]) or "none"))
    if "index_revisions" in tables:
        rev = con.execute(
            "SELECT revision_id, chunk_count, embedding_model_id FROM index_revisions WHERE status = 'ready' "
            "ORDER BY created_at DESC LIMIT 1").fetchall()
        if rev:
            lines.append(f"index          revision {rev[0][0]}: {rev[0][1]} chunks, embeddings {rev[0][2]}")
    return lines
