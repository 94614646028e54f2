"""Reading a corpus into raw records, before any contract is applied.

A corpus is a folder or a single `.jsonl` / `.json` (or `.md`) file. In a
folder, every `*.md` (YAML front matter + Markdown body), `*.jsonl` (one object
per line) and `*.json` (a list of objects, or one object) is read, recursively,
in sorted path order. `policy.yml`, contracts and any other file are not
documents and are skipped, as are hidden files and folders.

Reading never raises for one bad file: an undecodable file, bad JSON, bad front
matter, a file over the size limit, or a symlink that leads outside the corpus
root becomes a `ReadFailure` with its reason, and the rest still loads. Only a
corpus path that does not exist raises `CanonInputError`.

Nothing here judges the content: `canon.registry.gate` applies the source's contract.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterable

from canon.core.config import inside_root
from canon.core.errors import CanonError, CanonInputError
from canon.sources.corpus.json_files import read_json, read_jsonl
from canon.sources.corpus.markdown import read_markdown
from canon.sources.corpus.records import CorpusRead, Item, ReadFailure

DOCUMENT_SUFFIXES = (".md", ".jsonl", ".json")
DEFAULT_MAX_BYTES = 1_000_000

_READERS = {".md": read_markdown, ".json": read_json, ".jsonl": read_jsonl}


def _read_file(root: Path, rel: str, max_bytes: int) -> list[Item]:
    """Every item of one file; any failure of the file becomes a ReadFailure."""
    link = root / rel
    try:
        st = os.lstat(link)
    except OSError as exc:
        return [ReadFailure(rel, f"cannot read file: {exc.strerror or exc}", rel)]
    full = link
    # The walk never enters a symlinked folder, so only a symlinked file (or a '..' in a path
    # handed in) can lead outside the root: only those pay for resolving the path.
    if stat.S_ISLNK(st.st_mode) or ".." in rel.split("/"):
        try:
            full = inside_root(root, Path(rel), what="path")
        except CanonError:
            return [ReadFailure(rel, "path escapes the corpus root (symlink or '..' leads outside it)", rel)]
        except (OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
            return [ReadFailure(rel, "cannot resolve path (symlink loop?)", rel)]
        try:
            st = full.stat()
        except OSError as exc:
            return [ReadFailure(rel, f"cannot read file: {exc.strerror or exc}", rel)]
    if not stat.S_ISREG(st.st_mode):
        return [ReadFailure(rel, "not a regular file", rel)]
    if link.suffix != ".jsonl" and st.st_size > max_bytes:
        return [ReadFailure(rel, f"file is {st.st_size} bytes, over the size limit of {max_bytes} bytes", rel)]
    try:
        return list(_READERS[link.suffix](full, rel, max_bytes))
    except OSError as exc:
        return [ReadFailure(rel, f"cannot read file: {exc.strerror or exc}", rel)]


def _is_hidden(part: str) -> bool:
    return part.startswith(".")


def _walk(root: Path) -> tuple[list[str], list[ReadFailure]]:
    """Relative posix paths of candidate document files, and failures for
    folders that cannot be listed or are symlinks leading outside the root
    (symlinked folders inside the root are not followed: their targets are
    read where they are)."""
    files: list[str] = []
    failures: list[ReadFailure] = []

    def unreadable(err: OSError) -> None:
        rel = Path(err.filename).relative_to(root).as_posix() if err.filename else "."
        failures.append(ReadFailure(rel, f"cannot read folder: {err.strerror or err}", rel))

    top = str(root)
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False, onerror=unreadable):
        base = Path(dirpath)
        # string joins, not pathlib: a 10,000-file corpus is walked on every build
        prefix = "" if dirpath == top else os.path.relpath(dirpath, top).replace(os.sep, "/") + "/"
        keep = []
        for d in dirnames:
            if _is_hidden(d):
                continue
            p = base / d
            if p.is_symlink():
                rel = p.relative_to(root).as_posix()
                try:
                    inside_root(root, Path(rel), what="folder")
                except CanonError:
                    failures.append(ReadFailure(
                        rel, "path escapes the corpus root (symlinked folder leads outside it)", rel))
                except (OSError, RuntimeError):
                    failures.append(ReadFailure(rel, "cannot resolve path (symlink loop?)", rel))
                continue
            keep.append(d)
        dirnames[:] = sorted(keep)
        files.extend(prefix + f for f in filenames if not _is_hidden(f) and f.endswith(DOCUMENT_SUFFIXES))
    return sorted(files), failures


def corpus_files(root: Path) -> tuple[list[str], list[ReadFailure]]:
    """The candidate document files of a resolved corpus folder (sorted relative posix
    paths), and failures for folders that cannot be listed or lead outside it."""
    return _walk(root)


def read_file(root: Path, rel: str, max_bytes: int = DEFAULT_MAX_BYTES) -> list[Item]:
    """Every record (or read failure) of one corpus file, `rel` relative to `root`."""
    return _read_file(root, rel, max_bytes)


def read_corpus(
    path: Path | str, *, max_bytes: int = DEFAULT_MAX_BYTES, exclude: Iterable[Path | str] = ()
) -> CorpusRead:
    """Read a corpus folder or file into raw records and read failures.

    `exclude`: files that sit in the folder but are not documents (a gold file
    next to its corpus, say), as paths relative to the corpus folder or absolute.
    """
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        raise CanonInputError(p, "corpus path does not exist")
    if not p.exists():
        raise CanonInputError(p, "corpus path is a broken symlink")
    if p.is_dir():
        root = p.resolve()
        files, folder_failures = _walk(root)
        skip = {(root / e).absolute() if not Path(e).is_absolute() else Path(e).absolute() for e in exclude}
        skip |= {Path(os.path.realpath(e if Path(e).is_absolute() else root / e)) for e in exclude}
        items: list[Item] = list(folder_failures)
        for rel in files:
            if (root / rel).absolute() in skip:
                continue
            items.extend(_read_file(root, rel, max_bytes))
        items.sort(key=_order)
        return CorpusRead(root, tuple(items))
    if p.suffix not in DOCUMENT_SUFFIXES:
        raise CanonInputError(p, f"a corpus file must be .jsonl, .json or .md, not {p.suffix or 'no suffix'!r}")
    root = p.resolve().parent
    return CorpusRead(root, tuple(_read_file(root, p.resolve().name, max_bytes)))


def _order(item: Item) -> tuple[str, int]:
    # Stable sort: items of one .json list keep their list order.
    return (item.path, item.line or 0)
