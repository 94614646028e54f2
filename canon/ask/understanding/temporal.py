"""When a question is about: a day relative to the clock ("yesterday", "today",
"right now", "three weeks ago"), a period (ISO weeks, quarters, halves, years,
months as words or YYYY-MM, month ranges, "last week"), the edge of a period ("end of June 2026", "the June 2026
close"), and the revisions it names ("v2", "version 1", "the first version",
"the previous definition", "the current one") or compares ("what changed
between v1 and v2", "the old and the new definition").

Full dates stay in canon/core/dates.py (`find_date`). Every phrase list here is
about the grammar of dates and of naming a revision, never about a corpus.
Relative words and version words are read with the matched objects' own names
blanked out (`strip_names`), so a name holding "current" or "first" is not
read as a date or a version. Period arithmetic uses dateutil's relativedelta."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from dateutil.relativedelta import relativedelta

from canon.ask.understanding.fiscal_periods import FiscalRef, find_fiscal
from canon.ask.understanding.match import normalize
from canon.core.dates import MONTH_NAMES, MONTHS, ORDINALS, AmbiguousDate, date_spans
from canon.core.errors import CanonInputError
from canon.core.fiscal_calendar import FiscalCalendar

Period = tuple[dt.date, dt.date]   # half-open [start, end)


@dataclass(frozen=True)
class VersionRef:
    """A revision the question names: by its version string ("2"), by its position
    among the approved revisions ("first"), or relative to the clock day
    ("previous", "current", "latest")."""

    number: str | None = None
    ordinal: int | None = None
    relative: str | None = None
    step: int = 0   # the approved revision before (-1) or after (+1) the one named ("prior to v2")
    day: dt.date | None = None   # the revision in effect on a day ("the one used in March 2026")


@dataclass
class TimeRefs:
    day: dt.date | None = None
    period: Period | None = None
    period_label: str = ""
    relative_day: bool = False          # `day` was computed from the clock
    versions: tuple[VersionRef, ...] = ()
    compare: bool = False
    ambiguous: tuple[dt.date, ...] = ()   # a numeric date that reads as these days (canon/core/dates.py)
    periods: tuple[tuple[Period, str], ...] = ()   # two or more periods named apart ("June and July 2026")
    # A fiscal period named when no fiscal calendar says which days it covers (or one the calendar
    # cannot hold): "FY2027: no fiscal calendar is configured". Asked back, never guessed.
    fiscal_unknown: str = ""


# ---------------------------------------------------------------- names blanked out

PLACEHOLDER = "#"


def strip_names(normalized_question: str, names: list[str]) -> str:
    """The normalized question with each matched object name replaced by PLACEHOLDER."""
    q = f" {normalized_question} "
    for n in sorted(set(names), key=len, reverse=True):
        if n:
            q = q.replace(f" {n} ", f" {PLACEHOLDER} ")
    return q.strip()


def blank_names(question: str, names: list[str]) -> str:
    """The raw question with each matched name (normalized words, any separators) replaced by
    PLACEHOLDER: what periods are read from, so a name holding a year or a month is not a period.
    Read word by word (a pattern compiled per name cost more than the rest of the question)."""
    spans = [(m.start(), m.end(), m.group().lower()) for m in _ALNUM.finditer(question)]
    words = [w for _, _, w in spans]
    cut: list[tuple[int, int]] = []
    taken = [False] * len(words)
    for n in sorted(set(names), key=len, reverse=True):
        nw = n.split()
        if not nw:
            continue
        k = len(nw)
        for i in range(len(words) - k + 1):
            if words[i:i + k] == nw and not any(taken[i:i + k]):
                taken[i:i + k] = [True] * k
                cut.append((spans[i][0], spans[i + k - 1][1]))
    for a, b in sorted(cut, reverse=True):
        question = question[:a] + f" {PLACEHOLDER} " + question[b:]
    return question


_ALNUM = re.compile(r"[A-Za-z0-9]+")


# ---------------------------------------------------------------- relative days

# Words that put the question on the clock's day (or next to it).
_RELATIVE_DAYS = [
    (re.compile(r"\bday before yesterday\b"), -2),
    (re.compile(r"\byesterday(?: s)?\b"), -1),
    (re.compile(r"\btomorrow(?: s)?\b"), 1),
    (re.compile(r"\b(?:today(?: s)?|right now|as of now|now|currently|at present|at the moment|present day)\b"), 0),
]
# "current" names the clock's day unless it is what the revision asked for precedes.
_CURRENT = re.compile(r"\bcurrent\b")
_BEFORE_CURRENT = re.compile(r"\b(?:before|prior to|preceding)\s+(?:the\s+)?current\b")


# "3 days ago", "two weeks ago", "a fortnight ago", "a month ago": a day counted back from the clock.
_COUNT_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}
_AGO = re.compile(rf"\b(\d{{1,3}}|{'|'.join(_COUNT_WORDS)})\s+(day|week|fortnight|month|year)s?\s+ago\b")


def days_ago(stripped: str, clock: dt.date) -> dt.date | None:
    """The day "N days / weeks / months / years ago" names, counted back from the clock (a month
    back from March 31 is February's last day, dateutil's relativedelta)."""
    m = _AGO.search(stripped)
    if not m:
        return None
    n = int(m[1]) if m[1].isdigit() else _COUNT_WORDS[m[1]]
    if m[2] == "fortnight":
        return clock - dt.timedelta(weeks=2 * n)
    return clock - relativedelta(**{m[2] + "s": n})


def relative_offset(stripped: str) -> int | None:
    """Days from the clock the question is about, or None when it names no relative day."""
    for rx, offset in _RELATIVE_DAYS:
        if rx.search(stripped):
            return offset
    if _CURRENT.search(stripped) and not _BEFORE_CURRENT.search(stripped):
        return 0
    return None


_RELATIVE_PERIOD = re.compile(r"\b(this|last|previous|next)\s+(week|month|quarter|year)\b")
# A period a figure is measured against, not the one asked about: "when booking pace is 10
# percent <behind last year>", "more parcels <than last month>", "<up on last quarter>".
_BASELINE_BEFORE = re.compile(r"\b(?:behind|ahead\s+of|than|up\s+on|down\s+on)\s+(?:the\s+same\s+\w+\s+)?$")


def _relative_match(stripped: str) -> re.Match | None:
    """The first relative period named that is not a baseline (`_BASELINE_BEFORE`)."""
    return next((m for m in _RELATIVE_PERIOD.finditer(stripped)
                 if not _BASELINE_BEFORE.search(stripped, 0, m.start())), None)


def relative_period(stripped: str, clock: dt.date) -> tuple[Period, str] | None:
    """'this week', 'last month', 'last quarter', 'next year' against the clock."""
    m = _relative_match(stripped)
    if not m:
        return None
    return _relative(m, clock)


def relative_edge(stripped: str, clock: dt.date) -> tuple[dt.date, str] | None:
    """The edge of a relative period, a day: "the end of last quarter", "the last day of last
    month", "the start of this year" (`_edge`); None when the period is read whole."""
    m = _relative_match(stripped)
    if not m:
        return None
    period, label = _relative(m, clock)
    return _edge(stripped, m.start(), m.end(), period, label)


