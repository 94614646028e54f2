"""What a question writes after a name that changes what it asks for.

- A ratio: "net revenue <per order>", "billed energy <per customer>". The measure divided by a
  count of something is another measure than the one governed, unless the object's names or
  its definition already say so ("cost per parcel", a mean "per outage"). `ratio_after`. And
  the other way round: "<cost> per volunteer hour" divides another measure by the object
  (`ratio_before`).
- A breakdown: "net revenue <by region>", "… <for each depot>", "… <broken down by tariff>".
  A value question asks for one value per member of a dimension; Canon's semantic layer
  computes one total per period, never a breakdown. `breakdown`.
- A time grain: "net revenue <by month> in Q3 2026", "<for each quarter> of 2026". A value
  question asks for one value per month of the period (each under the revision that governs
  it), not the period's total. `time_grain` and `split_by_grain`.

A time grain is no breakdown and no ratio ("per month" is how often, not a denominator).
Called by canon/ask/pipeline.py; tests/test_qualifiers_after_a_name.py."""

from __future__ import annotations

import datetime as dt
import re
from typing import Iterable

from canon.ask.understanding.coverage import (
    MEASURE_NOUNS,
    _is_boundary,
    excluded_words,
    is_participle,
    name_end,
    name_start,
    question_words,
)
from canon.ask.understanding.match import singular

# The grains a value may be asked per, with the largest number of parts one question may ask
# for (a day-by-day year is a table, not an answer).
GRAINS = ("day", "week", "month", "quarter", "year")
MAX_PARTS = 31
_GRAIN_WORDS = {g: g for g in GRAINS} | {f"{g}s": g for g in GRAINS} | {
    "daily": "day", "weekly": "week", "monthly": "month", "quarterly": "quarter", "yearly": "year",
    "annually": "year", "annual": "year"}

# Words a question writes after "per" / "by" that are no denominator and no dimension: a time
# unit or grain, a share ("per cent"), a revision ("by the old definition"), a date ("by the end
# of June", "by now"), a manner ("by hand"). An agent ("reported by finance") is told by the word
# before "by" (`breakdown`).
_NOT_A_DIMENSION = frozenset({
    "cent", "centum", "mille", "annum", "definition", "definitions", "rule", "rules", "version", "revision",
    "default", "design", "hand", "mistake", "far", "itself", "then", "now", "today", "tomorrow",
    "yesterday", "end", "close", "contrast", "comparison", "law", "date", "the", "a", "an", "this", "that", "our",
    "your", "their", "its", "my", "which", "what", "how", "whom", "who", "old", "new", "current", "latest",
    "previous", "prior", "original", "governed", "official", "approved", "draft", "proposal", "hour", "hours",
    "minute", "minutes", "second", "seconds", "period", "periods", "half", "fiscal",
}) | frozenset(_GRAIN_WORDS)
_MONTHS = frozenset({"january", "february", "march", "april", "may", "june", "july", "august", "september",
                     "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
                     "sept", "oct", "nov", "dec"})
# What ends a dimension's words ("by tariff <in> October", "by region <for> Q3", "by region?").
_ENDS = frozenset({"in", "for", "over", "during", "on", "at", "from", "since", "between", "as", "of", "and",
                   "or", "vs", "versus", "compared", "with", "to", "until", "through", "under", "per", "by", "across",
                   "is", "was", "were", "are", "be", "been", "please", "so", "if", "when", "last", "this", "next",
                   # what the question asks for of the object ("… per solved ticket <definition>")
                   "definition", "definitions", "metric", "kpi", "formula", "value", "values", "figure"})
# Words before "by" that open a breakdown ("broken down by", "split by").
_BREAK_VERBS = frozenset({"down", "split", "grouped", "segmented", "sliced", "cut", "bucketed", "partitioned"})


def _tokens(question: str) -> list[str]:
    return list(question_words(question))


def _is_period_word(t: str) -> bool:
    return t in _MONTHS or t.isdigit() or bool(re.fullmatch(r"(?:q[1-4]|h[12]|fy\d{2,4}|\d{4}-\d{2}(?:-\d{2})?)", t))


def _noun_words(toks: list[str], k: int, limit: int = 3) -> list[str]:
    """Up to `limit` words from `toks[k]` that may be a noun phrase: no punctuation, no word that
    ends one (`_ENDS`), no period word."""
    out = []
    while k < len(toks) and len(out) < limit:
        t = toks[k]
        nxt = toks[k + 1] if k + 1 < len(toks) else "."
        if not t[0].isalnum() or t in _ENDS or _is_period_word(t) or (
                is_participle(t) and (not nxt[0].isalnum() or nxt in _ENDS)):
            break   # "… per outage <defined>?": a participle closing the question ends the phrase
        out.append(t)
        k += 1
    return out


