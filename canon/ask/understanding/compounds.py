"""Compound words written apart or together: "head count" for the name word "headcount",
"watchtime" or "timetohire" for the words of "total watch time" and "time to hire". A
question is rewritten into the catalog's own spelling before it is matched, so the rest of
understanding (matching, coverage, intent) reads the name as the catalog writes it.

`rewrite(question, known)`: `known(words)` returns which of `words` are words of some
governed name (the core words: not stop words). Two adjacent question words are joined
when their concatenation is such a word (of at least `MIN_COMPOUND` letters); a question
word that is no name word is split when it cuts into two or three parts that are, stop
words allowed between them ("to" in "timetohire"), at least two parts being name words.
The warm ask asks the catalog in memory (`catalog_words`), a new process the stored catalog
(canon/ask/understanding/catalog_store.py, `known_name_words`): both hold the same words.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

from canon.ask.understanding import clippings
from canon.ask.understanding.contractions import expand_contractions
from canon.ask.understanding.match import _STOP, Catalog, _name_core
from canon.index.embedding.local_model import english_words

MIN_COMPOUND = 6   # letters of a joined or split word: shorter ones are ordinary words
MIN_PART = 2
_WORD = re.compile(r"[A-Za-z]+")


def catalog_words(catalog: Catalog) -> frozenset[str]:
    """The core words of every name in `catalog` (computed once per catalog)."""
    if catalog.core_words is None:
        catalog.core_words = frozenset(w for entry in catalog.values() for n in entry.names for w in _name_core(n)[0])
    return catalog.core_words


def _splits(t: str) -> list[tuple[str, ...]]:
    """Every cut of `t` into two or three parts of MIN_PART letters or more."""
    n = len(t)
    out = [(t[:i], t[i:]) for i in range(MIN_PART, n - MIN_PART + 1)]
    out += [(t[:i], t[i:j], t[j:]) for i in range(MIN_PART, n - 2 * MIN_PART + 1)
            for j in range(i + MIN_PART, n - MIN_PART + 1)]
    return out


def candidates(question: str) -> set[str]:
    """The words `rewrite` may ask `known` about."""
    words = [m.group(0).lower() for m in _WORD.finditer(question)]
    out = {a + b for a, b in zip(words, words[1:]) if len(a + b) >= MIN_COMPOUND}
    for t in words:
        if len(t) >= MIN_COMPOUND:
            out.add(t)
            out.update(p for cut in _splits(t) for p in cut if p not in _STOP)
    return out


def as_read(question: str, known: Callable[[Iterable[str]], set[str]],
            names_with: clippings.NamesWith | None = None) -> str:
    """The question as `ask` reads it: its contractions written out ("what's" -> "what is",
    canon/ask/understanding/contractions.py), then its compounds and, given `names_with`, its
    clippings ("auth rate", canon/ask/understanding/clippings.py) as the catalog writes them."""
    q = rewrite(expand_contractions(question), known, names_with)
    return clippings.rewrite(q, known, names_with) if names_with is not None else q


def _grammar_word_split(t: str, following: str, k: set[str], names_with: clippings.NamesWith) -> str | None:
    """"ontime" before "departure" -> "on time": a word no English word, cut into a grammar word
    and a name word that some name's core has right before the question's next word ("on time
    departure rate": "time departure"). An English word ("intake", "online") is never cut."""
    if t in english_words():
        return None
    for i in range(MIN_PART, len(t) - MIN_PART + 1):
        a, b = t[:i], t[i:]
        if a in _STOP and b in k and any(
                core[j:j + 2] == (b, following) for core in names_with([b]) for j in range(len(core) - 1)):
            return f"{a} {b}"
    return None


def rewrite(question: str, known: Callable[[Iterable[str]], set[str]],
            names_with: clippings.NamesWith | None = None) -> str:
    """`question` with compounds written as the catalog writes them (unchanged when none).
    Given `names_with`, a grammar word glued to a name word is cut as well (`_grammar_word_split`)."""
    matches = list(_WORD.finditer(question))
    asked = candidates(question)
    if not asked:
        return question
    k = set(known(asked))
    if not k:
        return question
    edits: list[tuple[int, int, str]] = []
    i = 0
    while i < len(matches):
        t = matches[i].group(0).lower()
        if i + 1 < len(matches):
            nxt = matches[i + 1]
            gap = question[matches[i].end():nxt.start()]
            joined = t + nxt.group(0).lower()
            if gap in (" ", "-") and len(joined) >= MIN_COMPOUND and joined in k:
                edits.append((matches[i].start(), nxt.end(), joined))
                i += 2
                continue
        if len(t) >= MIN_COMPOUND and t not in k:
            for cut in _splits(t):
                named = [p for p in cut if p not in _STOP]
                if len(named) >= 2 and all(p in k or p in _STOP for p in cut):
                    edits.append((matches[i].start(), matches[i].end(), " ".join(cut)))
                    break
            else:
                split = _grammar_word_split(t, matches[i + 1].group(0).lower(), k, names_with) if (
                    names_with is not None and i + 1 < len(matches)) else None
                if split is not None:
                    edits.append((matches[i].start(), matches[i].end(), split))
        i += 1
    for start, end, text in reversed(edits):
        question = question[:start] + text + question[end:]
    return question
