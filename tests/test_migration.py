"""`canon migrate` / `canon rollback`: a candidate index built beside the live
one, a coverage gate, both configurations on the release gold sets, cut-over
only when everything passes, and a rollback within the window."""

from __future__ import annotations

import json
from pathlib import Path

import lancedb
import pytest

from canon.ask.context import ask_context
from canon.ask.pipeline import ask
from canon.cli.main import main
from canon.core.config import CanonPaths
from canon.core.errors import CanonInputError
from canon.index import config as index_config
from canon.index import publish as index
from canon.index import search as index_search
from canon.index.embedding.hashing import HashingEmbedder
from canon.index.embedding.torch import SentenceTransformerEmbedder
from canon.lifecycle import forget as lifecycle
from canon.lifecycle import migrate as migration
from canon.lifecycle.migrate import run as migration_run
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.registry.policy import load_policy

ROOT = Path(__file__).resolve().parents[1]
DOSSIER = ROOT / "tests" / "fixtures" / "dossier"
CONTRACT = load_contract(ROOT / "contracts" / "knowledge.yml")
DOSSIER_SET = [("dossier", DOSSIER / "corpus.jsonl", DOSSIER / "gold.json")]
Q = "Which net revenue definition applies for reporting date 2026-08-31?"
MEMO = "memo.rebate_reserve.q4_2026"


def _workspace(tmp_path, monkeypatch, embedder):
    monkeypatch.setenv("CANON_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CANON_POLICY", raising=False)
    # The live policy is the configured corpus's (canon/core/config.py), never the folder a build recorded.
    monkeypatch.setenv("CANON_CORPUS", str(DOSSIER))
    paths = CanonPaths.from_env().ensure()
    con = registry.connect(paths.canon_db)
    build_registry(con, corpus=DOSSIER / "corpus.jsonl", corpus_contract=CONTRACT, run_id="run-1")
    registry.refresh_definitions(con)
    index.publish(con, paths.lancedb_dir, registry.load_documents(con), embedder, policy_revision="p1",
                  run_id="run-1")
    con.close()
    return paths


@pytest.fixture()
def home(tmp_path, monkeypatch):
    return _workspace(tmp_path, monkeypatch, HashingEmbedder())


def _served(paths):
    con = registry.connect(paths.canon_db)
    try:
        return index.served_revision(con)
    finally:
        con.close()


def _ask(paths, question=Q, role="analyst"):
    """An answer through the production path: the retriever picks the embedder of the served revision."""
    con = registry.connect(paths.canon_db)
    try:
        ctx = ask_context(con, paths.lancedb_dir, registry.load_documents(con), load_policy(None))
        resp = ask(ctx, question, role)
        logged = con.execute("SELECT index_revision FROM answer_log WHERE answer_id = ?",
                             [resp.answer_id]).fetchall()[0][0]
        return resp, logged
    finally:
        con.close()


def test_incomplete_coverage_refuses_to_cut_over(home):
    before = _served(home)
    con = registry.connect(home.canon_db)
    docs = [d for d in registry.load_documents(con) if d.doc_id != "metric.net_revenue.v2"]
    live_v2 = [r[0] for r in con.execute(
        "SELECT e.chunk_id FROM embedding_lineage e JOIN chunk_lineage c USING (chunk_id) "
        "WHERE e.index_revision = ? AND c.doc_id = 'metric.net_revenue.v2'", [before["revision_id"]]).fetchall()]
    con.close()
    res = migration.migrate(paths=home, embedding_model="hashing:256", documents=docs, release_sets=DOSSIER_SET)
    assert res.status == "refused" and not res.cut_over and res.cutover_revision is None
    assert res.coverage["complete"] is False and res.coverage["missing"] == live_v2
    assert res.coverage["missing_documents"] == ["metric.net_revenue.v2"]
    assert res.coverage["live_chunks"] == 12 and res.coverage["covered"] == 11
    assert "coverage incomplete" in res.decision
    # the candidate exists beside the live table, the served revision did not move
    after = _served(home)
    assert after["revision_id"] == before["revision_id"] and after["lance_table"] == "chunks"
    assert res.to_table in lancedb.connect(str(home.lancedb_dir)).list_tables().tables
    con = registry.connect(home.canon_db)
    try:
        assert index_config.active_config(con) is None
        row = con.execute("SELECT status, coverage_complete, gate_passed FROM index_migrations").fetchall()
        assert row == [("refused", False, True)]
        assert json.loads(con.execute("SELECT coverage_json FROM index_migrations").fetchall()[0][0])["missing"] == live_v2
    finally:
        con.close()
    assert not list((home.home / "migrations").glob("*.duckdb"))  # staging removed
    resp, logged = _ask(home)
    assert logged == before["revision_id"]


