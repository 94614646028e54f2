"""Does a governed object's name cover the phrase the question names it by?

A weak match — a fuzzy name score, scattered name words, distinctive words, or
retrieval's top governed hit — shares words with the question; it is the
object asked about only when the question's object phrase has no word the
object's names do not account for. "customer returns rate" shares "return"
and "rate" with "return to sender rate", but "customer" is the question's own
modifier: no governed object is named, and answering from the look-alike is
the worst failure Canon can have (canon/ask/pipeline.py abstains with
`no_matching_object`).

The object phrase is the run of question words around the words the object's
names cover: the run may hold a few words the names do not (`MAX_GAP`), and
the words just before it are its modifiers, up to the first grammar word
(`BOUNDARY`). When no name word occurs at all (a plain-words description) the
phrase a question puts before "definition" or "metric" ("which governed WAU
definition") is the object phrase instead. Every list here is about the
grammar of questions, never about a corpus."""

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from rapidfuzz import fuzz, process

from canon.ask.understanding.match import (
    _STOP,
    SYNONYMS_OF,
    _same_word,
    initialism_words,
    padded,
    prefixed,
    same_measure,
    singular,
    stated_names,
)
from canon.ask.understanding.named_sources import ATTRIBUTION_VERBS, DRAFT_WORDS, OLD_WORDS
from canon.ask.understanding.stems import stem

# The most uncovered words a phrase may hold between two covered ones and still be one
# phrase ("ticket <reopen> rate"): one word is a modifier, three are another clause.
MAX_GAP = 2

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov",
           "dec")
# Words that end a noun phrase: determiners, pronouns, prepositions, auxiliaries, question
# words, verbs of asking, time words, and the words that say what is asked about it.
BOUNDARY = set(_STOP) | set(_MONTHS) | {
    "this", "that", "these", "those", "my", "your", "their", "its", "we", "i", "you", "me", "us", "it", "they",
    "at", "by", "with", "from", "into", "as", "like", "per", "about", "over", "under", "between", "since",
    "until", "after", "before", "toward", "towards", "within", "across", "vs", "versus", "against",
    "are", "was", "were", "be", "been", "do", "does", "did", "has", "have", "had", "can", "could", "should",
    "would", "will", "must", "may", "might", "how", "who", "whom", "whose", "when", "where", "why", "not", "no",
    "define", "defined", "defines", "explain", "describe", "show", "tell", "give", "list", "find", "get",
    "mean", "means", "meaning", "compute", "computed", "calculate", "calculated", "count", "counted", "measure",
    "measured", "apply", "applies", "applied", "govern", "governs", "covers", "covering", "official", "approved",
    "canonical", "current", "latest", "previous", "new", "old", "today", "now", "yesterday", "tomorrow", "week",
    "fortnight", "month", "quarter", "year", "day", "date", "period", "ago", "iso", "close", "end", "start",
    "report", "reporting", "as", "kpi",
    "value", "total", "amount", "number", "figure", "lineage", "source", "sources", "upstream", "downstream",
    "feed", "feeds", "fresh", "freshness", "stale", "data", "owner", "owns", "own", "deprecated", "table", "column",
    "columns", "grain", "please", "exactly", "really", "right", "still", "all", "every", "any", "each",
    "there", "here", "so", "if", "then", "but", "also", "include", "includes", "including", "exclude",
    "excludes", "use", "used", "uses", "supports", "supported", "implements", "implemented", "powers", "backs",
    "full", "entire", "whole", "complete", "verbatim", "paste", "summarise", "summarize", "quote", "print", "dump",
    # Verbs of asking that open a request ("Check first response time freshness …", "Pull X").
    "check", "verify", "confirm", "pull", "fetch", "display", "provide", "lookup", "look", "remind", "need",
    "want", "know", "wonder", "wondering", "curious",
    # Words that place a question in time ("back in Q1 2026", "as it was then", "originally")
    # and the verb of "where does it come from": no word of what is measured.
    "back", "then", "originally", "previously", "formerly", "historically", "initially", "come", "comes", "came",
    # Verbs that attribute a claim ("the slack thread <says> loan renewal …"): the source's words
    # before them are no part of the object phrase. Not the forms that are also nouns of a
    # measure's name ("claims", "states", "reads", "lists", "shows").
    "say", "says", "said", "tells", "told", "mentions", "mentioned", "suggests", "suggested", "claimed",
    "insists", "insisted", "argues", "argued", "wrote", "writes", "recommends", "recommended", "saying",
    "telling", "claiming", "stating", "suggesting", "mentioning", "insisting", "reckons", "thinks", "believes",
}
# Nouns that head the name of a measure in any domain: a phrase ending in one names a measure
# ("average delivery <time>") even when the candidate's own name ends in another word.
MEASURE_NOUNS = {"rate", "rates", "ratio", "time", "duration", "score", "share", "percentage", "percent", "average",
                 "median", "cost", "costs", "price", "index", "margin", "volume", "hours", "minutes", "days",
                 "yield", "growth", "length", "size", "level", "frequency", "latency", "throughput",
                 "utilization", "utilisation", "uptime", "revenue", "spend", "churn", "retention",
                 # A value set for a measure is another object than its definition: "the handle
                 # time <target>", "the headcount <budget>" ask for what a plan or a memo sets.
                 *(w + s for w in ("target", "goal", "budget", "forecast", "threshold", "quota", "benchmark",
                                   "baseline") for s in ("", "s")),
                 # So is its spread, or its gap to a plan: "the headcount <variance>", "the first
                 # response time <deviation>".
                 "variance", "variances", "deviation", "deviations"}
# Words naming an aggregate, by the aggregate they name (canon/ask/understanding/measure_shape.py).
AGGREGATES = {
    "mean": ("mean", "average", "averaged", "avg"),
    "median": ("median",),
    "sum": ("sum", "summed", "total", "totals"),
    "count": ("count", "number", "total", "totals"),   # "the total of employees" counts them
    "share": ("share", "percentage", "percent", "proportion", "fraction"),
    "extreme": ("maximum", "max", "minimum", "min", "peak"),
    "percentile": ("percentile",),
}
# What a question can take of a model's rows ("the share of …", "the total of …").
_AGGREGATE_WORDS = frozenset(w for words in AGGREGATES.values() for w in words)
_MEASURES_OF_ROWS = MEASURE_NOUNS | _AGGREGATE_WORDS
# Nouns a question names an object through ("the X definition", "the X metric").
_SLOT_NOUNS = ("definition", "definitions", "metric", "metrics", "kpi")

# A misspelled short word ("on-tme") still covers: the ratio that "tme"/"time" reaches and
# "late"/"rate" (75) does not.
_SHORT_RATIO = 85

_WORD = re.compile(r"[A-Za-z0-9]+|[.?!;:,()\"]")


@dataclass
class Coverage:
    covered: bool          # the object phrase holds only words the names account for
    phrase: list[str]      # the question's object phrase (empty: none found)
    uncovered: list[str]   # its words no name accounts for


@lru_cache(maxsize=256)
def _words(question: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(question.lower()))


# Adverb particles that make a verb into another name ("opt in" / "opt out", "check in" / "check
# out"): one written where a name has another is another thing, hyphen or none.
_PARTICLES = frozenset({"in", "out", "up", "down", "on", "off", "over", "back", "through", "away"})


def _particle_swaps(toks: tuple[str, ...], names: Iterable[str]) -> set[int]:
    """Positions of a particle the question writes between two words a name has around another
    particle ("opt <in> rate" beside "opt out rate")."""
    out = set()
    for name in names:
        nw = name.split()
        for m in range(1, len(nw) - 1):
            if nw[m] not in _PARTICLES:
                continue
            for k in range(1, len(toks) - 1):
                if (toks[k] in _PARTICLES and toks[k] != nw[m] and _same_word(toks[k - 1], nw[m - 1])
                        and _same_word(toks[k + 1], nw[m + 1])):
                    out.add(k)
    return out


