"""What runs on the clock: the nightly full path, and the automation that
re-evaluates the time-dependent index checks every 10 minutes."""

import dagster as dg

from assets import MAIN_JOB
from assets.index import ops_asset_checks
from resources.warehouse import DB_TAGS
from sensors.common import TRIGGER_TAG

NIGHTLY_SCHEDULE = "canon_nightly"
NIGHTLY_CRON = "0 2 * * *"
CHECKS_AUTOMATION = "canon_checks_automation"

nightly_schedule = dg.ScheduleDefinition(
    name=NIGHTLY_SCHEDULE, cron_schedule=NIGHTLY_CRON, execution_timezone="UTC", job_name=MAIN_JOB,
    default_status=dg.DefaultScheduleStatus.RUNNING, tags={**DB_TAGS, TRIGGER_TAG: NIGHTLY_SCHEDULE},
    description="Every night at 02:00 UTC, the full path: raw loaders → dbt build → artifacts → registry "
                "→ definitions → index → eval gate, with every check.",
)

checks_automation = dg.AutomationConditionSensorDefinition(
    CHECKS_AUTOMATION, target=dg.AssetSelection.checks(*ops_asset_checks),
    default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=60, run_tags=DB_TAGS,
    description="Re-evaluates the time-dependent index checks (freshness, revocation lag, coverage, "
                "lineage) every 10 minutes while no index run is in progress.",
)
