"""The served index revision as queries see it, and the query-time stale-index
rule (docs/design.md, "Lineage at two grains").

A registry revision may be read from the index only if the served index
revision holds exactly that revision (`metadata_revision(object) <=
indexed_revision(object)`). `stale_doc_ids()` is that rule: the ask path
(canon/ask/context.py) and the index_revision_fresh check
(canon/ops/checks.py) both call it, so the check reports exactly the
documents queries read live.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import duckdb

from canon.index.revisions import get_revision, has_schema, served_revision
from canon.models.documents import Document
from canon.registry.store import version_of


@dataclass(frozen=True)
class IndexedDoc:
    doc_versions: frozenset[str]   # more than one means the revision is inconsistent
    chunk_ids: tuple[str, ...]


def revision(con: duckdb.DuckDBPyConnection, revision_id: str | None) -> dict[str, Any] | None:
    """The given revision, or the served one when `revision_id` is None."""
    if not has_schema(con):
        return None
    return get_revision(con, revision_id) if revision_id else served_revision(con)


def indexed_versions(con: duckdb.DuckDBPyConnection, revision_id: str | None = None, *,
                     doc_ids: list[str] | None = None) -> dict[str, IndexedDoc]:
    """doc_id -> what the given (default: served) index revision holds of it,
    from the chunk/embedding lineage in DuckDB (no LanceDB read: cheap enough
    for every query); only of `doc_ids` when given."""
    rev = revision(con, revision_id)
    if rev is None:
        return {}
    only = "" if doc_ids is None else " AND c.doc_id IN (SELECT unnest(?))"
    rows = con.execute(
        f"""SELECT c.doc_id, list(DISTINCT c.doc_version), list(c.chunk_id ORDER BY c.span_start, c.chunk_id)
           FROM embedding_lineage e JOIN chunk_lineage c USING (chunk_id)
           WHERE e.index_revision = ?{only} GROUP BY 1""",
        [rev["revision_id"]] + ([list(doc_ids)] if doc_ids is not None else []),
    ).fetchall()
    return {r[0]: IndexedDoc(frozenset(r[1]), tuple(r[2])) for r in rows}


def stale_reason(doc: Document, indexed: IndexedDoc | None) -> str | None:
    """Why the index may not serve `doc`'s current revision, or None if it may."""
    if indexed is None:
        return "not in the served index revision"
    if len(indexed.doc_versions) != 1:
        return "the served index revision holds several revisions of it"
    if next(iter(indexed.doc_versions)) != version_of(doc):
        return "the served index revision holds an older revision of its text"
    return None


def stale_doc_ids(con: duckdb.DuckDBPyConnection, docs: Iterable[Document], *,
                  revision_id: str | None = None,
                  indexed: Mapping[str, IndexedDoc] | None = None) -> set[str]:
    """The query-time stale-index rule: the doc_ids whose current registry
    revision the (served) index revision does not hold. Evidence for these must
    be read live from the registry, or the answer must abstain; never from the
    index. Pass `indexed` (from `indexed_versions`) to reuse one lookup."""
    held = indexed if indexed is not None else indexed_versions(con, revision_id)
    return {d.doc_id for d in docs if stale_reason(d, held.get(d.doc_id)) is not None}


def served_table(lancedb_dir: str | Path, rev: Mapping[str, Any], columns: list[str]):
    """The served revision's LanceDB rows (selected columns) as an Arrow table."""
    from canon.index import lance  # LanceDB only for the served table itself: the rest is DuckDB

    tbl = lance.connect(lancedb_dir).open_table(rev["lance_table"])
    tbl.checkout(int(rev["lance_version"]))
    return tbl.search().select(columns).limit(None).to_arrow()
