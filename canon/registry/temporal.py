"""Exact effective-time resolution: business time is half-open
(valid_from <= day < valid_to, valid_to NULL = open). Similarity never enters here."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from itertools import combinations
from typing import Iterable, Literal

from canon.models.documents import Document, Status

Outcome = Literal["unique", "none", "overlap", "needs_date", "single"]


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
    """
    revs = sorted(approved(revisions), key=lambda d: (d.valid_from, d.doc_id))
    if not revs:
        return TemporalResult("none")
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
