"""`canon forget`: deletion that provably propagates to every store, resumes
after an interruption, fails loudly when verification finds anything, and
keeps the document from coming back with the next registry build."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import lancedb
import pytest

from canon.ask.context import ask_context
from canon.ask.pipeline import ask
from canon.ask.understanding import catalog_store
from canon.cli.main import main
from canon.core.config import CanonPaths
from canon.core.errors import CanonInputError
from canon.evaluation.run import evaluate
from canon.index import publish as index
from canon.index import search as index_search
from canon.index.embedding.hashing import HashingEmbedder
from canon.lifecycle import forget as lifecycle
from canon.lifecycle.forget import run as forget_run
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.registry.policy import load_policy

ROOT = Path(__file__).resolve().parents[1]
DOSSIER = ROOT / "tests" / "fixtures" / "dossier"
CORPUS = DOSSIER / "corpus.jsonl"
CONTRACT = load_contract(ROOT / "contracts" / "knowledge.yml")
MEMO = "memo.rebate_reserve.q4_2026"
# Verbatim pieces of the memo's text and title: none may survive anywhere.
MEMO_PHRASES = ("rebate reserve scenario is 7.5 percent", "Preliminary Q4 rebate reserve",
                "eligible enterprise contract value", "Finance controller Q4 rebate reserve scenario")
MEMO_QUESTION = "What does the finance-only Q4 rebate reserve memo say?"


def _build(paths: CanonPaths, corpus: Path = CORPUS, run_id: str = "run-1"):
    con = registry.connect(paths.canon_db)
    build = build_registry(con, corpus=corpus, corpus_contract=CONTRACT, run_id=run_id)
    registry.refresh_definitions(con)
    catalog_store.refresh_catalog(con)   # as the registry asset does: it holds title words
    return con, build


@pytest.fixture()
def home(tmp_path, monkeypatch):
    """A workspace over the dossier with history: two publishes (older LanceDB
    versions hold the memo), logged answers, an eval report under CANON_HOME."""
    monkeypatch.setenv("CANON_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CANON_POLICY", raising=False)
    monkeypatch.delenv("CANON_OPENLINEAGE_TRANSPORT", raising=False)
    paths = CanonPaths.from_env().ensure()
    con, _ = _build(paths)
    docs = registry.load_documents(con)
    emb = HashingEmbedder()
    index.publish(con, paths.lancedb_dir, docs, emb, policy_revision="p1", run_id="run-1")
    # a metadata-only change: a second LanceDB version, the memo still in both
    docs2 = [d.model_copy(update={"authority": 71}) if d.doc_id == MEMO else d for d in docs]
    index.publish(con, paths.lancedb_dir, docs2, emb, policy_revision="p1", run_id="run-2")
    ctx = ask_context(con, paths.lancedb_dir, docs, load_policy(None))
    first = ask(ctx, MEMO_QUESTION, "finance_controller")
    assert MEMO in [e.doc_id for e in first.evidence]
    ask(ctx, "Which net revenue definition applies for reporting date 2026-08-31?", "analyst")
    con.close()
    # an eval set in which the role that may read the memo asks about it: its text lands in the report
    gold = json.loads((DOSSIER / "gold.json").read_text()) + [
        {"id": "M1", "question": MEMO_QUESTION, "role": "finance_controller", "as_of": "2026-10-10",
         "expected_action": "answer", "gold_docs": [MEMO]}]
    (tmp_path / "gold.json").write_text(json.dumps(gold))
    report = evaluate(CORPUS, tmp_path / "gold.json", embedder=emb)
    (paths.home / "eval").mkdir(parents=True, exist_ok=True)
    (paths.home / "eval" / "eval_report.json").write_text(json.dumps({"dossier": report}, default=str))
    assert "rebate reserve scenario" in (paths.home / "eval" / "eval_report.json").read_text()
    return paths


def _files_with(home: Path, needle: bytes) -> list[str]:
    return [str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and needle in p.read_bytes()]


def _duckdb_tables_with(con, needle: str) -> list[str]:
    out = []
    for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall():
        cols = [c for c, ty in con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = ?",
                                          [t]).fetchall() if "VARCHAR" in ty]
        for c in cols:
            if con.execute(f'SELECT count(*) FROM "{t}" WHERE contains(lower(CAST("{c}" AS VARCHAR)), ?)',
                           [needle.lower()]).fetchall()[0][0]:
                out.append(f"{t}.{c}")
    return out


def test_forget_removes_the_document_from_every_store_and_verifies(home):
    res = lifecycle.forget(MEMO)
    assert res.verified and res.state == "verified" and not res.findings
    assert res.within_promise and res.promise_hours == 24.0
    assert 0 < res.duration_seconds < 24 * 3600
    assert len(res.chunk_ids) == 1
    lance = res.details["lancedb"]["chunks"]
    assert lance["rows_removed"] == 1 and lance["versions_holding"] and lance["cleanup"]["versions_after"] == 1
    assert res.details["duckdb_file"]["compacted"] is True
    assert res.details["eval"]["files_scrubbed"] == ["eval/eval_report.json"]
    assert not (home.home / "lifecycle" / "inflight").exists() or not any((home.home / "lifecycle" / "inflight").iterdir())

    # Nothing of the text anywhere on disk under CANON_HOME (LanceDB files, DuckDB file, eval, events).
    for phrase in MEMO_PHRASES:
        assert _files_with(home.home, phrase.encode()) == [], phrase

    con = registry.connect(home.canon_db)
    try:
        for phrase in MEMO_PHRASES:
            assert _duckdb_tables_with(con, phrase) == [], phrase
        # the stored object catalog was rebuilt without the memo's names, and still matches
        assert not con.execute("SELECT count(*) FROM ask_catalog_names WHERE contains(name, 'rebate reserve')"
                               ).fetchall()[0][0]
        assert catalog_store.catalog_is_current(con)
        # every LanceDB table, every version left: no row of the memo
        db = lancedb.connect(str(home.lancedb_dir))
        for name in db.list_tables().tables:
            tbl = db.open_table(name)
            for v in tbl.list_versions():
                tbl.checkout(int(v["version"]))
                assert tbl.count_rows(f"doc_id = '{MEMO}'") == 0
                assert tbl.count_rows(f"chunk_id IN ('{res.chunk_ids[0]}')") == 0
        # FTS and vector search over the served revision, for the role that could read it
        emb = HashingEmbedder()
        fts = index_search.search(home.lancedb_dir, con, "rebate reserve scenario", None, role="finance_controller",
                                  mode="fts", k=20)
        vec = index_search.search(home.lancedb_dir, con, None, emb.embed([MEMO_PHRASES[0]])[0],
                                  role="finance_controller", mode="vector", k=50)
        assert MEMO not in {h.doc_id for h in fts + vec}
        # ask: the memo is gone for the role that could read it
        ctx = ask_context(con, home.lancedb_dir, registry.load_documents(con), load_policy(None))
        resp = ask(ctx, MEMO_QUESTION, "finance_controller")
        assert MEMO not in json.dumps(resp.to_json_dict())
        # registry rows: redacted tombstone, no definition, lineage kept as ids
        assert con.execute("SELECT text, title, deleted_at IS NOT NULL FROM documents WHERE doc_id = ?",
                           [MEMO]).fetchall() == [("", "", True)]
        assert con.execute("SELECT count(*) FROM definitions WHERE evidence_id = ?", [MEMO]).fetchall()[0][0] == 0
        assert con.execute("SELECT count(*) FROM chunk_lineage WHERE doc_id = ? AND deleted_at IS NOT NULL",
                           [MEMO]).fetchall()[0][0] == 1
        assert con.execute("SELECT count(*) FROM embedding_lineage WHERE chunk_id = ?",
                           [res.chunk_ids[0]]).fetchall()[0][0] == 0
        assert con.execute("SELECT count(*) FROM document_versions WHERE doc_id = ?", [MEMO]).fetchall()[0][0] == 1
        # answer log: the citation (ids) is kept, no text
        cited = [json.loads(r[0]) for r in con.execute("SELECT cited_json FROM answer_log").fetchall()]
        memo_cites = [c for cs in cited for c in cs if c["doc_id"] == MEMO]
        assert memo_cites and memo_cites[0]["chunk_ids"] == res.chunk_ids
        # the deletion record
        row = con.execute("SELECT state, verified, within_promise, attempts, completed_at IS NOT NULL, "
                          "cardinality(probe_sha256) FROM deletions WHERE doc_id = ?", [MEMO]).fetchall()[0]
        assert row[:5] == ("verified", True, True, 1, True) and row[5] >= 3
    finally:
        con.close()

    # the eval report keeps ids, loses the cited text
    report = (home.home / "eval" / "eval_report.json").read_text()
    assert MEMO in report and "[forgotten]" in report

    # the OpenLineage run: START + COMPLETE with the deletion metric
    events = [json.loads(line) for line in home.openlineage_file.read_text().splitlines()]
    forget_events = [e for e in events if e["job"]["name"] == "canon_forget"]
    assert [e["eventType"] for e in forget_events] == ["START", "COMPLETE"]
    facet = forget_events[-1]["run"]["facets"]["canonDeletion"]
    assert facet["verified"] is True and facet["withinPromise"] is True and facet["promiseHours"] == 24.0


def test_forgotten_document_does_not_come_back_with_the_next_build(home):
    lifecycle.forget(MEMO)
    con, build = _build(home, run_id="run-rebuild")
    try:
        assert MEMO not in {d.doc_id for d in registry.load_documents(con)}
        forgotten = [q for q in build.quarantined if q.doc_id == MEMO]
        assert len(forgotten) == 1 and forgotten[0].reasons[0].startswith("forgotten on ")
        assert con.execute("SELECT reasons FROM quarantine WHERE doc_id = ?", [MEMO]).fetchall() == [
            (forgotten[0].reasons,)]
        out = index.publish(con, home.lancedb_dir, registry.load_documents(con), HashingEmbedder(),
                            policy_revision="p1", run_id="run-3")
        assert MEMO not in index.indexed_hashes(con, home.lancedb_dir)
        assert out.documents == 11
    finally:
        con.close()
    # and a second forget re-verifies what is there now (the tombstone quarantine row is allowed)
    again = lifecycle.forget(MEMO)
    assert again.verified and again.attempts == 2


@pytest.mark.parametrize("stop_at", ["requested", "registry_cleared", "lineage_cleared", "index_cleared",
                                     "stores_cleared", "compacted"])
def test_interrupted_deletion_resumes_and_finishes(home, monkeypatch, stop_at):
    def crash(name):
        if name == stop_at:
            raise KeyboardInterrupt(f"killed at {name}")

    monkeypatch.setattr(forget_run, "_checkpoint", crash)
    with pytest.raises(KeyboardInterrupt):
        lifecycle.forget(MEMO)
    con = registry.connect(home.canon_db)
    try:
        state, verified = con.execute("SELECT state, verified FROM deletions WHERE doc_id = ?", [MEMO]).fetchall()[0]
        # the tombstone holds from the first moment: a rebuild does not bring it back
        build_registry(con, corpus=CORPUS, corpus_contract=CONTRACT, run_id="run-mid")
        assert MEMO not in {d.doc_id for d in registry.load_documents(con)}
    finally:
        con.close()
    assert verified is False and state == ("stores_cleared" if stop_at in ("stores_cleared", "compacted")
                                           else "requested")
    monkeypatch.setattr(forget_run, "_checkpoint", lambda name: None)
    res = lifecycle.forget(MEMO)
    assert res.verified and res.resumed and res.attempts == 2
    for phrase in MEMO_PHRASES:
        assert _files_with(home.home, phrase.encode()) == [], phrase
    events = [json.loads(line) for line in home.openlineage_file.read_text().splitlines()]
    assert [e["eventType"] for e in events if e["job"]["name"] == "canon_forget"] == [
        "START", "ABORT", "START", "COMPLETE"]


def test_a_copy_outside_the_known_stores_fails_verification(home, capsys):
    stray = home.home / "exports" / "memo.txt"
    stray.parent.mkdir()
    stray.write_text("copied by hand: Preliminary Q4 rebate reserve scenario is 7.5 percent of eligible "
                     "enterprise contract value.")
    with pytest.raises(lifecycle.DeletionNotVerified) as exc:
        lifecycle.forget(MEMO)
    res = exc.value.result
    assert not res.verified and res.state == "stores_cleared"
    assert {f.store for f in res.findings} == {"file:exports/memo.txt"}
    assert not any(p in json.dumps(res.to_dict(), default=str) for p in MEMO_PHRASES)  # hashes, never the text
    # the CLI: non-zero exit, never a warning
    assert main(["forget", "--doc-id", MEMO, "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["verified"] is False and out["findings"][0]["store"] == "file:exports/memo.txt"
    con = registry.connect(home.canon_db)
    try:
        assert con.execute("SELECT verified, error IS NOT NULL FROM deletions").fetchall() == [(False, True)]
    finally:
        con.close()
    events = [json.loads(line) for line in home.openlineage_file.read_text().splitlines()]
    assert events[-1]["eventType"] == "FAIL"
    assert not any(p in json.dumps(events) for p in MEMO_PHRASES)
    stray.unlink()
    assert main(["forget", "--doc-id", MEMO]) == 0


def test_duckdb_keeps_deleted_text_in_free_blocks_unless_rewritten(home, monkeypatch):
    # Why forget rewrites canon.duckdb: without it, the file still holds the text.
    with monkeypatch.context() as m:  # (not monkeypatch.undo(): that would also drop CANON_HOME)
        m.setattr(forget_run, "compact_duckdb", lambda connect, path: {"compacted": False})
        with pytest.raises(lifecycle.DeletionNotVerified) as exc:
            lifecycle.forget(MEMO)
    assert {f.store for f in exc.value.result.findings} == {"file:canon.duckdb"}
    assert lifecycle.forget(MEMO, paths=home).verified


def test_unknown_document_is_an_input_error(home):
    with pytest.raises(CanonInputError):
        lifecycle.forget("no.such.doc")
    assert main(["forget", "--doc-id", "no.such.doc"]) == 2


def test_forget_dagster_job(home):
    from dagster_duckdb import DuckDBResource

    from assets.lifecycle import forget_job
    from resources.lineage_emitter import OpenLineageResource
    from resources.paths import paths_from_env

    resources = {"canon_db": DuckDBResource(database=str(home.canon_db)), "lineage": OpenLineageResource(),
                 "paths": paths_from_env()}
    ok = forget_job.execute_in_process(
        run_config={"ops": {"forget_document": {"config": {"doc_id": MEMO}}}}, resources=resources)
    assert ok.success
    meta = [e for e in ok.all_node_events if e.event_type_value == "STEP_OUTPUT"][0].event_specific_data.metadata
    assert meta["verified"].value is True and meta["within_promise"].value is True
    bad = forget_job.execute_in_process(
        run_config={"ops": {"forget_document": {"config": {"doc_id": "no.such.doc"}}}}, resources=resources,
        raise_on_error=False)
    assert not bad.success
    con = duckdb.connect(str(home.canon_db), read_only=True)
    try:
        assert con.execute("SELECT verified FROM deletions WHERE doc_id = ?", [MEMO]).fetchall() == [(True,)]
    finally:
        con.close()
