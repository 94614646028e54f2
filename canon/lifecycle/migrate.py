"""Embedding-model (and chunker) migration under a coverage gate (seed 004,
"Migrating an embedding model under contract").

Vectors from different models cannot share a table, so a migration builds a
*candidate* index beside the live one and only then decides:

1. build: the registry's live documents (projected through the live policy)
   are published with the new configuration into their own LanceDB table,
   `chunks_<h(model_id, chunker, max_chars, overlap)>`, by the production
   `canon.index.publish.publish`. Its revision bookkeeping goes to a *staging* DuckDB
   ($CANON_HOME/migrations/<id>.duckdb), so nothing in the main database —
   in particular `served_revision()` (the highest-seq ready revision) —
   moves while the candidate is built, checked and evaluated;
2. coverage: every live chunk of the served revision must have an embedding
   in the candidate — the same chunk id, or, after a chunker change, chunks of
   the same document version whose spans cover its text. Counts and missing
   ids are recorded; a candidate holding a forgotten document fails too;
3. evaluation: the release gold sets are answered by both configurations
   (each on a fresh index, the production pipeline) and shown side by side;
4. cut-over, only when coverage is complete and the candidate passes the
   release gate: one DuckDB transaction adds a ready revision whose
   `lance_table` is the candidate table (highest seq, so it is served and
   pinned by every query), its chunk/embedding lineage, and the *active index
   configuration* (settings `index.active_config`) that later publishes and
   query embedding follow. The previous table is kept for a rollback window;
5. rollback: a new ready revision pointing back at the previous table (its
   latest version, checked against the previous revision's embedding
   lineage), and the previous configuration becomes active again.

`answer_log.index_revision` names the revision that served each answer, so a
quality change after a cut-over is attributable to it.
"""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import attr
import duckdb
import lancedb
import pyarrow as pa
from openlineage.client.facet_v2 import RunFacet

from canon.core import db, ids, schema
from canon.core.clock import utcnow
from canon.core.config import CanonPaths
from canon.core.db import opened
from canon.core.errors import CanonInputError, CanonRunError
from canon.evaluation.run import RELEASE_SETS, evaluate
from canon.index import publish as index
from canon.index import revisions as index_store
from canon.index.config import (
    ACTIVE_KEY,
    IndexConfig,
    active_config,
    record_spec,
    serving_config,
    table_for,
    target_config,
    target_label,
)
from canon.index.revisions import Txn, get_revision, served_revision
from canon.registry import store as registry
from canon.registry.policy import project
from canon.registry.tombstones import forgotten_doc_ids
from canon.registry.workspace import Workspace
from canon.run_lineage.events import DatasetRef, LineageEmitter, ParentRun, TransportConfig, index_revision

# (name, corpus, gold): the release gold sets (the same as assets/eval.py's).
DEFAULT_ROLLBACK_WINDOW = dt.timedelta(days=7)

ensure_schema = schema.ensure_migrations


# ------------------------------------------------------------------ coverage

@dataclass
class Coverage:
    live_chunks: int
    candidate_chunks: int
    same_chunk: int             # the live chunk id is in the candidate
    rechunked: int              # covered by candidate chunks of the same document version
    missing: list[str]          # live chunk ids with no embedding in the candidate
    missing_documents: list[str]
    lineage_mismatch: int       # candidate rows vs its embedding lineage
    forgotten_present: list[str]

    @property
    def complete(self) -> bool:
        return (not self.missing and not self.forgotten_present and self.lineage_mismatch == 0
                and (self.candidate_chunks > 0 or self.live_chunks == 0))

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "complete": self.complete, "covered": self.same_chunk + self.rechunked}


def _rows(lancedb_dir: Path, table: str, version: int, cols: list[str]) -> list[dict[str, Any]]:
    tbl = lancedb.connect(str(lancedb_dir)).open_table(table)
    tbl.checkout(int(version))
    return tbl.search().select(cols).limit(None).to_arrow().to_pylist()


