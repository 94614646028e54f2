"""Matching question text to governed objects: the catalog of names each
object answers to (`object_catalog`), name cores and scoring (`_name_score`,
`_token_score`, `_score_entry`), and the `MatchIndex` that narrows which
catalog entries can reach the threshold without changing the result
(`match_objects` equals `match_objects_exhaustive`). Matching reads
governance metadata (ids, titles, declared aliases, initialisms derived from
them) and, of document text, only the other names an approved definition states
for its own object ("… is also called X", `stated_names`). A name read from
text never decides a denial (canon/ask/pipeline.py checks a hidden object
against its metadata names only), so nothing of restricted content reaches a
response through it."""

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable

from rapidfuzz import fuzz

from canon.ask.understanding.fuzzy_filter import BigramIndex
from canon.index.embedding.local_model import english_words
from canon.models.documents import Document, Status


def normalize(text: str) -> str:
    """Lower case, every run of other characters one space: the form names and questions are compared in."""
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


# Words too generic to identify an object on their own.
_STOP = {"the", "a", "an", "of", "for", "and", "or", "to", "in", "on", "is", "what", "which", "our", "definition",
         "governed", "metric", "model", "v1", "v2", "v3", "version", "draft", "scenario", "dbt", "schema"}


@dataclass
class ObjectEntry:
    object_id: str
    kinds: set[str]
    names: set[str]
    domain: str
    # Full object ids ("metric saas mrr"): matched only when written out whole.
    exact: set[str] = field(default_factory=set)
    # Initialisms derived from its names ("otd", "otdr" of "on time delivery rate"): matched only
    # when the question writes them whole and in capitals (`derived_initialisms`).
    initials: dict[str, float] = field(default_factory=dict)   # initialism -> its score
    # Names an approved definition's text states for its object (`stated_names`): matched only
    # written out whole; the pipeline trusts one only through a revision the role may see.
    stated: set[str] = field(default_factory=set)


@dataclass
class ObjectMatch:
    object_id: str
    score: float
    kinds: set[str]
    domain: str
    name: str



@lru_cache(maxsize=1 << 12)
def padded(text: str) -> str:
    """`text` normalized as names are, with a space at either end: a name is said in it when
    " <name> " is. Cached: a revision's text (or the joined definitions of an object) is read
    for many questions and names, parsed once."""
    return f" {normalize(text)} "

def _humanize(segment: str) -> str:
    return segment.replace("_", " ").replace("-", " ").strip()


class Catalog(dict):
    """object_id -> ObjectEntry, with what every question reuses computed once:
    the distinctive words, and (built on first use) the `MatchIndex` that tells
    `match_objects` which entries can reach the threshold at all."""

    distinctive: dict[str, set[str]]
    match_index: "MatchIndex | None" = None
    match_uses: int = 0
    core_words: frozenset[str] | None = None   # canon/ask/understanding/compounds.py, `catalog_words`
    name_cores: dict[str, set[tuple[str, ...]]] | None = None   # canon/ask/understanding/clippings.py


# Kinds whose approved text may state other names for its object, and how it states them
# ("cost per parcel, also called unit delivery cost, is …"; "… sometimes referred to as X").
STATING_KINDS = ("metric_definition", "semantic_model")
_SYNONYM = re.compile(r"\b(?:also called|also known as|a\.?k\.?a\.?|sometimes called|often called|"
                      r"(?:sometimes |also |often |commonly )?referred to as|commonly called|"
                      r"(?:sometimes |also |often )?known as)\s+(?:the\s+)?"
                      r"(?P<name>[A-Za-z0-9][A-Za-z0-9 \-']{1,60}?)"
                      r"(?=\s*(?:[,.;:()]|\bis\b|\bor\b|\bmeans\b|\band\b|$))", re.I)


# An initialism the text gives the object beside a stated name: before it ("berth productivity
# <(BMPH)>, also called …") or after it ("also called the gross crane rate <(GCR)>"), written in
# capitals; and a second stated name after "or" ("… (GCR) or <quay crane productivity>").
_INITIALISM_BEFORE = re.compile(r"\((?P<init>[A-Z][A-Z0-9&]{1,7})\)\s*,?\s*(?=also called|also known as|a\.?k\.?a|"
                                r"sometimes called|often called|commonly called|known as|referred to as)")
_AFTER_STATED = re.compile(r"^\s*(?:\((?P<init>[A-Z][A-Z0-9&]{1,7})\))?(?:\s+or\s+(?:the\s+)?"
                           r"(?P<name>[A-Za-z0-9][A-Za-z0-9 \-']{1,60}?)(?=\s*(?:[,.;:()]|\bis\b|\bmeans\b|$)))?")


@lru_cache(maxsize=1 << 14)
def stated_names(text: str) -> frozenset[str]:
    """Names a governed text states for its object, normalized, and the initialisms it writes in
    capitals beside them (`_INITIALISM_BEFORE`, `_AFTER_STATED`). Cached by text: a revision's
    body is read once, not once per question it is a candidate for."""
    found = [m.group("init") for m in _INITIALISM_BEFORE.finditer(text)]
    for m in _SYNONYM.finditer(text):
        found.append(m.group("name"))
        after = _AFTER_STATED.match(text[m.end():])
        if after is not None:
            found += [g for g in (after.group("init"), after.group("name")) if g]
    return frozenset(n for n in (normalize(f) for f in found) if n and n not in _STOP and len(n) >= 2)


