"""dbt artifacts become registry documents; a bad artifact never touches what
was already published."""

import json
import shutil

import pytest

from canon.core.errors import CanonInputError
from canon.registry import store as registry
from canon.sources.dbt.artifacts import read_artifacts
from canon.sources.dbt.documents import documents_from_artifacts, freshness_document
from canon.sources.dbt.tables import store_bundle


@pytest.fixture()
def bundle(external_dir):
    """`bundle(folder)`: read that third-party set (tests/fixtures/external)."""
    return lambda folder, **names: read_artifacts(external_dir / folder, **names)


def test_governed_meta_is_required_to_become_a_document(bundle):
    # A third-party project without meta.canon yields no governed documents, and that is not an error.
    b = bundle("dbt-project-evaluator")
    docs = documents_from_artifacts(b.governed, b.nodes.to_pylist(), b.edges.to_pylist(), b.freshness, revision=b.revision)
    assert [d for d in docs if d.kind == "metric_definition"] == []


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
