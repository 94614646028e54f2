"""`canon resolve` and `canon lineage`: exact effective-time resolution of one
governed object, with authorization decided on the full truth before anything
about the object is shown."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Callable

import duckdb

from canon.models.documents import Document
from canon.models.responses import Claim, Evidence, LineageEdge, LineageGraph, Response
from canon.registry.graph import Subgraph, downstream, has_dbt_tables, upstream
from canon.registry.policy import Policy, visible, visible_docs
from canon.registry.temporal import TemporalResult, period_label, resolve_revision

DENY_TEXT = "You are not authorized to see the evidence this question needs. Nothing about it can be shown."
# The live policy could not be read (canon/registry/live_policy.py): nothing is shown to anyone.
POLICY_UNAVAILABLE_TEXT = ("The access policy is unavailable (unreadable, invalid or missing), so nothing can be "
                           "shown until a valid policy is back.")


def policy_unavailable(role: str, day: dt.date | None, policy: Policy, question: str = "") -> Response:
    """The deny every query answers while the live policy is unavailable: no document, no id, no count."""
    return Response(action="deny", question=question, role=role, as_of=day, answer=POLICY_UNAVAILABLE_TEXT,
                    reason="policy_unavailable", policy_revision=policy.revision)

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def claims_of(doc: Document, day: dt.date | None, limit: int = 6) -> list[Claim]:
    """One claim per sentence of the evidence body: the supported span *is* the sentence."""
    return [
        Claim(claim=s, evidence_id=doc.doc_id, evidence_revision=doc.content_hash, supported_span=s, effective_for=day)
        for s in sentences(doc.text)[:limit]
    ]


@dataclass
class ObjectResolution:
    """The outcome of resolving one object; `response` is filled for every non-answer."""

    temporal: TemporalResult
    chosen: Document | None
    response: Response | None


def resolve_object(
    docs: list[Document], object_id: str, day: dt.date | None, role: str, policy: Policy, *, question: str = ""
) -> ObjectResolution:
    if not policy.available:
        return ObjectResolution(TemporalResult("none"), None, policy_unavailable(role, day, policy, question))
    revisions = [d for d in docs if d.object_id == object_id]
    base = dict(question=question, role=role, as_of=day, policy_revision=policy.revision)
    if not revisions:
        return ObjectResolution(TemporalResult("none"), None, Response(
            action="abstain", answer=f"No evidence is registered for {object_id}.", reason="unknown_object", **base))
    shown = visible_docs(revisions, role, policy)
    if not shown:
        return ObjectResolution(TemporalResult("none"), None, Response(action="deny", answer=DENY_TEXT, reason="not_authorized", **base))
    # Temporal truth is decided over every revision, so a hidden authoritative
    # revision is never silently replaced by a visible older one.
    result = resolve_revision(revisions, day)
    if result.chosen is not None:
        if not visible(result.chosen, role, policy):
            return ObjectResolution(result, None, Response(action="deny", answer=DENY_TEXT, reason="not_authorized", **base))
        return ObjectResolution(result, result.chosen, None)
    hidden = [d for d in result.candidates if not visible(d, role, policy)]
    if hidden:
        return ObjectResolution(result, None, Response(action="deny", answer=DENY_TEXT, reason="not_authorized", **base))
    if result.outcome == "needs_date":
        changes = ", ".join(d.valid_from.isoformat() for d in result.candidates[1:])
        return ObjectResolution(result, None, Response(
            action="clarify",
            answer=f"The governed definition of {object_id} changed over time (on {changes}). "
                   "Which reporting date do you need?",
            options=[{"evidence_id": d.doc_id, "version": d.version, "valid_from": d.valid_from.isoformat(),
                      "valid_to": d.valid_to.isoformat() if d.valid_to else None,
                      "period": period_label(d), "title": d.title} for d in result.candidates],
            reason="date_required", **base))
    if result.outcome == "contradiction":
        ids = " and ".join(d.doc_id for d in result.candidates)
        return ObjectResolution(result, None, Response(
            action="human_review",
            answer=f"The supersedes records of {object_id} contradict each other ({ids}: a cycle, or an "
                   "approved revision claiming to supersede a later one); a person must decide which one governs.",
            evidence=[Evidence.of(d, "conflict") for d in result.candidates],
            reason="supersedes_contradiction", **base))
    if result.outcome == "overlap":
        return ObjectResolution(result, None, Response(
            action="human_review",
            answer=f"{len(result.candidates)} approved revisions of {object_id} overlap in business time; "
                   "a person must decide which one governs.",
            evidence=[Evidence.of(d, "conflict") for d in result.candidates],
            reason="approved_overlap", **base))
    approved_exists = any(d.status.value == "approved" for d in revisions)
    why = (f"No approved revision of {object_id} is in effect on {day}." if approved_exists and day
           else f"There is no approved revision of {object_id}; only "
                + ", ".join(sorted({d.status.value for d in shown})) + " text exists, which is never authoritative.")
    return ObjectResolution(result, None, Response(action="abstain", answer=why, reason="no_approved_revision", **base))


def answer_for(doc: Document, day: dt.date | None, role: str, policy: Policy, question: str = "") -> Response:
    when = f"For {day.isoformat()}, the" if day else "The"
    return Response(
        action="answer", question=question, role=role, as_of=day, policy_revision=policy.revision,
        answer=f"{when} applicable governed revision of {doc.object_id} is {doc.doc_id} "
               f"(version {doc.version}, {doc.status.value}, {period_label(doc)}). {doc.text}",
        evidence=[Evidence.of(doc, "primary")],
        claims=claims_of(doc, day),
    )


def resolve(docs: list[Document], object_id: str, day: dt.date | None, role: str, policy: Policy) -> Response:
    res = resolve_object(docs, object_id, day, role, policy)
    return res.response if res.response is not None else answer_for(res.chosen, day, role, policy)


def lineage(
    con: duckdb.DuckDBPyConnection, docs: list[Document], object_id: str, day: dt.date | None, role: str, policy: Policy,
    *, supporting: Callable[[list[str], str | None], list[Document]] | None = None,
) -> Response:
    """Resolve the governing revision, then walk the dbt graph from its node to the raw sources.
    `supporting(node_ids, lineage_doc_id)`: the documents of those dbt nodes and that lineage
    document, for a caller whose `docs` are only the object's revisions (`canon lineage`
    in a new process reads them from the registry, canon/cli/main.py)."""
    res = resolve_object(docs, object_id, day, role, policy)
    if res.response is not None:
        return res.response
    return lineage_of(con, res.chosen, docs, day, role, policy, supporting=supporting)


def lineage_of(
    con: duckdb.DuckDBPyConnection, doc: Document, docs: list[Document], day: dt.date | None, role: str,
    policy: Policy, *, supporting: Callable[[list[str], str | None], list[Document]] | None = None,
    down: bool = False,
) -> Response:
    """The dbt graph walked from `doc`'s node (a revision already chosen and authorized) to
    the raw sources: `lineage` after resolving, and `ask` for a lineage question about a model.
    `down`: walked the other way, to what is built from the node ("which models depend on X")."""
    start = doc.metadata.get("dbt_unique_id")
    if not start or not has_dbt_tables(con):
        return Response(
            action="abstain", role=role, as_of=day, policy_revision=policy.revision,
            answer=f"{doc.doc_id} has no dbt node in the lineage graph; lineage is only reported from the graph.",
            evidence=[Evidence.of(doc, "primary")], reason="no_graph_node")
    graph = downstream(con, start) if down else upstream(con, start)
    if supporting is not None:
        have = {d.doc_id for d in docs}
        more = [d for d in supporting(list(graph.nodes), doc.metadata.get("lineage_doc_id")) if d.doc_id not in have]
        docs = sorted([*docs, *more], key=lambda d: d.doc_id)
    # A node can have several revisions (canon.registry.publication): the one in effect on the day wins.
    by_id: dict[str, Document] = {}
    for d in docs:
        uid = d.metadata.get("dbt_unique_id")
        if uid and not (day is not None and uid in by_id and by_id[uid].in_effect(day) and not d.in_effect(day)):
            by_id[uid] = d
    evidence = [Evidence.of(doc, "primary")]
    for node_id in graph.nodes:
        support = by_id.get(node_id)
        if support is not None and support.doc_id != doc.doc_id and visible(support, role, policy) and (
            day is None or support.in_effect(day)
        ):
            evidence.append(Evidence.of(support, "supporting"))
    lineage_doc = next((d for d in docs if d.doc_id == doc.metadata.get("lineage_doc_id")), None)
    if lineage_doc is not None and visible(lineage_doc, role, policy):
        evidence.append(Evidence.of(lineage_doc, "supporting"))
    if down:
        return _downstream_answer(doc, start, graph, evidence, role, day, policy)
    sources = sorted(n["relation_name"] or n["id"] for n in graph.sources())
    impl = graph.nodes.get(doc.metadata.get("implemented_by") or start)
    if impl is not None and impl["resource_type"] == "model":
        label = f"{impl['name']} v{impl['version']}" if impl.get("version") else impl["name"]
        verb = "is the dbt model" if impl["id"] == start else "is implemented by the dbt model"
        head = f"{doc.doc_id} {verb} {label}"
    else:
        head = f"{doc.doc_id} ({start})"
    if sources:
        upstream_text = f"its upstream raw sources are {', '.join(sources)}"
    else:   # no dbt sources: name where the data enters (seeds), never an empty list
        roots = sorted(f"{n['resource_type']} {n.get('relation_name') or n['id']}" for n in graph.roots()
                       if n["id"] != start)
        upstream_text = ("it has no dbt sources upstream" +
                         (f"; its data enters through {', '.join(roots)}" if roots else ""))
    return Response(
        action="answer", role=role, as_of=day, policy_revision=policy.revision,
        answer=f"{head}; {upstream_text}.",
        evidence=evidence,
        claims=[Claim(claim=f"{doc.doc_id} depends on {s}", evidence_id=doc.doc_id,
                      evidence_revision=doc.content_hash, supported_span=f"lineage graph edge path to {s}",
                      effective_for=day) for s in sources],
        lineage=_graph_json(graph),
    )


def _downstream_answer(doc: Document, start: str, graph: Subgraph, evidence: list[Evidence], role: str,
                       day: dt.date | None, policy: Policy) -> Response:
    """What is built from `start`, by dbt resource type, nearest first in the graph's order.
    The nodes are named from the graph (ids and names are metadata); a node's document is
    evidence only where the role may see it (`lineage_of` chose `evidence`)."""
    built = [n for nid, n in graph.nodes.items() if nid != start]
    if built:
        by_type: dict[str, list[str]] = {}
        for n in built:
            by_type.setdefault(n["resource_type"], []).append(n["name"])
        text = "; ".join(f"{len(v)} {t}{'s' if len(v) > 1 else ''} ({', '.join(sorted(v))})"
                         for t, v in sorted(by_type.items()))
        answer = f"{doc.doc_id} ({start}): downstream of it in the dbt graph, {text}."
    else:
        answer = f"{doc.doc_id} ({start}): nothing in the dbt graph is built from it."
    return Response(
        action="answer", role=role, as_of=day, policy_revision=policy.revision, answer=answer, evidence=evidence,
        claims=[Claim(claim=f"{n['id']} depends on {start}", evidence_id=doc.doc_id, evidence_revision=doc.content_hash,
                      supported_span=f"lineage graph edge path from {start}", effective_for=day) for n in built],
        lineage=_graph_json(graph, direction="downstream"),
    )


def _graph_json(graph: Subgraph, direction: str = "upstream") -> LineageGraph:
    return LineageGraph(
        nodes=[{k: v for k, v in n.items() if v is not None} for n in graph.nodes.values()],
        edges=[LineageEdge(parent=p, child=c) for p, c in graph.edges],
        direction=direction,
    )