def ratio_after(question: str, names: Iterable[str]) -> list[str]:
    """The words after "per" just after a whole name of the object ("net revenue <per order>",
    "… per <1,000> orders" gives ["orders"]); empty when none, or when they are a time unit or
    grain ("per month"), a share ("per cent") or a revision."""
    toks = _tokens(question)
    end = name_end(tuple(toks), names)
    if end is None or end >= len(toks) or toks[end] != "per":
        return []
    return _divisor(toks, end + 1)


_QUANTIFIERS = frozenset({"many", "much", "few", "more", "less", "fewer", "most", "least"})


def ratio_before(question: str, names: Iterable[str]) -> list[str]:
    """The words of a measure before "per" just before a whole name of the object ("<cost> per
    volunteer hour", "<shop income> per volunteer hour"): the object is the denominator of
    another measure. Empty when none, or when they are a model's row noun ("one row per …"); a
    number, a grammar word or a quantifier ends them ("how many <players> per rehearsal hour")."""
    toks = _tokens(question)
    # A denominator is named one at a time ("per volunteer <hour>" of "volunteer hours").
    names = {n for name in names for n in (name, " ".join(name.split()[:-1] + [singular(name.split()[-1])]))
             if name}
    start = name_start(tuple(toks), names)
    if start is None or start < 2 or toks[start - 1] != "per":
        return []
    words: list[str] = []
    k = start - 2
    while k >= 0 and len(words) < 3:
        t = toks[k]
        if not t.isalpha() or t in _ENDS or t in _QUANTIFIERS or _is_boundary(t) or _is_period_word(t):
            break
        words.insert(0, t)
        k -= 1
    return [] if not words or words[-1] in _ROW_NOUNS else words


def _divisor(toks: list[str], k: int) -> list[str]:
    """The noun words after "per" at `toks[k]` ("per <1,000> orders" gives ["orders"]); empty
    when they are a time unit or grain, a share or a revision (`_NOT_A_DIMENSION`)."""
    while k < len(toks) and (toks[k] in ("each", "every", "a", "an", "one", "single", ",") or toks[k].isdigit()):
        k += 1   # "per 1,000 orders"
    words = _noun_words(toks, k)
    if not words or words[0] in _NOT_A_DIMENSION:
        return []
    return words


# Nouns of a model's rows before "per" ("one <row> per aircraft per day"): its grain, no ratio.
_ROW_NOUNS = frozenset({"row", "rows", "record", "records", "line", "lines", "entry", "entries"})


def divides_per(question: str) -> bool:
    """The question asks for a ratio: "per" and a noun that is no time unit ("block hours flown
    <per aircraft> day"), not after a model's row noun ("one row per aircraft")."""
    toks = _tokens(question)
    return any(t == "per" and not (k and toks[k - 1] in _ROW_NOUNS) and _divisor(toks, k + 1)
               for k, t in enumerate(toks))


# Words of a definition that divide or average by what follows them ("the mean … <per> solved
# ticket", "<averaged over> the outages closed …", "<divided by> parcels shipped"), and how
# many words after them the noun may stand.
_DIVIDING = frozenset({"per", "over", "divided", "averaged", "across", "each", "every"})
_DIVISOR_WINDOW = 5


def _noun(word: str) -> str:
    """A noun less its plural ending ("policies" -> "policy", "orders" -> "order")."""
    return word[:-3] + "y" if word.endswith("ies") and len(word) > 4 else singular(word)


def ratio_stated(words: list[str], names: Iterable[str], text: str) -> bool:
    """`text` (the object's definitions) or its names already measure per what `words` name: a
    name holding the noun ("cost <per parcel>"), or the definition writing the noun within a few
    words after a word that divides or averages by it ("per solved ticket", "averaged over the
    outages"). A definition that only mentions the noun ("gross order-line amount …") sums, it
    does not divide by it."""
    noun = _noun(words[-1])
    if any(noun in {_noun(w) for w in n.split()} for n in names):
        return True
    toks = [t for t in question_words(text) if t.isalpha()]   # "per 1,000 in-force policies": words only
    for i, t in enumerate(toks):
        if t in _DIVIDING and any(_noun(w) == noun for w in toks[i + 1:i + 1 + _DIVISOR_WINDOW]):
            return True
    return False


_AFTER_PARTICIPLE = re.compile(r"(?:ed|en)$")
_DIVIDING_VERBS = frozenset({"divide", "divides", "divided", "dividing", "multiply", "multiplies", "multiplied",
                             "multiplying", "weight", "weights", "weighted", "weighting", "normalise", "normalize",
                             "normalised", "normalized"})


