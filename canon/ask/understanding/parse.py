"""Question parsing: the question → its parsed intent. Which reporting date
(or month), which intent words, which governed objects it names (matched by
canon/ask/understanding/match.py) and which non-authoritative sources it names
as saying something (`extract_named_sources`, canon/ask/understanding/named_sources.py)."""

import datetime as dt
from dataclasses import dataclass, field

from canon.ask.understanding.match import ObjectEntry, ObjectMatch, match_objects, normalize
from canon.ask.understanding.named_sources import NamedSource, extract_named_sources, outside_claims
from canon.core.dates import find_date, find_month
from canon.core.errors import CanonInputError

# The longest question understood (docs/contracts.md, "canon ask"). A question is a
# sentence or a short paragraph; the bound keeps a pasted document from costing a
# warm process seconds of fuzzy matching per request.
MAX_QUESTION_CHARS = 2_000


def check_question(question: str) -> None:
    """CanonInputError (CLI exit 2) for a question over MAX_QUESTION_CHARS, before any work."""
    if len(question) > MAX_QUESTION_CHARS:
        raise CanonInputError(
            "question", f"is {len(question)} characters, over the limit of {MAX_QUESTION_CHARS}; "
            "ask about one thing in a sentence or two")

INTENT_WORDS = {
    "lineage": ("source", "sources", "lineage", "upstream", "downstream", "feeds", "feed", "comes from",
                "come from", "derived from", "raw table", "raw tables"),
    "model": ("grain", "primary key", "model", "columns", "column", "table", "one row per"),
    "freshness": ("fresh", "freshness", "stale", "loaded", "sla", "late", "up to date", "up-to-date", "lag"),
    "value": ("what was", "how much", "value of", "total", "amount of", "number for", "figure"),
}

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


def detect_intents(question: str) -> set[str]:
    q = f" {normalize(question)} "
    found = set()
    for intent, words in INTENT_WORDS.items():
        if any(f" {w} " in q for w in words):
            found.add(intent)
    return found


def parse_question(question: str, catalog: dict[str, ObjectEntry], as_of: dt.date | None = None) -> ParsedQuestion:
    check_question(question)
    day = as_of or find_date(question)
    period = None if day else find_month(question)
    sources = extract_named_sources(question)
    # Intent is read outside the claims the question attributes to a source: "the wiki says
    # it is late" does not make a definition question a freshness one.
    return ParsedQuestion(
        text=question, as_of=day, period=period, intents=detect_intents(outside_claims(question, sources)),
        matches=match_objects(question, catalog), named_sources=sources,
    )
