"""`make run` and `canon build`: materialize every asset of the configured main
job headless, on the embedded defaults (DuckDB + local LanceDB under the
home), showing a line per step as it completes, then print a short summary a
newcomer can read. Dagster's full event log goes to a file under the home
(<home>/logs/) with what dbt prints, not to the terminal.

The configuration is canon/core/settings.py's (CANON_CONFIG, the environment,
the demo by default); a bad one stops here with the file, the key and the
reason (exit 2). The Dagster instance settings are the committed dagster.yaml
(one DuckDB-writing run at a time); `ensure_dagster_yaml` copies it into
DAGSTER_HOME when that has none, for `make run`, `make ui` and the tests."""

import contextlib
import datetime as dt
import json
import logging
import os
import shutil
import sys
import time
from pathlib import Path

import dagster as dg

from canon.core.errors import CanonInputError
from canon.core.settings import Settings, load_settings, missing_documents
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


def _rows(metadata: dict) -> int | None:
    for key in ("dagster/row_count", "documents"):
        value = metadata.get(key)
        value = getattr(value, "value", value)
        if isinstance(value, int):
            return value
    return None


class _Progress(logging.Handler):
    """One line per step as it completes: step, seconds, rows or documents."""

    console = None   # the terminal, set before a run sends everything else printed to the log file

    def __init__(self, out=None) -> None:
        super().__init__(level=logging.DEBUG)
        self.out = out or _Progress.console or sys.stdout
        self.started: dict[str, float] = {}
        self.made: dict[str, list[tuple[str, int | None]]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        event = getattr(record, "dagster_event", None)
        if event is None or not event.step_key:
            return
        step, kind = event.step_key, event.event_type_value
        if kind == "STEP_START":
            self.started[step] = record.created
        elif kind == "ASSET_MATERIALIZATION":
            mat = event.event_specific_data.materialization
            self.made.setdefault(step, []).append((mat.asset_key.to_user_string(), _rows(mat.metadata)))
        elif kind in ("STEP_SUCCESS", "STEP_FAILURE"):
            seconds = record.created - self.started.get(step, record.created)
            mark = "✓" if kind == "STEP_SUCCESS" else "✗"
            print(f"  {mark} {step:<46} {seconds:6.1f} s  {self._detail(step)}".rstrip(), file=self.out, flush=True)

    def _detail(self, step: str) -> str:
        made = self.made.get(step, [])
        counted = [(k, n) for k, n in made if n is not None]
        if len(made) > 3 or not counted:
            return f"{len(made)} asset(s)" if made else ""
        return ", ".join(f"{k} {n} {'documents' if k.endswith('evidence_registry') else 'rows'}" for k, n in counted)


@dg.logger(description="A line per step as it completes (canon_run).")
def progress_logger(_context) -> logging.Logger:
    log = logging.Logger("canon_progress", level=logging.DEBUG)
    log.addHandler(_Progress())
    return log


@dg.logger(config_schema={"path": str}, description="Dagster's full event log, to a file under the home.")
def event_log_file(context) -> logging.Logger:
    log = logging.Logger("canon_event_log", level=logging.DEBUG)
    handler = logging.FileHandler(context.logger_config["path"], encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    return log


def main() -> int:
    try:
        settings = load_settings()
        paths = paths_from_env().canon.ensure()
    except CanonInputError as exc:
        print(f"canon: error: {exc}", file=sys.stderr)
        return 2
    # A documents source that does not exist loads (the code location must), but a build would
    # stop on it in the registry step: say so before anything runs, with the file and the key.
    absent = missing_documents(settings)
    if absent:
        for problem in absent:
            print(f"canon: error: {problem}", file=sys.stderr)
        return 2
    os.environ.setdefault("DAGSTER_HOME", str(paths.dagster_home))
    ensure_dagster_yaml(os.environ["DAGSTER_HOME"])
    started = time.monotonic()
    print(f"Canon {settings.mode} configuration"
          + (f" from {settings.config_file}" if settings.config_file else "") + f", home {paths.home}")
    try:
        defs = build_definitions()
    except CanonInputError as exc:
        print(f"canon: error: {exc}", file=sys.stderr)
        return 2
    log_file = paths.home / "logs" / f"{MAIN_JOB}-{dt.datetime.now():%Y%m%dT%H%M%S}.log"
    log_file.parent.mkdir(parents=True, exist_ok=True)
    job = defs.resolve_job_def(MAIN_JOB).with_logger_defs(
        {"canon_progress": progress_logger, "canon_event_log": event_log_file})
    _Progress.console = sys.stdout
    # dagster-dbt re-prints every dbt log line on stdout: into the log file with the event log.
    with dg.DagsterInstance.get() as instance, open(log_file, "a", encoding="utf-8") as raw, \
            contextlib.redirect_stdout(raw):
        result = job.execute_in_process(
            instance=instance, raise_on_error=False,
            run_config={"loggers": {"canon_progress": {}, "canon_event_log": {"config": {"path": str(log_file)}}}},
        )
    elapsed = time.monotonic() - started
    _print_summary(paths, result, elapsed, settings, log_file)
    return 0 if result.success else 1


def _failure_reason(error) -> str:
    """What failed a step: the error the asset raised, not Dagster's wrapper around it; a bad
    input (CanonInputError) as its own `<file> [<key>]: <reason>`."""
    while error.cause is not None and error.cls_name in ("DagsterExecutionStepExecutionError",
                                                         "DagsterUserCodeExecutionError"):
        error = error.cause
    message = error.message.strip()
    return message.removeprefix(f"{CanonInputError.__module__}.{CanonInputError.__name__}: ")


def _print_summary(paths, result, elapsed: float, settings: Settings | None = None, log_file: Path | None = None) -> None:
    settings = settings or load_settings()
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
        print(f"  ✗ step {e.step_key}: {_failure_reason(e.event_specific_data.error)[:300]}")
    if not settings.has_dbt:
        print("dbt            none configured (no dbt keys: the documents alone)")
    if paths.canon_db.exists():
        con = registry.connect(paths.canon_db, read_only=True)
        try:
            for line in workspace_summary(con):
                print(line)
        finally:
            con.close()
    report = paths.home / "eval" / "eval_report.json"
    if not settings.release_gate:
        print("release gate   none configured (release_gate.gold in the configuration): no eval_report asset")
    elif report.exists():
        sets = json.loads(report.read_text())
        print("release gate   " + "; ".join(
            f"{name} {r['summary']['passed']}/{r['summary']['cases']} passed, recall@3 {r['summary']['recall_at_3']}, "
            f"leaks {r['summary']['permission_leaks']}" for name, r in sets.items()))
    if log_file is not None:
        print(f"event log      {log_file}")
    print(f"home           {paths.home}  (Dagster UI: make ui)")
    if settings.is_demo:
        print("try            .venv/bin/canon resolve metric.finance.net_revenue --as-of 2026-08-31 --role analyst")
        print('               .venv/bin/canon ask "Which net revenue definition applies for 2026-08-31?" --role analyst')
    else:
        role = settings.default_roles[0] if settings.default_roles else "ROLE"
        print("try            .venv/bin/canon doctor")
        print(f'               .venv/bin/canon ask "Which model implements <metric>?" --role {role}')


if __name__ == "__main__":
    sys.exit(main())