def _relative(m: re.Match, clock: dt.date) -> tuple[Period, str]:
    step = {"this": 0, "last": -1, "previous": -1, "next": 1}[m[1]]
    if m[2] == "week":   # the ISO week, Monday to Sunday
        start = clock - dt.timedelta(days=clock.weekday()) + dt.timedelta(weeks=step)
        year, week, _ = start.isocalendar()
        return (start, start + dt.timedelta(days=7)), f"{year}-W{week:02d}"
    if m[2] == "month":
        start = clock.replace(day=1) + relativedelta(months=step)
        return (start, start + relativedelta(months=1)), f"{start:%B %Y}"
    if m[2] == "quarter":
        q0 = clock.replace(month=3 * ((clock.month - 1) // 3) + 1, day=1) + relativedelta(months=3 * step)
        return (q0, q0 + relativedelta(months=3)), f"Q{(q0.month - 1) // 3 + 1} {q0.year}"
    y0 = dt.date(clock.year + step, 1, 1)
    return (y0, y0 + relativedelta(years=1)), str(y0.year)


# ---------------------------------------------------------------- periods

_ORD = ORDINALS
# Nouns of what reports over a period ("the 2026 annual report", "our 2025 audit").
_REPORTS = (r"(?:reports?|reporting|accounts|audits?|reviews?|filings?|returns?|submissions?|statements?|results|"
            r"scorecards?|dashboards?|packs?|publications?|close|closing|year-end)")
_ORD_RX = "|".join(_ORD)
_Y = r"(\d{4})"
_PERIODS = [
    ("quarter", re.compile(rf"\bQ([1-4])\s*[-/]?\s*{_Y}\b", re.I), lambda m: (int(m[2]), int(m[1]))),
    ("quarter", re.compile(rf"\b{_Y}\s*[-/]?\s*Q([1-4])\b", re.I), lambda m: (int(m[1]), int(m[2]))),
    ("quarter", re.compile(rf"\b({_ORD_RX})\s+quarter\s+(?:of\s+)?{_Y}\b", re.I), lambda m: (int(m[2]), _ORD[m[1].lower()])),
    ("half", re.compile(rf"\bH([12])\s*[-/]?\s*{_Y}\b", re.I), lambda m: (int(m[2]), int(m[1]))),
    ("half", re.compile(rf"\b{_Y}\s*[-/]?\s*H([12])\b", re.I), lambda m: (int(m[1]), int(m[2]))),
    ("half", re.compile(rf"\b(first|second|1st|2nd)\s+half\s+(?:of\s+)?{_Y}\b", re.I), lambda m: (int(m[2]), _ORD[m[1].lower()])),
    ("range", re.compile(rf"\b(?:between|from)\s+({MONTH_NAMES})\.?(?:\s+{_Y})?\s+(?:and|to|through|until|till|-)\s+"
                         rf"({MONTH_NAMES})\.?\s+{_Y}\b", re.I),
     lambda m: (int(m[2] or m[4]), MONTHS[m[1].lower()], int(m[4]), MONTHS[m[3].lower()])),
    ("month", re.compile(rf"\b({MONTH_NAMES})\.?\s+{_Y}\b", re.I), lambda m: (int(m[2]), MONTHS[m[1].lower()])),
    # A month with its year cut to two digits after an apostrophe: "Aug '26", "Sept ’26".
    ("month", re.compile(rf"\b({MONTH_NAMES})\.?\s*['’](\d{{2}})\b", re.I),
     lambda m: (2000 + int(m[2]), MONTHS[m[1].lower()])),
    # ISO 8601 weeks, Monday to Sunday: "2026-W35", "W35 2026", "week 35 of 2026", "ISO week 35, 2026".
    ("week", re.compile(rf"\b{_Y}-?W(\d{{1,2}})\b", re.I), lambda m: (int(m[1]), int(m[2]))),
    ("week", re.compile(rf"\b(?:ISO\s+)?(?:week|wk|W)\s*(\d{{1,2}})(?:\s+of|,)?\s+{_Y}\b", re.I),
     lambda m: (int(m[2]), int(m[1]))),
    ("month", re.compile(rf"\b{_Y}-(0[1-9]|1[0-2])\b(?!-\d)"), lambda m: (int(m[1]), int(m[2]))),
    ("year", re.compile(rf"\b(?:full[- ]year|calendar\s+year|the\s+year)\s+{_Y}\b", re.I), lambda m: (int(m[1]),)),
    ("year", re.compile(rf"\b{_Y}\s+(?:calendar|full)\s+year\b", re.I), lambda m: (int(m[1]),)),
    ("year", re.compile(rf"\b(?:in|for|during|over|throughout|across)\s+(?:the\s+)?{_Y}\b(?!\s*[-/]?\s*(?:\d|[QH][1-4]\b|W\d))", re.I),
     lambda m: (int(m[1]),)),
    # A year that dates a report, an audit or a close ("the 2026 annual yield report", "our 2025
    # audit", "the 2026 close"): the year the report covers, a name between them blanked ("the 2025
    # annual <#> report"). Only the year is matched, so a close after it is read as the year's end
    # (`_END_AFTER`).
    ("year", re.compile(rf"\b(?:the|our|this|its|their|your)\s+{_Y}(?=\s+(?:[a-z&#-]+\s+){{0,3}}?{_REPORTS}\b)", re.I),
     lambda m: (int(m[1]),)),
]
# The edge of a period is a day: "end of June 2026", "end-June 2026", "the June 2026 close".
_END_BEFORE = re.compile(r"\b(?:(?:end|close)(?:\s+of|-)|(?:last|final)\s+day\s+of)\s*(?:the\s+)?$", re.I)
_START_BEFORE = re.compile(r"\b(?:(?:start|beginning|begin)(?:\s+of|-)|first\s+day\s+of)\s*(?:the\s+)?$", re.I)
_END_AFTER = re.compile(r"^\s*(?:month[- ]end\b|quarter[- ]end\b|year[- ]end\b|close\b|closing\b|end\b)", re.I)


def _period_of(kind: str, parts: tuple) -> tuple[Period, str]:
    if kind == "quarter":
        year, q = parts
        start = dt.date(year, 3 * (q - 1) + 1, 1)
        return (start, start + relativedelta(months=3)), f"Q{q} {year}"
    if kind == "half":
        year, h = parts
        start = dt.date(year, 6 * (h - 1) + 1, 1)
        return (start, start + relativedelta(months=6)), f"H{h} {year}"
    if kind == "range":
        y1, m1, y2, m2 = parts
        start, last = dt.date(y1, m1, 1), dt.date(y2, m2, 1)
        if last < start:
            raise ValueError("a range that ends before it starts")
        return (start, last + relativedelta(months=1)), f"{start:%B %Y} to {last:%B %Y}"
    if kind == "week":
        year, week = parts
        start = dt.date.fromisocalendar(year, week, 1)   # ValueError for a week the year lacks
        return (start, start + dt.timedelta(days=7)), f"{year}-W{week:02d}"
    if kind == "month":
        year, month = parts
        start = dt.date(year, month, 1)
        return (start, start + relativedelta(months=1)), f"{start:%B %Y}"
    start = dt.date(parts[0], 1, 1)
    return (start, start + relativedelta(years=1)), str(parts[0])


def find_period(text: str, *, source: str = "question") -> tuple[Period | None, str, dt.date | None]:
    """The first period the text names → (period, label, None), or the edge of one → (None, label, day)."""
    hits = []
    for kind, rx, parts in _PERIODS:
        for m in rx.finditer(text):
            hits.append((m.start(), -len(m[0]), kind, m, parts(m)))
    if not hits:
        return None, "", None
    _, _, kind, m, parts = min(hits, key=lambda h: (h[0], h[1]))
    try:
        period, label = _period_of(kind, parts)
    except (ValueError, OverflowError):
        raise CanonInputError(source, f"{m[0]!r} is outside the dates Canon can report on "
                                      "(years 1 to 9999, a whole period)") from None
    return _placed(text, m.start(), m.end(), period, label)


def _placed(text: str, start: int, end: int, period: Period, label: str) -> tuple[Period | None, str, dt.date | None]:
    """The period `text[start:end]` names as the text places it: a relation to it is the day
    beside it ("before April 2026"), its edge a day ("end of June 2026") → (None, label, day);
    else (period, label, None)."""
    relation = relation_before(text, start)
    if relation == "before":
        return None, f"before {label}", period[0] - dt.timedelta(days=1)
    if relation == "after":
        return None, f"after {label}", period[1]
    edge = _edge(text, start, end, period, label)
    if edge is not None:
        return None, edge[1], edge[0]
    return period, label, None


def _edge(text: str, start: int, end: int, period: Period, label: str) -> tuple[dt.date, str] | None:
    """The day at the edge of the period `text[start:end]` names: its last day after "end of",
    "last day of" or before "close" / "month-end", its first after "start of" / "first day of"."""
    before, after = text[max(0, start - 20):start], text[end:end + 12]
    if _END_BEFORE.search(before) or _END_AFTER.search(after):
        return period[1] - dt.timedelta(days=1), f"the end of {label}"
    if _START_BEFORE.search(before):
        return period[0], f"the start of {label}"
    return None


# Periods named one after the other, the year written once at the end: "June and July 2026",
# "June vs July 2026", "Q2 and Q3 2026", "June, July and August 2026".
_LIST_JOIN = r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|vs\.?|versus|&|against|compared\s+(?:to|with))\s+)(?:in\s+|for\s+)?"
_MONTH_LIST = re.compile(rf"\b((?:(?:{MONTH_NAMES})\.?{_LIST_JOIN})+)({MONTH_NAMES})\.?\s+(\d{{4}})\b", re.I)
_QUARTER_LIST = re.compile(rf"\b((?:Q[1-4]{_LIST_JOIN})+)Q([1-4])\s+(\d{{4}})\b", re.I)