def states_names(d) -> bool:
    """Whether `d`'s text is read for the names it states (`stated_names`)."""
    return d.kind in STATING_KINDS and getattr(d.status, "value", d.status) == "approved" and bool(d.text)


# A date, a time of day, an ISO timestamp and the zone written after a time.
_WHEN = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[t ]\d{1,2}(?::?\d{2}){1,2}z?)?\b|\b\d{1,2}:\d{2}(?::\d{2})?\b|\butc\b",
                   re.IGNORECASE)


_SNAPSHOT_NOUNS = frozenset({"freshness", "snapshot", "snapshots"})
# Nouns for what a freshness snapshot observes, whatever it is of ("raw loads", "source data").
_LOAD_NOUNS = frozenset({"raw", "load", "loads", "data", "source", "sources", "table", "tables", "feed", "feeds"})
# A year a document's title is dated by, with the words that attach it ("… review for 2027",
# "(2025 edition)", "… in 2024").
_YEAR = re.compile(r"(?:\b(?:for|in|of)\s+)?\(?\b(?:19|20)\d{2}\b(?:\s+edition\b)?\)?", re.IGNORECASE)


def undated(title: str) -> str:
    """`title` without the dates, times and zone it states."""
    return " ".join(_WHEN.sub(" ", title).split())


# What a definition's title writes after its object's name ("… governed definition v2", "… v3
# proposal", "… (draft)").
_TITLE_NOISE = re.compile(r"\s*(?:\(|\b(?:governed|metric|definition|def|v\d+|version|draft|proposal|proposed|"
                          r"deprecated|superseded|approved|retired)\b).*$", re.IGNORECASE)
_PARENTHESIZED = re.compile(r"\([^()]*\)")
# What a title may say before its name, set off by a colon or a dash ("Metric definition:
# Prescription fill rate, version 1", "KPI – Donor churn").
_TITLE_PREFIX = re.compile(r"^\s*(?:(?:governed|approved|official|draft|proposed)\s+)?(?:metric|kpi|measure|definition|"
                           r"def)(?:\s+(?:definition|def|spec|specification))?(?:\s*[:|]\s*|\s+[\u2013\u2014-]\s+)", re.IGNORECASE)


def title_body(title: str) -> str:
    """`title` without what it says before its name (`_TITLE_PREFIX`)."""
    return _TITLE_PREFIX.sub("", title, count=1)
_INITIAL_SKIPS = frozenset({"of", "to", "the", "and", "a", "an", "for", "in", "on", "per", "by"})


def _initials_of(words: list[str]) -> set[str]:
    """The initials of `words`, with and without their grammar words ("mtta" and "mta" of "mean
    time to acknowledge")."""
    return {"".join(w[0] for w in words), "".join(w[0] for w in words if w not in _INITIAL_SKIPS)}


def abbreviates(short: str, words: list[str]) -> bool:
    """`short` abbreviates `words`: their initials (`_initials_of`), or the first letters of each
    word in turn, one or more from each ("revpar" of "revenue per available room", "capex" of
    "capital expenditure"), with or without their grammar words."""
    if short in _initials_of(words):
        return True

    def split(i: int, ws: tuple[str, ...]) -> bool:
        if not ws:
            return i == len(short)
        return any(short[i:i + k] == ws[0][:k] and split(i + k, ws[1:])
                   for k in range(1, min(len(ws[0]), len(short) - i) + 1))

    return split(0, tuple(words)) or split(0, tuple(w for w in words if w not in _INITIAL_SKIPS))


def spelled_out(title: str, short: str) -> str | None:
    """The words `title` spells the one-word initialism `short` (an object id's last segment,
    "mtta") with: "Mean time to acknowledge (MTTA) governed definition v1" -> "mean time to
    acknowledge". None when the title's name is not those initials (with or without its grammar
    words), or `short` is no initialism (several words, digits, more than 8 letters)."""
    if not short.isalpha() or not 2 <= len(short) <= 8:
        return None
    words = normalize(_TITLE_NOISE.sub("", title)).split()   # the noise starts at "(MTTA)" too
    if len(words) < 2 or not all(w.isalpha() for w in words):
        return None
    return " ".join(words) if abbreviates(short, words) else None


_ANY_PARENTHESIZED = re.compile(r"^(?P<before>[^()]*?)\s*\((?P<short>[A-Za-z][A-Za-z0-9&]{1,9})\)(?P<after>[^()]*)")


def _two_words(word: str) -> tuple[str, ...]:
    """A closed compound's two English words ("turnaround" -> "turn", "around"; the bundled
    model's vocabulary, three letters or more each), or the word alone."""
    lexicon = english_words()
    return next(((word[:i], word[i:]) for i in range(3, len(word) - 2)
                 if word[:i] in lexicon and word[i:] in lexicon), (word,))