def test_complete_migration_cuts_over_and_rolls_back(home):
    before = _served(home)
    _, logged_before = _ask(home)
    seen = []

    def progress(msg):  # the live revision never moves while the candidate is built and evaluated
        seen.append((msg, _served(home)["revision_id"]))

    res = migration.migrate(paths=home, embedding_model="hashing:256", release_sets=DOSSIER_SET, progress=progress)
    assert res.status == "cut_over", res.decision
    assert res.coverage["complete"] and res.coverage["covered"] == res.coverage["live_chunks"] == 12
    assert res.gate_passed and set(res.evaluation["dossier"]) == {"current", "candidate"}
    assert "| metric | current | candidate |" in res.table_markdown
    assert all(rev == before["revision_id"] for msg, rev in seen[:-1])
    assert Path(res.report_path).exists()

    served = _served(home)
    assert served["revision_id"] == res.cutover_revision and served["lance_table"] == res.to_table
    assert served["embedding_model_id"] == HashingEmbedder(256).identity.model_id
    con = registry.connect(home.canon_db)
    try:
        hits = index_search.search(home.lancedb_dir, con, "credit notes", HashingEmbedder(256).embed(["credit notes"])[0],
                                   role="analyst", k=3)
        assert hits and {h.revision_id for h in hits} == {res.cutover_revision}
        cfg, table = index_config.active_config(con)
        assert table == res.to_table and cfg.embedder.dimensions == 256
        assert con.execute("SELECT count(*) FROM embedding_lineage WHERE index_revision = ?",
                           [res.cutover_revision]).fetchall()[0][0] == 12
    finally:
        con.close()
    resp, logged_after = _ask(home)
    assert resp.action == "answer" and logged_after == res.cutover_revision != logged_before

    # a routine publish after the cut-over follows the active configuration (it does not revert it)
    con = registry.connect(home.canon_db)
    try:
        emb, opts = index_config.publish_setup(con, HashingEmbedder())
        again = index.publish(con, home.lancedb_dir, registry.load_documents(con), emb,
                              policy_revision=load_policy(None).revision, run_id="run-nightly", **opts)
        assert again.noop and index.served_revision(con)["revision_id"] == res.cutover_revision
    finally:
        con.close()

    rb = migration.rollback(paths=home)
    served = _served(home)
    assert served["revision_id"] == rb.rollback_revision and served["lance_table"] == "chunks"
    assert served["embedding_model_id"] == before["embedding_model_id"] and rb.restored_revision == before["revision_id"]
    resp, logged_rb = _ask(home)
    assert resp.action == "answer" and logged_rb == rb.rollback_revision
    con = registry.connect(home.canon_db)
    try:
        assert index_config.active_config(con)[1] == "chunks"
        assert con.execute("SELECT status FROM index_migrations").fetchall() == [("rolled_back",)]
        # the answer log attributes each answer to the revision that served it
        revs = [r[0] for r in con.execute("SELECT index_revision FROM answer_log ORDER BY asked_at").fetchall()]
        assert revs == [before["revision_id"], res.cutover_revision, rb.rollback_revision]
    finally:
        con.close()
    with pytest.raises(CanonInputError, match="no cut-over migration"):
        migration.rollback(paths=home)


def test_release_gate_failure_refuses(home, tmp_path):
    gold = json.loads((DOSSIER / "gold.json").read_text())
    gold[0]["expected_action"] = "abstain"   # a case no configuration can pass
    (tmp_path / "bad_gold.json").write_text(json.dumps(gold))
    res = migration.migrate(paths=home, embedding_model="hashing:256",
                            release_sets=[("strict", DOSSIER / "corpus.jsonl", tmp_path / "bad_gold.json")])
    assert res.status == "refused" and res.coverage["complete"] and not res.gate_passed
    assert "release gate failed" in res.decision
    assert _served(home)["lance_table"] == "chunks"


