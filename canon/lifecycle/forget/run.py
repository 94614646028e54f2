"""`forget(doc_id)`: the deletion's state machine, its record in `deletions`
and its OpenLineage run (docs/design.md, "Deletion that provably
propagates"). The stores are cleared by canon/lifecycle/forget/clear.py and
checked by canon/lifecycle/forget/verify.py."""

from __future__ import annotations

import datetime as dt
import json
import os
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import attr
import duckdb
from openlineage.client.facet_v2 import RunFacet

from canon.core import db, ids, schema
from canon.core.clock import utcnow
from canon.core.config import PROJECT_ROOT, CanonPaths
from canon.core.db import Connect, has_table, opened
from canon.core.errors import CanonInputError, CanonRunError
from canon.lifecycle.compaction import compact_duckdb
from canon.lifecycle.forget.clear import clear_lancedb, clear_lineage, clear_registry, purge_cache, scrub_eval
from canon.lifecycle.forget.probes import Probes, held_material, probes_for
from canon.lifecycle.forget.verify import INFLIGHT_DIR, Finding, StepTimer, verify
from canon.registry.contracts import load_contracts
from canon.run_lineage import DatasetRef, LineageEmitter, ParentRun, TransportConfig, canon_table, index_revision

STATES = ("requested", "stores_cleared", "verified")

CONTRACTS_DIR = PROJECT_ROOT / "contracts"

class DeletionNotVerified(CanonRunError):
    """The stores were cleared but verification still found the document."""

    def __init__(self, message: str, result: "ForgetResult"):
        super().__init__(message)
        self.result = result

def _checkpoint(name: str) -> None:
    """Named points of the deletion; tests replace this to interrupt a run.
    Does nothing in production."""

ensure_schema = schema.ensure_deletions

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


def _promise_hours(source_system: str | None) -> float:
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
        material = held_material(con, paths.lancedb_dir, doc_id)
        if row is None and not material["known"]:
            raise CanonInputError("--doc-id", f"unknown document {doc_id!r}: not in the registry, the index "
                                              f"or the quarantine", field="doc_id")
        # Probes: from the in-flight file of an interrupted run, else from what is still held.
        if inflight.exists():
            saved = json.loads(inflight.read_text(encoding="utf-8"))
            probes = Probes(**saved["probes"])
            fresh = probes_for(con, doc_id, material) if material["texts"] else Probes()
            probes = Probes(list(dict.fromkeys(probes.phrases + fresh.phrases)),
                            list(dict.fromkeys(probes.tokens + fresh.tokens)),
                            sorted(set(probes.needles) | set(fresh.needles), key=len, reverse=True),
                            {**fresh.vectors, **probes.vectors})
        else:
            probes = probes_for(con, doc_id, material)
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
    step = StepTimer(details["timings_s"])
    with step("registry"), opened(connect) as con:
        details["registry"] = clear_registry(con, doc_id, utcnow())
    _checkpoint("registry_cleared")
    with step("lineage"), opened(connect) as con:
        details["lineage"] = clear_lineage(con, doc_id, chunk_ids, utcnow())
    _checkpoint("lineage_cleared")
    with step("lancedb"), opened(connect) as con:
        details["lancedb"] = clear_lancedb(con, paths.lancedb_dir, doc_id, chunk_ids, run_id=run_id,
                                            deletion_id=row["deletion_id"])
    _checkpoint("index_cleared")
    with step("eval_and_cache"):
        details["eval"] = scrub_eval(paths, doc_id, probes)
        details["cache"] = purge_cache(paths, doc_id, chunk_ids, probes)
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
