"""Seeded generator of a synthetic dbt target directory (manifest schema v12).

    .venv/bin/python -m bench.gen_manifest OUT_DIR [--nodes 5500] [--seed 7]

Writes manifest.json (sources, layered models with versions and compiled SQL,
seeds, snapshots, data tests, semantic models, metrics incl. derived ones,
exposures, saved queries; parent_map / child_map; column dicts), plus a
run_results.json and a sources.json like `dbt build` + `dbt source freshness`
leave behind. The same (nodes, seed) always gives byte-identical files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
from pathlib import Path
from typing import Any

PKG = "bench_shop"
DB = "warehouse"
ADJ = ["net", "gross", "daily", "active", "paid", "open", "closed", "first", "last", "total", "avg", "unique"]
NOUN = ["order", "customer", "payment", "refund", "session", "invoice", "product", "store", "shipment",
        "account", "subscription", "ticket", "campaign", "lead", "visit", "return", "discount", "line"]
TYPES = ["integer", "bigint", "varchar", "double", "date", "timestamp", "boolean", "decimal(18,2)"]
MIX = {  # share of N per resource type (the rest goes to tests)
    "source": 0.06, "seed": 0.02, "model": 0.38, "snapshot": 0.01,
    "semantic_model": 0.015, "metric": 0.025, "exposure": 0.006, "saved_query": 0.004,
}


def _words(rng: random.Random, n: int = 2) -> str:
    return "_".join(rng.choice(ADJ + NOUN) for _ in range(n))


def _checksum(text: str) -> dict:
    return {"name": "sha256", "checksum": hashlib.sha256(text.encode()).hexdigest()}


def _columns(rng: random.Random, names: list[str]) -> dict[str, Any]:
    return {c: {"name": c, "description": f"The {c.replace('_', ' ')} of the row, as recorded upstream.",
                "meta": {}, "data_type": rng.choice(TYPES) if rng.random() < 0.5 else None,
                "constraints": [], "quote": None, "tags": [], "granularity": None, "doc_blocks": [],
                "config": {"meta": {}, "tags": []}}
            for c in names}


def _base_node(rtype: str, name: str, path: str, *, schema: str, uid: str) -> dict[str, Any]:
    return {
        "database": DB, "schema": schema, "name": name, "resource_type": rtype, "package_name": PKG,
        "path": path, "original_file_path": f"models/{path}", "unique_id": uid,
        "fqn": [PKG, *path.split("/")[:-1], name], "alias": name,
        "tags": [], "description": "", "columns": {}, "meta": {}, "group": None, "docs": {"show": True, "node_color": None},
        "patch_path": None, "build_path": None, "unrendered_config": {}, "created_at": 1767225600.0,
        "relation_name": f'"{DB}"."{schema}"."{name}"', "raw_code": "", "doc_blocks": [],
        "language": "sql", "refs": [], "sources": [], "metrics": [], "functions": [],
        "depends_on": {"macros": [], "nodes": []}, "compiled_path": None, "compiled": True,
        "extra_ctes_injected": True, "extra_ctes": [], "contract": {"enforced": False, "alias_types": True, "checksum": None},
    }


def generate(n_nodes: int = 5500, seed: int = 7) -> dict[str, Any]:
    """Return {"manifest": ..., "run_results": ..., "sources": ...} as plain dicts."""
    rng = random.Random(seed)
    count = {k: max(1, int(n_nodes * v)) for k, v in MIX.items()}
    nodes: dict[str, Any] = {}
    sources: dict[str, Any] = {}
    metrics: dict[str, Any] = {}
    semantic_models: dict[str, Any] = {}
    exposures: dict[str, Any] = {}
    saved_queries: dict[str, Any] = {}
    parent_map: dict[str, list[str]] = {}
    cols_of: dict[str, list[str]] = {}
    rel_of: dict[str, str] = {}

    def add_parents(child: str, parents: list[str]) -> None:
        parent_map[child] = sorted(set(parents))

    # Sources: raw.<system>.<table>
    systems = [f"sys_{i}" for i in range(max(1, count["source"] // 12))]
    for i in range(count["source"]):
        system = systems[i % len(systems)]
        table = f"{_words(rng)}_{i}"
        uid = f"source.{PKG}.{system}.{table}"
        cols = ["id"] + [f"{_words(rng, 1)}_{j}" for j in range(rng.randint(4, 12))] + ["_loaded_at"]
        fresh = {"warn_after": {"count": rng.choice([1, 2, 6, 12]), "period": "hour"},
                 "error_after": {"count": 1, "period": "day"}, "filter": None}
        sources[uid] = {
            "database": "raw", "schema": system, "name": table, "resource_type": "source", "package_name": PKG,
            "path": "models/sources.yml", "original_file_path": "models/sources.yml", "unique_id": uid,
            "fqn": [PKG, system, table], "source_name": system, "source_description": f"Raw {system} feed",
            "loader": "bench_loader", "identifier": table, "quoting": {}, "loaded_at_field": "_loaded_at",
            "freshness": fresh, "external": None, "description": f"Raw {table} rows.", "columns": _columns(rng, cols),
            "meta": {}, "source_meta": {"owner": "data-eng"}, "tags": ["raw"],
            "config": {"enabled": True, "freshness": fresh, "meta": {}, "tags": []},
            "relation_name": f'"raw"."{system}"."{table}"', "created_at": 1767225600.0, "doc_blocks": [],
        }
        cols_of[uid] = cols
        rel_of[uid] = f'"raw"."{system}"."{table}"'
        parent_map[uid] = []

    # Seeds
    seed_ids = []
    for i in range(count["seed"]):
        name = f"seed_{_words(rng, 1)}_{i}"
        uid = f"seed.{PKG}.{name}"
        n = _base_node("seed", name, f"seeds/{name}.csv", schema="seeds", uid=uid)
        cols = ["code", "label", "sort_order"]
        n.update(columns=_columns(rng, cols), checksum=_checksum(name), config={"enabled": True, "materialized": "seed", "meta": {}, "tags": []})
        n.pop("compiled", None)
        nodes[uid] = n; cols_of[uid] = cols; rel_of[uid] = n["relation_name"]; parent_map[uid] = []; seed_ids.append(uid)

    # Models in three layers; ~5% of marts are versioned (2-3 versions).
    n_models = count["model"]
    layers = {"staging": int(n_models * 0.45), "intermediate": int(n_models * 0.30)}
    layers["marts"] = n_models - layers["staging"] - layers["intermediate"]
    source_ids = list(sources)
    by_layer: dict[str, list[str]] = {"staging": [], "intermediate": [], "marts": []}
    made = 0
    for layer in ("staging", "intermediate", "marts"):
        i = 0
        while i < layers[layer] and made < n_models:
            base = f"{'stg' if layer == 'staging' else 'int' if layer == 'intermediate' else 'fct'}_{_words(rng)}_{i}"
            if layer == "staging":
                parents = [source_ids[i % len(source_ids)]]
                if rng.random() < 0.1 and seed_ids:
                    parents.append(rng.choice(seed_ids))
            elif layer == "intermediate":
                parents = rng.sample(by_layer["staging"], k=min(len(by_layer["staging"]), rng.randint(1, 3)))
            else:
                pool = by_layer["intermediate"] + by_layer["staging"]
                parents = rng.sample(pool, k=min(len(pool), rng.randint(2, 4)))
            versions = [None]
            if layer == "marts" and rng.random() < 0.05:
                versions = list(range(1, rng.randint(2, 3) + 1))
            latest = versions[-1] if versions[0] is not None else None
            ephemeral = layer == "intermediate" and rng.random() < 0.08
            for v in versions:
                if made >= n_models:
                    break
                name = base
                uid = f"model.{PKG}.{name}" + (f".v{v}" if v is not None else "")
                alias = f"{name}_v{v}" if v is not None else name
                n = _base_node("model", name, f"{layer}/{name}.sql", schema=layer, uid=uid)
                n["alias"] = alias
                n["relation_name"] = None if ephemeral else f'"{DB}"."{layer}"."{alias}"'
                out_cols: list[str] = []
                select: list[str] = []
                ctes = []
                for k, p in enumerate(parents):
                    ctes.append(f"p{k} as (\n    select * from {rel_of[p] if rel_of.get(p) else '__dbt__cte__' + p.split('.')[2]}\n)")
                    pcols = cols_of[p]
                    picks = pcols if k == 0 else rng.sample(pcols, k=min(len(pcols), rng.randint(1, 4)))
                    for c in picks:
                        target = c if c not in out_cols else f"{c}_{k}"
                        if target in out_cols:
                            continue
                        r = rng.random()
                        if r < 0.6:
                            select.append(f"p{k}.{c}" if target == c else f"p{k}.{c} as {target}")
                        elif r < 0.85:
                            select.append(f"cast(p{k}.{c} as varchar) as {target}")
                        else:
                            select.append(f"coalesce(p{k}.{c}, p0.id) as {target}")
                        out_cols.append(target)
                if v is not None and v > 1:
                    out_cols.append(f"added_in_v{v}")
                    select.append(f"p0.id * {v} as added_in_v{v}")
                joins = "".join(f"\n    left join p{k} on p0.id = p{k}.id" for k in range(1, len(parents)))
                sql = ("with " + ",\n".join(ctes) + ",\nfinal as (\n    select\n        " + ",\n        ".join(select)
                       + "\n    from p0" + joins + "\n)\nselect * from final\n")
                if not ephemeral:
                    n["compiled_code"] = sql
                n["raw_code"] = sql.replace('"', "")
                n["checksum"] = _checksum(sql)
                n["columns"] = _columns(rng, out_cols if rng.random() < 0.7 else out_cols[:3])
                n["description"] = f"{layer.title()} model {name}: one row per {rng.choice(NOUN)}."
                n["version"] = v
                n["latest_version"] = latest
                n["access"] = "public" if layer == "marts" else "protected"
                n["group"] = "finance" if layer == "marts" and rng.random() < 0.3 else None
                n["deprecation_date"] = "2027-01-01T00:00:00+00:00" if v is not None and v < (latest or 0) else None
                meta = {}
                if layer == "marts" and rng.random() < 0.15:
                    meta = {"canon": {"object_id": f"model.{PKG}.{name}", "owner": "finance", "status": "approved",
                                      "valid_from": "2026-01-01"}}
                n["meta"] = meta
                n["config"] = {"enabled": True, "materialized": "ephemeral" if ephemeral else
                               ("view" if layer == "staging" else "table"), "meta": meta, "tags": [layer],
                               "group": n["group"], "access": n["access"],
                               "contract": {"enforced": v is not None, "alias_types": True}}
                n["tags"] = [layer]
                n["depends_on"] = {"macros": [], "nodes": sorted(parents)}
                n["refs"] = [{"name": p.split(".")[2], "package": None, "version": None} for p in parents if p.startswith("model.")]
                n["sources"] = [[p.split(".")[2], p.split(".")[3]] for p in parents if p.startswith("source.")]
                nodes[uid] = n
                add_parents(uid, parents)
                cols_of[uid] = out_cols
                rel_of[uid] = n["relation_name"]
                if v is None or v == latest:
                    by_layer[layer].append(uid)
                made += 1
            i += 1

    # Snapshots over staging models
    for i in range(count["snapshot"]):
        p = by_layer["staging"][i % len(by_layer["staging"])]
        name = f"snap_{p.split('.')[2]}"
        uid = f"snapshot.{PKG}.{name}"
        n = _base_node("snapshot", name, f"snapshots/{name}.sql", schema="snapshots", uid=uid)
        sql = f"select * from {rel_of[p]}\n"
        n.update(compiled_code=sql, checksum=_checksum(sql), depends_on={"macros": [], "nodes": [p]},
                 config={"enabled": True, "materialized": "snapshot", "strategy": "timestamp", "unique_key": "id",
                         "updated_at": "_loaded_at", "meta": {}, "tags": []})
        nodes[uid] = n; add_parents(uid, [p]); cols_of[uid] = cols_of[p]; rel_of[uid] = n["relation_name"]

    # Semantic models over (latest) marts, metrics over semantic models, derived metrics over metrics.
    marts = by_layer["marts"]
    sm_ids = []
    for i in range(count["semantic_model"]):
        m = marts[i % len(marts)]
        mn = nodes[m]
        name = f"sm_{mn['name']}"
        uid = f"semantic_model.{PKG}.{name}"
        cols = cols_of[m]
        measures = [{"name": f"{name}_{c}_sum", "agg": "sum", "expr": c, "description": f"Sum of {c}",
                     "create_metric": False, "agg_params": None, "non_additive_dimension": None,
                     "agg_time_dimension": None, "label": None, "config": {"meta": {}}} for c in cols[1:4]]
        semantic_models[uid] = {
            "name": name, "resource_type": "semantic_model", "package_name": PKG, "path": "marts/semantic.yml",
            "original_file_path": "models/marts/semantic.yml", "unique_id": uid, "fqn": [PKG, "marts", name],
            "model": f"ref('{mn['name']}')", "node_relation": {"alias": mn["alias"], "schema_name": "marts", "database": DB,
                                                               "relation_name": mn["relation_name"]},
            "description": f"Semantic layer over {mn['name']}.", "label": None, "defaults": {"agg_time_dimension": "id"},
            "entities": [{"name": "id", "type": "primary", "expr": None, "description": None, "role": None, "label": None}],
            "measures": measures,
            "dimensions": [{"name": c, "type": "categorical", "expr": None, "is_partition": False, "type_params": None,
                            "description": None, "label": None} for c in cols[4:8]],
            "metadata": None, "depends_on": {"macros": [], "nodes": [m]}, "refs": [{"name": mn["name"], "package": None, "version": None}],
            "created_at": 1767225600.0, "config": {"enabled": True, "group": None, "meta": {}},
            "unrendered_config": {}, "primary_entity": None, "group": None,
        }
        add_parents(uid, [m]); sm_ids.append(uid)
    metric_ids = []
    for i in range(count["metric"]):
        derived = i >= count["metric"] * 0.8 and len(metric_ids) >= 2
        name = f"metric_{_words(rng)}_{i}"
        uid = f"metric.{PKG}.{name}"
        if derived:
            inputs = rng.sample(metric_ids, k=2)
            deps = inputs
            tp = {"measure": None, "input_measures": [], "numerator": None, "denominator": None,
                  "expr": f"{inputs[0].split('.')[2]} - {inputs[1].split('.')[2]}", "window": None, "grain_to_date": None,
                  "metrics": [{"name": x.split(".")[2], "filter": None, "alias": None} for x in inputs]}
            mtype = "derived"
        else:
            sm = sm_ids[i % len(sm_ids)]
            measure = semantic_models[sm]["measures"][0]["name"] if semantic_models[sm]["measures"] else "id"
            deps = [sm]
            tp = {"measure": {"name": measure, "filter": None, "alias": None, "join_to_timespine": False, "fill_nulls_with": None},
                  "input_measures": [{"name": measure}], "numerator": None, "denominator": None, "expr": None,
                  "window": None, "grain_to_date": None, "metrics": []}
            mtype = "simple"
        meta = {"canon": {"object_id": f"metric.finance.{name}", "status": "approved", "valid_from": "2026-01-01",
                          "authority": 90}} if rng.random() < 0.3 else {}
        metrics[uid] = {
            "name": name, "resource_type": "metric", "package_name": PKG, "path": "marts/metrics.yml",
            "original_file_path": "models/marts/metrics.yml", "unique_id": uid, "fqn": [PKG, "marts", name],
            "description": f"The {name.replace('_', ' ')} metric.", "label": name.replace("_", " ").title(),
            "type": mtype, "type_params": tp, "filter": None, "metadata": None, "time_granularity": None,
            "meta": meta, "tags": [], "config": {"enabled": True, "group": None, "meta": meta},
            "unrendered_config": {}, "sources": [], "depends_on": {"macros": [], "nodes": deps}, "refs": [],
            "metrics": [], "created_at": 1767225600.0, "group": None,
        }
        add_parents(uid, deps); metric_ids.append(uid)
    for i in range(count["exposure"]):
        deps = rng.sample(marts, k=min(3, len(marts)))
        name = f"dashboard_{i}"
        uid = f"exposure.{PKG}.{name}"
        exposures[uid] = {
            "name": name, "resource_type": "exposure", "package_name": PKG, "path": "exposures.yml",
            "original_file_path": "models/exposures.yml", "unique_id": uid, "fqn": [PKG, name], "type": "dashboard",
            "owner": {"email": "bi@example.com", "name": "BI"}, "description": "A dashboard.", "label": None,
            "maturity": "high", "meta": {}, "tags": [], "config": {"enabled": True, "tags": [], "meta": {}},
            "unrendered_config": {}, "url": f"https://bi.example.com/{i}", "depends_on": {"macros": [], "nodes": deps},
            "refs": [], "sources": [], "metrics": [], "created_at": 1767225600.0,
        }
        add_parents(uid, deps)
    for i in range(count["saved_query"]):
        deps = rng.sample(metric_ids, k=min(3, len(metric_ids)))
        name = f"saved_query_{i}"
        uid = f"saved_query.{PKG}.{name}"
        saved_queries[uid] = {
            "name": name, "resource_type": "saved_query", "package_name": PKG, "path": "marts/sq.yml",
            "original_file_path": "models/marts/sq.yml", "unique_id": uid, "fqn": [PKG, name],
            "query_params": {"metrics": [d.split(".")[2] for d in deps], "group_by": [], "where": None},
            "exports": [], "description": None, "label": None, "metadata": None, "config": {"enabled": True, "meta": {}},
            "unrendered_config": {}, "group": None, "depends_on": {"macros": [], "nodes": deps}, "created_at": 1767225600.0,
            "refs": [], "tags": [],
        }
        add_parents(uid, deps)

    # Data tests fill the rest: unique / not_null / relationships on model and source columns.
    testable = [u for u in list(nodes) + list(sources) if cols_of.get(u)]
    n_tests = max(0, n_nodes - len(nodes) - len(sources) - len(metrics) - len(semantic_models) - len(exposures) - len(saved_queries))
    for i in range(n_tests):
        target = testable[i % len(testable)]
        col = rng.choice(cols_of[target])
        kind = rng.choice(["unique", "not_null", "not_null", "accepted_values", "relationships"])
        tname = f"{kind}_{target.split('.')[-1]}_{col}_{i}"
        uid = f"test.{PKG}.{tname}.{hashlib.md5(tname.encode()).hexdigest()[:10]}"
        deps = [target]
        if kind == "relationships":
            other = rng.choice(testable)
            if other != target:
                deps.append(other)
        n = _base_node("test", tname, f"tests/{tname}.sql", schema="dbt_test__audit", uid=uid)
        n.update(relation_name=None, column_name=col, attached_node=target if target.startswith("model.") else None,
                 test_metadata={"name": kind, "kwargs": {"column_name": col, "model": "{{ get_where_subquery(ref('x')) }}"},
                                "namespace": None},
                 checksum={"name": "none", "checksum": ""}, depends_on={"macros": ["macro.dbt.test_" + kind], "nodes": deps},
                 config={"enabled": True, "materialized": "test", "severity": "ERROR", "meta": {}, "tags": []})
        nodes[uid] = n
        add_parents(uid, deps)

    child_map: dict[str, list[str]] = {u: [] for u in parent_map}
    for child, parents in parent_map.items():
        for p in parents:
            child_map.setdefault(p, []).append(child)
    child_map = {k: sorted(v) for k, v in child_map.items()}

    invocation = hashlib.md5(f"{n_nodes}:{seed}".encode()).hexdigest()
    inv = f"{invocation[:8]}-{invocation[8:12]}-{invocation[12:16]}-{invocation[16:20]}-{invocation[20:32]}"
    manifest = {
        "metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/v12.json", "dbt_version": "1.11.16",
                     "generated_at": "2026-11-30T01:00:00.000000Z", "invocation_id": inv,
                     "invocation_started_at": "2026-11-30T00:59:50.000000Z", "env": {}, "project_name": PKG,
                     "project_id": hashlib.md5(PKG.encode()).hexdigest(), "user_id": None,
                     "send_anonymous_usage_stats": False, "adapter_type": "duckdb",
                     "quoting": {"database": True, "schema": True, "identifier": True, "column": None}},
        "nodes": nodes, "sources": sources, "macros": {}, "docs": {}, "exposures": exposures, "metrics": metrics,
        "groups": {f"group.{PKG}.finance": {"name": "finance", "resource_type": "group", "package_name": PKG,
                                            "path": "groups.yml", "original_file_path": "models/groups.yml",
                                            "unique_id": f"group.{PKG}.finance", "owner": {"email": "fin@example.com", "name": None}}},
        "selectors": {}, "disabled": {}, "parent_map": parent_map, "child_map": child_map, "group_map": {},
        "saved_queries": saved_queries, "semantic_models": semantic_models, "unit_tests": {}, "functions": {},
    }
    results = []
    for uid, n in nodes.items():
        if n["resource_type"] == "model" and n["config"]["materialized"] == "ephemeral":
            continue
        status = "pass" if n["resource_type"] == "test" else "success"
        if rng.random() < 0.01:
            status = "fail" if n["resource_type"] == "test" else "error"
        results.append({
            "status": status, "timing": [{"name": "execute", "started_at": "2026-11-30T01:00:01.000000Z",
                                          "completed_at": "2026-11-30T01:00:01.250000Z"}],
            "thread_id": "Thread-1", "execution_time": round(rng.uniform(0.01, 3.0), 4),
            "adapter_response": {"_message": "OK", "rows_affected": rng.randint(0, 10000)}, "message": "OK",
            "failures": 0 if n["resource_type"] == "test" else None, "unique_id": uid, "compiled": True,
            "compiled_code": n.get("compiled_code"), "relation_name": n.get("relation_name"), "batch_results": None,
        })
    run_results = {"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/run-results/v6.json",
                                "dbt_version": "1.11.16", "generated_at": "2026-11-30T01:05:00.000000Z",
                                "invocation_id": inv, "env": {}},
                   "results": results, "elapsed_time": 300.0, "args": {"which": "build"}}
    fresh = []
    for uid, s in sources.items():
        age = rng.uniform(60, 60 * 60 * 30)
        warn = s["freshness"]["warn_after"]["count"] * 3600
        fresh.append({"unique_id": uid, "max_loaded_at": "2026-11-30T00:00:00+00:00",
                      "snapshotted_at": "2026-11-30T01:00:00+00:00", "max_loaded_at_time_ago_in_s": age,
                      "status": "pass" if age < warn else ("warn" if age < 86400 else "error"),
                      "criteria": s["freshness"], "adapter_response": {}, "timing": [], "thread_id": "Thread-1",
                      "execution_time": 0.01})
    sources_json = {"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/sources/v3.json",
                                 "dbt_version": "1.11.16", "generated_at": "2026-11-30T01:00:00Z", "invocation_id": inv, "env": {}},
                    "results": fresh, "elapsed_time": 1.0}
    return {"manifest": manifest, "run_results": run_results, "sources": sources_json}


def write_target(out_dir: Path, n_nodes: int = 5500, seed: int = 7) -> dict[str, Path]:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    docs = generate(n_nodes, seed)
    paths = {"manifest": out_dir / "manifest.json", "run_results": out_dir / "run_results.json",
             "sources": out_dir / "sources.json"}
    for key, path in paths.items():
        path.write_text(json.dumps(docs[key], indent=None, separators=(",", ":")), encoding="utf-8")
    return paths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--nodes", type=int, default=5500)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    paths = write_target(args.out_dir, args.nodes, args.seed)
    for k, p in paths.items():
        print(f"{k:12s} {p}  {p.stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
