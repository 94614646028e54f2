"""Dagster assets by domain, each module with its asset checks and the jobs
that select them: demo_raw (raw loaders), dbt (dbt build, its artifacts as
tables), registry (evidence registry, effective-time definitions), index,
eval (the release gate), lifecycle (forget, migrate, rollback). Thin: the
work is done by canon.*. The main job selects every asset."""

import dagster as dg

from resources.warehouse import DB_TAGS

MAIN_JOB = "canon_main"

main_job = dg.define_asset_job(
    MAIN_JOB, selection=dg.AssetSelection.all(), tags=DB_TAGS,
    description="Raw loaders → dbt build → artifacts → registry → definitions → index → eval.",
)
