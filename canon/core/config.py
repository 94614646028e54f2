"""Every path Canon writes comes from one home (the configuration's `home`:
CANON_HOME, else the file named by CANON_CONFIG, else ./var; canon/core/settings.py).

Paths taken from configuration must stay inside their declared root:
`inside_root` is the one place that rule is enforced.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from canon.core.errors import CanonInputError
from canon.core.settings import DEMO_CORPUS, POLICY_FILE, PROJECT_ROOT, load_settings, resolve_policy_path

__all__ = ["CanonPaths", "DEMO_CORPUS", "POLICY_FILE", "PROJECT_ROOT", "corpus_dir", "inside_root", "policy_path",
           "resolve_policy_path"]



def corpus_dir() -> Path:
    """The first documents source ($CANON_CORPUS, else the configuration's `documents`,
    else the demo corpus); the demo corpus when the configuration has no documents."""
    documents = load_settings().documents
    return documents[0].path if documents else DEMO_CORPUS.resolve()


def policy_path() -> Path:
    """The live policy file of the configuration ($CANON_POLICY, else `policy`, else
    policy.yml in the first documents folder; see canon.core.settings)."""
    return load_settings().policy


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
    # artifacts mode: the folder dbt publishes its artifacts to outside Canon (`dbt.artifacts_dir`)
    artifacts: Path | None = None

    @classmethod
    def from_env(cls, home: str | os.PathLike | None = None) -> "CanonPaths":
        """The configuration's paths; `home` given, that home instead of the configured one."""
        settings = load_settings()
        return cls(Path(home).resolve() if home is not None else settings.home, settings.dbt_artifacts_dir)

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

    # The dbt artifacts Canon reads: the last successful dbt invocation's, published as one set
    # under home, or in artifacts mode the configured folder, read in place.
    @property
    def dbt_artifacts_dir(self) -> Path:
        return self.artifacts if self.artifacts is not None else self.home / "dbt_artifacts"

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
