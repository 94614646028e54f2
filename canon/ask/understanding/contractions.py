"""English contractions written out before a question is read: "what's unit delivery cost?"
was read as the words "what s unit delivery cost", and the stray "s" became a word of the
object phrase that no name holds (an abstention where "what is" was answered). A question word
or a pronoun before "'s" is "is" ("what's", "it's"; "let's" is "let us"); after any other word
"'s" is a possessive and is left as it was written (what a description says about its owner is
read as before); "n't",
"'re", "'ve", "'ll", "'d", "'m" are "not", "are", "have", "will", "would", "am". Straight and
typographic apostrophes alike; an apostrophe before digits ("May '26") is left alone."""

from __future__ import annotations

import re

_APOSTROPHE = "['\u2019\u02bc]"
# Words whose "'s" is "is" (or "has": either way no word of a name).
_IS_BEFORE = frozenset({"what", "how", "where", "when", "why", "who", "which", "it", "that", "there", "here",
                        "this", "he", "she", "one", "everything", "nothing", "something"})
# "won't", "can't", "shan't", "ain't": the letters before "n't" are no word of their own.
_IRREGULAR = {"wo": "will not", "ca": "can not", "sha": "shall not", "ai": "is not"}
_NOT = re.compile(rf"\b([A-Za-z]+)n{_APOSTROPHE}t\b", re.I)
_S = re.compile(rf"\b([A-Za-z]+){_APOSTROPHE}s\b", re.I)
_OTHER = re.compile(rf"\b([A-Za-z]+){_APOSTROPHE}(re|ve|ll|d|m)\b", re.I)
_OTHER_WORDS = {"re": "are", "ve": "have", "ll": "will", "d": "would", "m": "am"}


def _not(m: re.Match) -> str:
    return _IRREGULAR.get(m[1].lower(), f"{m[1]} not")


def _s(m: re.Match) -> str:
    word = m[1]
    if word.lower() == "let":
        return f"{word} us"
    return f"{word} is" if word.lower() in _IS_BEFORE else m[0]


def expand_contractions(question: str) -> str:
    """`question` with its contractions written out (see the module's docstring)."""
    q = _NOT.sub(_not, question)
    q = _S.sub(_s, q)
    return _OTHER.sub(lambda m: f"{m[1]} {_OTHER_WORDS[m[2].lower()]}", q)
