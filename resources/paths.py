"""Where Canon reads and writes, as one resource: CANON_HOME (every file Canon
writes), CANON_CORPUS (the documents) and CANON_POLICY (the live policy.yml).

The code location configures it from `dg.EnvVar`, so a run resolves the
variables when it starts and the UI shows their names, never their values.
Assets, checks and ops take it as the `paths` resource instead of reading the
environment themselves."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from pydantic import Field

from canon.core.config import DEMO_CORPUS, PROJECT_ROOT, CanonPaths, resolve_policy_path

CONTRACTS_DIR = PROJECT_ROOT / "contracts"
DEFAULT_HOME = PROJECT_ROOT / "var"
DEFAULT_CORPUS = DEMO_CORPUS
# resource field -> the environment variable that sets it
ENV_VARS = {"home": "CANON_HOME", "corpus": "CANON_CORPUS", "policy": "CANON_POLICY"}


class CanonPathsResource(dg.ConfigurableResource):
    home: str = Field(default=str(DEFAULT_HOME), description="$CANON_HOME: every file Canon writes")
    corpus: str = Field(default=str(DEFAULT_CORPUS), description="$CANON_CORPUS: the documents Canon reads")
    policy: str = Field(default="", description="$CANON_POLICY: the live policy.yml; empty: policy.yml in the corpus")

    @property
    def canon(self) -> CanonPaths:
        return CanonPaths.from_env(self.home)

    @property
    def corpus_dir(self) -> Path:
        return Path(self.corpus).resolve()

    @property
    def policy_file(self) -> Path:
        """The live policy: canon.core.config.resolve_policy_path, the rule the CLI uses."""
        return resolve_policy_path(self.policy, self.corpus)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        # The folders under CANON_HOME exist before any step of a run writes into them.
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
