"""canon.sources.dbt.artifacts against real third-party dbt artifacts (tests/fixtures/external,
unpacked by the `external_dir` fixture) and against the synthetic generator used by the benchmark."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from external_artifacts import SETS

from bench import gen_manifest
from canon.core.errors import CanonInputError
from canon.sources.dbt.artifacts import (
    EDGES_SCHEMA,
    NODES_SCHEMA,
    RUN_RESULTS_SCHEMA,
    ArtifactBundle,
    manifest_edges,
    manifest_nodes,
    read_artifacts,
    read_manifest,
    read_run_results,
    read_sources_json,
)

REPO = Path(__file__).resolve().parents[1]


FOLDERS = sorted(SETS)


def _names(folder: Path) -> dict:
    """The artifact file names in a folder; jaffle-shop-semantic-v12 suffixes them with the dbt version."""
    def pick(stem: str) -> str | None:
        hits = sorted(folder.glob(f"{stem}*.json"))
        return hits[0].name if hits else None
    return {"manifest": pick("manifest"), "run_results": pick("run_results"), "catalog": pick("catalog"),
            "sources": pick("sources"), "semantic_manifest": pick("semantic_manifest")}


@pytest.fixture(scope="module")
def load(external_dir):
    """`load(folder)`: that set's ArtifactBundle, read once per module."""
    cache: dict[str, ArtifactBundle] = {}

    def read(name: str) -> ArtifactBundle:
        if name not in cache:
            cache[name] = read_artifacts(external_dir / name, **_names(external_dir / name))
        return cache[name]
    return read


def rows(table: pa.Table) -> list[dict]:
    return table.to_pylist()


def by_id(bundle: ArtifactBundle) -> dict[str, dict]:
    return {r["unique_id"]: r for r in rows(bundle.nodes)}


def model_edges(bundle: ArtifactBundle) -> set[tuple[str, str]]:
    return {(r["parent"], r["child"]) for r in rows(bundle.edges) if r["edge_type"] == "model"}


# --------------------------------------------------------------------------- every real folder


@pytest.mark.parametrize("folder", FOLDERS)
def test_every_external_folder_loads(folder, load, external_dir):
    b = load(folder)
    raw = json.loads((external_dir / folder / _names(external_dir / folder)["manifest"]).read_text())
    assert b.nodes.schema == NODES_SCHEMA
    assert b.edges.schema == EDGES_SCHEMA
    assert b.run_results.schema == RUN_RESULTS_SCHEMA
    assert b.nodes.num_rows > 0
    assert b.schema_version == int(raw["metadata"]["dbt_schema_version"].rsplit("/v", 1)[1][:-5])
    assert b.revision == raw["metadata"]["invocation_id"]
    ids = b.nodes.column("unique_id").to_pylist()
    assert len(ids) == len(set(ids)), "unique_id is a key"
    assert set(b.nodes.column("artifact_revision").to_pylist()) == {b.revision}
    assert set(b.nodes.column("schema_version").to_pylist()) == {b.schema_version}
    # every edge endpoint is a node row, and edges are deduplicated
    idset = set(ids)
    e = rows(b.edges)
    assert all(r["parent"] in idset and r["child"] in idset for r in e)
    keys = [(r["parent"], r["child"], r["edge_type"], r["parent_column"], r["child_column"]) for r in e]
    assert len(keys) == len(set(keys))
    # every manifest parent_map edge between kept resources is present
    pm = raw.get("parent_map") or {}
    expected = {(p, c) for c, ps in pm.items() for p in ps if p in idset and c in idset}
    assert expected <= model_edges(b)
    # the JSON columns are valid JSON of the promised shape
    for r in rows(b.nodes)[:200]:
        cols = json.loads(r["columns_json"])
        assert all(set(c) == {"name", "description", "data_type"} for c in cols)
        assert isinstance(json.loads(r["meta_json"]), dict)


