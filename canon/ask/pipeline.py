"""`canon ask`: one governed pipeline, each step its own unit.

1. authorize  – the role's visible set from the document ACL and the live policy
2. parse      – object(s), reporting date, intent, named sources (metadata only)
3. resolve    – exact effective-time resolution of the governed object
4. discover   – hybrid retrieval under the role's prefilter, then hard constraints
5. stale      – evidence is always composed from the registry's live revision;
                the index only contributes chunk ids when it holds that revision
6. compose    – deterministic text and claims from the selected evidence only
                (canon/ask/compose.py; freshness ages and metric values are
                computed in canon/ask/calculate.py)
7. log        – one answer_log row (ids and versions, never text)

Retrieved text is data: nothing in it is ever parsed as an instruction, and
the only things read from evidence bodies are sentences to cite and, to decide
whether a weak match names the question's object, the names a visible approved
revision states for its own object ("also called …", `_coverage`).

This module is longer than most: it holds the steps in their order plus the
per-role structures (`AskContext`, `RoleView`) every step reads, which read
best beside the steps that use them.
"""

import datetime as dt
import time
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Callable, Iterable

import duckdb
from rapidfuzz import fuzz

from canon.ask import answer_log, calculate, compose, links, revisions
from canon.ask.inputs import require_question
from canon.ask.resolve import DENY_TEXT, claims_of, lineage_of, policy_unavailable, resolve_object
from canon.ask.understanding import clippings, compounds
from canon.ask.understanding.counted_condition import counts_within, unstated_condition
from canon.ask.understanding.coverage import (
    AGGREGATES,
    BOUNDARY,
    MEASURE_HEADS,
    MEASURE_NOUNS,
    aggregate_beside_name_words,
    asking_part,
    content_words,
    continues_otherwise,
    coverage,
    describes,
    description_support,
    grammar_word_in_name_place,
    head_swapped,
    head_swapped_in_part,
    in_some_name,
    measure_of,
    modifiers_before,
    names_a_component,
    names_without_head,
    number_swapped,
    other_measure,
    phrase_in_one_name,
    qualifier_swapped,
    renames,
    restates_definition,
    stated_synonyms,
    taken_in_as_part,
    text_words,
    unstated_measure,
    unstated_modifiers,
    without_measure_head,
    words_in_one_name,
)
from canon.ask.understanding.identifiers import identifier_unnamed, identifiers, names_identifier
from canon.ask.understanding.match import (
    _STOP,
    PREFIX_INITIALISM_SCORE,
    ObjectMatch,
    _humanize,
    _same_word,
    negation_dropped,
    normalize,
    object_catalog,
    padded,
    singular,
)
from canon.ask.understanding.measure_shape import (
    aggregate_before,
    aggregate_words,
    aggregate_words_of,
    aggregates,
    computes_other,
    counts_what_is_negated,
    denominator_words_asked,
    only_computed_aggregates,
    other_aggregate,
)
from canon.ask.understanding.named_sources import (
    ATTRIBUTION_VERBS,
    DOC_NOUNS,
    JUDGEMENTS,
    NamedSource,
    without_sources,
)
from canon.ask.understanding.parse import (
    METADATA_INTENTS,
    ParsedQuestion,
    asks_definition,
    asks_model_detail,
    asks_procedure,
    check_question,
    name_runs,
    names_and_period_only,
    parse_question,
    reread_intents,
)
from canon.ask.understanding.qualifiers import (
    MAX_PARTS,
    breakdown,
    divides_per,
    left_out_after,
    left_out_stated,
    ratio_after,
    ratio_before,
    ratio_stated,
    split_by_grain,
    time_grain,
)
from canon.core.fiscal_calendar import FiscalCalendar
from canon.models.documents import Document, Status
from canon.models.responses import Evidence, Response
from canon.registry.graph import has_dbt_tables, upstream
from canon.registry.policy import Policy, revoked_doc_ids, visible_docs
from canon.registry.temporal import period_label

# Governed concepts a question can be about, in the order they win a tie. The last four are the other
# dbt nodes Canon renders without annotations (canon/sources/dbt/documents.py): a question can be about
# a source or a saved query, but a metric or model of the same name wins.
CONCEPT_PRIORITY = {"metric_definition": 0, "model_schema": 1, "policy": 2, "restricted_memo": 3, "runbook": 4,
                    "semantic_model": 5, "source_table": 6, "saved_query": 7, "exposure": 8}
DENY_MIN_SCORE = 90.0
RETRIEVE_COLUMNS = ("chunk_id", "doc_id")


@dataclass
class Retriever:
    """Discovery over the served index revision (None when no index exists)."""

    search: Callable[..., list]          # canon.index.search.search bound to (lancedb_dir, con)
    embed_query: Callable[[str], object] | None
    revision_id: str
    chunks_of: Callable[[str, str], list[str]]  # (doc_id, content_hash) -> chunk ids in the served revision


@dataclass
class RoleView:
    """What one role may see under one live policy, computed once and reused by
    every question until the policy (its revision or its rules) or the document
    list changes."""

    role: str
    policy_key: tuple
    shown: list[Document]                    # visible documents, in ctx.docs order
    shown_ids: set[str]
    shown_objects: dict[str, Document]       # object_id -> its last visible document
    by_kind: dict[str, list[Document]]       # visible documents per kind, in ctx.docs order
    by_id: dict[str, Document]               # visible documents by doc_id
    revoked: list[str]                       # the ACL admits the role, the live policy revokes
    fresh: "FreshnessIndex | None" = None    # built on the first freshness question
    kinds: dict[str, links.KindIndex] = field(default_factory=dict)   # built on first use, per kind

    def kind_index(self, kind: str) -> links.KindIndex:
        """The visible documents of `kind`, indexed for `links.linked`."""
        idx = self.kinds.get(kind)
        if idx is None:
            idx = self.kinds[kind] = links.KindIndex(self.by_kind.get(kind, []), kind)
        return idx


@dataclass
class FreshnessIndex:
    """The visible freshness snapshots, their observations parsed once, and the
    positions of the snapshots per object family and per observed source."""

    snapshots: list[Document]
    observed: list[tuple]                    # links.observations(snapshot), same order
    by_family: dict[tuple | None, list[int]]
    by_source: dict[str, list[int]]


@dataclass
class AskContext:
    docs: list[Document]
    policy: Policy
    con: duckdb.DuckDBPyConnection | None = None
    retriever: Retriever | None = None
    metric_values: Callable | None = None   # canon.sources.dbt.semantic.metric_values.MetricEngine.value
    log_answers: bool = True
    answer_store: answer_log.AnswerLogFile | None = None   # else the `answer_log` table of `con`
    clock: Callable[[], dt.date] | None = None   # "today" for questions without --as-of (None: the system date)
    calendar: FiscalCalendar | None = None   # the configured fiscal year (None: fiscal periods are asked back)
    _catalog: dict | None = None
    # Per-question structures computed once: the catalog, documents by object and
    # the per-(role, policy) visible sets. Assigning a new `docs` list (or growing
    # it) or a policy with another revision or other rules invalidates them.
    _docs_seen: list | None = field(default=None, repr=False)
    _docs_len: int = field(default=-1, repr=False)
    _by_object: dict | None = field(default=None, repr=False)
    _views: dict = field(default_factory=dict, repr=False)
    _observations: dict = field(default_factory=dict, repr=False)

    def _fresh(self) -> None:
        if self._docs_seen is not self.docs or self._docs_len != len(self.docs):
            if self._docs_seen is not None:
                self._catalog = None
            self._docs_seen, self._docs_len = self.docs, len(self.docs)
            self._by_object = None
            self._views = {}
            self._observations = {}

    @property
    def catalog(self):
        self._fresh()
        if self._catalog is None:
            self._catalog = object_catalog(self.docs)
        return self._catalog

    def known_name_words(self, words) -> set[str]:
        """Which of `words` are core words of a governed name (canon/ask/understanding/compounds.py)."""
        return compounds.catalog_words(self.catalog) & set(words)

    def names_with(self, prefixes) -> set[tuple[str, ...]]:
        """Names holding a word that starts with one of `prefixes` (canon/ask/understanding/clippings.py)."""
        return clippings.catalog_names_with(self.catalog, prefixes)

    @property
    def by_object(self) -> dict[str, list[Document]]:
        """object_id -> its revisions, in ctx.docs order."""
        self._fresh()
        if self._by_object is None:
            by: dict[str, list[Document]] = {}
            for d in self.docs:
                by.setdefault(d.object_id, []).append(d)
            self._by_object = by
        return self._by_object

    def observations(self, doc: Document) -> tuple:
        """links.observations(doc), parsed once per document revision."""
        key = (doc.doc_id, doc.content_hash)
        got = self._observations.get(key)
        if got is None:
            got = self._observations[key] = links.observations(doc)
        return got

    def freshness_index(self, view: RoleView) -> FreshnessIndex:
        if view.fresh is None:
            snaps = view.by_kind.get("freshness_snapshot", [])
            observed = [self.observations(s) for s in snaps]
            by_family: dict[tuple | None, list[int]] = {}
            by_source: dict[str, list[int]] = {}
            for i, (s, (_, obs)) in enumerate(zip(snaps, observed)):
                by_family.setdefault(links._family(s.object_id), []).append(i)
                for src in {o["source"] for o in obs}:
                    by_source.setdefault(src, []).append(i)
            view.fresh = FreshnessIndex(snaps, observed, by_family, by_source)
        return view.fresh

    # Hooks where the pipeline reaches documents beyond those its question named: no-ops
    # here, where `docs` is the whole registry; canon/ask/scope.py loads them as reached.
    def ensure_concept(self, object_id: str) -> None:
        """Every revision of `object_id` and what they link to are in `docs`."""

    def ensure_dbt_nodes(self, node_ids: list[str], lineage_doc_id: str | None) -> None:
        """The documents of these dbt nodes (and that lineage document) are in `docs`."""

    def ensure_hits(self, doc_ids: list[str]) -> None:
        """Every revision of the objects these retrieved documents belong to is in `docs`."""

    def ensure_freshness(self, concept: str, sources: set[str]) -> None:
        """The freshness snapshots of the concept's family or observing one of `sources` are in `docs`."""

    def ensure_lineage_naming(self, ref: str) -> None:
        """The lineage documents whose text names `ref` (a model revision, "model.x.fct_y.v2") are in `docs`."""

    def revoked_for(self, role: str) -> list[str]:
        """Doc ids the ACL admits `role` to and the live policy revokes."""
        return revoked_doc_ids(self.docs, role, self.policy)

    def view(self, role: str) -> RoleView:
        """The role's visible set under the live policy (read on every question:
        a new policy revision or changed rules take effect on the next question)."""
        self._fresh()
        key = (role, self.policy.visibility_key())
        v = self._views.get(key)
        if v is None:
            shown = visible_docs(self.docs, role, self.policy)
            by_kind: dict[str, list[Document]] = {}
            for d in shown:
                by_kind.setdefault(d.kind, []).append(d)
            shown_ids = {d.doc_id for d in shown}
            revoked = self.revoked_for(role)
            v = RoleView(role=role, policy_key=key[1], shown=shown, shown_ids=shown_ids,
                         shown_objects={d.object_id: d for d in shown}, by_kind=by_kind,
                         by_id={d.doc_id: d for d in shown}, revoked=revoked)
            if len(self._views) >= 64:
                self._views.clear()
            self._views[key] = v
        return v


@dataclass
class Timings:
    steps: dict[str, float] = field(default_factory=dict)

    def mark(self, name: str, start: float) -> float:
        now = time.perf_counter()
        self.steps[name] = self.steps.get(name, 0.0) + (now - start) * 1000
        return now


def ask(ctx: AskContext, question: str, role: str, as_of: dt.date | None = None,
        timings: Timings | None = None) -> Response:
    check_question(question)  # bounded before authorization, parsing or retrieval
    require_question(question)
    timings = timings or Timings()
    t = time.perf_counter()
    if not ctx.policy.available:
        # Fail closed before anything is parsed or retrieved: every action becomes this deny.
        resp = policy_unavailable(role, as_of, ctx.policy, question)
        resp.index_revision = ctx.retriever.revision_id if ctx.retriever else ""
        _log_answer(ctx, resp)
        timings.mark("authorize", t)
        return resp
    view = ctx.view(role)
    t = timings.mark("authorize", t)
    # Compounds in the catalog's spelling ("head count" -> "headcount"); the response keeps the user's words.
    parsed = parse_question(compounds.as_read(question, ctx.known_name_words, ctx.names_with), ctx.catalog, as_of,
                            ctx.clock() if ctx.clock else None, ctx.calendar)
    t = timings.mark("parse", t)
    resp = _answer(ctx, parsed, role, view, timings)
    t = time.perf_counter()
    resp.question = question
    resp.role = role
    resp.as_of = resp.as_of or parsed.as_of
    resp.policy_revision = ctx.policy.revision
    resp.index_revision = ctx.retriever.revision_id if ctx.retriever else ""
    _attach_chunks(ctx, resp)
    _assert_no_leak(resp, ctx.view(role).shown_ids)   # the view as it ends: the pipeline may have read more
    _log_answer(ctx, resp)
    timings.mark("compose", t)
    return resp


def _ambiguous_date(ctx: AskContext, p: ParsedQuestion, role: str, concept: str) -> Response:
    """A numeric date that reads as two days ("08/07/2026") is asked back, each reading with the
    revision of the object that governs it (none when none the role may see does)."""
    revs = ctx.by_object.get(concept, [])
    options = []
    for day, reading in zip(p.ambiguous_days, ("month/day/year", "day/month/year")):
        chosen = resolve_object(revs, concept, day, role, ctx.policy).chosen
        options.append({"date": day.isoformat(), "reading": reading,
                        "evidence_id": chosen.doc_id if chosen is not None else None})
    a, b = p.ambiguous_days
    return Response(action="clarify", role=role, reason="date_ambiguous", options=options,
                    answer=f"The date in the question reads as {a:%B} {a.day}, {a.year} (month/day/year) or "
                           f"{b:%B} {b.day}, {b.year} (day/month/year). Which one do you mean? "
                           "Writing it as YYYY-MM-DD avoids the question.")


def _fiscal_unknown(ctx: AskContext, p: ParsedQuestion, role: str, concept: str) -> Response | None:
    """A fiscal period no configured calendar places ("FY2027" without `calendar` keys) is asked
    back with the object's approved revisions the role may see, never read as a calendar period.
    None when the role sees no approved revision: the answer then does not depend on the date."""
    revs = ctx.by_object.get(concept, [])
    shown = visible_docs(revs, role, ctx.policy)
    if revs and not shown:
        return Response(action="deny", role=role, answer=DENY_TEXT, reason="not_authorized")
    approved = revisions.approved_revisions(shown)
    if not approved:
        return None
    return Response(action="clarify", role=role, reason="date_required", options=revisions.date_options(approved),
                    answer=f"Which days does the question's fiscal period cover? ({p.fiscal_unknown}.) "
                           "Name the dates (YYYY-MM-DD to YYYY-MM-DD), or configure the fiscal year "
                           "(`calendar.fiscal_year_start` in the configuration file).")


