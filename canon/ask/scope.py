"""A question answered from the documents it needs, read from the registry
as the pipeline reaches them, instead of from the whole registry loaded
first: what lets a new `canon ask` process answer at any registry size
(docs/design.md, "Scoped asks").

`ScopedAskContext` is an `AskContext` whose `docs` start as the revisions of
the objects the question can name (`catalog_store.candidate_objects`, a
superset of what matching can return) and grow at the pipeline's hooks:

- `ensure_concept(object_id)` once an object is chosen: every revision of it
  and every model-schema and lineage document a revision can link to (named
  in its text, of its family, or linked explicitly in its metadata);
- `ensure_hits(doc_ids)` after retrieval: every revision of the objects hit;
- `ensure_dbt_nodes(node_ids, lineage_doc_id)` for a model's lineage: the
  documents of the nodes its dbt graph reaches;
- named sources: every document of the kinds (or, for a draft or proposal,
  the statuses) the question names; a source named by no kind ("the doc
  says") loads the registry;
- `ensure_lineage_naming(ref)` for a model's lineage without a dbt graph: the lineage
  documents naming that model revision;
- `ensure_freshness(concept, sources)` on a freshness question: the snapshots
  of the concept's family or observing one of its raw sources (or one of the
  tables the question names, `pipeline._table_freshness`, with no concept).

What the full load decides from documents outside that set stays global:
which tokens are distinctive (the stored catalog), which roles exist and
which documents the live policy revokes (SQL over the registry). The
documents are kept in doc_id order, the full load's order, so every tie
breaks the same way; tests/test_scoped_ask.py checks that each gold case gets
the same response both ways.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import duckdb

from canon.ask.context import CONFIGURED, build_retriever, configured_calendar
from canon.ask.links import _family
from canon.ask.pipeline import AskContext
from canon.ask.understanding import catalog_store, compounds
from canon.ask.understanding.match import object_catalog
from canon.ask.understanding.parse import extract_named_sources
from canon.core import memory
from canon.core.fiscal_calendar import FiscalCalendar
from canon.models.documents import Document
from canon.registry import store as registry
from canon.registry.policy import Policy

_LINKED_KINDS = ("model_schema", "lineage")
_LINK_KEYS = ("model_doc_id", "lineage_doc_id")
# `links._family(object_id)` in SQL, as one string (domain, chr(31), last segment), NULL where
# the id has no family; `_family_key` is the same in Python.
_FAMILY_KEY_SQL = ("CASE WHEN len(string_split(object_id, '.')) >= 3 THEN split_part(object_id, '.', 2) "
                   "|| chr(31) || string_split(object_id, '.')[-1] END")
# The documents of some dbt nodes (by metadata.dbt_unique_id) and one lineage document.
DBT_NODES_WHERE = "json_extract_string(metadata_json, '$.dbt_unique_id') IN (SELECT unnest(?)) OR doc_id = ?"


def _family_key(object_id: str) -> str | None:
    fam = _family(object_id)
    return f"{fam[0]}\x1f{fam[1]}" if fam else None


def dbt_nodes_params(node_ids: list[str], lineage_doc_id: str | None) -> list:
    return [sorted(set(node_ids)), lineage_doc_id or ""]


def registry_roles(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Every role a live document's allowed_roles lists (canon/ask/inputs.py, `known_roles`)."""
    return {r[0] for r in con.execute(
        "SELECT DISTINCT unnest(allowed_roles) FROM documents WHERE deleted_at IS NULL").fetchall()}