# Words that make a hyphenated compound a phrase of time ("year-to-date", "month-over-month",
# "end-of-day", "as-of", "up-to-date"), never part of what is measured.
_TIME_COMPOUND_WORDS = frozenset({"day", "days", "week", "weeks", "month", "months", "quarter", "quarters", "year",
                                  "years", "date", "fortnight", "as", "time"})
_COMPOUND = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


@lru_cache(maxsize=256)
def hyphen_joined(question: str) -> frozenset[int]:
    """Positions (in `_words`) of the words of a hyphenated compound ("no-show", "opt-in",
    "check-in"), other than a compound of time: written with a hyphen, a grammar word is part of a
    name ("opt-in rate" is no "opt rate"), so it does not end the object phrase."""
    text = question.lower()
    starts = {m.start(): i for i, m in enumerate(_WORD.finditer(text))}
    out: set[int] = set()
    for m in _COMPOUND.finditer(text):
        parts = m.group().split("-")
        first = starts.get(m.start())
        if first is None or any(p in _TIME_COMPOUND_WORDS or p.isdigit() for p in parts):
            continue
        out.update(range(first, first + len(parts)))
    return frozenset(out)


def stated_synonyms(text: str) -> frozenset[str]:
    """Names a governed text states for its object ("…, also called unit delivery cost, is…")."""
    return stated_names(text)


def _same(t: str, v: str) -> bool:
    return _same_word(t, v) or (len(t) >= 3 and len(v) >= 3 and fuzz.ratio(t, v) >= _SHORT_RATIO
                                and not prefixed(t, v))


def is_participle(w: str) -> bool:
    """A regular past participle ("reopened", "demoted"): "-ed" after at least three letters, not
    "-eed" ("speed", "exceed")."""
    return len(w) >= 5 and w.endswith("ed") and not w.endswith("eed")


@lru_cache(maxsize=1 << 12)
def _is_boundary(w: str) -> bool:
    return w in BOUNDARY or w.rstrip("s") in BOUNDARY or not w.isalnum() or any(c.isdigit() for c in w)


# A subject pronoun's next word is its verb, whatever the verb ("what do we <call> network
# egress spend", "how do you <track> churn"): no noun phrase takes it in.
_SUBJECT_PRONOUNS = frozenset({"i", "we", "you", "they"})


def _ends_phrase(toks: tuple[str, ...], k: int) -> bool:
    """`toks[k]` is no word of a noun phrase: a boundary word, or the verb of a subject pronoun."""
    return _is_boundary(toks[k]) or (k > 0 and toks[k - 1] in _SUBJECT_PRONOUNS)


def _initialisms(names: Iterable[str]) -> set[str]:
    """The initials of every run of two or more words of a name: "on time delivery rate" is
    written "otd" and "otdr" as readily as in full."""
    out = set()
    for n in names:
        words = n.split()
        for i in range(len(words)):
            for j in range(i + 2, len(words) + 1):
                out.add("".join(w[0] for w in words[i:j]))
    return out


class WordSet:
    """Words a question word may stand for under `_same`: equal up to a plural s, or (3+
    letters each) fuzz.ratio >= _SHORT_RATIO. `_same_word`'s fuzzy branch (5+ letters, 88)
    lies inside the second, so `has(t)` is `any(_same(t, v) for v in words)`."""

    __slots__ = ("words", "stems", "long", "_memo")

    def __init__(self, words: Iterable[str]):
        self.words = frozenset(words)
        self.stems = frozenset(singular(w) for w in self.words)
        self.long = tuple(sorted(w for w in self.words if len(w) >= 3))
        self._memo: dict[str, bool] = {}

    def has(self, t: str) -> bool:
        """`has_spelled`, or `t` is a word of the same measure as one of the words
        (`match.MEASURE_SYNONYMS`: "ratio" for "rate")."""
        if self.has_spelled(t):
            return True
        group = SYNONYMS_OF.get(t) or SYNONYMS_OF.get(t.rstrip("s"))
        return bool(group and group & self.stems)

    def has_spelled(self, t: str) -> bool:
        got = self._memo.get(t)
        if got is None:
            got = singular(t) in self.stems or (
                len(t) >= 3 and any(not prefixed(t, v) for v, _, _ in process.extract(
                    t, self.long, scorer=fuzz.ratio, processor=None, score_cutoff=_SHORT_RATIO, limit=None)))
            if len(self._memo) < 512:
                self._memo[t] = got
        return got


class TextWords(WordSet):
    """A text's words (an object's names and definitions) for `_uses`: a word holds in it in
    some form (`_same_stem`) when `WordSet.has` finds it (`_same`), when one of the text's
    words has its Snowball stem, or when one shares its first five letters and `shares_stem`.
    Looked up rather than compared with each of the text's words: a candidate's definitions
    run to hundreds of words, and a question with many candidates compared each content word
    with all of them (most of the resolve step's time over a large catalog, bench/query.py)."""

    __slots__ = ("snowball", "by_prefix")

    def __init__(self, words: Iterable[str]):
        super().__init__(words)
        self.snowball = frozenset(stem(w) for w in self.words)
        by_prefix: dict[str, list[str]] = {}
        for w in self.words:
            if len(w) >= 5:   # shares_stem needs five letters in common from the start
                by_prefix.setdefault(w[:5], []).append(w)
        self.by_prefix = by_prefix

    def uses(self, t: str) -> bool:
        return (t in self.words or stem(t) in self.snowball
                or any(shares_stem(t, v) for v in self.by_prefix.get(t[:5], ())) or self.has(t))


@lru_cache(maxsize=1024)
def text_words(text: str) -> TextWords:
    return TextWords(_words(text))


@dataclass(frozen=True)
class NameSet:
    """What `coverage` derives from an object's names, computed once per set of names (a
    candidate is scored for many questions; deriving these per call was most of its cost)."""

    vocab: frozenset[str]                 # name words, extra words and initialisms
    vocab_words: WordSet                  # the same, for `_same`
    cores: tuple[tuple[str, ...], ...]    # each name's words without stop words
    heads: WordSet                        # each core's last word and the initialisms
    initials: frozenset[str] = frozenset()  # the initialisms that are no word of a name


# Head nouns a measure is named without as often as with: "readmissions" for the readmission
# rate, "on-time delivery" for the on-time delivery rate, "first response" for first response time.
MEASURE_HEADS = frozenset({"rate", "ratio", "time", "duration", "percentage", "score", "index", "length"})


def without_measure_head(names: Iterable[str]) -> set[str]:
    """Each name less its measure head noun (`MEASURE_HEADS`), when something is left."""
    out = set()
    for n in names:
        words = n.split()
        if len(words) >= 2 and words[-1] in MEASURE_HEADS:
            out.add(" ".join(words[:-1]))
    return out


_BEFORE_A_VERB = frozenset({"to", "we", "i", "you", "they", "will", "would", "can", "could", "should", "must",
                            "may", "might", "do", "does", "did", "not", "never", "always", "please"})
_ARTICLES_AFTER_A_VERB = frozenset({"the", "a", "an", "this", "that", "these", "those", "our", "your", "their",
                                    "its", "my", "his", "her", "it", "them"})


