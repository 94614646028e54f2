"""The dbt project and CLI resource. The manifest is produced by `dbt parse`
when missing or older than the project files (prepare_if_dev only does that
under `dagster dev`), and read lazily when the definitions load."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dagster_dbt import DbtCliResource, DbtProject

from resources.settings import DBT_PROJECT_DIR, canon_paths


def dbt_project() -> DbtProject:
    # Not cached: CANON_HOME may differ between code locations and tests in one process.
    paths = canon_paths()
    return DbtProject(
        project_dir=DBT_PROJECT_DIR,
        profiles_dir=DBT_PROJECT_DIR,
        target_path=paths.dbt_target_dir,
    )


def _newest_source_mtime(project_dir: Path) -> float:
    return max(
        (p.stat().st_mtime for p in project_dir.rglob("*") if p.suffix in {".sql", ".yml", ".yaml", ".csv"}
         and "target" not in p.parts and "logs" not in p.parts),
        default=0.0,
    )


def ensure_manifest() -> Path:
    project = dbt_project()
    manifest = Path(project.manifest_path)
    if manifest.exists() and manifest.stat().st_mtime >= _newest_source_mtime(Path(project.project_dir)):
        return manifest
    paths = canon_paths()
    dbt_bin = Path(sys.executable).with_name("dbt")
    cmd = [str(dbt_bin), "parse", "--quiet", "--project-dir", str(project.project_dir),
           "--profiles-dir", str(project.profiles_dir), "--target-path", str(paths.dbt_target_dir),
           "--log-path", str(paths.home / "dbt_logs")]
    done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "CANON_HOME": str(paths.home)})
    if done.returncode != 0 or not manifest.exists():
        raise RuntimeError(f"dbt parse failed for {project.project_dir}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return manifest


def dbt_cli_resource() -> DbtCliResource:
    # The venv's dbt, whether or not the venv's bin folder is on PATH.
    return DbtCliResource(project_dir=dbt_project(), profiles_dir=str(DBT_PROJECT_DIR),
                          dbt_executable=str(Path(sys.executable).with_name("dbt")))
