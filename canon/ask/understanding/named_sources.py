"""Named sources: the clauses of a question that attribute a claim to a source
("the old runbook tells me to…", "according to the help-centre article…",
"…, like the v3 proposal does", "a chat thread someone pasted says…"), in any
sentence of the question.

A source is a noun phrase headed by a document noun (`DOC_NOUNS`). What the
phrase says about the document it names (its head noun → the document kinds,
its modifiers → the statuses, every other word → title words) is resolved
against the visible non-authoritative documents by canon/ask/pipeline.py
(`_named_conflicts`); canon/ask/scope.py loads the kinds and statuses named
here before the question is answered. Each source also records the span of
its attributed clause: words inside someone else's claim ("…says one day
late still counts") say nothing about what the user asks, so intent is read
outside those spans (`outside_claims`).

Every word list here is about the grammar of attribution and the nouns that
name sorts of documents, never about a corpus."""

import re
from dataclasses import dataclass

# Head nouns that name a sort of document → the document kinds they can be (empty: any kind).
DOC_NOUNS: dict[str, tuple[str, ...]] = {
    "wiki": ("wiki",), "page": ("wiki",), "confluence": ("wiki",), "article": ("wiki",), "faq": ("wiki",),
    "runbook": ("runbook",), "playbook": ("runbook",),
    "note": ("untrusted_note", "note"), "notes": ("untrusted_note", "note"),
    "thread": ("untrusted_note", "note"), "message": ("untrusted_note", "note"),
    "email": ("untrusted_note", "note"), "post": ("untrusted_note", "note"),
    "comment": ("untrusted_note", "note"),
    "memo": ("restricted_memo", "memo"),
    "draft": (), "proposal": (), "doc": (), "document": (),
    # Where people say things in passing: chats, channels, tickets, forums.
    **{n: ("untrusted_note", "note") for n in ("chat", "chats", "channel", "slack", "conversation", "discussion",
                                               "forum", "ticket", "dm", "whatsapp")},
    # Pages written for readers: help centres, sites, guides.
    **{n: ("wiki",) for n in ("site", "website", "blog", "guide", "handbook", "manual", "kb", "centre", "center",
                              "documentation", "docs", "glossary", "primer", "explainer", "tutorial", "intranet",
                              "sharepoint", "notion", "handout", "cheatsheet")},
    # Other things that state a number or a rule, of any kind.
    **{n: () for n in ("tooltip", "dashboard", "spreadsheet", "sheet", "deck", "slide", "slides", "presentation",
                       "report", "readme", "notebook", "whitepaper", "brief")},
}
# Modifiers that say which lifecycle status the named document has.
OLD_WORDS = ("old", "older", "legacy", "previous", "outdated", "former", "archived", "superseded", "deprecated")
DRAFT_WORDS = ("draft", "proposal", "proposed")
_STATUS_OF_WORD = {**{w: ("superseded", "deprecated") for w in OLD_WORDS}, **{w: ("draft",) for w in DRAFT_WORDS}}

