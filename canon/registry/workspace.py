"""A Canon workspace: the registry database under CANON_HOME plus the live
policy file. The CLI, the evaluation and the Dagster assets all go through it."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import duckdb

from canon.core import db
from canon.core.config import CanonPaths
from canon.core.errors import CanonInputError
from canon.models.documents import Document
from canon.registry import store as registry
from canon.registry.policy import Policy, load_policy
from canon.sources.dbt.semantic.metric_values import MetricEngine

POLICY_FILE = "policy.yml"


@dataclass
class Workspace:
    paths: CanonPaths
    con: duckdb.DuckDBPyConnection

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
        return cls(paths, con)

    def close(self) -> None:
        self.con.close()

    def documents(self) -> list[Document]:
        return registry.load_documents(self.con)

    def policy_path(self) -> Path | None:
        """The live policy: $CANON_POLICY, else policy.yml in the registered corpus root."""
        env = os.environ.get("CANON_POLICY")
        if env:
            return Path(env)
        root = registry.get_setting(self.con, "corpus_root")
        return Path(root) / POLICY_FILE if root else None

    def policy(self) -> Policy:
        # Read on every call: revocations take effect at query time.
        return load_policy(self.policy_path())

    def metric_engine(self):
        """The semantic-layer path for metric values, when the dbt artifacts and warehouse exist."""
        manifest = self.paths.dbt_artifacts_dir / "semantic_manifest.json"
        if not (manifest.exists() and self.paths.warehouse_db.exists()):
            return None
        return MetricEngine(manifest, self.paths.warehouse_db).value
