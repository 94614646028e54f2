"""Question parsing: the question → its parsed intent. Which reporting date
(or month), which intent words, which governed objects it names (matched by
canon/ask/understanding/match.py) and which non-authoritative sources it names
as saying something (`extract_named_sources`, canon/ask/understanding/named_sources.py)."""

import datetime as dt
import re
from dataclasses import dataclass, field, replace
from typing import Iterable

from rapidfuzz import fuzz

from canon.ask.understanding import temporal
from canon.ask.understanding.coverage import _is_boundary
from canon.ask.understanding.match import ObjectEntry, ObjectMatch, match_objects, normalize
from canon.ask.understanding.named_sources import NamedSource, extract_named_sources, outside_claims
from canon.ask.understanding.qualifiers import breakdown
from canon.core.dates import MONTHS, find_date
from canon.core.errors import CanonInputError
from canon.core.fiscal_calendar import FiscalCalendar

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
                "come from", "derived from", "raw table", "raw tables", "depend on", "depends on", "depending on",
                "dependencies", "dependency", "inputs", "provenance", "origin", "origins", "come out of",
                "comes out of", "trace the data", "fed by", "built on", "relies on", "rely on"),
    "model": ("grain", "primary key", "model", "columns", "column", "table", "one row per"),
    "freshness": ("fresh", "freshness", "stale", "loaded", "sla", "slas", "late", "up to date", "up-to-date", "lag",
                  "how old", "latest load", "last load", "out of date", "refreshed", "snapshot"),
    "value": ("what was", "what were", "how much", "value of", "total", "amount of", "number for", "figure",
              "how many", "value for", "value in", "value over", "value during", "values for", "values in",
              "how high", "how low"),
    # Questions about a document's governance metadata (owner, deprecation): read beside the
    # intent above, never instead of it (`ParsedQuestion.intent` does not return them).
    "owner": ("who owns", "owns", "owner", "owners", "owned by", "who is responsible", "who maintains", "maintained by"),
    "deprecation": ("deprecated", "deprecation", "being retired", "retired", "sunset", "end of life"),
}

# The intents about a document's governance metadata rather than its content.
METADATA_INTENTS = frozenset({"owner", "deprecation"})

# Words that ask for the definition itself, whatever value word stands beside them.
DEFINITION_WORDS = ("definition", "definitions", "defined", "define", "in force", "governed definition")

# Freshness words that also say what the counted things are: "the loaded kilometres", "late
# deliveries", "the lag in days". Beside a word asking for the definition they describe the
# metric, not the state of its data; any other freshness word or shape still asks for freshness
# ("is the data behind the on-time definition stale", "when was it last loaded").
FRESHNESS_MODIFIERS = ("loaded", "late", "lag")
# Verbs asking how a measure is taken: beside them a freshness modifier says which things it
# counts ("is it measured from … or from <late> reporting?", "are tickets acknowledged <late>
# counted in …?"), as beside a word asking for the definition. Not "count" or "measure", which
# are also nouns of the data ("is the ticket count late today?").
METHOD_WORDS = ("measured", "calculated", "computed", "counted", "calculate", "compute")
# Words asking what a definition takes in ("how many minutes late can a flight be and still
# <count as> on time?", "what is <considered> a late delivery?"): a question about its criteria,
# never about a value or the data's state, whatever value word stands beside them.
CRITERIA_WORDS = ("count as", "counts as", "considered", "qualify as", "qualifies as", "to count in",
                  "to count toward", "to count towards", "to be counted", "to be included", "to qualify",
                  "counting as", "counted as", "still counts", "still count")
# A rule that admits or classes things ("does OTP <allow> departures 10 minutes late?", "do we
# <count> 10 minutes late <as> on time?"): a question about the definition's criteria too.
_CRITERIA_VERBS = re.compile(r" (?:allow|allows|allowed|permit|permits|permitted|tolerate|tolerates|tolerated) "
                             r"| (?:count|counts|counted|treat|treats|treated|class|classes|classed|classify|"
                             r"classifies|classified) (?:\S+ ){1,5}?as ")