# Verbs that attribute a claim to their subject, in any tense ("says", "told me", "puts it").
ATTRIBUTION_VERBS = (
    "say", "says", "said", "tell", "tells", "told", "mention", "mentions", "mentioned", "suggest", "suggests",
    "suggested", "claim", "claims", "claimed", "state", "states", "stated", "list", "lists", "listed",
    "define", "defines", "defined", "show", "shows", "showed", "read", "reads", "put", "puts", "recommend",
    "recommends", "recommended", "insist", "insists", "insisted", "argue", "argues", "argued", "write",
    "writes", "wrote", "describe", "describes", "described", "explain", "explains", "explained",
    "saying", "telling", "claiming", "stating", "suggesting", "mentioning", "insisting",
)
# A claim put to the user's judgement: "is the old wiki right that …", "the wiki is correct
# about …", "was the runbook wrong to …". The source is the subject of the judgement.
JUDGEMENTS = ("right", "correct", "accurate", "wrong", "true", "mistaken", "incorrect")
_COPULAS = ("is", "was", "are", "were")
# A short prepositional phrase may sit between a source and its verb ("the runbook from 2024 says").
_LINKING = ("from", "for", "on", "about", "in", "of")
_MAX_LINKED = 3
# After "like"/"as" the source may take any auxiliary ("like the proposal does").
_AUXILIARIES = ("does", "did", "do", "has", "had", "is", "was")
# Words that open a noun phrase; words that cannot sit inside one (they end the walk leftwards).
_DETERMINERS = ("the", "a", "an", "our", "this", "that", "some", "my", "your", "their", "one", "his", "her")
_BREAKS = {
    "as", "like", "to", "according", "if", "when", "what", "which", "who", "how", "why", "where", "does", "do",
    "did", "is", "are", "was", "were", "and", "or", "but", "so", "then", "in", "on", "for", "of", "from", "by",
    "with", "about", "should", "would", "could", "can", "will", "i", "we", "you", "it", "they", "per",
}
# "a chat thread someone pasted": a relative clause of a pronoun and a verb of passing text on.
_PASSERS = ("someone", "somebody", "a colleague", "my colleague", "my manager", "a teammate", "they", "we", "i")
_PASSED = ("pasted", "sent", "shared", "posted", "forwarded", "wrote", "found", "linked", "dropped")
_MAX_MODIFIERS = 5
_PROPOSING_MODALS = ("would", "will", "could", "might", "may", "should")
# Verbs of having seen a claim somewhere ("I read in the wiki that …").
_PERCEIVED = ("read", "saw", "seen", "heard", "noticed", "found", "spotted")
# Verbs of having put a claim somewhere ("a branch manager <posted> in Slack that …"): read as
# "I read in X that …" is.
_POSTED = ("posted", "wrote", "said", "shared", "mentioned", "commented", "announced", "replied", "messaged")
# Nouns after a document noun that name the same source ("the WhatsApp <group>", "the Slack
# <export>"): part of its phrase, so the verb after them attributes.
_SOURCE_TAILS = frozenset({"group", "groups", "export", "exports", "transcript", "transcripts", "screenshot",
                           "screenshots", "log", "logs", "history"})
# Words that open a question (after "According to X," the user's own question may follow).
_QUESTION_OPENERS = ("how", "what", "which", "who", "when", "where", "why", "is", "are", "was", "were", "does",
                     "do", "did", "should", "can", "could", "would", "will", "has", "have")

# A word, or an identifier or relation written whole ("raw.helpdesk.ticket_events": its dots
# end no sentence and its parts are no document nouns).
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_'’\-]*(?:\.[A-Za-z0-9_][A-Za-z0-9_'’\-]*)*|[.?!;:,]")
_SENTENCE_END = ".?!;"


@dataclass
class NamedSource:
    noun: str
    modifier: str | None
    kinds: tuple[str, ...]
    statuses: tuple[str, ...]
    # The phrase's other words, compared with document titles ("carrier", "cutoff").
    words: tuple[str, ...] = ()
    # The attributed clause (character offsets in the question): read as someone else's claim.
    span: tuple[int, int] = (0, 0)
    # "What does the memo say?": the source is what the question asks about, not a claim beside it.
    subject: bool = False
    # "According to the IROPS runbook, below what completion factor do we …?": the user asks what
    # the source says (the clause after the comma is their own question, no claim of theirs).
    asked: bool = False


def _tokens(question: str) -> list[tuple[str, int, int]]:
    out = []
    for m in _TOKEN.finditer(question):
        tok = m.group().lower().replace("’", "'")
        head, _, last = tok.rpartition("-")
        if head and last in DOC_NOUNS:
            # "the v3-draft", "the ops-runbook": a document noun joined to its modifier
            out += [(head, m.start(), m.start() + len(head)), (last, m.end() - len(last), m.end())]
        else:
            out.append((tok, m.start(), m.end()))
    return out


def _sentence_end(toks, i: int, commas: bool) -> int:
    """Index of the token that ends the clause starting at `i` (a sentence end, or a comma)."""
    stops = _SENTENCE_END + ("," if commas else "")
    for j in range(i, len(toks)):
        if toks[j][0] in stops:
            return j
    return len(toks)


