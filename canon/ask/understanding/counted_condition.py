"""What a description of a share or a count says it counts, and whether a definition states it.

"The share of delivered parcels reported damaged" uses three of its five content words in the
on-time delivery rate's definition ("share", "delivered", "parcels"), enough for a description
(canon/ask/understanding/coverage.py, `describes`), yet the word that says which parcels are
counted, "damaged", is in no definition: the question asks about a measure no one governs.
The words that say which things a share or a count takes are mostly participles after the
things ("tickets reopened after being solved", "employees demoted in a year", "accounts
deleted by day 30"); a definition of that measure states them in some form ("promoted" /
"promotion", "closed" / "closing"). A paraphrase through a phrasal verb ("employees moved up
to a higher level" for "promoted") is not read word by word, and neither is a participle that
says how the measure is made ("expressed in hours", "weighted by hours").

canon/ask/pipeline.py (`_described_by`) does not take a question as describing an object whose
names and definitions leave one of these words unstated. Every list here is about the grammar
of questions, never about a corpus.
"""

from __future__ import annotations

import re
from functools import lru_cache

from canon.ask.understanding.coverage import _MEASURES_OF_ROWS, _is_boundary, _uses, _words, is_participle, text_words
from canon.ask.understanding.measure_shape import _sides

# Participles that say how a measure is made or reported, not which things it counts.
_MAKING = frozenset({
    "expressed", "based", "divided", "weighted", "compared", "averaged", "summed", "rounded", "grouped",
    "aggregated", "totalled", "totaled", "called", "named", "described", "reported", "listed", "stated",
    "derived", "changed", "updated", "published", "required", "allowed", "included", "excluded",
})
# Particles that make a verb phrasal: its meaning is not the verb's own ("moved up", "sent back",
# "dropped out"). "In" and "on" are left out: they are as often prepositions ("demoted in a year").
_PARTICLES = frozenset({"up", "down", "out", "back", "off", "away"})
# Words pointing back at a measure a clause before described ("… - what's <that> rate?").
_REFERRING = frozenset({"that", "this", "such"})
_MEASURE_HEADS = frozenset({"rate", "ratio", "percentage", "proportion", "metric", "measure", "kpi"})
# A clause boundary in the question as written: a dash between spaces, or a clause's punctuation.
_CLAUSES = re.compile(r"\s[-–—]+\s|[;:?!.]\s")
# Where the counted things end: a clause's punctuation.
_CLAUSE_END = frozenset({",", ";", ".", "?", "!", ":", "(", ")"})


@lru_cache(maxsize=256)
def counted_part(question: str) -> tuple[str, ...]:
    """The words saying what a share or a count of the question takes: what follows a measure
    or an aggregate and "of" ("the share of parcels that arrive …") up to the clause's end, in a
    ratio's numerator when the question is a ratio; else the numerator itself ("the employees
    demoted in a year divided by …"). Empty when the question asks for neither."""
    # "Tickets reopened within 7 days of closing - what's that rate's definition?": the clause
    # that a later "that rate" / "this share" points back to is what the measure takes.
    clauses = _CLAUSES.split(question)
    if len(clauses) > 1 and any(_refers_back(_words(c)) for c in clauses[1:]):
        return tuple(w for w in _words(clauses[0]) if w not in _CLAUSE_END)
    sides = _sides(question)
    toks = sides[0] if sides is not None else _words(question)
    for i, t in enumerate(toks[:-1]):
        if t in _MEASURES_OF_ROWS and toks[i + 1] == "of":
            part = []
            for w in toks[i + 2:]:
                if w in _CLAUSE_END:
                    break
                part.append(w)
            return tuple(part)
    return toks if sides is not None else ()


def _refers_back(toks: tuple[str, ...]) -> bool:
    return any(t in _REFERRING and nxt.rstrip("s") in _MEASURES_OF_ROWS | _MEASURE_HEADS
               for t, nxt in zip(toks, toks[1:]))


@lru_cache(maxsize=256)
def _conditions(question: str) -> tuple[str, ...]:
    """The participles of what the question's share or count takes (`counted_part`) that say
    which things it takes: not a phrasal verb's, not one of making. Read once per question; the
    candidates' texts are compared with them in `unstated_condition`."""
    part = counted_part(question)
    if not part:
        return ()
    toks = _words(question)
    out = []
    for w in part:
        if not is_participle(w) or _is_boundary(w) or w in _MAKING:
            continue
        # The word after it is read in the whole question: a ratio's numerator may end at it
        # ("parcels handed <over> to the customer" is no ratio's "over").
        j = toks.index(w) + 1
        nxt = toks[j] if j < len(toks) else ""
        if nxt in _PARTICLES or (nxt == "over" and w == part[-1]):
            continue
        out.append(w)
    return tuple(out)


def unstated_condition(question: str, text: str) -> list[str]:
    """The participles saying which things the question's share or count takes (`_conditions`)
    that `text` (an object's names and definitions) states in no form: it describes another
    measure. Empty when there is none."""
    conditions = _conditions(question)
    if not conditions:
        return []
    stated = text_words(text)
    return [w for w in conditions if not _uses(stated, w)]


def counts_within(question: str, phrase: list[str]) -> bool:
    """`phrase` (the words naming an object) stands inside what the question's share or count
    takes (`counted_part`): "the share of accounts created in a <signup cohort> week that …"
    measures rows that a model's name describes, as "the share of <playback sessions> …" does
    (coverage.py, `measure_of`)."""
    part, n = counted_part(question), len(phrase)
    return n > 0 and any(list(part[i:i + n]) == list(phrase) for i in range(len(part) - n + 1))
