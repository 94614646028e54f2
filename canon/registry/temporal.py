"""Exact effective-time resolution: business time is half-open
(valid_from <= day < valid_to, valid_to NULL = open). Similarity never enters here."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from itertools import combinations
from typing import Iterable, Literal

from canon.models.documents import Document, Status

Outcome = Literal["unique", "none", "overlap", "needs_date", "single", "contradiction"]


def intervals_overlap(a: Document, b: Document) -> bool:
    a_end = a.valid_to or dt.date.max
    b_end = b.valid_to or dt.date.max
    return a.valid_from < b_end and b.valid_from < a_end


def approved(docs: Iterable[Document]) -> list[Document]:
    return [d for d in docs if d.status == Status.approved]


def overlapping_pairs(docs: Iterable[Document]) -> list[tuple[Document, Document]]:
    """Approved revisions of one object that overlap in business time."""
    by_object: dict[str, list[Document]] = {}
    for d in approved(docs):
        by_object.setdefault(d.object_id, []).append(d)
    pairs = []
    for revs in by_object.values():
        for a, b in combinations(sorted(revs, key=lambda d: (d.valid_from, d.doc_id)), 2):
            if intervals_overlap(a, b):
                pairs.append((a, b))
    return pairs


def supersedes_contradictions(docs: Iterable[Document]) -> list[tuple[Document, Document, str]]:
    """Approved revisions whose `supersedes` claims cannot all be true, as (claimant, target, why):

    - a cycle: following `supersedes` from an approved revision comes back to it (two revisions
      that each claim to supersede the other, or a longer loop); the pair is the claimant and
      its target, one pair per edge of the cycle;
    - an inversion: an approved revision claims to supersede one that starts after it does
      (what is replaced must come first).

    Either way the governance record contradicts itself, so which revision governs is a person's
    decision, not the calendar's. `supersedes` is followed only within the given documents
    (one object's revisions, or the registry)."""
    by_id = {d.doc_id: d for d in docs}
    found: dict[tuple[str, str], tuple[Document, Document, str]] = {}
    for d in sorted(approved(by_id.values()), key=lambda d: d.doc_id):
        target = by_id.get(d.supersedes or "")
        if target is None or target.doc_id == d.doc_id:
            continue
        seen, cur = {d.doc_id}, target
        while cur is not None and cur.doc_id not in seen:
            seen.add(cur.doc_id)
            cur = by_id.get(cur.supersedes or "")
        if cur is not None and cur.doc_id == d.doc_id:
            found.setdefault((d.doc_id, target.doc_id), (d, target, "supersedes_cycle"))
        elif target.valid_from > d.valid_from:
            found.setdefault((d.doc_id, target.doc_id), (d, target, "supersedes_later_revision"))
    return [found[k] for k in sorted(found)]


def _contradicted(revisions: list[Document], day: dt.date | None) -> list[Document]:
    """The revisions in a supersedes contradiction that bear on `day`: every revision of a
    contradicting pair when either of them governs that day (any day when none is given)."""
    hit: dict[str, Document] = {}
    for a, b, _ in supersedes_contradictions(revisions):
        pair = [x for x in (a, b) if x.status == Status.approved] or [a]
        if day is None or any(x.in_effect(day) for x in pair):
            hit.update({a.doc_id: a, b.doc_id: b})
    return sorted(hit.values(), key=lambda d: d.doc_id)


@dataclass
class TemporalResult:
    outcome: Outcome
    chosen: Document | None = None
    candidates: list[Document] = field(default_factory=list)


def resolve_revision(revisions: Iterable[Document], day: dt.date | None) -> TemporalResult:
    """Pick the unique approved revision of one object for `day`.

    - no approved revision at all            -> none
    - no day and the definition changed       -> needs_date (the caller clarifies)
    - no day and one approved revision        -> single
    - day given: exactly one in effect        -> unique; none in effect -> none; several -> overlap
    - a supersedes contradiction bearing on the day (any, with no day) -> contradiction,
      before anything else: the calendar cannot settle what the governance record contradicts
    """
    revisions = list(revisions)
    revs = sorted(approved(revisions), key=lambda d: (d.valid_from, d.doc_id))
    if not revs:
        return TemporalResult("none")
    contradicted = _contradicted(revisions, day)
    if contradicted:
        return TemporalResult("contradiction", None, contradicted)
    if day is None:
        if len(revs) == 1:
            return TemporalResult("single", revs[0], revs)
        overlapping = [d for pair in overlapping_pairs(revs) for d in pair]
        if overlapping:
            unique = {d.doc_id: d for d in overlapping}  # documents are not hashable: dedupe by id
            return TemporalResult("overlap", None, sorted(unique.values(), key=lambda d: d.doc_id))
        return TemporalResult("needs_date", None, revs)
    in_effect = [d for d in revs if d.in_effect(day)]
    if len(in_effect) == 1:
        return TemporalResult("unique", in_effect[0], in_effect)
    if not in_effect:
        return TemporalResult("none", None, [])
    return TemporalResult("overlap", None, in_effect)


def period_label(doc: Document) -> str:
    end = doc.valid_to.isoformat() if doc.valid_to else "open"
    return f"{doc.valid_from.isoformat()} <= date < {end}"
