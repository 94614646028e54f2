"""dbt 2.0 artifacts and folders that lack an artifact (canon/sources/dbt/artifacts.py,
canon/sources/dbt/parquet_catalog.py): every absent optional file is read around and named with
what its absence costs, in the bundle, in `canon doctor` and in the build summary; a manifest
schema Canon does not read is a clear error naming the file and the version, never a traceback.

No dbt 2.0 target folder is vendored here (none with a Parquet catalog is published under a
license we could vendor, and dbt 2.0 is not installed), so the Parquet catalog is written by the
test from the schema dbt 2.0's own writer declares (dbt-labs/dbt-core,
crates/dbt-metadata-parquet/src/catalog_columns.rs: `target/metadata/catalog/columns/v1_<epoch>
.parquet`, columns unique_id, column_name, column_index int32, catalog_type, catalog_comment,
ingested_at timestamp[us, UTC]; and crates/dbt-index-core/src/parquet.rs for
`target/index/dbt.node_columns.parquet`), filled with the column types of a real catalog.json of
the vendored sets, so that reading it must give what reading that catalog.json gives."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from canon.core.errors import CanonInputError
from canon.core.settings import ENV_CONFIG, ENV_KEYS
from canon.sources.dbt.artifacts import read_artifacts
from canon.sources.dbt.documents import documents_from_bundle
from canon.sources.dbt.run_artifacts import read_catalog

CANON = str(Path(sys.executable).with_name("canon"))
ROLES = ("analyst",)
EVALUATOR = "dbt-project-evaluator"   # all five artifacts, metrics and a semantic model
COSMOS = "cosmos-altered-jaffle-shop"  # the set with a real sources.json result
OPTIONAL = ("semantic_manifest", "catalog", "sources", "run_results")

CATALOG_COLUMNS = pa.schema([
    pa.field("unique_id", pa.string(), nullable=False),
    pa.field("column_name", pa.string(), nullable=False),
    pa.field("column_index", pa.int32(), nullable=False),
    pa.field("catalog_type", pa.string()),
    pa.field("catalog_comment", pa.string()),
    pa.field("ingested_at", pa.timestamp("us", tz="UTC"), nullable=False),
])


def _copy(external_dir: Path, name: str, dest: Path, *, without: tuple[str, ...] = ()) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for f in (external_dir / name).iterdir():
        if f.name.removesuffix(".json") not in without:
            shutil.copy(f, dest / f.name)
    return dest


def _rows_from_catalog(catalog_json: Path, at: dt.datetime) -> list[dict]:
    doc = json.loads(catalog_json.read_text())
    rows = []
    for section in ("nodes", "sources"):
        for uid, entry in doc[section].items():
            for col in entry["columns"].values():
                rows.append({"unique_id": uid, "column_name": col["name"], "column_index": int(col["index"]),
                             "catalog_type": col["type"], "catalog_comment": col.get("comment"), "ingested_at": at})
    return rows


def _write_epoch(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=CATALOG_COLUMNS), path, compression="zstd")
    return path


def _dbt2_folder(external_dir: Path, tmp_path: Path, name: str = EVALUATOR) -> tuple[Path, Path]:
    """A copy of a set as dbt 2.0's `dbt build` leaves it: no catalog.json, the catalog in Parquet."""
    target = _copy(external_dir, name, tmp_path / "target", without=("catalog",))
    epoch = _write_epoch(target / "metadata" / "catalog" / "columns" / "v1_0.parquet",
                         _rows_from_catalog(external_dir / name / "catalog.json", dt.datetime(2026, 11, 1, tzinfo=dt.UTC)))
    return target, epoch


def _columns(bundle) -> dict[str, str]:
    return dict(zip(bundle.nodes.column("unique_id").to_pylist(), bundle.nodes.column("columns_json").to_pylist()))


def test_a_parquet_catalog_gives_what_catalog_json_gives(external_dir, tmp_path):
    target, epoch = _dbt2_folder(external_dir, tmp_path)
    with_json = read_artifacts(external_dir / EVALUATOR)
    dbt2 = read_artifacts(target)
    assert "catalog" not in dbt2.missing and dbt2.files["catalog"] == str(epoch)
    assert _columns(dbt2) == _columns(with_json)   # every node's columns and types, in column order
    typed = json.loads(_columns(dbt2)["model.dbt_project_evaluator_integration_tests.fct_model_6"])
    assert typed and all(c.get("data_type") for c in typed)
    texts = {d.doc_id: d.text for d in documents_from_bundle(dbt2, default_roles=ROLES)}
    assert texts == {d.doc_id: d.text for d in documents_from_bundle(with_json, default_roles=ROLES)}


