"""The third-party dbt artifact sets that tests/test_dbt_artifacts.py and
tests/test_dbt_documents.py read; their origins and licenses are in
tests/fixtures/external/README.md.

They are committed gzip-compressed so that a clone alone runs those tests, and
`unpack` writes them out (the session-scoped `external_dir` fixture in
tests/conftest.py calls it once). CANON_SHARED, when set, names a folder whose
external/ holds the same sets uncompressed; they are then read in place."""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

VENDORED = Path(__file__).resolve().parent / "fixtures" / "external"

# Every file the tests read, by set. Listed rather than globbed so that a file missing from a
# checkout is an error naming it, not a set that quietly loads without its catalog.
SETS: dict[str, tuple[str, ...]] = {
    "cosmos-altered-jaffle-shop": ("catalog.json", "manifest.json", "run_results.json", "semantic_manifest.json",
                                   "sources.json"),
    "dbt-core-state-v10": ("manifest.json",),
    "dbt-core-state-v11": ("manifest.json",),
    "dbt-core-state-v12": ("manifest.json",),
    "dbt-project-evaluator": ("catalog.json", "manifest.json", "run_results.json", "semantic_manifest.json",
                              "sources.json"),
    "jaffle-shop-duckdb": ("catalog.json", "manifest.json", "run_results.json", "semantic_manifest.json"),
    "jaffle-shop-semantic-v12": ("catalog_1.11.json", "manifest_1.11.json", "run_results_1.11.json"),
    "solana-models-v6": ("catalog.json", "manifest.json"),
    "tuva-input-layer": ("catalog.json", "manifest.json", "run_results.json"),
    "tuva-v11": ("catalog.json", "manifest.json", "run_results.json"),
    "tuva-v8": ("catalog.json", "manifest.json", "run_results.json"),
}


def shared_override() -> Path | None:
    """CANON_SHARED/external when CANON_SHARED is set, else None (use the vendored copies)."""
    env = os.environ.get("CANON_SHARED")
    return Path(env) / "external" if env else None


def require_all(root: Path) -> Path:
    """root, once every file of SETS is present under it; otherwise FileNotFoundError naming the first missing."""
    for folder, names in SETS.items():
        for name in names:
            if not (root / folder / name).is_file():
                raise FileNotFoundError(f"dbt artifact missing: {root / folder / name}")
    return root


def unpack(dest: Path) -> Path:
    """Decompress every vendored set into dest/<set>/<file>; return dest."""
    for folder, names in SETS.items():
        (dest / folder).mkdir(parents=True, exist_ok=True)
        for name in names:
            src = VENDORED / folder / f"{name}.gz"
            if not src.is_file():
                raise FileNotFoundError(f"vendored dbt artifact missing: {src}")
            with gzip.open(src) as packed, (dest / folder / name).open("wb") as out:
                shutil.copyfileobj(packed, out)
    return dest


def artifact_names(folder: Path) -> dict[str, str | None]:
    """`read_artifacts` file names for one set: jaffle-shop-semantic-v12 suffixes its files with the dbt
    version (manifest_1.11.json); a kind the set does not ship is None (not read, not reported missing)."""
    def pick(stem: str) -> str | None:
        hits = sorted(folder.glob(f"{stem}*.json"))
        return hits[0].name if hits else None
    return {kind: pick(kind) for kind in ("manifest", "run_results", "catalog", "sources", "semantic_manifest")}