def _abbreviated_in_parts(short: str, words: list[str]) -> int | None:
    """How many of the last `words` `short` abbreviates when a closed compound among them gives
    a letter for each of its parts ("TAT" of "turnaround time"); None if it abbreviates none."""
    parts = [(p, i) for i, w in enumerate(words) for p in _two_words(w)]
    for j in range(1, len(parts) + 1):
        first = parts[-j][1]
        if (len(parts) == j or parts[-j - 1][1] != first) and abbreviates(short, [p for p, _ in parts[-j:]]):
            return len(words) - first
    return None


def parenthesized_names(title: str, id_name: str) -> set[str]:
    """The names a definition's title gives its object around an initialism in parentheses,
    when one of them is the object's id name: "Subrogation recovery rate (SRR) governed
    definition v1" (id "subrogation recovery rate") also names "srr"; "Special investigations
    unit (SIU) referral rate …" (id "siu referral rate") also "special investigations unit
    referral rate". The initialism must be the initials of the words just before it (with or
    without their grammar words; a closed compound gives one letter for each of its parts). When
    the words it abbreviates are the id's name, it names the object alone too: "Aircraft
    turnaround time (TAT) …" (id "turnaround time") also names "tat". Empty otherwise."""
    m = _ANY_PARENTHESIZED.match(title)
    if m is None:
        return set()
    short = normalize(m.group("short"))
    before = normalize(m.group("before")).split()
    after = normalize(_TITLE_NOISE.sub("", " " + m.group("after"))).split()
    if not short.isalpha() or not before:
        return set()
    # How many of the words before it the initialism abbreviates.
    k = next((k for k in range(1, len(before) + 1) if abbreviates(short, before[-k:])), None) or \
        _abbreviated_in_parts(short, before)
    if k is None:
        return set()
    names = {" ".join(before + after), " ".join(before[:-k] + [short] + after)}
    # "Aircraft turnaround time (TAT) …" of metric.airport.turnaround_time: the initialism
    # abbreviates the id's own name, which the title's opens with a qualifier, so it names the
    # object alone as well.
    if " ".join(before[-k:] + after) == id_name:
        names.add(" ".join([short] + after))
    # The id names the object by the title's name or part of it ("widening participation" of
    # "Widening participation (WP) share"): the title's names are the object's.
    if any(f" {id_name} " in f" {n} " for n in names):
        return names - {id_name}
    return set()


# A one-word qualifier a title puts in parentheses after the name ("Turbine availability
# (time-based)", "Gross margin (risk-adjusted)"): which of the measure's kinds it is. Words of a
# document's status or age say nothing of the measure.
_QUALIFIER_IN_PARENS = re.compile(r"^(?P<name>[^()]+?)\s*\((?P<qualifier>[a-z]+(?:-[a-z]+)*)\)", re.IGNORECASE)
_STATUS_QUALIFIERS = frozenset({"draft", "deprecated", "legacy", "old", "new", "beta", "retired", "superseded",
                                "approved", "proposed", "proposal", "interim", "provisional", "preliminary",
                                "current", "latest", "archived", "obsolete", "pilot", "wip", "tbd", "internal"})


def qualified_names(title: str, id_name: str) -> set[str]:
    """The names a definition's title gives its object with a qualifier in parentheses after the
    name: "Turbine availability (time-based) …" (id "availability") also names "time based
    turbine availability" and, the id's name being the end of the title's, "time based
    availability". Empty for an initialism ("(CF)", `parenthesized_names`) or a status word."""
    m = _QUALIFIER_IN_PARENS.match(title)
    if m is None or m.group("qualifier").isupper() or normalize(m.group("qualifier")) in _STATUS_QUALIFIERS:
        return set()
    qualifier, name = normalize(m.group("qualifier")), normalize(m.group("name"))
    if not name or abbreviates(qualifier.replace(" ", ""), name.split()):
        return set()
    names = {f"{qualifier} {name}"}
    if id_name and name != id_name and name.endswith(f" {id_name}"):
        names.add(f"{qualifier} {id_name}")
    return names


def observed_name(title: str) -> str:
    """What a freshness snapshot's title says it observes: the title less its time and the
    kind's own nouns after it ("Logistics raw loads freshness snapshot 2026-11-02 08:00 UTC" ->
    "logistics raw loads"). The time picks one of the family's snapshots, and "freshness
    snapshot" says what the document is, as "runbook" does; a question asks whether "the
    logistics raw loads" are fresh."""
    words = normalize(undated(title)).split()
    while words and words[-1] in _SNAPSHOT_NOUNS:
        words.pop()
    return " ".join(words)


