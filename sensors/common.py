"""Small helpers the sensors share: the trigger tag, the in-progress guard, the
cursor, and the last time an asset was materialized."""

import datetime as dt
import json
import os
from typing import Any, Optional

import dagster as dg

TRIGGER_TAG = "canon/trigger"

_IN_PROGRESS = [
    dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING,
]
# A run "in progress" for longer than this is a leftover of a killed process
# whose worker could not be checked (no recorded pid); it no longer holds anyone back.
STALE_RUN_AFTER = dt.timedelta(hours=2)
# Statuses in which a run has a worker process that emitted RUN_START.
_HAS_WORKER = (dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING)


def run_worker_pid(instance: dg.DagsterInstance, run_id: str) -> Optional[int]:
    """The pid of the process that runs `run_id`: every Dagster event records its
    process's pid, and RUN_START is emitted by the run worker (for `make run`'s
    in-process execution, the `canon_run` process itself)."""
    records = instance.get_records_for_run(
        run_id, of_type=dg.DagsterEventType.RUN_START, limit=1, ascending=False).records
    for rec in records:
        event = rec.event_log_entry.dagster_event
        if event is not None and event.pid:
            return int(event.pid)
    return None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def _worker_gone(instance: dg.DagsterInstance, run: dg.DagsterRun) -> Optional[int]:
    """The dead worker's pid when `run` is started but its worker process is gone, else None.
    The pid is checked on this host: Canon's runs are launched here (dagster.yaml,
    DefaultRunLauncher; docs/operations.md, "Killed runs")."""
    if run.status not in _HAS_WORKER:
        return None
    pid = run_worker_pid(instance, run.run_id)
    if pid is None or pid == os.getpid() or pid_alive(pid):
        return None
    return pid


def run_in_progress(instance: dg.DagsterInstance) -> Optional[str]:
    """A short description of a recent run that is queued or running, or None.

    A started run whose worker process is dead is not in progress: it is marked
    failed (as run monitoring does for the runs the daemon launched, dagster.yaml
    `run_monitoring`), which also frees its `canon/duckdb` concurrency slot, and
    nobody waits for it."""
    now = dt.datetime.now(dt.timezone.utc)
    for rec in instance.get_run_records(filters=dg.RunsFilter(statuses=_IN_PROGRESS), limit=20):
        run = rec.dagster_run
        dead = _worker_gone(instance, run)
        if dead is not None:
            instance.report_run_failed(run, message=f"canon: the run worker (pid {dead}) is gone; "
                                                    "marked failed so the sensors stop waiting for it")
            continue
        created = rec.create_timestamp
        if created.tzinfo is None:
            created = created.replace(tzinfo=dt.timezone.utc)
        if now - created > STALE_RUN_AFTER:
            continue
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

