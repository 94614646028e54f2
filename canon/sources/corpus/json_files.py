"""JSON and JSONL documents: one object per file, a list of objects, or one object per line.

Duplicate keys are refused and a parse error names its line and column.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

from canon.sources.corpus.limits import check_json
from canon.sources.corpus.records import (
    BadRecord,
    Item,
    RawRecord,
    ReadFailure,
    content_hash,
    decode,
    read_limited,
    type_name,
)


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise BadRecord(f"duplicate key {k!r}")
        out[k] = v
    return out


def _json_loads(text: str, *, line: int | None = None) -> Any:
    """json.loads with the line and column in the reason, duplicate keys refused.
    `line`: the .jsonl line the text came from. Nesting is bounded first (canon.sources.corpus.limits)."""
    check_json(text, what="JSON" if line is None else f"JSON at line {line}")
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys)
    except json.JSONDecodeError as exc:
        at = line if line is not None else exc.lineno
        raise BadRecord(f"invalid JSON at line {at}, column {exc.colno}: {exc.msg}") from None


def read_json(full: Path, rel: str, max_bytes: int) -> Iterator[Item]:
    raw = b""
    try:
        raw = read_limited(full, max_bytes)
        data = _json_loads(decode(raw))
    except BadRecord as exc:
        yield ReadFailure(rel, str(exc), rel, None, content_hash(raw))
        return
    if isinstance(data, dict):
        yield RawRecord(data, rel, raw, rel)
        return
    if not isinstance(data, list):
        yield ReadFailure(rel, f"expected a JSON object or a list of objects, got a {type_name(data)}",
                          rel, None, content_hash(raw))
        return
    for i, obj in enumerate(data):
        uri = f"{rel}#/{i}"
        item_raw = json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")
        if isinstance(obj, dict):
            yield RawRecord(obj, uri, item_raw, rel)
        else:
            yield ReadFailure(uri, f"list item {i} is a {type_name(obj)}, expected an object",
                              rel, None, content_hash(item_raw))


def read_jsonl(full: Path, rel: str, max_bytes: int) -> Iterator[Item]:
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
                obj = _json_loads(decode(raw), line=n)
            except BadRecord as exc:
                yield ReadFailure(uri, str(exc), rel, n, content_hash(raw))
                continue
            if isinstance(obj, dict):
                yield RawRecord(obj, uri, raw, rel, n)
            else:
                yield ReadFailure(uri, f"line {n} is a JSON {type_name(obj)}, expected an object",
                                  rel, n, content_hash(raw))
