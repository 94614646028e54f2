"""Lifecycle jobs: forget a document, migrate the index, roll a migration back.
Thin wrappers over canon.lifecycle.forget and canon.lifecycle.migrate; each step fails (never
warns) when the deletion does not verify or the migration is refused."""

import datetime as dt
import json
from typing import Optional

import dagster as dg
from dagster_duckdb import DuckDBResource
from pydantic import Field

from canon.core.errors import CanonError
from canon.lifecycle import forget as lifecycle
from canon.lifecycle import migrate as migration
from canon.run_lineage import ParentRun
from resources.lineage_emitter import OpenLineageResource
from resources.paths import CanonPathsResource
from resources.warehouse import DB_TAGS

FORGET_JOB = "canon_forget"
MIGRATE_JOB = "canon_migrate"
ROLLBACK_JOB = "canon_rollback"


def _parent(context: dg.OpExecutionContext, lineage: OpenLineageResource) -> ParentRun:
    return ParentRun(namespace=lineage.namespace, job_name=context.run.job_name, run_id=context.run.run_id)


class ForgetConfig(dg.Config):
    doc_id: str = Field(description="The source doc_id to delete from every store (it also stays out of the registry).")


@dg.op(out=dg.Out(dg.Nothing), description="Delete one document from every store, verify it is gone, record the "
                                            "deletion against the contract's promise. Resumes an interrupted deletion.")
def forget_document(context: dg.OpExecutionContext, config: ForgetConfig, canon_db: DuckDBResource,
                    lineage: OpenLineageResource, paths: CanonPathsResource):
    emitter = lineage.get_emitter()
    try:
        res = lifecycle.forget(config.doc_id, paths=paths.canon, connect=canon_db.get_connection,
                               run_id=context.run_id, emitter=emitter, parent=_parent(context, lineage))
    except lifecycle.DeletionNotVerified as exc:
        raise dg.Failure(description=str(exc), metadata={
            "findings": dg.MetadataValue.json([f.__dict__ for f in exc.result.findings]),
            "deletion_id": exc.result.deletion_id}) from exc
    except CanonError as exc:
        raise dg.Failure(description=str(exc)) from exc
    finally:
        emitter.close()
    v = res.details.get("verification", {})
    return dg.Output(None, metadata={
        "doc_id": res.doc_id,
        "deletion_id": res.deletion_id,
        "verified": res.verified,
        "attempts": res.attempts,
        "duration_seconds": dg.MetadataValue.float(res.duration_seconds or 0.0),
        "promise_hours": dg.MetadataValue.float(res.promise_hours),
        "within_promise": bool(res.within_promise),
        "chunks": len(res.chunk_ids),
        "lancedb_versions_scanned": v.get("lancedb", {}).get("versions_scanned", 0),
        "files_scanned": v.get("files_scanned", 0),
        "source_copies": dg.MetadataValue.json(v.get("source_copies", [])),
    })


class MigrateConfig(dg.Config):
    embedding_model: Optional[str] = Field(
        default=None, description="sentence-transformers model path or name, 'default', or hashing[:DIMS]")
    max_seq_length: Optional[int] = Field(default=None, description="sentence-transformers max_seq_length")
    chunker_max_chars: Optional[int] = Field(default=None, description="chunk size in characters")
    chunker_overlap: Optional[int] = Field(default=None, description="chunk overlap in characters")
    cut_over: bool = Field(default=True, description="cut over when coverage is complete and the release gate passes")
    rollback_window_hours: float = Field(default=168.0, description="how long the previous revision is kept")


@dg.op(out=dg.Out(dg.Nothing), description="Build an index with a new embedding model or chunking beside the live "
                                            "one, check coverage, evaluate both on the release gold sets, cut over.")
def migrate_index(context: dg.OpExecutionContext, config: MigrateConfig, canon_db: DuckDBResource,
                  lineage: OpenLineageResource, paths: CanonPathsResource):
    emitter = lineage.get_emitter()
    try:
        res = migration.migrate(
            paths=paths.canon, connect=canon_db.get_connection, embedding_model=config.embedding_model,
            max_seq_length=config.max_seq_length, chunker_max_chars=config.chunker_max_chars,
            chunker_overlap=config.chunker_overlap, cut_over=config.cut_over,
            rollback_window=dt.timedelta(hours=config.rollback_window_hours), run_id=context.run_id,
            emitter=emitter, parent=_parent(context, lineage), progress=context.log.info)
    except CanonError as exc:
        raise dg.Failure(description=str(exc)) from exc
    finally:
        emitter.close()
    cov = res.coverage
    metadata = {
        "migration_id": res.migration_id,
        "status": res.status,
        "from_revision": res.from_revision,
        "to_table": res.to_table,
        "to_model_id": res.to_model_id,
        "coverage/live_chunks": cov["live_chunks"],
        "coverage/covered": cov["covered"],
        "coverage/missing": len(cov["missing"]),
        "coverage/missing_ids": dg.MetadataValue.json(cov["missing"][:200]),
        "gate_passed": res.gate_passed,
        "eval_side_by_side": dg.MetadataValue.md(res.table_markdown or "no release set evaluated"),
        "decision": res.decision,
        "cutover_revision": res.cutover_revision or "",
        "report": dg.MetadataValue.path(res.report_path or ""),
    }
    if res.status == "refused":
        raise dg.Failure(description=f"migration {res.migration_id} refused: {res.decision}", metadata=metadata)
    return dg.Output(None, metadata=metadata)


class RollbackConfig(dg.Config):
    migration_id: Optional[str] = Field(default=None, description="default: the latest cut-over migration")


@dg.op(out=dg.Out(dg.Nothing), description="Serve the index from before the last migration again.")
def rollback_index(context: dg.OpExecutionContext, config: RollbackConfig, canon_db: DuckDBResource,
                   lineage: OpenLineageResource, paths: CanonPathsResource):
    emitter = lineage.get_emitter()
    try:
        res = migration.rollback(paths=paths.canon, connect=canon_db.get_connection,
                                 migration_id=config.migration_id, run_id=context.run_id, emitter=emitter,
                                 parent=_parent(context, lineage))
    except CanonError as exc:
        raise dg.Failure(description=str(exc)) from exc
    finally:
        emitter.close()
    return dg.Output(None, metadata={k: (json.dumps(v) if isinstance(v, (list, dict)) else v)
                                     for k, v in res.to_dict().items()})


@dg.job(name=FORGET_JOB, tags=DB_TAGS, description="canon forget: delete a document everywhere and verify it (config: doc_id).")
def forget_job():
    forget_document()


@dg.job(name=MIGRATE_JOB, tags=DB_TAGS, description="canon migrate: new embedding model / chunking behind a coverage gate.")
def migrate_job():
    migrate_index()


@dg.job(name=ROLLBACK_JOB, tags=DB_TAGS, description="canon rollback: serve the pre-migration index again.")
def rollback_job():
    rollback_index()


lifecycle_jobs = [forget_job, migrate_job, rollback_job]