def coverage(lancedb_dir: Path, served: dict[str, Any], cand_table: str, cand_version: int,
             cand_lineage_ids: set[str], forgotten: set[str]) -> Coverage:
    """Every live chunk of `served` must have an embedding in the candidate."""
    live = _rows(lancedb_dir, served["lance_table"], served["lance_version"],
                 ["chunk_id", "doc_id", "doc_version", "span_start", "span_end", "body"])
    cand = _rows(lancedb_dir, cand_table, cand_version, ["chunk_id", "doc_id", "doc_version", "span_start", "span_end"])
    cand_ids = {r["chunk_id"] for r in cand}
    spans: dict[str, list[tuple[int, int]]] = {}
    for r in cand:
        spans.setdefault(r["doc_version"], []).append((r["span_start"], r["span_end"]))
    same = rechunked = 0
    missing: list[str] = []
    missing_docs: set[str] = set()
    for r in live:
        if r["chunk_id"] in cand_ids:
            same += 1
            continue
        a, b, body = r["span_start"], r["span_end"], r["body"] or ""
        covered = [False] * (b - a)
        for s, e in spans.get(r["doc_version"], []):
            for i in range(max(s, a), min(e, b)):
                covered[i - a] = True
        # Characters no candidate chunk holds must be whitespace (chunk edges are trimmed).
        if spans.get(r["doc_version"]) and all(c or body[i:i + 1].isspace() for i, c in enumerate(covered)):
            rechunked += 1
        else:
            missing.append(r["chunk_id"])
            missing_docs.add(r["doc_id"])
    return Coverage(
        live_chunks=len(live), candidate_chunks=len(cand), same_chunk=same, rechunked=rechunked,
        missing=sorted(missing), missing_documents=sorted(missing_docs),
        lineage_mismatch=len(cand_ids ^ cand_lineage_ids),
        forgotten_present=sorted({r["doc_id"] for r in cand} & forgotten))


# ------------------------------------------------------------------ evaluation

def default_release_sets() -> list[tuple[str, Path, Path]]:
    """Both release sets; the hard set only where it ships."""
    return [(n, c, g) for n, c, g in RELEASE_SETS if g.exists() and c.exists()]


