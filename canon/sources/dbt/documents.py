"""dbt artifacts become documents through the same registry and keys as any
other corpus: one metric-definition document per governed metric revision, one
model-schema document per governed model version, one lineage document per
governed metric revision (rendered from the graph), one freshness snapshot
from sources.json. Evidence ids come from `meta.canon` where given, otherwise
from dbt unique ids."""

from __future__ import annotations

import datetime as dt
import json
from collections import deque
from typing import Any, Iterable

from canon.models.documents import Document

SOURCE_SYSTEM = "dbt"


def _canon_date(value: Any) -> str | None:
    if value in (None, "", "null"):
        return None
    return str(value)[:10]


def _label(name: str) -> str:
    return name.replace("_", " ")


def object_ref(canon: dict, version: Any) -> str:
    """How prose names a revision of an object: `model.analytics.fct_revenue.v2`."""
    return f"{canon['object_id']}.v{version}" if version not in (None, "") else canon["object_id"]


def _base(item: dict, canon: dict, *, kind: str, revision: str, default_title: str) -> dict:
    version = canon.get("version", item.get("version") or "1")
    return dict(
        doc_id=canon.get("doc_id") or item["unique_id"],
        object_id=canon.get("object_id") or item["unique_id"].rsplit(".v", 1)[0],
        kind=canon.get("kind", kind),
        title=canon.get("title") or default_title,
        status=canon.get("status", "approved"),
        authority=int(canon.get("authority", 90)),
        version=str(version),
        valid_from=_canon_date(canon.get("valid_from")) or "1900-01-01",
        valid_to=_canon_date(canon.get("valid_to")),
        allowed_roles=tuple(canon.get("allowed_roles") or ()),
        supersedes=canon.get("supersedes"),
        source_uri=item["unique_id"],
        source_system=SOURCE_SYSTEM,
        source_revision=revision,
    )


def _period(canon: dict) -> str:
    start = _canon_date(canon.get("valid_from")) or "the beginning"
    end = _canon_date(canon.get("valid_to"))
    return f"effective from {start}" + (f" until (not including) {end}" if end else " with no end date")


def _columns(node: dict | None) -> list[dict]:
    if not node or not node.get("columns_json"):
        return []
    try:
        return list(json.loads(node["columns_json"]))
    except (TypeError, ValueError):
        return []


def _upstream(parents: dict[str, list[str]], start: str) -> tuple[list[tuple[str, str]], set[str]]:
    seen, edges, queue = {start}, [], deque([start])
    while queue:
        node = queue.popleft()
        for p in sorted(parents.get(node, [])):
            edges.append((p, node))
            if p not in seen:
                seen.add(p)
                queue.append(p)
    return edges, seen