def _whole_periods(text: str, taken: list[tuple[int, int]], source: str) -> list[tuple[int, int, Period, str]]:
    """(start, end, period, label) of each whole period the text names outside `taken` (not a
    range, not the edge of one, not a relation to it)."""
    found: list[tuple[int, int, Period, str]] = []
    taken = list(taken)
    for kind, rx, parts in _PERIODS:
        if kind == "range":
            continue
        for m in rx.finditer(text):
            if any(a <= m.start() < b or a < m.end() <= b for a, b in taken):
                continue
            before, after = text[max(0, m.start() - 20):m.start()], text[m.end():m.end() + 12]
            if _END_BEFORE.search(before) or _END_AFTER.search(after) or _START_BEFORE.search(before) \
                    or relation_before(text, m.start()):
                continue
            try:
                period, label = _period_of(kind, parts(m))
            except (ValueError, OverflowError):
                raise CanonInputError(source, f"{m[0]!r} is outside the dates Canon can report on") from None
            found.append((m.start(), m.end(), period, label))
            taken.append((m.start(), m.end()))
    return found


def find_periods(text: str, *, source: str = "question") -> list[tuple[Period, str]]:
    """Every period the text names, in order, when it names two or more apart (not a range,
    not the edge of one): "net revenue in June 2026 and in July 2026", "June vs July 2026",
    "Q2 and Q3 2026". Empty when it names fewer than two."""
    found: list[tuple[int, int, Period, str]] = []
    for m in _MONTH_LIST.finditer(text):
        year = int(m[3])
        for w in re.findall(MONTH_NAMES, m[1], re.I) + [m[2]]:
            found.append((m.start(), m.end(), *_period_of("month", (year, MONTHS[w.lower()]))))
    for m in _QUARTER_LIST.finditer(text):
        year = int(m[3])
        for q in re.findall(r"Q([1-4])", m[1], re.I) + [m[2]]:
            found.append((m.start(), m.end(), *_period_of("quarter", (year, int(q)))))
    found += _whole_periods(text, [(a, b) for a, b, _, _ in found], source)
    ordered = sorted(found, key=lambda f: (f[0], f[2]))
    # Two periods joined as a range ("Q4 2025-Q2 2026", "June 2025 to March 2026") are its ends,
    # not two periods asked apart: `find_range` reads the whole of it.
    if any(_RANGE_JOIN.match(text[a[1]:b[0]]) for a, b in zip(ordered, ordered[1:]) if a[1] <= b[0]):
        return []
    out: list[tuple[Period, str]] = []
    for _, _, period, label in ordered:
        if all(period != o[0] for o in out):
            out.append((period, label))
    # A period inside another one named ("Q3 2026 … in July 2026") is no second period.
    out = [o for o in out if not any(x is not o and x[0][0] <= o[0][0] and o[0][1] <= x[0][1] and x[0] != o[0]
                                     for x in out)] if len(out) > 1 else out
    return out if len(out) >= 2 else []


