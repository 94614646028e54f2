"""The dbt project and the dbt CLI resource.

The project is the configuration's (canon/core/settings.py): the demo's
dbt_project/, or in project mode the team's `dbt.project_dir` with its
`dbt.profiles_dir` and `dbt.target`. Either way dbt's target and log folders
are under the home, never inside the project. In artifacts mode there is no
project: nothing here is called.

`dbt_project()` is cached per home and configuration (both may differ between
code locations and tests in one process). `prepare_if_dev()` parses under
`dagster dev`; everywhere else (`make run`, the webserver, the daemon, tests)
the manifest is produced only when it is missing or the project's files
changed since it was made: a digest of the project's files is kept beside
manifest.json, so loading the code location does not run `dbt parse` again.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from pathlib import Path
from typing import Iterator

from dagster_dbt import DbtCliResource, DbtProject
from pydantic import Field

from canon.core import file_lock
from canon.core.config import CanonPaths
from canon.core.settings import DEMO_DBT_PROJECT, Settings, load_settings
from sensors.watch import dbt_project_state

DBT_PROJECT_DIR = DEMO_DBT_PROJECT
# The venv's dbt, whether or not the venv's bin folder is on PATH.
DBT_EXECUTABLE = str(Path(sys.executable).with_name("dbt"))
DIGEST_FILE = "canon_project_digest"   # beside manifest.json
_PARSE_LOCK_TIMEOUT_S = 300.0


@contextlib.contextmanager
def _canon_home_env(home: str, target_dir: str | None = None) -> Iterator[None]:
    """The demo's profiles.yml reads CANON_HOME through env_var(); dbt gets it for one call.
    DBT_TARGET_PATH is where dagster-dbt makes each invocation's own target folder (and dbt
    writes its log there): under the home, not in the project."""
    values = {"CANON_HOME": home, **({"DBT_TARGET_PATH": target_dir} if target_dir else {})}
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class CanonDbtCliResource(DbtCliResource):
    """dbt-duckdb's files live under CANON_HOME: each invocation is started with it set."""

    canon_home: str = Field(description="$CANON_HOME, handed to profiles.yml")
    canon_target_dir: str = Field(default="", description="dbt's target folder under the home (DBT_TARGET_PATH)")

    def cli(self, args, **kwargs):
        # DbtCliResource copies os.environ when it starts the dbt process, inside this call.
        with _canon_home_env(str(Path(self.canon_home).resolve()), self.canon_target_dir or None):
            return super().cli(args, **kwargs)


def dbt_cli_resource(project: DbtProject, canon_home: str) -> CanonDbtCliResource:
    return CanonDbtCliResource(project_dir=project, canon_home=canon_home, dbt_executable=DBT_EXECUTABLE,
                               canon_target_dir=str(project.target_path))


def _log_dir(paths: CanonPaths) -> Path:
    return paths.home / "dbt_logs"


def _digest(project: DbtProject) -> str:
    """What the manifest was parsed from: the project's files, and the target when one is named
    (another target is another manifest)."""
    digest = dbt_project_state(Path(project.project_dir)).digest
    return f"{digest}:{project.target}" if project.target else digest


def parse_manifest(project: DbtProject, paths: CanonPaths) -> Path:
    """`dbt parse` into the project's target folder (one process at a time), then record
    the digest of the project files it parsed."""
    target = Path(project.target_path)
    target.mkdir(parents=True, exist_ok=True)
    digest = _digest(project)
    busy = lambda pid: RuntimeError(f"dbt parse into {target} is held by process {pid}")  # noqa: E731
    with file_lock.exclusive(target / ".parse.lock", timeout=_PARSE_LOCK_TIMEOUT_S, busy=busy):
        # A failed parse raises with dbt's error messages.
        dbt_cli_resource(project, str(paths.home)).cli(
            ["parse", "--quiet", "--log-path", str(_log_dir(paths))], target_path=target).wait()
        if not Path(project.manifest_path).exists():
            raise RuntimeError(f"dbt parse wrote no manifest.json into {target}")
        (target / DIGEST_FILE).write_text(digest)
    return Path(project.manifest_path)


def manifest_is_current(project: DbtProject) -> bool:
    digest_file = Path(project.target_path) / DIGEST_FILE
    return (Path(project.manifest_path).exists() and digest_file.exists()
            and digest_file.read_text().strip() == _digest(project))


def dbt_project(paths: CanonPaths, settings: Settings | None = None) -> DbtProject:
    """The configured dbt project writing into <home>/dbt_target, with a current manifest."""
    return _dbt_project(paths, settings or load_settings())


@functools.cache
def _dbt_project(paths: CanonPaths, settings: Settings) -> DbtProject:
    if not settings.runs_dbt:
        raise RuntimeError(f"{settings.mode} mode runs no dbt project")  # a wiring bug, not bad input
    # As in Dagster's example projects: a DbtProject with the target under our control, prepared
    # (parsed) under `dagster dev`; dbt's log folder under the home as well.
    project = DbtProject(project_dir=settings.dbt_project_dir, profiles_dir=settings.dbt_profiles_dir,
                         target=settings.dbt_target, target_path=paths.dbt_target_dir,
                         prepare_project_cli_args=["parse", "--quiet", "--log-path", str(_log_dir(paths))])
    # Under `dagster dev`, dagster-dbt parses at every load (the Makefile's `ui` puts the venv's dbt
    # on PATH); everywhere else the manifest is made only when it is missing or stale.
    with _canon_home_env(str(paths.home)):
        project.prepare_if_dev()
    if not (project.preparer.using_dagster_dev() or manifest_is_current(project)):
        parse_manifest(project, paths)
    return project


dbt_project.cache_clear = _dbt_project.cache_clear  # type: ignore[attr-defined]
