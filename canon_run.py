"""`make run`: materialize every asset of the main job headless, on the
embedded defaults (DuckDB + local LanceDB under CANON_HOME), then print a
short summary a newcomer can read.

The Dagster instance settings are the committed dagster.yaml (one
DuckDB-writing run at a time); `ensure_dagster_yaml` copies it into
DAGSTER_HOME when that has none, for `make run`, `make ui` and the tests."""

import json
import os
import shutil
import sys
import time
from pathlib import Path

import dagster as dg

from canon.ops.summary import workspace_summary
from canon.registry import store as registry
from definitions import MAIN_JOB, build_definitions
from resources.paths import paths_from_env

DAGSTER_YAML = Path(__file__).resolve().with_name("dagster.yaml")


def ensure_dagster_yaml(dagster_home) -> bool:
    """Copy dagster.yaml into `dagster_home` unless it has one; True if copied."""
    target = Path(dagster_home) / "dagster.yaml"
    if target.exists():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(DAGSTER_YAML, target)
    return True


def main() -> int:
    paths = paths_from_env().canon.ensure()
    os.environ.setdefault("DAGSTER_HOME", str(paths.dagster_home))
    ensure_dagster_yaml(os.environ["DAGSTER_HOME"])
    started = time.monotonic()
    defs = build_definitions()
    job = defs.resolve_job_def(MAIN_JOB)
    with dg.DagsterInstance.get() as instance:
        result = job.execute_in_process(
            instance=instance, raise_on_error=False,
            # Step-level progress at INFO; the per-event DEBUG stream lives in the Dagster UI.
            run_config={"loggers": {"console": {"config": {"log_level": "INFO"}}}},
        )
    elapsed = time.monotonic() - started
    _print_summary(paths, result, elapsed)
    return 0 if result.success else 1


def _print_summary(paths, result, elapsed: float) -> None:
    steps = result.get_step_success_events()
    failed = result.get_step_failure_events()
    checks = [e for e in result.all_events if e.event_type_value == "ASSET_CHECK_EVALUATION"]
    passed = sum(1 for e in checks if e.event_specific_data.passed)
    print()
    print(f"Canon main job {'succeeded' if result.success else 'FAILED'} in {elapsed:.0f} s "
          f"(run {result.run_id[:8]}, {len(steps)} steps ok, {len(failed)} failed)")
    print(f"asset checks   {passed}/{len(checks)} passed")
    for e in checks:
        data = e.event_specific_data
        if not data.passed:
            print(f"  ✗ {data.asset_key.to_user_string()} · {data.check_name}")
    for e in failed:
        print(f"  ✗ step {e.step_key}: {e.event_specific_data.error.message.strip()[:300]}")
    con = registry.connect(paths.canon_db, read_only=True)
    try:
        for line in workspace_summary(con):
            print(line)
    finally:
        con.close()
    report = paths.home / "eval" / "eval_report.json"
    if report.exists():
        sets = json.loads(report.read_text())
        print("release gate   " + "; ".join(
            f"{name} {r['summary']['passed']}/{r['summary']['cases']} passed, recall@3 {r['summary']['recall_at_3']}, "
            f"leaks {r['summary']['permission_leaks']}" for name, r in sets.items()))
    print(f"home           {paths.home}  (Dagster UI: make ui)")
    print("try            .venv/bin/canon resolve metric.finance.net_revenue --as-of 2026-08-31 --role analyst")
    print('               .venv/bin/canon ask "Which net revenue definition applies for 2026-08-31?" --role analyst')


if __name__ == "__main__":
    sys.exit(main())
