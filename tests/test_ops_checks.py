"""The operational index checks (canon.ops.checks and their Dagster asset
checks) on a real tmp workspace: the knowledge/ corpus through the contract
gate into DuckDB, published to LanceDB with the deterministic hashing
embedder. Healthy inputs pass; stale, revoked, uncovered and orphaned inputs
fail with metadata that names what to fix."""

import datetime as dt
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from canon.ask.context import ask_context, build_retriever
from canon.ask.pipeline import ask
from canon.core.config import CanonPaths
from canon.index import publish as index
from canon.index import served as index_served
from canon.index.embedding.hashing import HashingEmbedder
from canon.ops import checks as ops_checks
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.registry.policy import load_policy, project

ROOT = Path(__file__).resolve().parents[1]
DAY = dt.date(2026, 11, 20)
MEMO = "memo.rebate_reserve.q4_2026"
QUESTION = "What is the Q4 rebate reserve scenario?"
REVOKE_MEMO = 'revision: "rev-revoke"\nrevoke:\n  - role: finance_controller\n    object_id: "memo.finance.*"\n'


class Workspace:
    """CANON_HOME layout in a tmp folder, built with the production functions."""

    def __init__(self, tmp: Path):
        self.paths = CanonPaths(tmp / "home").ensure()
        self.corpus = tmp / "corpus"
        shutil.copytree(ROOT / "knowledge", self.corpus)
        self.contract = load_contract(ROOT / "contracts" / "knowledge.yml")
        self.embedder = HashingEmbedder(dimensions=64)
        self.con = registry.connect(self.paths.canon_db)
        self.runs = 0

    def build_registry(self):
        self.runs += 1
        build_registry(self.con, corpus=self.corpus, corpus_contract=self.contract, run_id=f"run-{self.runs}",
                       today=DAY)

    def policy(self):
        return load_policy(self.corpus / "policy.yml")

    def publish(self):
        self.runs += 1
        pol = self.policy()
        return index.publish(self.con, self.paths.lancedb_dir, project(self.docs(), pol), self.embedder,
                             policy_revision=pol.revision, run_id=f"run-{self.runs}")

    def docs(self):
        return registry.load_documents(self.con)

    def ask(self, question: str, role: str):
        ctx = ask_context(self.con, self.paths.lancedb_dir, self.docs(), self.policy(), log_answers=False)
        return ask(ctx, question, role, DAY)

    def close(self):
        self.con.close()


@pytest.fixture()
def ws(tmp_path):
    w = Workspace(tmp_path)
    w.build_registry()
    w.publish()
    yield w
    w.close()


def _all(w: Workspace, now=None):
    lancedb = w.paths.lancedb_dir
    return {
        "fresh": ops_checks.index_freshness(w.con, w.docs(), max_lag_hours={"corpus": 24.0}, lancedb_dir=lancedb,
                                            now=now),
        "revocation": ops_checks.revocation_lag(w.con, w.policy(), lancedb, now=now),
        "coverage": ops_checks.index_coverage(w.con, lancedb),
        "lineage": ops_checks.lineage_integrity(w.con, lancedb, now=now),
    }


def test_healthy_workspace_passes_every_check(ws):
    results = _all(ws)
    assert {k: o.passed for k, o in results.items()} == dict.fromkeys(results, True), \
        {k: o.summary for k, o in results.items()}
    assert results["coverage"].metadata["coverage"] == 1.0
    assert results["coverage"].metadata["live_chunks"] == results["lineage"].metadata["served_chunks"] > 0
    assert results["fresh"].metadata["unindexed_revisions"] == 0
    assert index_served.stale_doc_ids(ws.con, ws.docs()) == set()


def _edit_wiki(w: Workspace) -> str:
    path = w.corpus / "wiki" / "net_revenue_legacy.md"
    path.write_text(path.read_text() + "\nAn added sentence about refunds that changes the revision.\n")
    w.build_registry()
    return next(d.doc_id for d in w.docs() if d.source_uri.endswith("net_revenue_legacy.md"))


