"""The question-understanding gold set (tests/gold_understanding, issue 16): its corpus
passes the knowledge contract gate untouched, and gold_dev.json / gold_final.json are
well-formed against that corpus, cover every action and failure class, phrase every
intent at least three ways, and keep the final split apart from the dev split.

These are checks of the fixture itself, not of Canon's answers: `canon eval --corpus
tests/gold_understanding/corpus --gold tests/gold_understanding/gold_dev.json` grades
the answers. What is checked here would make a case meaningless if it broke (a gold
document that does not exist, that the role may not see, that is not in effect on the
case's date, or an intent whose phrasings expect different things)."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from canon.ask.understanding.match import normalize
from canon.ask.understanding.temporal import days_ago
from canon.core.dates import AmbiguousDate, find_date
from canon.models.documents import Status
from canon.registry.contracts import load_contract
from canon.registry.gate import gate
from canon.registry.policy import is_visible, load_policy
from canon.sources.corpus.reader import read_corpus

ROOT = Path(__file__).resolve().parents[1]
SET = ROOT / "tests" / "gold_understanding"
CORPUS = SET / "corpus"
SPLITS = {"dev": SET / "gold_dev.json", "final": SET / "gold_final.json"}
PREFIX = {"dev": "UD", "final": "UF"}
TODAY = dt.date(2026, 12, 1)

ACTIONS = {"answer", "answer_conflict", "clarify", "abstain", "deny", "calculate", "human_review"}
NO_EVIDENCE = {"clarify", "abstain", "deny"}
GOLD_KEYS = {"id", "question", "role", "as_of", "expected_action", "gold_docs", "gold_answer"}
# <split prefix>.<class>.<intent slug>.<phrasing number>: the README documents each class.
CASE_ID = re.compile(r"^(UD|UF)\.([a-z_]+)\.([a-z0-9_]+)\.([1-9])$")
# The failure classes issue 16 lists, each of which the dev split must exercise.
ISSUE_CLASSES = {"nonexistent", "draft_partial", "named_source", "stated_synonym", "description",
                 "freshness_source_table", "freshness_snapshot_time", "how_counted", "governance_contradiction",
                 "version_named", "comparison", "period", "relative_date", "name_intent_words"}
# Classes whose primary gold revision is chosen by the version named, not by as_of.
BY_VERSION = {"version_named", "comparison", "model_lineage", "version_relation"}


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
def gold() -> dict[str, list[dict]]:
    return {split: json.loads(path.read_text(encoding="utf-8")) for split, path in SPLITS.items()}


@pytest.fixture(scope="module")
def every_case(gold) -> list[dict]:
    return gold["dev"] + gold["final"]


def _visible(doc, role, policy) -> bool:
    return is_visible(policy, role, doc.doc_id, doc.object_id, doc.allowed_roles)


def _parts(case) -> tuple[str, str, str]:
    m = CASE_ID.match(case["id"])
    assert m, f"{case['id']}: ids are <UD|UF>.<class>.<intent>.<n>"
    return m[1], m[2], f"{m[2]}.{m[3]}"


def _day(case) -> dt.date | None:
    """The reporting date the case means: as_of, the day before it for 'yesterday', the day
    counted back from it for 'N weeks ago', the day an edge of a relative period is (its gold
    answer states it), else a full date written in the question (ISO, in words or numeric)."""
    _, cls, _ = _parts(case)
    if cls == "relative_period_edge":   # "the end of last quarter": its gold answer states the day
        return dt.date.fromisoformat(re.search(r"\bis (\d{4}-\d{2}-\d{2})", case["gold_answer"])[1])
    if case["as_of"] is not None:
        day = dt.date.fromisoformat(case["as_of"])
        if cls == "days_ago":   # "two weeks ago": counted back from the clock
            return days_ago(normalize(case["question"]), day)
        return day - dt.timedelta(days=1) if cls == "relative_date" else day
    try:
        day = find_date(case["question"])
    except AmbiguousDate:
        return None   # a clarify case: no one day is meant
    if cls == "date_relation" and day is not None:
        # "prior to 2026-04-01": the day before it; "after 2026-03-31": the day after it
        before = any(w in case["question"].lower() for w in ("before", "prior to", "pre-"))
        return day + dt.timedelta(days=-1 if before else 1)
    return day


# --- the corpus -------------------------------------------------------------------------
def test_corpus_passes_the_contract_gate(gated):
    assert gated.quarantine == [], [(q.source_uri, q.reasons) for q in gated.quarantine]
    assert gated.collapsed == []
    assert len(gated.documents) >= 70


def test_corpus_uses_markdown_and_jsonl_over_four_new_domains(gated):
    suffixes = {Path(d.source_uri.split("#")[0]).suffix for d in gated.documents}
    assert {".md", ".jsonl"} <= suffixes
    domains = {d.object_id.split(".")[1] for d in gated.documents if d.kind == "metric_definition"}
    assert domains == {"logistics", "product", "support", "people"}
    # Not the dossier's finance domain, not the hard set's.
    assert not domains & {"finance", "saas", "retail", "marketplace"}


def test_policy_has_a_revision_and_every_revoke_rule_bites(docs, policy):
    assert policy.revision and policy.revision != "none"
    assert {bool(r.doc_id) for r in policy.revoke} == {True, False}, "one doc_id rule, one object_id rule"
    for rule in policy.revoke:
        hit = [d for d in docs.values() if rule.role in d.allowed_roles
               and rule.matches(rule.role, d.doc_id, d.object_id)]
        assert hit, f"revoke rule {rule} matches no document its role could otherwise read"


def test_supersedes_points_at_existing_revisions_of_the_same_object(docs):
    for d in docs.values():
        if d.supersedes:
            assert d.supersedes in docs, f"{d.doc_id} supersedes unknown {d.supersedes}"
            assert docs[d.supersedes].object_id == d.object_id


def _by_object(docs) -> dict[str, list]:
    out: dict[str, list] = {}
    for d in docs.values():
        out.setdefault(d.object_id, []).append(d)
    return out


def test_the_planted_difficulties_are_present(docs):
    by_object = _by_object(docs)
    approved = {oid: [d for d in revs if d.status == Status.approved] for oid, revs in by_object.items()}
    # One metric name in two domains.
    names: dict[str, set[str]] = {}
    for oid in by_object:
        if oid.startswith("metric."):
            names.setdefault(oid.split(".")[-1], set()).add(oid.split(".")[1])
    assert any(len(domains) > 1 for domains in names.values())
    # Two approved revisions overlapping in business time.
    def overlap(a, b):
        return a.valid_from < (b.valid_to or dt.date.max) and b.valid_from < (a.valid_to or dt.date.max)
    assert any(overlap(a, b) for revs in approved.values() for a in revs for b in revs if a.doc_id < b.doc_id)
    # Two approved revisions that supersede each other, and an earlier one superseding a later one.
    cycles = [(a, b) for revs in approved.values() for a in revs for b in revs
              if a.supersedes == b.doc_id and b.supersedes == a.doc_id]
    assert cycles and not any(overlap(a, b) for a, b in cycles), "the cycle is the only contradiction"
    assert any(d.supersedes and docs[d.supersedes].valid_from > d.valid_from and docs[d.supersedes].supersedes is None
               for revs in approved.values() for d in revs)
    # A draft whose declared name contains an approved metric's whole name.
    governed = {oid.split(".")[-1].replace("_", " ") for oid, revs in approved.items()
                if oid.startswith("metric.") and revs}
    draft_names = {str(a).lower().replace("-", " ") for d in docs.values() if d.status == Status.draft
                   for a in d.metadata.get("aliases", [])}
    assert sum(any(g in n and g != n for g in governed) for n in draft_names) >= 3
    # Synonyms stated only in an approved definition's text, never as aliases.
    stated = [d for d in docs.values() if d.status == Status.approved and d.kind == "metric_definition"
              and re.search(r"\b(also called|also known as|sometimes called)\b", d.text)]
    assert len(stated) >= 4
    for d in stated:
        synonym = re.search(r"(?:also called|also known as|sometimes called) (?:the )?([a-z ]+?)[,.]", d.text)[1]
        assert synonym not in {str(a).lower() for a in d.metadata.get("aliases", [])}, d.doc_id
    kinds = {d.kind for d in docs.values()}
    assert {"metric_definition", "model_schema", "lineage", "freshness_snapshot", "wiki", "runbook", "policy",
            "restricted_memo", "untrusted_note"} <= kinds
    assert {d.status for d in docs.values()} == set(Status)


def test_lineage_and_freshness_documents_use_the_contract_forms(docs):
    assert all(" -> " in d.text for d in docs.values() if d.kind == "lineage")
    snaps = [d for d in docs.values() if d.kind == "freshness_snapshot"]
    sentence = [d for d in snaps if d.text.startswith("Observed at ") and "max_loaded_at" in d.text and "SLA" in d.text]
    structured = [d for d in snaps if d.metadata.get("observations") and d.metadata.get("observed_at")]
    assert sentence and structured and len(sentence) + len(structured) == len(snaps)
    # Two snapshots of one day, so naming a snapshot by its time matters.
    days = Counter((d.object_id, d.valid_from) for d in snaps)
    assert sum(n >= 2 for n in days.values()) >= 2


# --- the gold files ---------------------------------------------------------------------
@pytest.mark.parametrize("split", SPLITS)
def test_gold_is_well_formed(gold, split):
    cases = gold[split]
    assert isinstance(cases, list) and cases
    for c in cases:
        assert set(c) == GOLD_KEYS, c["id"]
        prefix, _, _ = _parts(c)
        assert prefix == PREFIX[split], f"{c['id']} is in {split}"
        assert c["expected_action"] in ACTIONS, c["id"]
        assert isinstance(c["question"], str) and c["question"].strip(), c["id"]
        assert isinstance(c["role"], str) and c["role"], c["id"]
        assert isinstance(c["gold_docs"], list) and len(c["gold_docs"]) <= 3, f"{c['id']}: top-3 evidence"
        assert len(set(c["gold_docs"])) == len(c["gold_docs"]), c["id"]
        assert c["gold_answer"].strip(), c["id"]
        if c["as_of"] is not None:
            dt.date.fromisoformat(c["as_of"])
        if c["expected_action"] in NO_EVIDENCE:
            assert c["gold_docs"] == [], f"{c['id']}: {c['expected_action']} cites nothing"
        else:
            assert c["gold_docs"], f"{c['id']}: {c['expected_action']} needs gold evidence"
        if c["expected_action"] == "answer_conflict":
            assert len(c["gold_docs"]) == 2, f"{c['id']}: [governing evidence, named source]"


def test_size_and_a_quarter_kept_final(gold, every_case):
    assert len(every_case) >= 200
    ids = [c["id"] for c in every_case]
    assert len(ids) == len(set(ids)), "duplicate case ids"
    share = len(gold["final"]) / len(every_case)
    # A quarter kept final (issue 16): a class added to the dev split gets final cases of its own,
    # written beside it and never tuned on.
    assert 0.24 <= share <= 0.30, f"the final split is {share:.0%} of the set"


@pytest.mark.parametrize("split", SPLITS)
def test_every_action_is_exercised_in_each_split(gold, split):
    assert {c["expected_action"] for c in gold[split]} == ACTIONS


def test_the_issue_failure_classes_are_exercised(gold):
    dev = {_parts(c)[1] for c in gold["dev"]}
    final = {_parts(c)[1] for c in gold["final"]}
    assert ISSUE_CLASSES <= dev, ISSUE_CLASSES - dev
    assert len(ISSUE_CLASSES & final) >= 10, ISSUE_CLASSES - final


def test_every_intent_is_phrased_at_least_three_ways_and_agrees_on_what_it_expects(every_case):
    intents: dict[str, list[dict]] = {}
    for c in every_case:
        intents.setdefault(_parts(c)[2], []).append(c)
    for name, cases in intents.items():
        assert len(cases) >= 3, f"{name}: {len(cases)} phrasings"
        norm = {re.sub(r"\W+", " ", c["question"].lower()).strip() for c in cases}
        assert len(norm) == len(cases), f"{name}: two phrasings are the same question"
        for key in ("role", "expected_action", "gold_docs", "gold_answer"):
            assert len({json.dumps(c[key]) for c in cases}) == 1, f"{name}: phrasings disagree on {key}"


def test_final_split_is_disjoint_from_dev(gold):
    def norm(q):
        return re.sub(r"\W+", " ", q.lower()).strip()
    dev_q = {norm(c["question"]) for c in gold["dev"]}
    dev_intents = {_parts(c)[2] for c in gold["dev"]}
    for c in gold["final"]:
        assert norm(c["question"]) not in dev_q, f"{c['id']} repeats a dev question"
        assert _parts(c)[2] not in dev_intents, f"{c['id']} repeats a dev intent"


def test_gold_docs_exist_and_are_visible_to_the_role(every_case, docs, policy):
    roles = {r for d in docs.values() for r in d.allowed_roles}
    for c in every_case:
        assert c["role"] in roles, f"{c['id']}: unknown role {c['role']}"
        for doc_id in c["gold_docs"]:
            assert doc_id in docs, f"{c['id']}: gold doc {doc_id} is not in the corpus"
            assert _visible(docs[doc_id], c["role"], policy), f"{c['id']}: {c['role']} may not see {doc_id}"


def test_governing_gold_evidence_is_approved_and_in_effect(every_case, docs):
    for c in every_case:
        if c["expected_action"] not in ("answer", "answer_conflict"):
            continue
        first = docs[c["gold_docs"][0]]
        assert first.status == Status.approved, f"{c['id']}: primary gold {first.doc_id} is {first.status.value}"
        day = _day(c)
        if day is not None and _parts(c)[1] not in BY_VERSION:
            assert first.in_effect(day), f"{c['id']}: {first.doc_id} not in effect on {day}"
        if c["expected_action"] == "answer_conflict":
            named = docs[c["gold_docs"][1]]
            assert named.doc_id != first.doc_id
            assert named.status != Status.approved, f"{c['id']}: the named source is not authoritative"


def test_calculate_cases_cite_a_snapshot_in_effect_on_the_date(every_case, docs):
    for c in every_case:
        if c["expected_action"] != "calculate":
            continue
        snap = docs[c["gold_docs"][0]]
        assert snap.kind == "freshness_snapshot" and snap.status == Status.observed, c["id"]
        day = _day(c)
        assert day is not None and snap.in_effect(day), f"{c['id']}: {snap.doc_id} not in effect on {day}"


def test_human_review_cases_cite_contradicting_approved_revisions(every_case, docs):
    for c in every_case:
        if c["expected_action"] != "human_review":
            continue
        revs = [docs[i] for i in c["gold_docs"]]
        assert len(revs) >= 2 and len({d.object_id for d in revs}) == 1, c["id"]
        assert all(d.status == Status.approved for d in revs), c["id"]
        day = _day(c)
        overlapping = day is not None and all(d.in_effect(day) for d in revs)
        ids = {d.doc_id for d in revs}
        contradicting = any(d.supersedes in ids and docs[d.supersedes].valid_from > d.valid_from for d in revs) or \
            any(d.supersedes in ids and docs[d.supersedes].supersedes == d.doc_id for d in revs)
        assert overlapping or contradicting, f"{c['id']}: neither an overlap on {day} nor a supersedes contradiction"


def test_deny_cases_target_something_the_role_cannot_see(every_case, docs, policy):
    for c in every_case:
        if c["expected_action"] == "deny":
            assert any(not _visible(d, c["role"], policy) for d in docs.values()), c["id"]
        if _parts(c)[1] == "deny_hidden_revision":
            # The governing revision is hidden while an older one of the same object is visible.
            day = _day(c)
            governing = [d for d in docs.values() if d.status == Status.approved and d.in_effect(day)
                         and d.kind == "metric_definition" and not _visible(d, c["role"], policy)]
            assert governing and any(_visible(o, c["role"], policy) for o in docs.values()
                                     if o.object_id == governing[0].object_id), c["id"]
