"""Markdown documents: YAML front matter (the record's fields) plus the body as `text`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

import yaml

from canon.sources.corpus.limits import check_yaml
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

# libyaml's C parser when PyYAML was built with it (faster on a large corpus); the
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
    check_yaml(text, _FrontMatterLoader, _PureFrontMatterLoader)  # depth and aliases bounded before anything is built
    try:
        return yaml.load(text, Loader=_FrontMatterLoader)  # noqa: S506 (safe subclass)
    except yaml.YAMLError:
        return yaml.load(text, Loader=_PureFrontMatterLoader)  # noqa: S506 (raises with the precise mark)

NO_FRONT_MATTER = "no YAML front matter (the file must start with a '---' line)"
_FENCE = re.compile(r"^---[ \t]*$")
_FENCE_END = re.compile(r"^(?:---|\.\.\.)[ \t]*$")


def parse_markdown(text: str) -> dict[str, Any]:
    """Front matter fields plus the body as `text`. Raises BadRecord."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not lines or not _FENCE.match(lines[0]):
        raise BadRecord(NO_FRONT_MATTER)
    end = next((i for i in range(1, len(lines)) if _FENCE_END.match(lines[i])), None)
    if end is None:
        raise BadRecord("unterminated YAML front matter (no closing '---' line)")
    try:
        meta = _load_front_matter("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or "unparseable"
        where = f" at line {mark.line + 2}" if mark is not None else ""  # +1 for 0-based, +1 for the '---'
        raise BadRecord(f"invalid YAML front matter{where}: {problem}") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise BadRecord(f"YAML front matter is a {type_name(meta)}, expected a mapping of keys")
    bad_keys = [k for k in meta if not isinstance(k, str)]
    if bad_keys:
        raise BadRecord(f"YAML front matter key {bad_keys[0]!r} is not a string")
    if "text" in meta:
        raise BadRecord("YAML front matter has a 'text' key; in Markdown the body is the text")
    return {**meta, "text": "\n".join(lines[end + 1:]).strip()}


def has_front_matter(text: str) -> bool:
    first = text.replace("\r\n", "\n").replace("\r", "\n").split("\n", 1)[0]
    return bool(_FENCE.match(first))


def read_markdown(full: Path, rel: str, max_bytes: int) -> Iterator[Item]:
    """One record per file. A file without front matter is a record of its body alone
    (`front_matter` False): its source contract's `defaults` may supply the rest, or the gate
    quarantines it with NO_FRONT_MATTER (canon/registry/gate.py)."""
    raw = b""
    try:
        raw = read_limited(full, max_bytes)
        text = decode(raw)
        if not has_front_matter(text):
            yield RawRecord({"text": text.strip()}, rel, raw, rel, front_matter=False)
            return
        fields = parse_markdown(text)
    except BadRecord as exc:
        yield ReadFailure(rel, str(exc), rel, None, content_hash(raw))
        return
    yield RawRecord(fields, rel, raw, rel)
