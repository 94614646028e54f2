"""A year that dates a report, an audit or a close names the period the report covers ("the
2026 annual operations report"), in a domain no gold set uses: a ski resort.

"Which capacity factor definition should the 2026 annual yield report use?" (library / wind
probe) was asked back for a date: a year was read as a period only after a preposition ("in
2026", "for 2026"). A year between a determiner and a report's noun dates it as well; a close
after it is the year's end (canon/ask/understanding/temporal.py, `_PERIODS`, `_REPORTS`)."""

from __future__ import annotations

import datetime as dt
from functools import partial

import pytest
from corpus_context import metric_revision, module_context

from canon.ask.pipeline import ask
from canon.ask.understanding import temporal
from canon.ask.understanding.match import normalize
from canon.core.dates import find_date

revision = partial(metric_revision, "ski.lift_uptime", "metric.ski.lift_uptime", "lift uptime")
V1 = revision("1", "2025-01-01", "2026-01-01", "Minutes a lift ran over minutes it was scheduled; wind holds count "
                                               "as downtime.")
V2 = revision("2", "2026-01-01", None, "Minutes a lift ran over minutes it was scheduled; wind holds are left out "
                                       "of both.")

ctx = module_context("ski_resort", [V1, V2])


@pytest.mark.parametrize("question, doc_id", [
    ("Which lift uptime definition should the 2026 annual operations report use?", V2["doc_id"]),
    ("Which lift uptime definition did our 2025 audit use?", V1["doc_id"]),
    ("lift uptime definition for the 2025 safety review", V1["doc_id"]),
    # a name between the year and the report is blanked before periods are read (library / wind
    # probe: "the 2025 annual library report", "library" a word of a name)
    ("Which lift uptime definition should the 2025 annual lift uptime report use?", V1["doc_id"]),
])
def test_the_year_of_the_report_selects_the_revision(ctx, question, doc_id):
    r = ask(ctx, question, "analyst")
    assert r.action == "answer" and r.evidence[0].doc_id == doc_id, (question, r.action, r.reason, r.answer)


def _time(question: str):
    unnamed = temporal.strip_names(normalize(question), ["lift uptime"])
    return temporal.read_time(question, unnamed, None, dt.date(2026, 12, 5), find_date, ["lift uptime"])


def test_only_a_report_noun_dates_a_period():
    assert _time("the 2026 annual operations report").period == (dt.date(2026, 1, 1), dt.date(2027, 1, 1))
    assert _time("lift uptime definition for our 2026 close").day == dt.date(2026, 12, 31)
    # A year beside another noun dates nothing the question asks for.
    assert _time("What does the 2026 snowmaking plan say about lift uptime?").period is None