def object_catalog(docs: Iterable[Document]) -> dict[str, ObjectEntry]:
    """Names an object answers to: its id, its last id segment, its titles and declared aliases,
    initialisms derived from those, and the names its approved definitions state."""
    catalog: dict[str, ObjectEntry] = Catalog()
    derived_names: dict[str, set[str]] = {}
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
            # A dated document is named without its date as readily ("the staffing plan" of
            # "Support staffing plan 2027"); two of a kind then share the name and are asked back.
            for dated in (d.title, _humanize(parts[-1])):
                bare = normalize(_YEAR.sub(" ", undated(dated)))
                if len(bare.split()) >= 2 and bare != normalize(dated):
                    derived_names.setdefault(d.object_id, set()).add(bare)
        elif d.kind == "metric_definition":
            # A definition's title is noise around its name ("… v3 proposal"), except where it spells
            # out the initialism the id is named by ("Mean time to acknowledge (MTTA) …", metric.itops.mtta).
            id_name = normalize(_humanize(parts[-1]))
            title = title_body(d.title)
            long = spelled_out(title, id_name)
            named = parenthesized_names(title, id_name) | qualified_names(title, id_name) | (
                {long} if long else set())
            if d.status in (Status.approved, Status.draft):
                # A definition's title names its object in full where the id is shortened
                # ("Vaccine reminder conversion rate …" of metric.vet.vaccine_reminder_conversion,
                # "Post-operative complication rate …" of metric.vet.post_op_complication_rate), and a
                # draft's by the name its authors use ("No-show rate v3 proposal" of the appointment
                # no-show rate); taken only where no other object answers to it (below).
                core = normalize(_TITLE_NOISE.sub("", _PARENTHESIZED.sub(" ", title)))
                if len(core.split()) >= 2 and core != id_name:
                    named.add(core)
            if named:
                derived_names.setdefault(d.object_id, set()).update(named)
        elif d.kind == "freshness_snapshot":
            name = observed_name(d.title)
            if len(name.split()) >= 2:   # "Freshness snapshot 2026-11-02", "Orders snapshot": too weak
                entry.names.add(name)
                # What the loads are of names them as well: "the helpdesk data" of "helpdesk raw loads".
                words = name.split()
                while words and words[-1] in _LOAD_NOUNS:
                    words.pop()
                if words and words != name.split() and len(" ".join(words)) >= 5:
                    derived_names.setdefault(d.object_id, set()).add(" ".join(words))
        for alias in d.metadata.get("aliases", []) or []:
            entry.names.add(normalize(str(alias)))
        if states_names(d):
            entry.stated |= stated_names(d.text)
    # A name without its date (or a snapshot family's name without its load nouns) that is
    # another object's name ("contact rate" of "contact rate 2027 targets") names that object.
    taken = {n for entry in catalog.values() for n in entry.names}
    for oid, bare in derived_names.items():
        catalog[oid].names |= bare - taken
    for entry in catalog.values():
        # Short names ("mrr", "gmv") are kept: they match only as whole words.
        entry.names = {n for n in entry.names if n and n not in _STOP and len(n) >= 3}
        entry.initials = derived_initialisms(entry.names)
        entry.stated -= entry.names
    catalog.distinctive = _distinctive(catalog)
    return catalog


# A derived initialism has at least this many letters: two-letter ones ("nr", "on") are words
# or noise far more often than names.
MIN_INITIALISM = 3
# What a derived initialism scores when the question writes it: above the match threshold and the
# deny floor, below any name written out whole (100) and an id (101), so a declared alias ("DAU")
# or a name always beats initials a title happens to share. The initials of a whole name ("AHT",
# average handle time) beat the same letters abbreviating only the start of a longer name
# (average handle time for chat) by more than `_pick_concept`'s tie band (0.5); two objects whose
# whole names share initials tie, and the pipeline asks which one is meant
# (canon/ask/pipeline.py, `_pick_concept`).
INITIALISM_SCORE = 92.0
PREFIX_INITIALISM_SCORE = 91.0


def derived_initialisms(names: Iterable[str]) -> dict[str, float]:
    """The initials of each multi-word name ("annual recurring revenue" -> "arr") and of its
    leading runs of two or more words ("on time delivery rate" -> "otd" as well as "otdr"), each
    with its score, minus names the object already has. Only names of words are abbreviated."""
    names = set(names)
    out: dict[str, float] = {}
    for n in names:
        words = n.split()
        if len(words) < 2 or any(not w.isalpha() for w in words):
            continue
        for j in range(2, len(words) + 1):
            ini = "".join(w[0] for w in words[:j])
            if len(ini) >= MIN_INITIALISM and ini not in names and ini not in _STOP:
                score = INITIALISM_SCORE if j == len(words) else PREFIX_INITIALISM_SCORE
                out[ini] = max(out.get(ini, 0.0), score)
    return out


_CAPS = re.compile(r"\b([A-Z]{2,})s?\b")


def capitalized_words(question: str) -> frozenset[str]:
    """Words the question writes in capitals ("OTD", "ARRs"), lower-cased."""
    return frozenset(m.group(1).lower() for m in _CAPS.finditer(question))


_SHORT_WORD = re.compile(r"\b([a-z]{2,5})s?\b")


@lru_cache(maxsize=256)
def initialism_words(question: str) -> frozenset[str]:
    """The question's words that may be initialisms: those in capitals ("OTD", "ARRs"), and the
    short lower-case ones that are no English word ("otd", "frt"; the bundled model's vocabulary,
    canon/index/embedding/local_model.py). A lower-case word that happens to spell one ("far",
    "cat") is a word."""
    lexicon = english_words()
    lower = {w for w in _SHORT_WORD.findall(question) if w not in lexicon and w not in _STOP}
    return capitalized_words(question) | (frozenset(lower) if lexicon else frozenset())


