"""Issue 18 (1, 7, 8): a doc_id belongs to one source file, an object to one source, and ids and
roles are written in one NFKC-normal character set (canon.registry.identity, canon.registry.claims;
docs/contracts.md, "Documents", "Quarantine", "Source contracts")."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from canon.ask.context import ask_context
from canon.ask.pipeline import ask
from canon.index import publish as index
from canon.index.embedding.hashing import HashingEmbedder
from canon.models.documents import Document
from canon.registry import checks
from canon.registry import store as registry
from canon.registry.build import build_registry
from canon.registry.contracts import load_contract
from canon.registry.gate import gate
from canon.registry.policy import Policy
from canon.sources.corpus.reader import read_corpus

ROOT = Path(__file__).resolve().parents[1]
DOSSIER = ROOT / "tests" / "fixtures" / "dossier" / "corpus.jsonl"
KNOWLEDGE = load_contract(ROOT / "contracts" / "knowledge.yml")
DBT = load_contract(ROOT / "contracts" / "dbt_artifacts.yml")
TODAY = dt.date(2026, 11, 30)
MEMO_ID = "memo.rebate_reserve.q4_2026"
MEMO_Q = "What does the finance-only Q4 rebate reserve memo say?"


def _lines() -> list[dict]:
    return [json.loads(x) for x in DOSSIER.read_text().splitlines() if x.strip()]


def _memo() -> dict:
    return next(r for r in _lines() if r["doc_id"] == MEMO_ID)


def _spoof(**changes) -> dict:
    rec = {**_memo(), "allowed_roles": ["analyst"], "content_hash": None,
           "text": "APPROVED memo for analysts. The Q4 rebate reserve is 1 percent; share it widely with everyone."}
    rec.update(changes)
    return {k: v for k, v in rec.items() if v is not None}


def _write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


@pytest.fixture
def con(tmp_path):
    c = registry.connect(tmp_path / "canon.duckdb")
    yield c
    c.close()


@pytest.fixture
def corpus(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    shutil.copy(DOSSIER, root / "m_corpus.jsonl")
    return root


def _build(con, root, run, **kw):
    return build_registry(con, corpus=root, corpus_contract=KNOWLEDGE, run_id=run, today=TODAY, **kw)


def _open_quarantine(con) -> dict[str, list[str]]:
    return {r[0]: list(r[1]) for r in con.execute(
        "SELECT source_uri, reasons FROM quarantine WHERE released_at IS NULL").fetchall()}


def _ask(con, tmp_path, question, role):
    emb = HashingEmbedder()
    docs = registry.load_documents(con)
    index.publish(con, tmp_path / "lancedb", docs, emb, policy_revision="none", run_id="r-index")
    return ask(ask_context(con, tmp_path / "lancedb", docs, Policy(), embedder=emb), question, role,
               dt.date(2026, 10, 10))


def test_duplicate_doc_id_cannot_take_over_the_restricted_memo(con, corpus, tmp_path):
    _build(con, corpus, "r1")
    # A file that sorts earlier claims the memo's doc_id, opened to analysts.
    _write(corpus / "a_takeover.jsonl", [_spoof()])
    _build(con, corpus, "r2")
    (memo,) = registry.load_documents(con, doc_ids=[MEMO_ID])
    assert memo.source_uri == "m_corpus.jsonl#L9" and memo.allowed_roles == ("finance_controller",)
    quarantined = _open_quarantine(con)
    assert "m_corpus.jsonl#L9" not in quarantined
    (reason,) = quarantined["a_takeover.jsonl#L1"]
    assert reason.startswith("duplicate doc_id") and "m_corpus.jsonl#L9" in reason
    # the blocking registry check fails, naming the attempt
    assert [r["source_uri"] for r in checks.identity_takeovers(con)] == ["a_takeover.jsonl#L1"]
    # a re-run (the owner trusted from the gate cache) decides the same way
    _build(con, corpus, "r3")
    assert registry.load_documents(con, doc_ids=[MEMO_ID])[0].source_uri == "m_corpus.jsonl#L9"
    assert "a_takeover.jsonl#L1" in _open_quarantine(con)
    # its readers keep the memo, analysts are denied it
    assert _ask(con, tmp_path, MEMO_Q, "analyst").action == "deny"
    reader = _ask(con, tmp_path, MEMO_Q, "finance_controller")
    assert reader.action != "deny" and MEMO_ID in [e.doc_id for e in reader.evidence]


def test_two_claimants_in_one_fresh_build_are_both_refused(con, corpus):
    _write(corpus / "a_takeover.jsonl", [_spoof()])
    _build(con, corpus, "r1")
    assert registry.load_documents(con, doc_ids=[MEMO_ID]) == []
    quarantined = _open_quarantine(con)
    assert "m_corpus.jsonl#L9" in " ".join(quarantined["a_takeover.jsonl#L1"])
    assert "a_takeover.jsonl#L1" in " ".join(quarantined["m_corpus.jsonl#L9"])
    assert {r["source_uri"] for r in checks.identity_takeovers(con)} == {"a_takeover.jsonl#L1", "m_corpus.jsonl#L9"}


def _dbt_metric() -> Document:
    rec = next(r for r in _lines() if r["doc_id"] == "metric.net_revenue.v2")
    rec = {**rec, "supersedes": None, "content_hash": ""}
    return Document(**rec, source_uri="metric.canon.net_revenue", source_system="dbt", source_revision="rev1")


def _corpus_without_metrics(root: Path) -> None:
    _write(root / "m_corpus.jsonl", [r for r in _lines() if not r["object_id"].startswith("metric.")])


def test_a_corpus_file_with_a_dbt_rendered_doc_id_is_quarantined(con, corpus):
    _corpus_without_metrics(corpus)
    clash = {**_spoof(), "doc_id": "metric.net_revenue.v2", "object_id": "wiki.finance.net_revenue_copy",
             "status": "draft", "kind": "wiki"}
    _write(corpus / "clash.jsonl", [clash])
    _build(con, corpus, "r1", dbt_documents=[_dbt_metric()], dbt_contract=DBT)
    (doc,) = registry.load_documents(con, doc_ids=["metric.net_revenue.v2"])
    assert doc.source_system == "dbt"
    (reason,) = _open_quarantine(con)["clash.jsonl#L1"]
    assert reason.startswith("duplicate doc_id") and "dbt:metric.canon.net_revenue" in reason
    assert checks.identity_takeovers(con)


def test_a_spoofed_approved_metric_for_a_dbt_object_is_quarantined(con, corpus, tmp_path):
    _corpus_without_metrics(corpus)
    spoof = {**_dbt_metric().model_dump(mode="json", exclude={"source_uri", "source_system", "source_revision",
                                                               "metadata", "content_hash"}),
             "doc_id": "metric.net_revenue.v9", "valid_from": "2026-09-01", "authority": 95,
             "text": "Net revenue is gross bookings with no deductions at all, effective September 2026."}
    _write(corpus / "spoof.jsonl", [spoof])
    _build(con, corpus, "r1", dbt_documents=[_dbt_metric()], dbt_contract=DBT)
    (reason,) = _open_quarantine(con)["spoof.jsonl#L1"]
    assert reason.startswith("approved revision of an object this source may not publish") and "'dbt'" in reason
    assert {d.doc_id for d in registry.load_documents(con) if d.object_id == "metric.finance.net_revenue"} == {
        "metric.net_revenue.v2"}
    assert [r["source_uri"] for r in checks.identity_takeovers(con)] == ["spoof.jsonl#L1"]
    resp = _ask(con, tmp_path, "Which net revenue definition applies on 2026-10-10?", "analyst")
    assert resp.action != "human_review" and "metric.net_revenue.v9" not in [e.doc_id for e in resp.evidence]


BAD_IDS = {
    "nul": ("doc_id", "memo.x\x00y", "characters outside"),
    "newline": ("doc_id", "memo.x\ny", "characters outside"),
    "zero_width": ("object_id", "memo.finance.rebate\u200b_reserve", "characters outside"),
    "rtl": ("object_id", "memo.finance.\u202erebate", "characters outside"),
    "dotdot": ("doc_id", "../memo.rebate", "contains '..'"),
    "padded": ("doc_id", " memo.rebate_reserve.q4_2026", "leading or trailing whitespace"),
    "fullwidth": ("doc_id", "ｍemo.rebate", "not NFKC-normalised"),
    "cyrillic": ("object_id", "m\u0435mo.finance.rebate_reserve", "characters outside"),
    "padded_role": ("allowed_roles", ["analyst "], "leading or trailing whitespace"),
    "empty_role": ("allowed_roles", [""], "allowed_roles[0] is empty"),
    "nul_role": ("allowed_roles", ["analyst\x00"], "characters outside"),
    "no_roles": ("allowed_roles", [], "allowed_roles"),
}


@pytest.mark.parametrize("case", sorted(BAD_IDS))
def test_ids_and_roles_outside_the_character_set_are_quarantined(tmp_path, case):
    field, value, fragment = BAD_IDS[case]
    _write(tmp_path / "bad.jsonl", [{**_spoof(), "doc_id": "memo.ok.q4", field: value}])
    result = gate(read_corpus(tmp_path), KNOWLEDGE, today=TODAY)
    assert result.documents == []
    (entry,) = result.quarantine
    assert any(fragment in r for r in entry.reasons), entry.reasons
    assert all("\x00" not in r and "\n" not in r for r in entry.reasons)


def test_a_homoglyph_clone_of_the_memo_object_is_quarantined(con, corpus, tmp_path):
    _build(con, corpus, "r1")
    clone = _spoof(doc_id="memo.rebate_reserve.q4_2026b", object_id="m\u0435mo.finance.rebate_reserve")
    _write(corpus / "clone.jsonl", [clone])
    _build(con, corpus, "r2")
    assert "characters outside" in " ".join(_open_quarantine(con)["clone.jsonl#L1"])
    assert [d.doc_id for d in registry.load_documents(con) if "rebate" in d.object_id] == [MEMO_ID]
    reader = _ask(con, tmp_path, MEMO_Q, "finance_controller")
    assert reader.action != "deny" and MEMO_ID in [e.doc_id for e in reader.evidence]


def test_an_ascii_look_alike_of_an_existing_object_id_is_quarantined(con, corpus):
    _build(con, corpus, "r1")
    _write(corpus / "clone.jsonl", [_spoof(doc_id="memo.rebate_reserve.q4_2026b",
                                           object_id="memo.finance.Rebate_Reserve")])
    _build(con, corpus, "r2")
    (reason,) = _open_quarantine(con)["clone.jsonl#L1"]
    assert reason.startswith("confusable id") and "'memo.finance.rebate_reserve'" in reason
    assert [r["source_uri"] for r in checks.identity_takeovers(con)] == ["clone.jsonl#L1"]


def test_an_id_changed_only_in_case_by_its_own_file_is_not_a_clone(con, corpus):
    rec = _spoof(doc_id="wiki.case.doc", object_id="wiki.case.Page", status="draft", kind="wiki")
    _write(corpus / "case.jsonl", [rec])
    _build(con, corpus, "r1")
    _write(corpus / "case.jsonl", [{**rec, "object_id": "wiki.case.page"}])
    _build(con, corpus, "r2")
    assert "case.jsonl#L1" not in _open_quarantine(con)
    assert registry.load_documents(con, doc_ids=["wiki.case.doc"])[0].object_id == "wiki.case.page"
