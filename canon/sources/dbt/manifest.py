"""Manifest → `dbt_nodes` rows, model-level `lineage_edges` and governed entries.

Which resources become nodes (a decision, documented here):
  model (every version is its own row), seed, snapshot, source, metric,
  semantic_model, exposure, saved_query, function, test and unit_test.
Tests are kept because they cost little (one row each, no SQL parsing) and let
Canon say whether a model is tested; they are leaves of the graph, so upstream
walks (metric → semantic model → model → source) never meet them. Analyses,
operations (hooks), macros, docs blocks and groups are skipped: they are not
relations and nothing governed depends on them. Disabled nodes are skipped.

Columns are built as Python lists and turned into one Arrow table at the end:
no per-row Arrow or DataFrame calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa

from canon.core.errors import CanonInputError
from canon.sources.dbt.loading import SUPPORTED, dumps

NODE_TYPES_FROM_NODES = frozenset({"model", "seed", "snapshot", "test"})
# Top-level manifest sections whose entries become nodes; absent in old schemas.
EXTRA_SECTIONS = ("sources", "metrics", "semantic_models", "exposures", "saved_queries", "unit_tests", "functions")
GOVERNED_KEY = "canon"

NODES_SCHEMA = pa.schema([
    ("unique_id", pa.string()),
    ("resource_type", pa.string()),
    ("package_name", pa.string()),
    ("name", pa.string()),
    ("version", pa.string()),
    ("latest_version", pa.string()),
    ("relation_name", pa.string()),
    ("description", pa.string()),
    ("columns_json", pa.string()),
    ("meta_json", pa.string()),
    ("tags", pa.list_(pa.string())),
    ("access", pa.string()),
    ("group_name", pa.string()),
    ("checksum", pa.string()),
    ("materialized", pa.string()),
    ("original_file_path", pa.string()),
    ("artifact_revision", pa.string()),
    ("dbt_version", pa.string()),
    ("schema_version", pa.int32()),
    # Beyond the brief, cheap and useful for governance:
    ("label", pa.string()),              # metrics / semantic objects / exposures
    ("deprecation_date", pa.string()),   # model versions carry one
    ("contract_enforced", pa.bool_()),
    ("definition_json", pa.string()),    # type-specific definition (metric type_params, measures, test kwargs…)
])

EDGES_SCHEMA = pa.schema([
    ("parent", pa.string()),
    ("child", pa.string()),
    ("edge_type", pa.string()),
    ("parent_column", pa.string()),
    ("child_column", pa.string()),
    ("artifact_revision", pa.string()),
])

# The parts of each resource type that define it (beyond name/description/meta),
# serialised into definition_json. Keys missing from an old schema are skipped.
_DEFINITION_KEYS: dict[str, tuple[str, ...]] = {
    "metric": ("type", "type_params", "filter", "time_granularity",
               # dbt <= 1.5 (schema v5..v9) metrics
               "calculation_method", "expression", "sql", "timestamp", "time_grains", "dimensions",
               "window", "filters", "model"),
    "semantic_model": ("model", "node_relation", "defaults", "primary_entity", "entities", "measures", "dimensions"),
    "exposure": ("type", "owner", "url", "maturity"),
    "saved_query": ("query_params", "exports"),
    "source": ("source_name", "source_description", "loader", "loaded_at_field", "freshness"),
    "test": ("test_metadata", "column_name", "attached_node"),
    "unit_test": ("model", "versions"),
}


def manifest_metadata(manifest: Mapping[str, Any]) -> tuple[str | None, int | None]:
    """(dbt_version, schema version number) from metadata, leniently."""
    meta = manifest.get("metadata") or {}
    url = str(meta.get("dbt_schema_version") or "")
    num = None
    tail = url.rsplit("/v", 1)
    if len(tail) == 2 and tail[1].endswith(".json") and tail[1][:-5].isdigit():
        num = int(tail[1][:-5])
    return meta.get("dbt_version"), num


def strip_quotes(relation: str | None) -> str | None:
    if not relation:
        return None
    return relation.replace('"', "").replace("`", "")


def version_str(v: Any) -> str | None:
    if v is None or v == "":
        return None
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _dotted(*parts: Any) -> str | None:
    kept = [str(p) for p in parts if p not in (None, "")]
    return ".".join(kept) or None


def relation_of(node: Mapping[str, Any], rtype: str) -> str | None:
    """The warehouse relation a node names, quotes stripped, or None if it has none."""
    if rtype == "source":
        return _dotted(node.get("database"), node.get("schema"), node.get("identifier") or node.get("name")) \
            or strip_quotes(node.get("relation_name"))
    if rtype == "semantic_model":
        nr = node.get("node_relation") or {}
        return strip_quotes(nr.get("relation_name")) or _dotted(nr.get("database"), nr.get("schema_name"), nr.get("alias"))
    if rtype in ("model", "seed", "snapshot", "function"):
        rel = strip_quotes(node.get("relation_name"))
        if rel:
            return rel
        cfg = node.get("config") or {}
        if cfg.get("materialized") == "ephemeral":
            return None  # an ephemeral model is inlined as a CTE: there is no relation to name
        return _dotted(node.get("database"), node.get("schema"), node.get("alias") or node.get("name"))
    return None


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """Recursive dict merge; `over` wins on conflicts (config.meta over meta)."""
    out = dict(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(dict(out[k]), v)
        else:
            out[k] = v
    return out


def merged_meta(node: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for layer in (node.get("source_meta"), node.get("meta"), (node.get("config") or {}).get("meta")):
        if isinstance(layer, dict) and layer:
            meta = _merge(meta, layer) if meta else dict(layer)
    return meta


def _tags(node: Mapping[str, Any]) -> list[str]:
    tags = node.get("tags")
    if not tags:
        tags = (node.get("config") or {}).get("tags")
    if not tags:
        return []
    if isinstance(tags, str):
        return [tags]
    return [str(t) for t in tags]


def _columns(node: Mapping[str, Any], catalog_cols: Mapping[str, tuple[str, str | None]] | None) -> list[dict]:
    """Documented columns in manifest order, typed from the catalog where the manifest has no type;
    then the catalog's undocumented columns in table order."""
    out: list[dict] = []
    seen: set[str] = set()
    cols = node.get("columns") or {}
    if isinstance(cols, dict):
        cols = cols.values()
    for c in cols:
        if not isinstance(c, dict):
            continue
        name = c.get("name")
        if not name:
            continue
        dtype = c.get("data_type")
        key = str(name).lower()
        if dtype is None and catalog_cols:
            hit = catalog_cols.get(key)
            dtype = hit[1] if hit else None
        out.append({"name": name, "description": c.get("description") or "", "data_type": dtype})
        seen.add(key)
    if catalog_cols:
        for key, (name, dtype) in catalog_cols.items():
            if key not in seen:
                out.append({"name": name, "description": "", "data_type": dtype})
    return out