def names_without_head(question: str, names: Iterable[str]) -> bool:
    """The question writes one of the names less its measure head as a noun phrase of its own
    ("how were <readmissions> counted", "is <on-time delivery> …"), plurals aside: grammar or the
    question's end on both sides, no other measure noun after it ("readmission <count>")."""
    toks = _words(question)
    bare = [singular(w) for w in toks]
    for n in without_measure_head(names):
        nw = [singular(w) for w in n.split()]
        k = len(nw)
        for i in range(len(toks) - k + 1):
            if bare[i:i + k] != nw:
                continue
            before_ok = i == 0 or _is_boundary(toks[i - 1]) or toks[i - 1] in _STOP
            after_ok = i + k == len(toks) or (_is_boundary(toks[i + k]) and toks[i + k] not in _MEASURES_OF_ROWS)
            # One word may be a verb ("tells me to <take> the census" beside the take rate): not
            # after an infinitive's "to", a pronoun or an auxiliary, nor before an article.
            verb = k == 1 and ((i > 0 and toks[i - 1] in _BEFORE_A_VERB) or (
                i + 1 < len(toks) and toks[i + 1] in _ARTICLES_AFTER_A_VERB))
            if before_ok and after_ok and not verb:
                return True
    return False


@lru_cache(maxsize=1 << 15)
def name_set(names: frozenset[str], extra_words: frozenset[str] = frozenset()) -> NameSet:
    inits = _initialisms(names)
    vocab = frozenset({w for n in names for w in n.split()} | set(extra_words) | inits)
    cores = tuple(tuple(w for w in n.split() if w not in _STOP) for n in sorted(names))
    heads = {core[-1] for core in cores if core} | inits   # "OTD" stands for the whole name
    initials = frozenset(inits - {w for n in names for w in n.split()} - set(extra_words))
    return NameSet(vocab, WordSet(vocab), cores, WordSet(heads), initials)


def phrase_in_one_name(phrase: Iterable[str], names: Iterable[str], extra_words: Iterable[str] = frozenset()) -> bool:
    """The object phrase's words stand together in one name, in its order and with no name word
    left out between them ("delivery rate" of "on time delivery rate"), or the phrase holds a
    whole name ("express on time delivery rate"). A phrase whose words a name holds only with
    another word between them ("rework rate" of "rework scrap rate", "first yield" of "first pass
    yield") or that takes its words from two names ("pass" of "first pass yield" and "rate" of
    "right first time rate") names another measure. Grammar words, the domain and initialisms
    are left out of the comparison; a phrase of one word is not judged here."""
    extra = set(extra_words)
    inits = _initialisms(names)
    core = [w for w in phrase if w not in _STOP and w not in extra and w not in inits and not _is_boundary(w)]
    if len(core) < 2:
        return True
    for n in names:
        nw = [w for w in n.split() if w not in _STOP and not _is_boundary(w)]
        short, long = (core, nw) if len(core) <= len(nw) else (nw, core)
        for i in range(len(long) - len(short) + 1):
            if all(_alike(a, b) for a, b in zip(short, long[i:i + len(short)])):
                return True
    return False


def words_in_one_name(phrase: Iterable[str], names: Iterable[str]) -> bool:
    """One of `names` holds every content word of the object phrase, in any order and with
    other words between ("first time" of "first response time"): the phrase does not take its
    words from two names ("claims closed" of "claim cycle time" and "days to close")."""
    core = _content(phrase)
    if len(core) < 2:
        return True
    return any(all(_in_name(w, n) for w in core) for n in names)


def aggregate_beside_name_words(phrase: Iterable[str], names: Iterable[str]) -> bool:
    """The object phrase's words that none of `names` holds are aggregate words ("<average>" of
    "the average block hours" beside block hour utilization): a measure described by the
    aggregate its definition takes, not a name. A domain word ("<claim> rate") is no aggregate."""
    extra = [w for w in _content(phrase) if not any(_in_name(w, n) for n in names)]
    return bool(extra) and all(w in _AGGREGATE_WORDS for w in extra)


def _content(phrase: Iterable[str]) -> list[str]:
    return [w for w in phrase if w not in _STOP and not _is_boundary(w)]


def in_some_name(w: str, names: Iterable[str]) -> bool:
    """A word of one of `names`, plurals aside."""
    return any(_in_name(w, n) for n in names)


def _in_name(w: str, name: str) -> bool:
    return any(_alike(w, v) for v in name.split())


def _alike(a: str, b: str) -> bool:
    """One word in two forms, plurals aside (`_same`)."""
    return _same(a, b) or _same(singular(a), singular(b))


def coverage(question: str, names: Iterable[str], extra_words: Iterable[str] = frozenset()) -> Coverage:
    """The object phrase of `question` measured against an object's `names` (normalized,
    as in the catalog) and `extra_words` (its domain, say)."""
    names = frozenset(names)
    ns = name_set(names, frozenset(extra_words))
    vocab, cores = ns.vocab, ns.cores
    toks = _words(question)
    joined = hyphen_joined(question) | _particle_swaps(toks, names)
    hit = [not _ends_phrase(toks, k) or t in vocab or k in joined for k, t in enumerate(toks)]
    covered = [ns.vocab_words.has(t) if h else False for t, h in zip(toks, hit)]
    if ns.initials and ns.initials.intersection(toks):
        # An English word spelling an initialism ("is the <far> rate defined?") is a word.
        allowed = initialism_words(question)
        covered = [c and (t not in ns.initials or t in allowed) for t, c in zip(toks, covered)]
    anchors = [i for i, t in enumerate(toks) if covered[i] and t not in _STOP]
    if not anchors:
        return _slot_phrase(toks, covered)
    # Group anchors into phrases: a gap of up to MAX_GAP non-boundary words joins two anchors.
    groups: list[list[int]] = [[anchors[0]]]
    for i in anchors[1:]:
        between = range(groups[-1][-1] + 1, i)
        if len(between) <= MAX_GAP and all(hit[j] for j in between):
            groups[-1].append(i)
        else:
            groups.append([i])

    def name_words(g: list[int]) -> int:
        words = [toks[i] for i in g]
        return max((sum(any(_same_word(w, c) for w in words) for c in core) for core in cores), default=0)

    best = max(groups, key=lambda g: (name_words(g), len(g), -g[0])) if len(groups) > 1 else groups[0]
    lo, hi = best[0], best[-1]
    while lo > 0 and hit[lo - 1]:
        lo -= 1   # modifiers before the phrase, up to the first grammar word
    while hi + 1 < len(toks) and hit[hi + 1] and hi - best[-1] < MAX_GAP:
        hi += 1   # and the head noun after it ("customer <returns rate>")
    while hi > lo and (toks[hi] in _STOP or not covered[hi]) and toks[hi] not in MEASURE_NOUNS:
        hi -= 1   # trailing words the names do not hold, unless one is the phrase's measure noun
    # Only a phrase headed by a name's head noun names an object ("customer returns <rate>");
    # one that ends elsewhere ("parcels <returned> to the merchant") describes it in other words.
    if not ns.heads.has(toks[hi]) and toks[hi] not in MEASURE_NOUNS:
        return Coverage(True, [], [])
    if not any(covered[i] and ns.vocab_words.has_spelled(toks[i]) for i in range(lo, hi + 1)):
        # A word of the same measure ("proportion" for "rate") stands for a name's word only beside
        # a word the name holds as written ("crop loss <proportion>"); alone it names nothing ("the
        # proportion of monthly active accounts that …" is a description).
        return _slot_phrase(toks, [c and ns.vocab_words.has_spelled(t) for t, c in zip(toks, covered)])
    phrase = list(toks[lo:hi + 1])
    uncovered = [toks[i] for i in range(lo, hi + 1)
                 if hit[i] and not covered[i] and (toks[i] not in _STOP or i in joined)]
    return Coverage(not uncovered, phrase, uncovered)


