"""dbt artifacts become registry documents; a bad artifact never touches what
was already published."""

import json
import shutil

import pytest
from external_artifacts import artifact_names

from canon.core.errors import CanonInputError
from canon.registry import store as registry
from canon.sources.dbt.artifacts import read_artifacts
from canon.sources.dbt.documents import documents_from_artifacts, documents_from_bundle, freshness_document
from canon.sources.dbt.tables import store_bundle

ROLES = ("analyst",)
SEMANTIC = "jaffle-shop-semantic-v12"


@pytest.fixture()
def bundle(external_dir):
    """`bundle(folder)`: read that third-party set (tests/fixtures/external)."""
    return lambda folder, **names: read_artifacts(external_dir / folder, **(names or artifact_names(external_dir / folder)))


def _semantic_manifest(external_dir) -> dict:
    return json.loads((external_dir / SEMANTIC / "manifest_1.11.json").read_text())


def _docs_of(tmp_path, manifest: dict, **kw) -> dict:
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return {d.doc_id: d for d in documents_from_bundle(read_artifacts(tmp_path, column_lineage=False), **kw)}


def test_zero_evidence_from_many_nodes_is_an_error_naming_the_folder_and_why(bundle, external_dir):
    # A third-party project without meta.canon and no default_roles used to give 0 documents and a quiet success.
    b = bundle("dbt-project-evaluator")
    with pytest.raises(CanonInputError) as err:
        documents_from_bundle(b)
    msg = str(err.value)
    assert str(external_dir / "dbt-project-evaluator") in msg and err.value.field == "default_roles"
    assert f"{b.nodes.num_rows} nodes, 0 evidence documents because no metric, model or other rendered node carries meta.canon" in msg
    # the same call with default_roles renders the project
    assert len(documents_from_bundle(b, default_roles=ROLES)) > 100


def test_zero_evidence_with_default_roles_says_no_node_is_evidence(tmp_path, external_dir):
    manifest = json.loads((external_dir / "jaffle-shop-duckdb" / "manifest.json").read_text())
    manifest["nodes"] = {k: v for k, v in manifest["nodes"].items() if v["resource_type"] == "test"}
    for section in ("sources", "metrics", "semantic_models", "exposures", "saved_queries"):
        manifest[section] = {}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(CanonInputError, match=r"20 nodes, 0 evidence documents because none of them is a metric"):
        documents_from_bundle(read_artifacts(tmp_path), default_roles=ROLES)


def test_default_roles_must_name_a_role(bundle):
    with pytest.raises(CanonInputError, match="default_roles"):
        documents_from_bundle(bundle("jaffle-shop-duckdb"), default_roles=())


def test_without_default_roles_only_meta_canon_nodes_render_and_they_need_allowed_roles(tmp_path, external_dir):
    manifest = _semantic_manifest(external_dir)
    metric = manifest["metrics"]["metric.jaffle_shop.order_total"]
    metric["config"]["meta"]["canon"] = {"object_id": "metric.shop.order_total", "doc_id": "metric.order_total.v1",
                                         "definition": "sum of order totals, tax included"}
    with pytest.raises(CanonInputError) as err:
        _docs_of(tmp_path, manifest)
    assert err.value.field == "default_roles" and "metric.jaffle_shop.order_total" in str(err.value)
    # given default_roles, the governed node gets them, keeps its meta.canon keys, and everything else renders too
    docs = _docs_of(tmp_path, manifest, default_roles=ROLES)
    assert docs["metric.order_total.v1"].allowed_roles == ROLES
    assert "sum of order totals, tax included" in docs["metric.order_total.v1"].text
    assert "metric.jaffle_shop.order_total" not in docs and "model.jaffle_shop.orders" in docs
    # with allowed_roles and no default_roles: only the governed metric (its model is named, not rendered)
    metric["config"]["meta"]["canon"]["allowed_roles"] = ["finance"]
    docs = _docs_of(tmp_path, manifest)
    assert set(docs) == {"metric.order_total.v1"}
    assert docs["metric.order_total.v1"].metadata["implemented_by"] == "model.jaffle_shop.orders"
    assert "model_doc_id" not in docs["metric.order_total.v1"].metadata


