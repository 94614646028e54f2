"""Cut-over and rollback: one DuckDB transaction serves the candidate table
as a new ready revision and records the active configuration; a rollback
serves the previous table again within the rollback window, after which
`expire_rollbacks` drops it."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from canon.core import db, schema
from canon.core.clock import utcnow
from canon.core.config import CanonPaths
from canon.core.db import opened
from canon.core.errors import CanonInputError, CanonRunError
from canon.index import lance
from canon.index import publish as index
from canon.index import revisions as index_store
from canon.index.config import (
    ACTIVE_KEY,
    active_config,
)
from canon.index.revisions import Txn, get_revision, served_revision
from canon.registry import store as registry
from canon.run_lineage import LineageEmitter, ParentRun, TransportConfig, index_revision

DEFAULT_ROLLBACK_WINDOW = dt.timedelta(days=7)

ensure_schema = schema.ensure_migrations

def migration_row(con, mid: str) -> dict[str, Any] | None:
    cur = con.execute("SELECT * FROM index_migrations WHERE migration_id = ?", [mid])
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    return dict(zip(cols, rows[0])) if rows else None

_LINEAGE_SCHEMA = pa.schema([
    ("chunk_id", pa.string()), ("doc_id", pa.string()), ("doc_version", pa.string()), ("object_id", pa.string()),
    ("source_uri", pa.string()), ("contract_version", pa.string()), ("chunker", pa.string()),
    ("span_start", pa.int32()), ("span_end", pa.int32()), ("model_id", pa.string()), ("embedding_key", pa.string()),
])

def cut_over_candidate(paths, connect, mid, served, cand, lineage, target, new_model, to_table, run_id, window,
              forgotten_doc_ids) -> tuple[str | None, dt.datetime | None, str | None]:
    with index.publish_lock(paths.lancedb_dir):
        with opened(connect) as con:
            served_rev = served_revision(con)
            if served_rev is None or served_rev["revision_id"] != served["revision_id"]:
                return None, None, (f"the served revision moved from {served['revision_id']} to "
                                    f"{served_rev and served_rev['revision_id']} during the migration; run it again")
            try:
                tbl = lance.connect(paths.lancedb_dir).open_table(to_table)
                tbl.checkout(int(cand["lance_version"]))
                present = set(tbl.search().select(["doc_id"]).limit(None).to_arrow().column("doc_id").to_pylist())
            except Exception as exc:  # pruned by a deletion in between
                return None, None, f"candidate version {cand['lance_version']} of {to_table} is not readable: {exc}"
            gone = present & set(forgotten_doc_ids(con))
            if gone:
                return None, None, f"candidate holds forgotten documents {sorted(gone)}; run the migration again"
            now = utcnow()
            until = now + window
            seq = index_store.next_seq(con)
            rid = index_store.revision_id(seq, to_table, run_id, "cutover", mid)
            view = pa.table({f.name: [r[i] for r in lineage] for i, f in enumerate(_LINEAGE_SCHEMA)},
                            schema=_LINEAGE_SCHEMA)
            con.register("_canon_cutover", view)
            try:
                with Txn(con):
                    index_store.insert_revision(con, {
                        "revision_id": rid, "seq": seq, "lance_table": to_table,
                        "lance_version": int(cand["lance_version"]), "base_version": None,
                        "embedding_model_id": new_model, "embedding_identity_json": cand["embedding_identity_json"],
                        "policy_revision": cand["policy_revision"], "created_at": now, "ready_at": now,
                        "status": "ready", "row_count": cand["row_count"], "doc_count": cand["doc_count"],
                        "chunk_count": cand["chunk_count"], "embedded_count": cand["embedded_count"],
                        "reused_count": cand["reused_count"], "rewritten_count": cand["rewritten_count"],
                        "deleted_count": 0, "run_id": run_id,
                        "note": f"migration {mid}: cut over from {served['revision_id']}",
                    })
                    _serve_lineage(con, "_canon_cutover", rid, run_id, now)
                    registry.set_setting(con, ACTIVE_KEY, json.dumps({"config": target.to_dict(), "table": to_table,
                                                                      "model_id": new_model, "migration_id": mid}))
                    con.execute("UPDATE index_migrations SET status = 'superseded' WHERE status = 'cut_over'")
                    con.execute("UPDATE index_migrations SET status = 'cut_over', cutover_revision = ?, "
                                "cut_over_at = ?, rollback_until = ? WHERE migration_id = ?", [rid, now, until, mid])
            finally:
                con.unregister("_canon_cutover")
    return rid, until, None

def _serve_lineage(con, view: str, rid: str, run_id: str, now: dt.datetime) -> None:
    """Lineage of a revision that starts serving: its chunks live, the rest
    marked not served (kept for impact analysis), its embeddings recorded."""
    con.execute(
        f"""INSERT INTO chunk_lineage
            SELECT chunk_id, doc_id, doc_version, object_id, source_uri, contract_version, chunker,
                   span_start, span_end, ?, ?, NULL FROM {view}
            ON CONFLICT (chunk_id) DO UPDATE SET deleted_at = NULL""", [run_id, now])
    con.execute(f"UPDATE chunk_lineage SET deleted_at = ? WHERE deleted_at IS NULL "
                f"AND chunk_id NOT IN (SELECT chunk_id FROM {view})", [now])
    con.execute(f"INSERT INTO embedding_lineage SELECT chunk_id, model_id, embedding_key, ?, ? FROM {view} "
                f"ON CONFLICT DO NOTHING", [rid, run_id])

@dataclass
class RollbackResult:
    migration_id: str
    rollback_revision: str
    from_revision: str          # the cut-over revision that stopped serving
    restored_revision: str      # the pre-migration revision whose content serves again
    table: str
    lance_version: int
    rows: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

def rollback(*, paths: CanonPaths | None = None, connect=None, migration_id: str | None = None,
             run_id: str | None = None, emitter: LineageEmitter | None = None,
             parent: ParentRun | None = None) -> RollbackResult:
    """Serve the pre-migration table again (within the rollback window)."""
    paths = (paths or CanonPaths.from_env()).ensure()
    connect = connect or db.writer(paths.canon_db)
    run_id = run_id or str(uuid.uuid4())
    own = emitter is None
    em = emitter or LineageEmitter(TransportConfig.from_env(canon_home=paths.home))
    try:
        with em.run("canon_rollback", parent=parent) as handle:
            res = _rollback(paths, connect, migration_id, run_id)
            handle.add_input(index_revision(res.from_revision))
            handle.add_output(index_revision(res.rollback_revision))
    finally:
        if own:
            em.close()
    return res

def _rollback(paths, connect, migration_id, run_id) -> RollbackResult:
    with index.publish_lock(paths.lancedb_dir):
        with opened(connect) as con:
            ensure_schema(con)
            if migration_id:
                m = migration_row(con, migration_id)
                if m is None:
                    raise CanonInputError("--migration-id", f"no migration {migration_id!r}", field="migration_id")
            else:
                rows = con.execute("SELECT migration_id FROM index_migrations WHERE status = 'cut_over' "
                                   "ORDER BY cut_over_at DESC LIMIT 1").fetchall()
                if not rows:
                    raise CanonInputError("canon rollback", "no cut-over migration to roll back")
                m = migration_row(con, rows[0][0])
            if m["status"] != "cut_over":
                raise CanonInputError("canon rollback", f"migration {m['migration_id']} is {m['status']}; only the "
                                      "latest cut-over migration can be rolled back", field="migration_id")
            now = utcnow()
            if now > m["rollback_until"]:
                raise CanonInputError("canon rollback", f"the rollback window of {m['migration_id']} closed at "
                                      f"{m['rollback_until']:%Y-%m-%dT%H:%MZ}")
            served = served_revision(con)
            if served is None or served["lance_table"] != m["to_table"]:
                raise CanonRunError(f"the served revision {served and served['revision_id']} is not on the migrated "
                                    f"table {m['to_table']}; nothing to roll back")
            frm = get_revision(con, m["from_revision"])
            try:
                tbl = lance.connect(paths.lancedb_dir).open_table(m["from_table"])
            except (ValueError, FileNotFoundError):
                raise CanonRunError(f"the previous table {m['from_table']} no longer exists") from None
            t = tbl.search().select(["chunk_id", "doc_id"]).limit(None).to_arrow()
            have = set(t.column("chunk_id").to_pylist())
            expected = {r[0] for r in con.execute(
                "SELECT chunk_id FROM embedding_lineage WHERE index_revision = ?", [frm["revision_id"]]).fetchall()}
            if have != expected:
                raise CanonRunError(
                    f"the previous table {m['from_table']} (version {tbl.version}) no longer matches revision "
                    f"{frm['revision_id']}: {len(have - expected)} unexpected, {len(expected - have)} missing chunk(s)")
            seq = index_store.next_seq(con)
            rid = index_store.revision_id(seq, m["from_table"], run_id, "rollback", m["migration_id"])
            from_cfg = json.loads(m["from_config_json"])
            with Txn(con):
                rev = {k: frm[k] for k in ("lance_table", "embedding_model_id", "embedding_identity_json",
                                           "policy_revision")}
                rev.update(revision_id=rid, seq=seq, lance_version=tbl.version, base_version=frm["lance_version"],
                           created_at=now, ready_at=now, status="ready", row_count=len(have),
                           doc_count=len(set(t.column("doc_id").to_pylist())), chunk_count=len(have),
                           embedded_count=0, reused_count=len(have), rewritten_count=0, deleted_count=0,
                           run_id=run_id, note=f"rollback of migration {m['migration_id']} to {frm['revision_id']}")
                index_store.insert_revision(con, rev)
                con.execute("INSERT INTO embedding_lineage SELECT chunk_id, model_id, embedding_key, ?, ? "
                            "FROM embedding_lineage WHERE index_revision = ?", [rid, run_id, frm["revision_id"]])
                con.execute("UPDATE chunk_lineage SET deleted_at = NULL WHERE chunk_id IN "
                            "(SELECT chunk_id FROM embedding_lineage WHERE index_revision = ?) "
                            "AND doc_id NOT IN (SELECT doc_id FROM deletions)"
                            if _has_deletions(con) else
                            "UPDATE chunk_lineage SET deleted_at = NULL WHERE chunk_id IN "
                            "(SELECT chunk_id FROM embedding_lineage WHERE index_revision = ?)", [rid])
                con.execute("UPDATE chunk_lineage SET deleted_at = ? WHERE deleted_at IS NULL AND chunk_id NOT IN "
                            "(SELECT chunk_id FROM embedding_lineage WHERE index_revision = ?)", [now, rid])
                registry.set_setting(con, ACTIVE_KEY, json.dumps({"config": from_cfg, "table": m["from_table"],
                                                                  "model_id": m["from_model_id"],
                                                                  "migration_id": m["migration_id"]}))
                con.execute("UPDATE index_migrations SET status = 'rolled_back', rollback_revision = ?, "
                            "rolled_back_at = ? WHERE migration_id = ?", [rid, now, m["migration_id"]])
    return RollbackResult(m["migration_id"], rid, served["revision_id"], frm["revision_id"], m["from_table"],
                          int(tbl.version), len(have))

def _has_deletions(con) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'deletions' "
                            "AND schema_name = current_schema() AND database_name = current_database()"
                            ).fetchall()[0][0])

def expire_rollbacks(con: duckdb.DuckDBPyConnection, lancedb_dir: Path, now: dt.datetime | None = None) -> list[str]:
    """Close rollback windows that have passed: the migration is finalized and
    its previous table dropped once nothing serves or can roll back to it."""
    ensure_schema(con)
    now = now or utcnow()
    # Only the latest cut-over can be rolled back, so a superseded one's window is over too.
    expired = con.execute(
        "SELECT migration_id, from_table FROM index_migrations WHERE status = 'superseded' "
        "OR (status = 'cut_over' AND rollback_until < ?)", [now]).fetchall()
    if not expired:
        return []
    served = served_revision(con)
    keep = {served["lance_table"]} if served else set()
    act = active_config(con)
    if act:
        keep.add(act[1])
    keep |= {r[0] for r in con.execute(
        "SELECT from_table FROM index_migrations WHERE status = 'cut_over' AND rollback_until >= ?", [now]).fetchall()}
    dropped = []
    db = lance.connect(lancedb_dir)
    for mid, table in expired:
        if table not in keep and table not in dropped:
            with index.publish_lock(lancedb_dir):
                db.drop_table(table, ignore_missing=True)
            index_store.mark_table_dropped(con, table, now)
            dropped.append(table)
        con.execute("UPDATE index_migrations SET status = 'finalized' WHERE migration_id = ?", [mid])
    return dropped
