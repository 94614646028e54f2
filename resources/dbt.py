"""The dbt project and the dbt CLI resource.

`dbt_project()` is cached per CANON_HOME (the home may differ between code
locations and tests in one process). `prepare_if_dev()` parses under
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
from canon.core.config import PROJECT_ROOT, CanonPaths
from sensors.watch import dbt_project_state

DBT_PROJECT_DIR = PROJECT_ROOT / "dbt_project"
# The venv's dbt, whether or not the venv's bin folder is on PATH.
DBT_EXECUTABLE = str(Path(sys.executable).with_name("dbt"))
DIGEST_FILE = "canon_project_digest"   # beside manifest.json
_PARSE_LOCK_TIMEOUT_S = 300.0


@contextlib.contextmanager
def _canon_home_env(home: str) -> Iterator[None]:
    """profiles.yml reads CANON_HOME through env_var(); dbt gets it for one call."""
    old = os.environ.get("CANON_HOME")
    os.environ["CANON_HOME"] = home
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("CANON_HOME", None)
        else:
            os.environ["CANON_HOME"] = old


class CanonDbtCliResource(DbtCliResource):
    """dbt-duckdb's files live under CANON_HOME: each invocation is started with it set."""

    canon_home: str = Field(description="$CANON_HOME, handed to profiles.yml")

    def cli(self, args, **kwargs):
        # DbtCliResource copies os.environ when it starts the dbt process, inside this call.
        with _canon_home_env(str(Path(self.canon_home).resolve())):
            return super().cli(args, **kwargs)


def dbt_cli_resource(project: DbtProject, canon_home: str) -> CanonDbtCliResource:
    return CanonDbtCliResource(project_dir=project, canon_home=canon_home, dbt_executable=DBT_EXECUTABLE)


def _log_dir(paths: CanonPaths) -> Path:
    return paths.home / "dbt_logs"


def parse_manifest(project: DbtProject, paths: CanonPaths) -> Path:
    """`dbt parse` into the project's target folder (one process at a time), then record
    the digest of the project files it parsed."""
    target = Path(project.target_path)
    target.mkdir(parents=True, exist_ok=True)
    digest = dbt_project_state(Path(project.project_dir)).digest
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
            and digest_file.read_text().strip() == dbt_project_state(Path(project.project_dir)).digest)


@functools.cache
def dbt_project(paths: CanonPaths) -> DbtProject:
    """The dbt project writing into $CANON_HOME/dbt_target, with a current manifest."""
    project = DbtProject(project_dir=DBT_PROJECT_DIR, profiles_dir=DBT_PROJECT_DIR, target_path=paths.dbt_target_dir,
                         prepare_project_cli_args=["parse", "--quiet", "--log-path", str(_log_dir(paths))])
    # Under `dagster dev`, dagster-dbt parses at every load (the Makefile's `ui` puts the venv's dbt
    # on PATH); everywhere else the manifest is made only when it is missing or stale.
    with _canon_home_env(str(paths.home)):
        project.prepare_if_dev()
    if not (project.preparer.using_dagster_dev() or manifest_is_current(project)):
        parse_manifest(project, paths)
    return project