@dataclass
class ScopedAskContext(AskContext):
    scope_con: duckdb.DuckDBPyConnection | None = None
    _objects: set[str] = field(default_factory=set, repr=False)       # objects whose revisions are all loaded
    _kinds: set[str] = field(default_factory=set, repr=False)         # kinds whose documents are all loaded
    _concepts: set[str] = field(default_factory=set, repr=False)      # objects whose links are loaded
    _everything: bool = field(default=False, repr=False)
    _distinctive: dict[str, set[str]] = field(default_factory=dict, repr=False)
    _revoked: dict[tuple, list[str]] = field(default_factory=dict, repr=False)
    _known_words: dict[frozenset, set[str]] = field(default_factory=dict, repr=False)
    _names_with: dict[frozenset, set[tuple[str, ...]]] = field(default_factory=dict, repr=False)

    # ------------------------------------------------------------ growing the set

    def _add(self, docs: Iterable[Document]) -> None:
        have = {d.doc_id for d in self.docs}
        new = [d for d in docs if d.doc_id not in have]
        if new:
            self.docs = sorted([*self.docs, *new], key=lambda d: d.doc_id)
            self._distinctive.update(catalog_store.distinctive_of(
                self.scope_con, {d.object_id for d in new} - set(self._distinctive)))

    def _load(self, where: str, params: list) -> list[Document]:
        """Every revision of each object one of whose documents matches `where`: an object's
        catalog entry (its names, its kinds) is built from all of them, as in the full load."""
        return registry.load_document_heads(
            self.scope_con, f"object_id IN (SELECT object_id FROM documents WHERE deleted_at IS NULL AND ({where}))",
            params)

    def ensure_objects(self, object_ids: Iterable[str]) -> None:
        wanted = sorted(set(object_ids) - self._objects)
        if wanted and not self._everything:
            self._add(self._load("object_id IN (SELECT unnest(?))", [wanted]))
        self._objects.update(wanted)

    def ensure_hits(self, doc_ids: Iterable[str]) -> None:
        ids = sorted(set(doc_ids))
        if not ids or self._everything:
            return
        objects = [r[0] for r in self.scope_con.execute(
            "SELECT DISTINCT object_id FROM documents WHERE doc_id IN (SELECT unnest(?))", [ids]).fetchall()]
        self.ensure_objects(objects)

    def ensure_dbt_nodes(self, node_ids: list[str], lineage_doc_id: str | None) -> None:
        if not self._everything:
            self._add(self._load(DBT_NODES_WHERE, dbt_nodes_params(node_ids, lineage_doc_id)))

    def ensure_kinds(self, kinds: Iterable[str]) -> None:
        wanted = sorted(set(kinds) - self._kinds)
        if wanted and not self._everything:
            self._add(self._load("kind IN (SELECT unnest(?))", [wanted]))
        self._kinds.update(wanted)

    def ensure_statuses(self, statuses: Iterable[str]) -> None:
        if not self._everything:
            self._add(self._load("status IN (SELECT unnest(?))", [sorted(set(statuses))]))

    def ensure_everything(self) -> None:
        if not self._everything:
            self._add(self._load("true", []))
            self._everything = True

    def ensure_concept(self, object_id: str) -> None:
        """Every revision of the object and every document `links.linked` can reach from one."""
        if object_id in self._concepts:
            return
        self._concepts.add(object_id)
        self.ensure_objects([object_id])
        if self._everything or set(_LINKED_KINDS) <= self._kinds:
            return
        revisions = [d for d in self.docs if d.object_id == object_id]
        texts = "\n".join(d.text for d in revisions)
        explicit = sorted({str(d.metadata[k]) for d in revisions for k in _LINK_KEYS if d.metadata.get(k)})
        families = sorted({k for d in revisions if (k := _family_key(d.object_id))})
        objects = [r[0] for r in self.scope_con.execute(
            "SELECT DISTINCT object_id FROM documents WHERE deleted_at IS NULL AND kind IN (SELECT unnest(?)) AND ("
            f" contains(?, object_id) OR doc_id IN (SELECT unnest(?)) OR {_FAMILY_KEY_SQL} IN (SELECT unnest(?)))",
            [list(_LINKED_KINDS), texts, explicit, families]).fetchall()]
        self.ensure_objects(objects)

    def ensure_freshness(self, concept: str, sources: set[str]) -> None:
        """Snapshots of the concept's family, or whose observations name one of `sources`
        (in the text or the structured front matter: a superset of those `links.observations`
        reads one from), which are the only ones `_freshness` can pick."""
        if self._everything or "freshness_snapshot" in self._kinds:
            return
        family = _family_key(concept)
        # Case-folded: a table the question names is matched to an observed source whatever its case.
        observing = "len([s FOR s IN ? IF contains(lower(text), lower(s)) OR contains(lower(metadata_json), lower(s))]) > 0"
        # (a concept without a family compares NULL: no snapshot matches by family)
        self._add(self._load(f"kind = 'freshness_snapshot' AND ({_FAMILY_KEY_SQL} = ? OR {observing})",
                             [family, sorted(sources)]))

    def ensure_lineage_naming(self, ref: str) -> None:
        """Lineage documents whose text names `ref` (`pipeline._lineage_naming` reads only those)."""
        if not self._everything and "lineage" not in self._kinds:
            self._add(self._load("kind = 'lineage' AND contains(text, ?)", [ref]))

    # ------------------------------------------------------------ what stays global

    @property
    def catalog(self):
        self._fresh()
        if self._catalog is None:
            cat = object_catalog(self.docs)
            cat.distinctive = {oid: set(toks) for oid, toks in self._distinctive.items() if oid in cat}
            self._catalog = cat
        return self._catalog

    def known_name_words(self, words) -> set[str]:
        """From the stored catalog (every name's words, not only the loaded documents'), so that
        the scoped ask rewrites a question exactly as the full load does. Read once per set of
        words: `scoped_context` and `ask` rewrite the same question."""
        key = frozenset(words)
        if key not in self._known_words:
            self._known_words[key] = catalog_store.known_name_words(self.scope_con, key)
        return self._known_words[key]

    def names_with(self, prefixes) -> set[tuple[str, ...]]:
        """From the stored catalog, as `known_name_words` (canon/ask/understanding/clippings.py)."""
        key = frozenset(prefixes)
        if key not in self._names_with:
            self._names_with[key] = catalog_store.names_with_prefixes(self.scope_con, key)
        return self._names_with[key]

    def revoked_for(self, role: str) -> list[str]:
        """Doc ids the ACL admits `role` to and the live policy revokes, over the whole registry
        (retrieval excludes them: a revoked document must not take a place in the top k)."""
        key = (role, self.policy.visibility_key())
        got = self._revoked.get(key)
        if got is None:
            got = []
            if not self.policy.available or any(fnmatch.fnmatchcase(role, r.role) for r in self.policy.revoke):
                rows = self.scope_con.execute(
                    "SELECT doc_id, object_id FROM documents WHERE deleted_at IS NULL "
                    "AND list_contains(allowed_roles, ?) ORDER BY doc_id", [role]).fetchall()
                got = [doc_id for doc_id, object_id in rows if self.policy.revokes(role, doc_id, object_id)]
            self._revoked[key] = got
        return got


