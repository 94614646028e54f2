"""A scoped ask (canon/ask/scope.py: the documents a question reaches, read as
the pipeline reaches them) gives the response the whole-registry ask gives,
on every gold case of both release sets and on questions of every action and
intent, while reading a small part of the registry; a catalog that no longer
matches the registry is not used."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import uuid
from pathlib import Path

import pytest

from canon.ask.context import ask_context
from canon.ask.pipeline import ask
from canon.ask.scope import registry_roles, scoped_context
from canon.ask.understanding import catalog_store
from canon.ask.understanding.match import MatchIndex, object_catalog
from canon.evaluation.gold import RELEASE_SETS, load_gold
from canon.index import publish as index
from canon.index.embedding.hashing import HashingEmbedder
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.registry.policy import load_policy, project

ROOT = Path(__file__).resolve().parents[1]
TODAY = dt.date(2026, 11, 30)

# Questions beyond the gold cases: every intent, named sources of each shape, misspellings,
# dates, words no object has, one character, a bare kind noun.
EXTRA = [
    "What is net revenue?", "Which raw sources feed net revenue on 2026-08-31?", "What is the grain of fct_revenue?",
    "Is the order lines table fresh?", "What was net revenue in August 2026?", "net revnue definition",
    "The old wiki says net revenue includes VAT; is that right?", "According to the runbook, how is MRR computed?",
    "Like the draft proposal does, should refunds be excluded from net revenue?", "the doc says churn is monthly",
    "What does the rebate memo say?", "zzzz qqqq", "x", "memo", "Who owns the finance close runbook?",
    "annual recurring revenue for 2026-03-31", "active customers count as of 2026-06-30",
    # Versions, periods, relative days and comparisons (canon/ask/understanding/temporal.py).
    "What is net revenue v2?", "Show me the definition of net revenue version 1", "What was net revenue in Q3 2026?",
    "Which net revenue definition applied in 2026?", "net revenue definition for 2026-07",
    "Does net revenue include VAT for the June 2026 close?", "Which definition of net revenue applies today?",
    "What was the previous net revenue definition?", "What changed between net revenue v1 and v2?",
    "What is the difference between the old and the new MRR definition?",
    "Is raw.commerce.order_lines fresh right now?", "How stale is RAW.COMMERCE.REFUNDS on 2026-10-10?",
    "Was raw.commerce.refunds within SLA in the 08:00 UTC snapshot on 2026-10-10?",
    "Are the net revenue sources fresh as of 2026-10-10T09:00:00Z?", "Is raw.nowhere.table fresh?",
    "Which sources feed total net revenue?", "How stale is the refunds source table on 2026-10-10?",
    "Is fct_revenue deprecated?", "Who owns the net revenue metric?",
    # Named sources by title words, in a second sentence, compared with "like"; a look-alike metric.
    "The old finance close runbook tells me to book refunds late. Is that right for net revenue on 2026-08-31?",
    "Does net revenue for 2026-08-31 include VAT, like the v3 proposal does?",
    "How is net revenue defined for 2026-08-31? A chat thread someone pasted says it includes shipping.",
    "According to the help-centre article, how is MRR counted?", "How is the weekly recurring revenue defined?",
    "What is our governed customer churn rate for 2026-06-30?",
]


def _workspace(tmp: Path, corpus: Path):
    con = registry.connect(tmp / "canon.duckdb")
    build_registry(con, corpus=corpus, corpus_contract=load_contract(ROOT / "contracts/knowledge.yml"),
                   run_id=str(uuid.uuid4()), today=TODAY)
    registry.refresh_definitions(con)
    docs = registry.load_documents(con)
    policy_file = (corpus if corpus.is_dir() else corpus.parent) / "policy.yml"
    policy = load_policy(policy_file if policy_file.exists() else None)
    emb = HashingEmbedder()
    index.publish(con, tmp / "lancedb", project(docs, policy), emb, policy_revision=policy.revision, run_id="r1")
    catalog_store.refresh_catalog(con)
    return con, docs, policy, emb


def _comparable(resp) -> dict:
    data = resp.to_json_dict()
    data.pop("answer_id", None)
    return json.loads(json.dumps(data, default=str))


@pytest.mark.parametrize("name,corpus,gold", RELEASE_SETS, ids=[s[0] for s in RELEASE_SETS])
def test_scoped_ask_answers_as_the_whole_registry_does(tmp_path, name, corpus, gold):
    con, docs, policy, emb = _workspace(tmp_path, corpus)
    try:
        full = ask_context(con, tmp_path / "lancedb", docs, policy, embedder=emb, log_answers=False)
        cases = [(c.question, c.role, c.as_of) for c in load_gold(gold)]
        roles = sorted({role for _, role, _ in cases})
        cases += [(q, role, None) for q in EXTRA for role in roles]
        for question, role, as_of in cases:
            expected = _comparable(ask(full, question, role, as_of))
            scoped = scoped_context(con, tmp_path / "lancedb", question, role, policy, embedder=emb)
            assert scoped is not None
            scoped.log_answers = False
            got = _comparable(ask(scoped, question, role, as_of))
            assert got == expected, (name, question, role)
    finally:
        con.close()


def test_on_a_generated_registry_a_question_reads_a_small_part_of_it(tmp_path):
    """The benchmark's generator (bench/gen_corpus.py: analytical documents over many domains)
    at 600 documents: same responses as the whole-registry ask, for governed questions with
    dates, peer-style queries and the extra questions, and most questions load under a tenth."""
    from bench import gen_corpus
    from bench.questions import governed_questions, peer_queries

    corpus = tmp_path / "corpus"
    gen_corpus.generate(corpus, 600, seed=5, synth_share=0.0)
    con, docs, policy, emb = _workspace(tmp_path, corpus)
    try:
        full = ask_context(con, tmp_path / "lancedb", docs, policy, embedder=emb, log_answers=False)
        cases = [(q, "analyst", day) for q, _, day in governed_questions(docs, 25, seed=5)]
        cases += [(q, role, None) for q in peer_queries(15) + EXTRA for role in ("analyst", "finance_controller")]
        loaded = []
        for question, role, as_of in cases:
            expected = _comparable(ask(full, question, role, as_of))
            scoped = scoped_context(con, tmp_path / "lancedb", question, role, policy, embedder=emb)
            scoped.log_answers = False
            assert _comparable(ask(scoped, question, role, as_of)) == expected, (question, role)
            loaded.append(len(scoped.docs))
        small = sum(n <= len(docs) // 10 for n in loaded)
        assert small >= 0.8 * len(loaded), (sorted(loaded), len(docs))
    finally:
        con.close()


def test_stored_candidates_cover_the_match_index(tmp_path):
    """candidate_objects (SQL over the stored catalog) returns every object MatchIndex.candidates
    returns, for the gold questions and misspelled, reordered and partial names."""
    con, docs, _, _ = _workspace(tmp_path, RELEASE_SETS[1][1])
    try:
        catalog = object_catalog(docs)
        idx = MatchIndex(catalog, catalog.distinctive)
        questions = [c.question for c in load_gold(RELEASE_SETS[1][2])] + EXTRA
        for entry in list(catalog.values()):
            for n in sorted(entry.names):
                words = n.split()
                questions += [n, " ".join(reversed(words)), n.replace("e", "a", 1), f"what is {n[:-1]} for june"]
        for q in questions:
            stored = catalog_store.candidate_objects(con, q)
            expected, _ = idx.candidates(catalog_store.normalize(q), 85.0)
            assert stored is None or expected <= stored, (q, expected - stored)
    finally:
        con.close()


def test_a_catalog_older_than_the_registry_is_not_used(tmp_path):
    con, docs, policy, emb = _workspace(tmp_path, RELEASE_SETS[0][1])
    try:
        assert catalog_store.catalog_is_current(con)
        con.execute("UPDATE documents SET title = title || ' (renamed)' WHERE doc_id = ?", [docs[0].doc_id])
        assert not catalog_store.catalog_is_current(con)
        assert scoped_context(con, tmp_path / "lancedb", "What is net revenue?", "analyst", policy) is None
        catalog_store.refresh_catalog(con)
        assert catalog_store.catalog_is_current(con)
        assert registry_roles(con) == {r for d in docs for r in d.allowed_roles}
    finally:
        con.close()


def test_a_catalog_stored_by_other_naming_code_is_not_used(tmp_path, monkeypatch):
    """A Canon upgrade that derives names otherwise (canon/ask/understanding/match.py) leaves the
    documents as they were: the stored catalog holds the old names, so it is not current."""
    con, docs, policy, emb = _workspace(tmp_path, RELEASE_SETS[0][1])
    try:
        assert catalog_store.catalog_is_current(con)
        monkeypatch.setattr(catalog_store, "_NAMING_CODE", "another-version")
        assert not catalog_store.catalog_is_current(con)
        assert scoped_context(con, tmp_path / "lancedb", "What is net revenue?", "analyst", policy) is None
        catalog_store.refresh_catalog(con)
        assert catalog_store.catalog_is_current(con)
    finally:
        con.close()


def test_the_anchored_observation_pattern_finds_what_the_unanchored_one_does():
    """links._OBS_SENTENCE starts a source where its word starts instead of retrying every
    position inside every word; on random words (digits, dots, underscores, non-ASCII and
    case-folding letters) it finds the same sources, timestamps and SLAs."""
    import random
    import re

    from canon.ask import links

    unanchored = re.compile(links._OBS_SENTENCE.pattern.replace(r"(?<![\w.])(?:[^\WA-Za-z_]|\.)*", "", 1), re.I)
    assert unanchored.pattern != links._OBS_SENTENCE.pattern
    rng = random.Random(7)
    alphabet = "ab_Z9.é- \u017f\u212a"
    for _ in range(5000):
        w = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 9)))
        text = (f"{w} max_loaded_at 2026-11-05T00:35:00Z, SLA 4 hours. x{w}y.{w} MAX_LOADED_AT "
                f"2026-11-05T00:35:00+01:00 SLA 3 min {w}raw.s max_loaded_at 2026-11-05T00:35:00Z SLA 1 h")
        assert ([m.groupdict() for m in links._OBS_SENTENCE.finditer(text)] ==
                [m.groupdict() for m in unanchored.finditer(text)]), text


def test_the_cli_answers_alike_with_and_without_the_stored_catalog(tmp_path):
    """`canon ask` as a process: the scoped path (catalog stored) and the whole-registry path
    (none stored) print the same JSON for questions of each action."""
    import cli_workspace

    scoped = cli_workspace.build(tmp_path / "scoped")
    whole = cli_workspace.build(tmp_path / "whole", catalog=False)
    con = registry.connect(scoped.home / "canon.duckdb", read_only=True)
    try:
        assert catalog_store.catalog_is_current(con)
    finally:
        con.close()
    for question, role in [(cli_workspace.Q, "analyst"), ("What does the finance-only Q4 rebate reserve memo say?",
                                                           "analyst"),
                           ("What does the finance-only Q4 rebate reserve memo say?", "finance_controller"),
                           ("Which raw sources feed net revenue on 2026-08-31?", "analyst"), ("zzzz qqqq", "analyst")]:
        a, b = scoped.ask(role=role, question=question), whole.ask(role=role, question=question)
        a.pop("answer_id")
        b.pop("answer_id")
        assert a == b, question


def test_a_one_shot_ask_answers_alike_and_lets_go_of_the_index_after_its_query(tmp_path):
    """`canon ask`'s context (one_shot, canon/core/memory.py): DuckDB's cache is released before
    the index query and LanceDB's tables after it; the responses are the ones without."""
    from canon.index import search as index_search

    name, corpus, _ = RELEASE_SETS[0]
    con, docs, policy, emb = _workspace(tmp_path, corpus)
    try:
        limit = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
        retrieved = 0
        for question in EXTRA:
            plain = scoped_context(con, tmp_path / "lancedb", question, "analyst", policy, embedder=emb)
            plain.log_answers = False
            expected = _comparable(ask(plain, question, "analyst"))
            index_search.search(tmp_path / "lancedb", con, "warm", emb.embed(["warm"])[0], role="analyst", k=1)
            assert index_search._TABLES                       # a table stays pinned between queries ...
            once = scoped_context(con, tmp_path / "lancedb", question, "analyst", policy, embedder=emb,
                                  one_shot=True)
            once.log_answers = False
            searched = []
            inner = once.retriever.search
            once.retriever = dataclasses.replace(once.retriever, search=lambda *a, **k: searched.append(1) or inner(*a, **k))
            assert _comparable(ask(once, question, "analyst")) == expected, (name, question)
            if searched:
                retrieved += 1
                assert not index_search._TABLES               # ... but not after a one-shot ask's query
            assert con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] == limit
        assert retrieved >= 5
    finally:
        con.close()
