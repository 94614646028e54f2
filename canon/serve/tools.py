"""What each context-server tool does, over the production code paths: the ask
pipeline (canon/ask/pipeline.py), resolve and lineage (canon/ask/resolve.py),
the freshness arithmetic (canon/ask/calculate.py) and the role's visible set
(canon/registry/policy.py through `AskContext.view`). No second pipeline.

Every function takes the principal the server fixed; none takes a role. Each
returns the JSON of a tool result; bad input raises CanonInputError, whose
message names only what the caller sent. Every list is bounded (`MAX_LIMIT`)
and paginated with an opaque cursor bound to the listing it came from.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import re
from typing import Any

from rapidfuzz import fuzz

from canon.ask import answer_log, calculate, links
from canon.ask import resolve as resolve_mod
from canon.ask.pipeline import ask as ask_pipeline
from canon.ask.understanding.match import normalize
from canon.ask.understanding.parse import check_question
from canon.core.dates import parse_as_of
from canon.core.errors import CanonInputError
from canon.models.documents import Document
from canon.models.responses import Response
from canon.registry.policy import visible
from canon.serve.principals import Principal
from canon.serve.state import Session

DEFAULT_LIMIT = 20
MAX_LIMIT = 50
MAX_LINEAGE_NODES = 200
MAX_LINEAGE_DEPTH = 50
MAX_ID_CHARS = 300          # object ids, answer ids, sources, kinds
MAX_QUERY_CHARS = 300       # search_objects
SEARCH_MIN_SCORE = 60.0
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


# ---------------------------------------------------------------- shared


def _day(as_of: str | None) -> dt.date | None:
    return parse_as_of(as_of, source="as_of")


def _logged(s: Session, p: Principal, resp: Response) -> dict[str, Any]:
    """Every answer goes to the answer log, with the principal and the transport."""
    if not resp.answer_id:
        resp.answer_id = answer_log.new_answer_id()
    if not resp.index_revision and s.ctx.retriever is not None:
        resp.index_revision = s.ctx.retriever.revision_id
    resp.policy_revision = resp.policy_revision or s.policy.revision
    s.answer_log.record(resp, principal=p.name, transport=p.transport)
    return resp.to_json_dict()


def _limit(limit: int | None, cap: int = MAX_LIMIT) -> int:
    if limit is None:
        return min(DEFAULT_LIMIT, cap)
    if limit < 1:
        raise CanonInputError("limit", f"must be at least 1, got {limit}")
    return min(limit, cap)


def _listing_key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16]


def _cursor(offset: int, key: str) -> str:
    return base64.urlsafe_b64encode(json.dumps({"o": offset, "k": key}).encode()).decode().rstrip("=")


def _offset(cursor: str | None, key: str) -> int:
    if not cursor:
        return 0
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        offset, got = int(data["o"]), data["k"]
    except (ValueError, TypeError, KeyError):
        raise CanonInputError("cursor", "not a cursor this server issued") from None
    if got != key or offset < 0:
        raise CanonInputError("cursor", "this cursor belongs to another listing (repeat the same arguments)")
    return offset


def _page(items: list, limit: int | None, cursor: str | None, key: str) -> dict[str, Any]:
    n = _limit(limit)
    start = _offset(cursor, key)
    page = items[start:start + n]
    more = start + n < len(items)
    return {"items": page, "total": len(items), "next_cursor": _cursor(start + n, key) if more else None}


def _revision_row(d: Document) -> dict[str, Any]:
    return {"doc_id": d.doc_id, "version": d.version, "status": d.status.value,
            "valid_from": d.valid_from.isoformat(), "valid_to": d.valid_to.isoformat() if d.valid_to else None}


def _objects(docs: list[Document]) -> list[dict[str, Any]]:
    """One row per object, from the role's visible documents only."""
    by: dict[str, list[Document]] = {}
    for d in docs:
        by.setdefault(d.object_id, []).append(d)
    out = []
    for oid in sorted(by):
        revs = sorted(by[oid], key=lambda d: (d.valid_from, d.version, d.doc_id))
        out.append({"object_id": oid, "kind": revs[-1].kind, "title": revs[-1].title,
                    "revisions": [_revision_row(d) for d in revs]})
    return out


# ---------------------------------------------------------------- tools


def ask(s: Session, p: Principal, question: str, as_of: str | None) -> dict[str, Any]:
    check_question(question)
    return _logged(s, p, ask_pipeline(s.ctx, question, p.role, _day(as_of)))


def resolve(s: Session, p: Principal, object_id: str, as_of: str | None) -> dict[str, Any]:
    resp = resolve_mod.resolve(s.ctx.by_object.get(object_id, []), object_id, _day(as_of), p.role, s.policy)
    return _logged(s, p, resp)


def lineage(s: Session, p: Principal, object_id: str, as_of: str | None, depth: int | None,
            limit: int | None) -> dict[str, Any]:
    if depth is not None and depth < 1:
        raise CanonInputError("depth", f"must be at least 1, got {depth}")
    resp = resolve_mod.lineage(s.ws.con, s.ctx.docs, object_id, _day(as_of), p.role, s.policy)
    data = _logged(s, p, resp)
    graph = data.get("lineage")
    if graph is not None:
        start = next((d.metadata.get("dbt_unique_id") for d in s.ctx.docs
                      if resp.evidence and d.doc_id == resp.evidence[0].doc_id), None)
        data["lineage"] = _bounded_graph(graph, start, min(depth or MAX_LINEAGE_DEPTH, MAX_LINEAGE_DEPTH),
                                         _limit(limit, MAX_LINEAGE_NODES) if limit else MAX_LINEAGE_NODES)
    return data


