"""Metric and measure filters: `{{ Dimension('entity__dim') }} <op> <literal>` terms joined by AND.

Text from filters is never embedded in SQL as written: each term is parsed and
its operator and literal(s) re-rendered from their parts.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from canon.sources.dbt.semantic.errors import NotComputable

_FILTER_TERM = re.compile(
    r"""\s*\{\{\s*(?P<kind>Dimension|TimeDimension)\(\s*(?P<q>['"])(?P<ref>[A-Za-z0-9_]+)(?P=q)
        (?:\s*,\s*(?P<q2>['"])(?P<grain>[A-Za-z_]+)(?P=q2))?\s*\)\s*\}\}\s*
        (?:
            (?P<op>=|!=|<>|<=|>=|<|>)\s*(?P<lit>'(?:[^'\\]|'')*'|-?\d+(?:\.\d+)?|true|false)
          | (?P<isnull>is\s+(?:not\s+)?null)
          | (?P<inop>(?:not\s+)?in)\s*\((?P<inlist>\s*'(?:[^'\\]|'')*'(?:\s*,\s*'(?:[^'\\]|'')*')*\s*)\)
        )\s*""",
    re.IGNORECASE | re.VERBOSE,
)
_GRAINS = ("day", "week", "month", "quarter", "year")
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_STRING_LIT = re.compile(r"'(?:[^'\\]|'')*'")


def _split_and(text: str) -> list[str]:
    """Split on top-level AND outside quotes (a filter term never contains parentheses
    around AND, so quote-awareness is enough)."""
    parts, buf, i, in_q = [], [], 0, False
    while i < len(text):
        ch = text[i]
        if ch == "'":
            in_q = not in_q
        if not in_q:
            m = _AND.match(text, i)
            if m and i > 0:
                parts.append("".join(buf))
                buf, i = [], m.end()
                continue
        buf.append(ch)
        i += 1
    parts.append("".join(buf))
    return parts


@dataclass(frozen=True)
class FilterTerm:
    ref: str           # entity__dimension or metric_time
    sql_tail: str      # re-rendered operator and literal(s)
    grain: str | None  # TimeDimension(..., 'month'): compare the truncated value


def parse_filter(template: str) -> list[FilterTerm]:
    """Parse one `where_sql_template` into AND-ed terms, or raise NotComputable."""
    terms = []
    for part in _split_and(template):
        m = _FILTER_TERM.fullmatch(part)
        if not m:
            raise NotComputable(
                f"filter {template!r} is not supported in process: only "
                "{{ Dimension('entity__dimension') }} <op> <literal> terms joined by AND are")
        if m.group("op"):
            lit = m.group("lit")
            tail = f"{'<>' if m.group('op') == '!=' else m.group('op')} {lit.lower() if lit.lower() in ('true', 'false') else lit}"
        elif m.group("isnull"):
            tail = " ".join(m.group("isnull").lower().split())
        else:
            items = ", ".join(_STRING_LIT.findall(m.group("inlist")))
            tail = f"{' '.join(m.group('inop').lower().split())} ({items})"
        grain = (m.group("grain") or "").lower() or None
        if grain is not None and grain not in _GRAINS:
            raise NotComputable(f"filter {template!r}: time grain {grain!r} is not supported in process")
        terms.append(FilterTerm(ref=m.group("ref"), sql_tail=tail, grain=grain))
    return terms


def where_templates(filter_obj: Any) -> list[str]:
    """The where_sql_template strings of a (possibly null) WhereFilterIntersection."""
    if not filter_obj:
        return []
    if isinstance(filter_obj, str):
        return [filter_obj]
    if isinstance(filter_obj, Mapping):
        out = []
        for f in filter_obj.get("where_filters") or []:
            t = f.get("where_sql_template") if isinstance(f, Mapping) else f
            if t:
                out.append(str(t))
        return out
    raise NotComputable(f"unreadable filter {filter_obj!r}")