def test_bundle_inserts_into_duckdb(tmp_path, load):
    b = load("dbt-project-evaluator")
    con = duckdb.connect(str(tmp_path / "canon.duckdb"))
    nodes, edges, run_results = b.nodes, b.edges, b.run_results  # noqa: F841 - DuckDB scans them by name
    con.execute("CREATE TABLE dbt_nodes AS SELECT * FROM nodes")
    con.execute("CREATE TABLE lineage_edges AS SELECT * FROM edges")
    con.execute("CREATE TABLE run_results AS SELECT * FROM run_results")
    assert con.execute("SELECT count(*) FROM dbt_nodes").fetchall()[0][0] == b.nodes.num_rows
    assert con.execute("SELECT count(*) FROM lineage_edges").fetchall()[0][0] == b.edges.num_rows
    tags = con.execute("SELECT tags FROM dbt_nodes WHERE unique_id LIKE 'exposure.%'").fetchall()[0][0]
    assert tags == ["proserv"]
    con.close()


# --------------------------------------------------------------------------- specific content


def test_project_evaluator_versions_groups_semantic_layer(load):
    b = load("dbt-project-evaluator")
    n = by_id(b)
    pkg = "dbt_project_evaluator_integration_tests"
    versions = {r["version"]: r for r in n.values() if r["name"] == "int_model_5"}
    assert set(versions) == {"1", "2", "3"}
    assert {r["latest_version"] for r in versions.values()} == {"2"}
    assert versions["1"]["deprecation_date"].startswith("2024-01-01")
    assert all(r["access"] == "protected" and r["materialized"] == "ephemeral" for r in versions.values())
    assert all(r["relation_name"] is None for r in versions.values()), "ephemeral models have no relation"
    types = [r["resource_type"] for r in n.values()]
    assert types.count("exposure") == 1 and types.count("semantic_model") == 1 and types.count("metric") == 2
    assert types.count("model") == 84 and types.count("seed") == 28 and types.count("source") == 8
    report = n[f"model.{pkg}.report_2"]
    assert report["group_name"] == "my_awesome_group" and report["access"] == "public"
    assert report["relation_name"] == "duck.main.report_2"
    sm = n[f"semantic_model.{pkg}.my_model"]
    assert sm["relation_name"] == "duck.main.dim_model_7"
    assert len(json.loads(sm["definition_json"])["measures"]) == 1
    metric = n[f"metric.{pkg}.new_metric_with_window"]
    assert metric["label"] == "New cumulative Metric"
    assert json.loads(metric["definition_json"])["type"] == "cumulative"
    # metric → semantic model → model (whose parent is a model version)
    e = model_edges(b)
    assert (f"semantic_model.{pkg}.my_model", f"metric.{pkg}.new_metric") in e
    assert (f"semantic_model.{pkg}.my_model", f"metric.{pkg}.new_metric_with_window") in e
    assert (f"model.{pkg}.dim_model_7", f"semantic_model.{pkg}.my_model") in e
    assert (f"model.{pkg}.int_model_5.v2", f"model.{pkg}.dim_model_7") in e
    assert (f"source.{pkg}.source_1.table_1", f"exposure.{pkg}.exposure_1") in e
    # semantic manifest is parsed; sources.json has no results; run_results came from `dbt build`
    assert [m["name"] for m in b.semantic["metrics"]] == ["new_metric", "new_metric_with_window"]
    assert len(b.semantic["semantic_models"]) == 1
    assert b.freshness == []
    statuses = set(b.run_results.column("status").to_pylist())
    assert statuses == {"success", "pass", "no-op"}
    assert set(b.run_results.column("command").to_pylist()) == {"build"}
    # data tests are kept as leaves
    assert types.count("test") == 72