def breakdown(question: str, names: Iterable[str]) -> list[str]:
    """The dimension a question asks a value to be broken down by ("by region", "for each depot",
    "broken down by tariff", "per region" is read by `ratio_after`), when it follows a whole
    name of the object, the question's period, or a verb of breaking down; empty otherwise.
    "reported by finance" (after a participle: an agent), "by the end of June", "by month" (a
    grain: `time_grain`) are no breakdown."""
    toks = _tokens(question)
    end = name_end(tuple(toks), names)
    for k, t in enumerate(toks):
        if t == "by" and k > 0:
            if any(w in _DIVIDING_VERBS for w in toks[:k]):
                continue   # "divide milk solids per cow <by> cows calved": a divisor, not a dimension
            prev = toks[k - 1]
            # right after the name, or after a measure head the name leaves out ("vaccine reminder
            # conversion <rate> by clinic" of the name "vaccine reminder conversion")
            after_name = end is not None and (k == end or (k == end + 1 and toks[end] in MEASURE_NOUNS))
            if not (after_name or prev in _BREAK_VERBS or _is_period_word(prev)):
                continue
            if prev not in _BREAK_VERBS and _AFTER_PARTICIPLE.search(prev) and not after_name:
                continue
            words = _noun_words(toks, k + 1)
        elif t == "each" and k > 0 and toks[k - 1] in ("for", "per", "in", "across"):
            words = _noun_words(toks, k + 1)
        else:
            continue
        if words and words[0] not in _NOT_A_DIMENSION and not any(w in _GRAIN_WORDS for w in words):
            return words
    return []


# Words after a name that leave something out of it ("net revenue <excluding> credit notes").
_LEAVING_OUT = frozenset({"excluding", "without", "except", "excl", "ex", "minus", "sans"})


def left_out_after(question: str, names: Iterable[str]) -> list[str]:
    """The words a question leaves out of the object right after a whole name of it ("net
    revenue excluding credit notes in July" gives ["credit", "notes"]); empty when none."""
    toks = _tokens(question)
    end = name_end(tuple(toks), names)
    if end is None or end >= len(toks) or toks[end] not in _LEAVING_OUT:
        return []
    return [w for w in _noun_words(toks, end + 1) if w not in ("the", "a", "an", "any", "all")]


def left_out_stated(words: list[str], definition: str) -> bool:
    """The definition itself says it leaves them out ("VAT and shipping are excluded"): the
    value asked is the governed one."""
    stated = excluded_words(definition)
    content = [w for w in words if len(w) > 2]
    return bool(content) and all(stated.uses(w) for w in content)


_GRAIN = re.compile(
    r"\b(?:(?:by|per|for\s+each|each|every|in\s+each|broken\s+down\s+by|split\s+by|grouped\s+by)\s+"
    r"(?P<g1>day|week|month|quarter|year)s?\b"
    r"|(?P<g2>day|week|month|quarter|year)\s+(?:by|over|on|after)\s+(?P=g2)\b"
    r"|\b(?P<g3>daily|weekly|monthly|quarterly|yearly|annual)\s+(?:values?|figures?|numbers?|totals?|breakdown|series)\b)")


def time_grain(question: str) -> str | None:
    """The grain a value is asked per ("by month", "for each quarter", "month over month",
    "monthly figures"), or None. "The monthly net revenue" (how the metric is reported) is no
    grain asked for."""
    m = _GRAIN.search(question.lower())
    if m is None:
        return None
    return _GRAIN_WORDS[m.group("g1") or m.group("g2") or m.group("g3")]


def _next_start(day: dt.date, grain: str) -> dt.date:
    if grain == "day":
        return day + dt.timedelta(days=1)
    if grain == "week":
        return day + dt.timedelta(days=7 - day.weekday())   # weeks start on Monday (ISO 8601)
    months = {"month": 1, "quarter": 3, "year": 12}[grain]
    m = (day.month - 1) // months * months + 1 + months   # the first month of the next part
    return dt.date(day.year + (m - 1) // 12, (m - 1) % 12 + 1, 1)


def _label(start: dt.date, end: dt.date, grain: str) -> str:
    if grain == "day":
        return start.isoformat()
    whole = _next_start(start, grain) == end and start == _grain_start(start, grain)
    if whole and grain == "month":
        return f"{start:%B %Y}"
    if whole and grain == "quarter":
        return f"Q{(start.month - 1) // 3 + 1} {start.year}"
    if whole and grain == "year":
        return str(start.year)
    return f"{start.isoformat()} to {(end - dt.timedelta(days=1)).isoformat()}"


def _grain_start(day: dt.date, grain: str) -> dt.date:
    if grain == "week":
        return day - dt.timedelta(days=day.weekday())
    if grain == "month":
        return day.replace(day=1)
    if grain == "quarter":
        return dt.date(day.year, (day.month - 1) // 3 * 3 + 1, 1)
    if grain == "year":
        return dt.date(day.year, 1, 1)
    return day


def split_by_grain(period: tuple[dt.date, dt.date], grain: str) -> list[tuple[tuple[dt.date, dt.date], str]]:
    """The half-open period [start, end) cut at each `grain` boundary, each part with its label
    ("July 2026"; a part the period cuts short is labelled by its first and last day)."""
    start, end = period
    parts = []
    a = start
    while a < end:
        b = min(_next_start(a, grain), end)
        parts.append(((a, b), _label(a, b, grain)))
        a = b
    return parts
