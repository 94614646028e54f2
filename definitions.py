"""The Dagster code location: every asset, check, job, sensor, schedule and
resource of Canon, listed in one place.

What it holds follows the configuration (canon/core/settings.py: the file
named by CANON_CONFIG, the environment over it, the demo by default):

- demo: the raw loaders, the demo dbt project, the two demo release gold sets;
- project: the team's dbt project (dbt.project_dir) through dagster-dbt, its
  project sensor watching that folder; no raw loaders;
- artifacts: no dbt assets and no `dbt parse` at load; the artifacts sensor
  watches dbt.artifacts_dir;
- documents: the team's documents alone: no dbt assets, no artifact tables,
  no artifacts job or sensor.

The eval report and its release-gate checks exist only when gold sets are
configured (always in the demo). The definitions load lazily
(`@dg.definitions`): the dbt manifest is produced (when missing or stale,
resources/dbt.py) and read when the location loads, never at import. Values
from the environment reach the resources as `dg.EnvVar`; the dbt project and
the DuckDB files are placed under the home the location loads with."""

import dagster as dg

from assets import MAIN_JOB, build_main_job
from assets.dbt import build_dbt_definitions
from assets.demo_raw import raw_loaders
from assets.eval import eval_checks, eval_report
from assets.index import knowledge_index, ops_asset_checks, policy_job
from assets.lifecycle import forget_job, migrate_job, rollback_job
from assets.registry import (
    artifacts_job,
    build_dbt_artifact_tables,
    definitions_checks,
    documents_job,
    effective_definitions,
    evidence_registry,
    identity_takeovers,
    quarantine_age,
)
from canon.core.config import CanonPaths
from canon.core.settings import load_settings
from resources.dbt import dbt_cli_resource, dbt_project
from resources.embedder import EmbedderResource
from resources.lineage_emitter import OpenLineageResource
from resources.paths import env_or, paths_resource
from resources.warehouse import canon_db_resource, raw_db_resource
from sensors.alert_sensors import canon_check_alert, canon_run_failure_alert
from sensors.data_sensors import (
    build_dbt_artifacts_sensor,
    build_dbt_project_sensor,
    build_documents_sensor,
    build_policy_sensor,
)
from sensors.schedules import checks_automation, nightly_schedule

__all__ = ["MAIN_JOB", "build_definitions", "defs"]


def build_definitions() -> dg.Definitions:
    settings = load_settings()
    home = CanonPaths.from_env()
    gate = bool(settings.release_gate)
    # Without dbt the registry has no artifact tables upstream (documents mode).
    registry_asset = evidence_registry if settings.has_dbt else evidence_registry.map_asset_specs(
        lambda spec: spec.replace_attributes(deps=[]))
    assets: list = [registry_asset, effective_definitions, knowledge_index, *([eval_report] if gate else [])]
    checks: list = [quarantine_age, identity_takeovers, *definitions_checks, *ops_asset_checks,
                    *(eval_checks if gate else [])]
    jobs: list = [build_main_job(settings.mode, release_gate=gate), documents_job, policy_job,
                  *([artifacts_job] if settings.has_dbt else []), forget_job, migrate_job, rollback_job]
    sensors: list = [build_documents_sensor(documents_job), build_policy_sensor(policy_job)]
    resources: dict = {
        "paths": paths_resource(),
        "canon_db": canon_db_resource(home),
        "lineage": OpenLineageResource(),
        "embedder": EmbedderResource(),
    }
    if settings.runs_dbt:
        project = dbt_project(home, settings)
        dbt = build_dbt_definitions(project)
        assets += [dbt.models, build_dbt_artifact_tables(dbt.models)]
        checks.append(dbt.source_freshness)
        jobs.append(dbt.job)
        sensors += [build_dbt_project_sensor(dbt.job, project_dir=settings.dbt_project_dir),
                    build_dbt_artifacts_sensor(artifacts_job)]
        resources["dbt"] = dbt_cli_resource(project, canon_home=env_or("CANON_HOME", str(settings.home)))
    elif settings.has_dbt:
        # Artifacts mode: dbt runs elsewhere; Canon reads (and watches) the configured folder.
        assets.append(build_dbt_artifact_tables(None))
        sensors.append(build_dbt_artifacts_sensor(artifacts_job, where=str(settings.dbt_artifacts_dir)))
    if settings.is_demo:
        assets.append(raw_loaders)
        resources["raw_db"] = raw_db_resource(home)
    return dg.Definitions(
        assets=assets,
        asset_checks=checks,
        jobs=jobs,
        sensors=[*sensors, checks_automation, canon_run_failure_alert, canon_check_alert],
        schedules=[nightly_schedule],
        resources=resources,
        # One process writes each DuckDB file at a time: run steps in-process, in order.
        executor=dg.in_process_executor,
    )


@dg.definitions
def defs() -> dg.Definitions:
    return build_definitions()
