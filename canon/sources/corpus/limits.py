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

from canon.core import bounded_yaml
from canon.sources.corpus.records import BadRecord

# The limits are shared with every YAML Canon reads (canon/core/bounded_yaml.py).
MAX_DEPTH = bounded_yaml.MAX_DEPTH
MAX_ALIASES = bounded_yaml.MAX_ALIASES
MAX_ALIAS_EXPANSION = bounded_yaml.MAX_ALIAS_EXPANSION


def check_yaml(text: str, loader: type, fallback: type) -> None:
    """Refuse front matter nested deeper than MAX_DEPTH or whose aliases expand beyond
    the limits, reading only the event stream (canon.core.bounded_yaml.check_yaml); the
    refusal is a BadRecord, so the file is quarantined with the reason."""
    bounded_yaml.check_yaml(text, loader, fallback, what="YAML front matter", error=BadRecord)


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