# How late a counted thing is ("a departure <6 minutes late>"): a threshold of the definition,
# unless the question is about data ("is the scan data 3 hours late?").
_DURATION_LATE = re.compile(r" (?:\d+|a few|few|one|two|three|four|five|six|seven|eight|nine|ten|fifteen|thirty) "
                            r"(?:minutes?|mins?|hours?|hrs?|seconds?|secs?|days?|weeks?|months?|years?) "
                            r"(?:late|early|behind) ")
_DATA_NOUNS = re.compile(r" (?:data|table|tables|load|loads|feed|feeds|source|sources|pipeline|pipelines|snapshot|"
                         r"dataset|datasets|dashboard|extract|ingestion|sync) ")
# "How many minutes must an interruption last …", "within how many minutes should the text go
# out?": a number a rule sets, asked with a modal, is the definition's, not a value of the data.
_RULE_NUMBER = re.compile(r" how (?:many|much|long)(?: \S+){0,6}? (?:must|should|has to|have to|needs to|need to) ")
# "How late can a book be returned before it counts …": a limit the rule sets, unless the
# question is about data ("how late can the SCADA data be?", `_DATA_NOUNS`).
_LATE_LIMIT = re.compile(r" how (?:late|early|long|many days|many hours|many minutes)(?: \S+){0,2}? "
                         r"(?:can|may|could|is allowed|are allowed) ")
# "What's the metric for how many of our flights land on schedule?", "which KPI tells how many
# parcels arrive late?": the question asks which metric a description is, so the value and
# freshness words inside the description ask for neither ("the metric value for July" does).
_WHICH_METRIC = re.compile(r" (?:which|what) (?:s |is |are )?(?:the )?(?:metric|metrics|kpi|kpis|measure) (?!values? )")


@dataclass
class ParsedQuestion:
    text: str
    as_of: dt.date | None
    period: tuple[dt.date, dt.date] | None
    intents: set[str]
    matches: list[ObjectMatch] = field(default_factory=list)
    named_sources: list[NamedSource] = field(default_factory=list)
    # canon/ask/understanding/temporal.py: the clock day, the period's name, the revisions named.
    clock: dt.date | None = None
    period_label: str = ""
    versions: tuple[temporal.VersionRef, ...] = ()
    compare: bool = False
    tables: list[str] = field(default_factory=list)     # relation names written out ("raw.app.events")
    at_time: dt.time | None = None                      # a time of day named ("the 08:00 UTC snapshot"), UTC
    day_part: tuple[dt.time, dt.time] | None = None     # a part of the day named ("the morning snapshot"), UTC
    ambiguous_days: tuple[dt.date, ...] = ()            # a numeric date that reads two ways ("08/07/2026")
    periods: tuple = ()                                 # two or more periods named apart: ((start, end), label)
    fiscal_unknown: str = ""                            # a fiscal period no configured calendar places

    @property
    def intent(self) -> str:
        for name in ("freshness", "value", "lineage", "model"):
            if name in self.intents:
                return name
        return "definition"


# How close a misspelled name must align with the question for its span to be the
# name's, not intent words ("which sources feed totl watch time").
NAME_SPAN_MIN_SCORE = 90.0


# The intent words of one word ("fresh", "owner", "lineage").
_INTENT_WORDS_ALONE = frozenset(w for words in INTENT_WORDS.values() for w in words if " " not in w)


