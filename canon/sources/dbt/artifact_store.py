"""Publishes a dbt invocation's artifacts into one stable folder as a set, so
readers never see a manifest from one run beside run results from another."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

ARTIFACTS = ("manifest.json", "semantic_manifest.json", "run_results.json", "sources.json", "catalog.json")


def publish_artifacts(target_dir: Path, store: Path, names: tuple[str, ...] = ARTIFACTS) -> list[str]:
    """Copy the named artifacts that exist in `target_dir` into `store`, each by
    an atomic rename; artifacts the invocation did not write are left as they were."""
    store.mkdir(parents=True, exist_ok=True)
    copied = []
    for name in names:
        src = Path(target_dir) / name
        if not src.exists():
            continue
        with tempfile.NamedTemporaryFile(dir=store, prefix=f".{name}.", delete=False) as tmp:
            shutil.copyfile(src, tmp.name)
        Path(tmp.name).replace(store / name)
        copied.append(name)
    return copied
