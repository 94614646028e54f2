"""How a measure is computed, read from words: which aggregate it takes (a mean, a median, a
sum, a count, a share) and, for a ratio, which words stand in its numerator and which in its
denominator. A description of a metric (canon/ask/pipeline.py, `_described_by`) can use most of
a definition's words and still ask for another measure of the same things: "the median
foreground playback seconds per account" is not the sum that total watch time is, and "the
empty kilometres over all kilometres" is not the loaded kilometres over all kilometres, though
the utilization rate's definition says "empty returns to the depot included in the
denominator". Both are told apart here, without a list of metric names.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from canon.ask.understanding.coverage import AGGREGATES, _counted_words, _is_boundary, _words, shares_stem
from canon.ask.understanding.stems import stem

# A word may name more than one: "total" is a sum of amounts and a count of things.
_AGGREGATE_OF = {w: {a for a, named in AGGREGATES.items() if w in named} for words in AGGREGATES.values()
                 for w in words}

# Connectives between a ratio's numerator and its denominator. "Per" is left out: "minutes per
# solved ticket" is a mean as often as "parcels per 100 orders" is a rate, and it is read below
# as making the definition a ratio.
# "Over" followed by a stretch of time ("over the past 12 months") is a period, not a ratio.
_RATIO = re.compile(r"\b(?:divided by|over(?! (?:the |a |its |their )?(?:past|last|previous|trailing|next|same|"
                    r"first|whole|entire|course|period|time|\d))|out of|as a share of|relative to|against)\b", re.I)
# Dividing by a constant converts a unit ("divided by 3600"): it makes no mean or share. "Per"
# a number of things ("contacts per 100 orders") scales a ratio and is one.
_BY_CONSTANT = re.compile(r"\b(?:divided by|over)\s+\d|\bper\s+\d[\d,.]*\b(?!\s+(?!(?:to|and|or|in|of)\b)[a-z])", re.I)
_RATIO_WORDS = re.compile(r"\b(?:divided by|over|per|out of|as a share of|relative to)\b", re.I)
_SENTENCE = re.compile(r"(?<=[.;!?])\s+")
# A model's grain ("Grain: one row per booking") says what a row is, not a ratio it computes.
_GRAIN = re.compile(r"\brows?\s+(?:per|for each)\b[^.;]*", re.I)


# "Count", "share" and "mean" are as often verbs ("complimentary stays count as sold", "play,
# search, like or share", "what does on time mean"): they name an aggregate only as nouns, after
# an article or before "of".
_VERB_TOO = frozenset({"count", "share", "mean"})
_ARTICLES = ("the", "a", "an", "its", "their", "our")
# Definitions run long: the aggregate words are found by two patterns, not word by word.
_AGGREGATE_WORD = re.compile(
    r"\b(?:" + "|".join(sorted(set(_AGGREGATE_OF) - _VERB_TOO, key=len, reverse=True)) + r")\b", re.I)
# They are nouns too at the head of a noun phrase an article opens ("the customer contact
# count", "the weekly ticket count in June"), unless a verb's object or complement follows
# ("the stays count as sold", "the agents share the queue").
_AGGREGATE_NOUN = re.compile(
    r"\b(?:" + "|".join(_ARTICLES) + r")\s+(" + "|".join(sorted(_VERB_TOO)) + r")\b|\b("
    + "|".join(sorted(_VERB_TOO)) + r")\s+of\b|\b(?:" + "|".join(_ARTICLES) + r")\s+(?:[a-z][a-z-]*\s+){1,3}?("
    + "|".join(sorted(_VERB_TOO)) + r")\b(?!\s+(?:as|toward|towards|against|among|that|the|a|an|their|its|our"
    r"|with|up|on|only|in\s+(?:the|a|an|full))\b)", re.I)


# A percentile written the short way ("p90", "the 95th percentile" is a word of AGGREGATES already).
_PERCENTILE = re.compile(r"\bp(?:[1-9]\d?)\b|\b\d{1,2}(?:st|nd|rd|th)\s+percentile\b", re.I)
# "Count", "share", "mean" are nouns too at the end of a compound a question asks about ("how is
# visit count defined", "the session count for May"): after a word that is no grammar word and
# before a word that asks about it or a preposition.
_COMPOUND_AGGREGATE = re.compile(
    r"\b(?!(?:how|what|which|does|do|did|is|are|was|were|will|would|can|to|not|we|you|they|i|it|that|this|and|or)\b)"
    r"[a-z][a-z-]+\s+(count|share|mean)\s+(?=(?:defined|calculated|computed|measured|definition|metric|formula|"
    r"in|for|on|per|by|over|during|of)\b)", re.I)


def aggregates(text: str) -> set[str]:
    """The aggregates `text`'s words name."""
    found: set[str] = set()
    for w in {m.lower() for m in _AGGREGATE_WORD.findall(text)}:
        found |= _AGGREGATE_OF[w]
    for groups in _AGGREGATE_NOUN.findall(text):
        found |= _AGGREGATE_OF[next(g for g in groups if g).lower()]
    for w in _COMPOUND_AGGREGATE.findall(text):
        found |= _AGGREGATE_OF[w.lower()]
    if _PERCENTILE.search(text):
        found.add("percentile")
    return found