def _without_names(q: str, names: Iterable[str]) -> str:
    """`q` (normalized, space-padded) with the span of each object name the question
    matched replaced by a separator: words inside a name ("total" in "total watch
    time", "sources" in "order sources") name the object, they do not ask anything.
    A one-word name is left in place: whether "lag" names the object or asks about
    lag cannot be told from its words, and reading it as intent is what it did before."""
    for name in sorted({n for n in names if len(n.split()) >= 2}, key=len, reverse=True):
        if f" {name} " in q:
            q = q.replace(f" {name} ", " | ")
            continue
        # A misspelled name: the best-aligned window, widened to whole words.
        al = fuzz.partial_ratio_alignment(name, q, score_cutoff=NAME_SPAN_MIN_SCORE)
        if al is None:
            continue
        start = q.rfind(" ", 0, al.dest_start + 1)
        end = q.find(" ", max(al.dest_end - 1, start + 1))
        if start >= 0 and end > start:
            # An intent word at either end of the window that is no word of the name asks
            # something: "course completion <fresh>" aligns with "course completion rate".
            words = q[start + 1:end].split()
            name_words = set(name.split())
            before, after = [], []
            while words and words[0] not in name_words and words[0] in _INTENT_WORDS_ALONE:
                before.append(words.pop(0))
            while words and words[-1] not in name_words and words[-1] in _INTENT_WORDS_ALONE:
                after.insert(0, words.pop())
            q = " ".join([q[:start], *before, "|" if words else "", *after, q[end + 1:]])
            q = f" {' '.join(q.split())} "
    return q


# Intents asked by the sentence's shape rather than a noun.
_KEEPS = (r"(?:owns|owned|maintains|maintained|looks after|looked after|is responsible|was responsible|"
          r"are responsible|is accountable|manages|managed|stewards|keeps|runs)")
INTENT_PATTERNS = {
    # Who keeps a thing: "who maintains X", "which team looks after X", "what group runs X" (a
    # verb of keeping after an opening "who", or after "which"/"what" and a noun for people). A
    # "who" inside the question is a relative clause of a description ("the share of customers
    # who managed a renewal"), not a question about the keeper.
    "owner": (re.compile(rf"^ who (?:\S+ )?{_KEEPS} "),
              re.compile(r" (?:which|what) (?:\S+ )?(?:team|teams|group|department|person|people|squad|unit|org|"
                         rf"organisation|organization|function|individual|owner) {_KEEPS} ")),
    # What is built from a thing, the other way along its lineage: "which models depend on X",
    # "what uses X", "what is downstream of X", "what breaks if X changes". A verb after "does"
    # ("which sources does X use") asks what X itself reads: that is upstream.
    "downstream": (re.compile(r" downstream (?:of|from) "),
                   re.compile(r"^ (?:what|which|who)(?! (?:does|do|did) )(?: \S+){0,2}? (?:depend|depends|rely|relies|"
                              r"build|builds|is built|are built) on "),
                   re.compile(r"^ (?:what|which|who)(?! (?:does|do|did) )(?: \S+){0,2}? (?:use|uses|reference|"
                              r"references|consume|consumes|select from|selects from|read from|reads from) "),
                   re.compile(r" (?:what|which) (?:\S+ ){0,3}?(?:breaks|break|is affected|are affected|is impacted|"
                              r"are impacted) (?:if|when) "),
                   re.compile(r" (?:downstream|dependent|dependents|consumers|impact) of ")),
    # When the data was last loaded: "when was X data last updated", "how recent is the X data",
    # "is the data behind X delayed", "is the X data current" ("the current definition" asks for
    # a revision, not freshness: "current" counts only after data, tables, sources or loads).
    "freshness": (re.compile(r" last (?:updated|update|refresh|refreshed|loaded|load|synced|sync) "),
                  re.compile(r" how recent "),
                  re.compile(r" (?:data|table|tables|source|sources|feed|feeds|load|loads) (?:\S+ ){0,3}?"
                             r"(?:current|delayed|behind schedule|recent|updated|refreshed) ")),
    # A value word right before the period it is asked for ("net revenue value Jul–Sep 2026",
    # "the take rate value Q3 2026"), without the "for" / "in" the word list needs.
    "value": (re.compile(r" values? (?:jan|january|feb|february|mar|march|apr|april|may|jun|june|jul|july|aug|"
                         r"august|sep|sept|september|oct|october|nov|november|dec|december|q[1-4]|h[12]|fy\S*|"
                         r"(?:19|20)\d{2}|this|last|next|ytd|mtd|qtd|yesterday|today) "),
              # A request to work a figure out ("compute the fare evasion rate for Q3 2026",
              # "can you calculate active patients for 2026-10-31"): the question opens with it.
              re.compile(r"^ (?:please |can you |could you |would you |pls )?(?:compute|calculate|calc|work out|"
                         r"quantify|tally) (?!how |why |what |whether |if )")),
    # Where a thing's data comes from: "where does X get its data from", "where is X sourced
    # from", "what is X built from", "X pulls its rows from": a question opening with "where" and
    # asking "… from", or a verb of sourcing followed within a few words by "from". ("From" after
    # a date, "from March", asks no lineage: neither shape matches it.)
    "lineage": (re.compile(r"^ where (?:does|do|did|is|are|was|were) (?:\S+ ){1,8}?from "),
                re.compile(r" (?:gets?|getting|got|pulls?|pulling|pulled|reads?|reading|draws?|drawing|drawn|built|"
                           r"builds?|building|sourced|sources?|fed|loaded|ingested|extracted|"
                           r"imported|copied|synced) (?:\S+ ){0,3}?from "),
                # "takes its rows from" takes data; "how long it takes from approval to offer" is a duration.
                re.compile(r" (?:takes?|taken|taking) (?:its |their |the )?(?:data|rows|records|inputs?|numbers|"
                           r"figures|events) from ")),
}


