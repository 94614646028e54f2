"""Failed runs and failed asset checks reach people: both sensors post
Slack-compatible JSON to $CANON_ALERT_WEBHOOK_URL (canon.ops.alerts). Without the
variable they still run, post nothing and raise nothing.

Dagster OSS has no alert policies for asset checks (Dagster+ does), and a
failed check is not a failed op, so hooks never see it. The check alert path
is therefore a sensor over the check execution records in the instance: per
check it remembers the latest execution it has seen, posts each new failed
evaluation once, and posts a recovery when a check that failed passes again.
"""

import dagster as dg

from canon.ops import alerts
from sensors.common import read_cursor, write_cursor

RUN_FAILURE_SENSOR = "canon_run_failure_alert"
CHECK_ALERT_SENSOR = "canon_check_alert"
# AssetCheckExecutionRecordStatus values (PLANNED means queued or running).
SUCCEEDED, FAILED = "SUCCEEDED", "FAILED"


def _failure_text(context: dg.RunFailureSensorContext) -> str:
    steps = []
    for event in context.get_step_failure_events():
        err = getattr(event.event_specific_data, "error", None)
        while err is not None and err.cause is not None:   # Dagster's wrapper -> the user's exception
            err = err.cause
        msg = ((err.message if err is not None else event.message) or "").strip()
        steps.append(f"{event.step_key}: {msg.splitlines()[0] if msg else 'failed'}")
    if steps:
        return "; ".join(steps[:3])
    return (context.failure_event.message or "the run failed").strip()


@dg.run_failure_sensor(name=RUN_FAILURE_SENSOR, default_status=dg.DefaultSensorStatus.RUNNING,
                       minimum_interval_seconds=30,
                       description="Posts every failed Canon run (job, run id, failing steps, link) to "
                                   "$CANON_ALERT_WEBHOOK_URL; no URL, no post.")
def canon_run_failure_alert(context: dg.RunFailureSensorContext):
    run = context.dagster_run
    location = None
    origin = getattr(run, "remote_job_origin", None)
    if origin is not None:
        location = origin.location_name
    payload = alerts.run_failure_message(job_name=run.job_name, run_id=run.run_id, error=_failure_text(context),
                                         location=location)
    delivery = alerts.post(payload)
    context.log.info(f"run {run.run_id[:8]} failed; {delivery.describe()}")


def _scalar_metadata(evaluation) -> dict:
    out = {}
    for k, v in (evaluation.metadata or {}).items():
        value = getattr(v, "value", v)
        if isinstance(value, (str, int, float, bool)) and len(str(value)) <= 120:
            out[k] = value
    return out


@dg.sensor(name=CHECK_ALERT_SENSOR, default_status=dg.DefaultSensorStatus.RUNNING, minimum_interval_seconds=30,
           description="Posts each new failed asset-check evaluation (severity, summary, metadata, link) to "
                       "$CANON_ALERT_WEBHOOK_URL, and a recovery when the check passes again.")
def canon_check_alert(context: dg.SensorEvaluationContext):
    keys = sorted(context.repository_def.asset_graph.asset_check_keys, key=lambda k: k.to_user_string())
    latest = context.instance.event_log_storage.get_latest_asset_check_execution_by_key(keys)
    cur = read_cursor(context)
    seen = dict(cur or {})
    posted, failed_now = [], 0
    for key, rec in sorted(latest.items(), key=lambda kv: kv[1].id):
        if rec.status.value not in (SUCCEEDED, FAILED) or rec.event is None:
            continue   # planned / in progress: look again on a later tick
        name = key.to_user_string()
        prev = seen.get(name)
        seen[name] = [rec.id, rec.status.value]
        if rec.status.value == FAILED:
            failed_now += 1
        if cur is None or (prev is not None and prev[0] == rec.id):
            continue   # first tick records a baseline; an execution is reported once
        evaluation = rec.event.dagster_event.event_specific_data
        if rec.status.value == FAILED:
            payload = alerts.check_message(
                asset_key=key.asset_key.to_user_string(), check_name=key.name, passed=False,
                severity=evaluation.severity.value, run_id=rec.run_id, description=evaluation.description,
                metadata=_scalar_metadata(evaluation))
        elif prev is not None and prev[1] == FAILED:
            payload = alerts.check_message(
                asset_key=key.asset_key.to_user_string(), check_name=key.name, passed=True,
                severity=evaluation.severity.value, run_id=rec.run_id, description=evaluation.description)
        else:
            continue
        delivery = alerts.post(payload)
        posted.append(f"{name}: {delivery.describe()}")
    write_cursor(context, seen)
    if cur is None:
        return dg.SkipReason(f"baseline recorded for {len(seen)} checks ({failed_now} currently failing)")
    if posted:
        context.log.info("\n".join(posted))
        return dg.SkipReason(f"{len(posted)} alert(s): " + "; ".join(posted)[:900])
    return dg.SkipReason(f"no new check results to report ({failed_now} of {len(keys)} checks failing)")