def aggregate_before(question: str, phrase: Iterable[str]) -> set[str]:
    """The aggregates named by the words just before the object phrase `phrase` (normalized
    words of the question): "the <mean> pothole repair time", "<p90> repair time", "the <95th
    percentile> repair time". Before a noun phrase "mean" and "count" are no verbs."""
    toks = _words(question)
    phrase = list(phrase)
    if not phrase:
        return set()
    n = len(phrase)
    for i in range(len(toks) - n + 1):
        if list(toks[i:i + n]) == phrase:
            before = toks[max(0, i - 2):i]
            found: set[str] = set()
            if before and before[-1] in _AGGREGATE_OF:
                found |= _AGGREGATE_OF[before[-1]]
            if _PERCENTILE.search(" ".join(before[-2:] if before[-1:] == ("percentile",) else before[-1:])):
                found.add("percentile")
            return found
    return set()


@lru_cache(maxsize=1024)   # the same candidates' definitions are read by question after question
def _computes(text: str) -> frozenset[str]:
    """The aggregates a definition computes: those it names, and a mean or a share when it
    divides one quantity by another (not by a constant)."""
    found = aggregates(text)
    # An order statistic ("the median number of days … over potholes repaired") is over its
    # population, no ratio.
    if not found & _ORDER_STATISTICS and _RATIO_WORDS.search(_BY_CONSTANT.sub(" ", _GRAIN.sub(" ", text))):
        found |= {"mean", "share"}
    return frozenset(found)


_ORDER_STATISTICS = frozenset({"median", "percentile", "extreme"})


def aggregate_words_of(words: Iterable[str]) -> set[str]:
    """The aggregates named by `words` one by one ("average", "p90", "median")."""
    found: set[str] = set()
    for w in words:
        found |= _AGGREGATE_OF.get(w, set())
        if _PERCENTILE.fullmatch(w):
            found.add("percentile")
    return found


def only_computed_aggregates(words: Iterable[str], text: str) -> bool:
    """Every word of `words` names an aggregate `text` (a definition) computes: "the <median>
    pothole repair time" beside a median, "<average> permit processing time" beside a mean."""
    words = list(words)
    computed = _computes(text)
    return bool(words) and all(aggregate_words_of([w]) and aggregate_words_of([w]) <= computed for w in words)


def aggregate_words(text: str) -> list[str]:
    """Every word naming an aggregate `text` computes: a definition written as "the total … divided
    by the number of …" is described as well by "the mean …", "the sum …" or "the proportion …"."""
    computed = _computes(text)
    return [w for a, words in AGGREGATES.items() if a in computed for w in words]


def computes_other(asked: set[str], text: str) -> bool:
    """`text` (a definition) computes an aggregate, none of those `asked`."""
    computed = _computes(text)
    return bool(asked and computed and not asked & computed)


def other_aggregate(question: str, text: str) -> set[str]:
    """The aggregates the question asks for when `text` (an object's names and definitions)
    computes none of them but computes another: the question describes another measure. Empty
    when it asks for none, or for one the text computes."""
    asked = aggregates(question)
    if not asked:
        return set()
    computed = _computes(text)
    return asked if computed and not asked & computed else set()


# Words after which the question counts what lacks the next content word: "kilometres driven
# without a load", "non-refundable bookings". "Not" and "no" are left out: "parcels that could
# not be delivered" paraphrases a definition's "every delivery attempt failed", a negation the
# definition states in other words.
_NEGATIONS = frozenset({"without", "non", "excluding", "except", "lacking"})
# What a definition negates is read with every negation: "no customer reply" in a definition
# restates "without a customer reply" in the question.
_ANY_NEGATION = _NEGATIONS | {"no", "not", "never", "nor"}
# Between a negation and the word it negates: "without being solved", "without ever using".
_AUXILIARIES = frozenset({"being", "been", "be", "having", "had", "getting", "got", "ever", "even", "once", "yet"})