def test_tuva_input_layer_scale_and_mixed_dbt_versions(load, external_dir):
    b = load("tuva-input-layer")
    raw = read_manifest(external_dir / "tuva-input-layer" / "manifest.json")
    assert len(raw["nodes"]) == 1699
    types = b.nodes.column("resource_type").to_pylist()
    # the 4 on-run-start/end operations are not nodes; everything else is
    assert len(types) == 1695
    assert (types.count("model"), types.count("seed"), types.count("test")) == (868, 98, 729)
    assert b.dbt_version == "1.11.16"
    assert set(b.run_results.column("dbt_version").to_pylist()) == {"1.9.4"}
    assert b.run_results.num_rows == 1637
    missing = set(b.run_results.column("unique_id").to_pylist()) - set(b.nodes.column("unique_id").to_pylist())
    assert missing and all(u.startswith("operation.") for u in missing)
    # the catalog (dbt 1.9.4, Snowflake upper-case) types the documented lower-case columns
    n = by_id(b)
    cols = {c["name"]: c for c in json.loads(n["model.the_tuva_project.mart_review__tuva_chronic_conditions"]["columns_json"])}
    assert any(c["data_type"] for c in cols.values())
    typed = sum(1 for r in n.values() for c in json.loads(r["columns_json"]) if c["data_type"])
    assert typed > 4000
    assert any(r["edge_type"] == "column" for r in rows(b.edges))


def test_cosmos_source_freshness_warn(load, external_dir):
    b = load("cosmos-altered-jaffle-shop")
    assert len(b.freshness) == 1
    f = b.freshness[0]
    assert f["unique_id"] == "source.altered_jaffle_shop.postgres_db.raw_orders"
    assert f["source"] == "research.main.raw_orders"
    assert f["status"] == "warn"
    assert f["age_seconds"] == pytest.approx(272770435.670907)
    assert f["max_loaded_at"] == "2018-04-09T00:00:00+00:00"
    assert f["snapshotted_at"].startswith("2026-11-30T01:33:55")
    assert f["warn_after_minutes"] == 1 and f["error_after_minutes"] is None
    # without a manifest the source name is derived from the unique id
    alone = read_sources_json(external_dir / "cosmos-altered-jaffle-shop" / "sources.json")
    assert alone[0]["source"] == "postgres_db.raw_orders" and alone[0]["status"] == "warn"
    # sources are named database.schema.identifier
    n = by_id(b)
    assert n["source.altered_jaffle_shop.postgres_db.raw_orders"]["relation_name"] == "research.main.raw_orders"
    assert b.semantic == {**b.semantic, "metrics": [], "semantic_models": []}


def test_solana_v6_old_schema(load):
    b = load("solana-models-v6")
    assert b.schema_version == 6 and b.dbt_version == "1.2.0"
    types = b.nodes.column("resource_type").to_pylist()
    assert (types.count("model"), types.count("test"), types.count("seed"), types.count("source")) == (102, 776, 11, 17)
    assert "operation" not in types
    n = by_id(b)
    m = n["model.solana_models.core__dim_nft_metadata"]
    assert m["relation_name"] == "SOLANA_DEV.core.dim_nft_metadata"
    assert json.loads(m["meta_json"]) == {"database_tags": {"table": {"PURPOSE": "NFT"}}}
    assert m["checksum"] and m["access"] is None
    # compiled_sql (the pre-1.3 key) feeds column lineage
    assert sum(1 for r in rows(b.edges) if r["edge_type"] == "column") > 100


def test_semantic_v12_metrics_chain(load):
    b = load("jaffle-shop-semantic-v12")
    types = b.nodes.column("resource_type").to_pylist()
    assert types.count("metric") == 19
    assert types.count("semantic_model") == 6
    assert types.count("saved_query") == 3
    assert types.count("unit_test") == 3
    assert b.semantic is None, "this set ships no semantic_manifest.json"
    e = model_edges(b)
    # derived metric → its input metrics → semantic model → model → staging → source
    assert ("metric.jaffle_shop.revenue", "metric.jaffle_shop.order_gross_profit") in e
    assert ("metric.jaffle_shop.order_cost", "metric.jaffle_shop.order_gross_profit") in e
    assert ("semantic_model.jaffle_shop.order_item", "metric.jaffle_shop.revenue") in e
    assert ("model.jaffle_shop.order_items", "semantic_model.jaffle_shop.order_item") in e
    assert ("metric.jaffle_shop.revenue", "saved_query.jaffle_shop.revenue_metrics") in e
    upstream = _ancestors(e, "metric.jaffle_shop.order_gross_profit")
    assert any(u.startswith("source.jaffle_shop.") for u in upstream)
    ratio = by_id(b)["metric.jaffle_shop.food_revenue_pct"]
    assert json.loads(ratio["definition_json"])["type"] == "ratio"


