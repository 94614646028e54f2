"""The Dagster code location: every asset, check, job, sensor, schedule and
resource of Canon, listed in one place.

The definitions load lazily (`@dg.definitions`): the dbt manifest is produced
(when missing or stale, resources/dbt.py) and read when the location loads,
never at import. Values from the environment reach the resources as
`dg.EnvVar`; the dbt project and the DuckDB files are placed under the
CANON_HOME the location loads with."""

import dagster as dg

from assets import MAIN_JOB, main_job
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
from resources.dbt import dbt_cli_resource, dbt_project
from resources.embedder import EmbedderResource
from resources.lineage_emitter import OpenLineageResource
from resources.paths import DEFAULT_HOME, env_or, paths_resource
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
    home = CanonPaths.from_env()
    project = dbt_project(home)
    dbt = build_dbt_definitions(project)
    return dg.Definitions(
        assets=[
            raw_loaders,
            dbt.models,
            build_dbt_artifact_tables(dbt.models),
            evidence_registry,
            effective_definitions,
            knowledge_index,
            eval_report,
        ],
        asset_checks=[dbt.source_freshness, quarantine_age, identity_takeovers, *definitions_checks, *ops_asset_checks, *eval_checks],
        jobs=[main_job, documents_job, policy_job, dbt.job, artifacts_job, forget_job, migrate_job, rollback_job],
        sensors=[
            build_documents_sensor(documents_job),
            build_policy_sensor(policy_job),
            build_dbt_project_sensor(dbt.job),
            build_dbt_artifacts_sensor(artifacts_job),
            checks_automation,
            canon_run_failure_alert,
            canon_check_alert,
        ],
        schedules=[nightly_schedule],
        resources={
            "paths": paths_resource(),
            "dbt": dbt_cli_resource(project, canon_home=env_or("CANON_HOME", str(DEFAULT_HOME))),
            "canon_db": canon_db_resource(home),
            "raw_db": raw_db_resource(home),
            "lineage": OpenLineageResource(),
            "embedder": EmbedderResource(),
        },
        # One process writes each DuckDB file at a time: run steps in-process, in order.
        executor=dg.in_process_executor,
    )


@dg.definitions
def defs() -> dg.Definitions:
    return build_definitions()
