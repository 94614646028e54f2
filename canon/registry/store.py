"""The evidence registry in DuckDB: documents (one row per doc_id, its current
revision), their version history, the quarantine, and the effective-time
`definitions` table with its `definitions_as_of(d)` table macro.

Every write happens in one transaction, so a failure leaves what was already
published untouched.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from typing import Callable, Iterable

import duckdb
import pyarrow as pa

from canon.core import schema
from canon.core.clock import utcnow
from canon.core.db import connect  # noqa: F401  (registry.connect: the Canon database)
from canon.core.ids import doc_version as make_doc_version
from canon.models.documents import Document, Status

ensure_schema = schema.ensure_registry   # the registry's tables: canon/core/schema.py


def version_of(doc: Document) -> str:
    return make_doc_version(doc.doc_id, doc.text.encode("utf-8"))


@dataclass
class RegistryDiff:
    new: list[str] = field(default_factory=list)
    text_changed: list[str] = field(default_factory=list)
    metadata_changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def new_versions(self) -> int:
        return len(self.new) + len(self.text_changed)

    def as_metadata(self) -> dict[str, int]:
        return {
            "new": len(self.new), "text_changed": len(self.text_changed),
            "metadata_changed": len(self.metadata_changed), "unchanged": len(self.unchanged),
            "removed": len(self.removed),
        }


def _metadata_fingerprint(doc: Document) -> tuple:
    return (
        doc.object_id, doc.kind, doc.title, doc.status.value, doc.authority, doc.version,
        doc.valid_from, doc.valid_to, tuple(sorted(doc.allowed_roles)), doc.supersedes,
        doc.content_hash, doc.source_uri, doc.source_revision,
        json.dumps(doc.metadata, sort_keys=True, default=str),
    )


def _row(doc: Document, dv: str, contract_version: str, first_seen: dt.datetime, now: dt.datetime) -> tuple:
    return (
        doc.doc_id, dv, doc.object_id, doc.kind, doc.title, doc.status.value, doc.authority,
        doc.version, doc.valid_from, doc.valid_to, list(doc.allowed_roles), doc.supersedes,
        doc.content_hash, doc.text, doc.source_uri, doc.source_system, doc.source_revision,
        contract_version, json.dumps(doc.metadata, sort_keys=True, default=str), first_seen, now, None,
    )


def sync_documents(
    con: duckdb.DuckDBPyConnection,
    docs: Iterable[Document],
    *,
    source_system: str,
    contract_version: str,
    run_id: str,
    now: dt.datetime | None = None,
    unchanged: Iterable[str] = (),
) -> RegistryDiff:
    """Make the registry's live documents of `source_system` equal to `docs` plus `unchanged`.

    Unchanged documents are not rewritten (a re-run on unchanged input writes
    no new document version); a document that left the source is soft-deleted.
    `unchanged`: doc_ids the caller knows the registry already holds live and
    identical (canon.registry.corpus_cache checked them against the registry's rows); they
    are kept without being rebuilt or compared.
    """
    now = now or utcnow()
    docs = list(docs)
    incoming = [d.doc_id for d in docs]
    existing = {
        r[0]: r for r in con.execute(
            "SELECT doc_id, doc_version, first_seen, deleted_at FROM documents WHERE source_system = ? "
            "AND doc_id IN (SELECT unnest(?))", [source_system, incoming],
        ).fetchall()
    } if incoming else {}
    current = {d.doc_id: d for d in load_documents(
        con, source_system=source_system, doc_ids=[d.doc_id for d in docs if d.doc_id in existing])}
    diff = RegistryDiff(unchanged=list(unchanged))
    doc_rows: list[tuple] = []
    version_rows: list[tuple] = []
    for doc in docs:
        dv = version_of(doc)
        old = existing.get(doc.doc_id)
        if old is None:
            diff.new.append(doc.doc_id)
        elif old[1] != dv:
            diff.text_changed.append(doc.doc_id)
        elif old[3] is not None:
            diff.new.append(doc.doc_id)  # came back after a soft delete
        elif _metadata_fingerprint(current[doc.doc_id]) != _metadata_fingerprint(doc):
            diff.metadata_changed.append(doc.doc_id)
        else:
            diff.unchanged.append(doc.doc_id)
            continue
        first_seen = old[2] if old is not None else now
        doc_rows.append(_row(doc, dv, contract_version, first_seen, now))
        version_rows.append((doc.doc_id, dv, doc.content_hash, doc.source_uri, contract_version, now, run_id))
    seen = sorted(set(incoming) | set(diff.unchanged))
    diff.removed = [r[0] for r in con.execute(
        "SELECT doc_id FROM documents WHERE source_system = ? AND deleted_at IS NULL "
        "AND doc_id NOT IN (SELECT unnest(?)) ORDER BY doc_id", [source_system, seen]).fetchall()]
    con.execute("BEGIN TRANSACTION")
    try:
        # Set-based writes: one statement per table, not one per document.
        if doc_rows:
            _bulk(con, "documents", doc_rows, delete_key="doc_id")
            _bulk(con, "document_versions", version_rows, on_conflict=True)
        if diff.removed:
            con.execute("UPDATE documents SET deleted_at = ?, updated_at = ? WHERE doc_id IN (SELECT unnest(?))",
                        [now, now, diff.removed])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return diff


def _bulk(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple], *, delete_key: str | None = None,
          on_conflict: bool = False) -> None:
    columns = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
    types = {r[0]: r[1] for r in con.execute(f"DESCRIBE {table}").fetchall()}
    data = {c: [r[i] for r in rows] for i, c in enumerate(columns)}
    arrow_types = {"VARCHAR[]": pa.list_(pa.string()), "DATE": pa.date32(), "TIMESTAMP": pa.timestamp("us"),
                   "INTEGER": pa.int32(), "VARCHAR": pa.string()}
    staged = pa.table({c: pa.array(v, type=arrow_types.get(types[c])) for c, v in data.items()})
    con.register("_staged_rows", staged)
    try:
        if delete_key:
            con.execute(f"DELETE FROM {table} WHERE {delete_key} IN (SELECT {delete_key} FROM _staged_rows)")
        conflict = " ON CONFLICT DO NOTHING" if on_conflict else ""
        con.execute(f"INSERT INTO {table} SELECT * FROM _staged_rows{conflict}")
    finally:
        con.unregister("_staged_rows")


def load_documents(
    con: duckdb.DuckDBPyConnection, *, source_system: str | None = None, include_deleted: bool = False,
    doc_ids: list[str] | None = None,
) -> list[Document]:
    sql = (
        "SELECT doc_id, object_id, kind, title, status, authority, version, valid_from, valid_to, "
        "allowed_roles, supersedes, content_hash, text, source_uri, source_system, source_revision, "
        "metadata_json FROM documents WHERE 1=1"
    )
    params: list = []
    if source_system is not None:
        sql += " AND source_system = ?"
        params.append(source_system)
    if not include_deleted:
        sql += " AND deleted_at IS NULL"
    if doc_ids is not None:
        if not doc_ids:
            return []
        sql += " AND doc_id IN (SELECT unnest(?))"
        params.append(list(doc_ids))
    out = []
    for r in con.execute(sql + " ORDER BY doc_id", params).fetchall():
        out.append(Document(
            doc_id=r[0], object_id=r[1], kind=r[2], title=r[3], status=r[4], authority=r[5],
            version=r[6], valid_from=r[7], valid_to=r[8], allowed_roles=tuple(r[9]), supersedes=r[10],
            content_hash=r[11], text=r[12], source_uri=r[13], source_system=r[14],
            source_revision=r[15], metadata=json.loads(r[16]),
        ))
    return out


class StoredDocument(Document):
    """A registry row whose text is read from the registry when first used
    (`load_document_heads`): a question that loads a thousand documents to
    decide which one it is about reads the text of the few it cites."""

    def __getattr__(self, name: str):
        if name == "text":
            text = self.__pydantic_private__["_text_of"](self.doc_id)
            self.__dict__["text"] = text   # frozen model: cached where the field would be
            return text
        return super().__getattr__(name)


_FIELDS_SET = frozenset(Document.model_fields)
_TEXT_BATCH = 500   # texts read per query when a loop over lazily read documents reaches them
_HEAD_COLUMNS = ("doc_id, object_id, kind, title, status, authority, version, valid_from, valid_to, allowed_roles, "
                 "supersedes, content_hash, source_uri, source_system, source_revision, metadata_json")


def _stored(r: tuple, text_of: Callable[[str], str]) -> StoredDocument:
    # Rows were validated when they were written (sync_documents); building the model
    # without re-validating is what keeps loading thousands of them cheap.
    doc = StoredDocument.__new__(StoredDocument)
    object.__setattr__(doc, "__dict__", {
        "doc_id": r[0], "object_id": r[1], "kind": r[2], "title": r[3], "status": Status(r[4]), "authority": r[5],
        "version": r[6], "valid_from": r[7], "valid_to": r[8], "allowed_roles": tuple(r[9]), "supersedes": r[10],
        "content_hash": r[11], "source_uri": r[12], "source_system": r[13], "source_revision": r[14],
        "metadata": json.loads(r[15])})
    object.__setattr__(doc, "__pydantic_fields_set__", set(_FIELDS_SET))
    object.__setattr__(doc, "__pydantic_extra__", None)
    object.__setattr__(doc, "__pydantic_private__", {"_text_of": text_of})
    return doc


def load_document_heads(con: duckdb.DuckDBPyConnection, where: str, params: list) -> list[StoredDocument]:
    """The live documents matching `where` (SQL over the documents table), ordered by
    doc_id as `load_documents` orders them, each reading its text from `con` when it
    is first used (so `con` must stay open while they are)."""
    rows = con.execute(f"SELECT {_HEAD_COLUMNS} FROM documents WHERE deleted_at IS NULL AND ({where}) "
                       "ORDER BY doc_id", params).fetchall()
    order = [r[0] for r in rows]
    position = {doc_id: i for i, doc_id in enumerate(order)}
    fetched: dict[str, str] = {}

    def text_of(doc_id: str) -> str:
        # A loop over these documents reads their texts in order: fetch the next batch at once.
        if doc_id not in fetched:
            i = position[doc_id]
            batch = order[i:i + _TEXT_BATCH]
            fetched.clear()
            # A list of values, not a joined unnest(?): DuckDB then reads only the blocks
            # holding these rows instead of scanning the whole text column.
            fetched.update(con.execute("SELECT doc_id, text FROM documents WHERE doc_id IN "
                                       f"({', '.join('?' * len(batch))})", batch).fetchall())
        return fetched.pop(doc_id)

    return [_stored(r, text_of) for r in rows]


def sync_quarantine(
    con: duckdb.DuckDBPyConnection,
    entries: Iterable,
    *,
    source_system: str,
    run_id: str,
    now: dt.datetime | None = None,
) -> None:
    """Record gate failures; an entry that no longer fails is released, not forgotten.

    When the open entries are exactly these (same files, hashes and reasons) nothing is
    written: `last_seen_at` is the last run that opened or changed an entry."""
    now = now or utcnow()
    entries = list(entries)
    open_now = {(r[0], r[1], tuple(r[2])) for r in con.execute(
        "SELECT source_uri, content_hash, reasons FROM quarantine WHERE source_system = ? AND released_at IS NULL",
        [source_system]).fetchall()}
    if open_now == {(e.source_uri, e.content_hash, tuple(e.reasons)) for e in entries} and len(open_now) == len(entries):
        return
    con.execute("BEGIN TRANSACTION")
    try:
        keys = set()
        for e in entries:
            keys.add((e.source_uri, e.content_hash))
            con.execute(
                """INSERT INTO quarantine VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)
                   ON CONFLICT (source_uri, content_hash) DO UPDATE SET
                     reasons = excluded.reasons, last_seen_at = excluded.last_seen_at,
                     released_at = NULL, run_id = excluded.run_id""",
                [e.source_uri, e.doc_id, e.content_hash, list(e.reasons), source_system, now, now, run_id],
            )
        for uri, chash in con.execute(
            "SELECT source_uri, content_hash FROM quarantine WHERE source_system = ? AND released_at IS NULL",
            [source_system],
        ).fetchall():
            if (uri, chash) not in keys:
                con.execute(
                    "UPDATE quarantine SET released_at = ? WHERE source_uri = ? AND content_hash = ?",
                    [now, uri, chash],
                )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def refresh_definitions(con: duckdb.DuckDBPyConnection) -> int:
    """Rebuild the effective-time table from the live registry: one row per evidence
    revision, `recorded_at` = when Canon first saw this revision. Skipped (no write)
    when neither `documents` nor `document_versions` changed since the last rebuild."""
    source = json.dumps([list(map(str, table_signature(con, t))) for t in ("documents", "document_versions")])
    if get_setting(con, "definitions_source") == source:
        return con.execute("SELECT count(*) FROM definitions").fetchall()[0][0]
    con.execute("BEGIN TRANSACTION")
    try:
        set_setting(con, "definitions_source", source)
        con.execute("DELETE FROM definitions")
        con.execute(
            """INSERT INTO definitions
               SELECT d.object_id, d.doc_id, d.kind, d.title, d.version, d.status, d.authority,
                      d.valid_from, d.valid_to, v.first_seen, d.supersedes, d.source_system,
                      d.source_revision, d.content_hash, d.allowed_roles, d.text, d.metadata_json
               FROM documents d
               JOIN document_versions v ON v.doc_id = d.doc_id AND v.doc_version = d.doc_version
               WHERE d.deleted_at IS NULL"""
        )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return con.execute("SELECT count(*) FROM definitions").fetchall()[0][0]


def table_signature(con: duckdb.DuckDBPyConnection, table: str) -> tuple:
    """(rows, sum and xor of each whole row's hash): changes when any value of any row does.
    DuckDB's row hash, aggregated in SQL: far cheaper than hashing every text in Python."""
    return tuple(con.execute(f"SELECT count(*), coalesce(sum(hash(t)::HUGEINT), 0), coalesce(bit_xor(hash(t)), 0) "
                             f"FROM {table} t").fetchall()[0])


def set_setting(con: duckdb.DuckDBPyConnection, key: str, value: str) -> None:
    con.execute("INSERT OR REPLACE INTO settings VALUES (?, ?)", [key, value])


def get_setting(con: duckdb.DuckDBPyConnection, key: str, default: str | None = None) -> str | None:
    rows = con.execute("SELECT value FROM settings WHERE key = ?", [key]).fetchall()
    return rows[0][0] if rows else default