# ---------------------------------------------------------------- ranges and relations

# What joins the two ends of a range: "2026-07-01 to 2026-09-30", "July–September 2026",
# "from … through …". "And" joins them only after "between" ("June and July" may be two periods).
_JOIN = r"(?:to|through|thru|until|till|-|\u2013|\u2014)"
_RANGE_JOIN = re.compile(rf"^\s*{_JOIN}\s*$", re.I)
_AND_JOIN = re.compile(r"^\s*and\s*$", re.I)
_BETWEEN_BEFORE = re.compile(r"\bbetween\s+(?:the\s+)?$", re.I)
_MONTH_RANGE = re.compile(
    rf"(?P<between>\bbetween\s+)?\b(?P<m1>{MONTH_NAMES})\.?(?:\s+(?P<y1>\d{{4}}))?\s*"
    rf"(?P<join>{_JOIN}|and)\s*(?P<m2>{MONTH_NAMES})\.?\s+(?P<y2>\d{{4}})\b", re.I)
# Quarters or halves joined as a range, the year written once at the end: "Q1-Q2 2026", "Q3 to
# Q4 2026", "between Q1 and Q3 2026", "H1-H2 2026" (the year on both ends is two periods' range:
# `_PERIODS` reads each, `find_periods` the pair).
_PART_RANGE = re.compile(
    rf"(?P<between>\bbetween\s+)?\b(?P<kind>[QH])(?P<p1>[1-4])\s*(?P<join>{_JOIN}|and)\s*(?P=kind)(?P<p2>[1-4])"
    r"\s*[-/]?\s*(?P<y>\d{4})\b", re.I)