# How alike a grammar word must be to the name's word in its place for a fuzzy match of the
# whole name to have read one as the other ("count" / "cost": 67, and the same first letter).
_IN_PLACE_RATIO = 60


def grammar_word_in_name_place(question: str, phrase: list[str], names: Iterable[str]) -> bool:
    """A grammar or asking word written just where a name has a word the object phrase lacks,
    and like it: "the delivery attempt <count> per parcel" beside cost per parcel. Coverage
    leaves such words out of the phrase ("count", "total", "number" say what is asked), so "per
    parcel" looks named while the question writes another word where the name has "cost" (the
    fuzzy match of the whole name read one as the other)."""
    toks = _words(question)
    n = len(phrase)
    if not n:
        return False
    for name in names:
        nw = name.split()
        for k in range(len(nw) - n + 1):
            if not all(_same(a, b) for a, b in zip(nw[k:k + n], phrase)):
                continue
            for i in (i for i in range(len(toks) - n + 1) if list(toks[i:i + n]) == list(phrase)):
                sides = ((i - 1, k - 1), (i + n, k + n))
                for q, m in sides:
                    if 0 <= q < len(toks) and 0 <= m < len(nw):
                        t, w = toks[q], nw[m]
                        if t.isalpha() and _is_boundary(t) and t != w and t[0] == w[0] \
                                and fuzz.ratio(t, w) >= _IN_PLACE_RATIO:
                            return True
    return False


def _slot_phrase(toks: tuple[str, ...], covered: list[bool]) -> Coverage:
    """No name word in the question: the words it puts before "definition"/"metric"."""
    for i, t in enumerate(toks):
        if t in _SLOT_NOUNS:
            j = i
            while j > 0 and not _ends_phrase(toks, j - 1):
                j -= 1
            phrase = list(toks[j:i])
            if phrase:
                uncovered = [w for w, c in zip(phrase, covered[j:i]) if not c]
                return Coverage(not uncovered, phrase, uncovered)
    return Coverage(True, [], [])


# A question that names no object's words can still describe one: "the share of parcels sent
# back to the merchant after delivery fails" is how the return-to-sender rate's definition puts
# it. Retrieval's top governed hit is taken for such a description only when its own text uses
# most of the question's content words (`DESCRIPTION_MIN_SHARE`); a question of at most
# `SHORT_DESCRIPTION` content words is a name rather than a description, and every one of its
# words must be used. A hit that shares one or two words ("rate", "checkout ... share") with a
# name no object has ("backlog burn-down velocity", "checkout abandonment share", "MTTR") is not
# described by it: the question abstains with `no_matching_object` (canon/ask/pipeline.py,
# `_discover`). Measured on the description and non-existent-object cases of
# tests/gold_understanding/gold_dev.json (descriptions there have 4 to 9 content words and use
# 60 % or more of them; the names no object has use at most two of three).
DESCRIPTION_MIN_SHARE = 0.6
SHORT_DESCRIPTION = 3


def _same_stem(a: str, b: str) -> bool:
    """One word in another form: a plural, a misspelling, or another ending of the same stem
    ("delivered" / "delivery", "approving" / "approval": five letters and three quarters of the
    shorter word in common), or one Snowball stem ("loaded" / "load", "fails" / "failed": the
    stems the index's full-text search reads, `stems.stem`)."""
    return _same(a, b) or stem(a) == stem(b) or shares_stem(a, b)


def shares_stem(a: str, b: str) -> bool:
    """Another ending of one stem, spelled out: five letters and three quarters of the shorter
    word in common ("delivered" / "delivery"). No fuzzy match: "last" is not "least"."""
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return n >= 5 and n >= 0.75 * min(len(a), len(b))


def renames(question: str, names: Iterable[str]) -> bool:
    """The question writes every word of one of `names` but its head, then a noun the names lack
    in the head's place: "daily active <sessions>" beside daily active users, "total goodwill
    <refunds>" beside total goodwill credits. When the name's head counts units (users, credits)
    another unit is another object, though the definition may use every word of the question.
    A name headed by a measure noun ("return-to-sender rate", "first response time") measures
    units the question may name in that place ("return-to-sender <parcels>", "the first response
    <clock>"): those the definition itself defines. A past participle in the head's place is a
    clause about the things named ("claims <closed> with payment", "tickets <opened> before month
    end"), not another head."""
    toks = _words(question)
    for name in names:
        nw = _words(name)
        if len(nw) < 2 or nw[-1] in MEASURE_NOUNS:
            continue
        k = len(nw) - 1
        known = set(nw)
        for i in range(len(toks) - k):
            nxt = toks[i + k]
            # The swapped word heads the phrase: the question's end, a grammar word or a noun the
            # question names an object through follows it ("trailer <parked> overnight" is a
            # verb, not another trailer measure; "<sessions> definition" heads the phrase).
            heads = i + k + 1 == len(toks) or _is_boundary(toks[i + k + 1]) or toks[i + k + 1] in _SLOT_NOUNS
            if heads and all(_same(toks[i + j], nw[j]) for j in range(k)) and (
                    _other_quantity(nxt, nw[-1]) or (not _is_boundary(nxt) and not is_participle(nxt)
                                                     and not any(_same(nxt, w) for w in known))):
                return True
    return False


# Words saying which quantity of the things is taken, by what they take: how many, or how much.
# Each asks what is measured (grammar words of a question, `BOUNDARY`), but in a name's head's
# place one of the other group is another measure ("average transaction <count>" beside the
# average transaction value). "Total" says either ("the total of employees" counts them).
_QUANTITY_GROUPS = ({"count", "number"}, {"value", "amount"})


def _other_quantity(word: str, head: str) -> bool:
    return any(head in group for group in _QUANTITY_GROUPS) and any(word in group for group in _QUANTITY_GROUPS) \
        and not any(head in group and word in group for group in _QUANTITY_GROUPS)


def _uses(words: TextWords, t: str) -> bool:
    """`words` (a text's) hold `t` in some form of the word: `any(_same_stem(t, v) for v in
    words)`, looked up (`TextWords.uses`)."""
    return words.uses(t)


# A clause asking for lineage ("which raw sources support it", "what upstream tables power the
# …", "the raw tables behind it"): its adjectives and its verb say what is asked, never what the
# object is. The verb is the word after the clause's noun when a grammar word follows it
# ("support <it>"); "which data quality rules" has a noun there, not a verb.
_CLAUSE_ADJECTIVES = frozenset({"raw", "upstream", "underlying", "source", "staging", "input", "landing"})
_CLAUSE_NOUNS = frozenset({"source", "sources", "table", "tables", "model", "models", "data", "input", "inputs",
                           "system", "systems", "dataset", "datasets", "feed", "feeds", "load", "loads"})
# Clause nouns that are verbs too ("which tables <feed> it").
_CLAUSE_VERBS = frozenset({"feed", "feeds", "load", "loads", "source", "sources", "model", "models", "input"})


def _asking_clause(toks: tuple[str, ...]) -> set[int]:
    """Positions of `toks` that belong to a clause asking for lineage: a clause noun after
    "which"/"what" or after adjectives of the clause, those adjectives, and the verb after the
    noun; only where the noun ends a phrase, by a grammar word or by a verb (a word a grammar
    word follows: "which sources <support> it"). "Which data quality rules" is no such clause."""
    out: set[int] = set()
    n = len(toks)
    for k, t in enumerate(toks):
        if t not in _CLAUSE_NOUNS or (k + 1 < n and toks[k + 1] in _CLAUSE_NOUNS - _CLAUSE_VERBS):
            continue   # "source <systems>": the noun is the last one
        j = k - 1
        while j >= 0 and toks[j] in _CLAUSE_ADJECTIVES:
            j -= 1
        opened = j >= 0 and toks[j] in ("which", "what")
        if not opened and j == k - 1:
            continue
        ends = k + 1 == n or _is_boundary(toks[k + 1])
        verb = not ends and (k + 2 == n or _is_boundary(toks[k + 2]))
        if ends or verb:
            out.update(range(j + 1, k + 1))
            if verb and opened:
                out.add(k + 1)
    return out


