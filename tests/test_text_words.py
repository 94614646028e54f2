"""`coverage.TextWords.uses`, the lookup the description checks use to ask whether a text
holds a question word in some form, must say exactly what comparing the word with each of
the text's words under `_same_stem` says (the plain definition it replaces for speed). Checked
over the words of every governed text of the gold corpora against their questions' words and
against altered spellings of the texts' own words (plurals, other endings, typos), where the
fuzzy and stem branches decide. Not a timing test."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

from canon.ask.understanding.coverage import TextWords, _same_stem, _words
from canon.registry.contracts import load_contract
from canon.registry.gate import gate
from canon.sources.corpus.reader import read_corpus

ROOT = Path(__file__).resolve().parents[1]
SETS = [(ROOT / "tests" / "gold_understanding" / "corpus", ROOT / "tests" / "gold_understanding" / "gold_dev.json"),
        (ROOT / "tests" / "gold_hard" / "corpus", ROOT / "tests" / "gold_hard" / "gold.json")]


def _reference(words: frozenset[str], t: str) -> bool:
    return t in words or any(_same_stem(t, v) for v in words)


def _altered(word: str, rng: random.Random) -> str:
    """The word in another form: a plural, an ending cut or swapped, one letter changed."""
    kind = rng.randrange(4)
    if kind == 0:
        return word + "s"
    if kind == 1 and len(word) > 6:
        return word[:-2] + rng.choice(["ed", "ing", "ion", "y"])
    if kind == 2 and len(word) > 3:
        i = rng.randrange(len(word))
        return word[:i] + rng.choice("aeioustr") + word[i + 1:]
    return word[:-1] if len(word) > 4 else word


def test_uses_equals_comparing_each_word():
    rng = random.Random(11)
    checked = agreed_true = 0
    for corpus, gold in SETS:
        docs = gate(read_corpus(corpus, exclude=[gold]), load_contract(ROOT / "contracts" / "knowledge.yml"),
                    today=dt.date(2026, 11, 30)).documents
        questions = [c["question"] for c in json.loads(gold.read_text())]
        probes = sorted({w for q in questions for w in _words(q)})
        for d in docs[:60]:
            text = f"{d.title} {d.text}"
            words = frozenset(_words(text))
            tw = TextWords(words)
            own = [_altered(w, rng) for w in rng.sample(sorted(words), min(40, len(words)))]
            for t in rng.sample(probes, min(80, len(probes))) + own:
                expected = _reference(words, t)
                assert tw.uses(t) == expected, (d.doc_id, t)
                checked += 1
                agreed_true += expected
    # Both outcomes are exercised, and in numbers.
    assert checked > 5000 and 500 < agreed_true < checked - 500