# "The week of 2026-03-30": the ISO week (Monday to Sunday) holding that day.
_WEEK_OF = re.compile(r"\bweek\s+(?:of|starting|beginning|commencing)\s+(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?(?:the\s+)?$", re.I)


def find_range(text: str, *, source: str = "question") -> tuple[Period, str] | None:
    """The first range of days or months the text names, whole: two full dates joined as a
    range, two months ("Jul-Sep 2026", "July 2026 - September 2026", "between November 2025
    and February 2026"), or "the week of" a day. None when it names none."""
    found: list[tuple[int, Period, str]] = []
    spans = date_spans(text, source=source)
    for (a0, a1, d1), (b0, _, d2) in zip(spans, spans[1:]):
        gap = text[a1:b0]
        if _RANGE_JOIN.match(gap) or (_AND_JOIN.match(gap) and _BETWEEN_BEFORE.search(text[:a0])):
            if d2 < d1:
                raise CanonInputError(source, f"{text[a0:b0 + 10]!r} ends before it starts")
            found.append((a0, (d1, d2 + dt.timedelta(days=1)), f"{d1.isoformat()} to {d2.isoformat()}"))
    for a0, _, day in spans:
        if _WEEK_OF.search(text[:a0]):
            start = day - dt.timedelta(days=day.weekday())
            found.append((a0, (start, start + dt.timedelta(days=7)), f"the week of {start.isoformat()}"))
    for m in _MONTH_RANGE.finditer(text):
        if m["join"].lower() == "and" and not m["between"]:
            continue
        y2 = int(m["y2"])
        m1, m2 = MONTHS[m["m1"].lower()], MONTHS[m["m2"].lower()]
        y1 = int(m["y1"]) if m["y1"] else (y2 if m1 <= m2 else y2 - 1)
        try:
            period, label = _period_of("range", (y1, m1, y2, m2))
        except ValueError:
            raise CanonInputError(source, f"{m[0]!r} is not a range of months Canon can report on") from None
        found.append((m.start(), period, label))
    # Two whole periods joined as a range ("Q4 2025-Q2 2026", "from Q3 2025 to March 2026").
    ends = sorted(_whole_periods(text, [], source), key=lambda f: f[0])
    for a, b in zip(ends, ends[1:]):
        gap = text[a[1]:b[0]]
        if a[1] <= b[0] and (_RANGE_JOIN.match(gap) or (_AND_JOIN.match(gap) and _BETWEEN_BEFORE.search(text[:a[0]]))):
            if b[2][1] <= a[2][0]:
                raise CanonInputError(source, f"{text[a[0]:b[1]]!r} ends before it starts")
            found.append((a[0], (a[2][0], b[2][1]), f"{a[3]} to {b[3]}"))
    for m in _PART_RANGE.finditer(text):
        if m["join"].lower() == "and" and not m["between"]:
            continue   # "Q2 and Q3 2026" names two periods (`find_periods`)
        kind, year, p1, p2 = m["kind"].upper(), int(m["y"]), int(m["p1"]), int(m["p2"])
        if kind == "H" and (p1 > 2 or p2 > 2):
            continue
        if p2 < p1:
            raise CanonInputError(source, f"{m[0]!r} ends before it starts")
        months = 3 if kind == "Q" else 6
        start, end = dt.date(year, months * (p1 - 1) + 1, 1), dt.date(year, months * (p2 - 1) + 1, 1)
        found.append((m.start(), (start, end + relativedelta(months=months)), f"{kind}{p1} to {kind}{p2} {year}"))
    if not found:
        return None
    _, period, label = min(found, key=lambda f: f[0])
    return period, label


# A day or a period put in relation: "before April 2026", "prior to 2026-04-01", "pre-April
# 2026" are the day before it begins; "after March 2026", "post-2025" the day after it ends.
_BEFORE_REL = re.compile(r"(?:\bpre-?\s*|\b(?:before|prior\s+to|preceding|earlier\s+than|ahead\s+of)\s+)"
                         r"(?:the\s+)?(?:start\s+of\s+(?:the\s+)?)?$", re.I)
_AFTER_REL = re.compile(r"(?:\bpost-?\s*|\b(?:after|following|later\s+than)\s+)(?:the\s+)?(?:end\s+of\s+(?:the\s+)?)?$",
                        re.I)


def relation_before(text: str, start: int) -> str | None:
    """"before" or "after" when the words just before `start` put what starts there in relation."""
    head = text[max(0, start - 30):start]
    if _BEFORE_REL.search(head):
        return "before"
    if _AFTER_REL.search(head):
        return "after"
    return None


# ---------------------------------------------------------------- versions and comparisons

_NUMBER_WORDS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5"}
# A version number followed by a document noun names that document ("the v3 proposal says…", a
# source the question quotes: canon/ask/understanding/parse.py), not a revision to answer from.
# "r3" names revision 3 as "v3" does, written together only ("the fill rate r1"); never a
# statistic's name ("the R2 score", "r2 squared").
_VERSION_NUMBER = re.compile(r"\b(?:(?:v|version|revision|rev)\s*(\d+|one|two|three|four|five)|r(\d{1,2}))\b"
                             r"(?!\s+(?:proposal|draft|wiki|page|doc|document|runbook|playbook|notes?|memo|article"
                             r"|thread|email|slide|deck|spreadsheet|score|scores|squared|value|values)\b)")
