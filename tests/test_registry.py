"""The DuckDB registry: re-running on unchanged input writes no new version,
metadata-only and text changes are told apart, removals soft-delete, and the
effective-time table answers `definitions_as_of(d)`."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from canon.models.documents import Document
from canon.registry import store as registry


@pytest.fixture
def con(tmp_path):
    c = registry.connect(tmp_path / "canon.duckdb")
    yield c
    c.close()


def _sync(con, docs, run="r1"):
    return registry.sync_documents(con, docs, source_system="corpus", contract_version="1.0.0", run_id=run)


def _versions(con):
    return con.execute("SELECT count(*) FROM document_versions").fetchall()[0][0]


def test_unchanged_input_writes_no_new_versions(con, dossier_docs):
    first = _sync(con, dossier_docs)
    assert len(first.new) == 12 and first.new_versions == 12
    before = con.execute("SELECT max(updated_at) FROM documents").fetchall()[0][0]
    again = _sync(con, dossier_docs, run="r2")
    assert again.new_versions == 0 and len(again.unchanged) == 12
    assert _versions(con) == 12
    assert con.execute("SELECT max(updated_at) FROM documents").fetchall()[0][0] == before


def test_metadata_and_text_changes_and_removal(con, dossier_docs):
    _sync(con, dossier_docs)
    changed = [d.model_copy(update={"allowed_roles": ("finance_controller",)}) if d.doc_id == "wiki.net_revenue.legacy"
               else d.model_copy(update={"text": d.text + " Amended.", "content_hash": "sha256:amended"})
               if d.doc_id == "metric.net_revenue.v1" else d
               for d in dossier_docs if d.doc_id != "note.revenue.prompt_injection"]
    diff = _sync(con, changed, run="r2")
    assert diff.metadata_changed == ["wiki.net_revenue.legacy"]
    assert diff.text_changed == ["metric.net_revenue.v1"]
    assert diff.removed == ["note.revenue.prompt_injection"]
    assert _versions(con) == 13  # one new text revision
    live = {d.doc_id for d in registry.load_documents(con)}
    assert "note.revenue.prompt_injection" not in live
    gone = registry.load_documents(con, include_deleted=True)
    assert any(d.doc_id == "note.revenue.prompt_injection" for d in gone)


def test_definitions_as_of_macro_is_half_open(con, dossier_docs):
    _sync(con, dossier_docs)
    assert registry.refresh_definitions(con) == 12

    def approved_on(day):
        return [r[0] for r in con.execute(
            "SELECT evidence_id FROM definitions_as_of(?) WHERE object_id = 'metric.finance.net_revenue' "
            "AND status = 'approved' ORDER BY 1", [day]).fetchall()]

    assert approved_on("2026-06-30") == ["metric.net_revenue.v1"]
    assert approved_on("2026-07-01") == ["metric.net_revenue.v2"]
    assert approved_on("2026-08-31") == ["metric.net_revenue.v2"]
    recorded = con.execute("SELECT min(recorded_at) FROM definitions").fetchall()[0][0]
    assert isinstance(recorded, dt.datetime)


def test_failed_sync_leaves_registry_untouched(con, dossier_docs):
    _sync(con, dossier_docs)

    class Boom(Document):
        pass

    bad = list(dossier_docs) + [object()]  # not a document: fails mid-transaction
    with pytest.raises(AttributeError):
        _sync(con, bad, run="r3")
    assert len(registry.load_documents(con)) == 12
    assert _versions(con) == 12


def test_contract_changes_follow_semantic_versioning(con, tmp_path, dossier_corpus_path):
    import uuid

    from canon.core.errors import CanonInputError
    from canon.registry.build import build_registry
    from canon.registry.contracts import contract_from_dict, load_contract

    root = Path(__file__).resolve().parents[1]
    base = load_contract(root / "contracts" / "knowledge.yml")

    def build(contract):
        return build_registry(con, corpus=dossier_corpus_path, corpus_contract=contract, run_id=str(uuid.uuid4()))

    build(base)
    data = base.model_dump(mode="json", by_alias=True)
    data.update(version="1.1.0")
    data["processing"]["chunker"] = "heading-aware-v2"
    with pytest.raises(CanonInputError, match="major change without major version bump"):
        build(contract_from_dict(data))
    data.update(version="2.0.0")
    with pytest.raises(CanonInputError, match="not accepted"):
        build(contract_from_dict(data))
    data.update(accepted_major=2)
    assert build(contract_from_dict(data)).documents == 12  # accepted by consumers: applied
    minor = {**data, "version": "2.1.0", "owner": "someone-else@canon.example"}
    assert build(contract_from_dict(minor)).documents == 12


def test_refresh_definitions_rewrites_only_when_the_registry_changed(con, dossier_docs):
    _sync(con, dossier_docs)
    registry.refresh_definitions(con)
    rowids = con.execute("SELECT list(rowid ORDER BY rowid) FROM definitions").fetchall()[0][0]
    assert registry.refresh_definitions(con) == 12
    assert con.execute("SELECT list(rowid ORDER BY rowid) FROM definitions").fetchall()[0][0] == rowids  # no write
    changed = [d.model_copy(update={"title": "Renamed"}) if d.doc_id == "metric.net_revenue.v2" else d
               for d in dossier_docs]
    _sync(con, changed, run="r2")
    assert registry.refresh_definitions(con) == 12
    assert con.execute("SELECT title FROM definitions WHERE evidence_id = 'metric.net_revenue.v2'"
                       ).fetchall()[0][0] == "Renamed"


def test_quarantine_sync_writes_only_changes_and_releases(con):
    from canon.registry.gate import QuarantineEntry
    t0, t1, t2 = (dt.datetime(2026, 11, 30, h) for h in (1, 2, 3))

    def entry(uri, reasons):
        return QuarantineEntry(uri, None, reasons, f"sha256:{uri}", t0, "knowledge@1.0.0", "corpus")

    def rows():
        return {r[0]: r[1:] for r in con.execute(
            "SELECT source_uri, reasons, last_seen_at, released_at FROM quarantine ORDER BY 1").fetchall()}

    registry.sync_quarantine(con, [entry("a.md", ["bad"]), entry("b.md", ["worse"])], source_system="corpus",
                             run_id="r1", now=t0)
    registry.sync_quarantine(con, [entry("a.md", ["bad"]), entry("b.md", ["worse"])], source_system="corpus",
                             run_id="r2", now=t1)
    assert {k: v[1] for k, v in rows().items()} == {"a.md": t0, "b.md": t0}  # nothing changed: no write
    registry.sync_quarantine(con, [entry("a.md", ["bad", "also this"])], source_system="corpus", run_id="r3", now=t2)
    after = rows()
    assert after["a.md"] == (["bad", "also this"], t2, None)
    assert after["b.md"][2] == t2  # no longer failing: released, kept for audit
