"""Where things live, from the environment (CANON_HOME, CANON_CORPUS), so a
user can point the whole system elsewhere without touching code."""

from __future__ import annotations

import os
from pathlib import Path

from canon.core.config import PROJECT_ROOT, CanonPaths

DBT_PROJECT_DIR = PROJECT_ROOT / "dbt_project"
CONTRACTS_DIR = PROJECT_ROOT / "contracts"


def canon_paths() -> CanonPaths:
    paths = CanonPaths.from_env().ensure()
    # dbt's profiles.yml reads CANON_HOME through env_var(); keep the two in step.
    os.environ["CANON_HOME"] = str(paths.home)
    return paths


def corpus_dir() -> Path:
    return Path(os.environ.get("CANON_CORPUS", str(PROJECT_ROOT / "knowledge"))).resolve()


def policy_file() -> Path:
    """The live policy: $CANON_POLICY, else policy.yml in the corpus (as the CLI reads it)."""
    env = os.environ.get("CANON_POLICY")
    return Path(env).resolve() if env else corpus_dir() / "policy.yml"
