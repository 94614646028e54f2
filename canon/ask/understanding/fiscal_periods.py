"""Fiscal periods a question names: "FY2027", "FY27", "fiscal 2027", "FY2026/27",
"Q3 FY2027", "FY27 Q3", "fiscal Q3 2027", "the third quarter of fiscal 2027",
"H1 FY27", "last fiscal year", "this fiscal quarter", "fiscal year to date".

Which days they cover depends on the organisation's calendar
(canon/core/fiscal_calendar.py, the configuration's `calendar` keys). Without
one a fiscal period is still found, so that it is asked back rather than read
as the calendar period its words contain ("fiscal Q3 2026" is not July to
September 2026 unless the fiscal year starts in January). Reading the edge of
one ("the end of FY2026") and a relation ("before FY2027") is left to
canon/ask/understanding/temporal.py, as for calendar periods."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from canon.core.dates import ORDINALS as _ORD
from canon.core.fiscal_calendar import FiscalCalendar, Period

_ORD_RX = "|".join(_ORD)
# "FY2027", "FY 27", "FY'27", "FY-2027", "fiscal 2027", "fiscal year 2027", "fiscal-year 2027"; a
# split year after it ("FY2026/27", "fiscal year 2026-27") names the fiscal year running across both.
_LEAD = r"(?:\bF\.?Y\.?\s*['’-]?\s*(?=\d)|\bfiscal(?:[\s-]+year)?\s+(?:of\s+)?(?=\d{4}))"
_YEAR = r"(\d{4}|\d{2})(?:\s*[/-]\s*(\d{4}|\d{2})(?!\d))?"
_FY = rf"{_LEAD}{_YEAR}"
_END = r"(?![\w])"

# (kind, pattern, group index of (part number or None, first year, split year))
_PATTERNS: list[tuple[str, re.Pattern, tuple]] = [
    ("year", re.compile(rf"{_FY}{_END}", re.I), (None, 1, 2)),
    ("year", re.compile(r"\b(\d{4})(?:\s*[/-]\s*(\d{4}|\d{2}))?\s+fiscal\s+year\b", re.I), (None, 1, 2)),
    ("quarter", re.compile(rf"\bQ([1-4])\s*(?:of\s+)?(?:the\s+)?{_FY}{_END}", re.I), (1, 2, 3)),
    ("quarter", re.compile(rf"{_FY}\s*[-/]?\s*Q([1-4])\b", re.I), (3, 1, 2)),
    ("quarter", re.compile(r"\bfiscal\s+Q([1-4])\s*(?:of\s+)?(\d{4})\b", re.I), (1, 2, None)),
    ("quarter", re.compile(rf"\b({_ORD_RX})\s+(?:fiscal\s+)?quarter\s+(?:of\s+)?(?:the\s+)?{_FY}{_END}", re.I), (1, 2, 3)),
    ("quarter", re.compile(rf"\b({_ORD_RX})\s+fiscal\s+quarter\s+(?:of\s+)?(\d{{4}})\b", re.I), (1, 2, None)),
    ("half", re.compile(rf"\bH([12])\s*(?:of\s+)?(?:the\s+)?{_FY}{_END}", re.I), (1, 2, 3)),
    ("half", re.compile(rf"{_FY}\s*[-/]?\s*H([12])\b", re.I), (3, 1, 2)),
    ("half", re.compile(r"\bfiscal\s+H([12])\s*(?:of\s+)?(\d{4})\b", re.I), (1, 2, None)),
    ("half", re.compile(rf"\b(first|second|1st|2nd)\s+(?:fiscal\s+)?half\s+(?:of\s+)?(?:the\s+)?{_FY}{_END}", re.I),
     (1, 2, 3)),
]
_RELATIVE = re.compile(r"\b(this|current|last|previous|prior|next)\s+fiscal\s+(year|quarter|half)\b", re.I)
_TO_DATE = re.compile(r"\b(?:FYTD|fiscal\s+YTD|fiscal[\s-]+year[\s-]+to[\s-]+date)\b", re.I)
_STEP = {"this": 0, "current": 0, "last": -1, "previous": -1, "prior": -1, "next": 1}


@dataclass(frozen=True)
class FiscalRef:
    start: int                 # where the phrase is in the text read
    end: int
    phrase: str
    relative: bool             # counted from the clock ("last fiscal year")
    period: Period | None      # None: no calendar, or one the phrase cannot be read in
    label: str                 # "FY2027", "Q3 FY2027" (the phrase as written when unknown)
    problem: str = ""          # why `period` is None

    @property
    def unknown(self) -> str:
        """What is asked back when `period` is None: "FY2027: no fiscal calendar is configured"."""
        return f"{self.phrase}: {self.problem}"


def _full_year(digits: str) -> int:
    return int(digits) if len(digits) == 4 else 2000 + int(digits)


def _absolute(kind: str, m: re.Match, groups: tuple, calendar: FiscalCalendar | None) -> FiscalRef | None:
    part_g, year_g, split_g = groups
    first = _full_year(m[year_g])
    split = m[split_g] if split_g else None
    phrase = m[0].strip()
    if split is not None:
        second = _full_year(split) if len(split) == 4 else first // 100 * 100 + int(split)
        if second != first + 1:
            return None   # "FY2026-2028" names no one fiscal year
    part = m[part_g] if part_g else None
    number = (_ORD[part.lower()] if part.lower() in _ORD else int(part)) if part else 0
    if calendar is None:
        return FiscalRef(m.start(), m.end(), phrase, False, None, phrase,
                         "no fiscal calendar is configured")
    if split is not None:
        if calendar.start_month == 1:
            return FiscalRef(m.start(), m.end(), phrase, False, None, phrase,
                             "it spans two calendar years, but the configured fiscal years are calendar years")
        fy = first + 1 if calendar.named_by == "end" else first
        name = f"FY{first}/{str(first + 1)[2:]}"
    else:
        fy = first
        name = f"FY{fy}"
    if kind == "year":
        return FiscalRef(m.start(), m.end(), phrase, False, calendar.year(fy), name)
    if kind == "quarter":
        return FiscalRef(m.start(), m.end(), phrase, False, calendar.quarter(fy, number), f"Q{number} {name}")
    return FiscalRef(m.start(), m.end(), phrase, False, calendar.half(fy, number), f"H{number} {name}")


def _relative(m: re.Match, calendar: FiscalCalendar | None, clock: dt.date) -> FiscalRef:
    phrase = m[0].strip()
    if calendar is None:
        return FiscalRef(m.start(), m.end(), phrase, True, None, phrase, "no fiscal calendar is configured")
    step, unit = _STEP[m[1].lower()], m[2].lower()
    if unit == "year":
        fy = calendar.fiscal_year_of(clock) + step
        return FiscalRef(m.start(), m.end(), phrase, True, calendar.year(fy), f"FY{fy}")
    per_year = 4 if unit == "quarter" else 2
    fy, n = calendar.quarter_of(clock) if unit == "quarter" else calendar.half_of(clock)
    index = fy * per_year + (n - 1) + step
    fy, n = divmod(index, per_year)
    if unit == "quarter":
        return FiscalRef(m.start(), m.end(), phrase, True, calendar.quarter(fy, n + 1), f"Q{n + 1} FY{fy}")
    return FiscalRef(m.start(), m.end(), phrase, True, calendar.half(fy, n + 1), f"H{n + 1} FY{fy}")


def _to_date(m: re.Match, calendar: FiscalCalendar | None, clock: dt.date) -> FiscalRef:
    phrase = m[0].strip()
    if calendar is None:
        return FiscalRef(m.start(), m.end(), phrase, True, None, phrase, "no fiscal calendar is configured")
    fy = calendar.fiscal_year_of(clock)
    start = calendar.year(fy)[0]
    return FiscalRef(m.start(), m.end(), phrase, True, (start, clock + dt.timedelta(days=1)),
                     f"FY{fy} to date ({start.isoformat()} to {clock.isoformat()})")


def find_fiscal(text: str, calendar: FiscalCalendar | None, clock: dt.date) -> list[FiscalRef]:
    """Every fiscal period the text names, in order, none overlapping another (the longest
    phrase at a place wins: "FY2027 Q3" is a quarter, not the year)."""
    hits: list[FiscalRef] = []
    for kind, rx, groups in _PATTERNS:
        for m in rx.finditer(text):
            ref = _absolute(kind, m, groups, calendar)
            if ref is not None:
                hits.append(ref)
    hits += [_relative(m, calendar, clock) for m in _RELATIVE.finditer(text)]
    hits += [_to_date(m, calendar, clock) for m in _TO_DATE.finditer(text)]
    out: list[FiscalRef] = []
    for ref in sorted(hits, key=lambda r: (r.start, -(r.end - r.start))):
        if all(ref.start >= o.end or ref.end <= o.start for o in out):
            out.append(ref)
    return out