def _ancestors(edges: set[tuple[str, str]], node: str) -> set[str]:
    parents: dict[str, set[str]] = {}
    for p, c in edges:
        parents.setdefault(c, set()).add(p)
    seen: set[str] = set()
    stack = [node]
    while stack:
        for p in parents.get(stack.pop(), ()):
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return seen


def test_state_fixtures_same_project_across_v10_v11_v12(load):
    loaded = {v: load(f"dbt-core-state-{v}") for v in ("v10", "v11", "v12")}
    ids = {v: sorted(b.nodes.column("unique_id").to_pylist()) for v, b in loaded.items()}
    assert ids["v10"] == ids["v11"] == ids["v12"]
    assert {v: b.schema_version for v, b in loaded.items()} == {"v10": 10, "v11": 11, "v12": 12}
    types = loaded["v10"].nodes.column("resource_type").to_pylist()
    assert types.count("metric") == 4 and types.count("snapshot") == 1 and types.count("exposure") == 1
    assert "analysis" not in types
    for b in loaded.values():
        e = model_edges(b)
        assert ("metric.test.customers", "metric.test.doubled_blue_customers") in e
        assert ("semantic_model.test.semantic_people", "metric.test.customers") in e
        assert ("model.test.my_model", "semantic_model.test.semantic_people") in e
        # only a manifest in these folders: optional artifacts come back empty
        assert b.run_results.num_rows == 0 and b.freshness == [] and b.semantic is None


def test_column_lineage_from_compiled_sql(load, external_dir):
    b = load("jaffle-shop-duckdb")
    col = {(r["parent"], r["parent_column"], r["child"], r["child_column"]) for r in rows(b.edges)
           if r["edge_type"] == "column"}
    assert ("model.jaffle_shop.stg_payments", "amount", "model.jaffle_shop.customers", "customer_lifetime_value") in col
    assert ("seed.jaffle_shop.raw_customers", "id", "model.jaffle_shop.stg_customers", "customer_id") in col
    assert ("model.jaffle_shop.stg_orders", "order_date", "model.jaffle_shop.customers", "first_order") in col
    # column edges only run along model-level edges
    me = model_edges(b)
    assert all((p, c) in me for p, _, c, _ in col)
    # turning it off leaves only model edges
    off = manifest_edges(read_manifest(external_dir / "jaffle-shop-duckdb" / "manifest.json"), "r",
                         column_lineage=False)
    assert set(off.column("edge_type").to_pylist()) == {"model"}


def test_bad_compiled_sql_never_fails_the_load(tmp_path, external_dir):
    raw = json.loads((external_dir / "jaffle-shop-duckdb" / "manifest.json").read_text())
    raw["nodes"]["model.jaffle_shop.customers"]["compiled_code"] = "select ((( from where"
    raw["nodes"]["model.jaffle_shop.orders"]["compiled_code"] = "select " + "(" * 5000 + "1" + ")" * 5000
    (tmp_path / "manifest.json").write_text(json.dumps(raw))
    b = read_artifacts(tmp_path)
    children = {r["child"] for r in rows(b.edges) if r["edge_type"] == "column"}
    assert "model.jaffle_shop.customers" not in children
    assert "model.jaffle_shop.stg_customers" in children
    assert ("model.jaffle_shop.stg_orders", "model.jaffle_shop.customers") in model_edges(b)


# --------------------------------------------------------------------------- governed meta.canon