def test_stale_revision_warns_then_errors_and_shares_the_query_time_rule(ws):
    doc_id = _edit_wiki(ws)
    docs = ws.docs()
    # The query-time rule and the check agree, and both agree with the retriever.
    stale = index_served.stale_doc_ids(ws.con, docs)
    assert stale == {doc_id}
    retriever = build_retriever(ws.con, ws.paths.lancedb_dir, docs)
    assert {d.doc_id for d in docs if not retriever.chunks_of(d.doc_id, d.content_hash)} == stale

    fresh = ops_checks.index_freshness(ws.con, docs, max_lag_hours={"corpus": 24.0},
                                       lancedb_dir=ws.paths.lancedb_dir)
    assert not fresh.passed and fresh.severity == "WARN"
    assert [s["doc_id"] for s in fresh.details] == [doc_id]
    assert "older revision" in fresh.details[0]["reason"] and doc_id in fresh.summary
    assert fresh.metadata["unindexed_revisions"] == 1 and fresh.metadata["overdue_revisions"] == 0

    # Past the contract's freshness promise (24 h): ERROR, with the age.
    later = ops_checks.utcnow() + dt.timedelta(hours=30)
    overdue = ops_checks.index_freshness(ws.con, docs, max_lag_hours={"corpus": 24.0}, now=later)
    assert not overdue.passed and overdue.severity == "ERROR"
    assert overdue.metadata["oldest_unindexed_age_hours"] > 24 and "older than the freshness promise" in overdue.summary

    ws.publish()
    assert index_served.stale_doc_ids(ws.con, ws.docs()) == set()
    assert ops_checks.index_freshness(ws.con, ws.docs(), lancedb_dir=ws.paths.lancedb_dir).passed


def test_revocation_denies_before_reprojection_and_lag_check_turns_green(ws):
    assert ws.ask(QUESTION, "finance_controller").action == "answer"
    served_before = index.served_revision(ws.con)["revision_id"]

    # Revoke in policy.yml: the live policy denies at once, the index still lists the role.
    (ws.corpus / "policy.yml").write_text(REVOKE_MEMO)
    ops_checks.record_policy_revision(ws.con, "rev-revoke", seen_by="policy_sensor",
                                      seen_at=ops_checks.utcnow() - dt.timedelta(seconds=5))
    resp = ws.ask(QUESTION, "finance_controller")
    assert resp.action == "deny"
    assert MEMO not in str(resp.to_json_dict())
    assert index.served_revision(ws.con)["revision_id"] == served_before      # not re-projected yet

    pending = ops_checks.revocation_lag(ws.con, ws.policy(), ws.paths.lancedb_dir)
    assert not pending.passed and pending.severity == "WARN"
    assert pending.metadata["status"] == "pending"
    assert pending.metadata["unreflected_revocations"] == 1
    assert pending.details[0]["unreflected"] == [{"doc_id": MEMO, "role": "finance_controller"}]
    assert "rev-revoke" in pending.summary

    # Past the SLA it is an ERROR.
    late = ops_checks.revocation_lag(ws.con, ws.policy(), ws.paths.lancedb_dir,
                                     now=ops_checks.utcnow() + dt.timedelta(minutes=10))
    assert not late.passed and late.severity == "ERROR" and late.metadata["lag_seconds"] > 300

    # The fast path re-projects the ACL without embedding anything; the check turns green.
    result = ws.publish()
    assert result.embedded == 0 and result.rewritten_metadata_only >= 1
    green = ops_checks.revocation_lag(ws.con, ws.policy(), ws.paths.lancedb_dir)
    assert green.passed, green.summary
    assert green.metadata["status"] == "reflected" and 5 <= green.metadata["lag_seconds"] < 300
    assert ws.ask(QUESTION, "finance_controller").action == "deny"
    lags = {r["policy_revision"]: r for r in ops_checks.policy_lags(ws.con)}
    assert lags["rev-revoke"]["index_revision"] == result.revision_id and lags["rev-revoke"]["seen_by"] == "policy_sensor"


def test_revocation_reflected_after_the_sla_warns(ws):
    (ws.corpus / "policy.yml").write_text(REVOKE_MEMO)
    ops_checks.record_policy_revision(ws.con, "rev-revoke", seen_by="policy_sensor",
                                      seen_at=ops_checks.utcnow() - dt.timedelta(minutes=12))
    ws.publish()
    late = ops_checks.revocation_lag(ws.con, ws.policy(), ws.paths.lancedb_dir)
    assert not late.passed and late.severity == "WARN"
    assert late.metadata["status"] == "reflected" and late.metadata["lag_seconds"] > 700
    assert "over the 300 s SLA" in late.summary


def test_first_sighting_is_kept(ws):
    t0 = dt.datetime(2026, 11, 20, 10, 0, 0)
    assert ops_checks.record_policy_revision(ws.con, "p", seen_by="policy_sensor", seen_at=t0) == t0
    later = ops_checks.record_policy_revision(ws.con, "p", seen_by="knowledge_index", seen_at=t0 + dt.timedelta(1))
    assert later == t0
    earlier = t0 - dt.timedelta(minutes=1)
    aware = earlier.replace(tzinfo=dt.timezone.utc)
    assert ops_checks.record_policy_revision(ws.con, "p", seen_by="x", seen_at=aware) == earlier
    assert ws.con.execute("SELECT seen_by FROM policy_revisions WHERE policy_revision = 'p'").fetchall() == [("x",)]


