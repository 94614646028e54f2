"""Deletion that provably propagates (seed 004, "Worked example: ... a deletion").

`forget(doc_id)` walks lineage forward from the source id and removes the
document from every store Canon writes, then *verifies* by querying each
store for the chunk ids and for distinctive phrases of the deleted text:

  store                       what happens                               what stays (ids only)
  --------------------------  -----------------------------------------  ---------------------------
  documents                   text, title, metadata blanked; deleted_at   doc_id, object_id, hashes
  document_versions           kept (no text: ids + content hashes)        everything (impact analysis)
  definitions                 rows deleted
  quarantine                  rows deleted
  chunk_lineage               deleted_at set                              the row (ids and spans)
  embedding_lineage           rows deleted (no embedding exists anymore)
  LanceDB, every table        rows rewritten into fresh files without the
                              document, then every older version pruned
                              (`canon.index.publish.cleanup`), so time travel and
                              the data files on disk hold none of it
  $CANON_HOME/eval            cited text replaced by "[forgotten]"        doc ids, chunk ids, hashes
  $CANON_HOME/cache           files that mention the document removed
  canon.duckdb (the file)     rewritten (COPY FROM DATABASE), because
                              DuckDB leaves deleted strings in free blocks
  answer_log                  nothing to do: ids and hashes only, by      cited ids
                              design (verification asserts it)

A row in `deletions` is both the record of the request and the *tombstone*:
`canon.registry.build` skips a forgotten doc_id that is still in the corpus
and reports it as quarantined ("forgotten on <date>"), so it does not come
back with the next build.

State machine (one row per doc_id): requested -> stores_cleared -> verified.
Clearing is idempotent, so an interrupted deletion simply runs again and
finishes; a verification failure leaves the row unverified with the findings
and raises `DeletionNotVerified` (an error, never a warning). The phrases the
verification looks for are kept only while the deletion is in flight, in a
0600 file under $CANON_HOME/lifecycle/inflight/, removed once verified; the
row keeps their sha256 for audit.

Completion time (requested_at -> completed_at) is compared with the source
contract's `retention.delete_propagation_hours` and emitted with the
OpenLineage run of the job (`canon_forget`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import json
import os
import re
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

import attr
import duckdb
import lancedb
import pyarrow as pa
import pyarrow.compute as pc
from openlineage.client.facet_v2 import RunFacet

from canon.core import db, ids, schema
from canon.core.clock import utcnow
from canon.core.config import PROJECT_ROOT, CanonPaths
from canon.core.db import Connect, has_table, opened, sql_list, sql_literal
from canon.core.errors import CanonInputError, CanonRunError
from canon.index import publish as index
from canon.index import revisions as index_store
from canon.registry import corpus_cache
from canon.registry import store as registry
from canon.registry.tombstones import forgotten_doc_ids, forgotten_reason  # noqa: F401  (re-exported)
from canon.run_lineage.events import DatasetRef, LineageEmitter, ParentRun, TransportConfig, canon_table, index_revision

STATES = ("requested", "stores_cleared", "verified")
REDACTED = "[forgotten]"
CONTRACTS_DIR = PROJECT_ROOT / "contracts"


# Tables that may keep a forgotten document's *ids* (they never hold its text).
ID_TABLES = frozenset({"chunk_lineage", "answer_log", "deletions", "index_outbox", "index_migrations",
                       "document_versions", "documents", "quarantine"})
# Mirrors of upstream sources (dbt artifacts, the warehouse). Canon does not
# own them: text found there is reported as `source_copies`, never deleted.
SOURCE_TABLES = frozenset({"dbt_nodes", "dbt_run_results", "dbt_artifact_revisions", "lineage_edges",
                           "source_freshness"})
SOURCE_PATHS = ("dbt_target", "dbt_artifacts", "dbt_logs", "warehouse.duckdb", "raw.duckdb")
INFLIGHT_DIR = ("lifecycle", "inflight")



class DeletionNotVerified(CanonRunError):
    """The stores were cleared but verification still found the document."""

    def __init__(self, message: str, result: "ForgetResult"):
        super().__init__(message)
        self.result = result


def _checkpoint(name: str) -> None:
    """Named points of the deletion; tests replace this to interrupt a run.
    Does nothing in production."""


# ------------------------------------------------------------------ schema + tombstones

ensure_schema = schema.ensure_deletions




# ------------------------------------------------------------------ results

@dataclass
class Finding:
    store: str          # duckdb:<table> | lancedb:<table>@<version> | lancedb-fts:<table> | file:<path> | ...
    what: str           # chunk_id | doc_id | phrase | token | row
    count: int
    probe: str = ""     # "phrase#1 sha256:ab12…" — never the text itself


@dataclass
class ForgetResult:
    deletion_id: str
    doc_id: str
    state: str
    verified: bool
    requested_at: dt.datetime
    completed_at: dt.datetime | None
    duration_seconds: float | None
    promise_hours: float
    within_promise: bool | None
    attempts: int
    resumed: bool
    chunk_ids: list[str]
    details: dict[str, Any] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k in ("requested_at", "completed_at"):
            d[k] = d[k].isoformat() + "Z" if d[k] else None
        return d


@attr.define
class DeletionRunFacet(RunFacet):
    """`canonDeletion`: the deletion metric on the OpenLineage run."""

    docId: str  # noqa: N815
    deletionId: str  # noqa: N815
    state: str
    verified: bool
    chunks: int
    durationSeconds: float | None = None  # noqa: N815
    promiseHours: float | None = None  # noqa: N815
    withinPromise: bool | None = None  # noqa: N815

    @staticmethod
    def _get_schema() -> str:
        return "https://github.com/canon/canon/spec/facets/DeletionRunFacet.json"


# ------------------------------------------------------------------ probes

_WORD_RUN = re.compile(r"[A-Za-z0-9]+(?: [A-Za-z0-9]+)*")
_TOKEN = re.compile(r"[a-z0-9]{6,}")


@dataclass
class Probes:
    """What verification searches for. Held in memory and in the in-flight
    file only; the deletions row keeps `sha256()` of each phrase."""

    phrases: list[str] = field(default_factory=list)     # distinctive, verbatim, ASCII words + spaces
    tokens: list[str] = field(default_factory=list)      # distinctive single words (FTS, LanceDB files)
    needles: list[str] = field(default_factory=list)     # sentences + title, for scrubbing copies
    # LanceDB table -> the deleted rows' own vectors: searching with them would
    # return the rows first (distance 0) if any were still reachable.
    vectors: dict[str, list[list[float]]] = field(default_factory=dict)

    def hashes(self) -> list[str]:
        return [hashlib.sha256(p.encode()).hexdigest() for p in self.phrases]

    def label(self, i: int) -> str:
        return f"phrase#{i + 1} sha256:{self.hashes()[i][:12]}"


def _windows(text: str, k: int) -> Iterator[str]:
    for m in _WORD_RUN.finditer(text):
        words = m.group().split(" ")
        for i in range(len(words) - k + 1):
            yield " ".join(words[i:i + k])


def distinctive_phrases(text: str, others: str, *, limit: int = 3, min_chars: int = 20) -> list[str]:
    """Up to `limit` verbatim word runs of `text` that occur in no other
    document (`others`: every other text, lower-cased, joined), spread over
    the text. Verbatim ASCII so they match byte-for-byte in files and JSON."""
    for k in (6, 5, 4, 3):
        cands = list(dict.fromkeys(w for w in _windows(text, k)
                                   if len(w) >= min_chars and w.lower() not in others))
        if cands:
            picks = [cands[0], cands[len(cands) // 2], cands[-1]]
            return list(dict.fromkeys(picks))[:limit]
    return []


def distinctive_tokens(text: str, others: str, exclude: str, *, limit: int = 5) -> list[str]:
    toks = {t for t in _TOKEN.findall(text.lower()) if t not in others and t not in exclude}
    return sorted(toks, key=lambda t: (-len(t), t))[:limit]


def _needles(texts: list[str], titles: list[str]) -> list[str]:
    from canon.ask.resolve import sentences

    out = {s for t in texts for s in sentences(t) if len(s) >= 20}
    out |= {t for t in titles if t and len(t) >= 12}
    return sorted(out, key=len, reverse=True)


# ------------------------------------------------------------------ helpers

class _Timer:
    """`with step("name"):` adds the seconds spent to `into[name]`."""

    def __init__(self, into: dict[str, float]):
        self.into = into

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        t = time.perf_counter()
        try:
            yield
        finally:
            self.into[name] = round(self.into.get(name, 0.0) + time.perf_counter() - t, 3)


def _table_names(lancedb_dir: Path) -> list[str]:
    if not Path(lancedb_dir).exists():
        return []
    db = lancedb.connect(str(lancedb_dir))
    names, token = [], None
    while True:
        resp = db.list_tables(page_token=token)
        names.extend(resp.tables)
        token = getattr(resp, "page_token", None)
        if not token:
            return sorted(names)


def _versions(tbl) -> list[int]:
    return sorted(int(v["version"]) for v in tbl.list_versions())


def _doc_filter(doc_id: str, chunk_ids: list[str]) -> str:
    f = f"doc_id = {sql_literal(doc_id)}"
    if chunk_ids:
        f += f" OR chunk_id IN {sql_list(chunk_ids)}"
    return f


def _lance_rows(tbl, where: str, columns: list[str]) -> pa.Table:
    return tbl.search().where(where).select(columns).limit(None).to_arrow()


def _promise_hours(source_system: str | None) -> float:
    from canon.registry.contracts import load_contracts

    try:
        contracts = list(load_contracts(CONTRACTS_DIR).values())
    except CanonInputError:
        contracts = []
    hours = [c.retention.delete_propagation_hours for c in contracts if c.source.system == source_system]
    if not hours:
        hours = [c.retention.delete_propagation_hours for c in contracts] or [72.0]
    return float(min(hours))


def _inflight_path(paths: CanonPaths, doc_id: str) -> Path:
    return paths.home.joinpath(*INFLIGHT_DIR, f"{ids.h('forget', doc_id)}.json")


def _write_private(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh)
    os.replace(tmp, path)


# ------------------------------------------------------------------ discovery

def _material(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, doc_id: str) -> dict[str, Any]:
    """Everything of the document still held anywhere: texts (every version
    found in the registry or any LanceDB version), titles, chunk ids."""
    texts: list[str] = []
    titles: list[str] = []
    chunk_ids: set[str] = set()
    source_system = None
    known = False
    if has_table(con, "documents"):
        for text, title, system in con.execute(
                "SELECT text, title, source_system FROM documents WHERE doc_id = ?", [doc_id]).fetchall():
            known = True
            source_system = system
            texts.append(text)
            titles.append(title)
    if has_table(con, "document_versions"):
        known |= bool(con.execute("SELECT count(*) FROM document_versions WHERE doc_id = ?", [doc_id]).fetchall()[0][0])
    if has_table(con, "definitions"):
        for body, title in con.execute("SELECT body, title FROM definitions WHERE evidence_id = ?", [doc_id]).fetchall():
            texts.append(body)
            titles.append(title)
    if has_table(con, "quarantine"):
        for (system,) in con.execute("SELECT source_system FROM quarantine WHERE doc_id = ?", [doc_id]).fetchall():
            known = True
            source_system = source_system or system
    if has_table(con, "chunk_lineage"):
        for (cid,) in con.execute("SELECT chunk_id FROM chunk_lineage WHERE doc_id = ?", [doc_id]).fetchall():
            chunk_ids.add(cid)
    bodies: dict[str, list[tuple[int, str]]] = {}
    vectors: dict[str, dict[str, list[float]]] = {}
    for name in _table_names(lancedb_dir):
        tbl = lancedb.connect(str(lancedb_dir)).open_table(name)
        for v in _versions(tbl):
            tbl.checkout(v)
            t = _lance_rows(tbl, f"doc_id = {sql_literal(doc_id)}",
                            ["chunk_id", "doc_version", "title", "span_start", "body", "vector"])
            for cid, dv, title, start, body, vec in zip(*(t.column(c).to_pylist() for c in t.column_names)):
                chunk_ids.add(cid)
                titles.append(title)
                bodies.setdefault(dv, []).append((start, body))
                vectors.setdefault(name, {})[cid] = [round(float(x), 6) for x in vec]
    for parts in bodies.values():  # one text per document version, from its chunks
        texts.append("\n".join(b for _, b in sorted(parts)))
    return {"texts": [t for t in dict.fromkeys(texts) if t], "titles": [t for t in dict.fromkeys(titles) if t],
            "chunk_ids": sorted(chunk_ids), "known": known or bool(chunk_ids), "source_system": source_system,
            "vectors": {t: list(v.values())[:20] for t, v in vectors.items()}}


def _probes(con: duckdb.DuckDBPyConnection, doc_id: str, material: dict[str, Any]) -> Probes:
    others: list[str] = []
    if has_table(con, "documents"):
        for r in con.execute("SELECT doc_id, object_id, title, text FROM documents WHERE doc_id <> ?",
                             [doc_id]).fetchall():
            others.extend(r)
    big = "\n\x00\n".join(others).lower()
    phrases: list[str] = []
    for text in material["texts"]:
        phrases += distinctive_phrases(text, big, limit=3)
    for title in material["titles"]:
        phrases += distinctive_phrases(title, big, limit=1, min_chars=15)
    tokens: list[str] = []
    exclude = doc_id.lower()
    for text in material["texts"]:
        tokens += distinctive_tokens(text, big, exclude)
    return Probes(phrases=list(dict.fromkeys(phrases))[:10], tokens=list(dict.fromkeys(tokens))[:8],
                  needles=_needles(material["texts"], material["titles"]), vectors=material["vectors"])


# ------------------------------------------------------------------ clearing (idempotent)

def _clear_registry(con: duckdb.DuckDBPyConnection, doc_id: str, now: dt.datetime) -> dict[str, int]:
    out = {}
    with index_store.Txn(con):
        if has_table(con, "documents"):
            out["documents_redacted"] = con.execute(
                "UPDATE documents SET text = '', title = '', metadata_json = '{}', updated_at = ?, "
                "deleted_at = coalesce(deleted_at, ?) "
                "WHERE doc_id = ? AND (text <> '' OR title <> '' OR metadata_json <> '{}' OR deleted_at IS NULL)",
                [now, now, doc_id]).fetchall()[0][0]
        if has_table(con, "definitions"):
            out["definitions_deleted"] = con.execute(
                "DELETE FROM definitions WHERE evidence_id = ?", [doc_id]).fetchall()[0][0]
        if has_table(con, "quarantine"):
            out["quarantine_deleted"] = con.execute(
                "DELETE FROM quarantine WHERE doc_id = ? AND NOT coalesce(list_bool_and("
                "list_transform(reasons, lambda r: starts_with(r, 'forgotten on '))), false)", [doc_id]).fetchall()[0][0]
        if has_table(con, "corpus_files"):
            out["corpus_files_deleted"] = corpus_cache.forget_doc(con, doc_id)
        if has_table(con, "index_row_memo"):
            out["row_memo_deleted"] = con.execute(
                "DELETE FROM index_row_memo WHERE doc_id = ?", [doc_id]).fetchall()[0][0]
    return out


def _clear_lineage(con: duckdb.DuckDBPyConnection, doc_id: str, chunk_ids: list[str],
                   now: dt.datetime) -> dict[str, int]:
    out = {"chunk_lineage_marked": 0, "embedding_lineage_deleted": 0}
    if not index_store.has_schema(con):
        return out
    with index_store.Txn(con):
        out["chunk_lineage_marked"] = con.execute(
            "UPDATE chunk_lineage SET deleted_at = ? WHERE doc_id = ? AND deleted_at IS NULL",
            [now, doc_id]).fetchall()[0][0]
        if chunk_ids:
            con.register("_canon_forget_ids", pa.table({"chunk_id": chunk_ids}))
            try:
                out["embedding_lineage_deleted"] = con.execute(
                    "DELETE FROM embedding_lineage WHERE chunk_id IN (SELECT chunk_id FROM _canon_forget_ids)"
                ).fetchall()[0][0]
            finally:
                con.unregister("_canon_forget_ids")
    return out


def _holding_versions(tbl, flt: str) -> list[int]:
    out = []
    for v in _versions(tbl):
        tbl.checkout(v)
        if tbl.count_rows(flt):
            out.append(v)
    tbl.checkout_latest()
    return out


def _rewrite(tbl, rows: pa.Table, doc_id: str, chunk_ids: list[str]) -> tuple[pa.Table, int]:
    mask = pc.not_equal(rows.column("doc_id"), doc_id)
    if chunk_ids:
        mask = pc.and_(mask, pc.invert(pc.is_in(rows.column("chunk_id"), value_set=pa.array(chunk_ids))))
    kept = rows.filter(mask)
    # overwrite = fresh data files: no deletion vectors over bytes that still hold the text
    tbl.add(kept, mode="overwrite")
    index.build_fts(tbl)
    return kept, rows.num_rows - kept.num_rows


def _clear_table(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, name: str, doc_id: str,
                 chunk_ids: list[str], *, run_id: str, deletion_id: str) -> dict[str, Any]:
    flt = _doc_filter(doc_id, chunk_ids)
    db = lancedb.connect(str(lancedb_dir))
    holding = _holding_versions(db.open_table(name), flt)
    out: dict[str, Any] = {"versions_holding": holding, "rows_removed": 0, "revision": None}
    if not holding:
        return out
    with index.publish_lock(lancedb_dir):
        index.repair(con, lancedb_dir, run_id=run_id)
        tbl = db.open_table(name)
        served = index_store.served_revision(con) if index_store.has_schema(con) else None
        if served is not None and served["lance_table"] == name:
            if int(served["lance_version"]) in holding:
                snap = db.open_table(name)
                snap.checkout(int(served["lance_version"]))
                kept, removed = _rewrite(tbl, snap.to_arrow(), doc_id, chunk_ids)
                seq = index_store.next_seq(con)
                rid = index_store.revision_id(seq, name, run_id, "forget", doc_id)
                index_store.copy_revision(
                    con, served, revision_id=rid, seq=seq, lance_version=tbl.version,
                    policy_revision=served["policy_revision"], run_id=run_id,
                    note=f"forget {deletion_id}: {served['revision_id']} rewritten without {removed} row(s)")
                docs = len(set(kept.column("doc_id").to_pylist()))
                index_store.set_row_counts(con, rid, rows=kept.num_rows, docs=docs)
                out["revision"] = rid
                out["rows_removed"] = removed
            # else: only older versions (or a failed publish's residue) hold it; cleanup below
            # rewrites from the served version and prunes the rest.
        elif tbl.version in holding:
            # A table kept for rollback, or a migration candidate: its latest version is what
            # a rollback or cut-over would serve.
            kept, removed = _rewrite(tbl, tbl.to_arrow(), doc_id, chunk_ids)
            out["rows_removed"] = removed
    # Prune every older version (the lock is re-taken inside): time travel can no longer reach the rows.
    out["cleanup"] = {k: v for k, v in index.cleanup(lancedb_dir, dt.timedelta(0), con=con, table=name,
                                                      run_id=run_id).items() if k != "repaired"}
    return out


def _clear_lancedb(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, doc_id: str, chunk_ids: list[str], *,
                   run_id: str, deletion_id: str) -> dict[str, Any]:
    names = _table_names(lancedb_dir)
    served = index_store.served_revision(con) if index_store.has_schema(con) else None
    first = [served["lance_table"]] if served is not None and served["lance_table"] in names else []
    return {name: _clear_table(con, lancedb_dir, name, doc_id, chunk_ids, run_id=run_id, deletion_id=deletion_id)
            for name in first + [n for n in names if n not in first]}


def _scrub_value(obj: Any, doc_id: str, needles: list[str]) -> Any:
    if isinstance(obj, dict):
        out = {k: _scrub_value(v, doc_id, needles) for k, v in obj.items()}
        if out.get("evidence_id") == doc_id:
            for k in ("claim", "supported_span"):
                if k in out:
                    out[k] = REDACTED
        if out.get("doc_id") == doc_id and "title" in out:
            out["title"] = REDACTED
        ev = out.get("evidence")
        if (isinstance(ev, list) and isinstance(out.get("answer"), str)
                and any(isinstance(e, dict) and e.get("doc_id") == doc_id for e in ev)):
            out["answer"] = f"[removed: cited forgotten document {doc_id}]"
        return out
    if isinstance(obj, list):
        return [_scrub_value(v, doc_id, needles) for v in obj]
    if isinstance(obj, str):
        for n in needles:
            if n in obj:
                obj = obj.replace(n, REDACTED)
    return obj


def _scrub_text(text: str, needles: list[str]) -> str:
    for n in needles:
        text = text.replace(n, REDACTED)
    return text


def _scrub_eval(paths: CanonPaths, doc_id: str, probes: Probes) -> dict[str, Any]:
    """Evaluation artefacts keep ids (doc ids, chunk ids, hashes) but lose the
    cited text: claims, spans, titles and answers that used the document."""
    root = paths.home / "eval"
    needles = sorted(set(probes.needles) | set(probes.phrases), key=len, reverse=True)
    changed = []
    if not root.exists():
        return {"files_scrubbed": []}
    for p in sorted(x for x in root.rglob("*") if x.is_file()):
        try:
            raw = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        new = raw
        if p.suffix == ".json":
            try:
                new = json.dumps(_scrub_value(json.loads(raw), doc_id, needles), indent=2, default=str)
            except ValueError:
                new = _scrub_text(raw, needles)
        elif p.suffix == ".jsonl":
            lines = []
            for line in raw.splitlines():
                try:
                    lines.append(json.dumps(_scrub_value(json.loads(line), doc_id, needles)) if line.strip() else line)
                except ValueError:
                    lines.append(_scrub_text(line, needles))
            new = "\n".join(lines) + ("\n" if raw.endswith("\n") else "")
        else:
            new = _scrub_text(raw, needles)
        if new != raw:
            tmp = p.with_name(p.name + ".scrub")
            tmp.write_text(new, encoding="utf-8")
            os.replace(tmp, p)
            changed.append(str(p.relative_to(paths.home)))
    return {"files_scrubbed": changed}


def _purge_cache(paths: CanonPaths, doc_id: str, chunk_ids: list[str], probes: Probes) -> dict[str, Any]:
    """Caches are rebuildable: any cached file that mentions the document goes."""
    root = paths.home / "cache"
    removed = []
    if root.exists():
        marks = [doc_id.encode(), *(c.encode() for c in chunk_ids), *(n.encode() for n in probes.phrases)]
        for p in sorted(x for x in root.rglob("*") if x.is_file()):
            data = p.read_bytes()
            if any(m in data for m in marks):
                p.unlink()
                removed.append(str(p.relative_to(paths.home)))
    return {"files_removed": removed}


def compact_duckdb(connect: Connect, db_path: Path) -> dict[str, Any]:
    """Rewrite the DuckDB file so deleted strings leave its free blocks too.

    DuckDB marks deleted rows' blocks free but does not overwrite them, so the
    bytes stay in the file. COPY FROM DATABASE writes a fresh file that is
    swapped in once no connection in this process holds the old one (another
    process cannot: we hold the write lock while copying).
    """
    db_path = Path(db_path)
    tmp = db_path.with_name(db_path.name + ".compact")
    tmp.unlink(missing_ok=True)
    with opened(connect) as con:
        con.execute("CHECKPOINT")
        name = con.execute("SELECT current_database()").fetchall()[0][0]
        con.execute(f"ATTACH {sql_literal(str(tmp))} AS canon_compact")
        try:
            con.execute(f'COPY FROM DATABASE "{name}" TO canon_compact')
        finally:
            con.execute("DETACH canon_compact")
    wal = db_path.with_name(db_path.name + ".wal")
    try:
        probe = duckdb.connect(str(db_path), config={"custom_user_agent": "canon-compaction-probe"})
    except duckdb.Error:
        tmp.unlink(missing_ok=True)
        return {"compacted": False, "reason": "another connection in this process still holds the file"}
    probe.close()
    if wal.exists():
        tmp.unlink(missing_ok=True)
        return {"compacted": False, "reason": "a write-ahead log is pending on the file"}
    before = db_path.stat().st_size
    os.replace(tmp, db_path)
    return {"compacted": True, "bytes_before": before, "bytes_after": db_path.stat().st_size}


# ------------------------------------------------------------------ verification

def _string_columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    rows = con.execute(
        "SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ? "
        "AND schema_name = current_schema() AND database_name = current_database()", [table]).fetchall()
    return [c for c, t in rows if "VARCHAR" in t or t.startswith(("STRUCT", "MAP", "JSON")) or t.endswith("[]")]


def _verify_duckdb(con: duckdb.DuckDBPyConnection, doc_id: str, chunk_ids: list[str],
                   probes: Probes) -> tuple[list[Finding], list[Finding], dict[str, int]]:
    findings: list[Finding] = []
    sources: list[Finding] = []
    info: dict[str, int] = {}
    tables = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE schema_name = current_schema() "
        "AND database_name = current_database() ORDER BY 1").fetchall()]
    id_regex = "|".join(re.escape(c) for c in chunk_ids)
    for t in tables:
        cols = _string_columns(con, t)
        if not cols:
            continue
        target = sources if t in SOURCE_TABLES else findings
        for i, phrase in enumerate(probes.phrases):
            pred = " OR ".join(f'contains(lower(CAST("{c}" AS VARCHAR)), ?)' for c in cols)
            n = con.execute(f'SELECT count(*) FROM "{t}" WHERE {pred}', [phrase.lower()] * len(cols)).fetchall()[0][0]
            if n:
                target.append(Finding(f"duckdb:{t}", "phrase", n, probes.label(i)))
        if id_regex and t not in ID_TABLES and t not in SOURCE_TABLES:
            pred = " OR ".join(f'regexp_matches(CAST("{c}" AS VARCHAR), ?)' for c in cols)
            n = con.execute(f'SELECT count(*) FROM "{t}" WHERE {pred}', [id_regex] * len(cols)).fetchall()[0][0]
            if n:
                findings.append(Finding(f"duckdb:{t}", "chunk_id", n))
    # Structured checks of the stores that keep ids.
    checks = {
        "documents": ("SELECT count(*) FROM documents WHERE doc_id = ? AND (text <> '' OR title <> '' "
                      "OR metadata_json <> '{}' OR deleted_at IS NULL)"),
        "definitions": "SELECT count(*) FROM definitions WHERE evidence_id = ?",
        "quarantine": ("SELECT count(*) FROM quarantine WHERE doc_id = ? AND NOT coalesce(list_bool_and("
                       "list_transform(reasons, lambda r: starts_with(r, 'forgotten on '))), false)"),
        "chunk_lineage": "SELECT count(*) FROM chunk_lineage WHERE doc_id = ? AND deleted_at IS NULL",
    }
    for t, sql in checks.items():
        if t in tables:
            n = con.execute(sql, [doc_id]).fetchall()[0][0]
            if n:
                findings.append(Finding(f"duckdb:{t}", "row", n))
    if "embedding_lineage" in tables and chunk_ids:
        n = con.execute(f"SELECT count(*) FROM embedding_lineage WHERE chunk_id IN {sql_list(chunk_ids)}").fetchall()[0][0]
        if n:
            findings.append(Finding("duckdb:embedding_lineage", "chunk_id", n))
    if "answer_log" in tables:
        info["answer_log_citations_kept"] = con.execute(
            "SELECT count(*) FROM answer_log WHERE contains(cited_json, ?)", [json.dumps(doc_id)]).fetchall()[0][0]
    return findings, sources, info


def _verify_lancedb(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, doc_id: str, chunk_ids: list[str],
                    probes: Probes, embedder=None) -> tuple[list[Finding], dict[str, Any]]:
    from lancedb.query import MatchQuery, PhraseQuery

    findings: list[Finding] = []
    info: dict[str, Any] = {"versions_scanned": 0, "fts_queries": 0, "vector_queries": 0}
    flt = _doc_filter(doc_id, chunk_ids)
    db = lancedb.connect(str(lancedb_dir)) if Path(lancedb_dir).exists() else None
    for name in _table_names(lancedb_dir):
        tbl = db.open_table(name)
        for v in _versions(tbl):
            tbl.checkout(v)
            info["versions_scanned"] += 1
            n = tbl.count_rows(flt)
            if n:
                findings.append(Finding(f"lancedb:{name}@{v}", "chunk_id", n))
            if probes.phrases:
                t = tbl.search().select(["title", "header", "text", "body"]).limit(None).to_arrow()
                blob = [" ".join(str(x or "") for x in row).lower()
                        for row in zip(*(t.column(c).to_pylist() for c in t.column_names))]
                for i, p in enumerate(probes.phrases):
                    hits = sum(p.lower() in b for b in blob)
                    if hits:
                        findings.append(Finding(f"lancedb:{name}@{v}", "phrase", hits, probes.label(i)))
        tbl.checkout_latest()
        if not any(ix.index_type == "FTS" for ix in tbl.list_indices()):
            continue
        for i, p in enumerate(probes.phrases):
            info["fts_queries"] += 1
            rows = (tbl.search(PhraseQuery(p.lower(), "text"), query_type="fts")
                    .select(["doc_id", "text", "_score"]).limit(50).to_list())
            hits = [r for r in rows if r["doc_id"] == doc_id or p.lower() in (r["text"] or "").lower()]
            if hits:
                findings.append(Finding(f"lancedb-fts:{name}", "phrase", len(hits), probes.label(i)))
        for tok in probes.tokens:
            info["fts_queries"] += 1
            rows = (tbl.search(MatchQuery(tok, "text"), query_type="fts")
                    .select(["doc_id", "text", "_score"]).limit(50).to_list())
            hits = [r for r in rows if r["doc_id"] == doc_id or re.search(rf"\b{re.escape(tok)}\b", (r["text"] or "").lower())]
            if hits:
                findings.append(Finding(f"lancedb-fts:{name}", "token", len(hits),
                                        "token sha256:" + hashlib.sha256(tok.encode()).hexdigest()[:12]))
    # Vector search with the deleted rows' own vectors, in every table they came
    # from: a reachable row would come back first (distance 0).
    for name, vecs in probes.vectors.items():
        if db is None or name not in _table_names(lancedb_dir):
            continue
        tbl = db.open_table(name)
        for vec in vecs:
            info["vector_queries"] += 1
            rows = (tbl.search(vec, vector_column_name="vector", query_type="vector").distance_type("cosine")
                    .select(["doc_id", "chunk_id", "_distance"]).limit(20).to_list())
            hits = [r for r in rows if r["doc_id"] == doc_id or r["chunk_id"] in set(chunk_ids)]
            if hits:
                findings.append(Finding(f"lancedb-vector:{name}", "chunk_id", len(hits)))
    # Optionally also the served model on the deleted phrases (loads the model).
    served = index_store.served_revision(con) if index_store.has_schema(con) else None
    if embedder is not None and served is not None and probes.phrases and db is not None \
            and embedder.identity.model_id == served["embedding_model_id"]:
        tbl = db.open_table(served["lance_table"])
        tbl.checkout(int(served["lance_version"]))
        for i, vec in enumerate(embedder.embed(probes.phrases)):
            info["vector_queries"] += 1
            rows = (tbl.search(vec, vector_column_name="vector", query_type="vector").distance_type("cosine")
                    .select(["doc_id", "chunk_id", "_distance"]).limit(50).to_list())
            hits = [r for r in rows if r["doc_id"] == doc_id or r["chunk_id"] in set(chunk_ids)]
            if hits:
                findings.append(Finding(f"lancedb-vector:{served['revision_id']}", "chunk_id", len(hits),
                                        probes.label(i)))
    return findings, info


def _scan_file(path: Path, marks: list[tuple[str, bytes]]) -> dict[str, int]:
    hits: dict[str, int] = {}
    keep = max((len(m) for _, m in marks), default=1)
    tail = b""
    with open(path, "rb") as fh:
        while True:
            block = fh.read(8 << 20)
            if not block:
                break
            data = tail + block
            for label, m in marks:
                if m in data:
                    hits[label] = hits.get(label, 0) + 1
            tail = data[-keep:]
    return hits


def _verify_files(paths: CanonPaths, doc_id: str, chunk_ids: list[str], probes: Probes,
                  source_roots: list[Path] = ()) -> tuple[list[Finding], list[Finding], int]:
    """Every file under CANON_HOME: the deleted phrases (anywhere), and under
    the LanceDB directory also the chunk ids and distinctive words. Hits in
    upstream sources (dbt artifacts, the warehouse, a corpus folder kept under
    CANON_HOME) are reported as source copies: the source owns them."""
    findings: list[Finding] = []
    sources: list[Finding] = []
    home = paths.home
    roots = [home / s for s in SOURCE_PATHS] + [Path(r).resolve() for r in source_roots]
    inflight = home.joinpath(*INFLIGHT_DIR)
    phrase_marks = [(probes.label(i), p.encode()) for i, p in enumerate(probes.phrases)]
    lance_marks = phrase_marks + [(f"chunk_id {c}", c.encode()) for c in chunk_ids] + [
        ("token sha256:" + hashlib.sha256(t.encode()).hexdigest()[:12], t.encode()) for t in probes.tokens]
    scanned = 0
    if not home.exists():
        return findings, sources, scanned
    for p in sorted(x for x in home.rglob("*") if x.is_file() and not x.is_symlink()):
        if inflight in p.parents:
            continue
        rel = p.relative_to(home)
        in_lance = paths.lancedb_dir in p.parents
        marks = lance_marks if in_lance else phrase_marks
        if not marks:
            continue
        scanned += 1
        for label, n in _scan_file(p, marks).items():
            f = Finding(f"file:{rel.as_posix()}", "chunk_id" if label.startswith("chunk_id") else "phrase", n,
                        label if not label.startswith("chunk_id") else "")
            is_source = any(p == r or r in p.parents for r in roots)
            (sources if is_source else findings).append(f)
    return findings, sources, scanned


def verify(con: duckdb.DuckDBPyConnection, paths: CanonPaths, doc_id: str, chunk_ids: list[str], probes: Probes,
           *, embedder=None, timings: "_Timer | None" = None) -> tuple[list[Finding], dict[str, Any]]:
    """Query every store for the chunk ids and the distinctive phrases.
    Returns (findings — empty when the deletion is complete, details)."""
    step = timings or _Timer({})
    with step("verify_duckdb"):
        f_db, src_db, info_db = _verify_duckdb(con, doc_id, chunk_ids, probes)
    with step("verify_lancedb"):
        f_lance, info_lance = _verify_lancedb(con, paths.lancedb_dir, doc_id, chunk_ids, probes, embedder)
    corpus_root = registry.get_setting(con, "corpus_root") if has_table(con, "settings") else None
    with step("verify_files"):
        f_files, src_files, scanned = _verify_files(paths, doc_id, chunk_ids, probes,
                                                    [Path(corpus_root)] if corpus_root else [])
    details = {
        "probes": {"phrases": len(probes.phrases), "tokens": len(probes.tokens), "chunk_ids": len(chunk_ids)},
        "duckdb": info_db, "lancedb": info_lance, "files_scanned": scanned,
        "source_copies": [asdict(f) for f in src_db + src_files],
    }
    return f_db + f_lance + f_files, details


# ------------------------------------------------------------------ the deletion

def _row(con: duckdb.DuckDBPyConnection, doc_id: str) -> dict[str, Any] | None:
    cur = con.execute("SELECT * FROM deletions WHERE doc_id = ?", [doc_id])
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    return dict(zip(cols, rows[0])) if rows else None


def _result(row: dict[str, Any], resumed: bool, findings: list[Finding]) -> ForgetResult:
    return ForgetResult(
        deletion_id=row["deletion_id"], doc_id=row["doc_id"], state=row["state"], verified=bool(row["verified"]),
        requested_at=row["requested_at"], completed_at=row["completed_at"], duration_seconds=row["duration_seconds"],
        promise_hours=row["promise_hours"], within_promise=row["within_promise"], attempts=row["attempts"],
        resumed=resumed, chunk_ids=list(row["chunk_ids"]), details=json.loads(row["details_json"]),
        findings=findings)


def forget(
    doc_id: str,
    *,
    paths: CanonPaths | None = None,
    connect: Connect | None = None,
    run_id: str | None = None,
    embedder=None,
    emitter: LineageEmitter | None = None,
    parent: ParentRun | None = None,
) -> ForgetResult:
    """Delete `doc_id` from every store, verify, and record it in `deletions`.

    `connect` opens the Canon DuckDB (a zero-argument context manager; default
    `canon.registry.store.connect` on $CANON_HOME/canon.duckdb; Dagster passes its
    DuckDBResource's `get_connection`). Raises `DeletionNotVerified` when
    verification finds anything, CanonInputError for an unknown doc_id.
    """
    if not doc_id or not doc_id.strip():
        raise CanonInputError("--doc-id", "a document id is required", field="doc_id")
    paths = (paths or CanonPaths.from_env()).ensure()
    connect = connect or db.writer(paths.canon_db)
    run_id = run_id or str(uuid.uuid4())
    own = emitter is None
    em = emitter or LineageEmitter(TransportConfig.from_env(canon_home=paths.home))
    outputs: list[DatasetRef] = [canon_table(t) for t in (
        "documents", "definitions", "quarantine", "chunk_lineage", "embedding_lineage", "deletions")]
    try:
        with em.run("canon_forget", outputs=outputs, parent=parent) as handle:
            result = _forget(doc_id, paths, connect, run_id, embedder)
            for table, t in result.details.get("lancedb", {}).items():
                handle.add_output(DatasetRef("lancedb://canon", table))
                if t.get("revision"):
                    handle.add_output(index_revision(t["revision"]))
            handle.set_run_facets({"canonDeletion": DeletionRunFacet(
                docId=doc_id, deletionId=result.deletion_id, state=result.state, verified=result.verified,
                chunks=len(result.chunk_ids), durationSeconds=result.duration_seconds,
                promiseHours=result.promise_hours, withinPromise=result.within_promise)})
            if not result.verified:
                where = sorted({f.store for f in result.findings})
                raise DeletionNotVerified(
                    f"deletion of {doc_id} NOT verified: {len(result.findings)} finding(s) in {', '.join(where)}; "
                    f"the next `canon forget --doc-id {doc_id}` resumes it", result)
    finally:
        if own:
            em.close()
    return result


def _forget(doc_id: str, paths: CanonPaths, connect: Connect, run_id: str, embedder) -> ForgetResult:
    inflight = _inflight_path(paths, doc_id)
    with opened(connect) as con:
        ensure_schema(con)
        row = _row(con, doc_id)
        material = _material(con, paths.lancedb_dir, doc_id)
        if row is None and not material["known"]:
            raise CanonInputError("--doc-id", f"unknown document {doc_id!r}: not in the registry, the index "
                                              f"or the quarantine", field="doc_id")
        # Probes: from the in-flight file of an interrupted run, else from what is still held.
        if inflight.exists():
            saved = json.loads(inflight.read_text(encoding="utf-8"))
            probes = Probes(**saved["probes"])
            fresh = _probes(con, doc_id, material) if material["texts"] else Probes()
            probes = Probes(list(dict.fromkeys(probes.phrases + fresh.phrases)),
                            list(dict.fromkeys(probes.tokens + fresh.tokens)),
                            sorted(set(probes.needles) | set(fresh.needles), key=len, reverse=True),
                            {**fresh.vectors, **probes.vectors})
        else:
            probes = _probes(con, doc_id, material)
        _write_private(inflight, {"doc_id": doc_id, "probes": asdict(probes)})
        now = utcnow()
        resumed = row is not None
        if row is None:
            chunk_ids = material["chunk_ids"]
            con.execute(
                "INSERT INTO deletions VALUES (?, ?, 'requested', ?, NULL, NULL, NULL, ?, NULL, false, 1, ?, ?, ?, ?, ?, NULL)",
                [f"del-{ids.h(doc_id, now.isoformat(), n=16)}", doc_id, now,
                 _promise_hours(material["source_system"]), run_id, material["source_system"], chunk_ids,
                 probes.hashes(), json.dumps({})])
        else:
            chunk_ids = sorted(set(row["chunk_ids"]) | set(material["chunk_ids"]))
            con.execute("UPDATE deletions SET attempts = attempts + 1, run_id = ?, chunk_ids = ?, "
                        "probe_sha256 = list_distinct(list_concat(probe_sha256, ?)) WHERE doc_id = ?",
                        [run_id, chunk_ids, probes.hashes(), doc_id])
        row = _row(con, doc_id)
    _checkpoint("requested")

    details: dict[str, Any] = {"resumed_from": row["state"] if resumed else None, "timings_s": {}}
    step = _Timer(details["timings_s"])
    with step("registry"), opened(connect) as con:
        details["registry"] = _clear_registry(con, doc_id, utcnow())
    _checkpoint("registry_cleared")
    with step("lineage"), opened(connect) as con:
        details["lineage"] = _clear_lineage(con, doc_id, chunk_ids, utcnow())
    _checkpoint("lineage_cleared")
    with step("lancedb"), opened(connect) as con:
        details["lancedb"] = _clear_lancedb(con, paths.lancedb_dir, doc_id, chunk_ids, run_id=run_id,
                                            deletion_id=row["deletion_id"])
    _checkpoint("index_cleared")
    with step("eval_and_cache"):
        details["eval"] = _scrub_eval(paths, doc_id, probes)
        details["cache"] = _purge_cache(paths, doc_id, chunk_ids, probes)
    with opened(connect) as con:
        con.execute("UPDATE deletions SET state = CASE WHEN state = 'requested' THEN 'stores_cleared' ELSE state END, "
                    "stores_cleared_at = coalesce(stores_cleared_at, ?), details_json = ? WHERE doc_id = ?",
                    [utcnow(), json.dumps(details, default=str), doc_id])
    _checkpoint("stores_cleared")
    with step("duckdb_rewrite"):
        details["duckdb_file"] = compact_duckdb(connect, paths.canon_db)
    _checkpoint("compacted")

    with step("verify"), opened(connect) as con:
        findings, vdetails = verify(con, paths, doc_id, chunk_ids, probes, embedder=embedder, timings=step)
        details["verification"] = {**vdetails, "findings": [asdict(f) for f in findings]}
        now = utcnow()
        if findings:
            con.execute("UPDATE deletions SET verified = false, details_json = ?, error = ? WHERE doc_id = ?",
                        [json.dumps(details, default=str),
                         f"{len(findings)} finding(s): " + "; ".join(f"{f.store} {f.what} x{f.count}" for f in findings)[:2000],
                         doc_id])
        else:
            first = row["completed_at"] is None
            completed = now if first else row["completed_at"]
            duration = (completed - row["requested_at"]).total_seconds()
            details["verification"]["verified_at"] = now.isoformat() + "Z"
            con.execute(
                "UPDATE deletions SET state = 'verified', verified = true, completed_at = ?, duration_seconds = ?, "
                "within_promise = ?, details_json = ?, error = NULL WHERE doc_id = ?",
                [completed, duration, duration <= row["promise_hours"] * 3600, json.dumps(details, default=str),
                 doc_id])
        row = _row(con, doc_id)
    if not findings:
        inflight.unlink(missing_ok=True)
    return _result(row, resumed, findings)


def deletions(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Every deletion request, newest first (for reports and the CLI)."""
    if not has_table(con, "deletions"):
        return []
    cur = con.execute("SELECT * EXCLUDE (details_json) FROM deletions ORDER BY requested_at DESC")
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]
