"""Structural limits checked before a document's YAML or JSON is turned into objects.

The file size limit (canon.sources.corpus.reader.DEFAULT_MAX_BYTES) bounds the bytes,
but not the work: a few hundred bytes of YAML aliases expand to billions of values
("billion laughs"), and a bracket nested 100,000 deep makes the recursive parsers
(PyYAML's composer, json's scanner) and every walk over the record raise
RecursionError. Both checks here run in one linear pass over the input and refuse
it with a reason (a BadRecord, so the file is quarantined like any unreadable one)
before anything is constructed. The limits are described in docs/contracts.md,
"Document limits".
"""

from __future__ import annotations

import re
from typing import Iterable

import yaml

from canon.sources.corpus.records import BadRecord

# Nesting of lists and mappings. Front matter and JSON records are flat (a list of
# roles, a small metadata mapping); 64 leaves room and stays far below Python's
# recursion limit for every recursive walk over a record (the gate, json.dumps).
MAX_DEPTH = 64
# YAML aliases (`*name`) in one front matter, and the size they may add: each alias
# counts the nodes and scalar characters of what it stands for, as if written out.
MAX_ALIASES = 100
MAX_ALIAS_EXPANSION = 100_000

_COLLECTION_START = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_COLLECTION_END = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def check_yaml(text: str, loader: type, fallback: type) -> None:
    """Refuse YAML nested deeper than MAX_DEPTH or whose aliases expand beyond the
    limits, reading only the event stream (flat: no objects, no recursion).
    `loader` may be libyaml's, which stops at its own nesting limit (1,000) with a
    scanner error before emitting the events that show the depth: on any error the
    pure-Python `fallback` is read too, whose event stream runs up to the error.
    A syntax error itself is left for the real load to report with its line."""
    try:
        _check_events(yaml.parse(text, Loader=loader))
    except yaml.YAMLError:
        try:
            _check_events(yaml.parse(text, Loader=fallback))
        except yaml.YAMLError:
            return


def _check_events(events: Iterable[yaml.Event]) -> None:
    depth = aliases = expansion = 0
    anchored: dict[str, int] = {}           # anchor -> weight of its node (nodes + scalar chars)
    open_weights: list[int] = [0]           # weight accumulated by each open collection
    open_anchors: list[str | None] = []
    for event in events:
        if isinstance(event, _COLLECTION_START):
            depth += 1
            if depth > MAX_DEPTH:
                raise BadRecord(f"YAML front matter is nested more than {MAX_DEPTH} levels deep")
            open_weights.append(1)
            open_anchors.append(event.anchor)
        elif isinstance(event, _COLLECTION_END):
            depth -= 1
            weight = open_weights.pop()
            anchor = open_anchors.pop()
            if anchor is not None:
                anchored[anchor] = weight
            open_weights[-1] += weight
        elif isinstance(event, yaml.ScalarEvent):
            weight = 1 + len(event.value)
            if event.anchor is not None:
                anchored[event.anchor] = weight
            open_weights[-1] += weight
        elif isinstance(event, yaml.AliasEvent):
            aliases += 1
            if aliases > MAX_ALIASES:
                raise BadRecord(f"YAML front matter has more than {MAX_ALIASES} aliases")
            weight = anchored.get(event.anchor, 1)  # an unknown anchor: the load reports it
            expansion += weight
            if expansion > MAX_ALIAS_EXPANSION:
                raise BadRecord(
                    f"YAML front matter aliases expand to more than {MAX_ALIAS_EXPANSION} "
                    "nodes and characters (an alias bomb?)")
            open_weights[-1] += weight


# A JSON string (escapes skipped; an unterminated one runs to the end, so every
# attempt matches and the scan stays linear) or one bracket.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*(?:"|\\?\Z)|[\[\]{}]', re.DOTALL)


def check_json(text: str, *, what: str = "JSON") -> None:
    """Refuse JSON nested deeper than MAX_DEPTH, counting brackets outside strings in
    one pass (invalid JSON is left for json.loads to report with its position)."""
    depth = 0
    for m in _JSON_TOKEN.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise BadRecord(f"{what} is nested more than {MAX_DEPTH} levels deep")
        elif c in "]}":
            depth -= 1