def scoped_context(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, question: str, role: str, policy: Policy, *,
                   embedder=None, metric_values=None, answer_store=None,
                   catalog_checked: bool = False, one_shot: bool = False,
                   calendar: FiscalCalendar | None | str = CONFIGURED) -> ScopedAskContext | None:
    """The context `role`'s question needs, or None when the stored catalog does not match
    the registry (the caller then loads every document: `canon.ask.context.ask_context`).
    `catalog_checked`: the caller has just seen `catalog_store.catalog_is_current` hold.
    `one_shot`: the process answers this question and exits (`canon ask`), so what each
    phase read is let go before the next (`_between_phases`)."""
    if not catalog_checked and not catalog_store.catalog_is_current(con):
        return None
    ctx = ScopedAskContext(docs=[], policy=policy, con=con, scope_con=con, metric_values=metric_values,
                           answer_store=answer_store, calendar=configured_calendar(calendar))
    # The question as ask() will read it (compounds in the catalog's spelling), from the stored words.
    candidates = catalog_store.candidate_objects(con, compounds.as_read(
        question, ctx.known_name_words, ctx.names_with))
    if candidates is None:
        ctx.ensure_everything()
    else:
        ctx.ensure_objects(candidates)
    for ns in extract_named_sources(question):
        if ns.kinds:
            ctx.ensure_kinds(ns.kinds)
        elif ns.statuses:
            # A named draft is looked for among the drafts the role sees; with none, among
            # everything it sees (canon/ask/pipeline.py, `_named_conflicts`).
            ctx.ensure_statuses(ns.statuses)
            if len([d for d in ctx.view(role).shown if d.status.value in ns.statuses]) < 2:
                ctx.ensure_everything()
        else:
            ctx.ensure_everything()

    def doc_of(doc_id: str) -> Document | None:
        return next((d for d in ctx.docs if d.doc_id == doc_id), None)

    ctx.retriever = build_retriever(con, lancedb_dir, None, embedder, doc_of=doc_of)
    if one_shot and ctx.retriever is not None:
        ctx.retriever = dataclasses.replace(ctx.retriever, search=_between_phases(ctx.retriever.search, con))
    return ctx


def _between_phases(search: Callable[..., list], con: duckdb.DuckDBPyConnection) -> Callable[..., list]:
    """`search`, with the blocks DuckDB cached while the question was understood let go
    before the index query, and LanceDB's tables and caches after it (canon/core/memory.py):
    a one-shot process then peaks at its largest phase, not at their sum."""
    def run(*args, **kwargs):
        memory.release_duckdb_cache(con)
        try:
            return search(*args, **kwargs)
        finally:
            from canon.index import search as index_search  # imported by the search itself

            index_search.release_tables()
            memory.return_free_heap()
    return run
