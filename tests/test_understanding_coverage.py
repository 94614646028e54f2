"""`coverage` (canon/ask/understanding/coverage.py) computes what it derives from an object's
names once per set of names (`name_set`) and matches a question word against them in one
rapidfuzz call (`WordSet`): that must not change a single result. The reference below is the
per-call definition it replaced, word for word; both are run on every question of the dev,
hard and dossier gold sets (never the final split) and on perturbed titles, against the names
of every catalog object of those corpora that shares a word with the question, plus a sample
of the others."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import pytest
from rapidfuzz import fuzz

from canon.ask.understanding import coverage as cov_mod
from canon.ask.understanding.coverage import (
    _SHORT_RATIO,
    BOUNDARY,
    MAX_GAP,
    MEASURE_NOUNS,
    Coverage,
    WordSet,
    coverage,
    stated_synonyms,
)
from canon.ask.understanding.match import _STOP, _same_word, initialism_words, object_catalog, prefixed
from canon.registry.contracts import load_contract
from canon.registry.gate import gate
from canon.sources.corpus.reader import read_corpus

ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "dev": (ROOT / "tests" / "gold_understanding" / "corpus", ROOT / "tests" / "gold_understanding" / "gold_dev.json"),
    "hard": (ROOT / "tests" / "gold_hard" / "corpus", ROOT / "tests" / "gold_hard" / "gold.json"),
    "dossier": (ROOT / "tests" / "fixtures" / "dossier" / "corpus.jsonl", ROOT / "tests" / "fixtures" / "dossier" / "gold.json"),
}


# ---------------------------------------------------------------- the reference (the former per-call form)

def _ref_same(t, v):
    # A word with letters written in front of another is not it (match.py, `prefixed`).
    return _same_word(t, v) or (len(t) >= 3 and len(v) >= 3 and fuzz.ratio(t, v) >= _SHORT_RATIO
                                and not prefixed(t, v))


def _ref_spelled(t, v):
    # `_ref_same` without the words of one measure (match.py, `same_measure`).
    spelled_word = t == v or t.rstrip("s") == v.rstrip("s") or (
        len(t) >= 5 and len(v) >= 5 and fuzz.ratio(t, v) >= 88 and not prefixed(t, v))
    return spelled_word or (len(t) >= 3 and len(v) >= 3 and fuzz.ratio(t, v) >= _SHORT_RATIO and not prefixed(t, v))


def _ref_boundary(w):
    return w in BOUNDARY or w.rstrip("s") in BOUNDARY or not w.isalnum() or any(c.isdigit() for c in w)


def _ref_ends_phrase(toks, k):
    # A subject pronoun's next word is its verb ("what do we <call> ..."), no word of a phrase.
    return _ref_boundary(toks[k]) or (k > 0 and toks[k - 1] in {"i", "we", "you", "they"})


def _ref_initialisms(names):
    out = set()
    for n in names:
        words = n.split()
        for i in range(len(words)):
            for j in range(i + 2, len(words) + 1):
                out.add("".join(w[0] for w in words[i:j]))
    return out


def _ref_slot(toks, covered):
    for i, t in enumerate(toks):
        if t in cov_mod._SLOT_NOUNS:
            j = i
            while j > 0 and not _ref_ends_phrase(toks, j - 1):
                j -= 1
            phrase = toks[j:i]
            if phrase:
                uncovered = [w for w, c in zip(phrase, covered[j:i]) if not c]
                return Coverage(not uncovered, phrase, uncovered)
    return Coverage(True, [], [])


def _ref_joined(question, toks, names):
    """Words of a hyphenated compound other than one of time, and a particle written where a
    name has another between the same two words."""
    out, k = set(), 0
    for piece in question.lower().split():
        n = len(cov_mod._WORD.findall(piece))
        for part in piece.strip(".,?!;:()\"").split("/"):
            words = part.split("-")
            if len(words) > 1 and all(w.isalnum() for w in words) and not any(
                    w in cov_mod._TIME_COMPOUND_WORDS or w.isdigit() for w in words):
                start = k + cov_mod._WORD.findall(piece).index(words[0])
                out |= set(range(start, start + len(words)))
        k += n
    for name in names:
        nw = name.split()
        for m in range(1, len(nw) - 1):
            for j in range(1, len(toks) - 1):
                if (nw[m] in cov_mod._PARTICLES and toks[j] in cov_mod._PARTICLES and toks[j] != nw[m]
                        and _same_word(toks[j - 1], nw[m - 1]) and _same_word(toks[j + 1], nw[m + 1])):
                    out.add(j)
    return out


def reference_coverage(question, names, extra_words=frozenset()):
    vocab = {w for n in names for w in n.split()} | set(extra_words) | _ref_initialisms(names)
    cores = [[w for w in n.split() if w not in _STOP] for n in names]
    toks = [w.lower() for w in cov_mod._WORD.findall(question)]
    joined = _ref_joined(question, toks, names)
    hit = [not _ref_ends_phrase(toks, k) or t in vocab or k in joined for k, t in enumerate(toks)]
    covered = [any(_ref_same(t, v) for v in vocab) if h else False for t, h in zip(toks, hit)]
    # an English word spelling an initialism of the names is a word (`initialism_words`)
    initials = _ref_initialisms(names) - {w for n in names for w in n.split()} - set(extra_words)
    covered = [c and (t not in initials or t in initialism_words(question)) for t, c in zip(toks, covered)]
    anchors = [i for i, t in enumerate(toks) if covered[i] and t not in _STOP]
    if not anchors:
        return _ref_slot(toks, covered)
    groups = [[anchors[0]]]
    for i in anchors[1:]:
        between = range(groups[-1][-1] + 1, i)
        if len(between) <= MAX_GAP and all(hit[j] for j in between):
            groups[-1].append(i)
        else:
            groups.append([i])

    def name_words(g):
        words = [toks[i] for i in g]
        return max((sum(any(_same_word(w, c) for w in words) for c in core) for core in cores), default=0)

    best = max(groups, key=lambda g: (name_words(g), len(g), -g[0]))
    lo, hi = best[0], best[-1]
    while lo > 0 and hit[lo - 1]:
        lo -= 1
    while hi + 1 < len(toks) and hit[hi + 1] and hi - best[-1] < MAX_GAP:
        hi += 1
    while hi > lo and (toks[hi] in _STOP or not covered[hi]) and toks[hi] not in MEASURE_NOUNS:
        hi -= 1
    heads = {core[-1] for core in cores if core} | _ref_initialisms(names)
    if not any(_ref_same(toks[hi], h) for h in heads) and toks[hi] not in MEASURE_NOUNS:
        return Coverage(True, [], [])
    spelled = [c and any(_ref_spelled(t, v) for v in vocab) for t, c in zip(toks, covered)]
    if not any(spelled[lo:hi + 1]):
        return _ref_slot(toks, spelled)   # a word of the same measure alone names nothing
    phrase = toks[lo:hi + 1]
    uncovered = [toks[i] for i in range(lo, hi + 1) if hit[i] and not covered[i] and (toks[i] not in _STOP or i in joined)]
    return Coverage(not uncovered, phrase, uncovered)


# ---------------------------------------------------------------- the comparison


def _load(name):
    corpus, gold = SETS[name]
    docs = gate(read_corpus(corpus), load_contract(ROOT / "contracts" / "knowledge.yml"),
                today=dt.date(2026, 12, 1)).documents
    return docs, [c["question"] for c in json.loads(gold.read_text())]


def _perturbed(docs, rng, n=40):
    out = []
    for d in rng.sample(docs, min(n, len(docs))):
        t = d.title
        i = rng.randrange(len(t))
        out += [t[:i] + t[i + 1:], f"which sources feed the {t.lower()} metric?", " ".join(reversed(t.split())),
                f"what is the {t} also called, per the old wiki?"]
    return out


@pytest.mark.parametrize("name", sorted(SETS))
def test_coverage_equals_the_per_call_reference(name):
    docs, questions = _load(name)
    rng = random.Random(16)
    questions += _perturbed(docs, rng)
    catalog = object_catalog(docs)
    stated = {d.object_id: stated_synonyms(d.text) for d in docs}
    compared = 0
    for q in questions:
        qwords = set(q.lower().split())
        entries = list(catalog.values())
        near = [e for e in entries if qwords & {w for n in e.names for w in n.split()}]
        for e in near + rng.sample(entries, min(5, len(entries))):
            for names in (e.names, e.names | stated.get(e.object_id, frozenset())):
                extra = {e.domain} - {""}
                assert coverage(q, names, extra) == reference_coverage(q, names, extra), (q, sorted(names))
                compared += 1
    assert compared > 500


def test_word_set_is_any_same_word():
    words = ["rate", "rates", "delivery", "otd", "on", "time", "cost", "parcel", "revenue", "churn"]
    ws = WordSet(words)
    probes = words + ["deliveries", "delivry", "tme", "late", "otds", "parcels", "revnue", "ra", "x", "costs", "?"]
    for t in probes:
        assert ws.has(t) == any(_ref_same(t, v) for v in words), t
        assert ws.has(t) == any(_ref_same(t, v) for v in words), t   # memoized: same again
