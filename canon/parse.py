"""Question parsing: which analytical object(s), which reporting date, which
intent, and which non-authoritative source the user names. Object matching
uses governance metadata only (ids, titles, declared aliases), never document
text, so it can run before retrieval and decide denials without reading
restricted content."""

import datetime as dt
import re
from dataclasses import dataclass, field
from typing import Iterable

from rapidfuzz import fuzz

from canon.dates import find_date, find_month
from canon.models import Document

# Kinds that are governed concepts a user asks about directly.
CONCEPT_KINDS = ("metric_definition", "model_schema", "restricted_memo", "policy")
# Words too generic to identify an object on their own.
_STOP = {"the", "a", "an", "of", "for", "and", "or", "to", "in", "on", "is", "what", "which", "our", "definition",
         "governed", "metric", "model", "v1", "v2", "v3", "version", "draft", "scenario", "dbt", "schema"}

INTENT_WORDS = {
    "lineage": ("source", "sources", "lineage", "upstream", "downstream", "feeds", "feed", "comes from",
                "come from", "derived from", "raw table", "raw tables"),
    "model": ("grain", "primary key", "model", "columns", "column", "table", "one row per"),
    "freshness": ("fresh", "freshness", "stale", "loaded", "sla", "late", "up to date", "up-to-date", "lag"),
    "value": ("what was", "how much", "value of", "total", "amount of", "number for", "figure"),
}

# A named, possibly contradicting source: "the old wiki says", "according to a runbook".
SOURCE_NOUNS = {
    "wiki": ("wiki",), "page": ("wiki",), "confluence": ("wiki",), "runbook": ("runbook",),
    "playbook": ("runbook",), "note": ("untrusted_note", "note"), "notes": ("untrusted_note", "note"),
    "memo": ("restricted_memo", "memo"), "draft": (), "proposal": (), "doc": (), "document": (),
}
_SOURCE = re.compile(
    r"\b(?:the|a|an|our|this|that|some)?\s*(?P<mod>old|older|legacy|previous|outdated|former|archived|new|latest|draft)?\s*"
    r"(?P<noun>wiki(?:\s+page)?|page|confluence|runbook|playbook|notes?|memo|draft|proposal|doc|document)\b"
    r"(?P<tail>[^.?!]{0,40}?\b(?:says?|said|states?|claims?|mentions?|suggests?|lists?|defines?|shows?|reads?)\b)?",
    re.I,
)
_ACCORDING = re.compile(r"\baccording to\b", re.I)