def _table_definition(node: Mapping[str, Any], rtype: str) -> dict[str, Any]:
    """What says a model, seed or snapshot's key: its constraints (model-level and per column, dbt >= 1.5)
    and a snapshot's unique_key and strategy. Empty for most nodes, so definition_json stays null."""
    d: dict[str, Any] = {}
    if node.get("constraints"):
        d["constraints"] = node["constraints"]
    cols = node.get("columns") or {}
    per_column = {str(c.get("name")): c["constraints"] for c in (cols.values() if isinstance(cols, dict) else cols)
                  if isinstance(c, dict) and c.get("name") and c.get("constraints")}
    if per_column:
        d["column_constraints"] = per_column
    if rtype == "snapshot":
        cfg = node.get("config") or {}
        d.update({k: cfg[k] for k in ("unique_key", "strategy") if cfg.get(k) not in (None, "", [])})
    return d


def _definition(node: Mapping[str, Any], rtype: str) -> str | None:
    if rtype in ("model", "seed", "snapshot"):
        d = _table_definition(node, rtype)
        return dumps(d) if d else None
    keys = _DEFINITION_KEYS.get(rtype)
    if not keys:
        return None
    d = {k: node[k] for k in keys if node.get(k) not in (None, "", [], {})}
    if rtype == "test":
        sev = (node.get("config") or {}).get("severity")
        if sev:
            d["severity"] = sev
    return dumps(d) if d else None


