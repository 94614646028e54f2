"""Reporting dates: `--as-of`, else ISO, English or numeric dates in the question."""

from __future__ import annotations

import datetime as dt
import re

from dateutil import parser as date_parser

from canon.core.errors import CanonInputError


class AmbiguousDate(CanonInputError):
    """A numeric date that reads as two days ("08/07/2026": August 7 or 8 July). `readings`
    are both, month-first first; the question is asked back rather than one guessed."""

    def __init__(self, source: object, phrase: str, readings: tuple[dt.date, dt.date]):
        self.phrase, self.readings = phrase, readings
        super().__init__(source, f"{phrase!r} is ambiguous: {readings[0].isoformat()} (month/day/year) or "
                                 f"{readings[1].isoformat()} (day/month/year); write it as YYYY-MM-DD")

MONTHS = {m: i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august",
     "september", "october", "november", "december"], start=1)}
MONTHS.update({name[:3]: i for name, i in list(MONTHS.items())})
MONTHS["sept"] = 9
_MONTH = "|".join(sorted(MONTHS, key=len, reverse=True))
MONTH_NAMES = _MONTH   # the regex alternation of month names, for canon/ask/understanding/temporal.py

ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?\b")
MDY = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b", re.I)
DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\.?,?\s+(\d{{4}})\b", re.I)
# Numeric dates with a four-digit year: day and month first ("31/08/2026", "08.31.2026",
# "31-08-2026") or year first ("2026/08/31"). Not inside a longer run of digits and dots (a
# version "1.2.2026.4", a path).
NUMERIC = re.compile(r"(?<![\w./-])(?:\d{1,2}([/.-])\d{1,2}\1\d{4}|\d{4}([/.])\d{1,2}\2\d{1,2})(?![\w/-]|\.\d)")
# Ordinal words of a quarter or a half ("the third quarter of 2026", "the first half of FY27").
ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?\s+(\d{{4}})\b", re.I)


def parse_as_of(value: str | None, *, source: str = "--as-of") -> dt.date | None:
    if value is None or value == "":
        return None
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        try:
            found = find_date(value, source=source)
        except AmbiguousDate:
            raise
        except CanonInputError:
            found = None
        if found is None:
            raise CanonInputError(source, f"not a date: {value!r} (use YYYY-MM-DD)") from None
        return found


def _real(y: int, m: int, d: int, phrase: str, source: str) -> dt.date:
    """A date the text names; one that does not exist (February 30, a month 13,
    year 0) is an input error, not a question without a date."""
    try:
        return dt.date(y, m, d)
    except ValueError:
        raise CanonInputError(source, f"{phrase!r} is not a real date") from None


def numeric_date(phrase: str, *, source: str = "question") -> dt.date:
    """The day a numeric date names, read by dateutil's parser both ways a day and a month can
    stand (a year-first date has the month second): one reading is the date, two are
    `AmbiguousDate`, none is an input error."""
    year_first = phrase[:4].isdigit()
    readings = []
    for day_first in ((False,) if year_first else (False, True)):
        try:
            readings.append(date_parser.parse(phrase, dayfirst=day_first, yearfirst=year_first).date())
        except (ValueError, OverflowError):
            pass
    readings = list(dict.fromkeys(readings))
    if not readings:
        raise CanonInputError(source, f"{phrase!r} is not a real date")
    if len(readings) > 1:
        raise AmbiguousDate(source, phrase, (readings[0], readings[1]))
    return readings[0]


def date_spans(text: str, *, source: str = "question") -> list[tuple[int, int, dt.date]]:
    """Every full date named in the text as (start, end, day), in text order (ISO, 'June 30,
    2026', '1 February 2026', '31/08/2026'). A numeric date that reads two ways raises
    `AmbiguousDate`."""
    hits: list[tuple[int, int, dt.date]] = []
    for m in NUMERIC.finditer(text):
        hits.append((m.start(), m.end(), numeric_date(m[0], source=source)))
    for m in ISO.finditer(text):
        hits.append((m.start(), m.end(), _real(int(m[1]), int(m[2]), int(m[3]), m[0], source)))
    for m in MDY.finditer(text):
        hits.append((m.start(), m.end(), _real(int(m[3]), MONTHS[m[1].lower()], int(m[2]), m[0], source)))
    for m in DMY.finditer(text):
        hits.append((m.start(), m.end(), _real(int(m[3]), MONTHS[m[2].lower()], int(m[1]), m[0], source)))
    return sorted(hits)


def find_date(text: str, *, source: str = "question") -> dt.date | None:
    """The first full date named in the text (`date_spans`)."""
    hits = date_spans(text, source=source)
    return hits[0][2] if hits else None


def find_month(text: str, *, source: str = "question") -> tuple[dt.date, dt.date] | None:
    """A calendar month named without a day ('August 2026'): [first day, first day of next month)."""
    if find_date(text, source=source) is not None:
        return None
    m = MONTH_YEAR.search(text)
    if not m:
        return None
    year, month = int(m[2]), MONTHS[m[1].lower()]
    try:
        start = dt.date(year, month, 1)
        # The period ends on the first day of the next month: December 9999 has none.
        end = dt.date(year + (month == 12), month % 12 + 1, 1)
    except ValueError:
        raise CanonInputError(source, f"{m[0]!r} is outside the dates Canon can report on "
                                      f"(years 1 to 9999, a whole month)") from None
    return start, end
