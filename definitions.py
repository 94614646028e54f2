"""The Dagster code location. Definitions load lazily (`@dg.definitions`): the
dbt manifest is produced/read when the location loads, never at import."""

import dagster as dg

from assets.dbt_assets import build_dbt_definitions
from assets.eval import eval_checks, eval_report
from assets.index import knowledge_index
from assets.metadata import build_metadata_assets
from assets.raw_loaders import raw_loaders
from assets.registry import evidence_registry, identity_takeovers, quarantine_age
from resources.dbt import dbt_cli_resource
from resources.embedder import EmbedderResource
from resources.lineage_emitter import OpenLineageResource
from resources.warehouse import canon_db_resource, raw_db_resource
from sensors.common import DB_TAGS

MAIN_JOB = "canon_main"


def build_definitions() -> dg.Definitions:
    dbt_models, dbt_source_freshness = build_dbt_definitions()
    assets = [raw_loaders, dbt_models, evidence_registry, knowledge_index, eval_report, *build_metadata_assets(dbt_models)]
    checks = [dbt_source_freshness, quarantine_age, identity_takeovers, *eval_checks]
    jobs: list = []
    sensors: list = []
    schedules: list = []
    # -- operations (sensors, schedules, alert and freshness checks) are added below this line --
    from sensors import build_operations

    ops = build_operations(dbt_models, main_job_name=MAIN_JOB)
    checks += ops.checks
    jobs += ops.jobs
    sensors += ops.sensors
    schedules += ops.schedules
    # -- lifecycle (forget, migrate, rollback jobs) is added below this line --
    from assets.lifecycle import lifecycle_jobs

    jobs += lifecycle_jobs
    main_job = dg.define_asset_job(
        MAIN_JOB, selection=dg.AssetSelection.all(), tags=DB_TAGS,
        description="Raw loaders → dbt build → artifacts → registry → definitions → index → eval.",
    )
    return dg.Definitions(
        assets=assets,
        asset_checks=checks,
        jobs=[main_job, *jobs],
        sensors=sensors,
        schedules=schedules,
        resources={
            "dbt": dbt_cli_resource(),
            "canon_db": canon_db_resource(),
            "raw_db": raw_db_resource(),
            "lineage": OpenLineageResource(),
            "embedder": EmbedderResource(),
        },
        # One process writes each DuckDB file at a time: run steps in-process, in order.
        executor=dg.in_process_executor,
    )


@dg.definitions
def defs() -> dg.Definitions:
    return build_definitions()