def _log_answer(ctx: AskContext, resp: Response) -> None:
    """Give `resp` its answer_id and log it: to the answer log file when the context has
    one (`canon ask`, which never writes canon.duckdb), else to `con`'s table."""
    resp.answer_id = answer_log.new_answer_id()
    if not ctx.log_answers:
        return
    if ctx.answer_store is not None:
        ctx.answer_store.record(resp)
    elif ctx.con is not None:
        answer_log.record(ctx.con, resp)


# ---------------------------------------------------------------- steps


def _answer(ctx: AskContext, p: ParsedQuestion, role: str, view: RoleView, timings: Timings) -> Response:
    t = time.perf_counter()
    by_object = ctx.by_object
    shown, shown_ids = view.shown, view.shown_ids

    # Authorization of what the question asks for, before anything is retrieved:
    # an object the role may not see at all is denied, with nothing of it shown. Only an object
    # the question names: its catalog names (metadata, never its text) must cover the question's
    # object phrase, as a visible object's must to be answered. A look-alike ("the <restricted
    # name> savings rate") is no object of the question; it goes on to discovery, which abstains
    # without a word of the restricted object, as for any name nothing governs.
    visible = [m for m in p.matches if any(d.doc_id in shown_ids for d in by_object.get(m.object_id, []))]
    visible_ids = {m.object_id for m in visible}
    kinds_named = _kinds_named(p)
    for m in p.matches:
        if m.score >= DENY_MIN_SCORE and m.object_id not in visible_ids and _names_hidden(
                ctx, m, p.text, visible, kinds_named):
            return Response(action="deny", role=role, answer=DENY_TEXT, reason="not_authorized")

    concept, options, set_aside = _pick_concept(p, ctx, view, kinds_named)
    subject = _subject_document(ctx, p, view)
    if subject is None and concept is not None and p.intent in ("definition", "freshness", "model") \
            and asks_procedure(p.text) and not asks_definition(p.text):
        # "What do we do when the sailing cancellation rate passes 15 percent?", "which table must
        # have loaded before we publish circulation?": what to do about a metric is the approved
        # runbook's that covers it, not the metric's definition nor its data's freshness now.
        subject = _procedure_runbook(ctx, p, view, concept)
        if subject is not None:
            p = replace(p, intents=p.intents & METADATA_INTENTS)
    if subject is not None and subject != concept:
        # "What does the vat temperature runbook say about the somatic cell count?": the runbook
        # is what is asked about, the metric only its topic.
        concept, options = subject, []
    if concept is not None and _asks_for_a_metric(p, kinds_named) and ctx.catalog[concept].kinds == {"model_schema"}:
        concept = _metric_of_model_name(ctx, concept, p.text, view) or concept
        view = ctx.view(role)
    t = timings.mark("resolve", t)
    if options:
        return _which_object(role, options)
    if concept is not None:
        statuses = _subject_revision_statuses(ctx, p, role, concept)
        if statuses:
            # "What does the readmission rate v3 proposal say?": the question is about a revision
            # that does not govern, as about any document that is not authoritative.
            return _not_authoritative(role, statuses)
    if concept is None and p.intent == "freshness":
        # A freshness question about a source table it names ("is raw.app.events fresh?"), or
        # names by the words of its last segment ("is the scan events table fresh?"): the table
        # is what it asks about, before any object retrieval finds for those words.
        resp = (_table_freshness(ctx, p, role) if p.tables else None) or _table_freshness(ctx, p, role, by_words=True)
        if resp is None:
            # Or the snapshot it names ("are the logistics raw loads fresh?"): observed text is the
            # authority on freshness, not a document to refuse as not authoritative.
            snapshot, options = _named_snapshot(ctx, p, view)
            if options:
                timings.mark("resolve", t)
                return _which_object(role, options)
            if snapshot is not None:
                resp = _freshness(ctx, p, role, snapshot, view)
            else:
                resp = _table_freshness(ctx, p, role, by_words=True, noun_required=False)
        if resp is not None:
            timings.mark("resolve", t)
            return resp
    if concept is None:
        # A one-word name ("revenue") is too weak to say the question is about that document.
        named = [m for m in p.matches if m.score >= DENY_MIN_SCORE and len(m.name.split()) >= 2
                 and m.object_id in view.shown_objects
                 and (_whole(m, p.text) or _names(ctx, m.object_id, p.text, role))
                 and not _measured_model(p.intent, m.kinds, p.text, _coverage(ctx, m.object_id, p.text, role))
                 and not _goes_on_to_measure(_coverage(ctx, m.object_id, p.text, role))
                 # A snapshot family is the authority on freshness, not a document to refuse: one a
                 # freshness question did not name (`_named_snapshot`) is not its object, and what
                 # its titles say it observes ("revenue sources") is no document another question names.
                 and m.kinds != {"freshness_snapshot"}
                 # A governed object with an approved revision the role sees is no "document that is
                 # not authoritative": `_pick_concept` set it aside (another measure asked beside it).
                 and not _has_approved_concept(ctx, m.object_id, view)
                 # "the <adjusted> net revenue": a modifier the document never states names another thing.
                 and not _unstated_modifiers(ctx, m.object_id, p.text, role, any_kind=True)
                 # "net revenue <per order>": the ratio asked is no document's either
                 and not _unstated_ratio(ctx, m.object_id, p.text, role)]
        if named and all(ns.subject for ns in p.named_sources):
            # The question is about a document that is not a governed concept (a note, a
            # wiki page): it can be shown as evidence of what it says, never as authority.
            docs = [d for d in by_object.get(named[0].object_id, []) if d.doc_id in shown_ids]
            return _not_authoritative(role, _what_they_are(docs))
        # A claim attributed to a revision of a governed object ("the v3 proposal says
        # readmissions use a 90-day window. Is that the rule …?") puts that object in question:
        # its governing revision is the answer, the source its conflict.
        concept = _object_of_claim_source(ctx, p, role, view)
        if concept is None:
            # Discovery proposes the governed object; the same exact path then decides.
            concept, abstention = _discover(ctx, p, role, view, timings, set_aside)
        if concept is None:
            return abstention
        t = time.perf_counter()   # retrieve and constrain are timed by _discover

    # Intent words inside the words that named the object ("late" of "late checkout rooms") ask nothing.
    p = reread_intents(p, ctx.catalog[concept].names)
    ctx.ensure_concept(concept)
    view = ctx.view(role)
    by_object, shown = ctx.by_object, view.shown
    if p.ambiguous_days:
        timings.mark("resolve", t)
        return _ambiguous_date(ctx, p, role, concept)
    asked_back = _fiscal_unknown(ctx, p, role, concept) if p.fiscal_unknown else None
    if asked_back is not None:
        timings.mark("resolve", t)
        return asked_back
    if p.intent == "freshness":
        resp = _freshness(ctx, p, role, concept, view)
        if resp.reason == "no_observation":
            # Nothing observes the object the words named ("the ward admissions runbook"): the
            # same words may name an observed table ("is the ward admissions table fresh?").
            resp = (_table_freshness(ctx, p, role, by_words=True)
                    or _table_freshness(ctx, p, role, by_words=True, noun_required=False) or resp)
        timings.mark("resolve", t)
        return resp
    day = p.as_of
    revs = by_object.get(concept, [])
    if p.compare:
        timings.mark("resolve", t)
        return revisions.compare(revs, concept, p.versions, p.clock, role, ctx.policy)
    if p.intent == "value" and not p.versions and (
            p.period is not None or (day is not None and "metric_definition" in ctx.catalog[concept].kinds)):
        # A value on one day ("how many daily active users on 2026-10-31") is the value over
        # that day: the semantic layer's period [day, day + 1).
        if p.period is None:
            p = replace(p, period=(day, day + dt.timedelta(days=1)), period_label=p.period_label or day.isoformat())
        names = set(ctx.catalog[concept].names) | set(ctx.catalog[concept].initials)
        dimension = breakdown(p.text, names | _name_tails(ctx.catalog[concept].names))
        if dimension:
            timings.mark("resolve", t)
            return _not_broken_down(ctx, p, role, concept, " ".join(dimension))
        left_out = left_out_after(p.text, names)
        if left_out and not left_out_stated(left_out, " ".join(_definitions(ctx, concept, role))):
            # "net revenue excluding credit notes": the definition deducts or counts them, or never
            # says; the value without them is another figure than the governed one.
            timings.mark("resolve", t)
            return _not_computed(p, role, f"the governed definition of {concept} does not leave out "
                                          f"{' '.join(left_out)}, so its value without them is another figure, "
                                          "which Canon does not calculate. Ask for the governed value, or read the "
                                          "definition for what it counts")
        grain = time_grain(p.text)
        if grain is not None and not p.periods:
            parts = split_by_grain(p.period, grain)
            if len(parts) > MAX_PARTS:
                timings.mark("resolve", t)
                return _not_broken_down(ctx, p, role, concept, grain, parts=len(parts))
            if len(parts) > 1:
                p = replace(p, periods=tuple(parts), period_label=f"each {grain} of {p.period_label}")
        return _metric_value(ctx, p, role, concept)
    if p.intent == "value" and not p.versions and p.period is None and day is None and (
            "metric_definition" in ctx.catalog[concept].kinds):
        timings.mark("resolve", t)
        return _value_without_period(ctx, p, role, concept)
    if p.period is not None and not p.versions and not p.intents:
        valued = _value_if_computed(ctx, p, role, concept)
        if valued is not None:
            timings.mark("resolve", t)
            return valued
    if p.versions or p.period is not None:
        # A revision named, or a period rather than a day (canon/ask/revisions.py).
        sel = (revisions.by_version(revs, concept, p.versions, p.clock, role, ctx.policy) if p.versions
               else revisions.over_period(revs, concept, p.period, p.period_label, role, ctx.policy))
        timings.mark("resolve", t)
        if sel.response is not None:
            return sel.response
        primary, day = sel.chosen, sel.day
        note = sel.note + " "
    else:
        note = ""
        if day is None and p.intents & METADATA_INTENTS and p.intent in ("definition", "model"):
            # "Who owns X", "is X deprecated" ask about the present: today's governing revision
            # (the clock's day), said in the answer, rather than a question back for a date.
            day = p.clock
            note = f"No date was given: this is as of today ({day.isoformat()}). "
        res = resolve_object(revs, concept, day, role, ctx.policy)
        timings.mark("resolve", t)
        if res.response is not None:
            return res.response
        primary = res.chosen
    evidence = [Evidence.of(primary, "primary")]
    claims = claims_of(primary, day)
    answer = note + compose.definition_text(primary, None if note else day)

    down = p.intent == "lineage" and "downstream" in p.intents
    if ((p.intent == "lineage" and primary.kind == "model_schema" or down) and primary.metadata.get("dbt_unique_id")
            and ctx.con is not None and has_dbt_tables(ctx.con)):
        # A model's lineage is its dbt graph, as `canon lineage` reports it; what is built from
        # a model or a metric, the same graph walked the other way.
        def supporting(node_ids: list[str], lineage_doc_id: str | None) -> list[Document]:
            ctx.ensure_dbt_nodes(node_ids, lineage_doc_id)
            return ctx.docs
        return lineage_of(ctx.con, primary, ctx.docs, day, role, ctx.policy, supporting=supporting, down=down)
    if down:
        # Without a dbt graph nothing structured says what is built from it (a definition's
        # prose "supports …" is not an edge): never the upstream lineage in its place.
        return Response(action="abstain", role=role, as_of=day, reason="no_lineage", evidence=evidence,
                        answer=f"Canon has no dbt graph for {primary.doc_id}, so it does not say what is built "
                               "from it (what depends on an object is only reported from the dbt graph).")
    if p.intent == "lineage" and primary.kind == "model_schema":
        # No dbt graph for this model: its lineage is what governed documents declare, or nothing.
        return _declared_model_lineage(ctx, p, primary, view, evidence, claims, day, role, note)
    if p.intent in ("lineage", "model") and primary.kind == "metric_definition":
        # "Which X definition applies …, and which model supports it?": the definition is asked
        # for, the model beside it; "the grain of the model behind X" asks for the model itself.
        intent = "definition" if p.intent == "model" and asks_definition(p.text) and not asks_model_detail(
            p.text) else p.intent
        answer, evidence, claims, sources = _with_graph(ctx, p, intent, primary, view, evidence, claims, day)
        if p.intent == "lineage" and not sources and not asks_definition(p.text):
            return _no_metric_lineage(primary, evidence, day, role)
    elif (about := compose.metadata_answer(primary, p.intents, day, claims)) is not None:
        answer, claims = note + about[0], about[1]

    conflicts = _named_conflicts(ctx, p, primary, shown, role)
    if conflicts:
        return compose.conflict_answer(primary, conflicts, answer, evidence, claims, day, role)
    return Response(action="answer", role=role, as_of=day, answer=answer, evidence=evidence, claims=claims)