# A version word attached to what names a revision: "the previous definition", "the previous # definition".
_NOUN = r"(?:definition|definitions|version|revision|one|formula|rule|rules|wording|meaning|methodology)"
_BETWEEN = rf"(?:\s+(?:the|and|or|{re.escape(PLACEHOLDER)}|governed|metric|kpi|new|old|current|latest))*?"
_RELATIVE_WORDS = {"previous": "previous", "prior": "previous", "former": "previous", "old": "previous",
                   "older": "previous", "earlier": "previous", "legacy": "previous", "superseded": "previous",
                   "outdated": "previous", "retired": "previous", "current": "current", "present": "current",
                   "revised": "latest", "updated": "latest",
                   "new": "latest", "newer": "latest", "newest": "latest", "latest": "latest", "original": "first",
                   "initial": "first", "first": "first", "second": "second", "third": "third"}
_VERSION_WORD = re.compile(rf"\b({'|'.join(_RELATIVE_WORDS)})\b(?={_BETWEEN}\s+{_NOUN}\b)")
_BEFORE_THE_CURRENT = re.compile(rf"\b(?:before|prior to|preceding)\s+(?:the\s+)?current{_BETWEEN}\s+{_NOUN}\b")
_COMPARE = re.compile(r"\b(?:what\s+changed|what\s+has\s+changed|what\s+s\s+changed|change[ds]?\s+from|changed?\s+between"
                      r"|difference|differences|differ|differs|diff|diffs|compare|compared|comparison|vs|versus|contrast"
                      r"|same\s+as|different\s+(?:from|to|than)|(?:[a-z]{3,}er|more\s+[a-z]+|less\s+[a-z]+)\s+than)\b")
# Two relative revision words side by side name both ("the old and the current #", "old vs new").
_PAIR = re.compile(rf"\b({'|'.join(_RELATIVE_WORDS)})\s+(?:{re.escape(PLACEHOLDER)}\s+)?(?:and|vs|versus|to|with|against|or)"
                   rf"\s+(?:the\s+)?({'|'.join(_RELATIVE_WORDS)})\b")
# Every revision compared, none named: "compare the # definitions", "the differences between the # versions".
_COMPARE_ALL = re.compile(rf"\b(?:compare|comparison\s+of|diff|difference\s+between|differences\s+between)\s+(?:the\s+)?"
                          rf"(?:(?:two|both)\s+)?(?:{re.escape(PLACEHOLDER)}\s+)?(?:definitions|versions|revisions)\b")


# A version named in relation to its neighbours: "prior to v2", "the definition v2 replaced" is
# the approved revision before it; "after version 1", "what replaced v1" the one after it.
_PH = re.escape(PLACEHOLDER)
_VERSION_BEFORE = re.compile(rf"\b(?:before|prior\s+to|preceding|older\s+than|earlier\s+than|replaced\s+by|superseded\s+by|"
                             rf"predecessor\s+(?:of|to))\s+(?:the\s+)?(?:{_PH}\s+)?$")
_VERSION_AFTER = re.compile(rf"\b(?:after|following|newer\s+than|later\s+than|successor\s+(?:of|to)|replaced|superseded|"
                            rf"replacing|superseding)\s+(?:the\s+)?(?:{_PH}\s+)?$")
_REPLACED_AFTER = re.compile(r"^\s+(?:replaced|superseded|replaces|supersedes)\b")
# "Which definition did v2 replace?", "what did the no-show rate v2 supersede?": asked with
# "which"/"what" and "did"/"does" (the object's name between), the verb's base form after the
# version; "Did v2 replace the returns exclusion?" asks about v2 itself.
_ASKED_WHAT_IT_REPLACED = re.compile(r"\b(?:which|what)\b.*\b(?:did|does|do|would)\s+(?:\S+\s+){0,6}$")
_REPLACE_AFTER = re.compile(r"^\s+(?:replace|supersede)\b")


def _version_step(stripped: str, m: re.Match) -> int:
    head, tail = stripped[max(0, m.start() - 40):m.start()], stripped[m.end():m.end() + 16]
    if _VERSION_BEFORE.search(head) or _REPLACED_AFTER.match(tail) or (
            _REPLACE_AFTER.match(tail) and _ASKED_WHAT_IT_REPLACED.search(stripped[:m.start()])):
        return -1
    if _VERSION_AFTER.search(head):
        return 1
    return 0


def find_versions(stripped: str) -> tuple[VersionRef, ...]:
    """The revisions named, in the order named."""
    found: list[tuple[int, VersionRef]] = []
    for m in _VERSION_NUMBER.finditer(stripped):
        number = m[1] or m[2]
        found.append((m.start(), VersionRef(number=_NUMBER_WORDS.get(number, number).lstrip("0") or "0",
                                            step=_version_step(stripped, m))))
    for m in _BEFORE_THE_CURRENT.finditer(stripped):
        found.append((m.start(), VersionRef(relative="previous")))
    covered = [(m.start(), m.end()) for m in _BEFORE_THE_CURRENT.finditer(stripped)]
    words = [(m.start(), m[1]) for m in _VERSION_WORD.finditer(stripped)]
    for m in _PAIR.finditer(stripped):
        words += [(m.start(1), m[1]), (m.start(2), m[2])]
    for at, w in words:
        if any(a <= at < b for a, b in covered):
            continue
        word = _RELATIVE_WORDS[w]
        ref = (VersionRef(ordinal={"first": 1, "second": 2, "third": 3}[word]) if word in ("first", "second", "third")
               else VersionRef(relative=word))
        found.append((at, ref))
    out: list[VersionRef] = []
    for _, ref in sorted(found, key=lambda x: x[0]):
        if ref not in out:
            out.append(ref)
    return tuple(out)