def _phrase_start(toks, head: int) -> int:
    """The first token of the noun phrase whose head noun is at `head`."""
    i, pers = head, 0
    while i > 0 and head - i - pers < _MAX_MODIFIERS:
        w = toks[i - 1][0]
        # "per" inside a name ("the milk solids <per> cow v3 proposal"), between two of its words;
        # not counted as a modifier
        in_name = w == "per" and i >= 2 and toks[i][0] not in _DETERMINERS and _is_word(toks[i - 2][0]) \
            and toks[i - 2][0] not in _BREAKS and toks[i - 2][0] not in _DETERMINERS
        if w in _SENTENCE_END or w in ",:" or (w in _BREAKS and not in_name):
            break
        pers += in_name
        i -= 1
        if w in _DETERMINERS:
            break
    return i


def _phrase_end(toks, head: int) -> int:
    """The token after the noun phrase: compound nouns ("wiki page") and a passing-on
    relative clause ("someone pasted") belong to it."""
    j = head + 1
    while j < len(toks) and (toks[j][0] in DOC_NOUNS or toks[j][0] in _SOURCE_TAILS):
        j += 1
    for passer in _PASSERS:
        parts = passer.split()
        k = j + (1 if j < len(toks) and toks[j][0] == "that" else 0)
        if [t[0] for t in toks[k:k + len(parts)]] == parts and k + len(parts) < len(toks) \
                and toks[k + len(parts)][0] in _PASSED:
            return k + len(parts) + 1
    return j


def _linked_phrase_end(toks, end: int) -> int:
    """Past a short prepositional phrase when an attribution verb follows it ("the wiki page
    for support says"); else `end` unchanged."""
    if end < len(toks) and toks[end][0] in _LINKING:
        for j in range(end + 1, min(len(toks), end + 1 + _MAX_LINKED) + 1):
            if j < len(toks) and toks[j][0] in ATTRIBUTION_VERBS:
                return j
            if j >= len(toks) or not _is_word(toks[j][0]) or toks[j][0] in _BREAKS:
                break
    return end


def _is_word(tok: str) -> bool:
    """A word, hyphenated or with an apostrophe ("payments-risk", "team's"), not punctuation."""
    return tok.replace("-", "").replace("'", "").replace("’", "").replace("_", "").replace(".", "").isalnum()


def _opens_sentence(toks, start: int) -> bool:
    return start == 0 or toks[start - 1][0] in _SENTENCE_END


# Words that open a sentence's fronted phrase, which a comma closes before its subject ("For the
# July capacity factor, <the old wiki uses …>", "Btw, <the runbook says …>").
_FRONTED = frozenset({"for", "in", "on", "at", "as", "regarding", "re", "about", "with", "since", "from", "by",
                      "under", "during", "after", "before", "also", "btw", "fyi", "fwiw", "anyway", "ok", "okay",
                      "so", "hi", "hey", "hello"})


def _after_fronted_phrase(toks, start: int) -> bool:
    """A comma before the phrase closes a phrase fronted in its sentence, that a preposition or a
    discourse word opens: the phrase is the subject of the sentence's main clause."""
    if start < 2 or toks[start - 1][0] != ",":
        return False
    first = start - 1
    while first > 0 and toks[first - 1][0] not in _SENTENCE_END and toks[first - 1][0] != ",":
        first -= 1
    return (first == 0 or toks[first - 1][0] in _SENTENCE_END) and toks[first][0] in _FRONTED


def _opens_clause(toks, start: int) -> bool:
    """The phrase opens a sentence, or its main clause after a fronted phrase ("For the July
    capacity factor, <the old wiki uses …>"), or a clause reported after a verb of saying or
    perceiving ("my predecessor said <the old wiki counts …>", "someone told me <the runbook
    puts …>")."""
    if _opens_sentence(toks, start) or _after_fronted_phrase(toks, start):
        return True
    prev = toks[start - 1][0]
    if prev in ATTRIBUTION_VERBS or prev in _PERCEIVED:
        return True
    return prev in ("me", "us") and start >= 2 and toks[start - 2][0] in ATTRIBUTION_VERBS


