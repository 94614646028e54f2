"""The code location loads (a real load: the dbt manifest is produced into a
temporary CANON_HOME) and holds the jobs, sensors, schedules, checks and asset
keys users and the other tests rely on; a second load does not parse again."""

import os
from pathlib import Path

import dagster as dg
import pytest
import yaml

import definitions
from canon.core.config import CanonPaths
from canon_run import DAGSTER_YAML, ensure_dagster_yaml
from resources import dbt as dbt_resource
from resources.paths import DEFAULT_CORPUS, paths_from_env
from resources.warehouse import DB_TAG_KEY

JOBS = {"canon_main", "canon_documents_job", "canon_policy_job", "canon_dbt_job", "canon_artifacts_job",
        "canon_forget", "canon_migrate", "canon_rollback"}
SENSORS = {"canon_documents_sensor", "canon_policy_sensor", "canon_dbt_project_sensor", "canon_dbt_artifacts_sensor",
           "canon_checks_automation", "canon_run_failure_alert", "canon_check_alert"}
CANON_ASSETS = {"canon/dbt_nodes", "canon/lineage_edges", "canon/source_freshness", "canon/evidence_registry",
                "canon/definitions", "canon/knowledge_index", "canon/eval_report"}
RAW = {"raw/commerce/order_lines", "raw/commerce/refunds", "raw/billing/credit_notes", "raw/finance/fx_daily"}


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    home = tmp_path_factory.mktemp("canon_home")
    mp = pytest.MonkeyPatch()
    mp.setenv("CANON_HOME", str(home))
    try:
        yield home, definitions.build_definitions()
    finally:
        mp.undo()


def test_the_code_location_is_lazy_and_loads(loaded):
    _, defs = loaded
    assert type(definitions.defs).__name__ == "LazyDefinitions"   # built at load, not at import
    assert definitions.MAIN_JOB == "canon_main"
    repo = defs.get_repository_def()
    assert set(repo.job_names) >= JOBS
    assert {s.name for s in repo.sensor_defs} == SENSORS
    assert all(s.default_status == dg.DefaultSensorStatus.RUNNING for s in repo.sensor_defs)
    [nightly] = repo.schedule_defs
    assert (nightly.name, nightly.cron_schedule, nightly.job_name) == ("canon_nightly", "0 2 * * *", "canon_main")
    assert set(repo.get_top_level_resources()) == {"paths", "dbt", "canon_db", "raw_db", "lineage", "embedder"}


def test_asset_keys_checks_and_job_selections(loaded):
    _, defs = loaded
    graph = defs.get_repository_def().asset_graph
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert CANON_ASSETS | RAW <= keys
    assert {"fct_revenue_v1", "fct_revenue_v2", "fct_revenue_v3"} <= keys
    checks = {f"{k.asset_key.to_user_string()}:{k.name}" for k in graph.asset_check_keys}
    assert {f"{r}:source_freshness" for r in RAW} <= checks
    assert {"canon/evidence_registry:quarantine_age", "canon/definitions:no_overlapping_approved_revisions",
            "canon/definitions:supersedes_consistent",
            "canon/knowledge_index:revocation_lag", "canon/knowledge_index:index_coverage",
            "canon/eval_report:zero_permission_leaks", "canon/eval_report:recall_at_3"} <= checks

    def selected(job):
        return {k.to_user_string() for k in defs.resolve_job_def(job).asset_layer.selected_asset_keys}

    assert selected("canon_main") == keys
    assert selected("canon_documents_job") == {"canon/evidence_registry", "canon/definitions", "canon/knowledge_index"}
    assert selected("canon_policy_job") == {"canon/knowledge_index"}
    assert "canon/eval_report" not in selected("canon_dbt_job") | selected("canon_artifacts_job")
    assert {"fct_revenue_v2", "canon/knowledge_index"} <= selected("canon_dbt_job")
    assert selected("canon_artifacts_job") == {"canon/dbt_nodes", "canon/lineage_edges", "canon/source_freshness",
                                               "canon/evidence_registry", "canon/definitions", "canon/knowledge_index"}
    for job in JOBS:
        assert defs.resolve_job_def(job).tags.get(DB_TAG_KEY) == "canon", job


def test_the_manifest_is_made_once_and_remade_when_the_project_changes(loaded, tmp_path, monkeypatch):
    home, _ = loaded
    target = home / "dbt_target"
    assert (target / "manifest.json").exists() and (target / dbt_resource.DIGEST_FILE).exists()
    assert (home / "dbt_logs").is_dir()
    paths = CanonPaths.from_env(home)
    project = dbt_resource.dbt_project(paths)
    assert dbt_resource.manifest_is_current(project)
    parses = []
    monkeypatch.setattr(dbt_resource, "parse_manifest", lambda project, paths: parses.append(paths))
    dbt_resource.dbt_project.cache_clear()
    dbt_resource.dbt_project(paths)
    assert parses == []                       # unchanged project: no dbt parse at load
    (target / dbt_resource.DIGEST_FILE).write_text("a different project\n")
    dbt_resource.dbt_project.cache_clear()
    dbt_resource.dbt_project(paths)
    assert len(parses) == 1                   # the project's files changed since the manifest was made
    dbt_resource.dbt_project.cache_clear()


def test_the_instance_yaml_is_copied_once(tmp_path):
    settings = yaml.safe_load(DAGSTER_YAML.read_text())
    assert settings["concurrency"]["runs"]["tag_concurrency_limits"] == [{"key": DB_TAG_KEY, "limit": 1}]
    home = tmp_path / "dagster"
    assert ensure_dagster_yaml(home) is True
    assert (home / "dagster.yaml").read_text() == DAGSTER_YAML.read_text()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    assert ensure_dagster_yaml(home) is False
    assert (home / "dagster.yaml").read_text() == "telemetry:\n  enabled: false\n"


def test_resources_follow_the_environment_by_name(loaded, monkeypatch):
    _, defs = loaded
    paths = defs.resources["paths"]
    # CANON_HOME is set for the load: the resource holds the variable, resolved when a run starts.
    assert isinstance(paths.home, dg.EnvVar) and paths.home.env_var_name == "CANON_HOME"
    monkeypatch.delenv("CANON_CORPUS", raising=False)
    monkeypatch.delenv("CANON_POLICY", raising=False)
    now = paths_from_env()
    assert now.corpus_dir == DEFAULT_CORPUS.resolve() and now.policy_file == DEFAULT_CORPUS.resolve() / "policy.yml"
    monkeypatch.setenv("CANON_POLICY", os.fspath(Path("/tmp/elsewhere/policy.yml")))
    assert paths_from_env().policy_file == Path("/tmp/elsewhere/policy.yml")


def test_the_jobs_embed_with_the_embedder_the_environment_names(loaded, monkeypatch):
    """CANON_EMBEDDER (and the model/backend variables) reach the Dagster resource the
    index and eval assets embed with, as they reach `canon ask`: a run that ignored
    them would publish vectors from another model than the CLI queries with."""
    from canon.index.embedding.hashing import HashingEmbedder
    from canon.index.embedding.onnx import OnnxInt8Embedder

    _, defs = loaded
    resource = defs.resources["embedder"]
    for var in ("CANON_EMBEDDER", "CANON_EMBEDDING_MODEL", "CANON_EMBEDDING_BACKEND"):
        monkeypatch.delenv(var, raising=False)
    assert isinstance(resource.get_embedder(), OnnxInt8Embedder)
    monkeypatch.setenv("CANON_EMBEDDER", "hashing")
    assert isinstance(resource.get_embedder(), HashingEmbedder)