# Letters written in front of a whole word make another word, not a misspelling of it:
# "redelivery" is not "delivery", "involuntary" not "voluntary", "unresolved" not "resolved",
# "TRevPAR" not "RevPAR", "lights" not "flights", though fuzz.ratio scores each pair 88 or more.
# One letter in front of a word of four letters or more makes another word ("TRevPAR" is not
# "RevPAR"), unless the word is a grammar word ("never" holds "ever") or the letter doubles its
# first ("rrevenue", a typo, left to the fuzzy match). Of a shorter word it may be a clipping
# spelled out ("customer sat" of "CSAT") or another word ("land" holds "and"), which one word
# alone cannot tell: left to the fuzzy match too.
MIN_PREFIX = 2
_GRAMMAR_WORDS = frozenset({"ever", "either", "ether", "ought", "here", "other"})


def _in_front(stem: str, body: str) -> bool:
    """`body` is `stem` with letters in front that make another word (`MIN_PREFIX`)."""
    extra = len(body) - len(stem)
    if len(stem) < 3 or extra < 1 or not body.endswith(stem):
        return False
    return extra >= MIN_PREFIX or (body[0] != stem[0] and len(stem) >= 4 and stem not in _GRAMMAR_WORDS)


def prefixed(a: str, b: str) -> bool:
    """One word is the other (up to a plural s) with letters in front that make another word."""
    sa, sb = a.rstrip("s") or a, b.rstrip("s") or b
    return _in_front(sa, sb) or _in_front(sb, sa)


# Words of one measure: "the crop loss ratio" or "percentage" is the crop loss rate, "irrigation
# spend" its cost. The grammar of measures, never a corpus's names.
MEASURE_SYNONYMS = (
    frozenset({"rate", "ratio", "percentage", "percent", "proportion", "pct"}),
    frozenset({"cost", "spend", "spending", "expense", "expenditure", "outlay"}),
)
SYNONYMS_OF: dict[str, frozenset[str]] = {w: g for g in MEASURE_SYNONYMS for w in g}


def same_measure(a: str, b: str) -> bool:
    """`a` and `b` are words of one measure (`MEASURE_SYNONYMS`), plural or not."""
    group = SYNONYMS_OF.get(a) or SYNONYMS_OF.get(a.rstrip("s"))
    return bool(group) and (b in group or b.rstrip("s") in group)


def singular(w: str) -> str:
    """`w` without a plural's s; a word ending in "ss" ("pass", "loss", "gross") is no plural,
    and stripped as one it would be another word ("pass" the initialism "pa")."""
    return w if w.endswith("ss") else (w.rstrip("s") or w)


def _same_word(a: str, b: str) -> bool:
    if a == b or singular(a) == singular(b) or same_measure(a, b):
        return True
    return len(a) >= 5 and len(b) >= 5 and fuzz.ratio(a, b) >= 88 and not prefixed(a, b)


