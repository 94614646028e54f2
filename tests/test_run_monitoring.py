"""A killed run no longer blocks the sensors (issue 18, item 5): the committed
dagster.yaml enables run monitoring, and `run_in_progress` marks a started run
whose worker process is gone as failed instead of waiting for it for hours."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import dagster as dg
import pytest

from sensors.common import run_in_progress, run_worker_pid

ROOT = Path(__file__).resolve().parents[1]

# A real in-process run, as `make run` executes one: the op sleeps until the test kills the process.
WORKER = textwrap.dedent("""
    import time
    import dagster as dg

    @dg.op
    def sleep_long():
        time.sleep(600)

    @dg.job(tags={"canon/duckdb": "canon"})
    def long_job():
        sleep_long()

    long_job.execute_in_process(instance=dg.DagsterInstance.get())
""")


@pytest.fixture()
def instance(tmp_path, monkeypatch):
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copyfile(ROOT / "dagster.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.get() as inst:
        yield inst


def _started_run(instance: dg.DagsterInstance, timeout: float = 120) -> dg.DagsterRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        runs = instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.STARTED]))
        if runs and run_worker_pid(instance, runs[0].run_id):
            return runs[0]
        time.sleep(0.2)
    raise AssertionError("the worker's run never started")


def test_the_committed_instance_config_enables_run_monitoring(instance):
    assert instance.run_monitoring_enabled
    assert instance.run_monitoring_start_timeout_seconds <= 300   # the revocation SLA is 5 minutes


def test_a_killed_run_no_longer_blocks_the_sensors(instance, tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", WORKER], env={**os.environ}, cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        run = _started_run(instance)
        assert run_worker_pid(instance, run.run_id) == proc.pid
        # alive: the sensors wait for it
        assert run_in_progress(instance) == f"run {run.run_id[:8]} (long_job, started)"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.STARTED  # nobody noticed yet
        # gone: not waited for, and marked failed so its canon/duckdb slot is free again
        assert run_in_progress(instance) is None
        assert instance.get_run_by_id(run.run_id).status == dg.DagsterRunStatus.FAILURE
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

