"""Every path Canon writes comes from one home (CANON_HOME, default ./var).

Paths taken from configuration must stay inside their declared root:
`inside_root` is the one place that rule is enforced.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from canon.core.errors import CanonInputError

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The demo corpus, used when CANON_CORPUS is not set.
DEMO_CORPUS = PROJECT_ROOT / "knowledge"
POLICY_FILE = "policy.yml"


def corpus_dir() -> Path:
    """The corpus folder: $CANON_CORPUS, else the demo corpus."""
    return Path(os.environ.get("CANON_CORPUS") or str(DEMO_CORPUS)).resolve()


def resolve_policy_path(policy: str | os.PathLike | None, corpus: str | os.PathLike | None) -> Path:
    """The live policy file, the one rule every reader uses (the CLI, the Dagster
    resource resources/paths.py, checks and sensors): `policy` ($CANON_POLICY),
    else policy.yml in `corpus` ($CANON_CORPUS), else the demo corpus's. Never
    what a registry build recorded: moving the corpus (and pointing
    CANON_CORPUS or CANON_POLICY at it) keeps its policy."""
    if policy:
        return Path(policy).resolve()
    return Path(corpus or DEMO_CORPUS).resolve() / POLICY_FILE


def policy_path() -> Path:
    """`resolve_policy_path` from the environment."""
    return resolve_policy_path(os.environ.get("CANON_POLICY"), os.environ.get("CANON_CORPUS"))


def inside_root(root: Path, candidate: Path, *, what: str) -> Path:
    """Resolve `candidate` (symlinks included) and refuse it unless it lies under `root`."""
    root_r = root.resolve()
    cand_r = (root / candidate).resolve() if not candidate.is_absolute() else candidate.resolve()
    if cand_r != root_r and root_r not in cand_r.parents:
        raise CanonInputError(candidate, f"{what} escapes its root {root_r}")
    return cand_r


@dataclass(frozen=True)
class CanonPaths:
    home: Path

    @classmethod
    def from_env(cls, home: str | os.PathLike | None = None) -> "CanonPaths":
        raw = home if home is not None else os.environ.get("CANON_HOME", str(PROJECT_ROOT / "var"))
        return cls(Path(raw).resolve())

    # Raw landing zone written by the raw-loader assets (stands for an ingestion tool).
    @property
    def raw_db(self) -> Path:
        return self.home / "raw.duckdb"

    # dbt-duckdb's warehouse (dbt owns this file).
    @property
    def warehouse_db(self) -> Path:
        return self.home / "warehouse.duckdb"

    # Canon's registry, definitions, lineage tables and answer log.
    @property
    def canon_db(self) -> Path:
        return self.home / "canon.duckdb"

    @property
    def answer_log_file(self) -> Path:
        """The answer log `canon ask` appends to (canon/ask/answer_log.py, AnswerLogFile)."""
        return self.home / "answer_log.sqlite"

    @property
    def lancedb_dir(self) -> Path:
        return self.home / "lancedb"

    @property
    def dbt_target_dir(self) -> Path:
        return self.home / "dbt_target"

    # The last successful dbt invocation's artifacts, published as one set.
    @property
    def dbt_artifacts_dir(self) -> Path:
        return self.home / "dbt_artifacts"

    @property
    def dagster_home(self) -> Path:
        return self.home / "dagster"

    @property
    def openlineage_file(self) -> Path:
        return self.home / "openlineage" / "events.jsonl"

    def ensure(self) -> "CanonPaths":
        for d in (self.home, self.lancedb_dir, self.dbt_target_dir, self.dagster_home, self.openlineage_file.parent):
            d.mkdir(parents=True, exist_ok=True)
        return self