def test_meta_canon_on_a_third_party_manifest_renders_metric_model_and_lineage(tmp_path, external_dir):
    src = external_dir / "dbt-project-evaluator" / "manifest.json"
    manifest = json.loads(src.read_text())
    metric_id = next(k for k in manifest["metrics"])
    metric = manifest["metrics"][metric_id]
    metric.setdefault("config", {}).setdefault("meta", {})["canon"] = {
        "object_id": "metric.demo.thing", "doc_id": "metric.thing.v1", "version": "1", "status": "approved",
        "valid_from": "2026-01-01", "valid_to": None, "allowed_roles": ["analyst"], "lineage_doc_id": "lineage.thing.v1",
        "definition": "count of things",
    }
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    b = read_artifacts(tmp_path)
    docs = {d.doc_id: d for d in documents_from_artifacts(b.governed, b.nodes.to_pylist(), b.edges.to_pylist(),
                                                          b.freshness, revision=b.revision)}
    assert docs["metric.thing.v1"].metadata["dbt_unique_id"] == metric_id
    assert "count of things" in docs["metric.thing.v1"].text
    assert docs["lineage.thing.v1"].kind == "lineage" and "->" in docs["lineage.thing.v1"].text


def test_sources_json_becomes_a_freshness_snapshot(bundle):
    b = bundle("cosmos-altered-jaffle-shop")
    snap = freshness_document(b.freshness, observed_at=None, roles=["analyst"], revision=b.revision)
    assert snap is not None and snap.kind == "freshness_snapshot"
    assert snap.text.startswith("Observed at ") and "max_loaded_at" in snap.text
    assert snap.metadata["observations"][0]["source"] == b.freshness[0]["source"]