def test_the_latest_epoch_of_a_node_wins(external_dir, tmp_path):
    target, _ = _dbt2_folder(external_dir, tmp_path)
    uid = "model.dbt_project_evaluator_integration_tests.fct_model_6"
    first = read_catalog(external_dir / EVALUATOR / "catalog.json")[uid]
    name = next(iter(first.values()))[0]
    # a later delta run re-fetched one node: its newer rows replace all of that node's older ones
    _write_epoch(target / "metadata" / "catalog" / "columns" / "v1_1.parquet", [
        {"unique_id": uid, "column_name": name, "column_index": 1, "catalog_type": "HUGEINT",
         "catalog_comment": None, "ingested_at": dt.datetime(2026, 11, 2, tzinfo=dt.UTC)}])
    cols = json.loads(_columns(read_artifacts(target))[uid])
    assert [(c["name"], c["data_type"]) for c in cols] == [(name, "HUGEINT")]
    assert next(iter(first.values()))[1] != "HUGEINT"


def test_the_resolved_index_table_is_read_too(external_dir, tmp_path):
    target = _copy(external_dir, "jaffle-shop-duckdb", tmp_path / "target", without=("catalog",))
    rows = _rows_from_catalog(external_dir / "jaffle-shop-duckdb" / "catalog.json", dt.datetime(2026, 11, 1, tzinfo=dt.UTC))
    index = [{"unique_id": r["unique_id"], "column_name": r["column_name"], "column_index": r["column_index"],
              "declared_type": None, "inferred_type": None, "catalog_type": r["catalog_type"],
              "data_type": r["catalog_type"], "ingested_at": r["ingested_at"]} for r in rows]
    (target / "index").mkdir()
    pq.write_table(pa.Table.from_pylist(index), target / "index" / "dbt.node_columns.parquet")
    assert _columns(read_artifacts(target)) == _columns(read_artifacts(external_dir / "jaffle-shop-duckdb"))


def test_parquet_canon_does_not_know_is_named_as_unsupported(external_dir, tmp_path):
    target = _copy(external_dir, "jaffle-shop-duckdb", tmp_path / "target", without=("catalog",))
    _write_epoch(target / "metadata" / "catalog" / "columns" / "v2_0.parquet", [])
    (target / "private").mkdir()
    pq.write_table(pa.table({"node": ["a"], "payload": ["b"]}), target / "private" / "state.parquet")
    (target / "private" / "catalog.parquet").write_bytes(b"PAR1")   # not Parquet at all
    b = read_artifacts(target)
    why = b.missing["catalog"]
    assert "catalog.json is absent and the Parquet found in its place is not supported" in why
    assert "v2_0.parquet: catalog schema v2" in why and "state.parquet: not a column catalog" in why
    assert "catalog.parquet: cannot read the Parquet catalog" in why
    assert "column types are only those the manifest declares" in why
    assert len(documents_from_bundle(b, default_roles=ROLES)) == 8


def test_a_corrupt_parquet_catalog_is_an_error_naming_it(external_dir, tmp_path):
    target = _copy(external_dir, "jaffle-shop-duckdb", tmp_path / "target", without=("catalog",))
    bad = target / "metadata" / "catalog" / "columns" / "v1_0.parquet"
    bad.parent.mkdir(parents=True)
    bad.write_bytes(b"PAR1 truncated")
    with pytest.raises(CanonInputError) as exc:
        read_artifacts(target)
    assert exc.value.path == str(bad) and "cannot read the Parquet catalog" in exc.value.reason


@pytest.mark.parametrize("kind", OPTIONAL)
def test_a_folder_without_one_artifact_loads_and_says_what_it_lacks(external_dir, tmp_path, kind):
    name = COSMOS if kind == "sources" else EVALUATOR
    full = read_artifacts(external_dir / name)
    assert full.missing == {}
    b = read_artifacts(_copy(external_dir, name, tmp_path / "t", without=(kind,)))
    assert list(b.missing) == [kind] and f"{kind}.json is absent" in b.missing[kind]
    assert b.nodes.num_rows == full.nodes.num_rows and b.edges.num_rows > 0
    docs = {d.doc_id: d for d in documents_from_bundle(b, default_roles=ROLES)}
    kinds = {d.kind for d in docs.values()}
    if kind == "semantic_manifest":   # the manifest's own metrics and semantic models still render
        assert b.semantic is None and "metric_definition" in kinds
        assert {uid for uid in docs if uid.startswith("metric.")} == {
            d.doc_id for d in documents_from_bundle(full, default_roles=ROLES) if d.doc_id.startswith("metric.")}
    elif kind == "catalog":   # only declared column types are left
        assert _columns(b) != _columns(full)
    elif kind == "sources":
        assert b.freshness == [] and full.freshness and "freshness_snapshot" not in kinds
    else:
        assert b.run_results.num_rows == 0 and full.run_results.num_rows > 0


