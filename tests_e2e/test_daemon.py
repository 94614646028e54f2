"""End to end with the Dagster daemon (`make e2e`, ~13 min on 2 cores): from a
home built by the main job, a policy edit, a document edit and a dbt model
change each start exactly one run through their sensors. Kept out of
`make test` for its length; the sensor logic itself is covered there with
Dagster's sensor test utilities (tests/test_sensors.py)."""

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from test_webserver import BIN, free_port, graphql, stop, wait_for_location, webserver_env  # noqa: E402

DATA_JOBS = {"canon_main", "canon_documents_job", "canon_policy_job", "canon_dbt_job", "canon_artifacts_job"}
DATA_SENSORS = ("canon_documents_sensor", "canon_policy_sensor", "canon_dbt_project_sensor",
                "canon_dbt_artifacts_sensor")
SETTLE_S = 100          # longer than the slowest data sensor interval (60 s) plus a daemon loop

BOOTSTRAP = """
import dagster as dg
from assets.eval import EVAL_KEY
from definitions import MAIN_JOB, build_definitions
defs = build_definitions()
graph = defs.resolve_asset_graph()
keys = [k for k in graph.get_all_asset_keys() if graph.get(k).is_materializable and k != EVAL_KEY]
with dg.DagsterInstance.get() as instance:
    result = defs.resolve_job_def(MAIN_JOB).execute_in_process(
        instance=instance, asset_selection=keys, raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": "WARNING"}}}})
print("BOOTSTRAP", result.success)
"""

RUNS_QUERY = "{ runsOrError { ... on Runs { results { runId jobName status tags { key value } } } } }"
TICKS_QUERY = """
{ repositoriesOrError { ... on RepositoryConnection { nodes { sensors {
    name sensorState { status ticks(limit: 1) { status skipReason } } } } } } }
"""


def _copy_repo(dst: Path) -> None:
    shutil.copytree(ROOT, dst, ignore=shutil.ignore_patterns(
        ".venv", "var", ".git", "bench", "target", "logs", "__pycache__", "img", ".pytest_cache"))


def _runs(port: int) -> list[dict]:
    return graphql(port, RUNS_QUERY)["data"]["runsOrError"]["results"]


def _wait(predicate, timeout: float, what: str, every: float = 3.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")


def _change_starts_one_run(port: int, apply, job: str, timeout: float = 420) -> dict:
    before = {r["runId"] for r in _runs(port)}
    apply()
    changed_at = time.monotonic()

    def finished():
        new = [r for r in _runs(port) if r["runId"] not in before and r["jobName"] == job]
        if any(r["status"] in ("FAILURE", "CANCELED") for r in new):
            pytest.fail(f"{job} run failed: {new}")
        return [r for r in new if r["status"] == "SUCCESS"]

    done = _wait(finished, timeout, f"a successful {job} run")
    took = time.monotonic() - changed_at
    time.sleep(SETTLE_S)   # give every data sensor more ticks: no second run may start
    new = [r for r in _runs(port) if r["runId"] not in before and r["jobName"] in DATA_JOBS]
    assert [r["jobName"] for r in new] == [job], new
    tags = {t["key"]: t["value"] for t in done[0]["tags"]}
    return {"job": job, "run_key": tags.get("dagster/run_key"), "seconds_to_success": round(took, 1)}


def test_daemon_each_change_starts_exactly_one_run(tmp_path):
    repo, home = tmp_path / "repo", tmp_path / "home"
    _copy_repo(repo)   # the dbt model edit must not touch this checkout
    env = {**webserver_env(tmp_path), "CANON_HOME": str(home), "DAGSTER_HOME": str(tmp_path / "dagster"),
           "PYTHONPATH": str(repo)}
    env.pop("CANON_CORPUS", None)
    boot = subprocess.run([sys.executable, "-c", BOOTSTRAP], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=900)
    assert "BOOTSTRAP True" in boot.stdout, boot.stdout[-2000:] + boot.stderr[-3000:]

    port = free_port()
    log = open(tmp_path / "dagster_dev.log", "wb")
    proc = subprocess.Popen([str(BIN / "dagster"), "dev", "-w", str(repo / "workspace.yaml"), "-h", "127.0.0.1",
                             "-p", str(port)], cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    report = {}
    try:
        wait_for_location(port, proc, tmp_path / "dagster_dev.log")

        def first_ticks():
            nodes = graphql(port, TICKS_QUERY)["data"]["repositoriesOrError"]["nodes"]
            sensors = {s["name"]: s["sensorState"]["ticks"] for n in nodes for s in n["sensors"]}
            done = all(sensors.get(n) and sensors[n][0]["status"] != "STARTED" for n in DATA_SENSORS)
            return sensors if done else None

        ticks = _wait(first_ticks, 180, "the first tick of every data sensor")
        # `make run` then `make ui`: the first ticks record baselines and start nothing.
        first = {n: ticks[n][0] for n in DATA_SENSORS}
        assert all(t["status"] == "SKIPPED" for t in first.values()), first
        assert not [r for r in _runs(port) if r["jobName"] in DATA_JOBS - {"canon_main"}]

        policy = repo / "knowledge" / "policy.yml"
        report["policy"] = _change_starts_one_run(port, lambda: policy.write_text(
            'revision: "e2e-revoke"\nrevoke:\n  - role: finance_controller\n    object_id: "memo.finance.*"\n'),
            "canon_policy_job")
        doc = repo / "knowledge" / "runbooks" / "month_end_revenue_close.md"
        report["documents"] = _change_starts_one_run(
            port, lambda: doc.write_text(doc.read_text() + "\nEnd-to-end edit: one more checklist line.\n"),
            "canon_documents_job")
        model = repo / "dbt_project" / "models" / "marts" / "fct_revenue_v2.sql"
        report["dbt"] = _change_starts_one_run(
            port, lambda: model.write_text(model.read_text() + "\n-- end-to-end: a model change\n"), "canon_dbt_job")
    finally:
        stop(proc)

    from canon.ops import checks as ops_checks
    from canon.registry import store as registry

    con = registry.connect(home / "canon.duckdb", read_only=True)
    try:
        lags = {r["policy_revision"]: r for r in ops_checks.policy_lags(con)}
    finally:
        con.close()
    report["revocation_lag_seconds"] = lags["e2e-revoke"]["lag_seconds"]
    assert lags["e2e-revoke"]["status"] == "reflected" and lags["e2e-revoke"]["seen_by"] == "policy_sensor"
    print("E2E", json.dumps(report))