@lru_cache(maxsize=256)
def _stems(q_words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(q.rstrip("s") or q for q in q_words)


@lru_cache(maxsize=1 << 14)
def only_prefixed(words: tuple[str, ...], q_words: tuple[str, ...]) -> bool:
    """Some word of a name appears in the question only with letters written in front of it
    ("on time delivery rate" in "on time redelivery rate"), or the question writes it without
    the letters the name puts in front: the question names another thing. A question word that
    joins the name's words ("ontime") is not such a word, nor one whose one letter in front the
    word before the other spells out ("customer sat" of "CSAT"). (`prefixed` per pair, in one pass.)"""
    q_stems = _stems(q_words)
    present = set(q_stems)
    for i, w in enumerate(words):
        ws = w.rstrip("s") or w
        if len(w) < 3 or ws in present:
            continue
        hits = [k for k, qs in enumerate(q_stems) if (_in_front(ws, qs) or _in_front(qs, ws))
                and not _letter_spelled_before(ws, qs, words[i - 1] if i else "", q_words[k - 1] if k else "")]
        if hits:
            joins = {"".join(words[j:i + 1]).rstrip("s") for j in range(i)}
            if any(q_stems[k] not in joins for k in hits):
                return True
    return False


def _letter_spelled_before(a: str, b: str, before_a: str, before_b: str) -> bool:
    """The one letter one word has in front of the other starts the word before the other:
    "customer sat" and "csat", "employee nps" and "enps" write one name two ways."""
    if len(a) == len(b) + 1:
        return before_b[:1] == a[0]
    return len(b) == len(a) + 1 and before_a[:1] == b[0]


# A word a name negates ("non technical loss rate"): the question that writes the word without
# it names the opposite ("the technical loss rate"), never this object.
_NEGATIONS = frozenset({"non", "not"})


def negation_dropped(names: Iterable[str], q_words: tuple[str, ...]) -> bool:
    """Some name negates a word the question writes without the negation, and no name writes
    that word plainly."""
    negated, plain = set(), set()
    for name in names:
        words = name.split()
        for i, w in enumerate(words):
            (negated if i and words[i - 1] in _NEGATIONS else plain).add(singular(w))
    negated -= plain
    return any(singular(w) in negated and (i == 0 or q_words[i - 1] not in _NEGATIONS)
               for i, w in enumerate(q_words))


@lru_cache(maxsize=1 << 16)
def _word_positions(w: str, q_words: tuple[str, ...]) -> tuple[int, ...]:
    """Where `w` occurs in the question, up to plurals and misspellings. Cached: the
    names scored for one question share most of their words."""
    return tuple(i for i, qw in enumerate(q_words) if _same_word(w, qw))


def _scattered(words: list[str], q_words: list[str] | tuple[str, ...], window: int = 6) -> bool:
    """Every word of the name within a few words of each other, in any order
    ("customers count as active" names "active customers")."""
    q_words = q_words if isinstance(q_words, tuple) else tuple(q_words)
    firsts = []
    for w in words:
        hits = _word_positions(w, q_words)
        if not hits:
            return False
        firsts.append(hits[0])
    return max(firsts) - min(firsts) <= window


@lru_cache(maxsize=256)
def _words_of(question: str) -> tuple[str, ...]:
    return tuple(question.split())


@lru_cache(maxsize=1 << 17)
def _name_core(name: str) -> tuple[tuple[str, ...], str]:
    """A name's words without stop words, and their join (the part fuzzy-matched)."""
    words = tuple(w for w in name.split() if w not in _STOP)
    return words, " ".join(words)


def _name_score(name: str, question: str, core_scores: dict[str, float] | None = None,
                matched: set[str] | None = None) -> float:
    """`core_scores`, if given, holds partial_ratio(core, question) for every core that
    reaches the MatchIndex cutoff: a core missing from it scores below the cutoff, and
    so below any score that can win a match, and is scored 0 instead of re-computed.
    `matched`, if given, holds every name word some question word may stand for
    (`MatchIndex.candidates_and_words`): a name with another word is not scattered."""
    if f" {name} " in f" {question} ":
        return 100.0
    words, core = _name_core(name)
    if not words:
        return 0.0
    if len(core) < 5:
        return 0.0  # short names ("mrr") only ever match as whole words, above
    # partial_ratio tolerates misspellings ("net revnue") inside a longer question.
    if core_scores is None:
        score = float(fuzz.partial_ratio(core, question))
    else:
        score = core_scores.get(core, 0.0)
    if len(core) < 8:
        score -= 10  # short names match too easily by accident
    if (score < 85 and len(words) >= 2 and (matched is None or matched.issuperset(words))
            and _scattered(words, _words_of(question))):
        score = 88.0
    if score >= _PREFIX_CHECK_FROM and only_prefixed(words, _words_of(question)):
        return 0.0  # "on time redelivery rate" does not name "on time delivery rate"
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


# Nouns that head measures in any domain: too general to identify an object on their own.
_HEAD_WORDS = frozenset({"rate", "rates", "ratio", "share", "time", "score", "index", "count", "number", "total",
                         "percentage", "percent", "average", "median", "value", "amount", "volume", "level"})


_DIGITS = re.compile(r"\D")


@lru_cache(maxsize=1 << 16)
def _token_in(t: str, q_tokens: frozenset[str]) -> bool:
    """`t` is a question word, or (5+ letters) one misspelled. Digits are no misspelling: they
    say which one ("terminal1" is not "terminal2", nor "terminal"). Cached: one question's
    candidates share most of their tokens."""
    return t in q_tokens or (len(t) >= 5 and any(
        fuzz.ratio(t, w) >= 88 and not prefixed(t, w) and _DIGITS.sub("", t) == _DIGITS.sub("", w) for w in q_tokens))


def question_tokens(q: str) -> set[str]:
    """The words of the normalized question `q`, and each word with the number after it written
    together ("terminal 2" -> "terminal2"), as names write them ("Terminal2 expansion")."""
    words = q.split()
    return set(words) | {a + b for a, b in zip(words, words[1:]) if b.isdigit() and a.isalpha()}


def _token_score(entry: ObjectEntry, distinctive: set[str], q_tokens: frozenset[str],
                 token_hits: set[str] | None = None) -> float:
    """`token_hits`: every distinctive token of the catalog `_token_in` the question (the
    `MatchIndex` finds them once per question); None tests this entry's own."""
    hits = (distinctive & token_hits) if token_hits is not None else {t for t in distinctive if _token_in(t, q_tokens)}
    # A measure's head ("share", "rate") that one name happens to hold alone names nothing: "which
    # metric measures the share of departures …" is not about the one "… share" in the catalog.
    # Beside another of the name's own words it counts ("somatic cell <count>").
    if hits <= _HEAD_WORDS:
        return 0.0
    noun = any(n in q_tokens for k in entry.kinds for n in KIND_NOUNS.get(k, ()))
    if len(hits) >= 2 or (hits and noun):
        return 90.0 + min(len(hits), 5)
    return 0.0


def _score_entry(entry: ObjectEntry, q: str, q_tokens: frozenset[str], distinctive: dict[str, set[str]],
                 threshold: float, core_scores: dict[str, float] | None = None,
                 matched: set[str] | None = None, caps: frozenset[str] = frozenset(),
                 token_hits: set[str] | None = None) -> ObjectMatch | None:
    """The score of one catalog entry for the normalized question `q` (None below the threshold);
    `caps`: the question's words written in capitals (`capitalized_words`)."""
    best, best_name = 0.0, ""
    for name in entry.names:
        s = _name_score(name, q, core_scores, matched)
        if s > best or (s == best and len(name) > len(best_name)):
            best, best_name = s, name
    for name in entry.stated:
        if best < 100.0 and f" {name} " in f" {q} ":
            best, best_name = 100.0, name
    for ini in sorted(caps.intersection(entry.initials)):
        if entry.initials[ini] > best:
            best, best_name = entry.initials[ini], ini
    for name in entry.exact:
        if f" {name} " in f" {q} ":
            best, best_name = 101.0, name
    by_tokens = _token_score(entry, distinctive.get(entry.object_id, set()), q_tokens, token_hits)
    if by_tokens > best:
        best, best_name = by_tokens, "distinctive words"
    if entry.domain and f" {entry.domain} " in f" {q} ":
        best += 2  # naming the domain ("finance") disambiguates
    if best >= threshold and best < 101.0 and best_name not in entry.initials and negation_dropped(
            entry.names, _words_of(q)):
        return None   # "the technical loss rate" is not the non technical loss rate
    if best >= threshold:
        return ObjectMatch(entry.object_id, best, entry.kinds, entry.domain, best_name)
    return None


# The domain bonus is the most a score can gain after the name/token scoring.
_DOMAIN_BONUS = 2.0
# Margin under the lowest raw score that can still reach the threshold, so float
# rounding in the C++ scorers can never drop a candidate.
_MARGIN = 1.0
# Below this a name's score cannot reach the match threshold (`match_objects`' 85) even with the
# domain bonus, so `_name_score` skips the prefixed-word check, the costly part of scoring a name.
_PREFIX_CHECK_FROM = 85.0 - _DOMAIN_BONUS - _MARGIN


class MatchIndex:
    """Which catalog entries can reach a match threshold for a question, without
    scoring every entry in Python. Each way an entry can score is indexed, and an
    entry is a candidate if any of them can fire; candidates are then scored by
    the same `_score_entry` as before, so the result equals the exhaustive scan:

    - a name or object id written out whole  -> phrase lookup over the question's word n-grams
    - `partial_ratio(core, question)` high    -> rapidfuzz over the distinct cores that share enough
                                                 bigrams with the question to reach the cutoff
                                                 (`canon.ask.understanding.fuzzy_filter`, lossless)
    - every word of a name near the question  -> name words indexed; a word matches if equal,
      (`_scattered`)                             equal without a plural s, or ratio >= 88
                                                 (over the words the bigram bound lets through)
    - distinctive words (`_token_score`)      -> token -> its one owner; fuzzy as above
    """

    def __init__(self, catalog: dict[str, ObjectEntry], distinctive: dict[str, set[str]]):
        self.size = len(catalog)
        self.phrases: dict[str, set[str]] = {}          # name or normalized object id -> object ids
        core_objects: dict[str, set[str]] = {}          # scoring core (len >= 5) -> object ids
        self.word_names: dict[str, list[tuple[frozenset[str], str]]] = {}  # word -> (name words, object id)
        for entry in catalog.values():
            for name in entry.names | entry.exact | set(entry.initials) | entry.stated:
                self.phrases.setdefault(name, set()).add(entry.object_id)
            for name in entry.names:
                words, core = _name_core(name)
                if len(core) >= 5:
                    core_objects.setdefault(core, set()).add(entry.object_id)
                if len(words) >= 2:
                    ws = frozenset(words)
                    for w in ws:
                        self.word_names.setdefault(w, []).append((ws, entry.object_id))
        self.max_phrase_words = max((len(p.split()) for p in self.phrases), default=0)
        self.cores = list(core_objects)
        self.core_filter = BigramIndex(self.cores)
        self.core_objects = [core_objects[c] for c in self.cores]
        self.vocab = set(self.word_names)
        # Each multi-word name filed once, under its rarest word: every word of a name must be
        # matched for it to qualify, so looking names up by their rarest word alone loses none,
        # and the long lists of common words ("rate", "revenue") are never walked.
        self.rare_names: dict[str, list[tuple[frozenset[str], str]]] = {}
        for ws, oid in {pair for pairs in self.word_names.values() for pair in pairs}:
            rare = min(ws, key=lambda w: (len(self.word_names[w]), w))
            self.rare_names.setdefault(rare, []).append((ws, oid))
        self.vocab_plural: dict[str, set[str]] = {}
        for w in self.vocab:
            self.vocab_plural.setdefault(w.rstrip("s"), set()).add(w)
        self.vocab_long = [w for w in self.vocab if len(w) >= 5]
        self.vocab_filter = BigramIndex(self.vocab_long)
        self.token_owner: dict[str, str] = {t: oid for oid, toks in distinctive.items() for t in toks}
        self.tokens_long = [t for t in self.token_owner if len(t) >= 5]
        self.tokens_filter = BigramIndex(self.tokens_long)

    def candidates(self, q: str, threshold: float) -> tuple[set[str], dict[str, float]]:
        """(object ids that may reach `threshold`, partial_ratio of every name core that
        reaches the cutoff below it)."""
        out, core_scores, _, _ = self.candidates_and_words(q, threshold)
        return out, core_scores

    def candidates_and_words(self, q: str, threshold: float) -> tuple[set[str], dict[str, float], set[str], set[str]]:
        """`candidates`, the name words some question word may stand for (equal, plural, or
        within the fuzzy bound): a name with a word outside them cannot be `_scattered`, and the
        distinctive tokens `_token_in` the question (what `_token_score` counts)."""
        q_words = q.split()
        q_tokens = question_tokens(q)
        out: set[str] = set()
        # 1. names and object ids written out whole (" name " in " q ")
        n = len(q_words)
        for i in range(n):
            for j in range(i + 1, min(n, i + self.max_phrase_words) + 1):
                hit = self.phrases.get(" ".join(q_words[i:j]))
                if hit:
                    out |= hit
        # 2. partial_ratio of a name's core against the question
        cutoff = threshold - _DOMAIN_BONUS - _MARGIN
        core_scores: dict[str, float] = {}
        for i, score in self.core_filter.partial_ratio_extract(q, cutoff):
            out |= self.core_objects[i]
            core_scores[self.cores[i]] = float(score)
        # 3. every word of a multi-word name matched by some question word (_scattered)
        long_q = [w for w in q_tokens if len(w) >= 5]
        matched = {w for w in q_tokens if w in self.vocab}
        for w in q_tokens:
            matched |= self.vocab_plural.get(w.rstrip("s"), set())
        matched.update(self.vocab_long[i] for i in self.vocab_filter.ratio_any(long_q, 88 - _MARGIN))
        for w in matched:
            for words, oid in self.rare_names.get(w, ()):
                if words <= matched:
                    out.add(oid)
        # 4. distinctive words (_token_score): written, or (5+ letters) misspelled, as `_token_in`
        # reads them; the bigram bound's strings are only those that can reach the ratio.
        token_hits = {w for w in q_tokens if w in self.token_owner}
        q_frozen = frozenset(q_tokens)
        for i in self.tokens_filter.ratio_any(sorted(q_tokens), 88 - _MARGIN):
            t = self.tokens_long[i]
            out.add(self.token_owner[t])
            if _token_in(t, q_frozen):
                token_hits.add(t)
        out.update(self.token_owner[t] for t in token_hits)
        return out, core_scores, matched, token_hits


def _match_index(catalog: dict[str, ObjectEntry], distinctive: dict[str, set[str]]) -> "MatchIndex | None":
    """The catalog's MatchIndex, built on the catalog's second question (a one-shot
    `canon ask` scans once instead of building an index it would use once)."""
    if not isinstance(catalog, Catalog):
        return None  # a plain dict: scan it (small, hand-built catalogs)
    idx = catalog.match_index
    if idx is not None and idx.size == len(catalog):
        return idx
    catalog.match_uses += 1
    if catalog.match_uses < 2:
        return None
    idx = catalog.match_index = MatchIndex(catalog, distinctive)
    return idx


def match_objects(question: str, catalog: dict[str, ObjectEntry], *, threshold: float = 85.0) -> list[ObjectMatch]:
    distinctive = getattr(catalog, "distinctive", None)
    if distinctive is None:
        distinctive = _distinctive(catalog)
    return _match(question, catalog, distinctive, threshold, _match_index(catalog, distinctive))


def match_objects_exhaustive(question: str, catalog: dict[str, ObjectEntry], *,
                             threshold: float = 85.0) -> list[ObjectMatch]:
    """Every entry scored (the reference `match_objects` must equal)."""
    distinctive = getattr(catalog, "distinctive", None)
    if distinctive is None:
        distinctive = _distinctive(catalog)
    return _match(question, catalog, distinctive, threshold, None)


def _match(question: str, catalog: dict[str, ObjectEntry], distinctive: dict[str, set[str]], threshold: float,
           idx: "MatchIndex | None") -> list[ObjectMatch]:
    """Score the entries `idx` names as candidates (every entry without an index)."""
    q = normalize(question)
    q_tokens = frozenset(question_tokens(q))
    caps = initialism_words(question) & q_tokens
    core_scores = matched = token_hits = None
    if idx is None:
        entries = catalog.values()
    else:
        ids, core_scores, matched, token_hits = idx.candidates_and_words(q, threshold)
        entries = [catalog[oid] for oid in ids if oid in catalog]
    out = [m for m in (_score_entry(e, q, q_tokens, distinctive, threshold, core_scores, matched, caps, token_hits)
                                  for e in entries)
           if m is not None]
    return sorted(out, key=lambda m: (-m.score, m.object_id))


