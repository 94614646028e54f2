"""The LanceDB index published as DuckDB-recorded revisions: incremental
publish, outbox repair after crashes, pinned reads, prefilters, cleanup."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import duckdb
import lancedb
import numpy as np
import pytest

from canon.core.errors import CanonInputError
from canon.index import publish as ix
from canon.index.chunking import chunk_document
from canon.index.embedding.base import EmbeddingError
from canon.index.embedding.hashing import HashingEmbedder
from canon.index.embedding.torch import SentenceTransformerEmbedder
from canon.models.documents import Document

ROOT = Path(__file__).resolve().parents[1]
PHRASE = "zebrafinch quarterly rebate reserve"


def mk(doc_id: str, text: str, **kw) -> Document:
    base = dict(
        doc_id=doc_id, object_id=kw.pop("object_id", f"obj.{doc_id}"), kind="wiki", title=f"Title {doc_id}",
        status="approved", authority=80, version="1", valid_from=dt.date(2026, 1, 1), valid_to=None,
        allowed_roles=["analyst", "finance_controller"], text=text,
    )
    base.update(kw)
    return Document(**base)


def corpus() -> list[Document]:
    return [
        mk("metric.net_revenue.v2", "Net revenue equals gross amount minus discounts minus refunds minus credit "
           "notes. VAT and shipping are excluded. Currency uses transaction-date FX.", kind="metric_definition",
           version="2"),
        mk("metric.net_revenue.v3_draft", "Proposed: net revenue would include shipping revenue and use "
           "month-end FX.", kind="metric_definition", status="draft", version="3-draft", authority=30),
        mk("wiki.revenue", "# Revenue wiki\nRevenue questions go to finance.\n\n## Refunds\nRefunds are "
           "recognized on refund_date.\n\n## Currency\nAll amounts are reported in USD."),
        mk("runbook.loader", "# Loader runbook\nRestart the order-line loader when freshness breaches SLA.",
           kind="runbook"),
        mk("memo.board", f"Board only: the {PHRASE} is 4.2 million for Q4.", kind="restricted_memo",
           allowed_roles=["finance_controller"]),
    ]


@pytest.fixture()
def ws(index_ws):
    return index_ws


def publish(ws, docs, **kw):
    kw.setdefault("policy_revision", "p1")
    kw.setdefault("run_id", "run-test")
    return ix.publish(ws["con"], ws["dir"], docs, ws["emb"], **kw)


def table_at(ws, version=None):
    tbl = lancedb.connect(str(ws["dir"])).open_table("chunks")
    if version is not None:
        tbl.checkout(int(version))
    return tbl


def rows(ws, version=None) -> dict[str, dict]:
    t = table_at(ws, version).to_arrow().to_pylist()
    return {r["chunk_id"]: r for r in t}


def fts(ws, text, role="analyst", **kw):
    return ix.search(ws["dir"], ws["con"], text, None, role=role, mode="fts", **kw)


def n_revisions(ws) -> int:
    return ws["con"].execute("SELECT count(*) FROM index_revisions").fetchall()[0][0]


# --------------------------------------------------------------- incremental

def test_first_publish_then_noop_embeds_nothing_and_writes_nothing(ws):
    docs = corpus()
    first = publish(ws, docs)
    n_chunks = sum(len(chunk_document(d)) for d in docs)
    assert (first.chunks, first.embedded, first.reused, first.deleted) == (n_chunks, n_chunks, 0, 0)
    served = ix.served_revision(ws["con"])
    assert served["revision_id"] == first.revision_id and served["status"] == "ready"
    assert served["row_count"] == n_chunks == len(rows(ws))
    version = table_at(ws).version

    again = publish(ws, docs, run_id="run-2")
    assert again.noop and again.embedded == 0 and again.revision_id == first.revision_id
    assert table_at(ws).version == version, "a no-op writes no LanceDB version"
    assert n_revisions(ws) == 1

    # Only the policy revision changed: a new revision over the same LanceDB version.
    pol = publish(ws, docs, policy_revision="p2", run_id="run-3")
    assert pol.embedded == 0 and pol.revision_id != first.revision_id and pol.lance_version == version
    assert ix.served_revision(ws["con"])["policy_revision"] == "p2"
    assert table_at(ws).version == version


def test_metadata_only_change_rewrites_rows_without_embedding(ws):
    docs = corpus()
    publish(ws, docs)
    before = rows(ws)
    draft_ids = {c for c, r in before.items() if r["doc_id"] == "metric.net_revenue.v3_draft"}

    docs[1] = docs[1].model_copy(update={"status": "approved", "allowed_roles": ("finance_controller",),
                                         "valid_to": dt.date(2027, 1, 1)})
    res = publish(ws, docs, run_id="run-meta")
    assert res.embedded == 0
    assert res.rewritten_metadata_only == len(draft_ids) and res.deleted == 0
    after = rows(ws)
    assert set(after) == set(before), "chunk ids are stable across metadata-only changes"
    for cid in draft_ids:
        assert after[cid]["status"] == "approved"
        assert after[cid]["allowed_roles"] == ["finance_controller"]
        assert after[cid]["valid_to"] == dt.date(2027, 1, 1)
        assert "status approved" in after[cid]["text"] and "status draft" not in after[cid]["text"]
        assert after[cid]["vector"] == before[cid]["vector"], "vector reused by embedding_key"
        assert after[cid]["embedding_key"] == before[cid]["embedding_key"]
        assert after[cid]["index_revision"] == res.revision_id
    untouched = set(before) - draft_ids
    assert all(after[c]["index_revision"] == before[c]["index_revision"] for c in untouched)
    # the analyst lost access right away in the served revision
    assert not [h for h in fts(ws, "month-end FX shipping") if h.doc_id == "metric.net_revenue.v3_draft"]


def test_text_change_reembeds_only_that_document_and_leaves_no_orphans(ws):
    docs = corpus()
    publish(ws, docs)
    before = rows(ws)
    old_wiki = {c for c, r in before.items() if r["doc_id"] == "wiki.revenue"}
    docs[2] = docs[2].model_copy(update={"text": "# Revenue wiki\nAsk finance.\n\n## Refunds\nRefunds use the "
                                                 "refund_date.\n"})
    new_wiki = {c.chunk_id for c in chunk_document(docs[2])}
    res = publish(ws, docs, run_id="run-text")
    assert res.embedded == len(new_wiki) and res.deleted == len(old_wiki)
    after = rows(ws)
    assert {c for c, r in after.items() if r["doc_id"] == "wiki.revenue"} == new_wiki
    assert not old_wiki & set(after), "old chunks left the served table"
    assert set(after) == {c.chunk_id for d in docs for c in chunk_document(d)}
    con = ws["con"]
    gone = con.execute("SELECT chunk_id FROM chunk_lineage WHERE deleted_at IS NOT NULL").fetchall()
    assert {g[0] for g in gone} == old_wiki
    live = con.execute("SELECT count(*) FROM embedding_lineage WHERE index_revision = ?",
                       [res.revision_id]).fetchall()[0][0]
    assert live == len(after)


def test_title_change_or_model_change_recomputes_vectors_but_keeps_chunk_ids(ws):
    docs = corpus()
    publish(ws, docs)
    before = rows(ws)
    # The title is part of the embedded text: same chunk ids, fresh vectors.
    docs[0] = docs[0].model_copy(update={"title": "Net revenue (governed)"})
    res = publish(ws, docs, run_id="run-title")
    assert res.embedded == 1 and res.rewritten_metadata_only == 0
    assert set(rows(ws)) == set(before)

    class OtherModel(HashingEmbedder):
        IMPLEMENTATION = "canon-hashing-2"

    res = ix.publish(ws["con"], ws["dir"], docs, OtherModel(dimensions=64), policy_revision="p1", run_id="m2")
    assert res.embedded == len(before) and res.reused == 0
    after = rows(ws)
    assert set(after) == set(before)
    assert all(after[c]["embedding_key"] != before[c]["embedding_key"] for c in after)
    model_ids = ws["con"].execute("SELECT DISTINCT model_id FROM embedding_lineage").fetchall()
    assert len(model_ids) == 2


def test_publishing_an_empty_corpus_empties_the_served_index(ws):
    publish(ws, corpus())
    res = publish(ws, [], run_id="run-empty")
    assert res.chunks == 0 and res.deleted == len(corpus()) + 2  # the wiki has three sections
    assert rows(ws) == {} and fts(ws, "revenue") == []
    assert ws["con"].execute("SELECT count(*) FROM chunk_lineage WHERE deleted_at IS NULL").fetchall() == [(0,)]


def test_deleted_document_rows_go(ws):
    docs = corpus()
    publish(ws, docs)
    assert fts(ws, PHRASE, role="finance_controller")[0].doc_id == "memo.board"
    res = publish(ws, [d for d in docs if d.doc_id != "memo.board"], run_id="run-del")
    assert res.deleted == 1 and res.embedded == 0
    assert all(r["doc_id"] != "memo.board" for r in rows(ws).values())
    assert not [h for h in fts(ws, PHRASE, role="finance_controller") if h.doc_id == "memo.board"]
    assert "memo.board" not in ix.indexed_hashes(ws["con"], ws["dir"])
    assert ix.indexed_hashes(ws["con"], ws["dir"])["wiki.revenue"] == docs[2].content_hash


def test_cleanup_removes_deleted_phrase_from_old_versions_and_disk(ws):
    docs = corpus()
    first = publish(ws, docs)
    publish(ws, [d for d in docs if d.doc_id != "memo.board"], run_id="run-del")
    # time travel still shows the phrase before cleanup
    old = table_at(ws, first.lance_version)
    assert any(PHRASE in t for t in old.to_arrow().column("text").to_pylist())

    out = ix.cleanup(ws["dir"], dt.timedelta(0), con=ws["con"])
    tbl = table_at(ws)
    versions = [int(v["version"]) for v in tbl.list_versions()]
    assert first.lance_version not in versions and out["versions_after"] == len(versions) == 1
    for v in versions:
        assert not any(PHRASE in t for t in table_at(ws, v).to_arrow().column("text").to_pylist())
    needle = PHRASE.split()[0].encode()
    holders = [p for p in Path(ws["dir"]).rglob("*") if p.is_file() and needle in p.read_bytes()]
    assert holders == [], f"deleted text still on disk in {holders}"
    # still serving, pinned to the rewritten version
    assert fts(ws, "refund_date")[0].doc_id == "wiki.revenue"
    assert ix.served_revision(ws["con"])["lance_version"] == tbl.version
    with pytest.raises(ix.IndexNotReady):
        fts(ws, "refund_date", revision_id=first.revision_id)


# --------------------------------------------------------------- crash safety

SUBPROCESS = textwrap.dedent("""
    import json, os, sys, time
    sys.path.insert(0, {root!r})
    import duckdb
    from canon.index import publish as ix
    from canon.index.embedding.hashing import HashingEmbedder
    from canon.models.documents import Document

    mode, ws = sys.argv[1], sys.argv[2]
    docs = [Document(**d) for d in json.load(open(os.path.join(ws, "docs.json")))]

    class SlowEmbedder(HashingEmbedder):
        def embed(self, texts):
            open(os.path.join(ws, "embedding.started"), "w").write(str(os.getpid()))
            time.sleep(120)
            return super().embed(texts)

    emb = HashingEmbedder(dimensions=64)
    if mode == "kill_while_embedding":
        emb = SlowEmbedder(dimensions=64)
    elif mode == "crash_after_lance_write":
        def _checkpoint(name):
            if name == "lance_written":
                os.kill(os.getpid(), 9)
        ix._checkpoint = _checkpoint
    con = duckdb.connect(os.path.join(ws, "canon.duckdb"))
    ix.publish(con, os.path.join(ws, "lancedb"), docs, emb, policy_revision="p1", run_id="run-" + mode)