def _canon(*args: str, cwd: Path, config: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in (ENV_CONFIG, *ENV_KEYS, "DAGSTER_HOME")}
    env.update({ENV_CONFIG: str(config), "CANON_EMBEDDER": "hashing"})
    return subprocess.run([CANON, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=900)


def test_doctor_lists_what_is_missing_and_the_parquet_catalog(external_dir, tmp_path):
    target, epoch = _dbt2_folder(external_dir, tmp_path)
    for f in ("semantic_manifest.json", "sources.json", "run_results.json"):
        (target / f).unlink()
    config = tmp_path / "canon.yml"
    config.write_text(f"dbt: {{artifacts_dir: {target}}}\ndefault_roles: [analyst]\n")
    out = _canon("doctor", cwd=tmp_path, config=config)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert f"dbt catalog    from the Parquet dbt 2.0 writes: {epoch}" in lines
    missing = [line for line in lines if line.startswith("dbt missing    ")]
    assert len(missing) == 3 and any("semantic_manifest.json is absent" in m for m in missing)
    assert any("sources.json is absent: no source freshness snapshot" in m for m in missing)
    assert any("run_results.json is absent: no run statuses" in m for m in missing)
    report = json.loads(_canon("doctor", "--json", cwd=tmp_path, config=config).stdout)
    assert set(report["dbt"]["missing"]) == {"semantic_manifest", "sources", "run_results"}
    assert report["dbt"]["catalog_parquet"] == str(epoch) and report["problems"] == []


def test_an_unknown_manifest_schema_is_named_by_doctor_and_build(external_dir, tmp_path):
    target = _copy(external_dir, "jaffle-shop-duckdb", tmp_path / "target")
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["metadata"]["dbt_schema_version"] = "https://schemas.getdbt.com/dbt/manifest/v20.json"
    (target / "manifest.json").write_text(json.dumps(manifest))
    config = tmp_path / "canon.yml"
    config.write_text(f"home: state\ndbt: {{artifacts_dir: {target}}}\ndefault_roles: [analyst]\n")
    expected = (f"{target / 'manifest.json'} [metadata.dbt_schema_version]: unsupported manifest schema version v20 "
                "(https://schemas.getdbt.com/dbt/manifest/v20.json); Canon reads v5..v12")
    doctor = _canon("doctor", cwd=tmp_path, config=config)
    assert doctor.returncode == 2 and f"  ✗ {expected}" in doctor.stdout.splitlines()
    build = _canon("build", cwd=tmp_path, config=config)
    assert build.returncode == 1 and "Traceback" not in build.stdout + build.stderr
    assert any(line.startswith("  ✗ step dbt_artifact_tables: ") and expected in line
               for line in build.stdout.splitlines()), build.stdout


def test_build_on_a_manifest_alone_says_what_it_lacks(external_dir, tmp_path):
    """`canon build` in artifacts mode on a folder holding only manifest.json (about 30 s): it
    builds, renders the manifest's own metrics, and its summary names each absent artifact."""
    target = _copy(external_dir, EVALUATOR, tmp_path / "target", without=OPTIONAL)
    config = tmp_path / "canon.yml"
    config.write_text(f"home: state\ndbt: {{artifacts_dir: {target}}}\ndefault_roles: [analyst]\n")
    out = _canon("build", cwd=tmp_path, config=config)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    lines = out.stdout.splitlines()
    missing = [line.removeprefix("dbt missing    ") for line in lines if line.startswith("dbt missing    ")]
    assert sorted(m.split(" ", 1)[0] for m in missing) == ["catalog.json", "run_results.json",
                                                           "semantic_manifest.json", "sources.json"]
    registry = next(line for line in lines if line.startswith("registry       "))
    assert "metric_definition" in registry and "freshness_snapshot" not in registry
