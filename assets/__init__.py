"""Dagster assets by domain, each module with its asset checks and the jobs
that select them: demo_raw (raw loaders), dbt (dbt build, its artifacts as
tables), registry (evidence registry, effective-time definitions), index,
eval (the release gate), lifecycle (forget, migrate, rollback). Thin: the
work is done by canon.*. The main job selects every asset the configuration
has (definitions.py leaves out what its mode does not: the raw loaders
outside the demo, dbt's assets in artifacts mode, the eval report without
release gold sets)."""

import dagster as dg

from resources.warehouse import DB_TAGS

MAIN_JOB = "canon_main"

_PATHS = {
    "demo": "Raw loaders → dbt build → artifacts → registry → definitions → index → eval.",
    "project": "The team's dbt build → artifacts → registry → definitions → index",
    "artifacts": "dbt artifacts published elsewhere → registry → definitions → index",
    "documents": "The team's documents (no dbt) → registry → definitions → index",
}


def build_main_job(mode: str = "demo", *, release_gate: bool = True):
    """The job that materializes every asset of the code location, in order."""
    description = _PATHS[mode]
    if mode != "demo":
        description += " → eval." if release_gate else " (no release gate configured)."
    return dg.define_asset_job(MAIN_JOB, selection=dg.AssetSelection.all(), tags=DB_TAGS, description=description)


main_job = build_main_job()