def _evaluate_pair(release_sets, current: IndexConfig, target: IndexConfig,
                   progress: Callable[[str], None]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, corpus, gold in release_sets:
        pair = {}
        for side, cfg in (("current", current), ("candidate", target)):
            progress(f"eval {name}: {side} configuration …")
            pair[side] = evaluate(Path(corpus), Path(gold), embedder=cfg.embedder.build(),
                                  index_options=cfg.publish_options())
        out[name] = pair
    return out


_METRICS = ("cases", "passed", "action_accuracy", "recall_at_3", "wrong_version_rate", "authority_precision",
            "conflict_coverage", "permission_leaks", "clarification_accuracy", "abstention_accuracy",
            "denial_accuracy", "latency_ms_p50", "latency_ms_p95")


def side_by_side(evals: dict[str, Any], current_label: str, candidate_label: str) -> str:
    """The two eval tables of each release set, in adjacent columns."""
    parts = [f"current = {current_label}\n\ncandidate = {candidate_label}"]
    for name, pair in evals.items():
        cur, cand = pair["current"], pair["candidate"]
        lines = [f"### {name} ({cur['summary']['cases']} cases)", "",
                 "| metric | current | candidate |", "|---|---:|---:|"]
        lines += [f"| {k} | {cur['summary'].get(k)} | {cand['summary'].get(k)} |" for k in _METRICS]
        lines += [f"| release gate | {'PASS' if not cur['summary']['gate'] else 'FAIL'} "
                  f"| {'PASS' if not cand['summary']['gate'] else 'FAIL'} |", "",
                  "| retrieval configuration | current recall@3 | candidate recall@3 |", "|---|---:|---:|"]
        cand_rows = {r["configuration"]: r["recall_at_3"] for r in cand["configurations"]}
        lines += [f"| {r['configuration']} | {r['recall_at_3']:.3f} | {cand_rows.get(r['configuration'], float('nan')):.3f} |"
                  for r in cur["configurations"]]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


# ------------------------------------------------------------------ results

@dataclass
class MigrationResult:
    migration_id: str
    status: str
    from_revision: str
    from_table: str
    from_model_id: str
    to_table: str
    to_model_id: str
    from_config: dict[str, Any]
    to_config: dict[str, Any]
    coverage: dict[str, Any]
    evaluation: dict[str, Any]          # per set: {"current": summary, "candidate": summary}
    gate_passed: bool
    cut_over: bool
    decision: str
    cutover_revision: str | None = None
    rollback_until: dt.datetime | None = None
    report_path: str | None = None
    table_markdown: str = ""
    build: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["rollback_until"] = self.rollback_until.isoformat() + "Z" if self.rollback_until else None
        return d


@attr.define
class MigrationRunFacet(RunFacet):
    """`canonMigration`: coverage and gate of an index migration."""

    migrationId: str  # noqa: N815
    status: str
    fromRevision: str  # noqa: N815
    toTable: str  # noqa: N815
    liveChunks: int  # noqa: N815
    missingChunks: int  # noqa: N815
    coverageComplete: bool  # noqa: N815
    gatePassed: bool  # noqa: N815
    cutoverRevision: str | None = None  # noqa: N815

    @staticmethod
    def _get_schema() -> str:
        return "https://github.com/canon/canon/spec/facets/MigrationRunFacet.json"


def _migration(con, mid: str) -> dict[str, Any] | None:
    cur = con.execute("SELECT * FROM index_migrations WHERE migration_id = ?", [mid])
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    return dict(zip(cols, rows[0])) if rows else None


# ------------------------------------------------------------------ migrate

def migrate(
    *,
    paths: CanonPaths | None = None,
    connect=None,
    embedding_model: str | None = None,
    max_seq_length: int | None = None,
    chunker_max_chars: int | None = None,
    chunker_overlap: int | None = None,
    target: IndexConfig | None = None,
    cut_over: bool = True,
    rollback_window: dt.timedelta = DEFAULT_ROLLBACK_WINDOW,
    release_sets: list[tuple[str, Path, Path]] | None = None,
    documents=None,
    run_id: str | None = None,
    emitter: LineageEmitter | None = None,
    parent: ParentRun | None = None,
    progress: Callable[[str], None] | None = None,
) -> MigrationResult:
    """Build, check, evaluate and (if everything passes) cut over. Returns the
    result; `status` is `cut_over`, `built` (checks passed, cut-over not
    requested) or `refused` (coverage or gate failed; the served revision is
    untouched). `documents` overrides the registry's live documents (tests)."""
    paths = (paths or CanonPaths.from_env()).ensure()
    connect = connect or db.writer(paths.canon_db)
    run_id = run_id or str(uuid.uuid4())
    say = progress or (lambda _msg: None)
    own = emitter is None
    em = emitter or LineageEmitter(TransportConfig.from_env(canon_home=paths.home))
    try:
        with opened(connect) as con:
            ensure_schema(con)
            registry.ensure_schema(con)
            expire_rollbacks(con, paths.lancedb_dir)
            served = served_revision(con)
            if served is None:
                raise CanonInputError(paths.canon_db, "no served index revision to migrate from; publish one first")
            current, _ = serving_config(con)
            target = target or target_config(current, embedding_model=embedding_model, max_seq_length=max_seq_length,
                                             chunker_max_chars=chunker_max_chars, chunker_overlap=chunker_overlap)
            cur_model = current.embedder.build().identity.model_id
            new_emb = target.embedder.build()
            new_model = new_emb.identity.model_id
            if new_model == cur_model and target.publish_options() == current.publish_options():
                raise CanonInputError("canon migrate", f"the requested configuration ({target.label(new_model)}) "
                                      "is the one being served; nothing to migrate")
            to_table = table_for(new_model, target)
            record_spec(con, cur_model, current.embedder)
            record_spec(con, new_model, target.embedder)
            policy = Workspace(paths, con).policy()
            if documents is None:
                documents = project(registry.load_documents(con), policy)
            mid = f"mig-{utcnow():%Y%m%dT%H%M%S}-{ids.h(run_id, to_table, n=8)}"
            con.execute(
                "INSERT INTO index_migrations (migration_id, requested_at, run_id, status, from_revision, from_table, "
                "from_model_id, from_config_json, to_table, to_model_id, to_config_json) "
                "VALUES (?, ?, ?, 'building', ?, ?, ?, ?, ?, ?, ?)",
                [mid, utcnow(), run_id, served["revision_id"], served["lance_table"], cur_model,
                 json.dumps(current.to_dict()), to_table, new_model, json.dumps(target.to_dict())])
        inputs = [index_revision(served["revision_id"])]
        outputs = [DatasetRef("lancedb://canon", to_table)]
        with em.run("canon_migrate", inputs=inputs, outputs=outputs, parent=parent) as handle:
            try:
                result = _run(paths, connect, mid, served, current, target, cur_model, new_model, to_table,
                              documents, policy.revision, run_id, cut_over, rollback_window,
                              release_sets if release_sets is not None else default_release_sets(), say,
                              forgotten_doc_ids)
            except BaseException as exc:
                with opened(connect) as con:
                    con.execute("UPDATE index_migrations SET status = 'failed', decision = ?, finished_at = ? "
                                "WHERE migration_id = ? AND status = 'building'",
                                [f"{type(exc).__name__}: {exc}"[:2000], utcnow(), mid])
                raise
            if result.cutover_revision:
                handle.add_output(index_revision(result.cutover_revision))
            handle.set_run_facets({"canonMigration": MigrationRunFacet(
                migrationId=mid, status=result.status, fromRevision=result.from_revision, toTable=to_table,
                liveChunks=result.coverage["live_chunks"], missingChunks=len(result.coverage["missing"]),
                coverageComplete=result.coverage["complete"], gatePassed=result.gate_passed,
                cutoverRevision=result.cutover_revision)})
    finally:
        if own:
            em.close()
    return result


def _run(paths, connect, mid, served, current, target, cur_model, new_model, to_table, documents,
         policy_revision, run_id, cut_over, rollback_window, release_sets, say, forgotten_doc_ids) -> MigrationResult:
    staging = paths.home / "migrations" / f"{mid}.duckdb"
    staging.parent.mkdir(parents=True, exist_ok=True)
    try:
        # 1. build beside the live index; bookkeeping in the staging database
        say(f"building {to_table} with {target.label(new_model)} ({len(documents)} documents) …")
        scon = duckdb.connect(str(staging))
        try:
            pub = index.publish(scon, paths.lancedb_dir, documents, target.embedder.build(),
                                policy_revision=policy_revision, run_id=run_id, table=to_table,
                                **target.publish_options())
            cand = served_revision(scon)
            lineage = scon.execute(
                """SELECT c.chunk_id, c.doc_id, c.doc_version, c.object_id, c.source_uri, c.contract_version,
                          c.chunker, c.span_start, c.span_end, e.model_id, e.embedding_key
                   FROM embedding_lineage e JOIN chunk_lineage c USING (chunk_id)
                   WHERE e.index_revision = ?""", [cand["revision_id"]]).fetchall()
        finally:
            scon.close()
        build = {"revision": cand["revision_id"], "lance_version": cand["lance_version"], **pub.counts}

        # 2. coverage against the served revision (which has not moved)
        with opened(connect) as con:
            forgotten = set(forgotten_doc_ids(con))
        cov = coverage(paths.lancedb_dir, served, to_table, int(cand["lance_version"]),
                       {r[0] for r in lineage}, forgotten)
        say(f"coverage: {cov.same_chunk + cov.rechunked}/{cov.live_chunks} live chunks covered, "
            f"{len(cov.missing)} missing")

        # 3. both configurations on the release gold sets
        evals = _evaluate_pair(release_sets, current, target, say)
        report = paths.home / "eval" / "migrations" / f"{mid}.json"
        report.parent.mkdir(parents=True, exist_ok=True)
        report.write_text(json.dumps({"migration_id": mid, "current": target_label(current, cur_model),
                                      "candidate": target_label(target, new_model), "sets": evals},
                                     indent=2, default=str))
        summaries = {n: {s: {"summary": p[s]["summary"], "configurations": p[s]["configurations"]} for s in p}
                     for n, p in evals.items()}
        gate_passed = bool(evals) and all(not p["candidate"]["summary"]["gate"] for p in evals.values())
        table_md = side_by_side(evals, current.label(cur_model), target.label(new_model)) if evals else ""

        reasons = []
        if not cov.complete:
            reasons.append(f"coverage incomplete: {len(cov.missing)} of {cov.live_chunks} live chunk(s) have no "
                           f"embedding in {to_table}" + (f"; forgotten documents present: {cov.forgotten_present}"
                                                         if cov.forgotten_present else "")
                           + (f"; {cov.lineage_mismatch} row(s) without lineage" if cov.lineage_mismatch else ""))
        if not evals:
            reasons.append("no release gold set found to evaluate")
        elif not gate_passed:
            failing = {n: p["candidate"]["summary"]["gate"] for n, p in evals.items() if p["candidate"]["summary"]["gate"]}
            reasons.append(f"release gate failed for the candidate: {failing}")

        cut_rev = until = None
        if reasons:
            status, decision = "refused", "; ".join(reasons)
        elif not cut_over:
            status, decision = "built", "coverage complete and release gate passed; cut-over not requested"
        else:
            cut_rev, until, refusal = _cut_over(paths, connect, mid, served, cand, lineage, target, new_model,
                                                to_table, run_id, rollback_window, forgotten_doc_ids)
            if refusal:
                status, decision = "refused", refusal
            else:
                status, decision = "cut_over", (f"coverage complete, release gate passed: {cut_rev} now serves "
                                                f"{to_table}; {served['revision_id']} kept for rollback until "
                                                f"{until:%Y-%m-%dT%H:%MZ}")
        with opened(connect) as con:
            con.execute(
                "UPDATE index_migrations SET status = ?, candidate_lance_version = ?, coverage_complete = ?, "
                "coverage_json = ?, eval_json = ?, gate_passed = ?, decision = ?, finished_at = ? "
                "WHERE migration_id = ?",
                [status, int(cand["lance_version"]), cov.complete, json.dumps(cov.as_dict()),
                 json.dumps(summaries, default=str), gate_passed, decision, utcnow(), mid])
        say(decision)
        return MigrationResult(
            migration_id=mid, status=status, from_revision=served["revision_id"], from_table=served["lance_table"],
            from_model_id=cur_model, to_table=to_table, to_model_id=new_model, from_config=current.to_dict(),
            to_config=target.to_dict(), coverage=cov.as_dict(),
            evaluation={n: {s: p[s]["summary"] for s in p} for n, p in evals.items()},
            gate_passed=gate_passed, cut_over=status == "cut_over", decision=decision, cutover_revision=cut_rev,
            rollback_until=until, report_path=str(report), table_markdown=table_md, build=build)
    finally:
        for p in (staging, staging.with_name(staging.name + ".wal")):
            p.unlink(missing_ok=True)


_LINEAGE_SCHEMA = pa.schema([
    ("chunk_id", pa.string()), ("doc_id", pa.string()), ("doc_version", pa.string()), ("object_id", pa.string()),
    ("source_uri", pa.string()), ("contract_version", pa.string()), ("chunker", pa.string()),
    ("span_start", pa.int32()), ("span_end", pa.int32()), ("model_id", pa.string()), ("embedding_key", pa.string()),
])


def _cut_over(paths, connect, mid, served, cand, lineage, target, new_model, to_table, run_id, window,
              forgotten_doc_ids) -> tuple[str | None, dt.datetime | None, str | None]:
    with index.publish_lock(paths.lancedb_dir):
        with opened(connect) as con:
            served_rev = served_revision(con)
            if served_rev is None or served_rev["revision_id"] != served["revision_id"]:
                return None, None, (f"the served revision moved from {served['revision_id']} to "
                                    f"{served_rev and served_rev['revision_id']} during the migration; run it again")
            try:
                tbl = lancedb.connect(str(paths.lancedb_dir)).open_table(to_table)
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


# ------------------------------------------------------------------ rollback

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
                m = _migration(con, migration_id)
                if m is None:
                    raise CanonInputError("--migration-id", f"no migration {migration_id!r}", field="migration_id")
            else:
                rows = con.execute("SELECT migration_id FROM index_migrations WHERE status = 'cut_over' "
                                   "ORDER BY cut_over_at DESC LIMIT 1").fetchall()
                if not rows:
                    raise CanonInputError("canon rollback", "no cut-over migration to roll back")
                m = _migration(con, rows[0][0])
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
                tbl = lancedb.connect(str(paths.lancedb_dir)).open_table(m["from_table"])
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
    db = lancedb.connect(str(lancedb_dir))
    for mid, table in expired:
        if table not in keep and table not in dropped:
            with index.publish_lock(lancedb_dir):
                db.drop_table(table, ignore_missing=True)
            index_store.mark_table_dropped(con, table, now)
            dropped.append(table)
        con.execute("UPDATE index_migrations SET status = 'finalized' WHERE migration_id = ?", [mid])
    return dropped


__all__ = [
    "Coverage", "MigrationResult", "RollbackResult", "coverage", "default_release_sets", "expire_rollbacks",
    "migrate", "rollback", "side_by_side",
]
