"""Effective time of dbt evidence whose node declares none (docs/contracts.md, "Documents from
dbt", "Effective time from publication").

dbt metrics are unversioned: a manifest says what a node means now, not since when. A document
rendered from a node without `meta.canon.valid_from` carries metadata `effective_time_source:
inferred_from_publication` and `published_at` (the manifest's `metadata.generated_at`,
canon.sources.dbt.documents); this step gives it a history from what the registry already holds:

- first recorded: as rendered, valid from the date of the artifact that first carried it;
- unchanged (same text and dbt checksum as the slot's latest revision): that revision continues,
  with its doc_id, valid_from and published_at, so a re-run writes no new version;
- changed: the latest revision is closed (valid_to = the new artifact's generation date) and a new
  one opens then, doc_id `<first doc_id>.rev<N>`, superseding it. A change dated on or before the
  latest revision's valid_from (two publications on one day) replaces that revision, which never
  governed a whole day.

A *slot* is the doc_id the render gives a node (its first revision's id, kept stable). Closed
revisions are re-emitted as stored, since the registry soft-deletes whatever a source no longer
sends; a node that leaves the manifest takes its history with it, as before.
"""

from __future__ import annotations

import datetime as dt

import duckdb

from canon.models.documents import Document
from canon.registry import store as registry
from canon.sources.dbt.documents import INFERRED_FROM_PUBLICATION

REVISION = ".rev"
LINK_KEYS = ("model_doc_id", "lineage_doc_id")   # metadata links that name another slot's revision


def inferred(doc: Document) -> bool:
    return doc.metadata.get("effective_time_source") == INFERRED_FROM_PUBLICATION


def _slot(doc: Document) -> str:
    return doc.metadata.get("revision_of") or doc.doc_id


def _number(doc: Document) -> int:
    tail = doc.doc_id[len(_slot(doc)):]
    return int(tail[len(REVISION):]) if tail.startswith(REVISION) else 1


def _same(a: Document, b: Document) -> bool:
    # The rendered definition text, and dbt's own checksum where the node has one (a model's SQL
    # can change without the text Canon renders changing).
    return a.content_hash == b.content_hash and a.metadata.get("dbt_checksum") == b.metadata.get("dbt_checksum")


def _published_day(doc: Document, today: dt.date) -> dt.date:
    stamp = doc.metadata.get("published_at")
    return dt.date.fromisoformat(str(stamp)[:10]) if stamp else today


def with_history(con: duckdb.DuckDBPyConnection, rendered: list[Document], *, source_system: str,
                 today: dt.date) -> list[Document]:
    """`rendered` (this build's dbt documents) with the registry's revision history of every
    inferred one applied (the module doc); declared documents pass through untouched."""
    held: dict[str, list[Document]] = {}
    for d in registry.load_documents(con, source_system=source_system):
        if inferred(d):
            held.setdefault(_slot(d), []).append(d)
    out: list[Document] = []
    current: dict[str, str] = {}   # slot -> the doc_id of its revision from this render
    fresh: list[int] = []          # positions in `out` of this render's revisions
    for doc in rendered:
        chain = sorted(held.get(doc.doc_id, []), key=_number)
        if not inferred(doc) or not chain:
            fresh.append(len(out))
            out.append(doc)
            continue
        *closed, last = chain
        if _same(last, doc):
            out += closed
            keep = {k: last.metadata[k] for k in ("published_at", "revision_of") if k in last.metadata}
            doc = doc.model_copy(update={"doc_id": last.doc_id, "valid_from": last.valid_from,
                                         "valid_to": last.valid_to, "supersedes": last.supersedes,
                                         "metadata": {**doc.metadata, **keep}})
        else:
            day = _published_day(doc, today)
            meta = {**doc.metadata, "revision_of": doc.doc_id}
            new_id = f"{doc.doc_id}{REVISION}{_number(last) + 1}"
            if day > last.valid_from:
                out += closed + [last.model_copy(update={"valid_to": day})]
                doc = doc.model_copy(update={"doc_id": new_id, "valid_from": day, "supersedes": last.doc_id,
                                             "metadata": meta})
            else:   # published on (or before) the day the latest revision opened: it is replaced
                out += closed
                doc = doc.model_copy(update={"doc_id": new_id, "valid_from": last.valid_from,
                                             "supersedes": last.supersedes, "metadata": meta})
        current[_slot(doc)] = doc.doc_id
        fresh.append(len(out))
        out.append(doc)
    # This render's links (a metric's model and lineage) name slots; point them at the slot's
    # revision from this render. Closed revisions keep the links they were stored with.
    for i in fresh:
        doc = out[i]
        links = {k: current[doc.metadata[k]] for k in LINK_KEYS
                 if doc.metadata.get(k) in current and current[doc.metadata[k]] != doc.metadata[k]}
        if links:
            out[i] = doc.model_copy(update={"metadata": {**doc.metadata, **links}})
    return out
