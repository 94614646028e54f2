"""Integrity checks over the effective-time definitions and the lineage graph.
Each returns the offending rows so a check can list them for a person."""

from __future__ import annotations

import duckdb

from canon.models.documents import Document
from canon.registry.claims import TAKEOVER_REASONS
from canon.registry.graph import has_dbt_tables
from canon.registry.temporal import intervals_overlap, overlapping_pairs, supersedes_contradictions


def approved_overlaps(docs: list[Document]) -> list[dict]:
    return [
        {"object_id": a.object_id, "first": a.doc_id, "second": b.doc_id,
         "first_period": f"{a.valid_from}..{a.valid_to or 'open'}",
         "second_period": f"{b.valid_from}..{b.valid_to or 'open'}"}
        for a, b in overlapping_pairs(docs)
    ]


def contradicting_supersedes(docs: list[Document]) -> list[dict]:
    """Supersedes cycles and approved revisions superseding a later one, per object
    (canon.registry.temporal.supersedes_contradictions); `canon ask` sends these to human_review."""
    by_object: dict[str, list[Document]] = {}
    for d in docs:
        by_object.setdefault(d.object_id, []).append(d)
    return [
        {"object_id": a.object_id, "doc_id": a.doc_id, "supersedes": b.doc_id, "reason": why,
         "doc_period": f"{a.valid_from}..{a.valid_to or 'open'}",
         "superseded_period": f"{b.valid_from}..{b.valid_to or 'open'}"}
        for object_id in sorted(by_object)
        for a, b, why in supersedes_contradictions(by_object[object_id])
    ]


def dangling_supersedes(docs: list[Document]) -> list[dict]:
    ids = {d.doc_id for d in docs}
    return [{"doc_id": d.doc_id, "supersedes": d.supersedes} for d in docs if d.supersedes and d.supersedes not in ids]


def inverted_intervals(con: duckdb.DuckDBPyConnection) -> list[dict]:
    rows = con.execute(
        "SELECT evidence_id, valid_from, valid_to FROM definitions WHERE valid_to IS NOT NULL AND valid_to <= valid_from"
    ).fetchall()
    return [{"evidence_id": r[0], "valid_from": str(r[1]), "valid_to": str(r[2])} for r in rows]


def metrics_without_model(con: duckdb.DuckDBPyConnection, docs: list[Document]) -> list[dict]:
    """An approved metric needs an implementing model version: a dbt node that
    exists (dbt-rendered metrics), or an approved model-schema document whose
    business time overlaps the metric's (metrics from a prose corpus)."""
    nodes: set[str] = set()
    if has_dbt_tables(con):
        nodes = {r[0] for r in con.execute("SELECT unique_id FROM dbt_nodes WHERE resource_type = 'model'").fetchall()}
    models = [d for d in docs if d.kind == "model_schema" and d.status.value == "approved"]
    missing = []
    for d in docs:
        if d.kind != "metric_definition" or d.status.value != "approved":
            continue
        impl = d.metadata.get("implemented_by")
        if impl is not None:
            if impl not in nodes:
                missing.append({"doc_id": d.doc_id, "implemented_by": impl, "reason": "model node not in the manifest"})
        elif d.metadata.get("dbt_unique_id"):
            missing.append({"doc_id": d.doc_id, "reason": "dbt metric with no implementing model version"})
        elif not any(intervals_overlap(d, m) for m in models):
            missing.append({"doc_id": d.doc_id, "reason": "no approved model schema in effect over the metric's period"})
    return missing


def dangling_edges(con: duckdb.DuckDBPyConnection) -> list[dict]:
    if not has_dbt_tables(con):
        return []
    rows = con.execute(
        """SELECT e.parent, e.child FROM lineage_edges e
           WHERE e.edge_type = 'model'
             AND (e.parent NOT IN (SELECT unique_id FROM dbt_nodes) OR e.child NOT IN (SELECT unique_id FROM dbt_nodes))
           ORDER BY 1, 2"""
    ).fetchall()
    return [{"parent": p, "child": c} for p, c in rows]


def identity_takeovers(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """Open quarantine entries that tried to take a doc_id or object another file or source owns,
    or to clone an id (canon.registry.claims): each is a takeover attempt, not merely bad input."""
    rows = con.execute(
        "SELECT source_uri, doc_id, reasons FROM quarantine WHERE released_at IS NULL ORDER BY source_uri").fetchall()
    return [{"source_uri": uri, "doc_id": doc_id, "reasons": list(reasons)} for uri, doc_id, reasons in rows
            if any(r.startswith(TAKEOVER_REASONS) for r in reasons)]