# Prefixes that make a word its complement: "unloaded", "nonbillable".
_NEGATING_PREFIXES = ("un", "non")


# "No longer" negates what follows it ("no longer employed at its end"), and so does "off" after a
# form of "be" ("who are off payroll"); elsewhere "off" is a particle or a compound's ("signed off",
# "off-block time").
_BE = frozenset({"is", "are", "was", "were", "be", "been", "being", "went", "gone", "taken"})


def _negates(toks: tuple[str, ...], i: int, negations: frozenset[str]) -> bool:
    t = toks[i]
    if t in negations:
        return True
    if t == "longer":   # "no longer than 30 minutes" compares
        return i > 0 and toks[i - 1] == "no" and toks[i + 1:i + 2] != ("than",)
    return t == "off" and i > 0 and toks[i - 1] in _BE


def negated_words(question: str, negations: frozenset[str] = _NEGATIONS) -> list[str]:
    """The first content word after each negation of the question, and the rest of each word
    written with a negating prefix ("unloaded" negates "loaded")."""
    toks = _words(question)
    out = []
    for i, t in enumerate(toks):
        if _negates(toks, i, negations):
            nxt = next((w for w in toks[i + 1:] if not _is_boundary(w) and w not in negations
                        and w not in _AUXILIARIES), None)
            if nxt is not None:
                out.append(nxt)
        else:
            out += [t[len(p):] for p in _NEGATING_PREFIXES if t.startswith(p) and len(t) - len(p) >= 4]
    return out


def counts_what_is_negated(question: str, definitions: Iterable[str]) -> list[str]:
    """Words the question negates ("driven without a load") that a definition counts, in a
    sentence that excludes nothing ("the loaded kilometres driven by the fleet"): the question
    counts the complement, another measure. Empty when it negates nothing a definition counts,
    or only what a definition negates as well."""
    asked = negated_words(question)
    if not asked:
        return []
    counted: set[str] = set()
    negated: set[str] = set()
    for text in definitions:
        counted |= _counted_words(text)
        negated |= set(negated_words(text, _ANY_NEGATION))

    def stated(words: set[str], w: str) -> bool:
        return _stated(words, w) or any(stem(w) == stem(v) for v in words)
    # A negation the definition writes too ("a session ends after 30 minutes without a
    # foreground event") restates it.
    return [w for w in asked if stated(counted, w) and not stated(negated, w)]


def _sides(sentence: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(numerator words, denominator words) of a sentence written as a ratio, or None. The
    denominator runs to the next comma, with any later clause that names the denominator
    ("…, empty returns included in the denominator"); a clause after it scopes the whole ratio
    ("…, for salaried and hourly staff alike") and stands on neither side."""
    m = _RATIO.search(sentence)
    if m is None:
        return None
    first, *clauses = re.split(r"[,;]", sentence[m.end():])
    denominator = " ".join([first, *(c for c in clauses if "denominator" in c.lower())])
    return _words(sentence[:m.start()]), _words(denominator)


def _stated(words: set[str], t: str) -> bool:
    """`t` is one of `words` or another ending of one (`coverage.shares_stem`)."""
    return t in words or any(shares_stem(t, v) for v in words)


def _content(words: Iterable[str]) -> list[str]:
    return [w for w in dict.fromkeys(words) if not _is_boundary(w) and w not in _AGGREGATE_OF]


def denominator_words_asked(question: str, definitions: Iterable[str]) -> list[str]:
    """Words the question uses only in its ratio's numerator that the definitions state only in
    their ratios' denominators: the question counts what the definition divides by ("the empty
    kilometres over all kilometres" beside "loaded kilometres over all kilometres, empty returns
    included in the denominator"). Empty when the question is no ratio, or none of its numerator
    words is stated that way."""
    q = _sides(question)
    if q is None:
        return []
    numerator_side: set[str] = set()
    denominator_side: set[str] = set()
    outside: set[str] = set()
    for text in definitions:
        for sentence in _SENTENCE.split(text):
            sides = _sides(sentence)
            if sides is None:
                outside |= set(_words(sentence))
            else:
                numerator_side |= set(sides[0])
                denominator_side |= set(sides[1])
    if not denominator_side:
        return []
    asked_over = set(q[1])
    return [w for w in _content(q[0]) if not _stated(asked_over, w)
            and _stated(denominator_side, w) and not _stated(numerator_side | outside, w)]