def _finite_verb(word: str) -> bool:
    """A present or past verb after a sentence's subject ("the proposal measures it…"):
    a document that opens a sentence and does something states a claim."""
    return len(word) > 3 and word not in _AUXILIARIES and word not in DOC_NOUNS and word.isalpha() \
        and (word.endswith("s") or word.endswith("ed"))


# "According to <phrase>, <up to two words> <a question's opener> …" (`NamedSource.asked`).
_ACCORDING_THEN_ASKS = re.compile(
    r"^\s*(?:according to|based on|going by|per)\s+(?P<phrase>[^,?]+?)\s*,\s*(?:[a-z]+\s+){0,2}?"
    r"(?:how|what|which|when|who|whom|where|why|is|are|was|were|does|do|did|should|can|could|would|will|must)\b",
    re.IGNORECASE)


def extract_named_sources(question: str) -> list[NamedSource]:
    """Sources the user names as saying something. A document noun alone is not enough:
    the phrase must be the subject of an attribution verb, follow 'according to', or be
    what "like"/"as" compares with."""
    toks = _tokens(question)
    according_then_asks = _ACCORDING_THEN_ASKS.match(question)
    asked_of = set(re.findall(r"[a-z0-9]+", according_then_asks.group("phrase").lower())) if according_then_asks \
        else set()
    out: list[NamedSource] = []
    seen_heads: set[int] = set()
    i = 0
    while i < len(toks):
        if toks[i][0] not in DOC_NOUNS or i in seen_heads:
            i += 1
            continue
        start, end = _phrase_start(toks, i), _phrase_end(toks, i)
        seen_heads.update(range(i, end))
        before = [t[0] for t in toks[max(0, start - 2):start]]
        end = _linked_phrase_end(toks, end)
        # "in the ops channel someone said <claim>": a passer and an attribution verb after the phrase
        if end + 1 < len(toks) and toks[end][0] in _PASSERS and toks[end + 1][0] in ATTRIBUTION_VERBS:
            end += 1
        # "a chat thread that said <claim>": a relative clause attributes as the verb alone does
        if end + 1 < len(toks) and toks[end][0] in ("that", "which") and toks[end + 1][0] in ATTRIBUTION_VERBS:
            end += 1
        # "like the draft does", "as the wiki says"; "as in the v3 proposal", "like in the old wiki"
        # compare with what the source states without a verb after it
        compared_in = before[-2:] in (["as", "in"], ["like", "in"])
        compared = bool(before) and (before[-1] in ("like", "as") or compared_in)
        # "per the wiki, …" (a determiner: "cost per page" names no source); "based on the wiki, …"
        according = (before[-2:] in (["according", "to"], ["based", "on"], ["going", "by"])
                     or (before[-1:] == ["per"] and toks[start][0] in _DETERMINERS))
        # "the old HR wiki, which counts <claim>": a clause set off by a comma says what it states
        # (without the comma, "the runbook that covers X" only says which runbook). After
        # "according to X," the user's own question may open with "which" ("which sources …").
        phrase_end = end
        described = not (compared or according) and end + 2 < len(toks) and toks[end][0] == "," \
            and toks[end + 1][0] == "which" and _finite_verb(toks[end + 2][0])
        if described:
            end += 2
        verb = toks[end][0] if end < len(toks) else ""
        # "I read in the chat thread that <claim>", "I saw on the help site that <claim>"
        perceived = len(before) == 2 and before[-1] in ("in", "on") and (before[-2] in _PERCEIVED
                                                                      or before[-2] in _POSTED)

        # "From the old ops wiki: <claim>", "I got this from the control room chat: <claim>": a
        # colon after the phrase introduces what it states, unless the user's question follows.
        quoted = verb == ":" and _word_at(toks, end + 1) and toks[end + 1][0] not in _QUESTION_OPENERS
        # "weather disruption runbook: who do we escalate to …?": the phrase opens the question and
        # the user's own question follows the colon; what the source says is asked, as after
        # "according to X,".
        headed = verb == ":" and _opens_sentence(toks, start) and _word_at(toks, end + 1) \
            and toks[end + 1][0] in _QUESTION_OPENERS

        subject = bool(before) and before[-1] in ("does", "did", "do") and verb in ATTRIBUTION_VERBS
        # "Summarize the v3 proposal", "explain the old wiki page": the document is what is asked
        # about, as in "what does the v3 proposal say?".
        subject = subject or (bool(before) and before[-1] in _ASKING_TO_DESCRIBE and _opens_question(toks, start))
        after = toks[end + 1][0] if end + 1 < len(toks) else ""
        judged = (before[-1:] and before[-1] in _COPULAS and verb in JUDGEMENTS) or (
            verb in _COPULAS and after in JUDGEMENTS)
        # "The v3 proposal <would divide> by cows calved": a modal and its verb state what it proposes.
        attributed = verb in ATTRIBUTION_VERBS or judged or described or compared_in or (compared and verb in _AUXILIARIES) or (
            _opens_clause(toks, start) and (_finite_verb(verb) or (verb in _PROPOSING_MODALS and _word_at(toks, end + 1))))
        if not (attributed or according or perceived or quoted or headed or subject):
            i = end
            continue
        if quoted:
            # The sentence is the source's: the words leading to it ("I got this from") attribute,
            # what follows the colon is its claim; the user asks in another sentence.
            first = start
            while first > 0 and toks[first - 1][0] not in _SENTENCE_END:
                first -= 1
            clause = (first, _sentence_end(toks, end, commas=False))
        elif headed:
            clause = (start, end)
        elif perceived:
            # "I read in X that <claim>": the claim runs from "that" to the end of the sentence.
            clause = (end, _sentence_end(toks, end, commas=False))
        elif compared or according:
            # "…, as X says": the claim is the rest of the sentence, the user's own words. Opening a
            # sentence ("According to X, <claim>."), the clause runs on to the sentence end unless
            # what follows the comma is a question of the user's ("According to X, how is…?").
            first = start - (2 if len(before) == 2 and before[-2] in ("according", "based", "going") and not compared
                             and before[-1] != "per" else 1)
            stop = _sentence_end(toks, end, commas=True)
            if _opens_sentence(toks, first) and stop < len(toks) and toks[stop][0] == "," \
                    and not (stop + 1 < len(toks) and toks[stop + 1][0] in _QUESTION_OPENERS):
                stop = _sentence_end(toks, stop, commas=False)
            clause = (first, stop)
        elif subject:
            clause = (start, start)
        else:
            # "X says <claim>": the claim runs to the end of the sentence.
            clause = (start, _sentence_end(toks, end, commas=False))
        words = [t[0] for t in toks[start:phrase_end] if t[0] not in _DETERMINERS and t[0] not in _LINKING
                 and t[0] not in _SOURCE_TAILS]
        # The compound's last document noun heads it ("chat <thread>", "help centre <article>").
        noun = next(toks[j][0] for j in range(min(end, len(toks)) - 1, i - 1, -1) if toks[j][0] in DOC_NOUNS)
        mods = [w for w in words if w in _STATUS_OF_WORD]
        statuses = _STATUS_OF_WORD.get(noun, ()) or next((_STATUS_OF_WORD[m] for m in mods), ())
        char_span = (toks[clause[0]][1], toks[clause[1] - 1][2]) if clause[1] > clause[0] else (0, 0)
        out.append(NamedSource(noun, mods[0] if mods else None, DOC_NOUNS[noun], statuses,
                               words=tuple(words), span=char_span, subject=subject, asked=headed or noun in asked_of))
        i = end
    return out + _sent_through(toks, seen_heads)