def test_chunker_migration_goes_through_the_same_gate(home):
    res = migration.migrate(paths=home, chunker_max_chars=60, release_sets=DOSSIER_SET)
    assert res.status == "cut_over", res.decision
    assert res.to_config["max_chars"] == 60 and res.to_model_id == res.from_model_id
    cov = res.coverage
    assert cov["complete"] and cov["rechunked"] > 0 and cov["candidate_chunks"] > cov["live_chunks"]
    con = registry.connect(home.canon_db)
    try:
        rev = index.served_revision(con)
        n_live = con.execute("SELECT count(*) FROM chunk_lineage WHERE deleted_at IS NULL").fetchall()[0][0]
        assert n_live == rev["chunk_count"] == cov["candidate_chunks"]
    finally:
        con.close()
    resp, logged = _ask(home)
    assert resp.action == "answer" and resp.evidence[0].chunk_ids and logged == res.cutover_revision
    rb = migration.rollback(paths=home)
    assert _served(home)["revision_id"] == rb.rollback_revision


def test_nothing_to_migrate_and_bad_options(home):
    with pytest.raises(CanonInputError, match="nothing to migrate"):
        migration.migrate(paths=home, embedding_model="hashing:384", release_sets=DOSSIER_SET)
    with pytest.raises(CanonInputError, match="sentence-transformers"):
        migration.migrate(paths=home, max_seq_length=128, release_sets=DOSSIER_SET)
    assert main(["migrate", "--chunker-max-chars", "10"]) == 2
    assert main(["rollback"]) == 2


def test_forget_reaches_the_rollback_table_and_rollback_still_works(home):
    res = migration.migrate(paths=home, embedding_model="hashing:256", release_sets=DOSSIER_SET)
    assert res.status == "cut_over"
    out = lifecycle.forget(MEMO)
    assert out.verified
    assert set(out.details["lancedb"]) == {"chunks", res.to_table}
    assert out.details["lancedb"]["chunks"]["rows_removed"] == 1
    assert out.details["lancedb"][res.to_table]["revision"] is not None
    rb = migration.rollback(paths=home)
    assert rb.rows == 11
    tbl = lancedb.connect(str(home.lancedb_dir)).open_table("chunks")
    assert tbl.count_rows(f"doc_id = '{MEMO}'") == 0
    resp, logged = _ask(home)
    assert logged == rb.rollback_revision