def test_coverage_fails_on_a_chunk_without_embedding(ws):
    rev = index.served_revision(ws.con)["revision_id"]
    victim = ws.con.execute("SELECT chunk_id FROM embedding_lineage WHERE index_revision = ? ORDER BY chunk_id "
                            "LIMIT 1", [rev]).fetchall()[0][0]
    ws.con.execute("DELETE FROM embedding_lineage WHERE chunk_id = ? AND index_revision = ?", [victim, rev])
    out = ops_checks.index_coverage(ws.con, ws.paths.lancedb_dir)
    assert not out.passed and out.severity == "ERROR"
    assert out.metadata["not_embedded"] == 1 and out.metadata["coverage"] < 1.0
    assert out.details == [{"problem": "no embedding in the served revision", "chunk_id": victim}]


def test_lineage_integrity_flags_deleted_documents_still_served(ws):
    (ws.corpus / "notes" / "revenue_troubleshooting.md").unlink()
    ws.build_registry()                   # registry soft-deletes; the index still serves it
    gone = ws.con.execute("SELECT doc_id FROM documents WHERE deleted_at IS NOT NULL").fetchall()[0][0]
    out = ops_checks.lineage_integrity(ws.con, ws.paths.lancedb_dir)
    assert not out.passed and out.severity == "WARN"
    assert {p["doc_id"] for p in out.details} == {gone} and gone in out.summary
    overdue = ops_checks.lineage_integrity(ws.con, ws.paths.lancedb_dir,
                                           now=ops_checks.utcnow() + dt.timedelta(hours=30))
    assert overdue.severity == "ERROR"
    ws.publish()
    assert ops_checks.lineage_integrity(ws.con, ws.paths.lancedb_dir).passed


def test_no_index_yet_is_a_clear_failure(tmp_path):
    con = duckdb.connect(str(tmp_path / "c.duckdb"))
    registry.ensure_schema(con)
    out = ops_checks.index_freshness(con, [object()])  # any non-empty registry
    assert not out.passed and "materialize canon/knowledge_index" in out.summary
    assert index_served.stale_doc_ids(con, []) == set()


# ------------------------------------------------------------ the Dagster asset checks

def _run_checks(ws: Workspace, monkeypatch, tags=None):
    from assets.index import INDEX_KEY, ops_asset_checks
    from resources.paths import paths_from_env

    monkeypatch.setenv("CANON_HOME", str(ws.paths.home))
    monkeypatch.setenv("CANON_CORPUS", str(ws.corpus))
    ws.con.close()   # dagster-duckdb opens the file with its own config
    defs = dg.Definitions(
        assets=[dg.AssetSpec(INDEX_KEY)], asset_checks=ops_asset_checks,
        jobs=[dg.define_asset_job("ops_checks", selection=dg.AssetSelection.checks(*ops_asset_checks))],
        resources={"canon_db": DuckDBResource(database=str(ws.paths.canon_db)), "paths": paths_from_env()},
    )
    with dg.instance_for_test() as instance:
        result = defs.resolve_job_def("ops_checks").execute_in_process(instance=instance, tags=tags or {})
    ws.con = registry.connect(ws.paths.canon_db)
    assert result.success
    return {e.check_name: e for e in result.get_asset_check_evaluations()}


def test_asset_checks_pass_on_a_healthy_workspace(ws, monkeypatch):
    evals = _run_checks(ws, monkeypatch)
    assert set(evals) == {"index_revision_fresh", "revocation_lag", "index_coverage", "lineage_integrity"}
    assert all(e.passed for e in evals.values()), {n: e.description for n, e in evals.items()}
    assert evals["index_coverage"].metadata["coverage"].value == 1.0


def test_asset_checks_fail_with_actionable_metadata(ws, monkeypatch):
    _edit_wiki(ws)
    (ws.corpus / "policy.yml").write_text(REVOKE_MEMO)
    first_seen = (dt.datetime.now(dt.timezone.utc) - dt.timedelta(minutes=8)).isoformat(timespec="seconds")
    evals = _run_checks(ws, monkeypatch, tags={"canon/policy_revision": "rev-revoke",
                                               "canon/policy_first_seen": first_seen.replace("+00:00", "Z")})
    fresh, lag = evals["index_revision_fresh"], evals["revocation_lag"]
    assert not fresh.passed and fresh.severity == dg.AssetCheckSeverity.WARN
    assert fresh.metadata["unindexed_revisions"].value == 1 and "table" in fresh.metadata
    assert not lag.passed and lag.severity == dg.AssetCheckSeverity.ERROR
    assert lag.metadata["status"].value == "pending" and lag.metadata["lag_seconds"].value >= 480
    assert "canon_policy_job" in lag.description
    # The sensor's sighting (from the run tags) is the recorded first-seen time.
    row = ws.con.execute("SELECT seen_by FROM policy_revisions WHERE policy_revision = 'rev-revoke'").fetchall()
    assert row == [("policy_sensor",)]
    assert evals["index_coverage"].passed and evals["lineage_integrity"].passed