# Words after which a freshness modifier says the state of data ("is the data <loaded> yet",
# "has it been <loaded>", "the orders data <late> again").
_BEFORE_A_STATE = frozenset({"is", "are", "was", "were", "be", "been", "being", "get", "gets", "got", "getting",
                             "last", "already", "just", "fully", "not", "still", "data", "table", "tables",
                             "running", "arrive", "arrived", "arrives", "arriving", "it", "they"})


# Adverbs that may follow a state ("is the data loaded <yet>", "late <again>").
_STATE_ADVERBS = frozenset({"yet", "again", "still", "already", "recently", "lately", "anymore", "too", "overnight",
                            "tonight", "once", "twice", "often", "sometimes", "usually", "every", "each"})


def _modifiers_before_nouns(q: str) -> bool:
    """Each freshness modifier of `q` stands before a word that no noun phrase ends at ("what do
    we call <loaded> kilometres driven …", "the share of <late> deliveries", "are <late> shipments
    defects?"): it says what the counted things are. "When was it last loaded", "is the data late
    today", "is it loaded yet" end a phrase. After a word that says a state ("is", "data") the
    next word must be a noun the modifier describes, not an adverb of the state."""
    toks = q.split()
    at = [k for k, t in enumerate(toks) if t in FRESHNESS_MODIFIERS]

    def before_a_noun(k: int) -> bool:
        if k + 1 >= len(toks) or _is_boundary(toks[k + 1]):
            return False
        nxt = toks[k + 1]
        if not (k and toks[k - 1] in _BEFORE_A_STATE):
            return True
        return nxt not in _STATE_ADVERBS and not nxt.endswith("ly") and nxt not in FRESHNESS_MODIFIERS
    return bool(at) and all(before_a_noun(k) for k in at)


# "What was / what were" asks for whatever its noun phrase heads: a value ("what was the late
# delivery rate in October"), unless the head is a word of another intent ("what was the
# <source> of X", "what were the upstream <tables> of Y", "what was the <owner>"). The phrase
# runs to the first preposition or relative word, or the question's end.
_PAST_VALUE = ("what was", "what were")
_DETERMINERS = frozenset({"the", "its", "their", "our", "his", "her", "a", "an"})
_PHRASE_ENDS = frozenset({"of", "for", "behind", "in", "on", "at", "from", "that", "which", "feeding", "used", "by",
                          "to", "as", "with", "when", "during", "under"})
_OTHER_INTENT_WORDS = frozenset(w for intent, words in INTENT_WORDS.items() if intent != "value" for w in words
                                ) | frozenset(DEFINITION_WORDS) | {"status", "schema", "rule", "rules", "formula",
                                                                  "logic", "methodology", "meaning", "criteria",
                                                                  "criterion", "policy", "wording"}


