"""An organisation's fiscal year, from the configuration's `calendar` keys
(docs/contracts.md, "Configuration"): the month it starts and which calendar
year gives it its name. "FY2027" is 2026-07-01 to 2027-06-30 for a July start
named by the year it ends in (the common convention), 2027-07-01 to 2028-06-30
when named by the year it starts in. Without the keys Canon knows no fiscal
year: a question that names one is asked back (canon/ask/pipeline.py).

Reading the phrases ("FY27", "Q3 FY2027", "last fiscal year") is
canon/ask/understanding/fiscal_periods.py; this module is the arithmetic."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from dateutil.relativedelta import relativedelta

Period = tuple[dt.date, dt.date]   # half-open [start, end), as canon/ask/understanding/temporal.py

NAMED_BY = ("end", "start")


@dataclass(frozen=True)
class FiscalCalendar:
    start_month: int = 1        # the month the fiscal year starts, 1 to 12
    named_by: str = "end"       # FY N ends in calendar year N ("end") or starts in it ("start")

    def __post_init__(self) -> None:
        if not 1 <= self.start_month <= 12:
            raise ValueError(f"a fiscal year starts in month 1 to 12, not {self.start_month}")
        if self.named_by not in NAMED_BY:
            raise ValueError(f"a fiscal year is named by the year it ends or starts in ({', '.join(NAMED_BY)}), "
                             f"not {self.named_by!r}")

    @property
    def _ends_a_year_later(self) -> int:
        """1 when a fiscal year's name is the calendar year after the one it starts in."""
        return int(self.start_month != 1 and self.named_by == "end")

    def first_calendar_year(self, fiscal_year: int) -> int:
        """The calendar year fiscal year `fiscal_year` starts in."""
        return fiscal_year - self._ends_a_year_later

    def year(self, fiscal_year: int) -> Period:
        start = dt.date(self.first_calendar_year(fiscal_year), self.start_month, 1)
        return start, start + relativedelta(years=1)

    def quarter(self, fiscal_year: int, q: int) -> Period:
        start = self.year(fiscal_year)[0] + relativedelta(months=3 * (q - 1))
        return start, start + relativedelta(months=3)

    def half(self, fiscal_year: int, h: int) -> Period:
        start = self.year(fiscal_year)[0] + relativedelta(months=6 * (h - 1))
        return start, start + relativedelta(months=6)

    def fiscal_year_of(self, day: dt.date) -> int:
        first = day.year if day.month >= self.start_month else day.year - 1
        return first + self._ends_a_year_later

    def quarter_of(self, day: dt.date) -> tuple[int, int]:
        """(fiscal year, quarter 1 to 4) of a day."""
        fy = self.fiscal_year_of(day)
        months = (day.year - self.year(fy)[0].year) * 12 + day.month - self.start_month
        return fy, months // 3 + 1

    def half_of(self, day: dt.date) -> tuple[int, int]:
        fy, q = self.quarter_of(day)
        return fy, (q + 1) // 2

    def describe(self) -> str:
        month = dt.date(2000, self.start_month, 1).strftime("%B")
        if self.start_month == 1:
            return "fiscal years are calendar years"
        return f"fiscal years start on {month} 1 and are named by the calendar year they {self.named_by} in"
