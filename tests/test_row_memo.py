"""canon.index.memo: a publish derives rows only for documents that changed, and
the memo can never make the table differ from what a full rebuild writes."""

from __future__ import annotations

import datetime as dt

import duckdb
import lancedb
import pytest

from canon.index import publish as ix
from canon.index.rows import state_digest
from canon.lifecycle.forget import clear as forget_clear
from canon.models.documents import Document


def mk(i: int, text: str | None = None, **kw) -> Document:
    base = dict(doc_id=f"wiki.p{i}", object_id=f"wiki.test.p{i}", kind="wiki", title=f"Page {i}",
                status="approved", authority=50, version="1", valid_from=dt.date(2026, 1, 1),
                allowed_roles=["analyst"], text=text or f"# Page {i}\nRefunds of region {i} post on refund_date.")
    base.update(kw)
    return Document(**base)


@pytest.fixture()
def ws(index_ws):
    return index_ws


def publish(ws, docs, **kw):
    return ix.publish(ws["con"], ws["dir"], docs, ws["emb"], policy_revision="p1", run_id="t", **kw)


def table_state(ws) -> str:
    t = lancedb.connect(str(ws["dir"])).open_table("chunks").to_arrow()
    return state_digest(zip(t.column("chunk_id").to_pylist(), t.column("row_hash").to_pylist()))


def test_only_changed_documents_are_rebuilt_and_the_table_equals_a_full_rebuild(ws, tmp_path):
    docs = [mk(i) for i in range(20)]
    assert publish(ws, docs).rows_rebuilt == 20
    assert publish(ws, docs).rows_rebuilt == 0                     # no-op: nothing derived again
    docs[3] = mk(3, "# Page 3\nRefunds now post on settlement_date.")   # text
    docs[7] = mk(7, allowed_roles=["analyst", "auditor"])          # metadata only
    del docs[11]                                                   # deletion
    docs.append(mk(99))                                            # addition
    r = publish(ws, docs)
    assert r.rows_rebuilt == 3 and r.embedded >= 2 and r.deleted >= 1 and r.rewritten_metadata_only >= 1

    # The same documents published from scratch, without any memo, give the same rows.
    con2 = duckdb.connect(str(tmp_path / "fresh.duckdb"))
    fresh = {"con": con2, "dir": tmp_path / "fresh_lancedb", "emb": ws["emb"]}
    try:
        publish(fresh, docs)
        assert table_state(fresh) == table_state(ws)
    finally:
        con2.close()
    memo_docs = {r[0] for r in ws["con"].execute("SELECT doc_id FROM index_row_memo").fetchall()}
    assert memo_docs == {d.doc_id for d in docs}                   # the deleted document's entry went


def test_a_row_missing_from_the_table_is_rebuilt_not_taken_from_the_memo(ws):
    docs = [mk(i) for i in range(5)]
    publish(ws, docs)
    tbl = lancedb.connect(str(ws["dir"])).open_table("chunks")
    tbl.delete("doc_id = 'wiki.p2'")                               # e.g. residue of a lost write
    r = publish(ws, docs)
    assert r.rows_rebuilt == 1 and r.embedded >= 1
    assert "wiki.p2" in set(lancedb.connect(str(ws["dir"])).open_table("chunks").to_arrow()
                            .column("doc_id").to_pylist())


def test_chunking_options_are_part_of_the_key(ws):
    docs = [mk(i, "# Page\n" + "Refund lines settle daily. " * 60) for i in range(3)]
    publish(ws, docs)
    assert publish(ws, docs, max_chars=400).rows_rebuilt == 3
    assert publish(ws, docs, max_chars=400).rows_rebuilt == 0
    assert publish(ws, docs, max_chars=400, overlap=50).rows_rebuilt == 3


def test_forget_drops_the_documents_memo_entry(ws, tmp_path):
    docs = [mk(i) for i in range(3)]
    publish(ws, docs)
    out = forget_clear.clear_registry(ws["con"], "wiki.p1", dt.datetime(2026, 11, 30))
    assert out["row_memo_deleted"] == 1
    left = {r[0] for r in ws["con"].execute("SELECT doc_id FROM index_row_memo").fetchall()}
    assert left == {"wiki.p0", "wiki.p2"}
