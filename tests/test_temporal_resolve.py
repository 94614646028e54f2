"""Exact effective-time resolution and the resolve command's actions, on the
dossier gold set's documents (docs/design.md; half-open business time, approved beats everything)."""

from __future__ import annotations

import datetime as dt

import pytest

from canon.ask.resolve import resolve
from canon.core.errors import CanonInputError
from canon.models.documents import Document
from canon.registry.policy import Policy, RevokeRule, load_policy
from canon.registry.temporal import overlapping_pairs, resolve_revision

D = dt.date.fromisoformat
NET = "metric.finance.net_revenue"


def _rev(doc: Document, **changes) -> Document:
    return doc.model_copy(update=changes)


@pytest.mark.parametrize("day, expected", [
    ("2025-01-01", "metric.net_revenue.v1"),
    ("2026-06-30", "metric.net_revenue.v1"),
    ("2026-07-01", "metric.net_revenue.v2"),  # valid_from inclusive, v1 valid_to exclusive
    ("2026-08-31", "metric.net_revenue.v2"),
    ("2030-01-01", "metric.net_revenue.v2"),  # open interval
])
def test_half_open_resolution(dossier_docs, day, expected):
    resp = resolve(dossier_docs, NET, D(day), "analyst", Policy())
    assert resp.action == "answer"
    assert [e.doc_id for e in resp.evidence] == [expected]
    assert resp.evidence[0].use == "primary"
    assert resp.claims and all(c.evidence_id == expected for c in resp.claims)


def test_before_first_revision_abstains(dossier_docs):
    resp = resolve(dossier_docs, NET, D("2024-12-31"), "analyst", Policy())
    assert resp.action == "abstain"
    assert resp.evidence == []


def test_no_date_and_changed_definition_clarifies(dossier_docs):
    resp = resolve(dossier_docs, NET, None, "analyst", Policy())
    assert resp.action == "clarify"
    assert [o["evidence_id"] for o in resp.options] == ["metric.net_revenue.v1", "metric.net_revenue.v2"]
    assert "2026-07-01" in resp.answer


def test_draft_never_answers(dossier_docs):
    resp = resolve(dossier_docs, "metric.finance.gross_margin", D("2026-10-10"), "analyst", Policy())
    assert resp.action == "abstain"
    assert resp.evidence == []


def test_prerelease_draft_numerically_later_is_ignored(dossier_docs):
    # v3 draft is in effect from 2026-10-01 but is not approved: v2 still governs.
    resp = resolve(dossier_docs, NET, D("2026-11-15"), "analyst", Policy())
    assert [e.doc_id for e in resp.evidence] == ["metric.net_revenue.v2"]


def test_restricted_memo_denied_without_leak(dossier_docs):
    resp = resolve(dossier_docs, "memo.finance.rebate_reserve", D("2026-10-10"), "analyst", Policy())
    assert resp.action == "deny"
    dumped = resp.model_dump_json()
    assert "rebate_reserve.q4" not in dumped and "7.5" not in dumped and "Q4 rebate" not in dumped
    ok = resolve(dossier_docs, "memo.finance.rebate_reserve", D("2026-10-10"), "finance_controller", Policy())
    assert ok.action == "answer" and ok.evidence[0].doc_id == "memo.rebate_reserve.q4_2026"


def test_live_revocation_denies_the_hidden_authoritative_revision(dossier_docs):
    policy = Policy(revision="r2", revoke=[RevokeRule(role="analyst", doc_id="metric.net_revenue.v2")])
    # v2 governs 2026-08-31: revoking it must deny, never fall back to the visible v1.
    resp = resolve(dossier_docs, NET, D("2026-08-31"), "analyst", policy)
    assert resp.action == "deny"
    assert "net_revenue.v2" not in resp.model_dump_json()
    assert resp.policy_revision == "r2"
    # v1's period is unaffected.
    assert resolve(dossier_docs, NET, D("2026-06-30"), "analyst", policy).action == "answer"


def test_overlapping_approved_revisions_need_human_review(dossier_docs):
    v1 = next(d for d in dossier_docs if d.doc_id == "metric.net_revenue.v1")
    clash = _rev(v1, doc_id="metric.net_revenue.v1b", valid_from=D("2026-06-01"), valid_to=D("2026-09-01"))
    docs = dossier_docs + [clash]
    assert overlapping_pairs(docs)
    resp = resolve(docs, NET, D("2026-08-31"), "analyst", Policy())
    assert resp.action == "human_review"
    assert {e.doc_id for e in resp.evidence} == {"metric.net_revenue.v2", "metric.net_revenue.v1b"}
    assert resolve(docs, NET, D("2026-01-15"), "analyst", Policy()).action == "answer"


def test_single_approved_revision_needs_no_date(dossier_docs):
    result = resolve_revision([d for d in dossier_docs if d.object_id == "memo.finance.rebate_reserve"], None)
    assert result.outcome == "single"


def test_policy_file_errors_name_the_file(tmp_path):
    bad = tmp_path / "policy.yml"
    bad.write_text("revision: r1\nrevoke:\n  - role: analyst\n")
    with pytest.raises(CanonInputError) as err:
        load_policy(bad)
    assert "policy.yml" in str(err.value) and "doc_id or object_id" in str(err.value)
    bad.write_text("revision: [unclosed\n")
    with pytest.raises(CanonInputError, match="not valid YAML"):
        load_policy(bad)
    good = tmp_path / "p2.yml"
    good.write_text("revision: 2026-11-20T10:00:00Z\nrevoke:\n  - role: fin*\n    object_id: 'memo.*'\n")
    policy = load_policy(good)
    assert policy.revoke[0].matches("finance_controller", "memo.x", "memo.finance.x")
    assert not policy.revoke[0].matches("analyst", "memo.x", "memo.finance.x")
    assert load_policy(tmp_path / "missing.yml").revision == "none"


def test_a_revision_in_two_overlaps_is_listed_once_without_a_date(dossier_docs):
    """v1b overlaps both v1 and v2: it appears in two pairs (documents are not hashable)."""
    v1 = next(d for d in dossier_docs if d.doc_id == "metric.net_revenue.v1")
    clash = _rev(v1, doc_id="metric.net_revenue.v1b", valid_from=D("2026-06-01"), valid_to=D("2026-09-01"))
    docs = [d for d in dossier_docs if d.object_id == NET] + [clash]
    out = resolve_revision(docs, None)
    assert out.outcome == "overlap"
    ids = [d.doc_id for d in out.candidates]
    assert len(ids) == len(set(ids)) and "metric.net_revenue.v1b" in ids