def test_cli_and_dagster_jobs(home, capsys, monkeypatch):
    # the CLI with the default release sets: the dossier and, where it ships, the hard set
    assert main(["migrate", "--embedding-model", "hashing:256", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "cut_over"
    assert set(out["evaluation"]) == {n for n, _, g in migration.default_release_sets()}
    assert main(["rollback", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["restored_revision"] == out["from_revision"]

    from dagster_duckdb import DuckDBResource

    from assets.lifecycle import migrate_job, rollback_job
    from resources.lineage_emitter import OpenLineageResource
    from resources.paths import paths_from_env

    monkeypatch.setattr(migration_run, "default_release_sets", lambda: DOSSIER_SET)
    resources = {"canon_db": DuckDBResource(database=str(home.canon_db)), "lineage": OpenLineageResource(),
                 "paths": paths_from_env()}
    run = migrate_job.execute_in_process(
        run_config={"ops": {"migrate_index": {"config": {"chunker_max_chars": 60}}}}, resources=resources)
    assert run.success
    meta = [e for e in run.all_node_events if e.event_type_value == "STEP_OUTPUT"][0].event_specific_data.metadata
    assert meta["status"].value == "cut_over" and meta["coverage/missing"].value == 0
    assert "| metric | current | candidate |" in meta["eval_side_by_side"].value
    assert rollback_job.execute_in_process(resources=resources).success
    refused = migrate_job.execute_in_process(
        run_config={"ops": {"migrate_index": {"config": {"embedding_model": "hashing:384"}}}},
        resources=resources, raise_on_error=False)
    assert not refused.success  # nothing to migrate: a failed step, not a warning
    events = [json.loads(line) for line in home.openlineage_file.read_text().splitlines()]
    names = {e["job"]["name"] for e in events}
    assert {"canon_migrate", "canon_rollback"} <= names
    facet = [e for e in events if e["job"]["name"] == "canon_migrate" and e["eventType"] == "COMPLETE"][0]
    assert facet["run"]["facets"]["canonMigration"]["coverageComplete"] is True


def test_real_model_max_seq_length_migration(tmp_path, monkeypatch):
    """Two real configurations of the one model that ships offline: the same
    all-MiniLM-L6-v2 with max_seq_length 256 and 128, each its own identity."""
    base = SentenceTransformerEmbedder()
    paths = _workspace(tmp_path, monkeypatch, base)
    before = _served(paths)
    assert "max_seq=256" in before["embedding_model_id"]
    res = migration.migrate(paths=paths, max_seq_length=128, release_sets=DOSSIER_SET)
    assert res.status == "cut_over", res.decision
    assert "max_seq=128" in res.to_model_id and res.to_model_id != res.from_model_id
    assert res.coverage["complete"] and res.coverage["same_chunk"] == 12
    assert res.evaluation["dossier"]["candidate"]["gate"] == []
    resp, logged = _ask(paths)   # query vectors come from the recorded 128-token configuration
    assert resp.action == "answer" and logged == res.cutover_revision
    con = registry.connect(paths.canon_db)
    try:
        assert index_config.recorded_embedder(con, res.to_model_id).max_seq_length == 128
    finally:
        con.close()
    rb = migration.rollback(paths=paths)
    assert _served(paths)["embedding_model_id"] == before["embedding_model_id"]
    resp, logged = _ask(paths)
    assert resp.action == "answer" and logged == rb.rollback_revision


def test_a_pytorch_index_stays_served_and_migrates_to_the_int8_default(tmp_path, monkeypatch):
    """An index built before int8 ONNX became the default (the bundled model on
    PyTorch) is still served with PyTorch query vectors, and `canon migrate
    --embedding-model default` moves it to the int8 backend through the gate."""
    torch_emb = SentenceTransformerEmbedder()
    paths = _workspace(tmp_path, monkeypatch, torch_emb)
    before = _served(paths)
    assert before["embedding_model_id"] == torch_emb.identity.model_id
    resp, _ = _ask(paths)
    assert resp.action == "answer"
    con = registry.connect(paths.canon_db)
    try:
        cfg, _table = index_config.serving_config(con)
    finally:
        con.close()
    assert cfg.embedder.backend == "torch"
    res = migration.migrate(paths=paths, embedding_model="default", release_sets=DOSSIER_SET)
    assert res.status == "cut_over", res.decision
    assert res.to_model_id.startswith("onnxruntime:all-MiniLM-L6-v2@")
    assert res.evaluation["dossier"]["candidate"]["gate"] == []
    resp, logged = _ask(paths)
    assert resp.action == "answer" and logged == res.cutover_revision
    assert resp.evidence[0].doc_id == "metric.net_revenue.v2" and resp.evidence[0].chunk_ids


def test_specs_recorded_before_backends_existed_rebuild_pytorch():
    old = {"kind": "sentence-transformers", "model_path": None, "max_seq_length": 128, "dimensions": None}
    spec = index_config.EmbedderSpec.from_record(old)
    assert spec.backend == "torch" and isinstance(spec.build(), SentenceTransformerEmbedder)
    assert index_config.EmbedderSpec().backend == "onnx-int8"
    assert index_config.EmbedderSpec.parse("torch").backend == "torch"
    assert index_config.EmbedderSpec.parse("/models/x").backend == "torch"
    assert index_config.EmbedderSpec.parse("onnx-int8:/models/x") == index_config.EmbedderSpec(
        "sentence-transformers", "/models/x", backend="onnx-int8")
    with pytest.raises(CanonInputError, match="needs a model folder"):
        index_config.EmbedderSpec.parse("onnx-int8: ")
    with pytest.raises(CanonInputError, match="unknown embedding backend 'tpu'"):
        index_config.EmbedderSpec(backend="tpu").build()