def test_governed_entries_from_meta_canon(tmp_path, external_dir):
    raw = json.loads((external_dir / "jaffle-shop-semantic-v12" / "manifest_1.11.json").read_text())
    model = raw["nodes"]["model.jaffle_shop.orders"]
    model["meta"] = {"canon": {"object_id": "model.sales.orders", "status": "draft", "owner": "x"}, "team": "a"}
    model["config"]["meta"] = {"canon": {"status": "approved"}, "team": "b"}
    metric = raw["metrics"]["metric.jaffle_shop.revenue"]
    metric["config"]["meta"] = {"canon": {"object_id": "metric.finance.revenue", "valid_from": "2026-07-01"}}
    sm = raw["semantic_models"]["semantic_model.jaffle_shop.order_item"]
    sm["config"]["meta"] = {"canon": {"object_id": "semantic.order_item"}}
    raw["nodes"]["model.jaffle_shop.customers"]["meta"] = {"canon": "not a dict"}
    (tmp_path / "manifest.json").write_text(json.dumps(raw))
    b = read_artifacts(tmp_path)
    gov = {g["unique_id"]: g for g in b.governed}
    assert set(gov) == {"model.jaffle_shop.orders", "metric.jaffle_shop.revenue", "semantic_model.jaffle_shop.order_item"}
    g = gov["model.jaffle_shop.orders"]
    # config.meta wins, nested dicts merge
    assert g["canon"] == {"object_id": "model.sales.orders", "status": "approved", "owner": "x"}
    assert g["resource_type"] == "model" and g["relation_name"] == "jaffle_shop.main.orders"
    assert g["version"] is None and g["description"]
    assert json.loads(by_id(b)["model.jaffle_shop.orders"]["meta_json"])["team"] == "b"
    assert gov["metric.jaffle_shop.revenue"]["canon"]["valid_from"] == "2026-07-01"
    assert gov["semantic_model.jaffle_shop.order_item"]["relation_name"] == "jaffle_shop.main.order_items"


# --------------------------------------------------------------------------- errors


@pytest.fixture()
def jaffle_copy(tmp_path, external_dir):
    for f in (external_dir / "jaffle-shop-duckdb").iterdir():
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def _expect_error(target, *needles, **kw) -> CanonInputError:
    with pytest.raises(CanonInputError) as ei:
        read_artifacts(target, **kw)
    msg = str(ei.value)
    for needle in needles:
        assert needle in msg, msg
    assert "Traceback" not in msg
    return ei.value


def test_truncated_manifest(jaffle_copy):
    p = jaffle_copy / "manifest.json"
    p.write_bytes(p.read_bytes()[:50_000])
    err = _expect_error(jaffle_copy, "manifest.json", "invalid JSON", "truncated")
    assert err.line == 1


def test_unsupported_schema_version(jaffle_copy):
    p = jaffle_copy / "manifest.json"
    p.write_text(p.read_text().replace("/dbt/manifest/v12.json", "/dbt/manifest/v99.json", 1))
    _expect_error(jaffle_copy, "manifest.json", "unsupported manifest schema version v99", "v5..v12")


def test_old_unsupported_schema_version(jaffle_copy):
    p = jaffle_copy / "manifest.json"
    p.write_text(p.read_text().replace("/dbt/manifest/v12.json", "/dbt/manifest/v4.json", 1))
    _expect_error(jaffle_copy, "manifest.json", "v4")


def test_missing_manifest(tmp_path):
    _expect_error(tmp_path, "manifest.json", "not found")
    _expect_error(tmp_path / "nope", "nope", "not found")


def test_wrong_artifact_kind(jaffle_copy):
    shutil.copy(jaffle_copy / "catalog.json", jaffle_copy / "manifest.json")
    _expect_error(jaffle_copy, "manifest.json", "expected a dbt manifest", "catalog")


def test_no_schema_version(jaffle_copy):
    (jaffle_copy / "manifest.json").write_text(json.dumps({"metadata": {}, "nodes": {}}))
    _expect_error(jaffle_copy, "manifest.json", "dbt_schema_version is missing")


def test_top_level_not_an_object(jaffle_copy):
    (jaffle_copy / "manifest.json").write_text("[]")
    _expect_error(jaffle_copy, "manifest.json", "JSON object")


def test_malformed_nodes(jaffle_copy):
    raw = json.loads((jaffle_copy / "manifest.json").read_text())
    raw["nodes"]["model.jaffle_shop.orders"] = ["not", "an", "object"]
    (jaffle_copy / "manifest.json").write_text(json.dumps(raw))
    _expect_error(jaffle_copy, "manifest.json", "model.jaffle_shop.orders", "object")
    raw["nodes"] = []
    (jaffle_copy / "manifest.json").write_text(json.dumps(raw))
    _expect_error(jaffle_copy, "manifest.json", "nodes")


