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

import json
import os
import re
import stat
from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path
from typing import Any, Iterable, Iterator, Union

import yaml

from canon.core.config import inside_root
from canon.core.errors import CanonError, CanonInputError

DOCUMENT_SUFFIXES = (".md", ".jsonl", ".json")
DEFAULT_MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class RawRecord:
    """One record as read: its fields (contract keys, `text`, any extra keys),
    where it came from and the exact bytes it was read from."""

    fields: dict[str, Any]
    source_uri: str            # path relative to the corpus root, + "#L<n>" (jsonl) or "#/<i>" (json list)
    raw: bytes                 # the record's bytes: the .md file, the .jsonl line, the canonical JSON of a list item
    path: str                  # the file, relative to the corpus root (posix)
    line: int | None = None    # 1-based line for .jsonl records
    source_system: str | None = None    # None: the contract's source.system applies
    source_revision: str | None = None  # None: "sha256:" + sha256(raw)

    @property
    def raw_sha256(self) -> str:
        return "sha256:" + sha256(self.raw).hexdigest()


@dataclass(frozen=True)
class ReadFailure:
    """A file (or one line of it) that could not be read as a record."""

    source_uri: str
    reason: str
    path: str
    line: int | None = None
    raw_sha256: str | None = None   # None when the bytes were not (or must not be) read


Item = Union[RawRecord, ReadFailure]


@dataclass(frozen=True)
class CorpusRead:
    """Everything read from a corpus, in deterministic order (path, then line)."""

    root: Path
    items: tuple[Item, ...] = field(default_factory=tuple)

    @property
    def records(self) -> list[RawRecord]:
        return [i for i in self.items if isinstance(i, RawRecord)]

    @property
    def failures(self) -> list[ReadFailure]:
        return [i for i in self.items if isinstance(i, ReadFailure)]

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)


# --- YAML front matter ----------------------------------------------------------
# libyaml's C parser when PyYAML was built with it (5-10x faster on a large corpus); the
# resolvers and constructors below are Python either way, so both parse identically.
# An error is re-parsed by the pure-Python parser, whose marks point at the offending line.
_BaseLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _FrontMatterLoader(_BaseLoader):  # type: ignore[misc,valid-type]
    """SafeLoader that keeps scalars as written where YAML 1.1 would guess wrong:
    `version: 1.10` stays "1.10" (not 1.1), `version: 2026-10-10` and
    `valid_from: 2026-07-01` stay strings (the gate parses dates strictly),
    `supersedes: no` stays "no", `010` is not octal 8. Duplicate keys fail."""


_FrontMatterLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers
            if tag not in ("tag:yaml.org,2002:float", "tag:yaml.org,2002:timestamp",
                           "tag:yaml.org,2002:bool", "tag:yaml.org,2002:int")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_FrontMatterLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF"))
_FrontMatterLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int", re.compile(r"^[-+]?(?:0|[1-9][0-9]*)$"), list("-+0123456789"))


def _construct_mapping_no_duplicates(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node)


_FrontMatterLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping_no_duplicates)


class _PureFrontMatterLoader(yaml.SafeLoader):
    """The same rules on the pure-Python parser: used only to explain an error."""


_PureFrontMatterLoader.yaml_implicit_resolvers = _FrontMatterLoader.yaml_implicit_resolvers
_PureFrontMatterLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping_no_duplicates)


def _load_front_matter(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_FrontMatterLoader)  # noqa: S506 (safe subclass)
    except yaml.YAMLError:
        return yaml.load(text, Loader=_PureFrontMatterLoader)  # noqa: S506 (raises with the precise mark)

_FENCE = re.compile(r"^---[ \t]*$")
_FENCE_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$")


class _BadRecord(Exception):
    """A read-level failure of one file or line (message = the reason)."""


