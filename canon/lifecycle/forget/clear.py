"""Clearing a forgotten document from every store Canon writes: registry,
lineage, every LanceDB table (rewritten, then old versions pruned),
evaluation artefacts and caches. Each step is idempotent, so an interrupted
deletion simply runs again (docs/design.md, "Deletion that provably
propagates")."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from canon.ask.understanding import catalog_store
from canon.core.config import CanonPaths
from canon.core.db import has_table
from canon.index import lance
from canon.index import publish as index
from canon.index import revisions as index_store
from canon.lifecycle.forget.probes import Probes, doc_filter
from canon.registry import corpus_cache

REDACTED = "[forgotten]"

def clear_registry(con: duckdb.DuckDBPyConnection, doc_id: str, now: dt.datetime) -> dict[str, int]:
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
    if has_table(con, "ask_catalog_names"):
        # The stored catalog holds the document's title words: rebuilt without it.
        out["ask_catalog_objects"] = catalog_store.refresh_catalog(con)
    return out

def clear_lineage(con: duckdb.DuckDBPyConnection, doc_id: str, chunk_ids: list[str],
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
    for v in lance.versions(tbl):
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
    lance.build_fts(tbl)
    return kept, rows.num_rows - kept.num_rows

def _clear_table(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, name: str, doc_id: str,
                 chunk_ids: list[str], *, run_id: str, deletion_id: str) -> dict[str, Any]:
    flt = doc_filter(doc_id, chunk_ids)
    db = lance.connect(lancedb_dir)
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

def clear_lancedb(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, doc_id: str, chunk_ids: list[str], *,
                   run_id: str, deletion_id: str) -> dict[str, Any]:
    names = lance.table_names(lancedb_dir)
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

def scrub_eval(paths: CanonPaths, doc_id: str, probes: Probes) -> dict[str, Any]:
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

def purge_cache(paths: CanonPaths, doc_id: str, chunk_ids: list[str], probes: Probes) -> dict[str, Any]:
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
