"""`migrate`: build a candidate index beside the live one, check its
coverage, evaluate both configurations, and cut over only when both pass."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

import attr
import duckdb
from openlineage.client.facet_v2 import RunFacet

from canon.core import db, ids
from canon.core.clock import utcnow
from canon.core.config import CanonPaths
from canon.core.db import opened
from canon.core.errors import CanonInputError
from canon.index import publish as index
from canon.index.config import (
    IndexConfig,
    record_spec,
    serving_config,
    table_for,
    target_config,
    target_label,
)
from canon.index.revisions import served_revision
from canon.lifecycle.migrate.coverage import coverage
from canon.lifecycle.migrate.cutover import (
    DEFAULT_ROLLBACK_WINDOW,
    cut_over_candidate,
    ensure_schema,
    expire_rollbacks,
)
from canon.lifecycle.migrate.gate import default_release_sets, evaluate_pair, side_by_side
from canon.registry import store as registry
from canon.registry.policy import project
from canon.registry.tombstones import forgotten_doc_ids
from canon.registry.workspace import Workspace
from canon.run_lineage import DatasetRef, LineageEmitter, ParentRun, TransportConfig, index_revision


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
            if not policy.available:  # never project an index through a policy that could not be read
                raise CanonInputError("policy", policy.unavailable_reason or "the live policy is unavailable")
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
        evals = evaluate_pair(release_sets, current, target, say)
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
            cut_rev, until, refusal = cut_over_candidate(paths, connect, mid, served, cand, lineage, target, new_model,
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
