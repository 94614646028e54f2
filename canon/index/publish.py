"""The LanceDB chunk index, published as revisions recorded in DuckDB.

One module on purpose: repair, publish and cleanup are one protocol over the same lock,
outbox and checkpoints, and read in order they explain each other (LanceDB helpers:
canon/index/lance.py; the revision rows: canon/index/revisions.py).

One LanceDB table holds the served chunks. Every publish writes new LanceDB
table versions and records the final one as an *index revision* in DuckDB
(`index_revisions`): building -> ready, or failed. Queries pin the LanceDB
version of the latest ready revision (`checkout`), so a publish that fails or
is killed leaves the previous revision serving, and readers never see a
half-written state, whatever the intermediate LanceDB versions hold.

Publish protocol (one publisher at a time, `flock` on a lock file in the
LanceDB directory):

  0. repair: any pending `index_outbox` intent left by a dead publisher is
     completed if LanceDB already holds exactly the intended rows (verified
     by digest), else its revision is marked failed;
  1. chunk + diff the desired rows against the *latest* LanceDB table state
     (not the served one, so residue of a failed publish is reconciled too);
     a document whose rows the table already holds as last derived is not
     chunked again (`canon.index.memo`);
  2. no changes -> no-op (see below);
  3. DuckDB txn: revision 'building' + outbox intent (expected digest and the
     lineage rows to apply);
  4. embed only rows without a reusable vector; validate every vector;
  5. LanceDB: delete stale/changed rows, add new/changed rows, rebuild the
     FTS index -> final version;
  6. DuckDB txn: lineage rows from the outbox, revision ready, outbox applied.

No-op semantics (decided): when nothing changed — same rows, same embedding
model, the latest LanceDB version is the served one — publish writes nothing
to LanceDB and creates no revision; it returns the served revision with
`noop=True`. If only `policy_revision` differs, a new ready revision is
recorded that points at the *same* LanceDB version (no LanceDB write), so each
revision still names the policy it was published under.

Incremental cases: unchanged rows are skipped; metadata-only changes
(status, roles, dates, title in the header, ...) rewrite rows and reuse the
vector found under the same `embedding_key`; changed text produces new chunk
ids that are embedded, and the old ids leave the table; a document absent
from the input loses all its rows. `row.index_revision` is the revision that
last wrote the row (not every revision rewrites every row).

`cleanup()` rewrites the served rows into fresh files and prunes old LanceDB
versions, so deleted text is gone from time travel and from disk.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import warnings
from pathlib import Path
from typing import Any, Iterator

import duckdb
import numpy as np

from canon.core import file_lock
from canon.core.db import sql_list, sql_literal
from canon.core.errors import CanonInputError, CanonRunError
from canon.index import memo as row_memo
from canon.index.chunking import DEFAULT_CHUNKER, chunk_document
from canon.index.embedding.base import Embedder, validate_vectors
from canon.index.lance import build_fts, connect, open_table, scan
from canon.index.revisions import (  # noqa: F401  (PublishResult, DEFAULT_TABLE re-exported)
    DEFAULT_TABLE,  # noqa: F401
    LINEAGE_FIELDS,
    PublishResult,
    Txn,
    abandon,
    apply_outbox,
    copy_revision,
    ensure_schema,
    get_revision,
    insert_outbox,
    insert_revision,
    mark_pruned,
    next_seq,
    note_completed_by_repair,
    pending_outbox,
    served_revision,
    utcnow,
)
from canon.index.revisions import (
    revision_id as new_revision_id,  # a publish names its own local `revision_id`
)
from canon.index.rows import (
    STATE_COLUMNS,
    SourceUriOf,
    build_row,
    rows_to_arrow,
    state_digest,
)
from canon.index.search import Hit, IndexNotReady, search  # noqa: F401  (re-exported)
from canon.models.documents import Document

LOCK_NAME = ".canon-publish.lock"
_IN_BATCH = 500
_FOREVER = dt.timedelta(days=36500)


class PublisherBusy(CanonRunError):
    """Another process holds the publish lock of this LanceDB directory."""


def _checkpoint(name: str) -> None:
    """Named points in the publish protocol; tests replace this to pause or
    crash a publisher at an exact step. Does nothing in production."""


# ------------------------------------------------------------------ locking

@contextlib.contextmanager
def publish_lock(lancedb_dir: str | os.PathLike, *, timeout: float = 600.0) -> Iterator[None]:
    """Exclusive, process-crash-safe (the kernel drops it with the process)."""
    d = Path(lancedb_dir)
    d.mkdir(parents=True, exist_ok=True)
    path = d / LOCK_NAME

    def busy(holder: str) -> PublisherBusy:
        return PublisherBusy(f"{path}: another publisher (pid {holder}) holds the index lock; "
                             f"waited {timeout:.0f}s. Only one publish or cleanup may run at a time.")

    with file_lock.exclusive(path, timeout=timeout, busy=busy):
        yield


# ------------------------------------------------------------------ helpers

def _current_state(tbl) -> dict[str, dict[str, str]]:
    if tbl is None:
        return {}
    t = scan(tbl, list(STATE_COLUMNS))
    cols = {c: t.column(c).to_pylist() for c in STATE_COLUMNS}
    return {cid: {c: cols[c][i] for c in STATE_COLUMNS} for i, cid in enumerate(cols["chunk_id"])}


def _fetch_vectors(tbl, chunk_ids: list[str]) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for i in range(0, len(chunk_ids), _IN_BATCH):
        part = chunk_ids[i:i + _IN_BATCH]
        t = scan(tbl, ["chunk_id", "vector"], f"chunk_id IN {sql_list(part)}")
        vecs = t.column("vector").combine_chunks()
        flat = vecs.flatten().to_numpy(zero_copy_only=False).reshape(len(t), -1)
        for cid, v in zip(t.column("chunk_id").to_pylist(), flat):
            out[cid] = v
    return out


def _vector_dims(tbl) -> int:
    return int(tbl.schema.field("vector").type.list_size)


# ------------------------------------------------------------------ repair

def repair(con: duckdb.DuckDBPyConnection, lancedb_dir: str | os.PathLike, *, run_id: str = "repair") -> list[str]:
    """Resolve outbox intents left by a publisher that died. Call under the
    publish lock (publish and cleanup do). Returns the revisions touched."""
    ensure_schema(con)
    touched = []
    db = connect(lancedb_dir)
    for ob in pending_outbox(con):
        tbl = open_table(db, ob["lance_table"])
        state = _current_state(tbl)
        digest = state_digest((cid, s["row_hash"]) for cid, s in state.items())
        if tbl is not None and digest == ob["expected_digest"] and len(state) == ob["expected_rows"]:
            # LanceDB holds exactly the intended rows: finish the publish.
            build_fts(tbl)
            apply_outbox(con, ob, lance_version=tbl.version, run_id=ob["run_id"],
                         resolution=f"completed by repair (run {run_id})")
            note_completed_by_repair(con, ob["revision_id"])
        else:
            abandon(con, ob["revision_id"],
                    f"publisher died before LanceDB held the intended rows; abandoned by repair (run {run_id})")
        touched.append(ob["revision_id"])
    # A 'building' revision without an outbox cannot exist (same txn), but be safe.
    for (rid,) in con.execute(
            "SELECT revision_id FROM index_revisions r WHERE status = 'building' AND NOT EXISTS "
            "(SELECT 1 FROM index_outbox o WHERE o.revision_id = r.revision_id AND o.status = 'pending')").fetchall():
        abandon(con, rid, "building revision without a pending outbox intent")
        touched.append(rid)
    return touched


# ------------------------------------------------------------------ publish

def publish(
    con: duckdb.DuckDBPyConnection,
    lancedb_dir: str | os.PathLike,
    documents: list[Document],
    embedder: Embedder,
    *,
    policy_revision: str,
    run_id: str,
    table: str = DEFAULT_TABLE,
    contract_version: str = "",
    source_uri_of: SourceUriOf | None = None,
    chunker: str = DEFAULT_CHUNKER,
    max_chars: int = 1000,
    overlap: int = 150,
    batch_size: int = 64,
    lock_timeout: float = 600.0,
) -> PublishResult:
    """Publish `documents` (the complete served set) as a new index revision."""
    lancedb_dir = Path(lancedb_dir)
    ensure_schema(con)
    with publish_lock(lancedb_dir, timeout=lock_timeout):
        repaired = repair(con, lancedb_dir, run_id=run_id)
        identity = embedder.identity
        model_id = identity.model_id
        dims = identity.dimensions

        # 1. desired rows, against the latest LanceDB state (an unchanged document's
        #    rows come from the memo when the table still holds them: canon.index.memo)
        db = connect(lancedb_dir)
        tbl = open_table(db, table)
        if tbl is not None and _vector_dims(tbl) != dims:
            raise CanonInputError(
                lancedb_dir / f"{table}.lance",
                f"index table holds {_vector_dims(tbl)}-dimensional vectors but embedder "
                f"{model_id} produces {dims}; publish to a new table name to migrate models",
                field="table")
        current = _current_state(tbl)
        memo = row_memo.load(con, table)
        memo_fresh: dict[str, tuple[str, list[row_memo.MemoChunk]]] = {}
        seen: set[str] = set()
        desired_hash: dict[str, str] = {}           # every desired chunk -> row hash
        desired: dict[str, dict[str, Any]] = {}     # full rows, of the documents rebuilt this time
        lineage: list[list[Any]] = []
        embed_input: dict[str, str] = {}
        for doc in documents:
            if doc.doc_id in seen:
                raise CanonInputError(doc.source_uri or "<documents>", f"duplicate doc_id {doc.doc_id!r}",
                                      field="doc_id")
            seen.add(doc.doc_id)
            uri = source_uri_of(doc) if source_uri_of else (doc.source_uri or doc.doc_id)
            key = row_memo.doc_key(doc, source_uri=uri, model_id=model_id, chunker=chunker, max_chars=max_chars,
                                   overlap=overlap)
            hit = memo.get(doc.doc_id)
            if hit is not None and hit[0] == key and all(
                    cid in current and current[cid]["row_hash"] == rh for cid, rh, _ in hit[1]):
                for cid, rh, rec in hit[1]:
                    desired_hash[cid] = rh
                    lineage.append(list(rec))
                continue
            entry: list[row_memo.MemoChunk] = []
            for ch in chunk_document(doc, chunker=chunker, max_chars=max_chars, overlap=overlap):
                row = build_row(doc, ch, model_id=model_id, source_uri=uri)
                desired[ch.chunk_id] = row
                desired_hash[ch.chunk_id] = row["row_hash"]
                embed_input[ch.chunk_id] = ch.embed_text
                rec = [row[f] if f in row else None for f in LINEAGE_FIELDS]
                lineage.append(rec)
                entry.append((ch.chunk_id, row["row_hash"], list(rec)))
            memo_fresh[doc.doc_id] = (key, entry)
        for rec in lineage:
            rec[LINEAGE_FIELDS.index("contract_version")] = contract_version
        if memo_fresh or set(memo) - seen:
            row_memo.save(con, table, memo_fresh, keep=seen)

        # 2. diff (chunks from the memo are in the table with their hash: neither new nor changed)
        stale = sorted(set(current) - set(desired_hash))
        new = [c for c in desired if c not in current]
        changed = [c for c in desired if c in current and current[c]["row_hash"] != desired[c]["row_hash"]]
        reusable = [c for c in changed
                    if current[c]["embedding_key"] == desired[c]["embedding_key"]
                    and current[c]["embed_hash"] == desired[c]["embed_hash"]]
        to_embed = new + [c for c in changed if c not in set(reusable)]
        served = served_revision(con)

        if (not stale and not new and not changed and tbl is not None and served is not None
                and served["lance_table"] == table and served["lance_version"] == tbl.version
                and served["embedding_model_id"] == model_id):
            result = PublishResult(
                revision_id=served["revision_id"], lance_version=served["lance_version"],
                chunks=len(desired_hash), reused=len(desired_hash), documents=len(documents), noop=True,
                repaired=repaired, rows_rebuilt=len(memo_fresh))
            if served["policy_revision"] != policy_revision:
                seq = next_seq(con)
                rid = new_revision_id(seq, table, run_id, policy_revision)
                copy_revision(con, served, revision_id=rid, seq=seq, lance_version=served["lance_version"],
                              policy_revision=policy_revision, run_id=run_id, note="policy-only")
                result.revision_id = rid
            return result

        # 3. intent
        seq = next_seq(con)
        revision_id = new_revision_id(seq, table, run_id, model_id, policy_revision)
        base_version = tbl.version if tbl is not None else None
        counts = dict(chunks=len(desired_hash), embedded=len(to_embed), reused=len(desired_hash) - len(to_embed),
                      deleted=len(stale), rewritten_metadata_only=len(reusable))
        with Txn(con):
            insert_revision(con, {
                "revision_id": revision_id, "seq": seq, "lance_table": table, "lance_version": None,
                "base_version": base_version, "embedding_model_id": model_id,
                "embedding_identity_json": identity.to_json(), "policy_revision": policy_revision,
                "created_at": utcnow(), "status": "building", "row_count": None,
                "doc_count": len(documents), "chunk_count": len(desired_hash), "embedded_count": len(to_embed),
                "reused_count": counts["reused"], "rewritten_count": len(reusable),
                "deleted_count": len(stale), "run_id": run_id, "note": "publish",
            })
            insert_outbox(
                con, revision_id=revision_id, lance_table=table, base_version=base_version,
                expected_rows=len(desired_hash),
                expected_digest=state_digest(desired_hash.items()),
                payload={"model_id": model_id, "chunks": lineage},
            )
        try:
            _checkpoint("intent_written")
            # 4. vectors: reuse by embedding_key, embed the rest, validate all
            vectors: dict[str, np.ndarray] = _fetch_vectors(tbl, reusable) if reusable else {}
            for i in range(0, len(to_embed), batch_size):
                part = to_embed[i:i + batch_size]
                out = validate_vectors(embedder.embed([embed_input[c] for c in part]), len(part), dims)
                vectors.update(zip(part, out))
                _checkpoint("embedded_batch")
            write_ids = new + changed
            mat = (np.stack([vectors[c] for c in write_ids]) if write_ids
                   else np.zeros((0, dims), dtype=np.float32))
            mat = validate_vectors(mat, len(write_ids), dims)

            # 5. LanceDB writes (none of these versions is served until step 6)
            if tbl is None:
                tbl = db.create_table(table, schema=rows_to_arrow([], mat[:0], dims=dims, revision_id="").schema)
            gone = stale + changed
            for i in range(0, len(gone), _IN_BATCH):
                tbl.delete(f"chunk_id IN {sql_list(gone[i:i + _IN_BATCH])}")
            if write_ids:
                tbl.add(rows_to_arrow([desired[c] for c in write_ids], mat, dims=dims, revision_id=revision_id))
            build_fts(tbl)
            lance_version = tbl.version
            _checkpoint("lance_written")

            # 6. lineage + ready, from the outbox intent
            ob = [o for o in pending_outbox(con) if o["revision_id"] == revision_id][0]
            apply_outbox(con, ob, lance_version=lance_version, run_id=run_id, resolution="applied by publisher")
            _checkpoint("ready")
        except BaseException as exc:
            with contextlib.suppress(Exception):
                abandon(con, revision_id, f"{type(exc).__name__}: {exc}")
            raise
        return PublishResult(revision_id=revision_id, lance_version=lance_version, documents=len(documents),
                             repaired=repaired, rows_rebuilt=len(memo_fresh), **counts)


# ------------------------------------------------------------------ reads

def indexed_hashes(con: duckdb.DuckDBPyConnection, lancedb_dir: str | os.PathLike) -> dict[str, str]:
    """doc_id -> content_hash of what the served revision holds."""
    rev = served_revision(con)
    if rev is None:
        return {}
    tbl = open_table(connect(lancedb_dir), rev["lance_table"])
    if tbl is None:
        return {}
    tbl.checkout(int(rev["lance_version"]))
    t = scan(tbl, ["doc_id", "content_hash"])
    return dict(zip(t.column("doc_id").to_pylist(), t.column("content_hash").to_pylist()))


# ------------------------------------------------------------------ cleanup

def cleanup(
    lancedb_dir: str | os.PathLike,
    older_than: dt.timedelta,
    *,
    con: duckdb.DuckDBPyConnection,
    table: str = DEFAULT_TABLE,
    run_id: str = "cleanup",
    lock_timeout: float = 600.0,
) -> dict[str, Any]:
    """Remove LanceDB versions older than `older_than` and make deleted text
    physically unreadable.

    Lance deletes rows with deletion vectors: the bytes stay in the data file
    until that fragment is rewritten, and the built-in compaction leaves
    fragments with few deletions alone. So when the served version carries
    deletions (or is not the latest, after a failed publish), its rows are
    rewritten into fresh files as a new ready revision with the same content,
    and only then are old versions pruned. The served version is always the
    latest before pruning, and Lance never prunes the latest.
    """
    ensure_schema(con)
    with publish_lock(lancedb_dir, timeout=lock_timeout):
        repaired = repair(con, lancedb_dir, run_id=run_id)
        db = connect(lancedb_dir)
        tbl = open_table(db, table)
        if tbl is None:
            return {"revision_id": None, "rewritten": False, "versions_before": 0, "versions_after": 0,
                    "repaired": repaired}
        served = served_revision(con)
        versions_before = len(tbl.list_versions())
        rewritten = False
        rev_id = served["revision_id"] if served else None
        if served is not None and served["lance_table"] == table:
            latest_meta = max(tbl.list_versions(), key=lambda v: int(v["version"])).get("metadata", {})
            has_deletions = int(latest_meta.get("total_deletion_file_rows", "0") or 0) > 0
            if has_deletions or tbl.version != served["lance_version"]:
                snap = open_table(db, table)
                snap.checkout(int(served["lance_version"]))
                rows = snap.to_arrow()
                tbl.add(rows, mode="overwrite")
                build_fts(tbl)
                seq = next_seq(con)
                rev_id = new_revision_id(seq, table, run_id, "cleanup")
                copy_revision(con, served, revision_id=rev_id, seq=seq, lance_version=tbl.version,
                              policy_revision=served["policy_revision"], run_id=run_id,
                              note=f"cleanup rewrite of {served['revision_id']}")
                rewritten = True
        # Compaction and index merging first, without pruning: if they produce a
        # new version, it becomes the served revision before anything is pruned.
        tbl.optimize(cleanup_older_than=_FOREVER)
        if served is not None and served["lance_table"] == table:
            cur = served_revision(con)
            if tbl.version != cur["lance_version"]:
                seq = next_seq(con)
                rev_id = new_revision_id(seq, table, run_id, "compaction")
                copy_revision(con, cur, revision_id=rev_id, seq=seq, lance_version=tbl.version,
                              policy_revision=cur["policy_revision"], run_id=run_id,
                              note=f"cleanup compaction of {cur['revision_id']}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the older_than=0 warning: we hold the publish lock
            tbl.optimize(cleanup_older_than=older_than)
        remaining = [int(v["version"]) for v in tbl.list_versions()]
        mark_pruned(con, table, remaining, utcnow())
        return {"revision_id": rev_id, "rewritten": rewritten, "versions_before": versions_before,
                "versions_after": len(remaining), "lance_version": tbl.version, "repaired": repaired}


__all__ = [
    "Hit", "IndexNotReady", "PublishResult", "PublisherBusy", "cleanup", "get_revision", "indexed_hashes",
    "publish", "publish_lock", "repair", "search", "served_revision", "sql_literal",
]
