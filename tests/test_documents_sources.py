"""Several documents sources in one registry build (the configuration's
`documents`, canon/registry/build.py): each passes its own contract's gate and
is kept under its own source system, so a build of one never removes the
other's documents, and a doc_id one source registered is not taken by another."""

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


def test_two_sources_under_one_source_system_are_refused(tmp_path):
    _page(tmp_path / "a", "wiki.a")
    _page(tmp_path / "b", "wiki.b")
    con = registry.connect(tmp_path / "canon.duckdb")
    with pytest.raises(CanonInputError) as exc:
        build_registry(con, documents=[(tmp_path / "a", KNOWLEDGE), (tmp_path / "b", KNOWLEDGE)], run_id="r1",
                       today=TODAY)
    assert exc.value.path == str(tmp_path / "b") and exc.value.field == "contract"
    assert "source system 'corpus'" in exc.value.reason
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