# At most this many words before a name are read as its modifiers.
_MAX_MODIFIERS = 3
# Words that open a noun phrase: what may stand just before a name's modifiers.
_PHRASE_OPENERS = frozenset({"the", "a", "an", "our", "your", "their", "its", "my", "this", "that", "these", "those",
                             "is", "are", "was", "were", "of", "for", "in", "on", "at", "by", "about", "define",
                             "defined", "which", "with", "from"})
# Verbs a question may open with, before the name it asks about ("Compare net revenue …").
_OPENING_VERBS = frozenset({
    "compare", "show", "list", "give", "tell", "explain", "describe", "find", "get", "check", "display", "summarize",
    "summarise", "fetch", "return", "open", "pull", "look", "calculate", "compute", "break", "provide", "print",
    "retrieve", "confirm", "verify", "clarify", "walk", "send", "need", "want", "please", "pick", "choose", "use",
    "publish", "export", "refresh", "rerun", "run", "recompute", "validate", "audit", "review", "identify"})
_PRONOUNS = frozenset({"everything", "anything", "something", "nothing", "everyone", "anyone", "someone", "all",
                       "each", "every", "either", "neither", "whatever"})
# How many revisions or documents, not another measure ("the two OTD definitions", "both …").
_COUNT_WORDS = frozenset({"two", "three", "four", "both", "several", "various", "different", "multiple"})
# Words before a name that are no modifiers of it: the verbs that attribute or report ("the wiki
# says DAU …", "the dashboard shows …") and prepositions ("the data behind X").
_NOT_MODIFIERS = frozenset(ATTRIBUTION_VERBS) | {
    "behind", "through", "via", "around", "beside", "beyond", "near", "without", "against", "among", "throughout",
    "includes", "include", "included", "excludes", "exclude", "excluded", "counts", "tracks", "track", "measures",
    "reports", "report", "reported", "shows", "uses", "use", "used", "maintains", "maintained", "owns", "owned",
    "feeds", "feed", "fed", "drives", "supports", "computes", "calculates", "trace", "traces", "explain"}
# Words that say which revision or document, not what is measured ("the legacy net revenue wiki").
_WHICH_REVISION = frozenset(OLD_WORDS) | frozenset(DRAFT_WORDS) | {
    "new", "newer", "newest", "latest", "original", "initial", "governed", "official", "approved", "updated",
    "revised", "retired", "current", "present", "earlier", "prior", "former",
    # words that say "the one we all use", not another measure ("the standard net revenue")
    "standard", "overall", "global", "company", "companywide", "consolidated", "headline", "main", "actual",
    "real", "true", "exact", "precise", "agreed", "correct", "proper", "accepted", "definitive", "authoritative",
    "sanctioned", "reported", "published", "usual", "normal", "regular", "general", "entire", "same"}
_REPORTING_FREQUENCIES = frozenset({"daily", "weekly", "monthly", "quarterly", "yearly", "annual", "hourly"})
# Units a number before a name counts in ("the 90-day …", "the 12 month …").
_UNITS = frozenset({"day", "days", "week", "weeks", "month", "months", "year", "years", "hour", "hours", "minute",
                    "minutes", "second", "seconds", "quarter", "quarters"})
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
# A code of letters and digits before a name ("the <3DS> authorization rate", "<5G> coverage
# rate", "<B2B> churn"): a modifier; not a version, a period, a time or a window ("v2", "Q3",
# "H1", "FY26", "18th", "6am", "30d"), which say which revision, when or how long.
_CODE = re.compile(r"(?=[a-z]*\d)(?=\d*[a-z])[a-z\d]{2,8}")
_NO_CODE = re.compile(r"v\d+|q[1-4]|h[12]|fy\d{2,4}|\d+(?:st|nd|rd|th|am|pm|[dwmyh]|hrs?|mins?|days?|wks?|mos?|yrs?)")


def _name_span(toks: tuple[str, ...], names: Iterable[str]) -> tuple[int, int] | None:
    """Where the first of `names` written out whole in `toks` starts and ends (the index after
    its last word); of two starting together, the longer ("vaccine reminder conversion <rate>"
    over "vaccine reminder conversion"), whatever order a set of names comes in."""
    best = None
    for n in names:
        nw = n.split()
        for i in range(len(toks) - len(nw) + 1):
            if all(_same_word(toks[i + j], nw[j]) for j in range(len(nw))):
                if best is None or i < best[0] or (i == best[0] and i + len(nw) > best[1]):
                    best = (i, i + len(nw))
                break
    return best


def _name_start(toks: tuple[str, ...], names: Iterable[str]) -> int | None:
    span = _name_span(toks, names)
    return None if span is None else span[0]


def name_end(toks: tuple[str, ...], names: Iterable[str]) -> int | None:
    span = _name_span(toks, names)
    return None if span is None else span[1]


def name_start(toks: tuple[str, ...], names: Iterable[str]) -> int | None:
    span = _name_span(toks, names)
    return None if span is None else span[0]


# Grammar words inside a measure's name ("mean time <to> repair", "dock <to> stock time").
_LINKS = frozenset({"to", "between", "of", "for", "per", "from", "until", "till", "before", "after", "since", "in",
                    "on", "at", "by", "without", "with"})


def continues_otherwise(question: str, phrase: list[str], names: Iterable[str]) -> bool:
    """The question's object phrase stops where one of `names` goes on through a grammar word
    ("mean time | to repair"), and the question goes on through another grammar word or another
    word after it ("mean time <between repairs>", "mean time to <failure>"): the words name
    another measure, made of parts of this name and something else. Coverage reads only the
    shared start ("mean time"), which two names may hold alike."""
    if not phrase:
        return False
    toks = _words(question)
    n = len(phrase)
    end = next((i + n for i in range(len(toks) - n + 1) if list(toks[i:i + n]) == list(phrase)), None)
    if end is None or end + 1 >= len(toks):
        return False
    link, word = toks[end], toks[end + 1]
    if link not in _LINKS or not word.isalpha() or _is_boundary(word):
        return False
    for name in names:
        nw = name.split()
        k = next((j for j in range(len(nw) - 1, -1, -1) if _same(phrase[-1], nw[j])), None)
        if k is None or k + 2 >= len(nw) or nw[k + 1] not in _LINKS:
            continue
        if link != nw[k + 1] or not _same(word, nw[k + 2]):
            return True
    return False


def question_words(question: str) -> tuple[str, ...]:
    """The question's lower-case words and punctuation, as coverage reads them."""
    return _words(question)


_YEAR_WORD = re.compile(r"(?:19|20)\d{2}")
_DAY_OR_MONTH = re.compile(r"\d{1,2}")


