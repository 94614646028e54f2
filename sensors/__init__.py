"""Dagster sensors and schedules: the jobs a change starts, the sensors that
start them, the nightly schedule, the automation of the time-dependent index
checks, and the alert sensors. `build_operations()` hands them to
definitions.py; docs/operations.md describes them for people."""

from dataclasses import dataclass, field


@dataclass
class Operations:
    jobs: list = field(default_factory=list)
    sensors: list = field(default_factory=list)
    schedules: list = field(default_factory=list)
    checks: list = field(default_factory=list)


def build_operations(dbt_models, *, main_job_name: str) -> Operations:
    import dagster as dg

    from assets.ops_checks import ops_asset_checks
    from sensors.alert_sensors import canon_check_alert, canon_run_failure_alert
    from sensors.common import DB_TAGS
    from sensors.data_sensors import (
        build_dbt_artifacts_sensor, build_dbt_project_sensor, build_documents_sensor, build_policy_sensor,
    )
    from sensors.jobs import ARTIFACTS_JOB, DBT_JOB, DOCUMENTS_JOB, POLICY_JOB, build_jobs
    from sensors.schedules import build_nightly_schedule

    jobs = build_jobs(dbt_models)
    checks_automation = dg.AutomationConditionSensorDefinition(
        "canon_checks_automation", target=dg.AssetSelection.checks(*ops_asset_checks),
        default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=60, run_tags=DB_TAGS,
        description="Re-evaluates the time-dependent index checks (freshness, revocation lag, coverage, "
                    "lineage) every 10 minutes while no index run is in progress.",
    )
    return Operations(
        jobs=list(jobs.values()),
        sensors=[
            build_documents_sensor(jobs[DOCUMENTS_JOB]),
            build_policy_sensor(jobs[POLICY_JOB]),
            build_dbt_project_sensor(jobs[DBT_JOB]),
            build_dbt_artifacts_sensor(jobs[ARTIFACTS_JOB]),
            checks_automation,
            canon_run_failure_alert,
            canon_check_alert,
        ],
        schedules=[build_nightly_schedule(main_job_name)],
        checks=list(ops_asset_checks),
    )
