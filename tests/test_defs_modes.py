"""The code location in a team's configuration (CANON_CONFIG): in project mode
the team's dbt project is the asset graph (parsed into the home, never inside
the project) and its sensor watches that project; in artifacts mode there are
no dbt assets, no dbt resource and no `dbt parse` at load, and the artifacts
sensor watches dbt.artifacts_dir. Neither has the demo's raw loaders or its
release gate. tests/test_defs.py holds the demo configuration."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

import definitions
from canon.core.settings import ENV_CONFIG, ENV_KEYS
from resources import dbt as dbt_resource
from resources.paths import paths_from_env

ROOT = Path(__file__).resolve().parents[1]
CANON_TABLES = {"canon/dbt_nodes", "canon/lineage_edges", "canon/source_freshness", "canon/evidence_registry",
                "canon/definitions", "canon/knowledge_index"}
COMMON_JOBS = {"canon_main", "canon_documents_job", "canon_policy_job", "canon_artifacts_job", "canon_forget",
               "canon_migrate", "canon_rollback"}


def _load(config: Path):
    mp = pytest.MonkeyPatch()
    for var in (ENV_CONFIG, *ENV_KEYS):
        mp.delenv(var, raising=False)
    mp.setenv(ENV_CONFIG, str(config))
    dbt_resource.dbt_project.cache_clear()
    return mp, definitions.build_definitions()


def _selected(defs, job: str) -> set[str]:
    return {k.to_user_string() for k in defs.resolve_job_def(job).asset_layer.selected_asset_keys}


def _tick(sensor, instance, cursor=None):
    data = sensor.evaluate_tick(dg.build_sensor_context(instance=instance, cursor=cursor))
    return data.run_requests or [], data.cursor if data.cursor is not None else cursor


@pytest.fixture(scope="module")
def project_mode(tmp_path_factory):
    root = tmp_path_factory.mktemp("team")
    shutil.copytree(ROOT / "dbt_project", root / "shop", ignore=shutil.ignore_patterns("target", "logs"))
    (root / "docs").mkdir()
    shutil.copy(ROOT / "knowledge" / "policy.yml", root / "docs" / "policy.yml")
    config = root / "canon.yml"
    config.write_text("home: state\ndbt: {project_dir: shop}\ndocuments: [docs]\ndefault_roles: [analyst]\n")
    mp, defs = _load(config)
    try:
        yield root, defs
    finally:
        mp.undo()
        dbt_resource.dbt_project.cache_clear()


def test_project_mode_is_the_teams_dbt_project(project_mode):
    root, defs = project_mode
    repo = defs.get_repository_def()
    assert set(repo.job_names) - {"__ASSET_JOB"} == COMMON_JOBS | {"canon_dbt_job"}
    main = _selected(defs, "canon_main")
    assert "fct_revenue_v2" in main and any(k.endswith("stg_commerce__order_lines") for k in main)
    assert CANON_TABLES <= main
    assert "fct_revenue_v2" in _selected(defs, "canon_dbt_job") and CANON_TABLES <= _selected(defs, "canon_dbt_job")
    # No raw loaders and no demo release gate: the team's sources are dbt's, built elsewhere.
    assert not any(k.startswith("raw/") for k in main) and "canon/eval_report" not in main
    assert set(repo.get_top_level_resources()) == {"paths", "dbt", "canon_db", "lineage", "embedder"}
    assert Path(defs.resources["dbt"].project_dir) == root / "shop"
    checks = {k.name for k in repo.asset_graph.asset_check_keys}
    assert "source_freshness" in checks and "recall_at_3" not in checks
    # dbt parsed into the configured home, and wrote nothing into the team's project.
    assert (root / "state" / "dbt_target" / "manifest.json").is_file()
    assert (root / "state" / "dbt_logs").is_dir()
    assert not (root / "shop" / "target").exists() and not (root / "shop" / "logs").exists()


def test_project_mode_sensors_watch_the_teams_folders(project_mode):
    root, defs = project_mode
    repo = defs.get_repository_def()
    assert {s.name for s in repo.sensor_defs} >= {"canon_dbt_project_sensor", "canon_documents_sensor",
                                                  "canon_dbt_artifacts_sensor"}
    with dg.instance_for_test() as instance:
        sensor = defs.resolve_sensor_def("canon_dbt_project_sensor")
        _, cursor = _tick(sensor, instance)
        assert _tick(sensor, instance, cursor)[0] == []
        model = root / "shop" / "models" / "marts" / "fct_revenue_v2.sql"
        model.write_text(model.read_text() + "\n-- a team's edit\n")
        [request], _ = _tick(sensor, instance, cursor)
        assert "models/marts/fct_revenue_v2.sql" in request.tags["canon/change"]
        docs = defs.resolve_sensor_def("canon_documents_sensor")
        _, cursor = _tick(docs, instance)
        (root / "docs" / "page.md").write_text("---\ndoc_id: x\n---\nbody\n")
        [request], _ = _tick(docs, instance, cursor)
        assert "page.md" in request.tags["canon/change"]


@pytest.fixture()
def artifacts_mode(external_dir, tmp_path, monkeypatch):
    parses = []
    monkeypatch.setattr(dbt_resource, "parse_manifest", lambda project, paths: parses.append(paths))
    artifacts = tmp_path / "ci_target"
    shutil.copytree(external_dir / "jaffle-shop-duckdb", artifacts)
    config = tmp_path / "canon.yml"
    config.write_text(f"dbt: {{artifacts_dir: {artifacts.name}}}\ndefault_roles: [analyst]\n")
    mp, defs = _load(config)
    try:
        yield tmp_path, artifacts, defs, parses
    finally:
        mp.undo()


def test_artifacts_mode_has_no_dbt_assets_and_parses_nothing(artifacts_mode):
    home, artifacts, defs, parses = artifacts_mode
    repo = defs.get_repository_def()
    assert parses == [] and not (home / "var" / "dbt_target" / "manifest.json").exists()
    assert set(repo.job_names) - {"__ASSET_JOB"} == COMMON_JOBS
    assert _selected(defs, "canon_main") == CANON_TABLES
    assert _selected(defs, "canon_artifacts_job") == CANON_TABLES
    assert set(repo.get_top_level_resources()) == {"paths", "canon_db", "lineage", "embedder"}
    assert {s.name for s in repo.sensor_defs} == {
        "canon_documents_sensor", "canon_policy_sensor", "canon_dbt_artifacts_sensor", "canon_checks_automation",
        "canon_run_failure_alert", "canon_check_alert"}
    assert defs.resources["paths"].config.env_var_name == ENV_CONFIG   # resolved when a run starts
    assert paths_from_env().canon.dbt_artifacts_dir == artifacts


def test_artifacts_mode_sensor_watches_the_configured_folder(artifacts_mode):
    _, artifacts, defs, _ = artifacts_mode
    sensor = defs.resolve_sensor_def("canon_dbt_artifacts_sensor")
    assert str(artifacts) in sensor.description
    with dg.instance_for_test() as instance:
        [request], cursor = _tick(sensor, instance)          # a set nobody ingested yet
        assert request.run_key.startswith("dbt-artifacts-")
        assert _tick(sensor, instance, cursor)[0] == []
        manifest = artifacts / "manifest.json"
        manifest.write_text(manifest.read_text().replace('"invocation_id": "', '"invocation_id": "x', 1))
        assert len(_tick(sensor, instance, cursor)[0]) == 1   # CI published a new set


def test_a_teams_release_gate_is_its_gold_sets(external_dir, tmp_path):
    (tmp_path / "target").mkdir()
    shutil.copy(external_dir / "jaffle-shop-duckdb" / "manifest.json", tmp_path / "target")
    dossier = ROOT / "tests" / "fixtures" / "dossier"
    (tmp_path / "canon.yml").write_text(
        f"dbt: {{artifacts_dir: target}}\ndefault_roles: [analyst]\n"
        f"release_gate: {{gold: [{{file: {dossier / 'gold.json'}, corpus: {dossier / 'corpus.jsonl'}}}]}}\n")
    mp, defs = _load(tmp_path / "canon.yml")
    try:
        assert "canon/eval_report" in _selected(defs, "canon_main")
        checks = {k.name for k in defs.get_repository_def().asset_graph.asset_check_keys}
        assert {"zero_permission_leaks", "recall_at_3"} <= checks
        assert [g.name for g in paths_from_env().settings.release_gate] == ["gold"]
    finally:
        mp.undo()
