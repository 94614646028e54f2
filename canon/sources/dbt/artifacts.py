"""dbt artifacts → Canon evidence: nodes, lineage edges, governed objects,
source freshness and run results, as pyarrow tables / plain dicts.

    from canon.sources.dbt.artifacts import read_artifacts
    bundle = read_artifacts(target_dir)            # all-or-nothing
    con.execute("CREATE TABLE dbt_nodes AS SELECT * FROM nodes_tbl")  # via Arrow

Pure Python (no Dagster). Every bad input raises CanonInputError naming the
file and the reason; nothing is returned until every file has been parsed.
An optional artifact that is absent is no error: `ArtifactBundle.missing` says
what its absence costs. Without catalog.json the column catalog dbt 2.0 writes
as Parquet is read instead (canon/sources/dbt/parquet_catalog.py); Parquet
files Canon does not know are named in `missing` as unsupported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from canon.core.errors import CanonInputError
from canon.sources.dbt.column_lineage import column_edges
from canon.sources.dbt.loading import SUPPORTED, load_json, schema_version
from canon.sources.dbt.manifest import (
    EDGES_SCHEMA,
    NODES_SCHEMA,
    build_nodes,
    edges_table,
    iter_manifest_nodes,
    model_level_edges,
)
from canon.sources.dbt.parquet_catalog import read_parquet_catalog
from canon.sources.dbt.run_artifacts import (
    RUN_RESULTS_SCHEMA,
    empty_run_results,
    parse_catalog,
    parse_run_results,
    parse_semantic_manifest,
    parse_sources_json,
    read_catalog,
    read_run_results,
    read_semantic_manifest,
    read_sources_json,
)

__all__ = [
    "ArtifactBundle", "read_artifacts", "read_manifest", "manifest_nodes", "manifest_edges", "manifest_governed",
    "manifest_revision", "read_sources_json", "read_run_results", "read_catalog", "read_semantic_manifest",
    "NODES_SCHEMA", "EDGES_SCHEMA", "RUN_RESULTS_SCHEMA", "SUPPORTED", "groups_of", "missing_artifacts",
]

# Keys in manifest metadata.env (DBT_ENV_CUSTOM_ENV_*) that may carry the project's git commit.
_GIT_ENV_KEYS = ("GIT_SHA", "GIT_COMMIT", "COMMIT_SHA", "GITHUB_SHA", "CI_COMMIT_SHA", "DBT_CLOUD_GIT_SHA")


@dataclass
class ArtifactBundle:
    nodes: pa.Table            # dbt_nodes (NODES_SCHEMA)
    edges: pa.Table            # lineage_edges (EDGES_SCHEMA)
    governed: list[dict]       # one per node whose merged meta carries a `canon` dict
    freshness: list[dict]      # from sources.json
    run_results: pa.Table      # RUN_RESULTS_SCHEMA
    revision: str              # manifest invocation_id (+ "@" git sha when known)
    schema_version: int        # manifest schema version number
    semantic: dict | None      # parsed semantic_manifest.json, or None when absent
    dbt_version: str | None = None
    generated_at: str | None = None
    files: dict[str, str] = field(default_factory=dict)  # artifact kind → path actually read
    groups: dict[str, dict] = field(default_factory=dict)  # group name → {"owner_name", "owner_email"}
    missing: dict[str, str] = field(default_factory=dict)  # artifact kind → what its absence costs
    folder: str = ""                                       # the artifacts folder, for messages


def read_manifest(path: Path | str) -> dict:
    """Decode and validate a manifest: JSON ok, a dbt manifest, schema v5..v12, nodes present."""
    path = Path(path)
    doc = load_json(path, path.name)
    schema_version(doc, path, "manifest")
    if not isinstance(doc.get("nodes"), dict):
        raise CanonInputError(path, "manifest has no 'nodes' object", field="nodes")
    return doc


def manifest_revision(manifest: Mapping[str, Any], git_sha: str | None = None) -> str:
    """The artifact revision: metadata.invocation_id, plus '@<git sha>' when one is known
    (passed in, or found in metadata.env). Without an invocation id, the generated_at stamp."""
    meta = manifest.get("metadata") or {}
    base = meta.get("invocation_id") or f"generated:{meta.get('generated_at') or 'unknown'}"
    sha = git_sha
    if not sha:
        env = meta.get("env") or {}
        if isinstance(env, dict):
            for k, v in env.items():
                if v and any(str(k).upper().endswith(key) for key in _GIT_ENV_KEYS):
                    sha = str(v)
                    break
    return f"{base}@{sha}" if sha else str(base)


def _known_columns(manifest: Mapping[str, Any], catalog: Mapping[str, Mapping[str, Any]] | None,
                   path: Path | str) -> tuple[dict[str, tuple[str, Mapping[str, Any]]], dict[str, frozenset[str]]]:
    included: dict[str, tuple[str, Mapping[str, Any]]] = {}
    known: dict[str, frozenset[str]] = {}
    for uid, rtype, node in iter_manifest_nodes(manifest, path):
        included[uid] = (rtype, node)
        cols = node.get("columns") or {}
        names = {str(k).lower() for k in cols} if isinstance(cols, dict) else set()
        if catalog and uid in catalog:
            names |= set(catalog[uid])
        if names:
            known[uid] = frozenset(names)
    return included, known


def _edges(manifest: Mapping[str, Any], revision: str, nodes: pa.Table | None, *,
           column_lineage: bool, catalog: Mapping[str, Any] | None, compiled: Mapping[str, str] | None,
           path: Path | str) -> pa.Table:
    try:
        pairs = model_level_edges(manifest, path)
    except CanonInputError:
        raise
    except (AttributeError, TypeError, KeyError, ValueError) as e:
        raise CanonInputError(path, f"malformed dependency data: {type(e).__name__}: {e}", field="parent_map") from None
    col_rows: list[tuple[str, str, str, str]] = []
    if column_lineage:
        try:
            if nodes is None:
                nodes, _ = build_nodes(manifest, revision, catalog=catalog, path=path)
            relations = dict(zip(nodes.column("unique_id").to_pylist(), nodes.column("relation_name").to_pylist()))
            included, known = _known_columns(manifest, catalog, path)
            adapter = (manifest.get("metadata") or {}).get("adapter_type")
            col_rows = column_edges(included, pairs, relations, known, adapter_type=adapter,
                                    compiled_override=compiled)
        except CanonInputError:
            raise
        except Exception:  # noqa: BLE001 - column lineage is best effort and never fails the load
            col_rows = []
    return edges_table(pairs, col_rows, revision)


def manifest_nodes(manifest: Mapping[str, Any], revision: str, *, catalog: Mapping[str, Any] | None = None,
                   path: Path | str = "manifest.json") -> pa.Table:
    """dbt_nodes rows for a decoded manifest (see NODES_SCHEMA)."""
    return build_nodes(manifest, revision, catalog=catalog, path=path)[0]


def manifest_governed(manifest: Mapping[str, Any], revision: str, *, path: Path | str = "manifest.json") -> list[dict]:
    return build_nodes(manifest, revision, path=path)[1]


def manifest_edges(manifest: Mapping[str, Any], revision: str, *, column_lineage: bool = True,
                   catalog: Mapping[str, Any] | None = None, compiled: Mapping[str, str] | None = None,
                   path: Path | str = "manifest.json") -> pa.Table:
    """lineage_edges for a decoded manifest: model-level edges, then best-effort column edges
    from compiled SQL (the manifest's, or `compiled` {unique_id: sql} e.g. from run_results)."""
    return _edges(manifest, revision, None, column_lineage=column_lineage, catalog=catalog,
                  compiled=compiled, path=path)


# What each optional artifact gives, so a folder without it says what it lacks (and never fails for it).
_WITHOUT = {
    "semantic_manifest": "semantic_manifest.json is absent: metrics and semantic models are read from the "
                         "manifest's own metrics and semantic_models",
    "catalog": "catalog.json is absent: column types are only those the manifest declares",
    "sources": "sources.json is absent: no source freshness snapshot (run `dbt source freshness`)",
    "run_results": "run_results.json is absent: no run statuses, and column lineage only from compiled SQL in "
                   "the manifest",
}


def groups_of(manifest: Mapping[str, Any]) -> dict[str, dict]:
    """{group name: {"owner_name", "owner_email"}} from the manifest's `groups` (dbt >= 1.5; {} before)."""
    out: dict[str, dict] = {}
    groups = manifest.get("groups")
    if not isinstance(groups, dict):
        return out
    for g in groups.values():
        if isinstance(g, dict) and g.get("name"):
            owner = g.get("owner") if isinstance(g.get("owner"), dict) else {}
            out[str(g["name"])] = {"owner_name": owner.get("name"), "owner_email": owner.get("email")}
    return out


def missing_artifacts(target: Path, files: Mapping[str, str], wanted: Mapping[str, str | None],
                      unsupported: list[str] | None = None) -> dict[str, str]:
    """kind → what its absence costs, for every optional artifact that was asked for and not found.
    `unsupported`: the dbt 2.0 Parquet files found in the catalog's place that Canon could not read."""
    out = {kind: why for kind, why in _WITHOUT.items() if wanted.get(kind) and kind not in files}
    if "catalog" in out and unsupported:
        out["catalog"] = ("catalog.json is absent and the Parquet found in its place is not supported ("
                          + "; ".join(unsupported) + "): column types are only those the manifest declares")
    return out


def _optional(target: Path, name: str | None) -> Path | None:
    if not name:
        return None
    p = Path(name)
    p = p if p.is_absolute() else target / p
    return p if p.exists() else None


def read_artifacts(
    target_dir: Path | str,
    *,
    manifest: str = "manifest.json",
    run_results: str | None = "run_results.json",
    sources: str | None = "sources.json",
    catalog: str | None = "catalog.json",
    semantic_manifest: str | None = "semantic_manifest.json",
    column_lineage: bool = True,
    git_sha: str | None = None,
) -> ArtifactBundle:
    """Load a dbt target directory, all or nothing.

    The manifest is required; the other files are optional (absent → empty
    table / [] / None; pass None to ignore one), but a present file that is
    corrupt or of an unsupported schema raises CanonInputError naming it.
    File names are relative to `target_dir` unless absolute. Every file is
    decoded and validated before any table is built.
    """
    target = Path(target_dir)
    mpath = Path(manifest) if Path(manifest).is_absolute() else target / manifest
    if not target.is_dir() and not Path(manifest).is_absolute():
        raise CanonInputError(target, "dbt target directory not found")
    doc = read_manifest(mpath)
    files = {"manifest": str(mpath)}

    # Decode and validate every optional file before building anything.
    raw: dict[str, tuple[Path, dict]] = {}
    for kind, name in (("run_results", run_results), ("sources", sources), ("catalog", catalog),
                       ("semantic_manifest", semantic_manifest)):
        p = _optional(target, name)
        if p is not None:
            raw[kind] = (p, load_json(p, p.name))
            files[kind] = str(p)

    revision = manifest_revision(doc, git_sha)
    num = schema_version(doc, mpath, "manifest")
    cat = parse_catalog(raw["catalog"][1], raw["catalog"][0]) if "catalog" in raw else None
    unsupported: list[str] = []
    if cat is None and catalog and target.is_dir():   # dbt 2.0: no catalog.json unless --write-catalog
        parquet = read_parquet_catalog(target)
        cat, unsupported = parquet.catalog, parquet.unsupported
        if cat is not None:
            files["catalog"] = parquet.where
    if "run_results" in raw:
        rr_table, compiled = parse_run_results(raw["run_results"][1], raw["run_results"][0], revision)
    else:
        rr_table, compiled = empty_run_results(), {}
    freshness = parse_sources_json(raw["sources"][1], raw["sources"][0], doc) if "sources" in raw else []
    semantic = (parse_semantic_manifest(raw["semantic_manifest"][1], raw["semantic_manifest"][0])
                if "semantic_manifest" in raw else None)

    nodes, governed = build_nodes(doc, revision, catalog=cat, path=mpath)
    edges = _edges(doc, revision, nodes, column_lineage=column_lineage, catalog=cat, compiled=compiled, path=mpath)
    meta = doc.get("metadata") or {}
    wanted = {"run_results": run_results, "sources": sources, "catalog": catalog, "semantic_manifest": semantic_manifest}
    return ArtifactBundle(
        nodes=nodes, edges=edges, governed=governed, freshness=freshness, run_results=rr_table,
        revision=revision, schema_version=num, semantic=semantic,
        dbt_version=meta.get("dbt_version"), generated_at=meta.get("generated_at"), files=files,
        groups=groups_of(doc), missing=missing_artifacts(target, files, wanted, unsupported),
        folder=str(target if target.is_dir() else mpath.parent),
    )