def iter_manifest_nodes(manifest: Mapping[str, Any], path: Path | str = "manifest.json") -> Iterator[tuple[str, str, dict]]:
    """Yield (unique_id, resource_type, node) for every resource that becomes a dbt_nodes row."""
    nodes = manifest.get("nodes")
    if not isinstance(nodes, dict):
        raise CanonInputError(path, "manifest has no 'nodes' object", field="nodes")
    for uid, node in nodes.items():
        if not isinstance(node, dict):
            raise CanonInputError(path, "node must be an object", field=f"nodes.{uid}")
        rtype = node.get("resource_type")
        if rtype in NODE_TYPES_FROM_NODES:
            yield uid, rtype, node
    for section in EXTRA_SECTIONS:
        entries = manifest.get(section)
        if not entries:
            continue
        if not isinstance(entries, dict):
            raise CanonInputError(path, f"'{section}' must be an object keyed by unique_id", field=section)
        default_type = section[:-1]
        for uid, node in entries.items():
            if not isinstance(node, dict):
                raise CanonInputError(path, "entry must be an object", field=f"{section}.{uid}")
            if (node.get("config") or {}).get("enabled", True) is False:
                continue
            yield uid, node.get("resource_type") or default_type, node


def build_nodes(
    manifest: Mapping[str, Any],
    revision: str,
    *,
    catalog: Mapping[str, Mapping[str, tuple[str, str | None]]] | None = None,
    path: Path | str = "manifest.json",
) -> tuple[pa.Table, list[dict]]:
    """One pass over the manifest: the dbt_nodes table and the governed entries."""
    dbt_version, schema_num = manifest_metadata(manifest)
    cols: dict[str, list] = {f.name: [] for f in NODES_SCHEMA}
    governed: list[dict] = []
    a = {name: lst.append for name, lst in cols.items()}  # bound appends: the hot loop stays cheap
    uid = None
    try:
        for uid, rtype, node in iter_manifest_nodes(manifest, path):
            cfg = node.get("config") or {}
            meta = merged_meta(node)
            name = node.get("name")
            version = version_str(node.get("version"))
            relation = relation_of(node, rtype)
            description = node.get("description") or ""
            a["unique_id"](uid)
            a["resource_type"](rtype)
            a["package_name"](node.get("package_name"))
            a["name"](name)
            a["version"](version)
            a["latest_version"](version_str(node.get("latest_version")))
            a["relation_name"](relation)
            a["description"](description)
            a["columns_json"](dumps(_columns(node, catalog.get(uid) if catalog else None)))
            a["meta_json"](dumps(meta))
            a["tags"](_tags(node))
            access = node.get("access") or cfg.get("access")
            a["access"](str(access) if access else None)
            a["group_name"](node.get("group") or cfg.get("group"))
            checksum = node.get("checksum")
            a["checksum"](checksum.get("checksum") if isinstance(checksum, dict) else None)
            a["materialized"](cfg.get("materialized") if rtype in ("model", "seed", "snapshot") else None)
            a["original_file_path"](node.get("original_file_path"))
            a["label"](node.get("label"))
            dep = node.get("deprecation_date")
            a["deprecation_date"](str(dep) if dep else None)
            contract = cfg.get("contract") if rtype == "model" else None
            a["contract_enforced"](bool(contract.get("enforced")) if isinstance(contract, dict) else None)
            a["definition_json"](_definition(node, rtype))
            canon = meta.get(GOVERNED_KEY)
            if isinstance(canon, dict):
                governed.append({
                    "unique_id": uid, "resource_type": rtype, "name": name, "version": version,
                    "relation_name": relation, "description": description, "canon": dict(canon),
                })
    except CanonInputError:
        raise
    except (AttributeError, TypeError, KeyError, ValueError) as e:
        raise CanonInputError(path, f"malformed manifest entry: {type(e).__name__}: {e}", field=uid) from None
    n = len(cols["unique_id"])
    cols["artifact_revision"] = [revision] * n
    cols["dbt_version"] = [dbt_version] * n
    cols["schema_version"] = [schema_num] * n
    return pa.table(cols, schema=NODES_SCHEMA), governed