# Verbs of passing a claim on through a channel ("a reception supervisor <emailed> that …",
# "the depot lead <messaged> …"): the channel is the source, of the kinds its noun names.
_SENT_THROUGH = {"emailed": "email", "e-mailed": "email", "messaged": "message",
                 "texted": "message", "pinged": "message", "dmed": "dm", "dm'd": "dm", "slacked": "slack",
                 "whatsapped": "whatsapp"}
_MAX_SENDER_WORDS = 4
_PASSED_ON = frozenset({"that", "me", "us", ":", ",", "saying"})


def _sent_through(toks, taken: set[int]) -> list[NamedSource]:
    """Claims a person passed on through a channel, the channel's noun standing for the source:
    "a reception supervisor emailed that <claim>" names an email from a reception supervisor
    (its words: the sender's). The sender opens its sentence or clause; "I emailed" or "we
    messaged" pass on nothing of someone else's."""
    out = []
    for j, (tok, _, _) in enumerate(toks):
        noun = _SENT_THROUGH.get(tok)
        # What is passed on follows the verb ("emailed <that> …", "texted <me> …", "messaged:");
        # "… messaged in the ops channel that …" names the channel's phrase as the source (above).
        if noun is None or j in taken or j == 0 or j + 1 >= len(toks) or not (
                toks[j + 1][0] in _PASSED_ON or [t[0] for t in toks[j + 1:j + 3]] in (["to", "say"], ["to", "tell"])):
            continue
        start = j
        # The sender's phrase, with a short prepositional phrase inside it ("someone <from> delivery
        # ops", "a dispatcher <on> the night shift").
        while start > 0 and j - start < _MAX_SENDER_WORDS + 2 and _is_word(toks[start - 1][0]) and (
                toks[start - 1][0] not in _BREAKS or toks[start - 1][0] in _LINKING):
            start -= 1
            if toks[start][0] in _DETERMINERS and (start == 0 or toks[start - 1][0] not in _LINKING):
                break
        while start < j and toks[start][0] in _LINKING:
            start += 1
        sender = [t[0] for t in toks[start:j] if t[0] not in _DETERMINERS and t[0] not in _LINKING]
        if not sender or sender[0] in ("i", "we", "you") or not (
                _opens_sentence(toks, start) or toks[start - 1][0] == "," or toks[start - 1][0] in _PERCEIVED):
            continue
        end = _sentence_end(toks, j, commas=False)
        out.append(NamedSource(noun, None, DOC_NOUNS[noun], (), words=tuple(sender),
                               span=(toks[start][1], toks[end - 1][2])))
    return out


