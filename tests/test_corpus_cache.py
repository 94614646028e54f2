"""The corpus cache (canon.registry.corpus_cache): an unchanged file is not opened again, and
whatever changes -- bytes, stat, contract, registry, the day -- the registry ends up
exactly as a full read would leave it."""

from __future__ import annotations

import datetime as dt
import os
import time
from pathlib import Path

import pytest

from canon.registry import corpus_cache
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = load_contract(ROOT / "contracts" / "knowledge.yml")
TODAY = dt.date(2026, 11, 30)
OLD = time.time() - 3600  # an hour ago: older than the racy window


def _doc(doc_id: str, body: str, *, roles: str = "[analyst]", valid_from: str = "2026-01-01") -> str:
    return (f"---\ndoc_id: {doc_id}\nobject_id: wiki.test.{doc_id}\nkind: wiki\ntitle: Page {doc_id}\n"
            f"status: approved\nauthority: 50\nversion: '1'\nvalid_from: {valid_from}\nallowed_roles: {roles}\n"
            f"---\n{body}\n")


BODY = "This page explains how the finance team reconciles refunds at month end, step by step."


def _write(path: Path, text: str, *, age: float | None = OLD) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if age is not None:
        os.utime(path, (age, age))


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "corpus"
    for i in range(6):
        _write(root / "wiki" / f"page_{i}.md", _doc(f"wiki.page_{i}", f"{BODY} Page {i}."))
    return root


@pytest.fixture
def con(tmp_path):
    c = registry.connect(tmp_path / "canon.duckdb")
    yield c
    c.close()


def _build(con, root, run, *, contract=CONTRACT, today=TODAY):
    return build_registry(con, corpus=root, corpus_contract=contract, run_id=run, today=today)


def _registry(con):
    return {d.doc_id: (d.content_hash, d.allowed_roles, d.source_uri, d.source_revision)
            for d in registry.load_documents(con)}


def _fresh_registry(tmp_path, root, name):
    """What a registry built from nothing (no cache) holds for the same corpus."""
    c = registry.connect(tmp_path / f"{name}.duckdb")
    try:
        _build(c, root, "full")
        return _registry(c)
    finally:
        c.close()


def test_unchanged_corpus_opens_no_file(con, corpus, monkeypatch):
    first = _build(con, corpus, "r1")
    assert first.corpus_files == {"files": 6, "files_read": 6, "files_trusted": 0}
    versions = con.execute("SELECT count(*) FROM document_versions").fetchall()[0][0]

    def no_read(*a, **k):
        raise AssertionError("an unchanged file was opened")
    monkeypatch.setattr(corpus_cache, "read_file", no_read)
    again = _build(con, corpus, "r2")
    assert again.corpus_files == {"files": 6, "files_read": 0, "files_trusted": 6}
    assert len(again.diffs["corpus"].unchanged) == 6 and again.diffs["corpus"].new_versions == 0
    assert again.documents == 6
    assert con.execute("SELECT count(*) FROM document_versions").fetchall()[0][0] == versions


def test_changes_are_read_and_land_as_a_full_read_would(con, corpus, tmp_path):
    _build(con, corpus, "r1")
    _write(corpus / "wiki" / "page_1.md", _doc("wiki.page_1", f"{BODY} Page 1, amended."))
    _write(corpus / "wiki" / "page_2.md", _doc("wiki.page_2", f"{BODY} Page 2.", roles="[analyst, auditor]"))
    (corpus / "wiki" / "page_3.md").unlink()
    _write(corpus / "wiki" / "page_9.md", _doc("wiki.page_9", f"{BODY} Page 9."))
    b = _build(con, corpus, "r2")
    d = b.diffs["corpus"]
    assert b.corpus_files["files_read"] == 3 and b.corpus_files["files_trusted"] == 3
    assert (d.text_changed, d.metadata_changed, d.removed, d.new) == (
        ["wiki.page_1"], ["wiki.page_2"], ["wiki.page_3"], ["wiki.page_9"])
    assert _registry(con) == _fresh_registry(tmp_path, corpus, "full")
    assert "wiki/page_3.md" not in {r[0] for r in con.execute("SELECT path FROM corpus_files").fetchall()}


