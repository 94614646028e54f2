"""YAML read with bounded work: nesting and aliases are checked on the event stream
before anything is constructed, and duplicate keys are an error.

A few hundred bytes of YAML aliases expand to billions of values ("billion
laughs"), and a bracket nested 100,000 deep makes PyYAML's recursive composer
raise RecursionError. `check_events` refuses both in one flat pass over the
parser's events; document front matter (canon/sources/corpus/limits.py) and the
configuration file (canon/core/settings.py) share it. The limits are described
in docs/contracts.md, "Document limits".
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

import yaml

# Nesting of lists and mappings: far below Python's recursion limit for every
# recursive walk over the loaded value.
MAX_DEPTH = 64
# YAML aliases (`*name`) in one text, and the size they may add: each alias counts
# the nodes and scalar characters of what it stands for, as if written out.
MAX_ALIASES = 100
MAX_ALIAS_EXPANSION = 100_000

_COLLECTION_START = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_COLLECTION_END = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def check_events(events: Iterable[yaml.Event], *, what: str, error: Callable[[str], Exception]) -> None:
    """Raise `error(reason)` when the events nest deeper than MAX_DEPTH or their aliases
    expand beyond the limits; `what` names the text in the reason ("YAML front matter")."""
    depth = aliases = expansion = 0
    anchored: dict[str, int] = {}           # anchor -> weight of its node (nodes + scalar chars)
    open_weights: list[int] = [0]           # weight accumulated by each open collection
    open_anchors: list[str | None] = []
    for event in events:
        if isinstance(event, _COLLECTION_START):
            depth += 1
            if depth > MAX_DEPTH:
                raise error(f"{what} is nested more than {MAX_DEPTH} levels deep")
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
                raise error(f"{what} has more than {MAX_ALIASES} aliases")
            weight = anchored.get(event.anchor, 1)  # an unknown anchor: the load reports it
            expansion += weight
            if expansion > MAX_ALIAS_EXPANSION:
                raise error(f"{what} aliases expand to more than {MAX_ALIAS_EXPANSION} "
                            "nodes and characters (an alias bomb?)")
            open_weights[-1] += weight


def check_yaml(text: str, loader: type, fallback: type, *, what: str, error: Callable[[str], Exception]) -> None:
    """`check_events` over `text`. `loader` may be libyaml's, which stops at its own
    nesting limit (1,000) with a scanner error before emitting the events that show the
    depth: on any error the pure-Python `fallback` is read too, whose event stream runs
    up to the error. A syntax error itself is left for the real load to report with its line."""
    try:
        check_events(yaml.parse(text, Loader=loader), what=what, error=error)
    except yaml.YAMLError:
        try:
            check_events(yaml.parse(text, Loader=fallback), what=what, error=error)
        except yaml.YAMLError:
            return


def _no_duplicate_keys(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node)


class UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, with a duplicate key an error instead of the last one winning."""


UniqueKeyLoader.add_constructor("tag:yaml.org,2002:map", _no_duplicate_keys)


def load_bounded(text: str, *, what: str, error: Callable[[str], Exception]) -> Any:
    """Safe-load `text` after the bounds check (`error(reason)` when over a limit). Syntax
    errors and duplicate keys raise yaml.YAMLError with its mark, for the caller to name the line."""
    check_yaml(text, UniqueKeyLoader, UniqueKeyLoader, what=what, error=error)
    return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)
