"""The nightly full path as a schedule."""

import dagster as dg

from sensors.common import DB_TAGS, TRIGGER_TAG

NIGHTLY_SCHEDULE = "canon_nightly"
NIGHTLY_CRON = "0 2 * * *"


def build_nightly_schedule(main_job_name: str) -> dg.ScheduleDefinition:
    return dg.ScheduleDefinition(
        name=NIGHTLY_SCHEDULE, cron_schedule=NIGHTLY_CRON, execution_timezone="UTC", job_name=main_job_name,
        default_status=dg.DefaultScheduleStatus.RUNNING, tags={**DB_TAGS, TRIGGER_TAG: NIGHTLY_SCHEDULE},
        description="Every night at 02:00 UTC, the full path: raw loaders → dbt build → artifacts → registry "
                    "→ definitions → index → eval gate, with every check.",
    )