def test_same_size_edit_with_the_old_mtime_is_still_seen(con, corpus):
    """rsync -t / cp -p keep mtime and size; the inode and ctime still change."""
    _build(con, corpus, "r1")
    path = corpus / "wiki" / "page_4.md"
    before = path.stat()
    text = path.read_text(encoding="utf-8").replace("Page 4.", "Page X.")
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.utime(tmp, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(tmp, path)
    assert path.stat().st_size == before.st_size and path.stat().st_mtime_ns == before.st_mtime_ns
    b = _build(con, corpus, "r2")
    assert b.diffs["corpus"].text_changed == ["wiki.page_4"]


def test_a_just_written_file_is_not_trusted_until_it_is_older_than_the_racy_window(con, corpus):
    _write(corpus / "wiki" / "page_0.md", _doc("wiki.page_0", f"{BODY} Fresh."), age=None)
    _build(con, corpus, "r1")
    b = _build(con, corpus, "r2")
    assert b.corpus_files["files_read"] == 1  # page_0: written now, so judged again
    os.utime(corpus / "wiki" / "page_0.md", (OLD, OLD))  # ctime moves too: one more read, then trusted
    _build(con, corpus, "r3")
    assert _build(con, corpus, "r4").corpus_files["files_read"] == 0


def test_a_contract_change_judges_every_file_again(con, corpus):
    _build(con, corpus, "r1")
    stricter = CONTRACT.model_copy(update={"version": "1.1.0", "quality": CONTRACT.quality.model_copy(
        update={"min_body_chars": 500})})
    b = _build(con, corpus, "r2", contract=stricter)
    assert b.corpus_files["files_read"] == 6
    assert b.documents == 0 and len(b.quarantined) == 6


def test_an_earlier_day_judges_again(con, corpus):
    """The future-effective-date horizon is the one rule that depends on the day."""
    _write(corpus / "wiki" / "page_5.md", _doc("wiki.page_5", BODY, valid_from="2028-06-01"))
    b1 = _build(con, corpus, "r1")
    assert b1.documents == 6  # within the horizon on TODAY
    b2 = _build(con, corpus, "r2", today=TODAY - dt.timedelta(days=365))
    assert b2.corpus_files["files_read"] == 6
    assert any(q.doc_id == "wiki.page_5" for q in b2.quarantined)


def test_a_registry_that_diverged_is_repaired_from_the_file(con, corpus):
    _build(con, corpus, "r1")
    con.execute("UPDATE documents SET deleted_at = now() WHERE doc_id = 'wiki.page_2'")  # e.g. a failed run
    b = _build(con, corpus, "r2")
    assert b.corpus_files["files_read"] == 1
    assert "wiki.page_2" in {d.doc_id for d in registry.load_documents(con)}


def test_duplicate_doc_ids_are_decided_with_trusted_files(con, corpus, tmp_path):
    _build(con, corpus, "r1")
    # An earlier path claims page_3's doc_id with other content. The doc_id belongs to the file the
    # registry holds it from (issue 18: sort order must not decide a takeover): page_3 keeps it,
    # the newcomer is quarantined naming the owner.
    _write(corpus / "wiki" / "a_page_3.md", _doc("wiki.page_3", f"{BODY} Another text."))
    b = _build(con, corpus, "r2")
    assert [q.source_uri for q in b.quarantined] == ["wiki/a_page_3.md"]
    assert "wiki/page_3.md" in b.quarantined[0].reasons[0]
    assert registry.load_documents(con, doc_ids=["wiki.page_3"])[0].source_uri == "wiki/page_3.md"
    # A re-run (page_3 trusted from the cache) decides the same way.
    b = _build(con, corpus, "r2b")
    assert [q.source_uri for q in b.quarantined] == ["wiki/a_page_3.md"]
    assert registry.load_documents(con, doc_ids=["wiki.page_3"])[0].source_uri == "wiki/page_3.md"
    # It leaves again: page_3 (unchanged on disk) is admitted again with its own content.
    (corpus / "wiki" / "a_page_3.md").unlink()
    b = _build(con, corpus, "r3")
    assert not b.quarantined
    assert _registry(con) == _fresh_registry(tmp_path, corpus, "full")


def test_quarantined_files_are_judged_every_run(con, corpus):
    _write(corpus / "wiki" / "bad.md", "no front matter here, only text that is long enough to pass" * 2)
    _build(con, corpus, "r1")
    b = _build(con, corpus, "r2")
    assert b.corpus_files["files_read"] == 1 and len(b.quarantined) == 1
    rows = {r[0] for r in con.execute("SELECT path FROM corpus_files").fetchall()}
    assert "wiki/bad.md" not in rows and len(rows) == 6


def test_symlinked_files_are_never_trusted(con, corpus, tmp_path):
    outside = tmp_path / "elsewhere.md"
    _write(outside, _doc("wiki.linked", f"{BODY} Linked."))
    (corpus / "wiki" / "linked.md").symlink_to(outside)
    _build(con, corpus, "r1")
    b = _build(con, corpus, "r2")
    assert b.corpus_files["files_read"] == 1
    assert any("escapes the corpus root" in r for q in b.quarantined for r in q.reasons)


def test_forget_clears_the_files_cache_entry(con, corpus):
    from canon.lifecycle.forget.clear import clear_registry as _clear_registry
    _build(con, corpus, "r1")
    out = _clear_registry(con, "wiki.page_1", dt.datetime(2026, 11, 30))
    assert out["corpus_files_deleted"] == 1
    assert not con.execute("SELECT count(*) FROM corpus_files WHERE list_contains(doc_ids, 'wiki.page_1')"
                           ).fetchall()[0][0]
