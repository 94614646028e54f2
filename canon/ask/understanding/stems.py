"""English word stems, from the Snowball stemmer that tantivy (the full-text engine under
LanceDB's index, canon/index/lance.py) applies to the index's own text: "loaded" and "load",
"fails" and "failed", "working" and "work" are one word to the index, and so to the
understanding step (canon/ask/understanding/coverage.py, `_same_stem`). A stemmer kept by a
search engine rather than suffix rules written here.
"""

from __future__ import annotations

from functools import lru_cache

from tantivy import Filter, TextAnalyzerBuilder, Tokenizer

_ANALYZER = TextAnalyzerBuilder(Tokenizer.raw()).filter(Filter.lowercase()).filter(Filter.stemmer("english")).build()


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The word's Snowball stem (the word itself when it has none)."""
    out = _ANALYZER.analyze(word)
    return out[0] if out else word
