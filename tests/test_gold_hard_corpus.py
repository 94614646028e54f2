"""The hard gold set (tests/gold_hard): its corpus passes the knowledge contract
gate untouched, and gold.json is well-formed against that corpus.

These are checks of the fixture itself, not of Canon's answers: `canon eval
--corpus tests/gold_hard/corpus --gold tests/gold_hard/gold.json` grades the
answers. What is checked here would make a gold case meaningless if it broke
(a gold document that does not exist, that the role may not see, or that is
not in effect on the case's date)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from canon.models.documents import Status
from canon.registry.contracts import load_contract
from canon.registry.gate import gate
from canon.registry.policy import is_visible, load_policy
from canon.sources.corpus.reader import read_corpus

ROOT = Path(__file__).resolve().parents[1]
HARD = ROOT / "tests" / "gold_hard"
CORPUS = HARD / "corpus"
GOLD = HARD / "gold.json"
TODAY = dt.date(2026, 11, 30)

ACTIONS = {"answer", "answer_conflict", "clarify", "abstain", "deny", "calculate", "human_review"}
NO_EVIDENCE = {"clarify", "abstain", "deny"}
GOLD_KEYS = {"id", "question", "role", "as_of", "expected_action", "gold_docs", "gold_answer"}


@pytest.fixture(scope="module")
def gated():
    return gate(read_corpus(CORPUS), load_contract(ROOT / "contracts" / "knowledge.yml"), today=TODAY)


@pytest.fixture(scope="module")
def docs(gated):
    return {d.doc_id: d for d in gated.documents}


@pytest.fixture(scope="module")
def policy():
    return load_policy(CORPUS / "policy.yml")


@pytest.fixture(scope="module")
def gold() -> list[dict]:
    return json.loads(GOLD.read_text(encoding="utf-8"))


def _visible(doc, role, policy) -> bool:
    return is_visible(policy, role, doc.doc_id, doc.object_id, doc.allowed_roles)


# --- the corpus -------------------------------------------------------------------------
def test_corpus_passes_the_contract_gate(gated):
    assert gated.quarantine == [], [(q.source_uri, q.reasons) for q in gated.quarantine]
    assert gated.collapsed == []
    assert len(gated.documents) >= 30


def test_corpus_uses_markdown_and_jsonl(gated):
    suffixes = {Path(d.source_uri.split("#")[0]).suffix for d in gated.documents}
    assert {".md", ".jsonl"} <= suffixes


def test_policy_has_a_revision_and_every_revoke_rule_bites(docs, policy):
    assert policy.revision and policy.revision != "none"
    assert policy.revoke, "the hard set tests revocation through policy.yml"
    for rule in policy.revoke:
        # A rule must revoke something the ACL would otherwise admit.
        hit = [d for d in docs.values() if rule.role in d.allowed_roles
               and rule.matches(rule.role, d.doc_id, d.object_id)]
        assert hit, f"revoke rule {rule} matches no document its role could otherwise read"


def test_supersedes_points_at_existing_revisions(docs):
    for d in docs.values():
        if d.supersedes:
            assert d.supersedes in docs, f"{d.doc_id} supersedes unknown {d.supersedes}"
            assert docs[d.supersedes].object_id == d.object_id


def test_the_hard_features_are_present(docs):
    by_object: dict[str, list] = {}
    for d in docs.values():
        by_object.setdefault(d.object_id, []).append(d)
    # Duplicate metric names across domains.
    names: dict[str, set[str]] = {}
    for oid in by_object:
        if oid.startswith("metric."):
            names.setdefault(oid.split(".")[-1], set()).add(oid.split(".")[1])
    assert any(len(domains) > 1 for domains in names.values())
    # Two approved revisions of one object that overlap in business time.
    def overlap(a, b):
        return a.valid_from < (b.valid_to or dt.date.max) and b.valid_from < (a.valid_to or dt.date.max)
    assert any(overlap(a, b) for revs in by_object.values()
               for a in revs for b in revs if a.doc_id < b.doc_id
               and a.status == b.status == Status.approved)
    # A draft whose version is numerically above every approved one of its object.
    def num(v):
        return int(v) if v.isdigit() else None
    assert any(d.status == Status.draft and num(d.version) is not None
               and all(num(o.version) is not None and num(o.version) < num(d.version)
                       for o in by_object[d.object_id] if o.status == Status.approved)
               for d in docs.values())
    kinds = {d.kind for d in docs.values()}
    assert {"metric_definition", "model_schema", "lineage", "freshness_snapshot", "wiki", "runbook",
            "restricted_memo", "untrusted_note"} <= kinds
    # Lineage in the `a -> b` form, freshness in the sentence form (docs/contracts.md).
    assert all(" -> " in d.text for d in docs.values() if d.kind == "lineage")
    assert all(d.text.startswith("Observed at ") and "max_loaded_at" in d.text and "SLA" in d.text
               for d in docs.values() if d.kind == "freshness_snapshot")


# --- the gold file ----------------------------------------------------------------------
def test_gold_is_well_formed(gold):
    assert isinstance(gold, list) and len(gold) >= 30
    ids = [c["id"] for c in gold]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    for c in gold:
        assert set(c) == GOLD_KEYS, c["id"]
        assert c["expected_action"] in ACTIONS, c["id"]
        assert isinstance(c["question"], str) and c["question"].strip(), c["id"]
        assert isinstance(c["role"], str) and c["role"], c["id"]
        assert isinstance(c["gold_docs"], list), c["id"]
        assert len(c["gold_docs"]) <= 3, f"{c['id']}: gold_docs are the top-3 evidence"
        assert len(set(c["gold_docs"])) == len(c["gold_docs"]), c["id"]
        if c["as_of"] is not None:
            dt.date.fromisoformat(c["as_of"])
        if c["expected_action"] in NO_EVIDENCE:
            assert c["gold_docs"] == [], f"{c['id']}: {c['expected_action']} cites nothing"
        else:
            assert c["gold_docs"], f"{c['id']}: {c['expected_action']} needs gold evidence"
        if c["expected_action"] == "answer_conflict":
            assert len(c["gold_docs"]) == 2, f"{c['id']}: [governing evidence, named source]"


def test_every_action_is_exercised(gold):
    assert {c["expected_action"] for c in gold} == ACTIONS


def test_gold_docs_exist_and_are_visible_to_the_role(gold, docs, policy):
    roles = {r for d in docs.values() for r in d.allowed_roles}
    for c in gold:
        assert c["role"] in roles, f"{c['id']}: unknown role {c['role']}"
        for doc_id in c["gold_docs"]:
            assert doc_id in docs, f"{c['id']}: gold doc {doc_id} is not in the corpus"
            assert _visible(docs[doc_id], c["role"], policy), f"{c['id']}: {c['role']} may not see {doc_id}"


def test_governing_gold_evidence_is_approved_and_in_effect(gold, docs):
    for c in gold:
        if c["expected_action"] not in ("answer", "answer_conflict") or not c["gold_docs"]:
            continue
        first = docs[c["gold_docs"][0]]
        assert first.status == Status.approved, f"{c['id']}: primary gold {first.doc_id} is {first.status.value}"
        if c["as_of"] is not None:
            assert first.in_effect(dt.date.fromisoformat(c["as_of"])), f"{c['id']}: {first.doc_id} not in effect"
        if c["expected_action"] == "answer_conflict":
            named = docs[c["gold_docs"][1]]
            assert named.doc_id != first.doc_id
            assert named.status != Status.approved or named.kind != first.kind


def test_human_review_cases_cite_overlapping_approved_revisions(gold, docs):
    for c in gold:
        if c["expected_action"] != "human_review":
            continue
        revs = [docs[i] for i in c["gold_docs"]]
        assert len(revs) >= 2 and len({d.object_id for d in revs}) == 1
        assert all(d.status == Status.approved for d in revs)
        day = dt.date.fromisoformat(c["as_of"])
        assert all(d.in_effect(day) for d in revs), f"{c['id']}: the revisions must overlap on {day}"


def test_deny_cases_target_something_the_role_cannot_see(gold, docs, policy):
    for c in gold:
        if c["expected_action"] != "deny":
            continue
        assert any(not _visible(d, c["role"], policy) for d in docs.values()), c["id"]
