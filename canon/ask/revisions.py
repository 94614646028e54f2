"""Choosing the revision of a governed object when the question names it or a
period rather than one reporting date (docs/design.md, "Versions, periods and
comparisons"): a named version ("v2", "the first version", "the previous
definition") selects that revision, shown with its validity; a period one
revision governs is answered with it, one spanning a change is a `clarify`
listing each revision with its sub-period; a comparison cites both revisions
and the sentences each states that the other does not.

Authorization is decided as in canon/ask/resolve.py: over every revision, so a
hidden revision is denied, never replaced by a visible one."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from canon.ask.resolve import DENY_TEXT, claims_of, resolve_object, sentences
from canon.ask.understanding.temporal import VersionRef
from canon.models.documents import Document, Status
from canon.models.responses import Claim, Evidence, Response
from canon.registry.policy import Policy, visible
from canon.registry.temporal import period_label


@dataclass
class Selection:
    """The chosen revision and the words that say why, or the response that replaces an answer."""

    chosen: Document | None = None
    day: dt.date | None = None        # the reporting date the answer states (None: selected by version)
    note: str = ""
    response: Response | None = None


def approved_revisions(revisions: list[Document]) -> list[Document]:
    return sorted((d for d in revisions if d.status == Status.approved), key=lambda d: (d.valid_from, d.doc_id))


def _version_key(v: str) -> str:
    v = str(v).strip().lower().lstrip("v")
    return v[:-2] if v.endswith(".0") else v


def date_options(docs: list[Document], spans: dict[str, tuple[dt.date, dt.date]] | None = None) -> list[dict]:
    """The date clarification's option shape (docs/contracts.md), plus the sub-period a revision governs."""
    out = []
    for d in docs:
        o = {"evidence_id": d.doc_id, "version": d.version, "valid_from": d.valid_from.isoformat(),
             "valid_to": d.valid_to.isoformat() if d.valid_to else None, "period": period_label(d), "title": d.title}
        if spans and d.doc_id in spans:
            a, b = spans[d.doc_id]
            o["applies_from"], o["applies_to"] = a.isoformat(), b.isoformat()
        out.append(o)
    return out


def pick(revisions: list[Document], ref: VersionRef, clock: dt.date) -> tuple[Document | None, str]:
    """The revision `ref` names and how it was found; None when no revision is so named."""
    approved = approved_revisions(revisions)
    if ref.day is not None:
        governing = [d for d in approved if d.in_effect(ref.day)]
        return (governing[-1] if governing else None), f"the revision in effect on {ref.day.isoformat()}"
    if ref.number is not None and ref.step:
        side = "before" if ref.step < 0 else "after"
        how = f"the approved revision {side} version {ref.number}"
        named = [d for d in approved if _version_key(d.version) == ref.number]
        if not named:
            return None, how
        i = approved.index(named[0]) + ref.step
        return (approved[i] if 0 <= i < len(approved) else None), how
    if ref.number is not None:
        named = [d for d in revisions if _version_key(d.version) == ref.number]
        named.sort(key=lambda d: (d.status != Status.approved, d.valid_from, d.doc_id))
        return (named[0] if named else None), f"version {ref.number}"
    if ref.ordinal is not None:
        words = {1: "first", 2: "second", 3: "third"}
        return (approved[ref.ordinal - 1] if len(approved) >= ref.ordinal else None), \
            f"the {words.get(ref.ordinal, ref.ordinal)} approved revision"
    if ref.relative == "latest":
        return (approved[-1] if approved else None), "the latest approved revision"
    # "current" and "previous" count from the revision governing the clock's day
    # (or, past the last one's end, the last to have started).
    started = [d for d in approved if d.valid_from <= clock]
    current = next((d for d in reversed(started) if d.in_effect(clock)), started[-1] if started else None)
    if ref.relative == "current":
        return current, f"the revision in effect on {clock.isoformat()}"
    if current is None:
        return None, f"the revision before the one in effect on {clock.isoformat()}"
    before = [d for d in approved if d.valid_from < current.valid_from]
    return (before[-1] if before else None), f"the revision before the one in effect on {clock.isoformat()}"


def _authorized(revisions: list[Document], doc: Document, role: str, policy: Policy) -> Response | None:
    if not visible(doc, role, policy) or not any(visible(d, role, policy) for d in revisions):
        return Response(action="deny", role=role, answer=DENY_TEXT, reason="not_authorized")
    return None


def by_version(revisions: list[Document], concept: str, refs: tuple[VersionRef, ...], clock: dt.date,
               role: str, policy: Policy) -> Selection:
    """The one revision the question names."""
    ref = refs[0]
    if ref.relative == "current":
        res = resolve_object(revisions, concept, clock, role, policy)
        if res.response is not None:
            return Selection(response=res.response)
        return Selection(res.chosen, clock, f"The revision in effect on {clock.isoformat()}:")
    doc, how = pick(revisions, ref, clock)
    if doc is None:
        approved = approved_revisions(revisions)
        if not any(visible(d, role, policy) for d in revisions):
            return Selection(response=Response(action="deny", role=role, answer=DENY_TEXT, reason="not_authorized"))
        return Selection(response=Response(
            action="clarify", role=role, reason="version_not_found", options=date_options(approved),
            answer=f"{concept} has no {how.removeprefix('the ')}; its approved revisions are "
                   + ", ".join(f"version {d.version} ({period_label(d)})" for d in approved) + ". Which one do you mean?"))
    denied = _authorized(revisions, doc, role, policy)
    if denied is not None:
        return Selection(response=denied)
    if doc.status != Status.approved:
        return Selection(response=Response(
            action="abstain", role=role, reason="no_approved_revision",
            answer=f"{how.capitalize()} of {concept} is {doc.status.value} text ({doc.doc_id}), never authoritative.",
            evidence=[Evidence.of(doc, "conflict")]))
    return Selection(doc, None, f"You asked for {how} of {concept}: {doc.doc_id}, valid {period_label(doc)}.")


