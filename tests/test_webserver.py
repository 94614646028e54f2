"""The Dagster UI: `dagster-webserver` on a free local port, with a tmp
DAGSTER_HOME and CANON_HOME, loads the code location with every asset, check,
sensor and schedule (asked over GraphQL, compared with the definitions).

Loading the location runs `dbt parse` into the fresh CANON_HOME (~15 s), so
the timeouts are generous; the server's process group is always killed."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from canon_run import ensure_dagster_yaml

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
LOAD_TIMEOUT_S = 240

QUERY = """
{
  workspaceOrError {
    __typename
    ... on Workspace {
      locationEntries {
        name
        loadStatus
        locationOrLoadError {
          __typename
          ... on PythonError { message }
          ... on RepositoryLocation {
            repositories {
              name
              assetNodes {
                assetKey { path }
                assetChecksOrError { __typename ... on AssetChecks { checks { name } } }
              }
              sensors { name defaultStatus sensorState { status } }
              schedules { name cronSchedule defaultStatus scheduleState { status } }
              jobs { name }
            }
          }
        }
      }
    }
  }
}
"""

EXPECTED_SCRIPT = """
import json
import shutil
from definitions import build_definitions
repo = build_definitions().get_repository_def()
graph = repo.asset_graph
print(json.dumps({
    "assets": sorted(k.to_user_string() for k in graph.get_all_asset_keys() if graph.get(k).is_materializable),
    "checks": sorted(f"{k.asset_key.to_user_string()}:{k.name}" for k in graph.asset_check_keys),
    "sensors": {s.name: s.default_status.value for s in repo.sensor_defs},
    "schedules": {s.name: s.default_status.value for s in repo.schedule_defs},
    "jobs": sorted(repo.job_names),
}))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graphql(port: int, query: str, timeout: float = 60) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", data=json.dumps({"query": query}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read())


def webserver_env(tmp_path: Path) -> dict:
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path / "dagster"), "CANON_HOME": str(tmp_path / "home"),
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "DO_NOT_TRACK": "1",
           "DBT_SEND_ANONYMOUS_USAGE_STATS": "false", "PYTHONUNBUFFERED": "1"}
    env.pop("CANON_ALERT_WEBHOOK_URL", None)
    ensure_dagster_yaml(tmp_path / "dagster")   # the instance settings docs/operations.md recommends
    return env


def start_webserver(tmp_path: Path, env: dict, port: int) -> subprocess.Popen:
    log = open(tmp_path / "webserver.log", "wb")
    return subprocess.Popen(
        [str(BIN / "dagster-webserver"), "-w", str(ROOT / "workspace.yaml"), "-h", "127.0.0.1", "-p", str(port)],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )


def stop(proc: subprocess.Popen) -> None:
    """Kill the server and the code server it spawned (its own process group)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=10)


def wait_for_location(port: int, proc: subprocess.Popen, log: Path) -> dict:
    deadline = time.monotonic() + LOAD_TIMEOUT_S
    last = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"dagster-webserver exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            data = graphql(port, QUERY)
            entries = data["data"]["workspaceOrError"]["locationEntries"]
            last = entries
            if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                return entries[0]
        except (urllib.error.URLError, ConnectionError, KeyError, TypeError, TimeoutError):
            pass
        time.sleep(2)
    pytest.fail(f"code location did not load in {LOAD_TIMEOUT_S}s: {last}\n{log.read_text()[-3000:]}")


def test_webserver_loads_every_asset_check_sensor_and_schedule(tmp_path):
    env = webserver_env(tmp_path)
    port = free_port()
    proc = start_webserver(tmp_path, env, port)
    try:
        entry = wait_for_location(port, proc, tmp_path / "webserver.log")
    finally:
        stop(proc)
    assert entry["name"] == "canon"
    loc = entry["locationOrLoadError"]
    assert loc["__typename"] == "RepositoryLocation", loc
    repo = loc["repositories"][0]

    expected = json.loads(subprocess.run([sys.executable, "-c", EXPECTED_SCRIPT], cwd=ROOT, env=env, check=True,
                                         capture_output=True, text=True, timeout=300).stdout.strip().splitlines()[-1])
    assets = sorted("/".join(n["assetKey"]["path"]) for n in repo["assetNodes"])
    checks = sorted(f"{'/'.join(n['assetKey']['path'])}:{c['name']}" for n in repo["assetNodes"]
                    if n["assetChecksOrError"]["__typename"] == "AssetChecks"
                    for c in n["assetChecksOrError"]["checks"])
    assert set(expected["assets"]) <= set(assets)
    assert checks == expected["checks"]
    sensors = {s["name"]: s for s in repo["sensors"]}
    assert set(sensors) == set(expected["sensors"])
    assert {s["name"] for s in repo["schedules"]} == set(expected["schedules"])
    assert set(expected["jobs"]) <= {j["name"] for j in repo["jobs"]}

    # What operations ships (docs/operations.md): the named pieces, running by default.
    for name in ("canon_documents_sensor", "canon_policy_sensor", "canon_dbt_project_sensor",
                 "canon_dbt_artifacts_sensor", "canon_checks_automation", "canon_run_failure_alert",
                 "canon_check_alert"):
        assert sensors[name]["defaultStatus"] == "RUNNING", name
        assert sensors[name]["sensorState"]["status"] == "RUNNING", name
    nightly = {s["name"]: s for s in repo["schedules"]}["canon_nightly"]
    assert nightly["cronSchedule"] == "0 2 * * *" and nightly["scheduleState"]["status"] == "RUNNING"
    for check in ("index_revision_fresh", "revocation_lag", "index_coverage", "lineage_integrity"):
        assert f"canon/knowledge_index:{check}" in checks
    for key in ("raw/commerce/order_lines", "canon/evidence_registry", "canon/knowledge_index",
                "canon/eval_report", "canon/definitions"):
        assert key in assets
    for job in ("canon_main", "canon_documents_job", "canon_policy_job", "canon_dbt_job", "canon_artifacts_job"):
        assert job in expected["jobs"]