# Verbs asking for what a document says ("<summarize> the v3 proposal").
_ASKING_TO_DESCRIBE = frozenset({"summarize", "summarise", "summarizing", "summarising", "recap", "outline",
                                 "describe", "explain", "paraphrase"})


def _opens_question(toks, start: int) -> bool:
    """The verb before the phrase at `start` opens its sentence, or follows "please" / "can you"
    ("Please summarize the …", "can you summarise the …")."""
    k = start - 1
    while k > 0 and toks[k - 1][0] in ("please", "you", "can", "could", "pls", "kindly", "quickly", "briefly"):
        k -= 1
    return _opens_sentence(toks, k)


def _word_at(toks, j: int) -> bool:
    """A word (not punctuation) stands at token `j`."""
    return j < len(toks) and _is_word(toks[j][0])


def outside_claims(question: str, sources: list[NamedSource]) -> str:
    """The question without the attributed clauses: the words the user asks with."""
    text = question
    for ns in sorted(sources, key=lambda s: s.span, reverse=True):
        a, b = ns.span
        if b > a:
            text = text[:a] + " " + text[b:]
    return text


_ATTRIBUTING = frozenset(ATTRIBUTION_VERBS) | frozenset(JUDGEMENTS) | frozenset(_PASSED)


def without_sources(question: str, sources: list[NamedSource]) -> str:
    """The question without the words that name its sources and attribute claims to them: a
    description of the object asked about is the claim and the user's own words, not "the old
    escalation runbook tells me" (canon/ask/pipeline.py reads descriptions with it)."""
    if not sources:
        return question
    drop = _ATTRIBUTING | {w for ns in sources for w in ns.words}
    return " ".join(tok for tok, _, _ in _tokens(question) if tok not in drop)