def _heads_asked(q: str) -> list[str]:
    """The last one and two words of each noun phrase "what was/were" asks for in `q`."""
    toks = q.split()
    heads = []
    for k in range(len(toks) - 1):
        if toks[k] != "what" or toks[k + 1] not in ("was", "were"):
            continue
        phrase = []
        for t in toks[k + 2:]:
            if t in _PHRASE_ENDS:
                break
            if phrase or t not in _DETERMINERS:
                phrase.append(t)
        if phrase:
            heads.append(" ".join(phrase[-2:]))
    return heads


def _asks_another_thing(q: str) -> bool:
    """`q` (normalized, space-padded) asks for a value only by "what was/were", and each phrase
    they ask for is headed by a word of another intent (`_OTHER_INTENT_WORDS`)."""
    others = [w for w in INTENT_WORDS["value"] if w not in _PAST_VALUE]
    if any(f" {w} " in q for w in others):
        return False
    heads = _heads_asked(q)
    return bool(heads) and all(
        h in _OTHER_INTENT_WORDS or h.split()[-1] in _OTHER_INTENT_WORDS or h.split()[-1].rstrip("s") in _OTHER_INTENT_WORDS
        for h in heads)


# "Which raw table is it loaded from" asks where the data comes from (lineage), not how fresh it is.
_LOADED_FROM = re.compile(r" (?:loaded|load|loads) (?:\S+ ){0,2}?(?:from|into) ")


# A sentence that asks: it ends in a question mark.
_SENTENCES = re.compile(r"[^.?!]+[.?!]*")


def detect_intents(question: str, names: Iterable[str] = ()) -> set[str]:
    """Intent words of the question outside the `names` of the objects it matched. Beside a
    sentence that asks, a statement naming none of those objects says who asks or why ("How is
    RevPAR calculated? The owner's rep is asking."): it asks about no owner and no deprecation
    ("RevPAR is deprecated, I heard. Is that so?" still does)."""
    found = _intents_of(question, names)
    if found & METADATA_INTENTS:
        sentences = [m.group().strip() for m in _SENTENCES.finditer(question) if m.group().strip()]
        padded = [f" {normalize(s)} " for s in sentences]
        kept = [s for s, q in zip(sentences, padded)
                if s.endswith("?") or any(f" {n} " in q for n in names if n)]
        if any(s.endswith("?") for s in sentences) and len(kept) < len(sentences):
            found -= METADATA_INTENTS - _intents_of(" ".join(kept), names)
    return found


# The words a question may hold beside an object's name and still ask nothing more of it than
# "that object over that period" ("net revenue for july 2026", "what is OTP for Q3 2026?"): the
# words that place a period, and the words that only point at it.
_PERIOD_WORDS = frozenset(MONTHS) | {
    "q1", "q2", "q3", "q4", "h1", "h2", "fy", "ytd", "qtd", "mtd", "week", "month", "quarter", "year", "half",
    "last", "this", "previous", "so", "far", "to", "date", "through", "thru", "until", "and"}
_POINTING_WORDS = frozenset({
    "for", "in", "during", "over", "across", "of", "the", "our", "what", "s", "is", "show", "me", "give", "get",
    "please", temporal.PLACEHOLDER})
_PERIOD_TOKEN = re.compile(r"\d+|fy\d{2,4}|w\d{1,2}|q[1-4]|h[12]")


def names_and_period_only(question: str, names: Iterable[str]) -> bool:
    """The question is an object's name and a period, and nothing else asks anything ("net
    revenue for july 2026"): the object over that period, which is its value where a semantic
    layer computes one, and otherwise the definition that governs the period
    (canon/ask/pipeline.py, `_value_if_computed`)."""
    rest = temporal.strip_names(normalize(question), list(names)).split()
    return temporal.PLACEHOLDER in rest and all(
        w in _PERIOD_WORDS or w in _POINTING_WORDS or _PERIOD_TOKEN.fullmatch(w) for w in rest)


