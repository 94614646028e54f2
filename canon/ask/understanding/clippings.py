"""Words written short: "card auth rate" for the name "authorization rate", "net rev" for "net
revenue", "avg order value" for "average order value"; and the question's own "def" or "calc"
(`QUESTION_ABBREVIATIONS`), and a "2" that stands for "to" ("door2provider"). A question is rewritten into the
catalog's spelling before it is matched (canon/ask/understanding/compounds.py, `as_read`).

A word is read as a clipping only when every one of these holds, so that an ordinary word is
never turned into a name:
- it is no word of any governed name, no stop word and no English word (the bundled model's
  vocabulary, canon/index/embedding/local_model.py: "pass rate" is never "passenger rate"),
  of MIN_CLIP to MAX_CLIP letters, or a standard abbreviation (`ABBREVIATIONS`);
- the next or previous word that is no stop word is a word of some governed name (the
  "rate" of "auth rate");
- exactly one name word both starts with it (or is what a standard abbreviation stands for,
  `ABBREVIATIONS`) and stands next to that neighbour, on the same side, in some name.
Two expansions ("cust" in a catalog holding "customer rate" and "custody rate") leave the
question as written; the matcher then treats it as before.

`names_with(words)` returns the core-word tuples of the names that hold a word starting with
one of `words`: the warm ask reads the catalog in memory (`catalog_names_with`), a new process
the stored catalog (canon/ask/understanding/catalog_store.py, `names_with_prefixes`).
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

from canon.ask.understanding.match import _STOP, Catalog, _name_core, singular
from canon.index.embedding.local_model import english_words

MIN_CLIP = 3
MAX_CLIP = 6
MIN_CUT = 2     # letters a clipping leaves off at least ("revenu" is a misspelling, not a clipping)

# Standard abbreviations of business English, never a corpus's names: the ones that are not a
# word's first letters, and the ones that are also English words ("rev", "vol", "ops").
ABBREVIATIONS = {
    "rev": "revenue", "revs": "revenues", "vol": "volume", "vols": "volumes", "ops": "operations",
    "avg": "average", "amt": "amount", "qty": "quantity", "cnt": "count", "txn": "transaction",
    "txns": "transactions", "yr": "year", "yrs": "years", "mgmt": "management", "dept": "department",
    "acct": "account", "accts": "accounts", "hrs": "hours", "wk": "week", "wks": "weeks",
    "mos": "months", "pmt": "payment", "pmts": "payments", "govt": "government",
    "intl": "international", "mktg": "marketing", "svc": "service", "svcs": "services",
}

# Words of the question itself written short ("the readmissions def as of …"): read in full
# unless some governed name has the word.
QUESTION_ABBREVIATIONS = {"def": "definition", "defn": "definition", "defs": "definitions", "defns": "definitions",
                          "calc": "calculation", "calcs": "calculations"}

# "door2provider", "time2hire": a 2 between two words of three letters or more is "to" ("B2B",
# "P2P" are codes, left alone).
_TWO_FOR_TO = re.compile(r"(?<=[A-Za-z]{3})2(?=[A-Za-z]{3})")

_WORD = re.compile(r"[A-Za-z]+")

NamesWith = Callable[[Iterable[str]], Iterable[tuple[str, ...]]]


def catalog_names_with(catalog: Catalog, prefixes: Iterable[str]) -> set[tuple[str, ...]]:
    """The core-word tuples of `catalog`'s names holding a word that starts with one of
    `prefixes` (of MIN_CLIP letters: the names are indexed by their words' first letters, once)."""
    if catalog.name_cores is None:
        by_start: dict[str, set[tuple[str, ...]]] = {}
        for entry in catalog.values():
            for n in entry.names:
                core = _name_core(n)[0]
                for w in core:
                    by_start.setdefault(w[:MIN_CLIP], set()).add(core)
        catalog.name_cores = by_start
    return {core for p in prefixes for core in catalog.name_cores.get(p[:MIN_CLIP], ())
            if any(w.startswith(p) for w in core)}


def _stands_for(clip: str, word: str) -> bool:
    """`word` is what `clip` abbreviates (`ABBREVIATIONS`) or starts with it, MIN_CUT letters
    left off at least ("vol" may be "volume" or "voluntary": the names decide)."""
    full = ABBREVIATIONS.get(clip)
    if full is not None and (word == full or word.rstrip("s") == full.rstrip("s")):
        return True
    return word.startswith(clip) and len(word.rstrip("s")) - len(clip) >= MIN_CUT


def rewrite(question: str, known: Callable[[Iterable[str]], set[str]], names_with: NamesWith) -> str:
    """`question` with its clippings written out as the catalog writes them (unchanged when none)."""
    question = _TWO_FOR_TO.sub(" to ", question)
    matches = [m for m in _WORD.finditer(question)]
    words = [m.group(0).lower() for m in matches]
    short = [i for i, w in enumerate(words) if w in QUESTION_ABBREVIATIONS]
    if short:
        named = known({words[i] for i in short})
        for i in reversed([i for i in short if words[i] not in named]):
            question = question[:matches[i].start()] + QUESTION_ABBREVIATIONS[words[i]] + question[matches[i].end():]
        matches = [m for m in _WORD.finditer(question)]
        words = [m.group(0).lower() for m in matches]
    content = [i for i, w in enumerate(words) if w not in _STOP]
    clips = {i for i in content
             if MIN_CLIP <= len(words[i]) <= MAX_CLIP or words[i] in ABBREVIATIONS}
    if not clips:
        return question
    k = set(known({words[i] for i in content} | {words[i].rstrip("s") for i in content}))
    # a neighbour: the nearest content word on each side
    sides: dict[int, list[tuple[str, int]]] = {}
    for pos, i in enumerate(content):
        if i not in clips or words[i] in k or words[i].rstrip("s") in k:
            continue
        near = []
        if pos > 0:
            near.append((words[content[pos - 1]], -1))
        if pos + 1 < len(content):
            near.append((words[content[pos + 1]], +1))
        near = [(n, side) for n, side in near if n in k or n.rstrip("s") in k]
        if near:
            sides[i] = near
    if not sides:
        return question
    lexicon = english_words()
    sides = {i: near for i, near in sides.items() if words[i] in ABBREVIATIONS or words[i] not in lexicon}
    if not sides:
        return question
    prefixes = {words[i][:MIN_CLIP] for i in sides} | {ABBREVIATIONS[words[i]][:MIN_CLIP] for i in sides
                                                        if words[i] in ABBREVIATIONS}
    cores = list(names_with(prefixes))
    edits: list[tuple[int, int, str]] = []
    for i, near in sides.items():
        clip = words[i]
        found = set()
        for core in cores:
            for j, w in enumerate(core):
                if not _stands_for(clip, w):
                    continue
                if any(0 <= j + side < len(core) and singular(core[j + side]) == singular(n) for n, side in near):
                    found.add(w)
        if len(found) == 1:
            edits.append((matches[i].start(), matches[i].end(), found.pop()))
    for start, end, text in reversed(edits):
        question = question[:start] + text + question[end:]
    return question