def documents_from_artifacts(
    governed: Iterable[dict],
    nodes: Iterable[dict],
    edges: Iterable[dict],
    freshness: Iterable[dict],
    *,
    revision: str,
    freshness_observed_at: str | None = None,
) -> list[Document]:
    """Render governed dbt nodes (those with `meta.canon`) as registry documents."""
    governed = list(governed)
    node_by_id = {n["unique_id"]: n for n in nodes}
    parents: dict[str, list[str]] = {}
    for e in edges:
        if e.get("edge_type", "model") == "model":
            parents.setdefault(e["child"], []).append(e["parent"])

    def display(uid: str) -> str:
        n = node_by_id.get(uid) or {}
        if n.get("resource_type") == "source":
            return n.get("relation_name") or uid
        if n.get("resource_type") == "model":
            return f"{n['name']} v{n['version']}" if n.get("version") else n.get("name", uid)
        return uid

    models = {g["unique_id"]: g for g in governed if g["resource_type"] == "model"}
    metrics = [g for g in governed if g["resource_type"] == "metric"]

    def implementing_model(metric: dict) -> dict | None:
        wanted = str(metric["canon"].get("model_version", ""))
        _, upstream_ids = _upstream(parents, metric["unique_id"])
        candidates = [models[u] for u in sorted(upstream_ids) if u in models]
        exact = [m for m in candidates if str(m.get("version") or m["canon"].get("version", "")) == wanted]
        return (exact or candidates or [None])[0]

    docs: list[Document] = []
    supports: dict[str, list[str]] = {}
    roles: set[str] = set()
    for metric in metrics:
        canon = metric["canon"]
        roles.update(canon.get("allowed_roles") or ())
        model = implementing_model(metric)
        base = _base(metric, canon, kind="metric_definition", revision=revision,
                     default_title=f"{_label(canon['object_id'].rsplit('.', 1)[-1]) if canon.get('object_id') else _label(metric['name'])} governed definition v{canon.get('version', '1')}")
        parts = [
            f"Governed metric {_label(canon.get('label') or base['object_id'].rsplit('.', 1)[-1])} "
            f"version {base['version']} ({base['object_id']}), status {base['status']}, {_period(canon)}.",
        ]
        if canon.get("definition"):
            parts.append(f"Definition: {str(canon['definition']).strip().rstrip('.')}.")
        elif metric.get("description"):
            parts.append(str(metric["description"]).strip())
        meta: dict[str, Any] = {"dbt_unique_id": metric["unique_id"], "dbt_resource_type": "metric"}
        if model is not None:
            mref = object_ref(model["canon"], model.get("version") or model["canon"].get("version"))
            parts.append(f"Supporting model is {mref} (dbt model {display(model['unique_id'])}).")
            meta.update(implemented_by=model["unique_id"], model_doc_id=model["canon"].get("doc_id") or model["unique_id"])
            supports.setdefault(model["unique_id"], []).append(f"{base['object_id']} version {base['version']}")
        if canon.get("lineage_doc_id"):
            meta["lineage_doc_id"] = canon["lineage_doc_id"]
        docs.append(Document(**base, text=" ".join(parts), metadata=meta))

        if canon.get("lineage_doc_id"):
            edge_list, _ = _upstream(parents, metric["unique_id"])
            hops = "; ".join(f"{display(p)} -> {display(c)}" for p, c in edge_list
                             if node_by_id.get(p, {}).get("resource_type") in ("source", "model"))
            lineage_base = dict(base, doc_id=canon["lineage_doc_id"], kind="lineage",
                                object_id=base["object_id"].replace("metric.", "lineage.", 1),
                                title=f"Lineage for {_label(base['object_id'].rsplit('.', 1)[-1])} v{base['version']}",
                                authority=95, supersedes=canon.get("lineage_supersedes"))
            mtxt = f" These feed {display(model['unique_id'])}" if model else ""
            text = (f"Lineage for {base['object_id']} v{base['version']} from the dbt graph: {hops}.{mtxt}, "
                    f"which supports {base['object_id']} v{base['version']}.")
            docs.append(Document(**lineage_base, text=text, metadata={
                "lineage_root": metric["unique_id"], "rendered_from": "lineage_edges"}))

    for uid, model in models.items():
        canon = model["canon"]
        roles.update(canon.get("allowed_roles") or ())
        node = node_by_id.get(uid)
        version = model.get("version") or canon.get("version")
        base = _base(model, canon, kind="model_schema", revision=revision,
                     default_title=f"dbt model schema {model['name']} v{version}")
        cols = _columns(node)
        parts = [f"dbt model {object_ref(canon, version)} (dbt {display(uid)}, relation {model.get('relation_name') or '?'})."]
        if canon.get("grain"):
            parts.append(f"Grain: {str(canon['grain']).strip().rstrip('.')}.")
        if canon.get("primary_key"):
            parts.append(f"Primary key: {canon['primary_key']}.")
        if cols:
            parts.append("Columns: " + ", ".join(c["name"] for c in cols) + ".")
        if model.get("description"):
            parts.append(str(model["description"]).strip())
        for s in supports.get(uid, []):
            parts.append(f"This model supports {s}.")
        docs.append(Document(**base, text=" ".join(parts), metadata={
            "dbt_unique_id": uid, "dbt_resource_type": "model", "columns": [c["name"] for c in cols]}))

    snapshot = freshness_document(list(freshness), observed_at=freshness_observed_at, roles=sorted(roles), revision=revision)
    if snapshot is not None:
        docs.append(snapshot)
    return docs


def freshness_document(
    observations: list[dict], *, observed_at: str | None, roles: list[str], revision: str
) -> Document | None:
    """dbt's sources.json in the sentence form of docs/contracts.md, "Freshness snapshots" (and as structured observations)."""
    if not observations:
        return None
    observed = observed_at or max(str(o.get("snapshotted_at") or "") for o in observations)
    if not observed:
        return None
    obs_ts = dt.datetime.fromisoformat(observed.replace("Z", "+00:00"))
    stamp = obs_ts.strftime("%Y-%m-%dT%H%MZ")
    structured = []
    sentences = [f"Observed at {obs_ts.strftime('%Y-%m-%dT%H:%M:%SZ')}."]
    for o in sorted(observations, key=lambda o: o["source"]):
        sla_min = o.get("warn_after_minutes") or o.get("error_after_minutes")
        sla_h = (sla_min or 0) / 60
        sla_txt = f"{sla_h:g} hours" if sla_min else "no SLA"
        sentences.append(f"{o['source']} max_loaded_at {o['max_loaded_at']}, SLA {sla_txt}.")
        structured.append({"source": o["source"], "max_loaded_at": o["max_loaded_at"], "sla_hours": sla_h if sla_min else None})
    day = obs_ts.date()
    return Document(
        doc_id=f"freshness.dbt_sources.{stamp}", object_id="freshness.dbt.sources", kind="freshness_snapshot",
        title="dbt source freshness snapshot", status="observed", authority=90, version=obs_ts.isoformat(),
        valid_from=day, valid_to=day + dt.timedelta(days=1), allowed_roles=tuple(roles), supersedes=None,
        text=" ".join(sentences), source_uri="sources.json", source_system=SOURCE_SYSTEM, source_revision=revision,
        metadata={"observations": structured, "observed_at": obs_ts.isoformat()},
    )