def modifiers_before(question: str, names: Iterable[str]) -> list[str]:
    """The words written just before a whole name of the object that may make another measure of
    it (`unstated_modifiers` reads them against its definitions), in question order; empty for
    most questions, before any definition is read."""
    toks = _words(question)
    start = _name_start(toks, names)
    if start is None:
        return []
    mods: list[str] = []
    k = start - 1
    while k >= 0 and len(mods) < _MAX_MODIFIERS:
        t = toks[k]
        if t in _NOT_MODIFIERS or (t.endswith("ing") and len(t) > 5) or t in _PRONOUNS:
            return []   # "the old wiki <says> DAU …", "the data <behind> X", "<feeding> X", "<everything>"
        if _YEAR_WORD.fullmatch(t) or (k >= 2 and _YEAR_WORD.fullmatch(toks[k - 2]) and _DAY_OR_MONTH.fullmatch(t)
                                       and _DAY_OR_MONTH.fullmatch(toks[k - 1])):
            break   # "for the <2026-06-30> capacity factor", "the <2026> capacity factor": when, not which
        if _NUMBER.fullmatch(t) or t in _UNITS or (_CODE.fullmatch(t) and not _NO_CODE.fullmatch(t)):
            mods.append(t)
        elif _is_boundary(t) or t in _STOP or len(t) == 1:   # one letter: a possessive's "s"
            break
        elif t in _REPORTING_FREQUENCIES or t in _WHICH_REVISION or t in _COUNT_WORDS:
            pass   # "the monthly …", "the legacy …", "the two …": how often, which or how many revisions
        else:
            mods.append(t)
        k -= 1
    # Only a noun phrase an article, a possessive, a copula or a preposition opens, or the
    # question's first word that is no verb, holds modifiers: "which group maintains headcount",
    # "Compare net revenue …" (an imperative opens the question), "to publish net revenue" (an
    # infinitive) have none; "Wheelchair baggage mishandling rate?" has one.
    if mods and (toks[0] in _OPENING_VERBS if k < 0 else toks[k] not in _PHRASE_OPENERS):
        return []
    return mods[::-1]


def unstated_modifiers(question: str, names: Iterable[str], text: str,
                       extra_words: Iterable[str] = frozenset()) -> list[str]:
    """The modifiers written just before a whole name of the object that `text` (its names and
    definitions) never states: "the <wheelchair> baggage mishandling rate", "the <90>-day …"
    beside a definition that counts 7 days. Another measure than the one governed, however whole
    the name after them. Grammar words end the walk back ("the", "our", "official"); the
    object's domain (`extra_words`) is no modifier."""
    mods = modifiers_before(question, names)
    if not mods:
        return []
    # A modifier only a sentence that leaves things out states ("audit students are excluded")
    # names what the definition does not count: it is stated nowhere the definition counts.
    words = TextWords(_counted_words(text))
    numbers = set(_NUMBER.findall(text))
    extra = set(extra_words)
    out = []
    for t in mods:
        if _NUMBER.fullmatch(t):
            if t not in numbers:
                out.append(t)
        elif t not in _UNITS and t not in extra and not words.uses(t):
            out.append(t)
    return out


# Nouns of a ratio's share: "the <share> of GMV that …", "fees as a <percentage> of GMV".
_SHARE_NOUNS = frozenset({"share", "percentage", "percent", "proportion", "fraction", "ratio", "pct"})
_DIVIDING = frozenset({"divide", "divides", "divided", "dividing", "over", "against", "relative"})


def names_a_component(question: str, phrase: list[str]) -> bool:
    """The object phrase stands in the question as a part of another measure: the whole a share
    is taken of ("the share of <GMV> that the marketplace keeps as fees", "fees as a percentage
    of <gross merchandise value>") or what is divided by ("which metric divides fees by <GMV>",
    "fees over <GMV>", "relative to <GMV>"). The question describes the measure built on it."""
    toks = _words(question)
    n = len(phrase)
    if not n:
        return False
    for i in range(len(toks) - n + 1):
        if list(toks[i:i + n]) != phrase:
            continue
        before = toks[max(0, i - 4):i]
        if len(before) >= 2 and before[-1] == "of" and (before[-2] in _SHARE_NOUNS or (
                len(before) >= 3 and before[-3] in _SHARE_NOUNS and before[-2] in ("total", "all", "the"))):
            return True
        if before and before[-1] in ("by", "over", "against") and any(w in _DIVIDING for w in before[:-1] + (before[-1],)):
            return True
        if len(before) >= 2 and before[-2:] == ("relative", "to"):
            return True
    return False


# Verbs whose object is a part of the measure asked about ("does circulation <include> e-book
# checkouts"), and the verbs after a part that say which measure it goes into ("are e-book
# checkouts <counted in> circulation").
_TAKES_IN = frozenset({"include", "includes", "included", "including", "exclude", "excludes", "excluding",
                       "contain", "contains", "cover", "covers", "add", "adds", "count", "counts", "counting"})
_PART_OF = re.compile(r"^(?:(?:are|is|be|get|gets|being)\s+)?(?:counted|included|excluded|added|part|left out|"
                      r"count|counts|go|goes)\s+(?:in|into|toward|towards|of|from)\b")
_ARTICLES = frozenset({"the", "a", "an", "any", "all", "its", "their", "our"})


def taken_in_as_part(question: str, phrase: list[str]) -> bool:
    """The object phrase stands as a part another measure takes in or leaves out: the object of
    "include", "exclude", "count" ("does circulation include <e-book checkouts>?") or the subject
    of "counted in", "included in" ("are <e-book checkouts> counted in circulation?"). Two
    measures named so, the question is about the one that takes the part in."""
    toks = _words(question)
    n = len(phrase)
    if not n:
        return False
    for i in range(len(toks) - n + 1):
        if list(toks[i:i + n]) != list(phrase):
            continue
        j = i
        while j > 0 and toks[j - 1] in _ARTICLES:
            j -= 1
        if j > 0 and toks[j - 1] in _TAKES_IN:
            return True
        if _PART_OF.match(" ".join(toks[i + n:i + n + 4])):
            return True
    return False


# Prepositions that place a name rather than qualify it ("the model <behind> turnaround time",
# "the tables <under> net revenue"): none is a sibling measure's qualifier.
_PLACING_PREPOSITIONS = frozenset({"behind", "beneath", "under", "underneath", "below", "above", "beside",
                                   "within", "inside", "into", "onto", "towards", "toward", "against", "across",
                                   "along", "around", "through", "throughout", "via", "without", "between", "among",
                                   "upon", "near", "beyond", "past", "like", "unlike", "versus", "vs"})


def qualifier_swapped(question: str, matched: str, names: Iterable[str], text: str) -> bool:
    """The question writes the name it matched ("availability") after a word that is not the
    qualifier another of the object's names puts there ("<turbine> availability"), and the
    object's text never puts that word before the name ("grid availability", where the text
    speaks only of "grid outages"): it names a sibling measure, not this one. "Time-based
    availability" stands where the text says "time-based turbine availability"."""
    toks = _words(question)
    mw = matched.split()
    n = len(mw)
    qualifiers = {nw[-n - 1] for nw in (name.split() for name in names) if len(nw) > n and nw[-n:] == mw}
    if not n or not qualifiers:
        return False
    text_padded = padded(text)
    for i in range(1, len(toks) - n + 1):
        if list(toks[i:i + n]) != mw:
            continue
        w = toks[i - 1]
        if w in qualifiers or _is_boundary(w) or w in _ARTICLES or not w.isalpha():
            continue
        # Only a word that opens the noun phrase qualifies the name: after a noun it is a verb
        # ("the model <supporting> GMV", "an old page <claims> GMV …").
        if i >= 2 and not (_is_boundary(toks[i - 2]) or toks[i - 2] in _ARTICLES):
            continue
        if w.endswith("ing") or is_participle(w) or w in _PLACING_PREPOSITIONS:
            continue
        said = f" {w} {matched} " in text_padded or any(f" {w} {q} {matched} " in text_padded for q in qualifiers)
        if not said:
            return True
    return False


