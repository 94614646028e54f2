"""Where Canon reads and writes, as one resource: the configuration of
canon/core/settings.py (the file named by CANON_CONFIG, with CANON_HOME,
CANON_CORPUS, CANON_POLICY and the CANON_DBT_* variables over it).

The code location configures it from `dg.EnvVar`, so a run resolves the
variables when it starts and the UI shows their names, never their values.
Assets, checks and ops take it as the `paths` resource instead of reading the
environment themselves."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from pydantic import Field

from canon.core.config import DEMO_CORPUS, PROJECT_ROOT, CanonPaths
from canon.core.settings import ENV_CONFIG, DocumentSource, Settings, load_settings

CONTRACTS_DIR = PROJECT_ROOT / "contracts"
DEFAULT_HOME = PROJECT_ROOT / "var"
DEFAULT_CORPUS = DEMO_CORPUS
# resource field -> the environment variable that sets it; an empty field is an unset variable
ENV_VARS = {
    "config": ENV_CONFIG, "home": "CANON_HOME", "corpus": "CANON_CORPUS", "policy": "CANON_POLICY",
    "dbt_project_dir": "CANON_DBT_PROJECT_DIR", "dbt_profiles_dir": "CANON_DBT_PROFILES_DIR",
    "dbt_target": "CANON_DBT_TARGET", "dbt_artifacts_dir": "CANON_DBT_ARTIFACTS_DIR",
}


class CanonPathsResource(dg.ConfigurableResource):
    config: str = Field(default="", description="$CANON_CONFIG: the configuration file; empty: the demo")
    home: str = Field(default="", description="$CANON_HOME: every file Canon writes; empty: the configuration's")
    corpus: str = Field(default="", description="$CANON_CORPUS: the documents Canon reads; empty: the configuration's")
    policy: str = Field(default="", description="$CANON_POLICY: the live policy.yml; empty: the configuration's")
    dbt_project_dir: str = Field(default="", description="$CANON_DBT_PROJECT_DIR")
    dbt_profiles_dir: str = Field(default="", description="$CANON_DBT_PROFILES_DIR")
    dbt_target: str = Field(default="", description="$CANON_DBT_TARGET")
    dbt_artifacts_dir: str = Field(default="", description="$CANON_DBT_ARTIFACTS_DIR")

    @property
    def settings(self) -> Settings:
        """The configuration these fields name, read as the CLI reads it (canon.core.settings)."""
        return load_settings({var: getattr(self, f) for f, var in ENV_VARS.items() if getattr(self, f)})

    @property
    def canon(self) -> CanonPaths:
        s = self.settings
        return CanonPaths(s.home, s.dbt_artifacts_dir)

    @property
    def documents(self) -> tuple[DocumentSource, ...]:
        return self.settings.documents

    @property
    def corpus_dir(self) -> Path | None:
        """The first documents source (None when the configuration has none)."""
        docs = self.documents
        return docs[0].path if docs else None

    @property
    def policy_file(self) -> Path:
        """The live policy: the rule the CLI uses (canon.core.settings)."""
        return self.settings.policy

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        # The folders under the home exist before any step of a run writes into them.
        self.canon.ensure()


def env_or(var: str, default: str):
    """`dg.EnvVar(var)` when the variable is set (resolved when a run starts), else `default`."""
    return dg.EnvVar(var) if var in os.environ else default


def paths_resource() -> CanonPathsResource:
    """For the code location: `dg.EnvVar` for each variable that is set, the default otherwise."""
    return CanonPathsResource(**{field: dg.EnvVar(var) for field, var in ENV_VARS.items() if var in os.environ})


def paths_from_env() -> CanonPathsResource:
    """The same settings read now, for code outside a run (sensors, the `make run` summary)."""
    return CanonPathsResource(**{field: os.environ[var] for field, var in ENV_VARS.items() if var in os.environ})
