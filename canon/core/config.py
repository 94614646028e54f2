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