def parse_markdown(text: str) -> dict[str, Any]:
    """Front matter fields plus the body as `text`. Raises _BadRecord."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not lines or not _FENCE.match(lines[0]):
        raise _BadRecord("no YAML front matter (the file must start with a '---' line)")
    end = next((i for i in range(1, len(lines)) if _FENCE_END.match(lines[i])), None)
    if end is None:
        raise _BadRecord("unterminated YAML front matter (no closing '---' line)")
    try:
        meta = _load_front_matter("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or "unparseable"
        where = f" at line {mark.line + 2}" if mark is not None else ""  # +1 for 0-based, +1 for the '---'
        raise _BadRecord(f"invalid YAML front matter{where}: {problem}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise _BadRecord(f"YAML front matter is a {_type_name(meta)}, expected a mapping of keys")
    bad_keys = [k for k in meta if not isinstance(k, str)]
    if bad_keys:
        raise _BadRecord(f"YAML front matter key {bad_keys[0]!r} is not a string")
    if "text" in meta:
        raise _BadRecord("YAML front matter has a 'text' key; in Markdown the body is the text")
    return {**meta, "text": "\n".join(lines[end + 1:]).strip()}


# --- JSON -------------------------------------------------------------------------
def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _BadRecord(f"duplicate key {k!r}")
        out[k] = v
    return out


def _json_loads(text: str, *, line: int | None = None) -> Any:
    """json.loads with the line and column in the reason, duplicate keys refused.
    `line`: the .jsonl line the text came from."""
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        at = line if line is not None else exc.lineno
        raise _BadRecord(f"invalid JSON at line {at}, column {exc.colno}: {exc.msg}") from None


def _type_name(v: Any) -> str:
    return {dict: "object", list: "list", str: "string", int: "number", float: "number",
            bool: "boolean", type(None): "null"}.get(type(v), type(v).__name__)


def _decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _BadRecord(f"not valid UTF-8 (first bad byte at offset {exc.start})") from None


# --- files --------------------------------------------------------------------------
def _read_limited(path: Path, max_bytes: int) -> bytes:
    with open(path, "rb") as fh:
        raw = fh.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise _BadRecord(f"file is over the size limit of {max_bytes} bytes")
    return raw


def _read_markdown(full: Path, rel: str, max_bytes: int) -> Iterator[Item]:
    raw = b""
    try:
        raw = _read_limited(full, max_bytes)
        fields = parse_markdown(_decode(raw))
    except _BadRecord as exc:
        yield ReadFailure(rel, str(exc), rel, None, _hash(raw))
        return
    yield RawRecord(fields, rel, raw, rel)


def _read_json(full: Path, rel: str, max_bytes: int) -> Iterator[Item]:
    raw = b""
    try:
        raw = _read_limited(full, max_bytes)
        data = _json_loads(_decode(raw))
    except _BadRecord as exc:
        yield ReadFailure(rel, str(exc), rel, None, _hash(raw))
        return
    if isinstance(data, dict):
        yield RawRecord(data, rel, raw, rel)
        return
    if not isinstance(data, list):
        yield ReadFailure(rel, f"expected a JSON object or a list of objects, got a {_type_name(data)}",
                          rel, None, _hash(raw))
        return
    for i, obj in enumerate(data):
        uri = f"{rel}#/{i}"
        item_raw = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
        if isinstance(obj, dict):
            yield RawRecord(obj, uri, item_raw, rel)
        else:
            yield ReadFailure(uri, f"list item {i} is a {_type_name(obj)}, expected an object",
                              rel, None, _hash(item_raw))


def _read_jsonl(full: Path, rel: str, max_bytes: int) -> Iterator[Item]:
    """Line by line: one bad line fails alone. The size limit applies per line
    (per record), so a large corpus in one .jsonl file still loads."""
    with open(full, "rb") as fh:
        n = 0
        while True:
            chunk = fh.readline(max_bytes + 2)  # +2: room for "\r\n"
            if not chunk:
                return
            n += 1
            uri = f"{rel}#L{n}"
            if len(chunk.rstrip(b"\r\n")) > max_bytes:
                while chunk and not chunk.endswith(b"\n"):  # skip the rest of the long line
                    chunk = fh.readline(1 << 20)
                yield ReadFailure(uri, f"line is over the size limit of {max_bytes} bytes", rel, n, None)
                continue
            raw = chunk.rstrip(b"\r\n")
            if n == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]
            if not raw.strip():
                continue
            try:
                obj = _json_loads(_decode(raw), line=n)
            except _BadRecord as exc:
                yield ReadFailure(uri, str(exc), rel, n, _hash(raw))
                continue
            if isinstance(obj, dict):
                yield RawRecord(obj, uri, raw, rel, n)
            else:
                yield ReadFailure(uri, f"line {n} is a JSON {_type_name(obj)}, expected an object",
                                  rel, n, _hash(raw))


_READERS = {".md": _read_markdown, ".json": _read_json, ".jsonl": _read_jsonl}


def _hash(raw: bytes) -> str | None:
    return "sha256:" + sha256(raw).hexdigest() if raw else None


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