# Words that head a measure or say which quantity of it ("the grant win <value>").
_HEAD_NOUNS = frozenset(MEASURE_NOUNS) | {"value", "amount", "count", "number", "total", "sum", "figure", "saving",
                                          "savings", "bonus", "bonuses", "fee", "fees", "loss", "losses", "gain",
                                          "gains"}


def head_swapped(question: str, matched: str, names: Iterable[str], text: str = "") -> bool:
    """The question writes the name it matched ("grant win", an id's name shortened) and then a
    measure's head that is not the one the object's longer names put there ("trust and
    foundation grant win <rate>"): "the grant win <value>" names another measure, of the same
    things, not this one. A measure the object's `text` (its definitions) writes is one of its
    parts, which a description may name ("divides <commission revenue> by …" of the commission
    margin)."""
    mw = matched.split()
    n = len(mw)
    heads = {nw[i + n] for nw in (name.split() for name in names) for i in range(len(nw) - n)
             if nw[i:i + n] == mw and nw[i + n] in _HEAD_NOUNS}
    if not n or not heads:
        return False
    toks = _words(question)
    for i in range(len(toks) - n):
        if list(toks[i:i + n]) != mw:
            continue
        w = toks[i + n]
        # A word of the same measure is no other head ("the return to sender <ratio>").
        if w in heads or w not in _HEAD_NOUNS or any(same_measure(w, h) for h in heads):
            continue
        # The word heads the phrase: the question's end or a grammar word follows it.
        if (i + n + 1 == len(toks) or _is_boundary(toks[i + n + 1])) and not (
                text and f" {matched} {w} " in padded(text)):
            return True
    return False


def number_swapped(question: str, phrase: list[str], names: Iterable[str]) -> bool:
    """The question writes a number right before its object phrase ("<7> day completion rate")
    where the object's names put another number before the phrase's first word ("bulky waste <5>
    day completion rate", "NMS <28> day follow-up …") and none puts the question's: a number in a
    name says which measure, as a word does. A number elsewhere ("readmitted after 7 days") is
    none of the name's."""
    if not phrase:
        return False
    toks = _words(question)
    n = len(phrase)
    before = {toks[i - 1] for i in range(1, len(toks) - n + 1) if list(toks[i:i + n]) == list(phrase)
              and toks[i - 1].isdigit()}
    if not before:
        return False
    held = {a for nm in names for a, b in zip(nm.split(), nm.split()[1:]) if a.isdigit() and b == phrase[0]}
    return bool(held) and not (before & held)


def head_swapped_in_part(question: str, names: Iterable[str], text: str = "") -> bool:
    """The question writes the first words of one of `names` and then another measure's head
    than the name's ("average seat <count>" of "average seat price", "the owing <value>" of the
    owing rate; `head_swapped` for each such start, `text` the object's definitions). A grammar
    word alone is no start ("on")."""
    names = list(names)
    return any(head_swapped(question, " ".join(nw[:k]), names, text)
               for nw in (n.split() for n in names) for k in range(1, len(nw))
               if nw[k] in _HEAD_NOUNS and not (k == 1 and nw[0] in _STOP))


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")


# What a question is for, set off before it by a comma ("For the milk quality <dashboard>, how is
# SCC defined?"): the things it is read for, none of them what is measured.
_SETTING_NOUNS = frozenset({"dashboard", "dashboards", "report", "reports", "reporting", "deck", "pack", "filing",
                            "review", "audit", "presentation", "meeting", "slide", "slides", "submission", "analysis",
                            "board", "newsletter", "scorecard"})
_SETTING = re.compile(r"^\s*(?:for|in|on)\s+(?:the|our|my|this|that|a|an|next|today's|tomorrow's)\s+"
                      r"(?P<words>[^,?.!]{0,60}?)\s*,\s*(?=\S)", re.IGNORECASE)


def _without_setting(question: str) -> str:
    """`question` less an opening "For the … dashboard," that says what it is asked for."""
    m = _SETTING.match(question)
    if m is None or not m.group("words").split() or m.group("words").lower().split()[-1] not in _SETTING_NOUNS:
        return question
    return question[m.end():]


def asking_part(question: str) -> str:
    """The sentences of `question` that ask (end in "?"), when it has others before them that
    set a scene ("We're rebuilding the ops dashboard for October 2026. Which on-time delivery
    definition should we use?") and the asking ones have content words of their own: the scene's
    words ("rebuilding", "dashboard") are no description of the object asked about. The whole
    question otherwise ("We count parcels by the promised day. How is that defined?")."""
    question = _without_setting(question)
    sentences = _SENTENCE_END.split(question.strip())
    if len(sentences) < 2:
        return question
    asking = [s for s in sentences if s.rstrip().endswith("?")]
    if not asking or len(asking) == len(sentences):
        return question
    text = " ".join(asking)
    toks = _words(text)
    clause = _asking_clause(toks)
    if not any(k not in clause and not _is_boundary(t) for k, t in enumerate(toks)):
        # "I'm preparing the milk quality report. I need the SCC. How is it defined?": a question
        # of pronouns asks about the sentence just before it, not the scene before that.
        first = next(i for i, s in enumerate(sentences) if s.rstrip().endswith("?"))
        return " ".join(sentences[max(0, first - 1):]) if first >= 2 else question
    return text


@lru_cache(maxsize=1024)
def text_initialisms(text: str) -> frozenset[str]:
    """The initials of every run of three to five words of `text`, and of each such run less its
    grammar words ("gross merchandise value" -> "gmv", "return to sender" -> "rts", "rs")."""
    toks = [t for t in _words(text) if t.isalpha()]
    out = set()
    for i in range(len(toks)):
        for j in range(i + 2, min(len(toks), i + 5) + 1):
            run = toks[i:j]
            for words in (run, [w for w in run if w not in _STOP]):
                if len(words) >= 3 and words[0] not in _STOP and words[-1] not in _STOP:
                    out.add("".join(w[0] for w in words))
    return frozenset(out)


def description_support(question: str, text: str) -> tuple[int, int]:
    """(the question's content words that `text` uses, in any form of the word; its content
    words): every word that is not grammar, a date, a word saying what is asked or a word of a
    clause asking for lineage (`_asking_clause`). A word that may be an initialism (in capitals,
    or no English word: `initialism_words`) is used when it is the initials of words the text
    writes out ("GMV" of "gross merchandise value")."""
    content = content_words(question)
    used_words, initials = text_words(text), initialism_words(question)
    return sum(1 for t in content if _uses_or_initials(used_words, t, initials, text)), len(content)


def content_words(question: str) -> list[str]:
    """The words of a question a description is made of, once each, as `description_support`
    counts them: not grammar, a date, a word saying what is asked, or a lineage clause's."""
    toks = _words(question)
    clause = _asking_clause(toks)
    joined = hyphen_joined(question)
    return list(dict.fromkeys(t for k, t in enumerate(toks)
                              if k not in clause and (k in joined or not _is_boundary(t))))


def _uses_or_initials(words: TextWords, t: str, initials: frozenset[str], text: str) -> bool:
    """`text` (its `words`) uses `t`, or writes out the words `t` is the initials of, when the
    question may mean `t` as an initialism (`initials`: `initialism_words` of the question)."""
    return _uses(words, t) or (t in initials and t in text_initialisms(text))


def describes(question: str, text: str) -> bool:
    """`text` (an object's names and its definition) accounts for the question's description."""
    used, n = description_support(question, text)
    if n <= SHORT_DESCRIPTION:
        return n > 0 and used == n
    return used >= DESCRIPTION_MIN_SHARE * n


