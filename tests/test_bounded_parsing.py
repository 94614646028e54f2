"""Bounded work on hostile input (docs/contracts.md, "Document limits" and "canon ask").

One small hostile file must not stop the registry build: a YAML alias bomb, a JSONL
line nested 100,000 deep and front matter of 5,000 `[` are each quarantined with a
reason by the real build (canon.registry.build), and a normal page beside them still
registers. The limits are checked in one pass before anything is constructed
(canon/sources/corpus/limits.py), so these tests finish because the work is bounded,
not because of a timer. The PII scan stays linear on large adversarial text, and a
question is length-limited before any work, with the fuzzy pre-filter's work
independent of the question's length.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from canon.ask.understanding import fuzzy_filter
from canon.ask.understanding.match import match_objects, match_objects_exhaustive, object_catalog
from canon.ask.understanding.parse import MAX_QUESTION_CHARS, parse_question
from canon.cli.main import main
from canon.core.errors import CanonInputError
from canon.registry import pii
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.registry.gate import gate
from canon.sources.corpus.limits import MAX_ALIAS_EXPANSION, MAX_ALIASES, MAX_DEPTH
from canon.sources.corpus.reader import read_corpus

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = load_contract(ROOT / "contracts" / "knowledge.yml")
TODAY = dt.date(2026, 11, 30)
BODY = "This page explains how the finance team reconciles refunds at month end, step by step."

# The classic "billion laughs": nine levels of nine aliases, 9^9 strings once expanded.
ALIAS_BOMB = (
    "---\ndoc_id: wiki.bomb\nobject_id: wiki.test.bomb\nkind: wiki\ntitle: Bomb\nstatus: approved\n"
    "authority: 50\nversion: '1'\nvalid_from: 2026-01-01\nallowed_roles: [analyst]\n"
    'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    + "".join(f"{c}: &{c} [{','.join([f'*{p}'] * 9)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    + f"---\n{BODY}\n"
)


def _page(doc_id: str) -> str:
    return (f"---\ndoc_id: {doc_id}\nobject_id: wiki.test.{doc_id}\nkind: wiki\ntitle: Page {doc_id}\n"
            f"status: approved\nauthority: 50\nversion: '1'\nvalid_from: 2026-01-01\nallowed_roles: [analyst]\n"
            f"---\n{BODY}\n")


def _json_line(doc_id: str) -> str:
    return ('{"doc_id": "%s", "object_id": "wiki.test.%s", "kind": "wiki", "title": "Note", "status": "approved", '
            '"authority": 50, "version": "1", "valid_from": "2026-01-01", "allowed_roles": ["analyst"], '
            '"text": "%s"}' % (doc_id, doc_id, BODY))


@pytest.fixture
def con(tmp_path):
    c = registry.connect(tmp_path / "canon.duckdb")
    yield c
    c.close()


def _build(con, root: Path):
    build = build_registry(con, corpus=root, corpus_contract=CONTRACT, run_id="r1", today=TODAY)
    quarantined = {q.source_uri: " | ".join(q.reasons) for q in build.quarantined}
    registered = {d.doc_id for d in registry.load_documents(con)}
    return quarantined, registered


def test_alias_bomb_in_front_matter_is_quarantined_and_the_build_goes_on(con, tmp_path):
    assert len(ALIAS_BOMB.encode()) < 1024
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "bomb.md").write_text(ALIAS_BOMB, encoding="utf-8")
    (root / "new_page.md").write_text(_page("wiki.new_page"), encoding="utf-8")
    quarantined, registered = _build(con, root)
    assert quarantined == {"bomb.md": f"YAML front matter aliases expand to more than {MAX_ALIAS_EXPANSION} "
                                      "nodes and characters (an alias bomb?)"}
    assert registered == {"wiki.new_page"}


def test_many_aliases_are_refused_even_when_small_and_a_few_still_load(tmp_path):
    many = _page("wiki.aliases").replace("---\nThis", "x: &x 1\ny: [" + ", ".join(["*x"] * (MAX_ALIASES + 1))
                                         + "]\n---\nThis")
    few = _page("wiki.anchors").replace("---\nThis", "roles: &r [analyst, finance]\nowners: *r\n---\nThis")
    (tmp_path / "aliases.md").write_text(many, encoding="utf-8")
    (tmp_path / "anchors.md").write_text(few, encoding="utf-8")
    read = read_corpus(tmp_path)
    assert [(f.source_uri, f.reason) for f in read.failures] == [
        ("aliases.md", f"YAML front matter has more than {MAX_ALIASES} aliases")]
    assert [r.fields["owners"] for r in read.records] == [["analyst", "finance"]]


def test_deep_jsonl_line_and_deep_front_matter_are_quarantined_beside_normal_pages(con, tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    deep = '{"doc_id": "wiki.deep", "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (root / "notes.jsonl").write_text(_json_line("wiki.note_before") + "\n" + deep + "\n"
                                      + _json_line("wiki.note_after") + "\n", encoding="utf-8")
    (root / "brackets.md").write_text("---\ndoc_id: wiki.brackets\nx: " + "[" * 5_000 + f"\n---\n{BODY}\n",
                                      encoding="utf-8")
    (root / "new_page.md").write_text(_page("wiki.new_page"), encoding="utf-8")
    quarantined, registered = _build(con, root)
    assert quarantined == {
        "notes.jsonl#L2": f"JSON at line 2 is nested more than {MAX_DEPTH} levels deep",
        "brackets.md": f"YAML front matter is nested more than {MAX_DEPTH} levels deep",
    }
    assert registered == {"wiki.note_before", "wiki.note_after", "wiki.new_page"}


def test_deep_json_file_is_a_read_failure_and_brackets_in_strings_do_not_count(tmp_path):
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    # 200 brackets inside a string (and an escaped quote) are text, not nesting
    (tmp_path / "fine.jsonl").write_text(
        _json_line("wiki.fine").replace('"kind"', '"note": "\\" %s", "kind"' % ("[" * 200)) + "\n", encoding="utf-8")
    read = read_corpus(tmp_path)
    assert [(f.source_uri, f.reason) for f in read.failures] == [
        ("deep.json", f"JSON is nested more than {MAX_DEPTH} levels deep")]
    assert [r.fields["doc_id"] for r in read.records] == ["wiki.fine"]


def test_pii_scan_on_large_adversarial_text_finds_every_hit():
    # 1 MB (the body limit) of valid card numbers: 50,000 findings, each one kept. Resolving
    # overlaps against every finding kept so far was quadratic in their number.
    card = "4111 1111 1111 1111 "
    text = card * 50_000
    found = pii.scan(text)
    assert len(found) == 50_000
    assert {f.kind for f in found} == {pii.CARD}
    assert found[0].span == (0, 19) and found[-1].span == (len(text) - 20, len(text) - 1)


@pytest.fixture(scope="module")
def catalog():
    docs = gate(read_corpus(ROOT / "tests" / "gold_hard" / "corpus"), CONTRACT, today=TODAY).documents
    cat = object_catalog(docs)
    match_objects("warm up", cat)
    match_objects("warm up", cat)  # the second question builds the MatchIndex
    assert cat.match_index is not None
    return cat


def test_question_over_the_limit_is_refused_before_any_work(catalog):
    with pytest.raises(CanonInputError, match=f"question: is {MAX_QUESTION_CHARS + 1} characters, over the limit"):
        parse_question("x" * (MAX_QUESTION_CHARS + 1), catalog)
    assert parse_question("net revenue " * (MAX_QUESTION_CHARS // 12), catalog).text  # at the limit: parsed


def test_cli_rejects_a_100k_character_question_with_exit_2(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CANON_HOME", str(tmp_path / "home"))
    rc = main(["ask", "What is net revenue? " * 5_000, "--role", "analyst"])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.strip() == (f"canon: error: question: is 105000 characters, over the limit of {MAX_QUESTION_CHARS}; "
                           "ask about one thing in a sentence or two")
    assert not (tmp_path / "home").exists()  # refused before the workspace was opened


def test_fuzzy_prefilter_work_does_not_grow_with_the_question(catalog, monkeypatch):
    """The bigram bound is tabulated for string lengths only: the shorter of question and
    name is the needle, so it never needs a length beyond the longest name. Tabulating it
    up to the question's length cost O(length^2) per new longest question."""
    calls = []
    real = fuzzy_filter.required_shared_bigrams
    monkeypatch.setattr(fuzzy_filter, "required_shared_bigrams", lambda n, c: calls.append(n) or real(n, c))
    words = "which net revenue definition applies for active customers churn according to the old wiki".split()
    for length in (250, 500, 1000, MAX_QUESTION_CHARS):
        q = " ".join(words[i % len(words)] for i in range(length))[:length]
        assert match_objects(q, catalog) == match_objects_exhaustive(q, catalog)  # same answers
    longest = max(len(s) for s in catalog.match_index.core_filter.strings)
    assert max(calls, default=0) <= longest