def _depends_on(node: Mapping[str, Any]) -> list[str]:
    dep = node.get("depends_on")
    if isinstance(dep, dict):
        return [p for p in dep.get("nodes") or () if isinstance(p, str)]
    return []


def model_level_edges(manifest: Mapping[str, Any], path: Path | str = "manifest.json") -> list[tuple[str, str]]:
    """Sorted, deduplicated (parent, child) pairs between dbt_nodes resources.

    parent_map is the source of truth when present (v12's includes metrics,
    semantic models and saved queries); each node's depends_on.nodes is unioned
    in, which costs nothing and covers manifests whose parent_map is absent or
    partial. A semantic model without a recorded parent is tied to the model its
    node_relation (or ref) names. Edges touching skipped resources (analyses,
    operations) or unknown ids are dropped, so every endpoint is a dbt_nodes row.
    """
    included: dict[str, tuple[str, Mapping[str, Any]]] = {
        uid: (rtype, node) for uid, rtype, node in iter_manifest_nodes(manifest, path)
    }
    pairs: set[tuple[str, str]] = set()
    parent_map = manifest.get("parent_map")
    if isinstance(parent_map, dict):
        for child, parents in parent_map.items():
            if child in included and parents:
                for p in parents:
                    if p in included:
                        pairs.add((p, child))
    has_parent: set[str] = {c for _, c in pairs}
    for uid, (rtype, node) in included.items():
        for p in _depends_on(node):
            if p in included:
                pairs.add((p, uid))
                has_parent.add(uid)
    orphans = [uid for uid, (rtype, _) in included.items() if rtype == "semantic_model" and uid not in has_parent]
    if orphans:
        by_relation: dict[str, str] = {}
        by_name: dict[str, str] = {}
        for uid, (rtype, node) in included.items():
            if rtype == "model":
                rel = relation_of(node, rtype)
                if rel:
                    by_relation[rel.lower()] = uid
                # unpinned refs resolve to the latest version
                if node.get("version") is None or version_str(node.get("version")) == version_str(node.get("latest_version")):
                    by_name[str(node.get("name")).lower()] = uid
        for uid in orphans:
            node = included[uid][1]
            rel = relation_of(node, "semantic_model")
            target = by_relation.get(rel.lower()) if rel else None
            if target is None:
                for ref in node.get("refs") or ():
                    ref_name = ref.get("name") if isinstance(ref, dict) else (ref[-1] if ref else None)
                    if ref_name and str(ref_name).lower() in by_name:
                        target = by_name[str(ref_name).lower()]
                        break
            if target is None and isinstance(node.get("model"), str):  # "ref('orders')"
                inner = node["model"].split("(", 1)[-1].rstrip(")").strip().strip("'\"")
                target = by_name.get(inner.lower())
            if target is not None:
                pairs.add((target, uid))
    return sorted(pairs)


def edges_table(model_pairs: Iterable[tuple[str, str]],
                column_rows: Iterable[tuple[str, str, str, str]],
                revision: str) -> pa.Table:
    parents: list[str] = []
    children: list[str] = []
    types: list[str] = []
    pcols: list[str | None] = []
    ccols: list[str | None] = []
    for p, c in model_pairs:
        parents.append(p); children.append(c); types.append("model"); pcols.append(None); ccols.append(None)
    for p, c, pc, cc in sorted(set(column_rows)):
        parents.append(p); children.append(c); types.append("column"); pcols.append(pc); ccols.append(cc)
    return pa.table({
        "parent": parents, "child": children, "edge_type": types,
        "parent_column": pcols, "child_column": ccols, "artifact_revision": [revision] * len(parents),
    }, schema=EDGES_SCHEMA)


def supported_manifest_versions() -> range:
    return SUPPORTED["manifest"]