# A phrase partly in an object's names ("the mean <survey score>" beside "customer satisfaction
# score", "total <foreground playback> time" beside "total watch time") names no object, but the
# question may go on to restate the object's definition around it. It describes the object when
# the phrase's other words stand where the name has words the phrase lacks (a paraphrase of
# part of the name, not a modifier added before or after it: "<customer> return rate" beside
# "return to sender rate" is another measure) or the definition states the whole phrase as one of
# its parts ("last-mile handling cost" beside "cost per parcel", `_stated_part`), the
# definition states them, at least
# `RESTATED_BEYOND_PHRASE` of the question's content words outside the phrase are stated too,
# and the whole question passes `describes`. The phrase's words must be stated outside the
# definition's exclusions (`_counted_words`): "customer returns ... are not counted here" does not
# define a customer return rate. A name no object has, asked about with nothing
# beside it ("how is the discharge rate defined?" beside a readmission rate "within 30 days of a
# discharge"), restates nothing outside its phrase and still abstains. Measured on the
# description and non-existent-object cases of tests/gold_understanding/gold_dev.json (three to
# five restated words beside the phrase) and tests/test_named_sources.py (none).
RESTATED_BEYOND_PHRASE = 2


def _in_name_gap(phrase: list[str], uncovered: set[str], name: tuple[str, ...]) -> bool:
    """Every uncovered word of `phrase` stands where `name` has words the phrase lacks: between
    two covered words the name does not hold side by side, before a covered word the name does
    not start with, or after one it does not end with."""
    def at(w: str) -> int | None:
        return next((k for k, v in enumerate(name) if _same(w, v)), None)

    words = [w for w in phrase if w not in _STOP]
    for j, w in enumerate(words):
        if w not in uncovered:
            continue
        before = next((at(v) for v in reversed(words[:j]) if v not in uncovered), None)
        after = next((at(v) for v in words[j + 1:] if v not in uncovered), None)
        if before is None and after is None:
            return False
        if before is not None and after is not None:
            if after - before <= 1:
                return False
        elif after is not None and after == 0:
            return False
        elif before is not None and before == len(name) - 1:
            return False
    return True


# Words of a sentence that says what a definition leaves out ("parcels a customer sends back
# after a successful delivery are customer returns and are not counted here").
_EXCLUSION_WORDS = frozenset({"not", "excluded", "exclude", "excludes", "excluding", "except", "never", "nor"})
_SENTENCE = re.compile(r"[.;!?]+\s+")


def _counted_sentences(text: str) -> list[tuple[str, ...]]:
    """The words of each of `text`'s sentences that say nothing is left out."""
    return [words for words in map(_words, _SENTENCE.split(text)) if not set(words) & _EXCLUSION_WORDS]


def excluded_words(text: str) -> TextWords:
    """The words of `text`'s sentences that say what is left out ("VAT and shipping are
    excluded"): what a definition states it does not count."""
    return TextWords(tuple(w for words in map(_words, _SENTENCE.split(text)) if set(words) & _EXCLUSION_WORDS
                           for w in words))


def _counted_words(text: str) -> set[str]:
    """The words of `text`'s sentences that say nothing is left out."""
    return {w for words in _counted_sentences(text) for w in words}


def _stated_part(phrase: list[str], text: str) -> list[str]:
    """The longest end of `phrase`, two content words or more, that a counted sentence of
    `text` holds side by side in its order ("last-mile handling cost", "network egress spend"
    out of "takes network egress spend"): the definition lists it as one of its parts, so a
    name's word inside it is the part's word, not a modifier put before the name. Empty when
    there is none."""
    words = [w for w in phrase if w not in _STOP]
    sentences = [[w for w in sentence if w not in _STOP] for sentence in _counted_sentences(text)]
    for start in range(len(words) - 1):
        part = words[start:]
        if any(all(_same(a, b) for a, b in zip(part, content[i:i + len(part)]))
               for content in sentences for i in range(len(content) - len(part) + 1)):
            return part
    return []


def restates_definition(question: str, cov: Coverage, names: Iterable[str], text: str) -> bool:
    """`text` (an object's names and definitions) restates what the question says around its
    object phrase (`cov`), which one of `names` holds in part. The phrase's own words must come
    from what the definition counts, not from what it excludes."""
    if not cov.uncovered:
        return False
    stated, counted = text_words(text), TextWords(_counted_words(text))
    part = _stated_part(cov.phrase, text)
    phrase = part if set(part) & set(cov.uncovered) else cov.phrase
    uncovered = set(cov.uncovered) & set(phrase)
    if not uncovered or not all(_uses(counted, w) for w in uncovered):
        return False
    if phrase is cov.phrase and not any(_in_name_gap(phrase, uncovered, _words(n)) for n in names):
        return False
    in_phrase = set(phrase)
    outside = [t for t in dict.fromkeys(_words(question)) if not _is_boundary(t) and t not in in_phrase]
    initials = initialism_words(question)
    restated = sum(1 for t in outside if _uses_or_initials(stated, t, initials, text))
    return restated >= RESTATED_BEYOND_PHRASE and describes(question, text)


def _measure_phrases(toks: tuple[str, ...]):
    """Each measure phrase of the question: a measure noun ("rate", "share", "time"…) as a head
    noun (a modifier before it, a grammar word or the end after it: "agent spends actively" is a
    verb), with its modifiers back to the first grammar word."""
    for i, t in enumerate(toks):
        head = i + 1 == len(toks) or _is_boundary(toks[i + 1])
        if t in MEASURE_NOUNS and head and i > 0 and not _ends_phrase(toks, i - 1):
            j = i
            while j > 0 and not _ends_phrase(toks, j - 1):
                j -= 1
            yield toks[j:i + 1]


def other_measure(question: str, names: set[str], extra_words: set[str] = frozenset()) -> list[str]:
    """A measure the question names that the object's names do not: a measure noun ("rate",
    "share", "time"…) headed by a modifier ("customer return <rate>"), neither of them in the
    names. "Define the customer return rate for parcels sent back" shares "parcels" with "cost
    per parcel" but asks about a rate no name accounts for; empty when there is none."""
    vocab = name_set(frozenset(names), frozenset(extra_words)).vocab_words
    for phrase in _measure_phrases(_words(question)):
        if not vocab.has(phrase[-1]) and not any(vocab.has(w) for w in phrase[:-1]):
            return phrase
    return []


def unstated_measure(question: str, text: str) -> list[str]:
    """A measure phrase of the question ("the watch <completion rate>", "the boomerang hire
    <share>") with a modifier that `text` (an object's names and definitions) never states: a
    description that goes through another measure's name describes that measure, not this
    object, however many of its other words the definition uses. A paraphrase of the object's
    own measure ("agent working <minutes>", "viewing <hours>", "local <time>") states its
    modifiers. Empty when there is none."""
    stated = text_words(text)
    for phrase in _measure_phrases(_words(question)):
        if not all(_uses(stated, w) for w in phrase[:-1]):
            return list(phrase)
    return []


_OF = ("of", "of the", "of all", "of our")


def measure_of(question: str, phrase: list[str]) -> str:
    """The measure noun or aggregate the question applies to `phrase` ("the <share> of playback
    sessions that …", "the <total> of playback sessions' seconds"), or "": a question about a
    measure of a model's rows asks for a metric, not for the model whose name the phrase is."""
    toks = _words(question)
    n = len(phrase)
    if not n:
        return ""
    for i in range(len(toks) - n + 1):
        if list(toks[i:i + n]) != list(phrase):
            continue
        for of in _OF:
            k = len(of.split())
            if i - k - 1 >= 0 and " ".join(toks[i - k:i]) == of and toks[i - k - 1] in _MEASURES_OF_ROWS:
                return toks[i - k - 1]
    return ""