def asks_definition(question: str) -> bool:
    """The question names the definition itself ("which definition applies …, and which source
    supports it?"): whatever else it asks, the definition is an answer to it."""
    q = f" {normalize(question)} "
    return any(f" {w} " in q for w in DEFINITION_WORDS)


# What a model question asks of the model itself, beyond which model it is.
_MODEL_DETAIL_WORDS = ("grain", "primary key", "column", "columns", "one row per", "fields", "field")


def asks_model_detail(question: str) -> bool:
    """The question asks for a model's grain, key or columns, not only which model it is."""
    q = f" {normalize(question)} "
    return any(f" {w} " in q for w in _MODEL_DETAIL_WORDS)


# Asking what to do about a thing: "what do we do when …", "who should I escalate to …", "how do
# we handle …", "what steps do we take …". A runbook answers it, not a definition. "What do we
# call / count / include …" asks about the definition: only the verb "do", an acting verb after
# "do we" / "should I" (`_ACTS`), a word naming a procedure, or a step that must come before
# publishing asks what to do. A question that also names the definition ("which definition do we
# publish for June?") asks for it (canon/ask/pipeline.py reads `asks_definition` first).
_ACTORS = r"(?:we|i|you|they|ops|the team)"
_ACTS = (r"(?:escalate|escalated|page|paged|notify|alert|call out|dispatch|open|close|raise|contact|inform|tell|warn|"
         r"rebook|publish|pause|stop|intervene|act|react|respond)")
_PROCEDURE = (
    re.compile(rf" what (?:do|does|should|must|would|shall|can) {_ACTORS} do "),
    re.compile(rf" what (?:is|s|are) {_ACTORS} (?:supposed|meant|expected) to do "),
    re.compile(r" what to do "),
    re.compile(rf" (?:do|does|should|must|would|shall) {_ACTORS} {_ACTS} "),
    re.compile(rf" how (?:do|does|should|must|would|shall) {_ACTORS} (?:handle|deal with|respond to|react to|"
               r"escalate|treat|manage|recover from|fix|resolve) "),
    re.compile(r" (?:what|which) (?:steps|actions|action|procedure|process|playbook|escalation path) "
               r"(?:do|does|should|must|would|shall|to|is|are|for) "),
    re.compile(r" (?:the|our) (?:procedure|escalation path|escalation process) (?:for|when|if) "),
    # What must happen before a step of the process: "which table must have loaded before we
    # publish circulation?" (a step of a runbook, not the table's freshness now).
    re.compile(rf" (?:must|has to|have to|needs to|need to|should) (?:\S+ ){{0,4}}?before (?:{_ACTORS} )?"
               r"(?:publish|publishing|release|releasing|send|sending|sign off|signing off|report|reporting) "),
    re.compile(r"^ before (?:publishing|releasing|sending|signing off|reporting) (?:\S+ )+?(?:must|has to|have to|"
               r"needs to|need to|should) "),
)


def asks_procedure(question: str) -> bool:
    """The question asks what to do about something (a runbook's subject), not what it is."""
    q = f" {normalize(question)} "
    return any(p.search(q) for p in _PROCEDURE)