def governing_spans(revisions: list[Document], concept: str, period: tuple[dt.date, dt.date], role: str,
                    policy: Policy) -> list[tuple[Document | None, dt.date, dt.date]] | Response:
    """The period cut where the governing revision changes: (revision or None, start, end) in order,
    or the deny / human_review that one of its days resolves to."""
    start, end = period
    # The days the governing revision can change on inside the period.
    cuts = sorted({start} | {d for r in approved_revisions(revisions) for d in (r.valid_from, r.valid_to)
                             if d is not None and start < d < end})
    spans: list[tuple[Document | None, dt.date, dt.date]] = []
    for i, a in enumerate(cuts):
        b = cuts[i + 1] if i + 1 < len(cuts) else end
        res = resolve_object(revisions, concept, a, role, policy)
        if res.response is not None and res.response.action in ("deny", "human_review"):
            res.response.as_of = a
            return res.response
        chosen = res.chosen
        if spans and spans[-1][0] is chosen:
            spans[-1] = (chosen, spans[-1][1], b)
        else:
            spans.append((chosen, a, b))
    return spans


def over_period(revisions: list[Document], concept: str, period: tuple[dt.date, dt.date], label: str,
                role: str, policy: Policy) -> Selection:
    """The revision that governs the whole period, or a clarification listing each revision with its sub-period."""
    start, end = period
    spans = governing_spans(revisions, concept, period, role, policy)
    if isinstance(spans, Response):
        return Selection(response=spans)
    governing = [s for s in spans if s[0] is not None]
    if not governing:
        res = resolve_object(revisions, concept, end - dt.timedelta(days=1), role, policy)
        return Selection(response=res.response)
    last = end - dt.timedelta(days=1)
    text = f"{label} ({start.isoformat()} to {last.isoformat()})"
    if len(governing) == 1:
        doc, a, b = governing[0]
        part = "" if (a, b) == (start, end) else (
            f" It governs only {a.isoformat()} <= date < {b.isoformat()} of it; no approved revision governs the rest.")
        return Selection(doc, min(last, b - dt.timedelta(days=1)),
                         f"One governed revision applies over {text}: {doc.doc_id}.{part}")
    docs = [s[0] for s in governing]
    sub = {d.doc_id: (a, b) for d, a, b in governing}
    return Selection(response=Response(
        action="clarify", role=role, reason="period_spans_change", options=date_options(docs, sub),
        answer=f"The governed definition of {concept} changes within {text}: "
               + "; ".join(f"{d.doc_id} (version {d.version}) governs {a.isoformat()} <= date < {b.isoformat()}"
                           for d, a, b in governing) + ". Which part of the period do you need?"))


def compare(revisions: list[Document], concept: str, refs: tuple[VersionRef, ...], clock: dt.date,
            role: str, policy: Policy) -> Response:
    """Both revisions as evidence, older first, with the sentences only one of them states."""
    refs = refs if len(refs) >= 2 else (VersionRef(relative="previous"), VersionRef(relative="current"))
    picked = []
    for ref in refs[:2]:
        doc, how = pick(revisions, ref, clock)
        if doc is None or doc.status != Status.approved:
            sel = by_version(revisions, concept, (ref,), clock, role, policy)
            return sel.response or Response(action="clarify", role=role, reason="version_not_found",
                                            options=date_options(approved_revisions(revisions)),
                                            answer=f"{concept} has no approved {how} to compare.")
        denied = _authorized(revisions, doc, role, policy)
        if denied is not None:
            return denied
        picked.append(doc)
    old, new = sorted(picked, key=lambda d: (d.valid_from, d.doc_id))
    if old.doc_id == new.doc_id:
        return Response(action="clarify", role=role, reason="version_not_found", options=date_options(approved_revisions(revisions)),
                        answer=f"Both revisions named are {old.doc_id}; which two revisions of {concept} do you mean?")
    old_s, new_s = sentences(old.text), sentences(new.text)
    removed = [s for s in old_s if s not in new_s]
    added = [s for s in new_s if s not in old_s]
    claims: list[Claim] = claims_of(old, None) + claims_of(new, None)

    def side(d: Document) -> dict:
        return {"doc_id": d.doc_id, "version": d.version, "valid_from": d.valid_from.isoformat(),
                "valid_to": d.valid_to.isoformat() if d.valid_to else None, "period": period_label(d)}

    answer = (f"{concept} changed from {old.doc_id} (version {old.version}, {period_label(old)}) to {new.doc_id} "
              f"(version {new.version}, {period_label(new)}). Version {old.version} stated: {' '.join(removed) or '(nothing the newer one drops)'} "
              f"Version {new.version} states: {' '.join(added) or '(nothing new)'}")
    return Response(action="answer", role=role, answer=answer, claims=claims,
                    evidence=[Evidence.of(old, "primary"), Evidence.of(new, "primary")],
                    comparison={"object_id": concept, "from": side(old), "to": side(new),
                                "only_in_from": removed, "only_in_to": added,
                                "in_both": [s for s in old_s if s in new_s]})

