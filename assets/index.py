"""The knowledge index: every live registry revision chunked, embedded and
published to LanceDB as a new index revision recorded in DuckDB. The ACL it
carries is the registry's, projected through the live policy.

Its operational checks (index-revision freshness, revocation lag, coverage,
lineage integrity) live beside it; the logic is canon.ops.checks (the ask path
uses the same stale-index rule), these only open the database, read the
contracts and translate the outcome. They run after every index
materialization and, because freshness and lag grow with wall-clock time,
every 10 minutes through declarative automation when no index run is going
(sensors/schedules.py). The policy job (the fast path a policy.yml change
starts) selects the index alone."""

import contextlib
import datetime as dt
import os
import time

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource

from assets.keys import DEFINITIONS_KEY, INDEX_KEY
from canon.core.db import opened
from canon.core.errors import CanonInputError
from canon.index import config as index_config
from canon.index import publish as index
from canon.index.build import build_index
from canon.ops import checks as ops_checks
from canon.ops import policy_check
from canon.registry import store as registry
from canon.registry.contracts import load_contract, load_contracts
from canon.registry.live_policy import read_live_policy
from canon.run_lineage import canon_table, index_revision
from resources.embedder import EmbedderResource
from resources.lineage_emitter import OpenLineageResource
from resources.paths import CONTRACTS_DIR, CanonPathsResource
from resources.warehouse import DB_TAGS

POLICY_JOB = "canon_policy_job"
REVOCATION_SLA_ENV = "CANON_REVOCATION_SLA_SECONDS"
POLICY_REVISION_TAG = "canon/policy_revision"        # set by the policy sensor (sensors/data_sensors.py)
POLICY_FIRST_SEEN_TAG = "canon/policy_first_seen"
CHECK_CRON = "*/10 * * * *"
# Time-dependent checks are re-evaluated on a cron tick, never while the index is being rebuilt.
PERIODIC = (dg.AutomationCondition.cron_tick_passed(CHECK_CRON)
            & ~dg.AutomationCondition.any_deps_in_progress()).with_label(f"every 10 min ({CHECK_CRON}), index idle")
_LOCK_WAIT_S = 120.0


@dg.asset(
    key=INDEX_KEY, deps=[DEFINITIONS_KEY], group_name="index", kinds={"lancedb"},
    description="Entity-aligned chunks with real embeddings in LanceDB; each publish is a revision "
                "(building → ready) and queries pin the ready one. Unchanged documents embed nothing.",
)
def knowledge_index(context: dg.AssetExecutionContext, canon_db: DuckDBResource, embedder: EmbedderResource,
                    lineage: OpenLineageResource, paths: CanonPathsResource) -> dg.MaterializeResult:
    emb = embedder.get_embedder()
    with lineage.asset_run(context, inputs=[canon_table("documents")]) as run:
        # opened(): closed on failure too, so a refused build leaves the file free for the next one.
        with opened(canon_db.get_connection) as con:
            # The policy queries apply (canon/registry/live_policy.py): a policy that vanished or
            # broke must never be projected into the index as "no revocations".
            policy = read_live_policy(con, paths.policy_file)
            if not policy.available:
                raise CanonInputError(paths.policy_file, f"policy unavailable, the index is not published: "
                                                         f"{policy.unavailable_reason}")
            # First sighting of this policy revision (the revocation-lag clock), if no sensor saw it.
            ops_checks.record_policy_revision(con, policy.revision, seen_by="knowledge_index")
            # After a `canon migrate` cut-over the active configuration (table, model, chunking) wins.
            emb, options = index_config.publish_setup(con, emb)
            result = build_index(con, paths.canon.lancedb_dir, emb, policy, run_id=context.run.run_id, **options)
            rev = index.served_revision(con)
        run.add_output(index_revision(result.revision_id))
    return dg.MaterializeResult(metadata={
        "index_revision": result.revision_id,
        "lance_version": result.lance_version,
        "policy_revision": policy.revision,
        "embedding_model": emb.identity.model_id,
        "dagster/row_count": rev["row_count"] if rev else 0,
        "noop": result.noop,
        **{f"count/{k}": v for k, v in result.counts.items() if isinstance(v, (int, float, bool))},
    })


# ------------------------------------------------------------ operational checks

@contextlib.contextmanager
def _connection(canon_db: DuckDBResource):
    """The canon_db connection; waits while another process holds the DuckDB
    write lock (a check-only run can start while a writer finishes)."""
    deadline = time.monotonic() + _LOCK_WAIT_S
    with contextlib.ExitStack() as stack:
        while True:
            try:
                con = stack.enter_context(canon_db.get_connection())
                break
            except duckdb.IOException as exc:
                if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                    raise
                time.sleep(2.0)
        yield con