def _intents_of(question: str, names: Iterable[str] = ()) -> set[str]:
    q = _without_names(f" {normalize(question)} ", names)
    found = set()
    for intent, words in INTENT_WORDS.items():
        if any(f" {w} " in q for w in words):
            found.add(intent)
    for intent, patterns in INTENT_PATTERNS.items():
        if any(p.search(q) for p in patterns):
            found.add(intent)
    # "What was the X definition in force on …" asks for a definition: a value word beside a
    # word naming the definition asks for no number.
    definition_asked = any(f" {w} " in q for w in DEFINITION_WORDS + CRITERIA_WORDS) or bool(
        _WHICH_METRIC.search(q) or _RULE_NUMBER.search(q) or _CRITERIA_VERBS.search(q)
        or (_LATE_LIMIT.search(q) and not _DATA_NOUNS.search(q)))
    if "value" in found and definition_asked:
        found.discard("value")
    if not found and not definition_asked and names and breakdown(question, names):
        # "ARPU by region for September 2026", "collection volume for each tanker": a definition
        # has no members of a dimension; values do.
        found.add("value")
    modifiers_describe = (definition_asked or any(f" {w} " in q for w in METHOD_WORDS)
                          or _modifiers_before_nouns(q) or _LOADED_FROM.search(q)
                          or (_DURATION_LATE.search(q) and not _DATA_NOUNS.search(q)))
    if "freshness" in found and modifiers_describe and not any(
            f" {w} " in q for w in INTENT_WORDS["freshness"] if w not in FRESHNESS_MODIFIERS) and not any(
            p.search(q) for p in INTENT_PATTERNS["freshness"]):
        found.discard("freshness")
    if "value" in found and _asks_another_thing(q):
        found.discard("value")
    if "downstream" in found:
        found.add("lineage")   # the lineage, walked the other way (canon/registry/graph.py)
    # "How many tables feed X" counts X's lineage: "how many" asks for a value only when no
    # lineage or model word says what is counted.
    if "value" in found and found & {"lineage", "model"} and not any(
            f" {w} " in q for w in INTENT_WORDS["value"] if w != "how many"):
        found.discard("value")
    return found


# ---------------------------------------------------------------- tables and times of day

# A relation written the way warehouses name one, `schema.table` or `db.schema.table`:
# identifiers joined by dots with no space, never starting with a digit ("v2.1" is no table).
_RELATION = re.compile(r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){1,3}(?![\w.]*\w)")
# A time of day: "08:00", "8:00 UTC", "T08:00:00Z", "14:30+02:00", "10:00 pm". Without a zone it is read
# as UTC, the zone every snapshot's observation time is written in.
_TIME = re.compile(r"(?<![\d:])([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d)(?:\.\d+)?)?\s*"
                   r"(?P<ampm>[ap]\.?m\b\.?)?\s*(?P<zone>Z|UTC|GMT|[+-]\d{2}:?\d{2})?(?![\d:])", re.I)
# An hour with am/pm and no minutes ("6am", "7 a.m. UTC"), and the hours English names ("noon").
_HOUR = re.compile(r"(?<![\d:.])(1[0-2]|0?[1-9])\s*(?P<ampm>[ap]\.?m\b\.?)\s*(?P<zone>Z\b|UTC|GMT|[+-]\d{2}:?\d{2})?",
                   re.I)
_NAMED_HOURS = {"noon": 12, "midday": 12, "midnight": 0}
_NAMED_TIME = re.compile(r"\b(noon|midday|midnight)\b(?:\s*(?P<zone>UTC|GMT|Z\b))?", re.I)


def find_tables(question: str) -> list[str]:
    """Relation names the question writes out, lower case, in order. Which of them are
    tables is for the caller to say (a freshness snapshot observes it, say)."""
    return list(dict.fromkeys(m.group(0).lower() for m in _RELATION.finditer(question)))


def find_time_of_day(question: str) -> dt.time | None:
    """The first time of day the question names ("08:00 UTC", "6am", "noon"), as a UTC time
    (an offset that moves it across midnight keeps the time and loses the day: a snapshot is
    chosen within a day)."""
    hits = [m for rx in (_TIME, _HOUR, _NAMED_TIME) for m in rx.finditer(question)]
    if not hits:
        return None
    m = min(hits, key=lambda h: h.start())
    zone = (m.group("zone") or "Z").upper()
    offset = dt.timedelta(0)
    if zone[0] in "+-":
        digits = zone[1:].replace(":", "")
        offset = dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
        offset = offset if zone[0] == "+" else -offset
    if m.re is _NAMED_TIME:
        hour, minute, second = _NAMED_HOURS[m.group(1).lower()], 0, 0
    else:
        hour = int(m.group(1)) % 12 + (12 if (m.group("ampm") or "").lower().startswith("p") else 0) \
            if m.group("ampm") else int(m.group(1))
        minute, second = (int(m.group(2)), int(m.group(3) or 0)) if m.re is _TIME else (0, 0)
    local = dt.datetime(2000, 1, 2, hour, minute, second)
    return (local - offset).time()


