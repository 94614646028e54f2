"""Small helpers the sensors share: the trigger tag, the in-progress guard, the
cursor, and the last time an asset was materialized."""

import datetime as dt
import json
from typing import Any, Optional

import dagster as dg

TRIGGER_TAG = "canon/trigger"

_IN_PROGRESS = [
    dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING,
]
# A run "in progress" for longer than this is a leftover of a killed process
# (in-process `make run` runs are not monitored); it no longer holds anyone back.
STALE_RUN_AFTER = dt.timedelta(hours=2)


def run_in_progress(instance: dg.DagsterInstance) -> Optional[str]:
    """A short description of a recent run that is queued or running, or None."""
    now = dt.datetime.now(dt.timezone.utc)
    for rec in instance.get_run_records(filters=dg.RunsFilter(statuses=_IN_PROGRESS), limit=20):
        created = rec.create_timestamp
        if created.tzinfo is None:
            created = created.replace(tzinfo=dt.timezone.utc)
        if now - created > STALE_RUN_AFTER:
            continue
        run = rec.dagster_run
        return f"run {run.run_id[:8]} ({run.job_name}, {run.status.value.lower()})"
    return None


def last_materialization(instance: dg.DagsterInstance, key: dg.AssetKey):
    """(timestamp, metadata) of the asset's latest materialization, or (None, {})."""
    event = instance.get_latest_materialization_event(key)
    if event is None or event.asset_materialization is None:
        return None, {}
    meta = {k: getattr(v, "value", v) for k, v in event.asset_materialization.metadata.items()}
    return event.timestamp, meta


def read_cursor(context: dg.SensorEvaluationContext) -> Optional[dict[str, Any]]:
    if not context.cursor:
        return None
    try:
        data = json.loads(context.cursor)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def write_cursor(context: dg.SensorEvaluationContext, data: dict[str, Any]) -> None:
    context.update_cursor(json.dumps(data, sort_keys=True, separators=(",", ":")))


def utc_iso(ts: Optional[float] = None) -> str:
    t = dt.datetime.fromtimestamp(ts, dt.timezone.utc) if ts is not None else dt.datetime.now(dt.timezone.utc)
    return t.isoformat(timespec="milliseconds").replace("+00:00", "Z")