def _result(outcome: ops_checks.Outcome) -> dg.AssetCheckResult:
    metadata = {"summary": outcome.summary, **{k: v for k, v in outcome.metadata.items() if v is not None}}
    if outcome.table_md:
        metadata["table"] = dg.MetadataValue.md(outcome.table_md)
    if outcome.details:
        metadata["details"] = dg.MetadataValue.json(outcome.details)
    return dg.AssetCheckResult(passed=outcome.passed, severity=dg.AssetCheckSeverity[outcome.severity],
                               description=outcome.summary, metadata=metadata)


def _contract_limits(paths: CanonPathsResource) -> tuple[dict[str, float], float]:
    """(max_lag_hours per source system, the strictest delete-propagation window), over Canon's
    contracts and those the configured documents sources name."""
    contracts = [*load_contracts(CONTRACTS_DIR).values(), *(load_contract(d.contract) for d in paths.documents)]
    lags = {c.source.system: c.freshness.max_lag_hours for c in contracts}
    deletion = min((c.retention.delete_propagation_hours for c in contracts), default=24.0)
    return lags, deletion


def revocation_sla_seconds() -> float:
    return float(os.environ.get(REVOCATION_SLA_ENV, ops_checks.DEFAULT_REVOCATION_SLA_SECONDS))


@dg.asset_check(asset=INDEX_KEY, name="index_revision_fresh", blocking=False, automation_condition=PERIODIC,
                description="Every current registry revision is in the served index revision with the same text "
                            "and content hash (the query-time stale rule); un-indexed revisions WARN, and ERROR "
                            "once older than the contract's freshness.max_lag_hours.")
def index_revision_fresh(canon_db: DuckDBResource, paths: CanonPathsResource) -> dg.AssetCheckResult:
    lags, _ = _contract_limits(paths)
    with _connection(canon_db) as con:
        docs = registry.load_documents(con)
        outcome = ops_checks.index_freshness(con, docs, max_lag_hours=lags, lancedb_dir=paths.canon.lancedb_dir)
    return _result(outcome)


@dg.asset_check(asset=INDEX_KEY, name="revocation_lag", blocking=False, automation_condition=PERIODIC,
                description="The served index carries the live policy.yml revision (no revoked document/role "
                            "pair left in its ACL), and reached it within the SLA "
                            f"(${REVOCATION_SLA_ENV}, default 300 s) from the revision's first sighting.")
def revocation_lag(context: dg.AssetCheckExecutionContext, canon_db: DuckDBResource,
                   paths: CanonPathsResource) -> dg.AssetCheckResult:
    tags = context.run.tags
    with _connection(canon_db) as con:
        # A policy queries cannot read fails this check (and alerts): every query is denied meanwhile.
        policy, readable = policy_check.policy_available(con, paths.policy_file)
        if not readable.passed:
            return _result(readable)
        if tags.get(POLICY_REVISION_TAG) and tags.get(POLICY_FIRST_SEEN_TAG):
            # The policy sensor saw the revision first; its sighting starts the lag.
            seen = dt.datetime.fromisoformat(tags[POLICY_FIRST_SEEN_TAG].replace("Z", "+00:00"))
            ops_checks.record_policy_revision(con, tags[POLICY_REVISION_TAG], seen_by="policy_sensor", seen_at=seen)
        outcome = ops_checks.revocation_lag(con, policy, paths.canon.lancedb_dir,
                                            sla_seconds=revocation_sla_seconds())
    return _result(outcome)


@dg.asset_check(asset=INDEX_KEY, name="index_coverage", blocking=False, automation_condition=PERIODIC,
                description="Every live chunk is embedded in the served revision (embedding lineage under its "
                            "model, a LanceDB row, a non-null vector, the right embedding key).")
def index_coverage(canon_db: DuckDBResource, paths: CanonPathsResource) -> dg.AssetCheckResult:
    with _connection(canon_db) as con:
        outcome = ops_checks.index_coverage(con, paths.canon.lancedb_dir)
    return _result(outcome)


@dg.asset_check(asset=INDEX_KEY, name="lineage_integrity", blocking=False, automation_condition=PERIODIC,
                description="Every chunk of the served revision has chunk lineage and a live registry document; "
                            "a deleted document still served WARNs, and ERRORs after the contract's "
                            "retention.delete_propagation_hours.")
def lineage_integrity(canon_db: DuckDBResource, paths: CanonPathsResource) -> dg.AssetCheckResult:
    _, deletion_hours = _contract_limits(paths)
    with _connection(canon_db) as con:
        outcome = ops_checks.lineage_integrity(con, paths.canon.lancedb_dir,
                                               delete_propagation_hours=deletion_hours)
    return _result(outcome)


ops_asset_checks = [index_revision_fresh, revocation_lag, index_coverage, lineage_integrity]


# ------------------------------------------------------------ jobs

policy_job = dg.define_asset_job(
    POLICY_JOB, selection=dg.AssetSelection.assets(INDEX_KEY),
    tags=DB_TAGS,
    description="The policy fast path: re-publish the index under the new policy.yml revision. "
                "ACL attributes are rewritten in place; no text is re-embedded.",
)
