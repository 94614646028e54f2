"""Content digests of watched files (pure Python, no Dagster).

Sensors compare content hashes, not modification times: touching a file, a
checkout that rewrites mtimes or a copy that keeps them all give the right
answer. Every file is hashed on every tick; the demo corpus and dbt project
are a few hundred kilobytes, so this costs milliseconds.
"""

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

DOCUMENT_SUFFIXES = (".md", ".jsonl", ".json")          # what canon.sources.corpus.reader reads
DBT_SOURCE_SUFFIXES = (".sql", ".yml", ".yaml", ".csv", ".md", ".py")
DBT_IGNORED_DIRS = {"target", "logs", "dbt_packages", "dbt_modules"}


@dataclass(frozen=True)
class TreeState:
    digest: str                               # sha256 over sorted (path, content sha256)
    files: dict[str, str] = field(default_factory=dict)   # relative posix path -> content sha256
    newest_mtime: float = 0.0                 # only to decide the first tick, never to detect a change

    @property
    def count(self) -> int:
        return len(self.files)


def file_sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _digest(files: dict[str, str]) -> str:
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(f"{rel}\0{files[rel]}\n".encode())
    return h.hexdigest()


def _hidden(name: str) -> bool:
    return name.startswith(".")


def tree_state(root: Path, *, suffixes: tuple[str, ...], exclude_names: Iterable[str] = (),
               ignore_dirs: Iterable[str] = (), sha: Callable[[Path], str] = file_sha) -> TreeState:
    """Digest of the files under `root` (or of `root` itself when it is a file)
    whose names end in `suffixes`; hidden files and folders are skipped, as the
    corpus reader skips them. A missing root is the empty state."""
    root = Path(root)
    exclude, ignored = set(exclude_names), set(ignore_dirs)
    files: dict[str, str] = {}
    newest = 0.0
    if root.is_file():
        candidates = [(root.name, root)]
    elif root.is_dir():
        candidates = []
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not _hidden(d) and d not in ignored)
            for name in filenames:
                if _hidden(name) or name in exclude or not name.endswith(suffixes):
                    continue
                full = Path(dirpath) / name
                candidates.append((full.relative_to(root).as_posix(), full))
    else:
        candidates = []
    for rel, full in candidates:
        try:
            files[rel] = sha(full)
            newest = max(newest, full.stat().st_mtime)
        except OSError:
            files[rel] = "unreadable"
    return TreeState(_digest(files), files, newest)


def corpus_state(corpus: Path) -> TreeState:
    """The documents of a corpus folder; policy.yml is watched by the policy sensor."""
    return tree_state(corpus, suffixes=DOCUMENT_SUFFIXES, exclude_names=("policy.yml",))


def documents_state(sources: list[Path]) -> TreeState:
    """The documents of every configured source. One source is `corpus_state` itself (its
    digest, and so a sensor cursor, is what it always was); several are merged, each file
    named by its source's position in the list."""
    if len(sources) == 1:
        return corpus_state(sources[0])
    files: dict[str, str] = {}
    newest = 0.0
    for i, source in enumerate(sources):
        state = corpus_state(source)
        files.update({f"{i}:{rel}": sha for rel, sha in state.files.items()})
        newest = max(newest, state.newest_mtime)
    return TreeState(_digest(files), files, newest)


def dbt_project_state(project_dir: Path) -> TreeState:
    return tree_state(project_dir, suffixes=DBT_SOURCE_SUFFIXES, ignore_dirs=DBT_IGNORED_DIRS)


def artifacts_state(artifacts_dir: Path, names: tuple[str, ...] = ("manifest.json", "semantic_manifest.json")) -> TreeState:
    """The published dbt artifact set. Every dbt invocation writes a new
    manifest (new invocation id), so every invocation is a new state; the
    artifacts sensor also asks whether Canon already ingested it."""
    files, newest = {}, 0.0
    for name in names:
        p = Path(artifacts_dir) / name
        if p.is_file():
            files[name] = file_sha(p)
            newest = max(newest, p.stat().st_mtime)
    return TreeState(_digest(files) if files else "", files, newest)


def diff(old: dict[str, str], new: dict[str, str]) -> dict[str, list[str]]:
    return {
        "added": sorted(set(new) - set(old)),
        "removed": sorted(set(old) - set(new)),
        "changed": sorted(k for k in set(old) & set(new) if old[k] != new[k]),
    }


def describe(d: dict[str, list[str]], limit: int = 5) -> str:
    parts = []
    for kind in ("changed", "added", "removed"):
        names = d.get(kind) or []
        if names:
            shown = ", ".join(names[:limit]) + (f" (+{len(names) - limit})" if len(names) > limit else "")
            parts.append(f"{kind}: {shown}")
    return "; ".join(parts) or "no file-level difference recorded"