# A change asked about without naming the revisions: the last change before the clock's day.
_CHANGED = re.compile(r"\b(?:what|how|when)\s+(?:has\s+|have\s+|did\s+|s\s+)?(?:\S+\s+){0,8}?chang(?:e|ed|es)\b")


# "What breaks if X changes", "which reports are affected when X changes": a change supposed,
# to ask what is built from X (canon/ask/understanding/parse.py, "downstream"), not one asked about.
_SUPPOSED_CHANGE = re.compile(r"\b(?:if|when|once|should)\s+(?:\S+\s+){0,6}?chang(?:e|es|ed)\b")


def is_comparison(stripped: str, versions: tuple[VersionRef, ...]) -> bool:
    """Two revisions compared, or a change asked about with none named."""
    if len(versions) >= 2:
        return bool(_COMPARE.search(stripped))
    if not versions and _COMPARE_ALL.search(stripped):
        return True
    return not versions and any(_asks_a_change(m) for m in _CHANGED.finditer(stripped)) and not (
        _SUPPOSED_CHANGE.search(stripped))


_PREPOSITIONS = frozenset({"about", "of", "for", "on", "with", "above", "below", "over", "under", "after", "before"})
_AUXILIARY = re.compile(r"\b(?:did|does|do|will|would|could|can|should|to)\b")


def _asks_a_change(m: re.Match) -> bool:
    """"what changed", "how did X change": a verb. "Above what case reserve <change> do we
    escalate", "what does the runbook say about <changes> above …" are nouns: the bare form is a
    verb only after an auxiliary ("did … change"), and none is after a preposition. "What are the
    changes in …" still asks for a change."""
    words = m.group().split()
    if len(words) > 1 and words[-2] in _PREPOSITIONS:
        return False   # "what does the runbook say about <changes> above 250,000"
    return words[-1] != "change" or bool(_AUXILIARY.search(m.group()))


# ---------------------------------------------------------------- the whole reading


# Revisions compared by the days they governed: "compare the take rate definition on 2026-03-01
# with the one on 2026-09-01", "the difference between the current take rate and the one used in
# March 2026". Words that say a comparison outright (a comparative may compare values).
_COMPARE_BY_DATE = re.compile(r"\b(?:difference|differences|differ|differs|diff|compare|compared|comparison|"
                              r"changed?\s+between|vs|versus|contrast)\b")


def _revisions_by_date(blanked: str, stripped: str) -> tuple[VersionRef, ...]:
    """Two revisions named by days or periods they governed (a period by its last day), or one
    so named beside "current"/"now"/"today"; empty otherwise."""
    try:
        days = [(a, d) for a, _, d in date_spans(blanked)]
        periods = find_periods(blanked)
        if not periods:
            period, _, edge = find_period(blanked)
            if period is not None:
                days.append((10 ** 9, period[1] - dt.timedelta(days=1)))
            elif edge is not None:
                days.append((10 ** 9, edge))
    except (AmbiguousDate, CanonInputError):
        return ()
    days += [(10 ** 9 + i, p[1] - dt.timedelta(days=1)) for i, (p, _) in enumerate(periods)]
    ordered = [d for _, d in sorted(days)]
    distinct = list(dict.fromkeys(ordered))
    if len(distinct) >= 2:
        return VersionRef(day=distinct[0]), VersionRef(day=distinct[1])
    if len(distinct) == 1 and relative_offset(stripped) == 0:
        return VersionRef(day=distinct[0]), VersionRef(relative="current")
    return ()


def _names_a_date(text: str) -> bool:
    """`text` names a day, a range or a period outright (not relative to the clock)."""
    try:
        if date_spans(text) or find_range(text):
            return True
    except AmbiguousDate:
        return True
    try:
        period, _, edge = find_period(text)
    except CanonInputError:
        return True
    return period is not None or edge is not None