def _pick_concept(p: ParsedQuestion, ctx: AskContext, view: RoleView,
                  kinds_named: frozenset[str] = frozenset()) -> tuple[str | None, list[dict], list[str]]:
    """The governed object the question is about. Two governed objects with the
    same name in different domains, neither named, need a clarification. `kinds_named`: the
    document kinds the question names by a noun (`_kinds_named`). Also the whole names it set
    aside as another measure's (`_discover` resolves nothing by their words)."""
    shown_objects = view.shown_objects
    candidates: list[ObjectMatch] = [m for m in p.matches if m.object_id in shown_objects
                                     and (m.kinds & set(CONCEPT_PRIORITY))]
    # One coverage per candidate object: the name test and the specificity test below both read it.
    covs = {m.object_id: _coverage(ctx, m.object_id, p.text, view.role) for m in candidates}
    candidates = [m for m in candidates if _named(ctx, m, p.text, view.role, covs[m.object_id])]
    candidates = [m for m in candidates if not _measured_model(p.intent, m.kinds, p.text, covs[m.object_id])]
    # "The <mean> pothole repair time" beside a definition that computes a median names another
    # measure, and so does a modifier the definition never states ("the <wheelchair> … rate").
    texts = {m.object_id: " ".join(_definitions(ctx, m.object_id, view.role)) for m in candidates}
    measured = [m for m in candidates if not _other_aggregate_beside(ctx, m.object_id, p.text, covs[m.object_id],
                                                                     view.role)
                and not _unstated_modifiers(ctx, m.object_id, p.text, view.role)
                # "net revenue <per order>": a ratio of it its names and definitions never state
                and not _unstated_ratio(ctx, m.object_id, p.text, view.role)
                # "the share of <GMV> that the marketplace keeps as fees": a part of the measure asked about
                and not names_a_component(p.text, covs[m.object_id].phrase)
                # "<grid> availability" beside turbine availability: another qualifier, a sibling measure
                and not qualifier_swapped(p.text, m.name, ctx.catalog[m.object_id].names, texts[m.object_id])
                # "the grant win <value>" beside the grant win rate: another head, another measure
                and not head_swapped(p.text, m.name, ctx.catalog[m.object_id].names, texts[m.object_id])
                and not head_swapped(p.text, " ".join(covs[m.object_id].phrase), ctx.catalog[m.object_id].names,
                                     texts[m.object_id])
                # "the <10>-day completion rate" beside the 5-day one: another number, another measure
                and not number_swapped(p.text, covs[m.object_id].phrase, ctx.catalog[m.object_id].names)]
    # A whole name set aside as another measure ("the <3DS> authorization rate") leaves none of
    # its words to a longer name matched in part ("prior authorization rate"): only an object
    # whose own name the question writes out whole still stands.
    # So does a name, whole or one at a time, that divides another measure ("the cost per <volunteer
    # hour>").
    set_aside = [m.name for m in candidates if m not in measured and (
        _whole(m, p.text) or _unstated_ratio(ctx, m.object_id, p.text, view.role))]
    q = f" {normalize(p.text)} "
    candidates = [m for m in measured if not set_aside or any(f" {n} " in q for n in ctx.catalog[m.object_id].names)]
    candidates = _beside_sources(ctx, p, view, candidates)
    if not candidates:
        return None, [], set_aside
    # A whole short name inside the question's longer object phrase ("leakage" in "leakage
    # growth") leaves words of that phrase to another object's names: the object whose names
    # account for all of it is the one asked about (the most complete name span wins).
    # A whole name whose object phrase goes on to a measure noun its names lack ("leakage
    # <growth>") names another measure, not it, whether or not that one is found.
    spans = [len(covs[m.object_id].phrase) for m in candidates if covs[m.object_id].covered]
    candidates = [m for m in candidates if covs[m.object_id].covered or (
        (not spans or len(m.name.split()) >= max(spans)) and not _goes_on_to_measure(covs[m.object_id]))]
    if not candidates:
        return None, [], set_aside
    # "Does circulation include e-book checkouts?": of two measures named whole, the one the other
    # is taken into is asked about, however long the part's name.
    # The name itself is read too: "the v3 proposal adds <e-book checkouts>" runs the verb into
    # the object phrase coverage reads ("proposal adds e book checkouts").
    parts = [m for m in candidates if taken_in_as_part(p.text, covs[m.object_id].phrase or m.name.split())
             or taken_in_as_part(p.text, m.name.split())]
    if parts and len(parts) < len(candidates):
        candidates = [m for m in candidates if m not in parts]
    elif parts:
        # "The circulation v3 proposal adds e-book checkouts. Do we do that …?": the only measure
        # named outside the source is the part its claim adds; the object whose revision the
        # source is takes it in.
        owner = _object_of_claim_source(ctx, p, view.role, view)
        if owner is not None and owner not in {m.object_id for m in parts}:
            return owner, [], set_aside
    if p.intent == "model":
        models = [m for m in candidates if "model_schema" in m.kinds and m.score >= 99]
        if models:
            candidates = models
    best = max(c.score for c in candidates)
    top = [c for c in candidates if c.score >= best - 0.5]
    # The most complete name wins ("saas mrr month end close runbook" over "mrr"), then the kind
    # the question names by a noun ("the energy intensity memo"), then the kind that governs;
    # what still ties is ambiguous.
    longest = max(len(c.name) for c in top)
    top = [c for c in top if len(c.name) == longest]
    rank = min(_kind_order(c, kinds_named) for c in top)
    top = [c for c in top if _kind_order(c, kinds_named) == rank]
    if len(top) > 1:
        settled = _settled_by_other_names(ctx, top, p.text)
        if settled is not None:
            return settled, [], set_aside
        return None, [{"object_id": c.object_id, "domain": c.domain, "title": shown_objects[c.object_id].title}
                      for c in sorted(top, key=lambda c: c.object_id)], set_aside
    others = _others_named_in_part(ctx, top[0], covs[top[0].object_id].phrase, p.text, view)
    if others:
        return None, [{"object_id": oid, "domain": ctx.catalog[oid].domain, "title": shown_objects[oid].title}
                      for oid in sorted({top[0].object_id, *others})], set_aside
    return top[0].object_id, [], set_aside


def _others_named_in_part(ctx, m: ObjectMatch, phrase: list[str], question: str, view: RoleView) -> list[str]:
    """Visible objects of `m`'s kind whose names hold the question's object phrase as `m`'s do,
    when the phrase is part of `m`'s name and no whole name of it ("the delivery rate" of the on
    time and of the first attempt delivery rate): a fuzzy match of one of them is no reason to
    pick it. Empty when the question writes `m`'s name out whole."""
    entry = ctx.catalog[m.object_id]
    words = " ".join(phrase)
    if not phrase or _whole(m, question) or words in entry.names or len(phrase) < 2:
        return []
    kinds = entry.kinds & set(CONCEPT_PRIORITY)
    out = []
    for oid in _objects_with_words(ctx.catalog, tuple(phrase)):
        other = ctx.catalog[oid]
        if oid == m.object_id or not (other.kinds & kinds) or oid not in view.shown_objects:
            continue
        if any(f" {words} " in f" {n} " for n in other.names) and words not in other.names:
            out.append(oid)
    return out


def _objects_with_words(catalog, words: tuple[str, ...]) -> set[str]:
    """The catalog's objects whose names hold every one of `words` (an index built once per catalog)."""
    def build() -> dict[str, set[str]]:
        index: dict[str, set[str]] = {}
        for oid, e in catalog.items():
            for n in e.names:
                for w in n.split():
                    index.setdefault(w, set()).add(oid)
        return index

    index = _catalog_index(catalog, "_by_name_word", build)
    sets = [index.get(w, set()) for w in words]
    return set.intersection(*sets) if sets else set()


# What a dbt model's name starts with to say its layer, not what it holds ("fct_overdraft_fees").
_LAYER_PREFIXES = frozenset({"fct", "fact", "dim", "stg", "int", "mart", "agg", "rpt", "obt", "base"})
# The words a metric's name puts before what its model holds to say how it aggregates it
# ("total overdraft fees", "average loan balance"): canon/ask/understanding/coverage.py AGGREGATES.
_AGGREGATE_WORDS = frozenset(w for words in AGGREGATES.values() for w in words)


def _asks_for_a_metric(p: ParsedQuestion, kinds_named: frozenset[str]) -> bool:
    """The question asks for a definition or a value, not about a model: no model noun ("the
    overdraft fees model", "the table"), no model, lineage or metadata intent, and no
    identifier written ("fct_overdraft_fees" names the model itself)."""
    return (p.intent in ("definition", "value") and "model_schema" not in kinds_named
            and not p.intents & METADATA_INTENTS and not identifiers(p.text))


def _metric_of_model_name(ctx, model_id: str, question: str, view: RoleView) -> str | None:
    """The one visible metric that the model `model_id` implements and whose name is the
    model's name (its layer prefix aside) with aggregate words before it: "overdraft fees"
    names fct_overdraft_fees whole, but a question asking for its definition or its value asks
    for the total overdraft fees, the governed metric the model's rows are summed into. A
    model's rows have no definition or value of their own. None when no metric, or more than
    one, is named so (then the model stays what the question names)."""
    words = model_id.rsplit(".", 1)[-1].lower().split("_")
    while len(words) > 1 and words[0] in _LAYER_PREFIXES:
        words = words[1:]
    held = [w.rstrip("s") for w in words if w]
    found = []
    for oid, entry in ctx.catalog.items():
        if "metric_definition" not in entry.kinds or oid not in view.shown_objects:
            continue
        for name in entry.names:
            nw = name.split()
            if len(nw) > len(held) and [w.rstrip("s") for w in nw[-len(held):]] == held and all(
                    w in _AGGREGATE_WORDS for w in nw[:-len(held)]):
                found.append(oid)
                break
    if len(found) != 1:
        return None
    ctx.ensure_concept(found[0])
    now = ctx.view(view.role)
    # The metric names the model as its implementation: by id in its text, or dbt's link (`links.linked`).
    implements = any(d.status == Status.approved and (
        model_id in d.text or getattr(now.by_id.get(str(d.metadata.get("model_doc_id"))), "object_id", None) == model_id)
        for d in ctx.by_object.get(found[0], []) if d.doc_id in now.shown_ids)
    return found[0] if implements else None


def _unstated_modifiers(ctx, object_id: str, question: str, role: str, *, any_kind: bool = False) -> list[str]:
    """Modifiers before a whole name of a metric that its visible approved definitions never
    state (coverage.unstated_modifiers); only a metric's definition says what it counts. With
    `any_kind`, of any object, against the texts of its revisions the role sees (a wiki page
    named with a modifier it never states is not the page named)."""
    entry = ctx.catalog[object_id]
    names = set(entry.names) | set(entry.initials)   # "the <net> GMV" as "the <net> gross merchandise value"
    if not modifiers_before(question, names):
        return []   # most questions: no definition is read
    if any_kind:
        shown = ctx.view(role).shown_ids
        definitions = [d.text for d in ctx.by_object.get(object_id, []) if d.doc_id in shown]
    elif "metric_definition" not in entry.kinds:
        return []
    else:
        definitions = _definitions(ctx, object_id, role)
    if not definitions:
        return []
    return unstated_modifiers(question, names, " ".join([*entry.names, *definitions]), {entry.domain} - {""})


def _name_tails(names) -> set[str]:
    """The last two or more words of each name ("grant win rate" of "trust and foundation grant
    win rate"): where a question's name ends when it writes a long name in part, so what follows
    it ("… per funder", "… by funder") is read after the name, not after its first words."""
    return {" ".join(nw[i:]) for nw in (n.split() for n in names) for i in range(1, len(nw) - 1)}


def _unstated_ratio(ctx, object_id: str, question: str, role: str) -> bool:
    """The question writes "per <noun>" after a whole name of the object and neither its names
    nor its visible approved definitions measure per that noun (qualifiers.ratio_stated), or "<a
    measure> per" before it that they never write (qualifiers.ratio_before)."""
    entry = ctx.catalog[object_id]
    names = set(entry.names) | set(entry.initials)
    words = ratio_after(question, names | _name_tails(entry.names))
    if words:
        return not ratio_stated(words, names, " ".join(_definitions(ctx, object_id, role)))
    # "<cost> per volunteer hour": the object divides another measure, which its names and
    # definitions never put before "per".
    before = ratio_before(question, names)
    if not before:
        return False
    noun = singular(before[-1])
    text = padded(" ".join(_definitions(ctx, object_id, role)))
    return not any(noun in {singular(w) for w in n.split()} for n in names) and not any(
        f" {w} per " in text for w in (before[-1], noun))


def _other_aggregate_beside(ctx, object_id: str, question: str, cov, role: str) -> bool:
    """An aggregate beside the object's phrase that its definitions do not compute (the
    definitions read only when the question names one)."""
    asked = _aggregates_beside(question, cov)
    return bool(asked) and computes_other(asked, " ".join(_definitions(ctx, object_id, role)))


def _aggregates_beside(question: str, cov) -> set[str]:
    """The aggregates named just before the object phrase or by its words the names do not hold
    ("the <mean> pothole repair time", "the 90th <percentile> pothole repair time")."""
    return aggregate_before(question, cov.phrase) | aggregate_words_of(cov.uncovered)


def _has_approved_concept(ctx, object_id: str, view: RoleView) -> bool:
    """The object is a governed concept (`CONCEPT_PRIORITY`) with an approved revision the role sees."""
    return any(d.doc_id in view.shown_ids and d.status == Status.approved and d.kind in CONCEPT_PRIORITY
               for d in ctx.by_object.get(object_id, []))


def _named_snapshot(ctx, p: ParsedQuestion, view: RoleView) -> tuple[str | None, list[dict]]:
    """The freshness snapshot family the question names (its id's last segment, or what its
    snapshots' titles say they observe: `match.observed_name`), by names that account for the
    question's object phrase, as `_pick_concept` requires of a governed object. The highest
    score, then the most complete name, wins; families that still tie are asked back."""
    found = [m for m in p.matches if m.kinds == {"freshness_snapshot"} and m.object_id in view.shown_objects
             and _names(ctx, m.object_id, p.text, view.role)]
    if not found:
        return _snapshot_of_domain(ctx, p, view), []
    best = max(m.score for m in found)
    top = [m for m in found if m.score >= best - 0.5]
    longest = max(len(m.name) for m in top)
    top = sorted({m.object_id: m for m in top if len(m.name) == longest}.values(), key=lambda m: m.object_id)
    if len(top) == 1:
        return top[0].object_id, []
    return None, [{"object_id": m.object_id, "domain": m.domain, "title": view.shown_objects[m.object_id].title}
                  for m in top]


def _snapshot_of_domain(ctx, p: ParsedQuestion, view: RoleView) -> str | None:
    """The one snapshot family of the domain a freshness question names with nothing else of
    it ("show me the 5am dairy freshness snapshot"): the domain's name, no family's own words."""
    by_domain = _snapshot_families(ctx.catalog)
    families = {oid for w in set(normalize(p.text).split()) for oid in by_domain.get(w, ())
                if oid in view.shown_objects}
    return families.pop() if len(families) == 1 else None


def _snapshot_families(catalog) -> dict[str, set[str]]:
    """The catalog's snapshot families by domain (built once per catalog: a freshness question
    over a large one would otherwise read every object)."""
    def build() -> dict[str, set[str]]:
        index: dict[str, set[str]] = {}
        for oid, e in catalog.items():
            if e.kinds == {"freshness_snapshot"} and e.domain:
                index.setdefault(e.domain, set()).add(oid)
        return index

    return _catalog_index(catalog, "_snapshots_by_domain", build)


def _catalog_index(catalog, attr: str, build: Callable[[], dict]) -> dict:
    """`build()`, kept on the catalog under `attr` until objects are added to it; a plain dict
    (no attributes) is indexed per call."""
    cached = getattr(catalog, attr, None)
    if cached is not None and cached[0] == len(catalog):
        return cached[1]
    index = build()
    try:
        setattr(catalog, attr, (len(catalog), index))
    except AttributeError:
        pass
    return index


def _goes_on_to_measure(cov) -> bool:
    """The object phrase goes on past the object's names to a measure noun they lack ("leakage
    <growth>", "the handle time <target>"): it names another measure, however whole the name
    inside it."""
    return any(w in MEASURE_NOUNS for w in cov.uncovered)