def _bounded_graph(graph: dict, start: str | None, depth: int, limit: int) -> dict:
    """The upstream graph cut to `depth` hops from the start node and at most
    `limit` nodes, nearest first; `truncated` says whether anything was cut."""
    parents: dict[str, list[str]] = {}
    for e in graph["edges"]:
        parents.setdefault(e["child"], []).append(e["parent"])
    order: list[str] = []
    seen: set[str] = set()
    frontier = [start] if start and any(n["id"] == start for n in graph["nodes"]) else []
    for _ in range(depth + 1):
        nxt = []
        for nid in frontier:
            if nid in seen or len(order) >= limit:
                continue
            seen.add(nid)
            order.append(nid)
            nxt.extend(sorted(parents.get(nid, [])))
        frontier = nxt
    if not frontier and not order:   # no start node found: keep the graph's own order, bounded
        order = [n["id"] for n in graph["nodes"]][:limit]
    keep = set(order)
    nodes = [n for n in graph["nodes"] if n["id"] in keep]
    edges = [e for e in graph["edges"] if e["parent"] in keep and e["child"] in keep]
    return {**graph, "nodes": nodes, "edges": edges,
            "truncated": len(nodes) < len(graph["nodes"]) or len(edges) < len(graph["edges"])}


def search_objects(s: Session, p: Principal, query: str, kind: str | None, limit: int | None,
                   cursor: str | None) -> dict[str, Any]:
    """Objects of the role's visible catalog whose id or title matches `query`
    (metadata only, as question parsing: document bodies are never searched)."""
    q = normalize(query)
    if not q:
        raise CanonInputError("query", "is empty")
    view = s.ctx.view(p.role)
    docs = view.by_kind.get(kind, []) if kind else view.shown
    titles: dict[str, set[str]] = {}
    for d in docs:
        titles.setdefault(d.object_id, set()).add(normalize(d.title))
    scored = []
    for obj in _objects(docs):
        names = {normalize(obj["object_id"].replace(".", " ").replace("_", " "))} | titles[obj["object_id"]]
        score = max((fuzz.WRatio(q, n) for n in names if n), default=0.0)
        if score >= SEARCH_MIN_SCORE:
            scored.append({**obj, "score": round(score, 1)})
    scored.sort(key=lambda o: (-o["score"], o["object_id"]))
    key = _listing_key("search_objects", p.name, q, kind)
    return _page(scored, limit, cursor, key)


def freshness(s: Session, p: Principal, source: str | None, limit: int | None,
              cursor: str | None) -> dict[str, Any]:
    """The newest visible freshness snapshot of each object family (or, with
    `source`, of each family observing that source), computed as `canon ask`
    computes a freshness question; each result is logged as an answer."""
    view = s.ctx.view(p.role)
    fx = s.ctx.freshness_index(view)
    idx = fx.by_source.get(source, []) if source else range(len(fx.snapshots))
    newest: dict[Any, int] = {}
    floor = dt.datetime.min.replace(tzinfo=dt.timezone.utc)
    for i in idx:
        fam = links._family(fx.snapshots[i].object_id) or fx.snapshots[i].object_id
        j = newest.get(fam)
        if j is None or (fx.observed[i][0] or floor) > (fx.observed[j][0] or floor):
            newest[fam] = i
    key = _listing_key("freshness", p.name, source)
    picked = sorted(newest.values(), key=lambda i: fx.snapshots[i].object_id)
    page = _page(picked, limit, cursor, key)
    results = []
    for i in page["items"]:
        observed_at, obs = fx.observed[i]
        if source:
            obs = [o for o in obs if o["source"] == source]
        results.append(_logged(s, p, calculate.freshness(fx.snapshots[i], observed_at, obs, p.role, None)))
    if not results and not cursor:
        results.append(_logged(s, p, calculate.no_observation(p.role, None)))
    return {**page, "items": results}


def list_metrics(s: Session, p: Principal, limit: int | None, cursor: str | None) -> dict[str, Any]:
    view = s.ctx.view(p.role)
    return _page(_objects(view.by_kind.get("metric_definition", [])), limit, cursor,
                 _listing_key("list_metrics", p.name))


def explain_answer(s: Session, p: Principal, answer_id: str) -> dict[str, Any]:
    """An answer this principal was given: its log row, citing only what the
    principal may still see. Another principal's answer is refused exactly as
    an unknown id is, so the refusal says nothing about whose it is."""
    not_yours = CanonInputError("answer_id", "no answer with this id was given to you")
    if not _UUID.match(answer_id):
        raise not_yours
    row = answer_log.AnswerLogFile(s.ws.paths.answer_log_file).given(answer_id, p.name)
    if row is None:
        raise not_yours
    aid, asked_at, action, as_of, index_rev, policy_rev, resolver, cited_json, transport = row
    by_id = {d.doc_id: d for d in s.ctx.docs}
    cited = [c for c in json.loads(cited_json)
             if c["doc_id"] in by_id and visible(by_id[c["doc_id"]], p.role, s.policy)]
    return {"answer_id": aid, "asked_at": asked_at.isoformat(), "action": action,
            "as_of": as_of.isoformat() if as_of else None, "index_revision": index_rev,
            "policy_revision": policy_rev, "resolver_version": resolver, "transport": transport,
            "principal": p.name, "cited": cited,
            "note": "citations the live policy no longer lets you see are left out"}