""")


def run_publisher(ws, docs, mode: str) -> subprocess.Popen:
    ws["con"].close()  # DuckDB: one writer process per file
    (ws["path"] / "docs.json").write_text(json.dumps([d.model_dump(mode="json") for d in docs]))
    return subprocess.Popen([sys.executable, "-c", SUBPROCESS.format(root=str(ROOT)), mode, str(ws["path"])],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def reopen(ws):
    ws["con"] = duckdb.connect(str(ws["path"] / "canon.duckdb"))
    return ws["con"]


def test_publish_killed_while_embedding_leaves_previous_revision_serving(ws):
    docs = corpus()
    first = publish(ws, docs)
    changed = docs[:2] + [docs[2].model_copy(update={"text": "# Revenue wiki\nBrand new text about okapis."})]
    proc = run_publisher(ws, changed, "kill_while_embedding")
    marker = ws["path"] / "embedding.started"
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert proc.poll() is None, proc.stderr.read().decode()
        assert time.monotonic() < deadline, "publisher never reached the embedder"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(timeout=30) == -signal.SIGKILL

    con = reopen(ws)
    assert ix.served_revision(con)["revision_id"] == first.revision_id
    building = con.execute("SELECT revision_id FROM index_revisions WHERE status = 'building'").fetchall()
    assert len(building) == 1, "the killed publish left its intent behind"
    assert fts(ws, "refund_date")[0].doc_id == "wiki.revenue"
    assert not fts(ws, "okapis")

    res = publish(ws, changed, run_id="run-after-kill")
    assert res.repaired == [building[0][0]]
    statuses = dict(con.execute("SELECT revision_id, status FROM index_revisions").fetchall())
    assert statuses[building[0][0]] == "failed" and statuses[res.revision_id] == "ready"
    assert con.execute("SELECT status FROM index_outbox WHERE revision_id = ?",
                       [building[0][0]]).fetchall() == [("abandoned",)]
    assert fts(ws, "okapis")[0].doc_id == "wiki.revenue"
    assert set(rows(ws)) == {c.chunk_id for d in changed for c in chunk_document(d)}


def test_publish_crashed_after_lance_write_is_completed_from_the_outbox(ws):
    docs = corpus()
    first = publish(ws, docs)
    changed = docs + [mk("wiki.new", "# New page\nThe okapi table documents partner payouts.")]
    proc = run_publisher(ws, changed, "crash_after_lance_write")
    assert proc.wait(timeout=120) == -signal.SIGKILL, proc.stderr.read().decode()

    con = reopen(ws)
    served = ix.served_revision(con)
    assert served["revision_id"] == first.revision_id, "not ready until the DuckDB side is written"
    assert not fts(ws, "okapi")
    (crashed,) = con.execute("SELECT revision_id FROM index_revisions WHERE status = 'building'").fetchall()
    assert con.execute("SELECT count(*) FROM embedding_lineage WHERE index_revision = ?",
                       [crashed[0]]).fetchall() == [(0,)]

    res = publish(ws, changed, run_id="run-next")
    assert res.repaired == [crashed[0]]
    assert res.noop and res.embedded == 0 and res.revision_id == crashed[0]
    rev = ix.served_revision(con)
    assert rev["revision_id"] == crashed[0] and rev["status"] == "ready" and "repair" in rev["note"]
    assert con.execute("SELECT status FROM index_outbox WHERE revision_id = ?",
                       [crashed[0]]).fetchall() == [("applied",)]
    n = len(rows(ws))
    assert con.execute("SELECT count(*) FROM embedding_lineage WHERE index_revision = ?",
                       [crashed[0]]).fetchall() == [(n,)]
    assert fts(ws, "okapi")[0].doc_id == "wiki.new"


def test_failed_validation_marks_revision_failed_and_keeps_serving(ws):
    docs = corpus()
    first = publish(ws, docs)

    class NaNEmbedder(HashingEmbedder):
        def embed(self, texts):
            out = super().embed(texts)
            out[0, 0] = np.nan
            return out

    changed = docs[:4] + [docs[4].model_copy(update={"text": "A different memo."})]
    with pytest.raises(EmbeddingError, match="non-finite"):
        ix.publish(ws["con"], ws["dir"], changed, NaNEmbedder(dimensions=64), policy_revision="p1", run_id="bad")
    assert ix.served_revision(ws["con"])["revision_id"] == first.revision_id
    assert ws["con"].execute("SELECT count(*) FROM index_revisions WHERE status = 'failed'").fetchall() == [(1,)]
    with pytest.raises(CanonInputError, match="dimensional"):
        ix.publish(ws["con"], ws["dir"], docs, HashingEmbedder(dimensions=32), policy_revision="p1", run_id="x")


def test_concurrent_query_sees_only_ready_revisions_and_second_publisher_is_refused(ws, monkeypatch):
    docs = corpus()
    first = publish(ws, docs)
    reached, release = threading.Event(), threading.Event()

    def pause(name):
        if name == "lance_written":
            reached.set()
            assert release.wait(30)

    monkeypatch.setattr(ix, "_checkpoint", pause)
    changed = docs + [mk("wiki.okapi", "# Okapi\nThe okapi ledger reconciles partner payouts.")]
    result = {}

    def run():
        cur = ws["con"].cursor()
        try:
            result["res"] = ix.publish(cur, ws["dir"], changed, ws["emb"], policy_revision="p1", run_id="bg")
        finally:
            cur.close()

    t = threading.Thread(target=run)
    t.start()
    try:
        assert reached.wait(30)
        # LanceDB already holds the new rows at its latest version ...
        assert any("okapi" in x for x in table_at(ws).to_arrow().column("text").to_pylist())
        # ... but queries pin the ready revision and never see them.
        for _ in range(3):
            assert not fts(ws, "okapi ledger")
            assert ix.served_revision(ws["con"])["revision_id"] == first.revision_id
        with pytest.raises(ix.PublisherBusy, match="another publisher"):
            ix.publish(ws["con"], ws["dir"], docs, ws["emb"], policy_revision="p1", run_id="2nd",
                       lock_timeout=0.2)
    finally:
        release.set()
        t.join(30)
    assert result["res"].revision_id == ix.served_revision(ws["con"])["revision_id"]
    assert fts(ws, "okapi ledger")[0].doc_id == "wiki.okapi"


# --------------------------------------------------------------- queries

def test_prefilter_never_returns_rows_a_role_may_not_read(ws):
    docs = corpus()
    publish(ws, docs)
    qv = ws["emb"].embed([f"Board only: the {PHRASE} is 4.2 million for Q4."])[0]
    for mode in ("fts", "vector", "hybrid"):
        hits = ix.search(ws["dir"], ws["con"], f"Board only: the {PHRASE} revenue", qv, role="analyst",
                         mode=mode, k=50)
        assert hits, mode  # "revenue" matches readable rows: the memo is filtered, not the query
        assert all("memo.board" != h.doc_id and "analyst" in h.attrs["allowed_roles"] for h in hits), mode
        top = ix.search(ws["dir"], ws["con"], PHRASE, qv, role="finance_controller", mode=mode, k=1)
        assert top[0].doc_id == "memo.board", mode
    # exclusions and status prefilters
    hits = fts(ws, "net revenue shipping", exclude_doc_ids=["metric.net_revenue.v2"], k=50)
    assert hits and all(h.doc_id != "metric.net_revenue.v2" for h in hits)
    hits = fts(ws, "net revenue shipping", statuses=["draft"], k=50)
    assert {h.doc_id for h in hits} == {"metric.net_revenue.v3_draft"}
    # hostile values are quoted, not executed
    assert fts(ws, PHRASE, role="x'] ) OR true OR array_has_any(allowed_roles, ['finance_controller") == []
    assert fts(ws, PHRASE, role="finance_controller", exclude_doc_ids=["a') OR ('1'='1"])[0].doc_id == "memo.board"
    with pytest.raises(CanonInputError):
        fts(ws, PHRASE, role="")


def test_hybrid_returns_exact_phrase_document_first_and_header_travels(ws):
    publish(ws, corpus())
    q = "Refunds are recognized on refund_date"
    hits = ix.search(ws["dir"], ws["con"], q, ws["emb"].embed([q])[0], role="analyst", k=5)
    assert hits[0].doc_id == "wiki.revenue" and "refund_date" in hits[0].attrs["body"]
    assert hits[0].fts_rank == 1 and hits[0].rank == 1
    assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
    assert hits[0].revision_id == ix.served_revision(ws["con"])["revision_id"]
    # a draft's text never travels without its status and version
    (draft,) = [h for h in fts(ws, "month-end FX") if h.doc_id == "metric.net_revenue.v3_draft"]
    assert "status draft" in draft.attrs["text"] and "version 3-draft" in draft.attrs["text"]
    assert draft.attrs["valid_to"] is None and draft.attrs["valid_from"] == dt.date(2026, 1, 1)


def test_search_before_any_publish_is_not_ready(ws):
    with pytest.raises(ix.IndexNotReady):
        fts(ws, "anything")


def test_real_sentence_transformer_paraphrase_ranks_source_first(ws):
    emb = SentenceTransformerEmbedder()
    docs = [
        mk("m.rev", "Net revenue excludes value-added tax and shipping charges.", kind="metric_definition"),
        mk("r.loader", "Restart the ingestion job when the warehouse load is late.", kind="runbook"),
        mk("w.holiday", "Employees receive twenty-five vacation days per year.", kind="wiki"),
        mk("w.fx", "Amounts are converted to US dollars using the daily exchange rate.", kind="wiki"),
        mk("p.access", "Board memos may only be read by finance controllers.", kind="policy"),
    ]
    res = ix.publish(ws["con"], ws["dir"], docs, emb, policy_revision="p1", run_id="real")
    assert res.embedded == 5
    vecs = np.array(table_at(ws).to_arrow().column("vector").to_pylist(), dtype=np.float32)
    assert vecs.shape == (5, 384)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    q = "Which currency conversion do we apply to amounts?"
    hits = ix.search(ws["dir"], ws["con"], None, emb.embed([q])[0], role="analyst", mode="vector", k=5,
                     model_id=emb.identity.model_id)
    assert hits[0].doc_id == "w.fx"
    q2 = "Is sales tax left out of net revenue?"
    assert ix.search(ws["dir"], ws["con"], None, emb.embed([q2])[0], role="analyst", mode="vector",
                     k=1)[0].doc_id == "m.rev"