def _settled_by_other_names(ctx, tied: list[ObjectMatch], question: str) -> str | None:
    """Of objects tied on one name in different domains, the one whose other names or domain
    hold a word of the question beyond that name, when only one does ("the retention rate for
    employees": the people metric is also the "employee retention rate")."""
    # Content words only: a date's "30" is no word of "day 30 retention rate".
    words = [w for w in normalize(question).split() if w.isalpha() and w not in BOUNDARY]
    hits = {}
    for c in tied:
        entry = ctx.catalog[c.object_id]
        own = set(c.name.split())
        other = {w for n in entry.names if n != c.name for w in n.split()} | set(normalize(_humanize(entry.domain)).split())
        other -= own
        hits[c.object_id] = sum(any(_same_word(w, o) for o in other) for w in words if w not in own)
    best = max(hits.values())
    winners = [o for o, n in hits.items() if n == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def _measured_model(intent: str, kinds: set[str], question: str, cov) -> bool:
    """"The share of playback sessions that …" asks for a measure of a model's rows, a metric,
    not the model its words name (its grain, columns or lineage would be asked for by those
    words), nor does "the share of accounts created in a signup cohort week that …" (the words
    inside what a share takes, `counts_within`), nor a ratio ("how do we measure carrier charges
    <per parcel> delivered?", `divides_per`). `kinds` are the object's, `cov` its coverage of
    the question."""
    return intent == "definition" and kinds == {"model_schema"} and (
        bool(measure_of(question, cov.phrase)) or counts_within(question, cov.phrase) or divides_per(question))


def _whole(m: ObjectMatch, question: str) -> bool:
    """The question writes one of the object's names (or its id) out whole. Any weaker match (a
    fuzzy name, scattered or distinctive words) must cover the question's object phrase
    (canon/ask/understanding/coverage.py), as must retrieval's proposal in `_discover`."""
    return f" {m.name} " in f" {normalize(question)} "


def _named(ctx, m: ObjectMatch, question: str, role: str, cov) -> bool:
    """The question names the matched object: it writes one of its names out whole, or the
    object's names cover its object phrase (`cov`, its `_coverage`). A name its text states
    (`ObjectEntry.stated`) counts only through `_coverage`, which reads the names the revisions
    the role may see state."""
    if identifier_unnamed(question, cov.phrase, ctx.catalog[m.object_id].names):
        return False   # "fct_credits" is no name of fct_goodwill_credits (canon/ask/understanding/identifiers.py)
    # The initials of a name's first words only ("SIU" of "special investigations unit referral
    # rate") are no whole name: "the SIU closure rate" must be covered by the names as any phrase.
    # Those of a name less its measure head ("OTD" of "on time delivery rate") are.
    entry = ctx.catalog[m.object_id]
    prefix_only = entry.initials.get(m.name) == PREFIX_INITIALISM_SCORE and m.name not in {
        "".join(w[0] for w in n.split()) for n in without_measure_head(entry.names)}
    if _whole(m, question) and not prefix_only:
        return m.name not in ctx.catalog[m.object_id].stated or _names_or_describes(
            ctx, m.object_id, question, role, cov)
    if continues_otherwise(question, cov.phrase, _visible_names(ctx, m.object_id, role)):
        return False   # "mean time <between repairs>" beside "mean time to repair"
    return _names_or_describes(ctx, m.object_id, question, role, cov)


def _coverage(ctx, object_id: str, question: str, role: str):
    """How the object's names (its catalog names, and the names its visible approved
    revisions state for it) cover the question's object phrase."""
    entry = ctx.catalog[object_id]
    extra = {entry.domain} - {""}
    cov = coverage(question, entry.names, extra)
    # A name its text states may be the only one the question uses ("how are viewing hours
    # calculated and where does that data come from?"): read them when the catalog's names
    # leave words uncovered or name nothing.
    # So are they when the question writes one out whole ("how is <average donation> defined?",
    # where the catalog's "average gift size" covers only "average").
    if not cov.covered or (not cov.phrase and entry.stated) or (
            entry.stated and any(f" {n} " in padded(question) for n in entry.stated)):
        stated = _stated_names(ctx, object_id, role)
        if stated:
            cov = coverage(question, entry.names | stated, extra)
    if not cov.covered and cov.phrase and only_computed_aggregates(
            cov.uncovered, " ".join(_definitions(ctx, object_id, role))):
        # "The <median> pothole repair time" beside a definition that computes a median: the
        # aggregate word restates the definition, it names no other measure.
        cov = replace(cov, covered=True, uncovered=[])
    return cov


def _names_hidden(ctx, m: ObjectMatch, question: str, visible: list[ObjectMatch] = (),
                  kinds_named: frozenset[str] = frozenset()) -> bool:
    """The question names this object the role cannot see, judged by its catalog names alone
    (what the deny check may read of it): they cover the question's object phrase, or the
    question writes one out whole and the phrase ends in it, a modifier before it at most ("the
    full <name> memo"). A phrase that goes on to a head noun of its own ("<name> savings rate")
    names something else, and so does a modifier that is the domain of a visible object of the
    same name (`_names_other_domain`). `visible`: the matches of objects the role may see; one
    whose name the question writes out whole, scoring above `m`, is what a near-name of `m`
    ("punctuality share" for "punctuality share 2") asks about."""
    entry = ctx.catalog[m.object_id]
    if m.name in entry.stated:
        return False   # read from a text the role may not see: never grounds for a denial
    whole = _whole(m, question)
    if not whole and any(o.score > m.score and _whole(o, question) and not _goes_on_to_measure(
            coverage(question, ctx.catalog[o.object_id].names, {o.domain} - {""})) for o in visible):
        return False
    if whole and any(_outranks(o, m, question, kinds_named) for o in visible):
        return False
    if not whole and any(_outranks_as_misspelt(ctx, o, m, question, kinds_named) for o in visible):
        return False
    cov = coverage(question, entry.names, {entry.domain} - {""})
    if identifier_unnamed(question, cov.phrase, entry.names):
        return False
    if cov.covered:
        return True
    return (whole and bool(cov.phrase) and cov.phrase[-1] not in cov.uncovered
            and not _names_other_domain(m, cov.uncovered, visible))


def _kinds_named(p: ParsedQuestion) -> frozenset[str]:
    """The document kinds the question names by a document noun ("the energy intensity memo",
    "what does the cutoff runbook say"), outside the sources it attributes claims to ("the old
    runbook tells me …" names a source beside the object, canon/ask/understanding/named_sources.py)."""
    text = without_sources(p.text, [ns for ns in p.named_sources if not ns.subject])
    words = set(normalize(text).split())
    return frozenset(k for noun, kinds in DOC_NOUNS.items() if noun in words for k in kinds)


def _kind_order(m: ObjectMatch, kinds_named: frozenset[str]) -> tuple[int, int]:
    """How `_pick_concept` ranks a match's kind: one the question names by a noun first, then
    the kind that governs (`CONCEPT_PRIORITY`: a metric before a model, a memo, a runbook)."""
    return (0 if m.kinds & kinds_named else 1, min((CONCEPT_PRIORITY.get(k, 9) for k in m.kinds), default=9))


def _outranks(o: ObjectMatch, m: ObjectMatch, question: str, kinds_named: frozenset[str]) -> bool:
    """Visible `o` is what the question asks about whoever asks, hidden `m` aside: the question
    writes out `o`'s name, as long as `m`'s, as well matched, and `o`'s kind comes first in
    `_kind_order` (a metric before a memo unless the question names a memo), as `_pick_concept`
    decides for a role that sees both."""
    return (_whole(o, question) and len(o.name) >= len(m.name) and o.score >= m.score
            and _kind_order(o, kinds_named) < _kind_order(m, kinds_named))


def _outranks_as_misspelt(ctx, o: ObjectMatch, m: ObjectMatch, question: str, kinds_named: frozenset[str]) -> bool:
    """Neither name written out whole ("energy intensty"): visible `o` matches the question at
    least as well as hidden `m`, by a name as long, its names cover the question's object
    phrase as `m`'s do, and its kind comes first (`_kind_order`). A role that sees both would get
    `o`, so this role gets it too, and the deny that would say a hidden namesake exists is not
    given."""
    return (o.score >= m.score and len(o.name) >= len(m.name)
            and _kind_order(o, kinds_named) < _kind_order(m, kinds_named)
            and coverage(question, ctx.catalog[o.object_id].names, {o.domain} - {""}).covered)


def _names_other_domain(m: ObjectMatch, uncovered: list[str], visible: list[ObjectMatch]) -> bool:
    """The words left over around `m`'s name are the domain of a visible object of the same
    name ("people overtime rate" beside logistics' overtime rate memo): the question picks that
    domain's object, as `_pick_concept` picks between two visible ones."""
    left = set(uncovered)
    return any(o.object_id != m.object_id and o.name == m.name and o.domain and o.domain != m.domain
               and set(normalize(_humanize(o.domain)).split()) <= left for o in visible)


def _asks_another_measure(ctx, object_id: str, question: str) -> bool:
    """The question names a measure (a modifier and a measure noun) the proposal's names do not
    hold: the words it shares with the proposal are not what it asks about."""
    entry = ctx.catalog[object_id]
    return bool(other_measure(question, entry.names, {entry.domain} - {""}))


def _measure_words_only(ctx, object_id: str, phrase: list[str]) -> bool:
    """An object phrase of measure words alone ("the average of survey scores": "average") does
    not name an object by itself unless it is one of its whole names ("churn"): "average handle
    time" is not named by its first word, only described by its definition's words."""
    return all(w in MEASURE_NOUNS for w in phrase) and " ".join(phrase) not in ctx.catalog[object_id].names


def _definitions(ctx, object_id: str, role: str) -> list[str]:
    """The texts of the object's approved revisions the role may see."""
    shown = ctx.view(role).shown_ids
    return [d.text for d in ctx.by_object.get(object_id, []) if d.doc_id in shown and d.status == Status.approved]


def _description_text(ctx, object_id: str, role: str, question: str, definitions: list[str] | None = None) -> str:
    """The object's names and its visible approved definitions (`definitions`, when the caller
    has them); when the question names an aggregate, also the words of the aggregates they
    compute (a ratio is described as a share or a mean, `measure_shape.aggregate_words`: read
    only then, definitions run long)."""
    definitions = _definitions(ctx, object_id, role) if definitions is None else definitions
    computed = aggregate_words(" ".join(definitions)) if aggregates(question) else []
    return " ".join([*ctx.catalog[object_id].names, *definitions, *computed])


def _described_by(ctx, object_id: str, question: str, role: str) -> str | None:
    """The object's description text (`_description_text`) when the question describes it: an
    object whose names do not name the question's object phrase (retrieval's top governed hit,
    or a weak name match) is what the question describes only when its names and visible
    approved definitions use the question's words, it does not name another object in the
    place of the name's head (`renames`), and no measure phrase of the question goes through
    modifiers the definition never states (`unstated_measure`). None otherwise."""
    if renames(question, ctx.catalog[object_id].names):
        return None
    if ctx.catalog[object_id].kinds == {"model_schema"} and (aggregates(question) or divides_per(question)):
        # "the delivery attempt count per parcel", "block hours flown per aircraft day": a measure,
        # which no model's rows are
        return None
    definitions = _definitions(ctx, object_id, role)
    text = _description_text(ctx, object_id, role, question, definitions)
    if not describes(question, text) or unstated_measure(question, text) or other_aggregate(question, text):
        return None
    if denominator_words_asked(question, definitions) or counts_what_is_negated(question, definitions):
        return None
    if unstated_condition(question, text):
        return None
    return text


def _described(ctx, object_id: str, question: str, role: str) -> bool:
    return _described_by(ctx, object_id, question, role) is not None


def _unnamed(ctx, object_id: str, cov, role: str) -> bool:
    """The question names no object phrase the object's names cover by more than one word: none
    at all, one word of a longer name ("… credit grants in USD …" beside total goodwill
    credits), which names nothing by itself (`_names_in_discovery`) and may be a description's,
    or part of a name beside an aggregate no name holds ("the <average block hours> flown per
    aircraft per day" of block hour utilization, whose definition is that average). Words of two
    names ("stock cycle time" of "dock to stock time" and "receiving cycle time") or a domain
    word beside a name's ("claim rate") are not a description: they make up a name."""
    if not cov.covered:
        return False
    names = _visible_names(ctx, object_id, role)
    return len(cov.phrase) <= 1 or (not words_in_one_name(cov.phrase, names)
                                    and aggregate_beside_name_words(cov.phrase, names))


def _description_fit(ctx, d: Document, question: str, role: str) -> int | None:
    """How many of the question's content words `d`'s object uses, when the question describes
    it without naming it (its names cover no object phrase of the question); else None."""
    cov = _coverage(ctx, d.object_id, question, role)
    text = _described_by(ctx, d.object_id, question, role) if _unnamed(ctx, d.object_id, cov, role) else None
    return None if text is None else description_support(question, text)[0]


def _best_described(ctx, top: Document, others: list[Document], question: str, role: str,
                    intent: str = "definition", sources: list[NamedSource] = ()) -> str:
    """Of retrieval's governed candidates that the question describes (none of them named), the
    one whose names and definitions use most of the question's words: a neighbour sharing some
    of them ("signup cohort" in a model's schema, "parcels" in another rate) ranked first by
    similarity is not what a fuller paraphrase of another definition describes. Only a document
    of the top hit's kind displaces it: a metric's model restates the metric's words and more
    columns, and is not what a description of the metric asks for. Ties keep retrieval's order.
    For the same reason a model ranked first yields to a described metric below it unless the
    question asks about a model (its grain, columns, table). `top` is described already."""
    fits = {d.object_id: _description_fit(ctx, d, question, role) for d in others if d.object_id != top.object_id}
    if top.kind == "model_schema" and intent != "model":
        top = next((d for d in others if d.kind == "metric_definition" and fits.get(d.object_id) is not None), top)
    best = top.object_id
    best_used = fits.get(best)
    if best_used is None:
        best_used = description_support(question, _description_text(ctx, best, role, question))[0]
    for d in others:
        used = fits.get(d.object_id)
        if d.object_id != best and d.kind == top.kind and used is not None and used > best_used:
            best, best_used = d.object_id, used
    if sources:
        # A tie that a named source settles: "is the old HR wiki right that interns count among
        # the employees on payroll" describes two people metrics alike; the wiki it names is
        # about one of them.
        tied = [best] + [d.object_id for d in others if d.object_id != best and d.kind == top.kind
                         and fits.get(d.object_id) == best_used]
        if len(tied) > 1:
            named = _source_documents(ctx, sources, role)
            about = [c for c in dict.fromkeys(tied) if any(_related(ctx, d, c) for d in named)]
            if len(about) == 1:
                return about[0]
    return best


# How much better a candidate below the top hit must be described to stand in for it: at least
# `CLEARER_BY` more of the question's content words used, and `CLEARER_SHARE` of them at least.
CLEARER_BY = 2
CLEARER_SHARE = 0.75


def _clearly_described(ctx, top: Document, governed: list[Document], covs: dict, question: str,
                       role: str) -> str | None:
    """The one candidate of `top`'s kind, below it, that the question describes and whose words
    it uses clearly more of than `top`'s (`top` is not described)."""
    top_used, n = description_support(question, _description_text(ctx, top.object_id, role, question))
    found = []
    for d in governed:
        if d is top or d.kind != top.kind or not _unnamed(ctx, d.object_id, covs[d.object_id], role):
            continue
        text = _described_by(ctx, d.object_id, question, role)
        used = None if text is None else description_support(question, text)[0]
        if used is not None and used >= top_used + CLEARER_BY and used >= CLEARER_SHARE * n:
            found.append(d.object_id)
    found = list(dict.fromkeys(found))
    return found[0] if len(found) == 1 else None


def _source_documents(ctx, sources: list[NamedSource], role: str) -> list[Document]:
    """The visible non-governing documents whose titles carry a named source's words and whose
    kind (and status, when the phrase says one) it names."""
    view = ctx.view(role)
    out: list[Document] = []
    for ns in sources:
        pool = [d for k in ns.kinds for d in view.by_kind.get(k, [])] if ns.kinds else view.shown
        out += [d for d in pool if not (d.status == Status.approved and d.kind in CONCEPT_PRIORITY)
                and (not ns.statuses or d.status.value in ns.statuses) and _title_hits(ns, d)]
    return out


def _not_authoritative(role: str, statuses: list[str]) -> Response:
    """`statuses`: of the documents named ("draft", "superseded"), or what they are ("approved
    lineage": an approved document of a kind that governs nothing)."""
    return Response(action="abstain", role=role, reason="not_authoritative",
                    answer=f"The document you name is {', '.join(statuses)} text, not an authoritative "
                           "source; Canon does not answer from it.")


def _what_they_are(docs: list[Document]) -> list[str]:
    """Each document's status, with its kind where the status alone would read as authority
    ("approved lineage"; "superseded", "untrusted")."""
    return sorted({f"{d.status.value} {d.kind.replace('_', ' ')}" if d.status == Status.approved else d.status.value
                   for d in docs})


def _subject_revision_statuses(ctx, p: ParsedQuestion, role: str, concept: str) -> list[str]:
    """The statuses of the revisions of `concept` that do not govern (a draft, a proposal) which
    the question names as what it asks about ("what does the … v3 proposal say?"); empty when
    it names none, or names something else too."""
    subject = [ns for ns in p.named_sources if ns.subject]
    if not subject:
        return []
    docs = _source_documents(ctx, subject, role)
    if not docs:
        return []
    # The documents whose titles carry most of the phrase's words ("readmission rate v3
    # proposal"), not every one sharing a word with it ("Readmissions FAQ").
    hits = {d.doc_id: max(_title_hits(ns, d) for ns in subject) for d in docs}
    best = max(hits.values())
    top = [d for d in docs if hits[d.doc_id] == best]
    # "the v3 draft … in net revenue" beside a v3 draft of another object (its model): the
    # question's object settles which one it names.
    top = [d for d in top if d.object_id == concept] or top
    if any(d.status == Status.approved for d in top):
        return []
    if any(d.object_id != concept for d in top):
        # A page that is no revision of the object is asked about as a revision that does not
        # govern is when the object is named only inside the page's phrase ("what does the net
        # revenue legacy wiki say?"); asked about outside it ("what does the old wiki say about
        # <net revenue>?"), the object is the question's and the page its conflict evidence.
        outside = {w for w in normalize(p.text).split()} - {w for ns in subject for w in ns.words}
        if any(d.kind in CONCEPT_PRIORITY for d in top) or any(
                set(n.split()) & outside for n in ctx.catalog[concept].names):
            return []
    return sorted({d.status.value for d in top})


def _object_of_claim_source(ctx, p: ParsedQuestion, role: str, view: RoleView) -> str | None:
    """The governed object whose draft or superseded revision the question attributes a claim to,
    when the claim sources name exactly one such object (none is the question's subject)."""
    claims = [ns for ns in p.named_sources if not ns.subject]
    if not claims or len(claims) != len(p.named_sources):
        return None
    sources = _source_documents(ctx, claims, role)
    revisions = [d for d in sources if d.kind in CONCEPT_PRIORITY and _has_approved_concept(ctx, d.object_id, view)]
    objects = {d.object_id for d in revisions}
    if len(objects) > 1:
        # "the v3 proposal" of two objects: the one the question's words name, in part ("duty
        # time" of "crew duty time") or less its measure head ("readmissions use …")
        q = f" {' '.join(singular(w) for w in normalize(p.text).split())} "
        named = {o for o in objects if name_runs(p.text, ctx.catalog[o].names) or any(
            f" {' '.join(singular(w) for w in n.split())} " in q
            for n in ctx.catalog[o].names | without_measure_head(ctx.catalog[o].names))}
        # else the one whose revision says the claim's words ("the v3 proposal says gate delays
        # under 5 minutes are not counted"): the source the user names is the one that says it.
        objects = named or _saying_most(ctx, p.text, claims, revisions)
    if not objects and sources:
        # A source that is no revision (an old wiki page, a runbook) about one governed object
        # of its domain (`_related`) whose definitions say the claim's words.
        domains = {ctx.catalog[d.object_id].domain for d in sources} - {""}
        about = {oid for d in sources for oid, entry in ctx.catalog.items() if entry.domain in domains
                 and "metric_definition" in entry.kinds and oid in view.shown_objects
                 and entry.domain == ctx.catalog[d.object_id].domain and _related(ctx, d, oid)
                 and _has_approved_concept(ctx, oid, view)}
        governing = [d for oid in about for d in ctx.by_object.get(oid, [])
                     if d.doc_id in view.shown_ids and d.status == Status.approved]
        # A source about one governed object only needs one of the claim's words said by it
        # ("is the old HR wiki right that <interns> are counted?").
        objects = _saying_most(ctx, p.text, claims, governing, at_least=1 if len(about) == 1 else _CLAIM_WORDS_SAID)
    return objects.pop() if len(objects) == 1 else None


# Words any claim about a measure may use ("… time counts", "… are included"): they say nothing
# of which measure it is about.
_CLAIM_GENERIC = MEASURE_NOUNS | {"counts", "counting", "included", "excluded", "excluding", "counted", "rule",
                                  "rules", "minutes", "hours", "days"}


def _saying_most(ctx, question: str, claims: list[NamedSource], docs: list[Document],
                 at_least: int | None = None) -> set[str]:
    """The object of the one document of `docs` whose text says the most of the claims' content
    words (`at_least` of them, `_CLAIM_WORDS_SAID` by default); empty when none does or two
    objects tie."""
    at_least = at_least or _CLAIM_WORDS_SAID
    best: dict[str, int] = {}
    for ns in claims:
        a, b = ns.span
        claim = _claim_words(question[a:b], ns, _CLAIM_GENERIC)
        if len(claim) < at_least:
            # "Should audit students count as completers, like the v3 proposal does?": the claim
            # is the question's own words, the source only compared with them.
            claim = _claim_words(question, ns, _CLAIM_GENERIC)
        for d in docs:
            words = text_words(d.text)
            said = sum(1 for w in claim if words.uses(w))
            best[d.object_id] = max(best.get(d.object_id, 0), said)
    top = max(best.values(), default=0)
    if top < at_least:
        return set()
    winners = {o for o, n in best.items() if n == top}
    return winners if len(winners) == 1 else set()


def _names_or_describes(ctx, object_id: str, question: str, role: str, cov) -> bool:
    """A weak name match counts when the object's names cover the question's object phrase
    (`cov`, its `_coverage`), or, with no object phrase its names account for, when the
    question describes the object. A grammar word written in the place of a name's word
    (`grammar_word_in_name_place`) leaves the phrase named by nothing but a description."""
    if cov.covered and grammar_word_in_name_place(question, cov.phrase, ctx.catalog[object_id].names):
        return _described(ctx, object_id, question, role)
    if cov.covered and len(cov.phrase) == 1 and cov.phrase[0] in MEASURE_NOUNS and (
            cov.phrase[0] not in ctx.catalog[object_id].names):
        # A measure noun alone ("… - what's that <rate>'s definition?") names no object: the
        # question names it only by describing it.
        return _described(ctx, object_id, question, role)
    if cov.covered and cov.phrase and not _phrase_in_one_name(ctx, object_id, cov, role, question):
        return False   # "first yield" of "first pass yield": its words, another measure
    return cov.covered and (bool(cov.phrase) or _described(ctx, object_id, question, role))


def _phrase_in_one_name(ctx, object_id: str, cov, role: str, question: str) -> bool:
    """`coverage.phrase_in_one_name` over the names `_coverage` read (the catalog's, and those
    the visible approved revisions state), when the phrase is all the question asks about ("how
    is the rework rate defined?"). In a question that says more ("the average time an agent
    spends actively working one ticket") the phrase is a description's words, judged as before."""
    entry = ctx.catalog[object_id]
    if len(cov.phrase) < 2 or " ".join(cov.phrase) in entry.names:
        return True
    if not entry.kinds & _MEASURE_KINDS:
        # A document's title is named with words left out ("the fraud ring runbook" of "Fraud ring
        # takedown runbook"); only a measure's name less a word is another measure.
        return True
    if description_support(asking_part(question), "")[1] > len(cov.phrase):
        return True
    names = entry.names | _stated_names(ctx, object_id, role) if entry.stated else entry.names
    return phrase_in_one_name(cov.phrase, names, {entry.domain} - {""})


def _visible_names(ctx, object_id: str, role: str) -> set[str]:
    """The object's catalog names and the names its visible approved revisions state."""
    return set(ctx.catalog[object_id].names) | _stated_names(ctx, object_id, role)


def _stated_names(ctx, object_id: str, role: str) -> set[str]:
    """The names the object's visible approved revisions state for it ("also called …")."""
    shown = ctx.view(role).shown_ids
    return {n for d in ctx.by_object.get(object_id, []) if d.doc_id in shown and d.status == Status.approved
            for n in stated_synonyms(d.text)}


def _names(ctx, object_id: str, question: str, role: str) -> bool:
    """The question names the object: there is an object phrase, and the object's names account
    for every word of it (no phrase at all names nothing)."""
    cov = _coverage(ctx, object_id, question, role)
    return cov.covered and bool(cov.phrase)


def _source_words(ns: NamedSource) -> list[str]:
    return [w for word in ns.words for w in normalize(word).split() if len(w) >= 2]


def _beside_sources(ctx, p: ParsedQuestion, view: RoleView, candidates: list[ObjectMatch]) -> list[ObjectMatch]:
    """A name matched inside a named source's own phrase ("the old carrier cutoff runbook says…")
    names that source, not the question's object: it is dropped while another governed object is
    asked about, and kept only when it is approved itself (then the source is what is asked about)."""
    sources = [ns for ns in p.named_sources if not ns.subject]
    if not sources:
        return candidates

    def in_source(m: ObjectMatch) -> bool:
        # A model's title is its name with grammar of its own ("dbt model schema <fct> screen
        # occupancy v2"): the words that name what it holds are the ones to find in the source.
        words = [w for w in m.name.split() if w not in ("the", "a", "an", "of")]
        if "model_schema" in m.kinds:
            words = [w for w in words if w not in _STOP and w not in _LAYER_PREFIXES] or words
        return m.name != "distinctive words" and any(
            words and all(any(_same_word(w, s) for s in _source_words(ns)) for w in words) for ns in sources)

    sourced = [m for m in candidates if in_source(m)]
    if not sourced:
        return candidates
    rest = [m for m in candidates if m not in sourced]
    if rest:
        return rest
    return [m for m in sourced if any(d.status == Status.approved and d.doc_id in view.shown_ids
                                      for d in ctx.by_object.get(m.object_id, []))]


def _with_graph(ctx, p, intent: str, primary, view: RoleView, evidence, claims, day):
    """Model and lineage follow the graph: metric revision → model version → lineage. `intent`:
    what is asked first ("model": the model is the primary evidence)."""
    model = links.linked(primary, view.kind_index("model_schema"), day, by_id=view.by_id)
    lineage_doc = links.linked(primary, view.kind_index("lineage"), day, by_id=view.by_id)
    sources: list[str] = []
    if ctx.con is not None and primary.metadata.get("dbt_unique_id"):
        if has_dbt_tables(ctx.con):
            graph_nodes = upstream(ctx.con, primary.metadata["dbt_unique_id"])
            sources = sorted(n["relation_name"] or n["id"] for n in graph_nodes.sources())
    if not sources and lineage_doc is not None:
        sources = links.raw_sources_from_edges(links.lineage_edges_from_text(lineage_doc))
    if not sources and model is not None and intent == "lineage":
        # The metric's model may declare its own upstreams, or a lineage document may name it.
        sources = declared_upstreams(model)
        if not sources:
            ctx.ensure_lineage_naming(f"{model.object_id}.v{model.version}")
            lineage_doc = _lineage_naming(model, ctx.view(view.role), day)
            if lineage_doc is not None:
                sources = links.raw_sources_from_edges(links.lineage_edges_from_text(lineage_doc))
    answer, evidence, claims = compose.graph_answer(intent, primary, model, lineage_doc, sources, view.shown_ids,
                                                    evidence, claims, day)
    return answer, evidence, claims, sources


def _no_metric_lineage(primary: Document, evidence: list[Evidence], day, role: str) -> Response:
    """A lineage question about a metric whose lineage nothing states: an abstention naming the
    model it is built on, if any, never the definition in the lineage's place."""
    model = next((e.doc_id for e in evidence if e.doc_id != primary.doc_id and e.use == "supporting"), None)
    if model:
        why = (f"{primary.doc_id} is built on {model}, but Canon has no dbt graph for either, no governed lineage "
               f"document names either, and {model} declares no upstream tables")
    else:
        why = (f"Canon has no dbt graph for {primary.doc_id}, no governed lineage document for it and no model "
               "of it")
    return Response(action="abstain", role=role, as_of=day, reason="no_lineage", evidence=evidence,
                    answer=f"{why}, so Canon does not say which tables feed it.")


# Front-matter keys a model document declares its upstream tables under (docs/contracts.md,
# "Lineage of a model").
UPSTREAM_KEYS = ("upstream", "upstreams", "depends_on")


def declared_upstreams(doc: Document) -> list[str]:
    """The upstream tables a model document declares for itself: a front-matter list under one
    of `UPSTREAM_KEYS`, else the sources of the `a -> b` edges its own text states."""
    for key in UPSTREAM_KEYS:
        value = doc.metadata.get(key)
        if isinstance(value, str) and value.strip():
            return [value.strip()]
        if isinstance(value, list):
            got = [str(v).strip() for v in value if str(v).strip()]
            if got:
                return got
    return links.raw_sources_from_edges(links.lineage_edges_from_text(doc))


def _lineage_naming(model: Document, view: RoleView, day) -> Document | None:
    """The approved lineage document linked to this model revision, or one whose edges name it
    ("… feed model.x.fct_y.v2"): in effect on `day` first, then by doc_id."""
    linked = links.linked(model, view.kind_index("lineage"), day, by_id=view.by_id)
    if linked is not None and linked.status == Status.approved:
        return linked
    ref = f"{model.object_id}.v{model.version}"
    naming = [d for d in view.by_kind.get("lineage", []) if d.status == Status.approved
              and ref in d.text and links.lineage_edges_from_text(d)]
    naming.sort(key=lambda d: (not (day is None or d.in_effect(day)), d.doc_id))
    return naming[0] if naming else None


def _declared_model_lineage(ctx, p: ParsedQuestion, primary: Document, view: RoleView, evidence, claims, day,
                            role: str, note: str) -> Response:
    """Lineage of a model Canon has no dbt graph for: the upstreams its own governed document
    declares, else a governed lineage document that names this revision of it (or is linked to
    it); with neither, an abstention that says so, never the model's definition in its place."""
    declared = declared_upstreams(primary)
    lineage_doc = None
    if not declared:
        ctx.ensure_lineage_naming(f"{primary.object_id}.v{primary.version}")
        view = ctx.view(role)
        lineage_doc = _lineage_naming(primary, view, day)
    sources = declared or (links.raw_sources_from_edges(links.lineage_edges_from_text(lineage_doc))
                           if lineage_doc is not None else [])
    if not sources:
        return Response(action="abstain", role=role, as_of=day, reason="no_lineage",
                        answer=f"Canon has no dbt graph for {primary.doc_id}, its governed document declares no "
                               "upstream tables and no governed lineage document names it, so Canon does not "
                               "say which tables feed it.")
    answer, evidence, claims = compose.graph_answer("lineage", primary, None, lineage_doc, sources, view.shown_ids,
                                                    evidence, claims, day)
    conflicts = _named_conflicts(ctx, p, primary, view.shown, role)
    if conflicts:
        return compose.conflict_answer(primary, conflicts, note + answer, evidence, claims, day, role)
    return Response(action="answer", role=role, as_of=day, answer=note + answer, evidence=evidence, claims=claims)


def _related(ctx, doc: Document, concept_id: str) -> bool:
    """A named source is about the concept when it shares the concept's domain and
    a name word, or one of its names matches one of the concept's names."""
    concept = ctx.catalog[concept_id]
    entry = ctx.catalog[doc.object_id]
    if entry.names & concept.names:
        return True
    # A measure's head noun ("rate") is no topic: the attach rate is not about the dropped call rate.
    concept_words = {w for n in concept.names for w in n.split() if len(w) >= 3} - {"metric", "model"} - MEASURE_HEADS
    doc_words = {w for n in entry.names for w in n.split()}
    if entry.domain and entry.domain == concept.domain and concept_words & doc_words:
        return True
    return any(fuzz.partial_ratio(c, n) >= 90 for c in concept.names if len(c) >= 5 for n in entry.names)


_ATTRIBUTION_WORDS = frozenset(ATTRIBUTION_VERBS) | frozenset(JUDGEMENTS)
# How many of a claim's own words a document's text must say for the document to be the one
# that says it ("courier returns count as collected" in a pasted chat thread).
_CLAIM_WORDS_SAID = 2


def _claim_support(ctx, question: str, ns: NamedSource, primary: Document, pool: list[Document]) -> dict[str, int]:
    """For each document of `pool`, how many content words of the claim attributed to `ns` its
    text uses, less the words of the primary's names (every document about it uses those):
    the source the user names is the one that says the claim."""
    a, b = ns.span
    if b <= a:
        return {d.doc_id: 0 for d in pool}
    names = {w for n in ctx.catalog[primary.object_id].names for w in n.split()}
    claim = _claim_words(question[a:b], ns, names)
    out = {}
    for d in pool:
        words = text_words(d.text)
        out[d.doc_id] = sum(1 for w in claim if words.uses(w))
    return out


def _claim_words(text: str, ns: NamedSource, leave_out: frozenset[str] | set[str] = frozenset()) -> set[str]:
    """The content words of a claim attributed to `ns`: no grammar word, number, word of the
    source's own phrase, attribution verb or word of `leave_out`."""
    source = set(_source_words(ns))
    return {w for w in normalize(text).split() if len(w) >= 3 and not w.isdigit() and w not in BOUNDARY
            and w not in leave_out and w not in source and w not in _ATTRIBUTION_WORDS}


def _subject_document(ctx, p: ParsedQuestion, view: RoleView) -> str | None:
    """The approved document of a governing kind (a runbook) that the question asks about by its
    kind's noun and words of its title ("what does the vat temperature runbook say
    about …?"): every describing word of the phrase in one object's titles. None when the phrase
    has no describing word, names a status ("the old runbook": not an approved one) or fits
    several objects."""
    subject = [ns for ns in p.named_sources if ns.kinds and not ns.statuses and (ns.subject or ns.asked)]
    if len(subject) != 1:
        return None
    ns = subject[0]
    wanted = len([w for w in _source_words(ns) if w not in DOC_NOUNS and w != (ns.modifier or "")])
    if not wanted:
        return None
    objects = {d.object_id for k in ns.kinds for d in view.by_kind.get(k, [])
               if d.status == Status.approved and d.kind in CONCEPT_PRIORITY and _title_hits(ns, d) == wanted}
    return objects.pop() if len(objects) == 1 else None


def _procedure_runbook(ctx, p: ParsedQuestion, view: RoleView, concept: str) -> str | None:
    """The approved runbook the role may read whose text names `concept` by one of its names
    (its title, an alias, an initialism): the one covering what the question asks to do about
    it. Of several, the one whose text shares most of the question's other content words; None
    when none does or two tie."""
    names = [n for n in ctx.catalog[concept].names if len(n) >= 3]
    found = [d for d in view.by_kind.get("runbook", []) if d.status == Status.approved and _says_a_name(d, names)]
    if len(found) <= 1:
        return found[0].object_id if found else None
    asked = set(content_words(p.text)) - {w for n in names for w in n.split()}
    shared = sorted(((len(asked & set(padded(d.text).split())), d.object_id) for d in found), reverse=True)
    return shared[0][1] if shared[0][0] > shared[1][0] else None


def _runbook_described(ctx, p: ParsedQuestion, role: str, governed: list[Document]) -> str | None:
    """The approved runbook whose text the question's words describe: the first retrieval ranked
    among `governed`, else the one of all the role's runbooks (runbooks are few; retrieval may
    rank a model whose columns share the words above them). None when none, or several, do."""
    described_as = asking_part(without_sources(p.text, p.named_sources))

    def described(d: Document) -> bool:
        return describes(described_as, _description_text(ctx, d.object_id, role, described_as))
    ranked = next((d for d in governed if d.kind == "runbook" and described(d)), None)
    if ranked is not None:
        return ranked.object_id
    found = {d.object_id for d in ctx.view(role).by_kind.get("runbook", [])
             if d.status == Status.approved and described(d)}
    return found.pop() if len(found) == 1 else None


def _says_a_name(doc: Document, names: Iterable[str]) -> bool:
    """`doc`'s text writes one of `names` whole, normalized as names are."""
    text = padded(doc.text)
    return any(f" {n} " in text for n in names)


def _title_hits(ns: NamedSource, doc: Document) -> int:
    """How many of the source phrase's describing words (not its document noun, not its
    status words) the document's title, id or version carries: "the old carrier cutoff
    runbook" → "Carrier cutoff runbook (2025 edition)" carries two."""
    describing = [w for w in _source_words(ns) if w not in DOC_NOUNS and w != (ns.modifier or "")]
    if not describing:
        return 0
    own = _own_words(doc.title, doc.object_id, doc.doc_id, doc.version)
    return sum(w in own or any(_same_word(w, o) for o in own) for w in describing)


@lru_cache(maxsize=1 << 16)
def _own_words(title: str, object_id: str, doc_id: str, version: str) -> frozenset[str]:
    """The words a document is named by: parsed once per revision, not per question (a named
    source is compared with every visible document of its kind)."""
    return frozenset(normalize(f"{title} {object_id} {doc_id}").split()) | {f"v{normalize(version)}"}


def _named_conflicts(ctx, p: ParsedQuestion, primary: Document, shown: list[Document], role: str) -> list[Document]:
    """A source the user names ("the old wiki says…") is kept as conflict evidence
    beside the authoritative one, whatever its similarity score. A noun naming the
    primary's own kind ("what does the memo say") is the subject, not a conflict.
    Among the documents of the named kind and status, the one whose title carries the
    phrase's words wins, then a revision of the primary's own object, then one about its concept,
    then one of its domain."""
    found: list[Document] = []
    domain = ctx.catalog[primary.object_id].domain
    for ns in p.named_sources:
        if primary.kind in ns.kinds:
            continue
        pool = [d for d in shown if d.doc_id != primary.doc_id
                and not (d.status == Status.approved and d.kind == primary.kind)]
        if ns.kinds:
            pool = [d for d in pool if d.kind in ns.kinds]
        if ns.statuses:
            pool = [d for d in pool if d.status.value in ns.statuses] or pool
        hits = {d.doc_id: _title_hits(ns, d) for d in pool}
        about = {d.doc_id for d in pool if _related(ctx, d, primary.object_id)}
        says = _claim_support(ctx, p.text, ns, primary, pool)
        # The document noun itself in a title ("the old <glossary>" of "Visitor metrics glossary"):
        # the phrase names that document as its describing words would.
        titled = {d.doc_id for d in pool if ns.noun in _own_words(d.title, d.object_id, d.doc_id, d.version)}
        if ns.statuses and not ns.kinds:
            # A revision named by its status alone ("like the draft does", "the proposal") is a
            # revision of the object asked about: another metric's "(draft)" title is not it.
            titled &= about
        # A noun of no kind ("the BI tooltip says") names a document only where one bears it out
        # by its title or its text; being about the concept is not enough to stand in for it.
        related = [d for d in pool if hits[d.doc_id] or says[d.doc_id] >= _CLAIM_WORDS_SAID
                   or (d.doc_id in about and (ns.kinds or ns.statuses))
                   or (d.doc_id in titled and ctx.catalog[d.object_id].domain == domain)]
        if not related and ctx.retriever is not None and (ns.kinds or ns.statuses):
            # Second resort: what retrieval finds among the named kind, if its text
            # names the concept at all (read as data, to find it, never to obey it).
            names = ctx.catalog[primary.object_id].names
            ids = {d.doc_id: d for d in pool}
            for h in _retrieve(ctx, p.text, role, k=10):
                d = ids.get(h.doc_id)
                if d is not None and _says_a_name(d, names):
                    related = [d]
                    break
        if len(related) > 1 and ctx.retriever is not None:
            order = {h.doc_id: i for i, h in enumerate(_retrieve(ctx, p.text, role, k=20))}
            related.sort(key=lambda d: order.get(d.doc_id, len(order)))
        else:
            related.sort(key=lambda d: (d.status == Status.approved, -d.authority, d.doc_id))
        # Stable: the order above breaks what the title, the concept, the claim and the domain leave
        # tied. A title word counts twice a claim word; being about the concept, as one.
        related.sort(key=lambda d: (-(2 * hits.get(d.doc_id, 0) + (d.doc_id in about) + says[d.doc_id]
                                      + (d.doc_id in titled) + 2 * (d.object_id == primary.object_id)),
                                    ctx.catalog[d.object_id].domain != domain))
        for d in related[:1]:
            if d not in found:
                found.append(d)
    return found


def _retrieve(ctx: AskContext, text: str, role: str, k: int = 10) -> list:
    r = ctx.retriever
    if r is None:
        return []
    revoked = ctx.view(role).revoked
    vector = r.embed_query(text) if r.embed_query else None
    # Evidence text comes from the registry, never from the index: ids are all ask reads.
    hits = r.search(text, vector, role=role, exclude_doc_ids=revoked, k=k,
                    mode="hybrid" if vector is not None else "fts", columns=RETRIEVE_COLUMNS)
    ctx.ensure_hits([h.doc_id for h in hits])
    return hits


# The kinds of document that hold a measure: what a phrase of measure words alone can name.
_MEASURE_KINDS = frozenset({"metric_definition", "model_schema", "semantic_model"})


def _names_in_discovery(ctx, d: Document, question: str, described_as: str, role: str,
                        intent: str = "definition", cov=None) -> bool:
    """Retrieval's candidate `d` is named by the question: its names cover the question's object
    phrase, which asks for no measure they lack, and a phrase of measure words alone ("the
    average of ...") also describes it. One word is a name only when it is one of the object's
    whole names ("headcount"): "per session" does not name a model of playback sessions, as a
    one-word match does not name an object in `_pick_concept`. `cov` is `d`'s `_coverage` of
    the question when the caller has it."""
    cov = cov or _coverage(ctx, d.object_id, question, role)
    if cov.covered and not cov.phrase and d.kind == "metric_definition" and names_without_head(
            question, ctx.catalog[d.object_id].names) and not _asks_another_measure(ctx, d.object_id, question):
        # "how were <readmissions> counted": the readmission rate named without its head noun; "the
        # owing <value>" puts another measure's head there.
        definitions = " ".join(_definitions(ctx, d.object_id, role))
        return not any(head_swapped(question, bare, ctx.catalog[d.object_id].names, definitions)
                       for bare in without_measure_head(ctx.catalog[d.object_id].names))
    if not (cov.covered and cov.phrase) or _asks_another_measure(ctx, d.object_id, question):
        return False
    names = _visible_names(ctx, d.object_id, role)
    if continues_otherwise(question, cov.phrase, names):
        return False   # "mean time to <failure>": the shared start of two names names neither
    if renames(question, names):
        return False   # "block time <variance>" of block time adherence: another noun in the head's place
    definitions = " ".join(_definitions(ctx, d.object_id, role))
    if head_swapped(question, " ".join(cov.phrase), names, definitions) or head_swapped_in_part(
            question, names | _stated_names(ctx, d.object_id, role), definitions) or number_swapped(
            question, cov.phrase, names):
        return False   # "average seat <count>" of average seat price: another measure's head in its place
    if negation_dropped(names, tuple(normalize(question).split())):
        return False   # "the technical loss rate" of the non technical loss rate: its opposite
    if _other_aggregate_beside(ctx, d.object_id, question, cov, role):
        return False   # "the <mean> pothole repair time" beside a median, as in `_pick_concept`
    if _unstated_modifiers(ctx, d.object_id, question, role):
        return False   # "the <90>-day … rate" beside a definition of 7 days, as in `_pick_concept`
    if _unstated_ratio(ctx, d.object_id, question, role):
        return False   # "… rate <per funder>", "<cost> per volunteer hour", as in `_pick_concept`
    if names_a_component(question, cov.phrase):
        return False   # "fees as a percentage of <GMV>", as in `_pick_concept`
    if identifier_unnamed(question, cov.phrase, ctx.catalog[d.object_id].names):
        return False
    if grammar_word_in_name_place(question, cov.phrase, ctx.catalog[d.object_id].names):
        return False
    if _measure_words_only(ctx, d.object_id, cov.phrase):
        # Measure words alone ("how is uptime defined?") describe a measure: a runbook or a
        # policy whose text repeats them is not what they name. One after a quantifier is an
        # idiom ("<every> time a passenger gets on", "<each> time"), no measure at all.
        if len(cov.phrase) == 1 and _after_quantifier(question, cov.phrase[0]):
            return False
        return d.kind in _MEASURE_KINDS and _described(ctx, d.object_id, described_as, role)
    if _measured_model(intent, {d.kind}, question, cov):
        return False
    if not _phrase_in_one_name(ctx, d.object_id, cov, role, question):
        return False   # "rework rate" of "rework scrap rate": another measure, not a name of it
    entry = ctx.catalog[d.object_id]
    if not words_in_one_name(cov.phrase, names):
        # "claims closed" of "claim cycle time" and its stated "days to close": words of two names
        # name nothing, however long the question; what it describes is judged as a description.
        return False
    # One word beside the domain's ("claims <closed>" of a claims runbook on the month-end close)
    # is one word: a name only when it is a whole one.
    own = [w for w in cov.phrase if singular(w) != singular(entry.domain)]
    return len(own) >= 2 or " ".join(cov.phrase) in entry.names or " ".join(own) in entry.names


_DISTRIBUTIVES = frozenset({"every", "each", "any", "some", "no", "another"})


def _after_quantifier(question: str, word: str) -> bool:
    """`word` stands only after a distributive quantifier in the question ("every time", "each
    time")."""
    toks = normalize(question).split()
    at = [i for i, t in enumerate(toks) if t == word]
    return bool(at) and all(i > 0 and toks[i - 1] in _DISTRIBUTIVES for i in at)


def _same_phrase_elsewhere(ctx, d: Document, candidates: list[Document], covs: dict, p: ParsedQuestion,
                           described_as: str, role: str) -> list[Document]:
    """Other governed candidates of `d`'s kind that the question's object phrase names just as
    `d`'s does: "retention" of the people and of the product retention rate (two domains), "wait
    time" of the surgical and of the outpatient wait time (one domain, the phrase the end of both
    names, whole name of neither). Retrieval's order is no reason to pick one, as two whole names
    are none in `_pick_concept`. Within one domain a phrase that is a whole name of `d` names `d`."""
    phrase = covs[d.object_id].phrase
    if not phrase:
        return []   # named without a phrase of its names (`names_without_head`): no phrase to share
    domain = ctx.catalog[d.object_id].domain
    whole = " ".join(phrase) in ctx.catalog[d.object_id].names
    out = []
    for o in candidates:
        if o.object_id == d.object_id or o.kind != d.kind or (ctx.catalog[o.object_id].domain == domain and whole):
            continue
        cov = covs.get(o.object_id) or _coverage(ctx, o.object_id, p.text, role)
        if cov.phrase == phrase and _names_in_discovery(ctx, o, p.text, described_as, role, p.intent, cov):
            out.append(o)
    return out


def _which_object(role: str, options: list[dict]) -> Response:
    """The clarification for several governed objects one name matches (`options`:
    {object_id, domain, title}), from `_pick_concept` or from discovery (`_discovered_options`)."""
    return Response(action="clarify", role=role, options=options, reason="ambiguous_object",
                    answer="Several governed objects match that name; which one do you mean?")


def _discovered_options(ctx, docs: list[Document]) -> list[dict]:
    """`_which_object`'s options for objects discovery found, each titled by its retrieved
    revision: the same whether the context holds the whole registry or the part the question
    reads (canon/ask/scope.py)."""
    first = {d.object_id: d for d in reversed(docs)}
    return [{"object_id": o, "domain": ctx.catalog[o].domain, "title": first[o].title} for o in sorted(first)]


def _no_matching_object(role: str, p: ParsedQuestion) -> Response:
    return Response(action="abstain", role=role, as_of=p.as_of, reason="no_matching_object",
                    answer="No governed object matches the name in the question; the closest ones are "
                           "named differently, so Canon does not answer from them.")


def _aside(ctx, governed: list[Document], covs: dict, described_as: str, set_aside: list[str],
           role: str) -> set[str]:
    """Retrieval's governed candidates a description may not stand for once `_pick_concept` set
    whole names aside as another measure's part: the objects those names name, and those the
    question's words outside them do not describe."""
    if not set_aside:
        return set()
    rest = f" {normalize(described_as)} "
    for name in sorted(set_aside, key=len, reverse=True):
        rest = rest.replace(f" {name} ", " , ")
    if len(content_words(rest)) < 2:
        # One word beside the names set aside ("network availability per <region>") describes
        # nothing: a text that mentions the measure and the word is no object of the question.
        return {d.object_id for d in governed}
    out = set()
    for d in governed:
        if _within_names(covs[d.object_id].phrase, set_aside) or not describes(
                rest, _description_text(ctx, d.object_id, role, rest)):
            out.add(d.object_id)
    return out


def _described_in_discovery(ctx, p: ParsedQuestion, role: str, governed: list[Document], covs: dict,
                            described_as: str) -> str | None:
    """The object retrieval's governed candidates (none named) hold that the question describes:
    the top one, a clearly better described one of its kind, a described metric below a model
    the question does not describe, or the top one whose definition restates the question around
    the part of its name the question writes. None when none is."""
    if governed[0].kind == "runbook" and not asks_procedure(p.text) and "runbook" not in _kinds_named(p):
        # A runbook ranked first because its steps share the question's setting ("the front desk
        # still uses the old wiki, which counts all cancellations as no-shows"): what is counted is
        # a metric's to say, so a metric the question describes stands before it. A runbook is
        # the object when the question asks what to do or names one.
        claims = [asking_part(without_sources(p.text[a:b], p.named_sources))
                  for a, b in (ns.span for ns in p.named_sources if not ns.subject) if b > a]
        metrics = [d for d in governed if d.kind == "metric_definition"
                   and _unnamed(ctx, d.object_id, covs[d.object_id], role)
                   and any(_described(ctx, d.object_id, text, role) for text in [described_as, *claims])]
        if metrics:
            return _best_described(ctx, metrics[0], metrics[1:], described_as, role, p.intent, p.named_sources)
    # A model whose rows the question measures ("the sum of carrier charges …") is not what
    # it describes: the next governed hit is read as the top one.
    top = next((d for d in governed if not _measured_model(p.intent, {d.kind}, p.text, covs[d.object_id])),
               governed[0])
    cov = covs[top.object_id]
    unnamed = _unnamed(ctx, top.object_id, cov, role)
    if unnamed and _described(ctx, top.object_id, described_as, role):
        others = [d for d in governed if d is not top]
        return _best_described(ctx, top, others, described_as, role, p.intent, p.named_sources)
    if unnamed:
        # Retrieval may rank a neighbour first that the question does not describe, and the
        # described object just below it ("the share of shipments sent back to the merchant
        # because every delivery attempt failed" beside the on-time delivery rate): a candidate
        # of the top hit's kind that the question describes clearly better stands in for it.
        clearer = _clearly_described(ctx, top, governed, covs, described_as, role)
        if clearer is not None:
            return clearer
        # A model ranked first that the question does not describe (a measure is asked for:
        # "the share of employees on payroll …" of its rows) yields to a metric below it that the
        # question does describe, as in `_best_described`, unless it asks about a model.
        if top.kind == "model_schema" and p.intent != "model":
            metrics = [d for d in governed if d.kind == "metric_definition" and _unnamed(ctx, d.object_id, covs[d.object_id], role)
                       and _described(ctx, d.object_id, described_as, role)]
            if metrics:
                return _best_described(ctx, metrics[0], metrics[1:], described_as, role, p.intent, p.named_sources)
    # The top hit's names hold part of the phrase and its definition restates the rest of
    # the question ("the mean survey score on the 1 to 5 scale over survey responses").
    if not cov.covered and restates_definition(described_as, cov, ctx.catalog[top.object_id].names,
                                               _description_text(ctx, top.object_id, role, described_as)):
        return top.object_id
    return None


def _within_names(phrase: list[str], names: list[str]) -> bool:
    """Every word of the object phrase is a word of one of `names` (plurals aside)."""
    return bool(phrase) and any({singular(w) for w in phrase} <= {singular(w) for w in n.split()} for n in names)


def _sharing_its_one_word(ctx, question: str, described_as: str, candidates: list[Document],
                          role: str) -> list[Document]:
    """The candidates, one per object, whose names hold the question's one content word
    (`content_words` of `described_as`), when it has only one and no measure or aggregate word
    stands beside it ("the claim <count>", "<total> goodwill" ask for a measure of their own)."""
    words = content_words(described_as)
    if len(words) != 1:
        return []
    beside = set(normalize(question).split()) - {words[0]}
    if beside & (MEASURE_NOUNS | _AGGREGATE_WORDS):
        return []
    out: dict[str, Document] = {}
    for d in candidates:
        if d.object_id not in out and in_some_name(words[0], _visible_names(ctx, d.object_id, role)):
            out[d.object_id] = d
    return list(out.values())


def _identifier_named_by_none(ctx, question: str, candidates: list[Document]) -> bool:
    """The question writes an identifier ("fct_deliveries") that is none of `candidates`' names
    (canon/ask/understanding/identifiers.py, `names_identifier`)."""
    return any(not any(names_identifier(ident, ctx.catalog[d.object_id].names) for d in candidates)
               for ident in identifiers(question))


def _discover(ctx: AskContext, p: ParsedQuestion, role: str, view: RoleView,
              timings: Timings, set_aside: list[str] = ()) -> tuple[str | None, Response | None]:
    """No governed object named: retrieval proposes candidates, governance decides.
    Approved governed objects beat any similarity; drafts, untrusted and
    superseded text is never primary. `set_aside`: whole names `_pick_concept` read as another
    measure's ("the <3DS> authorization rate"): no candidate is named by their words alone."""
    t = time.perf_counter()
    hits = _retrieve(ctx, p.text, role, k=10)
    t = timings.mark("retrieve", t)
    by_id = ctx.view(role).by_id   # after retrieval: what it reached is in the view
    ordered: list[Document] = []
    for h in hits:
        d = by_id.get(h.doc_id)
        if d is not None and d not in ordered:
            ordered.append(d)
    # Only a governed object near the top counts: far down the list it is off-topic.
    governed = [d for d in ordered[:5] if d.status == Status.approved and d.kind in CONCEPT_PRIORITY]
    timings.mark("constrain", t)
    if asks_procedure(p.text) and not asks_definition(p.text):
        # "What do we do when the counter system is down?": what to do is a runbook's, found by
        # the words its steps use, not by a name (nor judged as a measure's name would be).
        runbook = _runbook_described(ctx, p, role, governed)
        if runbook is not None:
            return runbook, None
    if governed:
        # Retrieval's proposal is a weak match. In order: a governed object near the top whose
        # names cover the question's object phrase; the top one, when the question describes it
        # (names none of it, or part of it with its definition restated); an object further
        # down whose names the question does use; else none. A name beats a description: "on
        # time" names the on-time delivery rate though the top hit's definition shares a few
        # plain words with the question ("one", "counting", "time"); below the top five a name
        # counts only after the top hit's description (one word of a model's name, "a ticket",
        # is not the subject of a question that paraphrases a metric).
        further = [d for d in ordered[5:] if d.status == Status.approved and d.kind in CONCEPT_PRIORITY]
        # A description is read without the words naming the question's sources ("the old
        # escalation runbook tells me to …"): they describe the source, not the object.
        described_as = asking_part(without_sources(p.text, p.named_sources))
        covs = {d.object_id: _coverage(ctx, d.object_id, p.text, role) for d in governed}
        for d in governed:
            if _within_names(covs[d.object_id].phrase, set_aside):
                continue
            if _names_in_discovery(ctx, d, p.text, described_as, role, p.intent, covs[d.object_id]):
                # The tie is in the names, not the ranks: any governed hit of the ten may share it.
                tied = _same_phrase_elsewhere(ctx, d, governed + further, covs, p, described_as, role)
                if tied:
                    return None, _which_object(role, _discovered_options(ctx, [d, *tied]))
                return d.object_id, None
        # A name's start written before another measure's head ("average seat <count>" beside
        # "average seat price", "the owing <value>" beside the owing rate) names that other
        # measure, which no governed text describes in the place of this one.
        if any(head_swapped_in_part(p.text, _visible_names(ctx, d.object_id, role) | _stated_names(
                ctx, d.object_id, role), " ".join(_definitions(ctx, d.object_id, role))) for d in governed):
            return None, _no_matching_object(role, p)
        # An identifier no governed hit names ("what is fct_deliveries") is the name of what the
        # question asks about, which does not exist: its words describe nothing.
        if _identifier_named_by_none(ctx, p.text, governed + further):
            return None, _no_matching_object(role, p)
        # One word that several governed names hold, and nothing else ("How is the booking metric
        # defined?" beside booking window and booking pace), describes none of them: asked back.
        sharing = _sharing_its_one_word(ctx, p.text, described_as, governed + further, role)
        if _asks_for_a_metric(p, _kinds_named(p)):
            sharing = [d for d in sharing if d.kind != "model_schema"]   # "the outage metric": no model
        if len(sharing) >= 2:
            return None, _which_object(role, _discovered_options(ctx, sharing))
        # Not what the question describes: an object whose whole name `_pick_concept` set aside as
        # a part of the measure asked about ("fees as a percentage of <gross merchandise value>"),
        # nor one that only the words of that name describe (its model) (`_aside`).
        aside = _aside(ctx, governed, covs, described_as, set_aside, role)
        open_ = [d for d in governed if d.object_id not in aside]
        resolved = _described_in_discovery(ctx, p, role, open_, covs, described_as) if open_ else None
        if resolved is not None:
            return resolved, None
        for d in further:
            cov = _coverage(ctx, d.object_id, p.text, role)
            if _within_names(cov.phrase, set_aside):
                continue
            if _names_in_discovery(ctx, d, p.text, described_as, role, p.intent, cov):
                return d.object_id, None
        return None, _no_matching_object(role, p)
    kinds = sorted({d.status.value for d in ordered})
    if not ordered:
        why = "No evidence you may see matches the question."
    elif "approved" in kinds:
        # Approved text far down the list, or of a kind that governs nothing (a lineage note):
        # saying "none of it is approved" beside "approved" would contradict itself.
        why = ("No approved governed object is among the closest matches (" + ", ".join(kinds) + " text), so "
               "there is no authoritative answer.")
    else:
        why = ("Only " + ", ".join(kinds) + " text matches the question; none of it is approved, so there is no "
               "authoritative answer.")
    return None, Response(action="abstain", role=role, as_of=p.as_of, answer=why, reason="no_approved_evidence")


# ---------------------------------------------------------------- freshness and metric values


def _freshness(ctx: AskContext, p: ParsedQuestion, role: str, concept: str, view: RoleView) -> Response:
    """The newest visible freshness snapshot of the concept (its family, or one of
    its raw sources); `calculate.freshness` does the arithmetic."""
    concept_docs = [d for d in ctx.by_object.get(concept, []) if d.doc_id in view.shown_ids]
    sources: set[str] = set()
    for d in concept_docs:
        lin = links.linked(d, view.kind_index("lineage"), p.as_of or d.valid_from, by_id=view.by_id)
        if lin is not None:
            sources |= set(links.raw_sources_from_edges(links.lineage_edges_from_text(lin)))
    own, graph_sources = _dbt_observed_relations(ctx, concept_docs)
    sources |= graph_sources
    ctx.ensure_freshness(concept, sources | own)
    fx = ctx.freshness_index(ctx.view(role))
    # Snapshots of the concept's family or observing one of its raw sources, in document order.
    of_family = set(fx.by_family.get(links._family(concept), ()))
    hit = set(of_family)
    observed = {src.lower(): src for src in fx.by_source}
    for src in sources | own:
        hit.update(fx.by_source.get(observed.get(src.lower(), src), ()))
    chosen = _pick_snapshot(fx, hit, p)
    if chosen is None:
        return calculate.no_observation(role, p.as_of)
    observed_at, obs = fx.observed[chosen]
    unobserved: list[str] = []
    if chosen not in of_family:
        # A snapshot of many sources (dbt's sources.json): only the concept's own are its answer,
        # and its sources the snapshot has no reading for are said to be unobserved.
        wanted = {s.lower() for s in sources | own}
        obs = [o for o in obs if o["source"].lower() in wanted]
        seen = {o["source"].lower() for o in obs}
        unobserved = sorted(s for s in sources if s.lower() not in seen)
    return calculate.freshness(fx.snapshots[chosen], observed_at, obs, role, p.as_of, unobserved=unobserved)


def _dbt_observed_relations(ctx: AskContext, concept_docs: list[Document]) -> tuple[set[str], set[str]]:
    """The relations whose freshness is a dbt node's: (its own relation, the name `dbt source
    freshness` reports a source by and a seed of the same table shares; the relations of the
    sources upstream of it in the dbt graph, as a model is as fresh as the raw data it is built
    from)."""
    own: set[str] = set()
    upstream_sources: set[str] = set()
    graph = ctx.con is not None and has_dbt_tables(ctx.con)
    for d in concept_docs:
        if d.metadata.get("relation_name"):
            own.add(str(d.metadata["relation_name"]))
    # One walk per node: the revisions of an object share its dbt node.
    for node_id in sorted({d.metadata["dbt_unique_id"] for d in concept_docs if d.metadata.get("dbt_unique_id")}
                          if graph else ()):
        upstream_sources |= {n["relation_name"] or n["id"] for n in upstream(ctx.con, node_id).sources()}
    return own, upstream_sources


# How a question says its words name a table ("the orders source table").
_TABLE_NOUNS = {"table", "tables", "source", "sources"}


def _table_word_runs(text: str, *, noun_required: bool = True) -> set[str]:
    """Runs of one to three words of a question that says "table" or "source" (any question,
    without `noun_required`), joined the way a relation's last segment is ("order lines" ->
    "order_lines"), and the identifiers it writes ("scan_events"), table noun or not."""
    runs = {"_".join(ident) for ident in identifiers(text)}
    words = normalize(text).split()
    if noun_required and not _TABLE_NOUNS & set(words):
        return runs
    for n in (1, 2, 3):
        for i in range(len(words) - n + 1):
            run = words[i:i + n]
            if run[0] in _STOP or run[-1] in _STOP or _TABLE_NOUNS & set(run):
                continue
            runs.add("_".join(run))
    return runs


def _table_freshness(ctx: AskContext, p: ParsedQuestion, role: str, *, by_words: bool = False,
                     noun_required: bool = True) -> Response | None:
    """The newest visible snapshot observing a table the question names, with only that
    table's readings; None when no snapshot the role sees observes any of them (the
    names were not source tables, and the question goes on as if none were named).
    `by_words`: the table is named by the words of its last segment, not written out;
    a run of words naming more than one observed table names none. Without `noun_required`
    the words need no table noun beside them ("are admissions fresh?"): what a freshness
    question asks about when nothing else it names is observed."""
    if by_words:
        runs = _table_word_runs(p.text, noun_required=noun_required)
        if not runs:
            return None
        ctx.ensure_freshness("", {f".{r}" for r in runs})
        fx = ctx.freshness_index(ctx.view(role))
        hits = {src: src.lower().rsplit(".", 1)[1] for src in fx.by_source if "." in src}
        hits = {src: last for src, last in hits.items() if last in runs}
        # A run inside a longer run that names another table ("events" of "scan events") is
        # part of that name, not a name of its own.
        named = {src for src, last in hits.items()
                 if not any(last != other and f"_{last}_" in f"_{other}_" for other in hits.values())}
        if len(named) != 1:
            return None
    else:
        ctx.ensure_freshness("", set(p.tables))
        fx = ctx.freshness_index(ctx.view(role))
        sources = {src.lower(): src for src in fx.by_source}
        named = {sources[t] for t in p.tables if t in sources}
    if not named:
        return None
    chosen = _pick_snapshot(fx, {i for src in named for i in fx.by_source[src]}, p)
    if chosen is None:
        return calculate.no_observation(role, p.as_of)
    observed_at, obs = fx.observed[chosen]
    return calculate.freshness(fx.snapshots[chosen], observed_at, [o for o in obs if o["source"] in named],
                               role, p.as_of)


def _pick_snapshot(fx: FreshnessIndex, hit: set[int], p: ParsedQuestion) -> int | None:
    """Of the snapshots `hit`, those in effect on the question's date, the newest; with a time
    of day named ("the 08:00 UTC snapshot", "as of …T08:00:00Z"), the newest observed by then
    on that date (at that time of day, with no date); with a part of the day named ("the
    morning snapshot"), likewise by its end (`_by_day_part`)."""
    related = sorted(hit)
    if p.as_of is not None:
        days = [p.as_of]
        if p.at_time is None and p.day_part is not None and p.day_part[1] <= p.day_part[0]:
            days.append(p.as_of + dt.timedelta(days=1))   # a night runs into the next day
        related = [i for i in related if any(fx.snapshots[i].in_effect(d) for d in days)]
    if p.at_time is not None:
        if p.as_of is not None:
            by = dt.datetime.combine(p.as_of, p.at_time, tzinfo=dt.timezone.utc)
            related = [i for i in related if fx.observed[i][0] is not None and fx.observed[i][0] <= by]
        else:
            related = [i for i in related if fx.observed[i][0] is not None
                       and fx.observed[i][0].astimezone(dt.timezone.utc).time() == p.at_time]
    elif p.day_part is not None:
        # "the morning snapshot", "fresh in the afternoon of …": the newest observed by that part
        # of the day's end on the question's date, as with a time named; with no date, one
        # observed in that part of some day.
        related = [i for i in related if fx.observed[i][0] is not None
                   and _by_day_part(fx.observed[i][0], p.day_part, p.as_of)]
    if not related:
        return None
    return max(related, key=lambda i: (fx.observed[i][0] or dt.datetime.min.replace(tzinfo=dt.timezone.utc)))


def _by_day_part(at: dt.datetime, part: tuple[dt.time, dt.time], day: dt.date | None) -> bool:
    """On `day`: `at` is no later than the part's end (a night ends the next morning). With no
    day: `at` falls in the part [from, to) of its own day (UTC)."""
    start, end = part
    if day is not None:
        last = day + dt.timedelta(days=1) if end <= start else day
        return at <= dt.datetime.combine(last, end, tzinfo=dt.timezone.utc)
    t = at.astimezone(dt.timezone.utc).time()
    return start <= t < end if start < end else (t >= start or t < end)


def _metric_value(ctx: AskContext, p: ParsedQuestion, role: str, concept: str) -> Response:
    """Numbers come from the semantic layer, after the governing definition is
    resolved for the first and the last day of the period."""
    if len(p.periods) >= 2:
        return _value_per_named_period(ctx, p, role, concept)
    start, end = p.period
    last = end - dt.timedelta(days=1)
    revisions = ctx.by_object.get(concept, [])
    first_res = resolve_object(revisions, concept, start, role, ctx.policy)
    last_res = resolve_object(revisions, concept, last, role, ctx.policy)
    for res in (first_res, last_res):
        if res.response is not None:
            res.response.as_of = last
            return res.response
    if first_res.chosen.doc_id != last_res.chosen.doc_id:
        parts = _value_per_sub_period(ctx, p, role, concept)
        if parts is not None:
            return parts
        return Response(action="human_review", role=role, as_of=last, reason="definition_changes_within_period",
                        answer=f"The governed definition changes within {p.period_label or f'{start:%B %Y}'} "
                               f"({first_res.chosen.doc_id} then {last_res.chosen.doc_id}); a person must decide "
                               "how to report the period.",
                        evidence=[Evidence.of(first_res.chosen, "conflict"), Evidence.of(last_res.chosen, "conflict")])
    return calculate.metric_value(last_res.chosen, start, end, ctx.metric_values, role, p.period_label)


def _value_if_computed(ctx: AskContext, p: ParsedQuestion, role: str, concept: str) -> Response | None:
    """A metric's name and a period and nothing else ("net revenue for july 2026") asks for the
    metric over that period: its value where the semantic layer computes it, under the revision
    that governs the period. None where it cannot (no semantic layer, a metric it does not
    compute, a definition that changes within the period and parts that do not compute): the
    definition governing the period answers instead, never an abstention in its place."""
    entry = ctx.catalog[concept]
    names = set(entry.names) | set(entry.initials) | {m.name for m in p.matches if m.object_id == concept}
    if (ctx.metric_values is None or "metric_definition" not in entry.kinds or p.named_sources
            or not names_and_period_only(p.text, names)):
        return None
    resp = _metric_value(ctx, p, role, concept)
    if resp.action == "calculate" or resp.action == "deny":
        return resp
    return None


def _value_without_period(ctx: AskContext, p: ParsedQuestion, role: str, concept: str) -> Response:
    """A value asked with no period Canon reads ("What was the average class size?", "… in fall
    2026": a term or a fiscal year depends on the organisation's calendar): a value is computed
    over a period, so the question is asked back, never answered with the definition in its
    place. A revision the role may not see is denied first, as for any question about it."""
    res = resolve_object(ctx.by_object.get(concept, []), concept, None, role, ctx.policy)
    if res.response is not None and res.response.action != "clarify":
        return res.response
    options = res.response.options if res.response is not None else [
        {"evidence_id": d.doc_id, "version": d.version, "valid_from": d.valid_from.isoformat(),
         "valid_to": d.valid_to.isoformat() if d.valid_to else None, "period": period_label(d), "title": d.title}
        for d in [res.chosen]]
    return Response(action="clarify", role=role, as_of=None, reason="date_required", options=options,
                    answer=f"A value of {concept} is computed over a period, and the question names none that Canon "
                           "reads as dates (a term or a fiscal year depends on your calendar). Which period do you "
                           "need: a month, a quarter, a year, or two dates?")


def _not_broken_down(ctx: AskContext, p: ParsedQuestion, role: str, concept: str, by: str,
                     parts: int = 0) -> Response:
    """A value asked per member of a dimension ("by region"), or per day of a long period: the
    semantic layer computes one total per period (canon/ask/understanding/qualifiers.py), and a
    total in the place of a breakdown would answer another question."""
    why = (f"a breakdown by {by} over {p.period_label or 'that period'} would have {parts} parts, more than the "
           f"{MAX_PARTS} one answer gives" if parts else
           f"Canon's semantic layer computes {concept} as one total per period; a breakdown by {by} is not "
           "something it calculates, and a total would answer another question")
    return _not_computed(p, role, f"{why}. Ask for the total over a period, or per month, quarter or year")


def _not_computed(p: ParsedQuestion, role: str, why: str) -> Response:
    """A value question the semantic layer cannot answer as asked: `abstain` `metric_not_computable`
    saying why, as of the period's last day."""
    last = p.period[1] - dt.timedelta(days=1) if p.period else p.as_of
    return Response(action="abstain", role=role, as_of=last, reason="metric_not_computable",
                    answer=f"Not computed: {why}.")


def _value_per_named_period(ctx: AskContext, p: ParsedQuestion, role: str, concept: str) -> Response:
    """A value for each period the question names ("June vs July 2026"), each under the revision
    that governs it, side by side and never added up: one period answered for two asked would
    drop the other without a word. Any part that is not a calculation (a deny, a human review, no
    semantic layer) is the answer instead."""
    parts = [_metric_value(ctx, replace(p, period=period, period_label=label, periods=()), role, concept)
             for period, label in p.periods]
    for r in parts:
        if r.action != "calculate" or not r.calculation:
            return r
    calc = [c for r in parts for c in (r.calculation["parts"] if r.calculation.get("kind") == "metric_value_by_period"
                                       else [dict(r.calculation, doc_id=r.evidence[0].doc_id)])]
    evidence: list[Evidence] = []
    for r in parts:
        evidence += [e for e in r.evidence if e.doc_id not in {x.doc_id for x in evidence}]
    return Response(action="calculate", role=role, as_of=max(r.as_of for r in parts if r.as_of),
                    answer=f"Each period asked ({p.period_label}) is computed under the revision that governs it "
                           "and the values are not added up: " + " ".join(r.answer for r in parts),
                    evidence=evidence, claims=[c for r in parts for c in r.claims],
                    calculation={"kind": "metric_value_by_period", "parts": calc})


def _value_per_sub_period(ctx: AskContext, p: ParsedQuestion, role: str, concept: str) -> Response | None:
    """A value over a period the definition changes in, computed per sub-period under each
    governing revision and never added up; None (a person decides) unless every part computes."""
    spans = revisions.governing_spans(ctx.by_object.get(concept, []), concept, p.period, role, ctx.policy)
    if isinstance(spans, Response) or ctx.metric_values is None or any(d is None for d, _, _ in spans):
        return None
    parts = [calculate.metric_value(d, a, b, ctx.metric_values, role, f"{a.isoformat()} <= date < {b.isoformat()}")
             for d, a, b in spans]
    if any(r.action != "calculate" or not r.calculation for r in parts):
        return None
    label = p.period_label or f"{p.period[0]:%B %Y}"
    calc = [dict(r.calculation, doc_id=d.doc_id) for r, (d, _, _) in zip(parts, spans)]
    return Response(action="calculate", role=role, as_of=p.period[1] - dt.timedelta(days=1),
                    answer=f"The governed definition changes within {label}, so each part is computed under the "
                           "revision that governs it and the parts are not added up: " + " ".join(r.answer for r in parts),
                    evidence=[e for r in parts for e in r.evidence], claims=[c for r in parts for c in r.claims],
                    calculation={"kind": "metric_value_by_period", "parts": calc})


# ---------------------------------------------------------------- safety


def _attach_chunks(ctx: AskContext, resp: Response) -> None:
    """Chunk ids only from the served revision that holds the registry's live
    revision; otherwise the evidence was read live from the registry."""
    if ctx.retriever is None:
        return
    for e in resp.evidence:
        e.chunk_ids = ctx.retriever.chunks_of(e.doc_id, e.content_hash)


def _assert_no_leak(resp: Response, shown_ids: set[str]) -> None:
    """Fail closed: a response may cite only documents the role may see."""
    bad = [e.doc_id for e in resp.evidence if e.doc_id not in shown_ids] + [
        c.evidence_id for c in resp.claims if c.evidence_id not in shown_ids]
    if bad:
        resp.action = "deny"
        resp.answer = DENY_TEXT
        resp.evidence, resp.claims, resp.options, resp.freshness = [], [], [], []
        resp.calculation, resp.lineage = None, None
