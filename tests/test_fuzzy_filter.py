"""`canon.ask.understanding.fuzzy_filter` must never drop a string the rapidfuzz scorer would keep
(it only decides which strings the scorer runs on), and must actually prune.
Checked against the scorers themselves on random strings over a small alphabet
(many near matches), misspellings, truncations and edge lengths."""

from __future__ import annotations

import random

import pytest
from rapidfuzz import fuzz, process

from canon.ask.understanding.fuzzy_filter import BigramIndex, required_shared_bigrams


def _mutate(rng: random.Random, s: str, edits: int) -> str:
    for _ in range(edits):
        op, i = rng.randrange(3), rng.randrange(len(s) + 1)
        if op == 0 and s:
            s = s[:i] + s[i + 1:]
        elif op == 1:
            s = s[:i] + rng.choice("abcde ") + s[i:]
        elif s:
            i = min(i, len(s) - 1)
            s = s[:i] + rng.choice("abcde ") + s[i + 1:]
    return s


def _corpus(seed: int = 11) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    strings = ["".join(rng.choice("abcde ") for _ in range(rng.randint(1, 30))) for _ in range(400)]
    queries = [_mutate(rng, rng.choice(strings), rng.randint(0, 4)) for _ in range(60)]
    queries += [rng.choice(strings)[: rng.randint(1, 8)] for _ in range(20)]                    # short needles
    queries += ["".join(rng.choice("abcde ") for _ in range(rng.randint(30, 70))) for _ in range(20)]  # long
    queries += ["", "a", "ab", "zzzzzz"]
    return strings, queries


@pytest.mark.parametrize("cutoff", [40.0, 67.0, 80.0, 82.0, 87.0, 95.0, 100.0])
def test_partial_ratio_extract_equals_scoring_every_string(cutoff):
    strings, queries = _corpus()
    idx = BigramIndex(strings)
    for q in queries:
        expected = sorted((i, s) for _, s, i in process.extract(q, strings, scorer=fuzz.partial_ratio,
                                                                score_cutoff=cutoff, limit=None)) if q else []
        assert sorted(idx.partial_ratio_extract(q, cutoff)) == expected, (q, cutoff)


@pytest.mark.parametrize("cutoff", [60.0, 80.0, 87.0, 95.0])
def test_ratio_any_equals_scoring_every_pair(cutoff):
    strings, queries = _corpus(5)
    idx = BigramIndex(strings)
    rng = random.Random(1)
    for _ in range(40):
        words = rng.sample(queries, 3)
        expected = {i for i, s in enumerate(strings) if any(fuzz.ratio(s, w) >= cutoff for w in words)}
        assert idx.ratio_any(words, cutoff) == expected, (words, cutoff)


def test_the_filter_prunes_real_names():
    names = ["net revenue", "gross margin", "active customers", "refund rate", "inventory turnover",
             "churn rate", "settlement date", "credit notes", "general ledger reconciliation"] * 20
    idx = BigramIndex(names)
    q = "what is the net revnue definition for 2026 08 31"
    kept = {names[i] for i in idx.candidates(q, 82.0)}
    assert "net revenue" in kept and len(kept) <= 3       # six of the nine names are never scored
    assert {names[i] for i, _ in idx.partial_ratio_extract(q, 82.0)} == {"net revenue"}


def test_required_shared_bigrams():
    # A 5-character needle at 82: 4 of 5 characters in a 4-character window (LCS 4 -> 2*4/9 = 0.89)
    # keeps at least 3*4 - 5 - 4 - 1 = 2 of its bigrams.
    assert required_shared_bigrams(5, 82.0) == 2
    assert required_shared_bigrams(5, 100.0) == 4       # identical: every bigram
    assert required_shared_bigrams(30, 60.0) == 0       # below 2/3 the bound says nothing
    assert required_shared_bigrams(0, 82.0) == float("inf")
