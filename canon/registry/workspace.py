"""A Canon workspace: the registry database under CANON_HOME plus the live
policy file. The CLI, the evaluation and the Dagster assets all go through it.

The policy file comes from the configuration (`canon.core.config.policy_path`),
never from the corpus root a registry build recorded."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb

from canon.core import config, db
from canon.core.config import CanonPaths
from canon.core.errors import CanonInputError
from canon.core.settings import load_settings
from canon.models.documents import Document
from canon.registry import store as registry
from canon.registry.live_policy import read_live_policy, remember_from_reader
from canon.registry.policy import Policy
from canon.sources.dbt.semantic.metric_values import MetricEngine
from canon.sources.dbt.semantic.target import configured_warehouse

POLICY_FILE = config.POLICY_FILE


@dataclass
class Workspace:
    paths: CanonPaths
    con: duckdb.DuckDBPyConnection
    read_only: bool = False

    @classmethod
    def open(cls, home: str | os.PathLike | None = None, *, read_only: bool = False) -> "Workspace":
        paths = CanonPaths.from_env(home)
        if read_only and not paths.canon_db.exists():
            raise CanonInputError(paths.canon_db, "no Canon registry here yet: run `make run` (or the Dagster job) first")
        if not read_only:
            paths.ensure()
        try:  # readers open the writers' snapshot; a lock still in the way is waited for (canon/core/db.py)
            con = db.open_for_reading(paths.canon_db) if read_only else db.connect_waiting(paths.canon_db)
        except duckdb.IOException as exc:
            raise CanonInputError(paths.canon_db, f"cannot open the registry: {exc}") from None
        return cls(paths, con, read_only)

    def close(self) -> None:
        self.con.close()

    def documents(self) -> list[Document]:
        return registry.load_documents(self.con)

    def policy_path(self) -> Path:
        """The live policy file: $CANON_POLICY, else policy.yml in $CANON_CORPUS, else the demo corpus's."""
        return config.policy_path()

    def policy(self) -> Policy:
        """Read on every call: revocations take effect at query time. A broken or
        vanished policy is the unavailable policy, which denies everything."""
        policy = read_live_policy(self.con, self.policy_path(), record=not self.read_only)
        if self.read_only:  # a reader's sighting still reaches the registry (canon/registry/live_policy.py)
            remember_from_reader(self.paths.canon_db, self.con, self.policy_path(), policy)
        return policy

    def metric_engine(self) -> MetricEngine | None:
        """The semantic layer for metric values, when dbt's semantic manifest exists: its metrics
        run on the warehouse the configured dbt target names (rendered on the first value, so
        a question without one never loads dbt). Called as `metric_values(doc, start, end)`;
        a value it cannot compute leaves the reason in `last_reason`."""
        manifest = self.paths.dbt_artifacts_dir / "semantic_manifest.json"
        if not manifest.exists():
            return None
        return MetricEngine(manifest, configured_warehouse(load_settings(), self.paths.home, os.environ))