def test_corrupt_artifact_leaves_published_tables_untouched(tmp_path, bundle, external_dir):
    con = registry.connect(tmp_path / "canon.duckdb")
    good = bundle("jaffle-shop-duckdb")
    store_bundle(con, good)
    before = con.execute("SELECT count(*) FROM dbt_nodes").fetchall()[0][0]
    bad = tmp_path / "target"
    bad.mkdir()
    text = (external_dir / "jaffle-shop-duckdb" / "manifest.json").read_text()
    (bad / "manifest.json").write_text(text[: len(text) // 2])
    with pytest.raises(CanonInputError) as err:
        store_bundle(con, read_artifacts(bad))
    assert "manifest.json" in str(err.value)
    shutil.copy(external_dir / "jaffle-shop-duckdb" / "manifest.json", bad / "manifest.json")
    data = json.loads((bad / "manifest.json").read_text())
    data["metadata"]["dbt_schema_version"] = "https://schemas.getdbt.com/dbt/manifest/v99.json"
    (bad / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(CanonInputError, match="v99"):
        store_bundle(con, read_artifacts(bad))
    assert con.execute("SELECT count(*) FROM dbt_nodes").fetchall()[0][0] == before
    con.close()


# --------------------------------------------------------------------------- the implementing model, from the graph


def test_order_total_is_supported_by_orders_not_the_alphabetically_first_upstream_model(bundle):
    # orders is built from order_items, so both are upstream of order_total; the measure's semantic model says orders.
    docs = {d.doc_id: d for d in documents_from_bundle(bundle(SEMANTIC), default_roles=ROLES)}
    metric = docs["metric.jaffle_shop.order_total"]
    assert metric.metadata["implemented_by"] == "model.jaffle_shop.orders"
    assert metric.metadata["model_doc_id"] == "model.jaffle_shop.orders"
    assert metric.metadata["semantic_models"] == ["semantic_model.jaffle_shop.orders"]
    assert "Supporting model is model.jaffle_shop.orders (dbt model orders" in metric.text
    assert "This model supports metric.jaffle_shop.order_total version 1." in docs["model.jaffle_shop.orders"].text
    assert "order_total" not in docs["model.jaffle_shop.order_items"].text.split("This model supports", 1)[-1]
    # revenue's measure lives on order_item's semantic model: supported by order_items
    assert docs["metric.jaffle_shop.revenue"].metadata["implemented_by"] == "model.jaffle_shop.order_items"


def test_order_total_with_meta_canon_on_every_node_is_still_supported_by_orders(tmp_path, external_dir):
    manifest = _semantic_manifest(external_dir)

    def govern(node: dict, object_id: str, doc_id: str) -> None:
        node["config"]["meta"]["canon"] = {"object_id": object_id, "doc_id": doc_id, "allowed_roles": ["analyst"],
                                           "valid_from": "2026-01-01"}
    govern(manifest["metrics"]["metric.jaffle_shop.order_total"], "metric.shop.order_total", "metric.order_total.v1")
    for name in ("orders", "order_items"):
        govern(manifest["nodes"][f"model.jaffle_shop.{name}"], f"model.shop.{name}", f"model.{name}.v1")
    docs = _docs_of(tmp_path, manifest)
    assert set(docs) == {"metric.order_total.v1", "model.orders.v1", "model.order_items.v1"}
    metric = docs["metric.order_total.v1"]
    assert metric.metadata["model_doc_id"] == "model.orders.v1"
    assert "Supporting model is model.shop.orders (dbt model orders)." in metric.text
    assert "This model supports metric.shop.order_total version 1." in docs["model.orders.v1"].text
    assert "supports" not in docs["model.order_items.v1"].text
    # meta.canon left out the grain and the key: they come from the orders semantic model
    assert "Grain: one row per order_id (the primary entity of semantic model orders)." in docs["model.orders.v1"].text


def _add_metric(manifest: dict, name: str, **fields) -> str:
    uid = f"metric.jaffle_shop.{name}"
    base = json.loads(json.dumps(manifest["metrics"]["metric.jaffle_shop.orders"]))
    base.update(name=name, unique_id=uid, label=None, description="", fqn=["jaffle_shop", name], **fields)
    manifest["metrics"][uid] = base
    return uid


def test_every_metric_type_renders_its_definition(tmp_path, external_dir):
    manifest = _semantic_manifest(external_dir)
    tp = {k: None for k in manifest["metrics"]["metric.jaffle_shop.orders"]["type_params"]}
    conversion = _add_metric(manifest, "first_order_conversion", type="conversion", type_params={
        **tp, "input_measures": [{"name": "customers"}, {"name": "order_count"}], "metrics": [],
        "conversion_type_params": {"base_measure": {"name": "customers"},
                                   "conversion_measure": {"name": "order_count"}, "entity": "customer",
                                   "calculation": "conversion_rate", "window": {"count": 7, "granularity": "day"},
                                   "constant_properties": None}})
    legacy = _add_metric(manifest, "legacy_order_count", type=None, type_params={},
                         calculation_method="count", expression="order_id", timestamp="ordered_at",
                         time_grains=["day"], depends_on={"macros": [], "nodes": ["model.jaffle_shop.orders"]})
    ghost = _add_metric(manifest, "ghost_orders", type_params={**tp, "measure": {"name": "ghost_measure"},
                                                               "input_measures": [{"name": "ghost_measure"}],
                                                               "metrics": []},
                        depends_on={"macros": [], "nodes": []})
    manifest["parent_map"][legacy] = ["model.jaffle_shop.orders"]
    docs = _docs_of(tmp_path, manifest, default_roles=ROLES)
    text = {uid: docs[uid].text for uid in docs}
    assert "Definition: the sum of order_total (measure order_total)." in text["metric.jaffle_shop.order_total"]
    assert "Filter: {{ Dimension('order_id__is_food_order') }} = true." in text["metric.jaffle_shop.food_orders"]
    assert "Definition: metric food_revenue divided by metric revenue." in text["metric.jaffle_shop.food_revenue_pct"]
    assert ("the expression (current_revenue - revenue_prev_month)*100/revenue_prev_month over metric revenue "
            "(as current_revenue); metric revenue (as revenue_prev_month, offset by 1 month)"
            ) in text["metric.jaffle_shop.revenue_growth_mom"]
    assert ("the running total of the sum of product_price (measure revenue) over all time"
            ) in text["metric.jaffle_shop.cumulative_revenue"]
    assert ("Definition: the conversion_rate from the count_distinct of customer_id (measure customers) "
            "to the sum of 1 (measure order_count) for entity customer within 7 day") in text[conversion]
    assert docs[conversion].metadata["implemented_by_all"] == ["model.jaffle_shop.customers", "model.jaffle_shop.orders"]
    assert "Definition: the count of order_id, timestamped by ordered_at, at time grains day." in text[legacy]
    assert docs[legacy].metadata["implemented_by"] == "model.jaffle_shop.orders"
    # no resolvable model: said so, and no guess (there is a model named orders right there)
    assert "implemented_by" not in docs[ghost].metadata and "model_doc_id" not in docs[ghost].metadata
    assert ("No implementing dbt model resolves from the graph: no semantic model in the manifest defines its "
            "measure(s) ghost_measure.") in text[ghost]
    assert docs["lineage.jaffle_shop.ghost_orders"].text.endswith(
        "No implementing dbt model resolves for metric.jaffle_shop.ghost_orders: no semantic model in the manifest "
        "defines its measure(s) ghost_measure.")


# --------------------------------------------------------------------------- models, versions, owners, artifacts


def test_model_versions_latest_governs_older_superseded_prerelease_draft(bundle):
    docs = {d.doc_id: d for d in documents_from_bundle(bundle("dbt-project-evaluator"), default_roles=ROLES)}
    uid = "model.dbt_project_evaluator_integration_tests.int_model_5"
    versions = {v: docs[f"{uid}.v{v}"] for v in "123"}
    assert {d.object_id for d in versions.values()} == {uid}
    assert {v: d.status.value for v, d in versions.items()} == {"1": "superseded", "2": "approved", "3": "draft"}
    assert versions["1"].metadata["deprecation_date"] == "2024-01-01" and "Deprecation date: 2024-01-01." in versions["1"].text
    assert "Version 1 of int_model_5; the latest version is 2." in versions["1"].text
    # a group owner known only by e-mail is named by its group; the address is never copied (pii_allowed false)
    report = docs["model.dbt_project_evaluator_integration_tests.report_2"]
    assert "Owner: group my_awesome_group" in report.text and report.metadata["owner"] == "group my_awesome_group"
    assert "Access: public." in report.text
    rendered = json.dumps([d.model_dump(mode="json") for d in docs.values()])
    assert "thegoat@jaffleshop.com" not in rendered and "proserv@dbt.com" not in rendered
    exposure = docs["exposure.dbt_project_evaluator_integration_tests.exposure_1"]
    assert exposure.kind == "exposure" and "Owned by dave's davey." in exposure.text


def test_grain_and_key_from_semantic_entity_constraints_and_tests(bundle):
    docs = {d.doc_id: d for d in documents_from_bundle(bundle(SEMANTIC), default_roles=ROLES)}
    orders = docs["model.jaffle_shop.orders"]
    assert orders.metadata["grain"] == "one row per order_id (the primary entity of semantic model orders)"
    assert orders.metadata["primary_key"] == ["order_id"]
    assert "order_total (DECIMAL(16,2)): The total amount of the order in USD including tax" in orders.text
    duck = {d.doc_id: d for d in documents_from_bundle(bundle("jaffle-shop-duckdb"), default_roles=ROLES)}
    customers = duck["model.jaffle_shop.customers"]   # no semantic model: its unique + not_null tests
    assert customers.metadata["primary_key"] == ["customer_id"]
    assert "Grain: one row per customer_id (from its unique and not_null tests)." in customers.text
    state = {d.doc_id: d for d in documents_from_bundle(bundle("dbt-core-state-v12"), default_roles=ROLES)}
    assert state["snapshot.test.snapshot_seed"].metadata["primary_key"] == ["id"]


def test_a_folder_says_which_artifacts_it_lacks_and_still_renders(tmp_path, external_dir):
    for name in ("manifest.json", "run_results.json"):
        shutil.copy(external_dir / "jaffle-shop-duckdb" / name, tmp_path / name)
    (tmp_path / "private").mkdir()
    (tmp_path / "private" / "catalog.parquet").write_bytes(b"PAR1")
    b = read_artifacts(tmp_path)
    assert set(b.missing) == {"catalog", "sources", "semantic_manifest"}
    assert "the Parquet found in its place is not supported" in b.missing["catalog"]
    assert "no source freshness snapshot" in b.missing["sources"]
    docs = documents_from_bundle(b, default_roles=ROLES)
    assert len(docs) == 8 and not any(d.kind == "freshness_snapshot" for d in docs)