@pytest.mark.parametrize("fname,content,needle", [
    ("run_results.json", "{\"metadata\": ", "invalid JSON"),
    ("run_results.json", json.dumps({"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/run-results/v99.json"},
                                     "results": []}), "unsupported run-results schema version v99"),
    ("sources.json", json.dumps({"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/sources/v3.json"},
                                 "results": [{"no": "id"}]}), "unique_id"),
    ("catalog.json", "not json", "invalid JSON"),
    ("semantic_manifest.json", "[1, 2]", "JSON object"),
    ("semantic_manifest.json", json.dumps({"metrics": {"a": 1}}), "'metrics' must be a list"),
])
def test_corrupt_optional_file(jaffle_copy, fname, content, needle):
    (jaffle_copy / fname).write_text(content)
    _expect_error(jaffle_copy, fname, needle)


def test_optional_files_can_be_absent_or_ignored(jaffle_copy):
    (jaffle_copy / "run_results.json").write_text("garbage")
    b = read_artifacts(jaffle_copy, run_results=None)   # explicitly ignored
    assert b.run_results.num_rows == 0 and b.run_results.schema == RUN_RESULTS_SCHEMA
    (jaffle_copy / "run_results.json").unlink()
    (jaffle_copy / "catalog.json").unlink()
    b = read_artifacts(jaffle_copy)
    assert b.run_results.num_rows == 0 and "run_results" not in b.files


def test_read_run_results_standalone(external_dir):
    t = read_run_results(external_dir / "tuva-v8" / "run_results.json")
    assert t.num_rows == 399 and set(t.column("schema_version").to_pylist()) == {4}
    assert t.column("relation_name").null_count == 399  # run-results v4 has no relation_name
    t = read_run_results(external_dir / "cosmos-altered-jaffle-shop" / "run_results.json", revision="rev")
    r = {x["unique_id"]: x for x in t.to_pylist()}["seed.altered_jaffle_shop.raw_orders"]
    assert r["rows_affected"] == 99 and r["status"] == "success" and r["artifact_revision"] == "rev"
    assert r["started_at"].endswith("+00:00")


# --------------------------------------------------------------------------- generator


def test_generator_is_deterministic_and_loads(tmp_path):
    a = gen_manifest.write_target(tmp_path / "a", 800, seed=3)
    b = gen_manifest.write_target(tmp_path / "b", 800, seed=3)
    assert a["manifest"].read_bytes() == b["manifest"].read_bytes()
    bundle = read_artifacts(tmp_path / "a")
    types = bundle.nodes.column("resource_type").to_pylist()
    assert len(types) == 800
    for t in ("source", "model", "test", "metric", "semantic_model", "exposure", "seed", "snapshot", "saved_query"):
        assert t in types
    versions = [v for v in bundle.nodes.column("version").to_pylist() if v]
    assert versions
    e = model_edges(bundle)
    metrics = [u for u, t in zip(bundle.nodes.column("unique_id").to_pylist(), types) if t == "metric"]
    assert any(u.startswith("source.") for u in _ancestors(e, metrics[0]))
    assert bundle.governed and all(isinstance(g["canon"], dict) for g in bundle.governed)
    assert len(bundle.freshness) == types.count("source")
    assert {f["warn_after_minutes"] for f in bundle.freshness} <= {60, 120, 360, 720}
    assert {f["error_after_minutes"] for f in bundle.freshness} == {1440}
    assert any(r["edge_type"] == "column" for r in rows(bundle.edges))


def test_manifest_functions_on_a_dict(tmp_path):
    gen_manifest.write_target(tmp_path, 300, seed=1)
    m = read_manifest(tmp_path / "manifest.json")
    nodes = manifest_nodes(m, "rev-1")
    edges = manifest_edges(m, "rev-1", column_lineage=False)
    assert nodes.num_rows == 300 and set(nodes.column("artifact_revision").to_pylist()) == {"rev-1"}
    assert edges.num_rows > 0 and set(edges.column("edge_type").to_pylist()) == {"model"}