def normalize(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


@dataclass
class ObjectEntry:
    object_id: str
    kinds: set[str]
    names: set[str]
    domain: str
    # Full object ids ("metric saas mrr"): matched only when written out whole.
    exact: set[str] = field(default_factory=set)


@dataclass
class ObjectMatch:
    object_id: str
    score: float
    kinds: set[str]
    domain: str
    name: str


@dataclass
class NamedSource:
    noun: str
    modifier: str | None
    kinds: tuple[str, ...]
    statuses: tuple[str, ...]


@dataclass
class ParsedQuestion:
    text: str
    as_of: dt.date | None
    period: tuple[dt.date, dt.date] | None
    intents: set[str]
    matches: list[ObjectMatch] = field(default_factory=list)
    named_sources: list[NamedSource] = field(default_factory=list)

    @property
    def intent(self) -> str:
        for name in ("freshness", "value", "lineage", "model"):
            if name in self.intents:
                return name
        return "definition"


def _humanize(segment: str) -> str:
    return segment.replace("_", " ").replace("-", " ").strip()


class Catalog(dict):
    """object_id -> ObjectEntry, with what every question reuses computed once."""

    distinctive: dict[str, set[str]]


def object_catalog(docs: Iterable[Document]) -> dict[str, ObjectEntry]:
    """Names an object answers to: its id, its last id segment, its titles and declared aliases."""
    catalog: dict[str, ObjectEntry] = Catalog()
    for d in docs:
        parts = d.object_id.split(".")
        domain = parts[1] if len(parts) > 2 else ""
        entry = catalog.setdefault(d.object_id, ObjectEntry(d.object_id, set(), set(), domain))
        entry.kinds.add(d.kind)
        entry.exact.add(normalize(d.object_id))
        entry.names.add(normalize(_humanize(parts[-1])))
        if d.kind not in ("metric_definition", "lineage", "freshness_snapshot"):
            # Titles of versioned definitions repeat the concept name with noise ("v3 proposal").
            entry.names.add(normalize(d.title))
        for alias in d.metadata.get("aliases", []) or []:
            entry.names.add(normalize(str(alias)))
    for entry in catalog.values():
        # Short names ("mrr", "gmv") are kept: they match only as whole words.
        entry.names = {n for n in entry.names if n and n not in _STOP and len(n) >= 3}
    catalog.distinctive = _distinctive(catalog)
    return catalog


def _same_word(a: str, b: str) -> bool:
    if a == b or a.rstrip("s") == b.rstrip("s"):
        return True
    return len(a) >= 5 and len(b) >= 5 and fuzz.ratio(a, b) >= 88


def _scattered(words: list[str], q_words: list[str], window: int = 6) -> bool:
    """Every word of the name within a few words of each other, in any order
    ("customers count as active" names "active customers")."""
    positions = []
    for w in words:
        hits = [i for i, qw in enumerate(q_words) if _same_word(w, qw)]
        if not hits:
            return False
        positions.append(hits)
    firsts = [p[0] for p in positions]
    return max(firsts) - min(firsts) <= window


def _name_score(name: str, question: str) -> float:
    if f" {name} " in f" {question} ":
        return 100.0
    words = [w for w in name.split() if w not in _STOP]
    if not words:
        return 0.0
    core = " ".join(words)
    if len(core) < 5:
        return 0.0  # short names ("mrr") only ever match as whole words, above
    # partial_ratio tolerates misspellings ("net revnue") inside a longer question.
    score = float(fuzz.partial_ratio(core, question))
    if len(core) < 8:
        score -= 10  # short names match too easily by accident
    if score < 85 and len(words) >= 2 and _scattered(words, question.split()):
        score = 88.0
    return score


# How a question names a kind of document ("the rebate memo").
KIND_NOUNS = {
    "restricted_memo": ("memo",), "memo": ("memo",), "runbook": ("runbook", "playbook"), "wiki": ("wiki", "page"),
    "metric_definition": ("metric", "definition"), "model_schema": ("model", "table"), "policy": ("policy",),
    "untrusted_note": ("note",), "note": ("note",), "lineage": ("lineage",),
}


_ALL_KIND_NOUNS = {n for nouns in KIND_NOUNS.values() for n in nouns}


def _tokens(text: str) -> set[str]:
    # Kind nouns ("runbook", "memo") say what sort of document, not which one.
    return {t for t in text.split() if len(t) >= 3 and t not in _STOP and t not in _ALL_KIND_NOUNS}


def _distinctive(catalog: dict[str, ObjectEntry]) -> dict[str, set[str]]:
    """Tokens that name exactly one object: 'rebate' identifies the rebate memo
    even when the question words its title differently."""
    owners: dict[str, set[str]] = {}
    for entry in catalog.values():
        for tok in {t for n in entry.names for t in _tokens(n)}:
            owners.setdefault(tok, set()).add(entry.object_id)
    out: dict[str, set[str]] = {}
    for tok, objs in owners.items():
        if len(objs) == 1:
            out.setdefault(next(iter(objs)), set()).add(tok)
    return out


def _token_score(entry: ObjectEntry, distinctive: set[str], q_tokens: set[str]) -> float:
    hits = {t for t in distinctive if any(t == w or (len(t) >= 5 and fuzz.ratio(t, w) >= 88) for w in q_tokens)}
    noun = any(n in q_tokens for k in entry.kinds for n in KIND_NOUNS.get(k, ()))
    if len(hits) >= 2 or (hits and noun):
        return 90.0 + min(len(hits), 5)
    return 0.0


def match_objects(question: str, catalog: dict[str, ObjectEntry], *, threshold: float = 85.0) -> list[ObjectMatch]:
    q = normalize(question)
    q_tokens = set(q.split())
    distinctive = getattr(catalog, "distinctive", None)
    if distinctive is None:
        distinctive = _distinctive(catalog)
    out = []
    for entry in catalog.values():
        best, best_name = 0.0, ""
        for name in entry.names:
            s = _name_score(name, q)
            if s > best or (s == best and len(name) > len(best_name)):
                best, best_name = s, name
        for name in entry.exact:
            if f" {name} " in f" {q} ":
                best, best_name = 101.0, name
        by_tokens = _token_score(entry, distinctive.get(entry.object_id, set()), q_tokens)
        if by_tokens > best:
            best, best_name = by_tokens, "distinctive words"
        if entry.domain and f" {entry.domain} " in f" {q} ":
            best += 2  # naming the domain ("finance") disambiguates
        if best >= threshold:
            out.append(ObjectMatch(entry.object_id, best, entry.kinds, entry.domain, best_name))
    return sorted(out, key=lambda m: (-m.score, m.object_id))


def detect_intents(question: str) -> set[str]:
    q = f" {normalize(question)} "
    found = set()
    for intent, words in INTENT_WORDS.items():
        if any(f" {w} " in q for w in words):
            found.add(intent)
    return found


def named_sources(question: str) -> list[NamedSource]:
    """Sources the user names as saying something ("the old wiki says…").
    A noun alone is not enough: it must be quoted as a claimant, or follow 'according to'."""
    out = []
    for m in _SOURCE.finditer(question):
        before = question[max(0, m.start() - 20):m.start()]
        if not m.group("tail") and not _ACCORDING.search(before):
            continue
        noun = m.group("noun").lower().split()[0]
        mod = (m.group("mod") or "").lower() or None
        statuses: tuple[str, ...] = ()
        if noun in ("draft", "proposal") or mod == "draft":
            statuses = ("draft",)
        elif mod in ("old", "older", "legacy", "previous", "outdated", "former", "archived"):
            statuses = ("superseded", "deprecated")
        out.append(NamedSource(noun, mod, SOURCE_NOUNS.get(noun, ()), statuses))
    return out


def parse_question(question: str, catalog: dict[str, ObjectEntry], as_of: dt.date | None = None) -> ParsedQuestion:
    day = as_of or find_date(question)
    period = None if day else find_month(question)
    return ParsedQuestion(
        text=question, as_of=day, period=period, intents=detect_intents(question),
        matches=match_objects(question, catalog), named_sources=named_sources(question),
    )
