"""Lossless pre-filters for `rapidfuzz.fuzz.partial_ratio` and `fuzz.ratio` over
a large list of strings: which of them can score at least a cutoff against a
query, found without running the scorer on all of them.

Why it is lossless. `partial_ratio(a, b)` aligns the shorter string (length
N) with substrings w of the longer one (length m <= N, edge windows included)
and scores 100 * 2L / (N + m), L being their longest common subsequence. A
score >= c * 100 therefore needs L >= c (N + m) / 2. In that alignment the
N - L unmatched characters of the shorter string break at most two of its
adjacent pairs (bigrams) each, and the m - L inserted characters of w at most
one each, so at least 3L - N - m - 1 of its bigram occurrences reappear in w,
hence in the longer string. The count of bigram occurrences the two strings
share (sum over bigrams of the smaller count) is an upper bound of that, so a
string sharing fewer than the smallest such bound over every feasible m can
never reach the cutoff and is skipped; the rest are scored by rapidfuzz as
before. `fuzz.ratio(a, b)` is the same score over the whole strings (m is the
other string's length), so the same bound applies with m fixed. The test
checks both bounds on random and misspelled pairs against the scorers.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
from rapidfuzz import fuzz, process


def required_shared_bigrams(n: int, cutoff: float) -> float:
    """Fewest bigram occurrences a needle of length `n` shares with any string it
    scores >= `cutoff` against (inf: it can reach the cutoff against nothing)."""
    c = cutoff / 100.0 - 1e-9      # never stricter than the scorer's own comparison
    best = math.inf
    for m in range(1, n + 1):
        lcs = max(0, math.ceil(c * (n + m) / 2))
        if lcs <= m:
            best = min(best, max(0, 3 * lcs - n - m - 1))
    return best


def _bigrams(s: str) -> Counter:
    return Counter(s[i:i + 2] for i in range(len(s) - 1))


class BigramIndex:
    """`strings` prepared for `partial_ratio_extract(query, cutoff)`, which returns
    what `process.extract(query, strings, scorer=fuzz.partial_ratio,
    score_cutoff=cutoff, limit=None)` returns (as (index, score) pairs), and for
    `ratio_any(words, cutoff)`: the strings whose `fuzz.ratio` with some word
    reaches the cutoff."""

    def __init__(self, strings: list[str]):
        self.strings = list(strings)
        self.lengths = np.fromiter((len(s) for s in self.strings), dtype=np.int32, count=len(self.strings))
        # Posting lists of (bigram, k): the strings holding that bigram at least k times. The
        # occurrences two strings share, sum over bigrams of min(count_a, count_b), is then the
        # number of (bigram, k) postings of the query's own (bigram, k) pairs that name a string.
        postings: dict[tuple[str, int], list[int]] = {}
        for i, s in enumerate(self.strings):
            for bg, n in _bigrams(s).items():
                for k in range(1, n + 1):
                    postings.setdefault((bg, k), []).append(i)
        self.postings = {key: np.asarray(ids, dtype=np.int32) for key, ids in postings.items()}
        self._need: dict[float, np.ndarray] = {}

    def _required(self, cutoff: float) -> np.ndarray:
        """required_shared_bigrams(n, cutoff) for every n up to the longest string. The
        needle is the shorter of query and string, so n never exceeds a string's length:
        the table does not grow with the query (computing it up to the query's length
        costs O(len(query)^2))."""
        table = self._need.get(cutoff)
        if table is None:
            size = int(self.lengths.max(initial=0)) + 1
            table = self._need[cutoff] = np.array([required_shared_bigrams(n, cutoff) for n in range(size)])
        return table

    def shared(self, query: str) -> np.ndarray:
        """Bigram occurrences each string shares with `query`."""
        hits = [self.postings[(bg, k)] for bg, n in _bigrams(query).items() for k in range(1, n + 1)
                if (bg, k) in self.postings]
        if not hits:
            return np.zeros(len(self.strings), dtype=np.int64)
        return np.bincount(np.concatenate(hits), minlength=len(self.strings))

    def candidates(self, query: str, cutoff: float) -> np.ndarray:
        """Indices of the strings whose partial_ratio with `query` may reach the cutoff
        (a superset of the true ones)."""
        if not self.strings or not query:
            return np.empty(0, dtype=np.int64)
        need = self._required(cutoff)[np.minimum(self.lengths, len(query))]
        return np.nonzero(self.shared(query) >= need)[0]

    def partial_ratio_extract(self, query: str, cutoff: float) -> list[tuple[int, float]]:
        idx = self.candidates(query, cutoff)
        if len(idx) == 0:
            return []
        subset = [self.strings[i] for i in idx]
        return [(int(idx[j]), score) for _, score, j in
                process.extract(query, subset, scorer=fuzz.partial_ratio, score_cutoff=cutoff, limit=None)]

    def ratio_any(self, words: list[str], cutoff: float) -> set[int]:
        """Indices of the strings whose `fuzz.ratio` with at least one of `words` is >= cutoff."""
        c = cutoff / 100.0 - 1e-9
        out: set[int] = set()
        for w in words:
            m = len(w)
            if not w or not self.strings:
                continue
            total = self.lengths + m
            lcs = np.ceil(c * total / 2).clip(min=0)
            need = np.where(lcs <= np.minimum(self.lengths, m), np.maximum(0, 3 * lcs - total - 1), np.inf)
            idx = np.nonzero(self.shared(w) >= need)[0]
            out.update(int(i) for i in idx if fuzz.ratio(self.strings[i], w, score_cutoff=cutoff))
        return out