def read_time(question: str, stripped: str, as_of: dt.date | None, today: dt.date,
              find_date, names: list[str] = (), *, compare_days: bool = True,
              calendar: FiscalCalendar | None = None) -> TimeRefs:
    """Dates, periods and revisions of one question. An explicit `as_of` is the
    reporting date, unless the question counts days from it ("yesterday"): then it
    is the clock. Without one, the clock is `today`. A full date in the question
    wins over a relative word. `compare_days`: two days or periods beside a comparison word
    compare the revisions governing them (not for a value question: "net revenue in June vs
    July" asks for two values). `calendar`: the organisation's fiscal year, which fiscal periods
    ("FY2027", "last fiscal year") are read in; without one they are asked back (`fiscal_unknown`)."""
    clock = as_of or today
    versions = find_versions(stripped)
    compare = is_comparison(stripped, versions)
    blanked = blank_names(question, list(names))
    # Fiscal periods are read first and blanked out: "fiscal Q3 2026" is no calendar quarter and
    # "the current fiscal year" no relative day.
    fiscal = find_fiscal(blanked, calendar, clock)
    if fiscal:
        blanked, stripped = _without_fiscal(blanked, stripped, fiscal)
    explicit = as_of is None and (_names_a_date(blanked) or any(not f.relative for f in fiscal))
    if versions and not compare and explicit and all(v.number is None and v.ordinal is None for v in versions):
        # "I know the new take rate includes ad charges, but what was the rule on 2026-03-01?": the
        # date says which revision; a relative word beside it ("new", "current") does not.
        versions = ()
    if compare_days and not versions and as_of is None and _COMPARE_BY_DATE.search(stripped):
        by_date = _revisions_by_date(blanked, stripped)
        if by_date:
            versions, compare = by_date, True
    if versions or compare:
        # A named revision is selected by version, not by date; the clock places
        # "previous" and "current".
        return TimeRefs(day=clock, versions=versions, compare=compare)
    if as_of is None:
        # A range is read whole before any one date in it ("between 2026-03-15 and 2026-04-15").
        try:
            rng = find_range(blanked)
        except AmbiguousDate:
            rng = None   # asked back below, as for any numeric date that reads two ways
        if rng is not None:
            return TimeRefs(period=rng[0], period_label=rng[1])
        several = _fiscal_periods(fiscal) or find_periods(blanked)
        if isinstance(several, str):
            return TimeRefs(fiscal_unknown=several)
        if several:
            # The hull for a definition (a clarify when revisions change within it); a value is
            # computed for each period named (canon/ask/pipeline.py `_metric_value`).
            hull = (min(p[0][0] for p in several), max(p[0][1] for p in several))
            return TimeRefs(period=hull, period_label=" and ".join(label for _, label in several), periods=tuple(several))
    try:
        day = find_date(question)
    except AmbiguousDate as e:
        # Which day it is is asked back, unless the reporting date was given.
        if as_of is None:
            return TimeRefs(ambiguous=e.readings)
        day = None
    # A period named outright ("Today I'm reconciling March 2026") wins over a relative word.
    offset = relative_offset(stripped) if day is None and not explicit else None
    if offset is not None:
        return TimeRefs(day=clock + dt.timedelta(days=offset), relative_day=True)
    back = days_ago(stripped, clock) if day is None else None
    if back is not None:
        return TimeRefs(day=back, relative_day=True)
    if day is None:
        counted = next((f for f in fiscal if f.relative), None) if not explicit else None
        if counted is not None:
            # "The end of last fiscal year" is a day; "last fiscal year" a period, read here with
            # `as_of` (the clock it counts from) and below without.
            if counted.period is None:
                return TimeRefs(fiscal_unknown=counted.unknown)
            edge = _edge(blanked, counted.start, counted.end, counted.period, counted.label)
            if edge is not None:
                return TimeRefs(day=edge[0], period_label=edge[1])
            if as_of is not None:
                return TimeRefs(period=counted.period, period_label=counted.label)
        # "Last month", "this quarter" count from the clock, which `as_of` is when given; "the end
        # of last quarter" is a day (a date or period named outright wins, as above).
        edge = relative_edge(stripped, clock) if not explicit else None
        if edge is not None:
            return TimeRefs(day=edge[0], period_label=edge[1])
        rel = relative_period(stripped, clock)
        if rel is not None and as_of is not None:
            return TimeRefs(period=rel[0], period_label=rel[1])
    if as_of is not None:
        return TimeRefs(day=as_of)
    if day is not None:
        # A day put in relation ("before 2026-04-01", "after 2026-03-31") is the day beside it.
        at = [a for a, _, d in date_spans(blanked) if d == day]
        relation = relation_before(blanked, at[0]) if at else None
        if relation is not None:
            return TimeRefs(day=day + dt.timedelta(days=-1 if relation == "before" else 1),
                            period_label=f"{relation} {day.isoformat()}")
        return TimeRefs(day=day)
    if fiscal:
        named = next((f for f in fiscal if not f.relative), fiscal[0])
        if named.period is None:
            return TimeRefs(fiscal_unknown=named.unknown)
        period, label, edge = _placed(blanked, named.start, named.end, named.period, named.label)
    else:
        period, label, edge = find_period(blanked)
    if edge is not None:
        return TimeRefs(day=edge, period_label=label)
    if period is None:
        rel = relative_period(stripped, clock)
        if rel is not None:
            period, label = rel
    return TimeRefs(period=period, period_label=label)


def _without_fiscal(blanked: str, stripped: str, fiscal: list[FiscalRef]) -> tuple[str, str]:
    """`blanked` with each fiscal phrase turned to spaces (positions kept, for `_edge` and
    `relation_before`), `stripped` without their words."""
    for f in fiscal:
        blanked = blanked[:f.start] + " " * (f.end - f.start) + blanked[f.end:]
        words = normalize(f.phrase)
        stripped = re.sub(rf"(?:^| ){re.escape(words)}(?= |$)", " ", stripped).strip()
    return blanked, stripped


def _fiscal_periods(fiscal: list[FiscalRef]) -> list[tuple[Period, str]] | str:
    """Two or more fiscal periods named outright ("FY2026 vs FY2027"), as `find_periods`; the
    reason one of them is unknown instead; empty when fewer are named."""
    named = [f for f in fiscal if not f.relative]
    if len(named) < 2:
        return []
    unknown = next((f for f in named if f.period is None), None)
    if unknown is not None:
        return unknown.unknown
    out: list[tuple[Period, str]] = []
    for f in named:
        if all(f.period != o[0] for o in out):
            out.append((f.period, f.label))
    return out if len(out) >= 2 else []

