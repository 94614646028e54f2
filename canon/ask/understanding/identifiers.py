"""Identifiers written the way dbt names a model ("fct_goodwill_credits"): an identifier is
one object's whole name, word for word. "fct_credits" is not a fuzzy or partial name of
fct_goodwill_credits, whose words it shares: it names a model nobody built, and the question is
about no object (canon/ask/pipeline.py: `_named`, `_names_in_discovery`, `_names_hidden`).
A plural dropped or a small misspelling of one word still names it (`match._same_word`)."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from canon.ask.understanding.match import _same_word

_VERSION = re.compile(r"v\d+")
# snake_case with two parts at least, not inside a dotted relation ("raw.app.events_daily").
_IDENTIFIER = re.compile(r"(?<![\w.])[a-z][a-z0-9]*(?:_+[a-z0-9]+)+(?![\w.]*\w)", re.I)


@lru_cache(maxsize=256)
def identifiers(question: str) -> tuple[tuple[str, ...], ...]:
    """The words of each identifier the question writes, in order."""
    out = []
    for m in _IDENTIFIER.finditer(question):
        words = [w for w in m.group().lower().split("_") if w]   # dbt's "stg_commerce__order_lines"
        while len(words) > 2 and _VERSION.fullmatch(words[-1]):
            words.pop()   # dbt's versioned model "fct_revenue_v2" is fct_revenue, version 2
        out.append(tuple(words))
    return tuple(out)


def _is_name(words: tuple[str, ...], name: str) -> bool:
    nw = name.split()
    return len(nw) == len(words) and all(_same_word(w, v) for w, v in zip(words, nw))


def names_identifier(ident: tuple[str, ...], names: Iterable[str]) -> bool:
    """One of `names` is the identifier, word for word: an identifier is a whole name, so
    "fct_claims" is not fct_claim_payments though its words begin that name."""
    return any(_is_name(ident, n) for n in names)


def identifier_unnamed(question: str, phrase: Iterable[str], names: Iterable[str]) -> bool:
    """The question's object phrase (`phrase`, canon/ask/understanding/coverage.py) is words of
    an identifier it writes, and none of `names` is that identifier: the names share words with
    it without naming it."""
    phrase = set(phrase)
    if not phrase:
        return False
    names = list(names)
    return any(phrase <= set(ident) and not names_identifier(ident, names) for ident in identifiers(question))
