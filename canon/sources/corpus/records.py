"""What reading a corpus yields: raw records, read failures, and the small helpers every
file reader shares (decoding, the size limit, the content hash)."""

from __future__ import annotations

from dataclasses import dataclass, field
from hashlib import sha256
from pathlib import Path
from typing import Any, Iterator, Union


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
    # False for a Markdown file without YAML front matter: `fields` is only its `text`, and the gate
    # admits it only under a contract with `defaults` (canon.registry.defaults).
    front_matter: bool = True

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


class BadRecord(Exception):
    """A read-level failure of one file or line (message = the reason)."""


def type_name(v: Any) -> str:
    return {dict: "object", list: "list", str: "string", int: "number", float: "number",
            bool: "boolean", type(None): "null"}.get(type(v), type(v).__name__)


def decode(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise BadRecord(f"not valid UTF-8 (first bad byte at offset {exc.start})") from None


def read_limited(path: Path, max_bytes: int) -> bytes:
    with open(path, "rb") as fh:
        raw = fh.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise BadRecord(f"file is over the size limit of {max_bytes} bytes")
    return raw


def content_hash(raw: bytes) -> str | None:
    return "sha256:" + sha256(raw).hexdigest() if raw else None