# The parts of a day, as UTC hours [from, to): the zone every snapshot's observation time is
# written in. Night runs over midnight (from > to).
DAY_PARTS = {"morning": (5, 12), "afternoon": (12, 17), "evening": (17, 22), "night": (22, 5),
             "overnight": (22, 5), "tonight": (22, 5)}
_DAY_PART = re.compile(r"(?<!\bgood )\b(" + "|".join(DAY_PARTS) + r")(?:s)?\b", re.I)


def find_day_part(text: str) -> tuple[dt.time, dt.time] | None:
    """The part of the day `text` names ("the morning snapshot", "last night's load"), as UTC
    times [from, to); a greeting ("good morning") names none. The caller passes the question
    without the names it matched: a word of a governed name ("evening occupancy") is no time."""
    m = _DAY_PART.search(text)
    if m is None:
        return None
    start, end = DAY_PARTS[m.group(1).lower()]
    return dt.time(start), dt.time(end)


def name_runs(question: str, names: Iterable[str]) -> list[str]:
    """Runs of two or more consecutive question words that stand in the same order in one of
    `names` ("total goodwill" of "total goodwill credits", "late checkout" of "late checkout
    share"): the question names the object by part of its name."""
    toks = normalize(question).split()
    runs: set[str] = set()
    for name in names:
        nw = name.split()
        for i in range(len(toks)):
            for j in range(len(nw)):
                k = 0
                while i + k < len(toks) and j + k < len(nw) and toks[i + k] == nw[j + k]:
                    k += 1
                if k >= 2:
                    runs.add(" ".join(toks[i:i + k]))
    return sorted(runs)


def reread_intents(p: ParsedQuestion, names: Iterable[str]) -> ParsedQuestion:
    """`p` with its intents read again outside the words of the object it was found to ask
    about: an object found by part of its name or a description (canon/ask/pipeline.py,
    `_discover`) was not among the matches whose names `parse_question` left out, so "what
    counts toward total goodwill …" read "total" as asking for a value."""
    runs = name_runs(p.text, names)
    if not runs:
        return p
    intents = detect_intents(outside_claims(p.text, p.named_sources), [m.name for m in p.matches] + runs)
    return p if intents == p.intents else replace(p, intents=intents)


def parse_question(question: str, catalog: dict[str, ObjectEntry], as_of: dt.date | None = None,
                   today: dt.date | None = None, calendar: FiscalCalendar | None = None) -> ParsedQuestion:
    """`as_of` is the reporting date, or the clock when the question counts days from it
    ("yesterday"); `today` is the clock without one (the system date when None); `calendar` the
    organisation's fiscal year (none configured: a fiscal period is asked back)."""
    check_question(question)
    matches = match_objects(question, catalog)
    clock = today or dt.date.today()
    names = [m.name for m in matches]
    # Intent is read outside the claims the question attributes to a source: "the wiki says
    # it is late" does not make a definition question a freshness one.
    sources = extract_named_sources(question)
    intents = detect_intents(outside_claims(question, sources), names)
    unnamed = temporal.strip_names(normalize(question), names)
    t = temporal.read_time(question, unnamed, as_of, clock, find_date, names, compare_days="value" not in intents,
                           calendar=calendar)
    # A revision named by version is not selected by date: the answer reports its validity instead.
    day = None if t.versions or t.compare else t.day
    return ParsedQuestion(
        text=question, as_of=day, period=t.period, intents=intents,
        matches=matches, named_sources=sources,
        clock=as_of or clock, period_label=t.period_label, versions=t.versions, compare=t.compare,
        tables=find_tables(question), at_time=find_time_of_day(question), ambiguous_days=t.ambiguous,
        periods=t.periods, day_part=find_day_part(unnamed), fiscal_unknown=t.fiscal_unknown,
    )
