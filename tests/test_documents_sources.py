"""Several documents sources in one registry build (the configuration's
`documents`, canon/registry/build.py): each passes its own contract's gate and
is kept under its own source system, so a build of one never removes the
other's documents, and a doc_id one source registered is not taken by another.
Several folders under one contract are one source, each file under its folder's label."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from canon.core.errors import CanonInputError
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import contract_from_dict, load_contract

ROOT = Path(__file__).resolve().parents[1]
KNOWLEDGE = load_contract(ROOT / "contracts" / "knowledge.yml")
TODAY = dt.date(2026, 11, 30)
BODY = "This page explains how the finance team reconciles refunds at month end, step by step."


def _notes_contract():
    data = KNOWLEDGE.model_dump(mode="json", by_alias=True)
    data["contract"], data["source"]["system"] = "notes", "notes"
    data["quality"]["min_body_chars"] = 10
    return contract_from_dict(data, path="notes.yml")


def _page(folder: Path, doc_id: str, body: str = BODY) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{doc_id}.md").write_text(
        f"---\ndoc_id: {doc_id}\nobject_id: wiki.team.{doc_id}\nkind: wiki\ntitle: Page {doc_id}\nstatus: approved\n"
        f"authority: 50\nversion: '1'\nvalid_from: 2026-01-01\nallowed_roles: [analyst]\n---\n{body}\n")


def _live(con) -> dict[str, str]:
    return dict(con.execute("SELECT doc_id, source_system FROM documents WHERE deleted_at IS NULL").fetchall())


def test_each_source_under_its_own_contract(tmp_path):
    wiki, notes = tmp_path / "wiki", tmp_path / "notes"
    _page(wiki, "wiki.close")
    _page(notes, "note.short", body="Short note.")   # below knowledge's 40 characters, within notes' 10
    _page(notes, "wiki.close", body=BODY + " A copy.")   # the wiki's doc_id, other content
    con = registry.connect(tmp_path / "canon.duckdb")
    sources = [(wiki, KNOWLEDGE), (notes, _notes_contract())]
    build = build_registry(con, documents=sources, run_id="r1", today=TODAY)
    assert _live(con) == {"wiki.close": "corpus", "note.short": "notes"}
    [held] = build.quarantined
    assert held.doc_id == "wiki.close" and "it belongs to corpus:wiki.close.md" in held.reasons[0]
    assert set(build.diffs) == {"corpus", "notes"} and build.corpus_files["files"] == 3
    # The next build of both sources changes nothing; without the notes, only the notes go.
    build_registry(con, documents=sources, run_id="r2", today=TODAY)
    assert _live(con) == {"wiki.close": "corpus", "note.short": "notes"}
    (tmp_path / "empty").mkdir()
    build_registry(con, documents=[(wiki, KNOWLEDGE), (tmp_path / "empty", _notes_contract())], run_id="r3",
                   today=TODAY)
    assert _live(con) == {"wiki.close": "corpus"}
    assert registry.get_setting(con, "corpus_root") == str(wiki)
    con.close()


def _page_at(path: Path, doc_id: str, body: str = BODY) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\ndoc_id: {doc_id}\nobject_id: wiki.team.{doc_id}\nkind: wiki\ntitle: Page {doc_id}\nstatus: approved\n"
        f"authority: 50\nversion: '1'\nvalid_from: 2026-01-01\nallowed_roles: [analyst]\n---\n{body}\n")


def _uris(con) -> dict[str, str]:
    return dict(con.execute("SELECT doc_id, source_uri FROM documents WHERE deleted_at IS NULL").fetchall())


def test_several_folders_under_one_contract_are_one_source(tmp_path):
    """Two teams' folders, one contract: read as one source, each file under its folder's label, so
    the same file name in both is two documents, a rebuild opens nothing, and removing a file from
    one folder removes only its document."""
    handbook, runbooks = tmp_path / "handbook", tmp_path / "ops" / "runbooks"
    _page_at(handbook / "index.md", "wiki.handbook")
    _page_at(runbooks / "index.md", "wiki.runbooks")
    _page_at(runbooks / "close" / "refunds.md", "runbook.refunds")
    con = registry.connect(tmp_path / "canon.duckdb")
    sources = [(handbook, KNOWLEDGE), (runbooks, KNOWLEDGE), (tmp_path / "extra.jsonl", KNOWLEDGE)]
    (tmp_path / "extra.jsonl").write_text(
        '{"doc_id": "wiki.extra", "object_id": "wiki.team.extra", "kind": "wiki", "title": "Extra", "status": '
        '"approved", "authority": 50, "version": "1", "valid_from": "2026-01-01", "allowed_roles": ["analyst"], '
        f'"text": "{BODY}"}}\n')
    build = build_registry(con, documents=sources, run_id="r1", today=TODAY)
    assert build.quarantined == [] and set(build.diffs) == {"corpus"}
    assert _uris(con) == {"wiki.handbook": "handbook/index.md", "wiki.runbooks": "runbooks/index.md",
                          "runbook.refunds": "runbooks/close/refunds.md", "wiki.extra": f"{tmp_path.name}/extra.jsonl#L1"}
    again = build_registry(con, documents=sources, run_id="r2", today=TODAY)
    assert again.diffs["corpus"].new == [] and again.diffs["corpus"].removed == []
    (runbooks / "close" / "refunds.md").unlink()
    gone = build_registry(con, documents=sources, run_id="r3", today=TODAY)
    assert gone.diffs["corpus"].removed == ["runbook.refunds"] and set(_uris(con)) == {
        "wiki.handbook", "wiki.runbooks", "wiki.extra"}
    # One doc_id in both folders with other content: the one the registry holds keeps it.
    _page_at(runbooks / "copy.md", "wiki.handbook", body=BODY + " Another team's copy.")
    clash = build_registry(con, documents=sources, run_id="r4", today=TODAY)
    [held] = clash.quarantined
    assert held.source_uri == "runbooks/copy.md" and "it belongs to handbook/index.md" in held.reasons[0]
    con.close()


def test_a_second_folder_added_to_a_contract_keeps_the_first_ones_documents(tmp_path):
    handbook, runbooks = tmp_path / "handbook", tmp_path / "runbooks"
    _page_at(handbook / "index.md", "wiki.handbook")
    _page_at(runbooks / "index.md", "wiki.runbooks")
    con = registry.connect(tmp_path / "canon.duckdb")
    build_registry(con, documents=[(handbook, KNOWLEDGE)], run_id="r1", today=TODAY)
    assert _uris(con) == {"wiki.handbook": "index.md"}
    both = build_registry(con, documents=[(handbook, KNOWLEDGE), (runbooks, KNOWLEDGE)], run_id="r2", today=TODAY)
    assert both.quarantined == [] and both.diffs["corpus"].removed == []
    assert _uris(con) == {"wiki.handbook": "handbook/index.md", "wiki.runbooks": "runbooks/index.md"}
    con.close()


def test_two_contracts_under_one_source_system_are_refused(tmp_path):
    _page(tmp_path / "a", "wiki.a")
    _page(tmp_path / "b", "wiki.b")
    other = KNOWLEDGE.model_dump(mode="json", by_alias=True)
    other["contract"] = "wiki"   # another contract, the same source system
    con = registry.connect(tmp_path / "canon.duckdb")
    with pytest.raises(CanonInputError) as exc:
        build_registry(con, documents=[(tmp_path / "a", KNOWLEDGE),
                                       (tmp_path / "b", contract_from_dict(other, path="wiki.yml"))],
                       run_id="r1", today=TODAY)
    assert exc.value.path == str(tmp_path / "b") and exc.value.field == "contract"
    assert "source system 'corpus'" in exc.value.reason and "under knowledge@1.0.0" in exc.value.reason
    assert _live(con) == {}   # refused before anything was stored
    con.close()


def test_the_documents_sensor_watches_every_source(tmp_path):
    from sensors import watch

    wiki, notes = tmp_path / "wiki", tmp_path / "notes"
    _page(wiki, "wiki.close")
    _page(notes, "note.a")
    assert watch.documents_state([wiki]) == watch.corpus_state(wiki)   # one source: the cursor it always had
    both = watch.documents_state([wiki, notes])
    assert set(both.files) == {"0:wiki.close.md", "1:note.a.md"}
    _page(notes, "note.a", body=BODY + " Edited.")
    after = watch.documents_state([wiki, notes])
    assert after.digest != both.digest and watch.diff(both.files, after.files)["changed"] == ["1:note.a.md"]
