"""The routine publish (canon.index.build): a no-op loads nothing when no input of the
served revision changed, and every kind of input change goes through a full publish."""

from __future__ import annotations

import lancedb
import pytest

from canon.index import build as index_build
from canon.index import publish as index
from canon.index.embedding.hashing import HashingEmbedder
from canon.registry import store as registry
from canon.registry.policy import Policy, RevokeRule


@pytest.fixture
def setup(tmp_path, dossier_docs):
    con = registry.connect(tmp_path / "canon.duckdb")
    registry.sync_documents(con, dossier_docs, source_system="corpus", contract_version="1.0.0", run_id="r1")
    yield con, tmp_path / "lancedb", HashingEmbedder()
    con.close()


def _forbid_loading(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("a no-op must not load or publish documents")
    monkeypatch.setattr(index_build.registry, "load_documents", boom)
    monkeypatch.setattr(index, "publish", boom)


def test_unchanged_inputs_are_a_noop_without_loading_documents(setup, monkeypatch):
    con, lance, emb = setup
    first = index_build.build_index(con, lance, emb, Policy(), run_id="p1")
    assert not first.noop and first.embedded == first.chunks > 0
    _forbid_loading(monkeypatch)
    again = index_build.build_index(con, lance, emb, Policy(), run_id="p2")
    assert again.noop and again.revision_id == first.revision_id
    assert again.chunks == first.chunks and again.embedded == 0
    assert again.revision_id == index.served_revision(con)["revision_id"]


def _publish_again_after(setup, monkeypatch, change, **kw):
    con, lance, emb = setup
    first = index_build.build_index(con, lance, emb, Policy(), run_id="p1")
    calls = []
    real = index.publish
    monkeypatch.setattr(index, "publish", lambda *a, **k: calls.append(1) or real(*a, **k))
    policy = change(con, lance) or Policy()
    out = index_build.build_index(con, lance, emb, policy, run_id="p2", **kw)
    assert calls == [1], "the change must reach index.publish"
    return first, out


def test_a_registry_change_publishes(setup, monkeypatch):
    def change(con, lance):
        con.execute("UPDATE documents SET allowed_roles = ['auditor'], updated_at = now() "
                    "WHERE doc_id = 'wiki.net_revenue.legacy'")
    first, out = _publish_again_after(setup, monkeypatch, change)
    assert out.revision_id != first.revision_id and out.embedded == 0 and out.rewritten_metadata_only > 0


def test_a_policy_change_publishes(setup, monkeypatch):
    def change(con, lance):
        return Policy(revision="r2", revoke=[RevokeRule(role="analyst", doc_id="wiki.*")])
    first, out = _publish_again_after(setup, monkeypatch, change)
    assert out.revision_id != first.revision_id and out.embedded == 0


def test_new_publish_options_publish(setup, monkeypatch):
    first, out = _publish_again_after(setup, monkeypatch, lambda con, lance: None, max_chars=300,
                                       overlap=50)
    # The dossier's documents are one chunk each at 300 characters too: publish finds the same rows.
    assert out.noop and out.chunks == first.chunks


def test_a_lancedb_write_behind_the_served_revision_is_reconciled(setup, monkeypatch):
    def change(con, lance):
        tbl = lancedb.connect(str(lance)).open_table(index.DEFAULT_TABLE)
        tbl.delete("doc_id = 'wiki.net_revenue.legacy'")
    first, out = _publish_again_after(setup, monkeypatch, change)
    assert out.embedded > 0  # the deleted rows came back


def test_a_slow_noop_records_its_inputs_so_the_next_is_fast(setup, monkeypatch):
    con, lance, emb = setup
    index_build.build_index(con, lance, emb, Policy(), run_id="p1")
    con.execute("DELETE FROM index_inputs")  # e.g. an index published before this table existed
    slow = index_build.build_index(con, lance, emb, Policy(), run_id="p2")
    assert slow.noop
    _forbid_loading(monkeypatch)
    assert index_build.build_index(con, lance, emb, Policy(), run_id="p3").noop
