"""dbt artifacts become documents through the same registry and keys as any
other corpus.

Which nodes become documents (the rule):

- A node carrying `meta.canon` is *governed*: its keys (`doc_id`, `object_id`,
  `kind`, `title`, `status`, `authority`, `version`, `valid_from`,
  `valid_to`, `allowed_roles`, `supersedes`, `definition`, `grain`,
  `primary_key`, `label`, `model_version`, `lineage_doc_id`) override what
  Canon derives from dbt. Governed metrics and models render with the
  templates they always had (the demo's documents are byte-identical), and
  what `meta.canon` leaves out is filled from dbt (the definition, the grain
  and key, the implementing model).
- `default_roles` (a tuple, from the configuration) is who may read evidence
  whose node has no `meta.canon.allowed_roles`. With `default_roles` given,
  every metric, semantic model, model version, seed, snapshot, source,
  exposure and saved query without `meta.canon` becomes a document too, with
  defaults derived from dbt itself (`canon.sources.dbt.defaults`). With
  `default_roles` None only governed nodes are documents — the embedded
  demo's behaviour — and a governed node without `allowed_roles` is an error
  naming `default_roles`.
- Every rendered metric gets a lineage document rendered from the graph
  (a governed one when its `meta.canon.lineage_doc_id` names it); sources.json
  gives one freshness snapshot.
- Zero evidence documents from the artifacts is an error with its reason,
  never a quiet success.

A metric's implementing model comes from the graph (its measures' semantic
model and that model's parent, per version: `canon.sources.dbt.node_graph`);
one that resolves to none says so in its text and metadata.

Un-annotated defaults: `doc_id` and `object_id` are the dbt unique id (a model
version's object is the model: `model.pkg.name`), status approved, authority
90, valid from the manifest's generated_at date (1900-01-01 without one). A node
without `meta.canon.valid_from` is marked `effective_time_source:
inferred_from_publication`; its revisions over successive manifests are
canon.registry.publication's job (docs/contracts.md, "Effective time from
publication"). Of a versioned model, the latest version is
approved, older versions superseded and newer ones (prereleases) draft, so one
revision governs, as dbt's unpinned `ref` does.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from canon.core.errors import CanonInputError
from canon.models.documents import Document
from canon.sources.dbt import defaults
from canon.sources.dbt.node_graph import RELATION_TYPES, Implementation, NodeGraph

SOURCE_SYSTEM = "dbt"
DEFAULT_VALID_FROM = "1900-01-01"
# metadata effective_time_source of a document whose valid_from no one declared (docs/contracts.md,
# "Effective time from publication"); a declared one carries no such key (absent = "declared").
INFERRED_FROM_PUBLICATION = "inferred_from_publication"
RENDERED_TYPES = ("metric", "semantic_model", "model", "seed", "snapshot", "source", "exposure", "saved_query")


def _canon_date(value: Any) -> str | None:
    if value in (None, "", "null"):
        return None
    return str(value)[:10]


def _label(name: str) -> str:
    return name.replace("_", " ")


def object_ref(canon: dict, version: Any) -> str:
    """How prose names a revision of an object: `model.analytics.fct_revenue.v2`."""
    return f"{canon['object_id']}.v{version}" if version not in (None, "") else canon["object_id"]


def object_id_of(unique_id: str, version: Any) -> str:
    """A node's object: its unique id, without the `.v<version>` a model version's id ends with."""
    suffix = f".v{version}"
    return unique_id[: -len(suffix)] if version not in (None, "") and unique_id.endswith(suffix) else unique_id


def _publication(item: dict, canon: dict, generated_at: str | None) -> dict | None:
    """The effective-time metadata of a node that declares no meta.canon.valid_from: its business
    time is inferred from the artifact that published it (canon.registry.publication gives it a
    history); None for a declared one, which carries nothing new (the demo's documents)."""
    if _canon_date(canon.get("valid_from")):
        return None
    meta = {"effective_time_source": INFERRED_FROM_PUBLICATION}
    if generated_at:
        meta["published_at"] = str(generated_at)
    if item.get("checksum"):
        meta["dbt_checksum"] = str(item["checksum"])
    return meta


def _base(item: dict, canon: dict, *, kind: str, revision: str, default_title: str,
          roles: tuple[str, ...], status: str = "approved", generated_at: str | None = None) -> dict:
    version = canon.get("version", item.get("version") or "1")
    # Without a declared valid_from a revision is valid from when Canon first recorded it: the date
    # of the artifact's metadata.generated_at (1900-01-01 when the artifact states none).
    published = _canon_date(generated_at) if generated_at else None
    return dict(
        doc_id=canon.get("doc_id") or item["unique_id"],
        object_id=canon.get("object_id") or object_id_of(item["unique_id"], item.get("version")),
        kind=canon.get("kind", kind),
        title=canon.get("title") or default_title,
        status=canon.get("status", status),
        authority=int(canon.get("authority", 90)),
        version=str(version),
        valid_from=_canon_date(canon.get("valid_from")) or published or DEFAULT_VALID_FROM,
        valid_to=_canon_date(canon.get("valid_to")),
        allowed_roles=tuple(canon.get("allowed_roles") or roles),
        supersedes=canon.get("supersedes"),
        source_uri=item["unique_id"],
        source_system=SOURCE_SYSTEM,
        source_revision=revision,
        _publication=_publication(item, canon, generated_at),
    )


def _document(base: dict, *, text: str, metadata: dict) -> Document:
    """A document from `_base` fields (or a copy of them): the effective-time metadata of an
    undeclared valid_from joins the node's own."""
    fields = dict(base)
    publication = fields.pop("_publication", None)
    return Document(**fields, text=text, metadata={**metadata, **(publication or {})})


def _period(canon: dict) -> str:
    # No date in the inferred case: the text must not change with every manifest's generated_at.
    start = _canon_date(canon.get("valid_from")) or "when Canon first recorded it (inferred from dbt artifact publication)"
    end = _canon_date(canon.get("valid_to"))
    return f"effective from {start}" + (f" until (not including) {end}" if end else " with no end date")


def _version_key(v: Any) -> tuple:
    s = str(v)
    try:
        return (0, float(s), s)
    except ValueError:
        return (1, 0.0, s)


def _version_status(graph: NodeGraph, uid: str) -> str:
    """approved for the latest version (or an unversioned node), superseded below it, draft above it."""
    n = graph.nodes[uid]
    if n.get("version") in (None, ""):
        return "approved"
    latest = n.get("latest_version")
    if latest in (None, ""):
        latest = max(graph.versions_of(uid), key=_version_key, default=n["version"])
    mine, top = _version_key(n["version"]), _version_key(latest)
    return "approved" if mine == top else ("superseded" if mine < top else "draft")


def _check_default_roles(default_roles: Iterable[str] | None) -> tuple[str, ...] | None:
    if default_roles is None:
        return None
    if isinstance(default_roles, str):
        default_roles = (default_roles,)
    roles = tuple(str(r) for r in default_roles)
    if not roles or any(not r.strip() for r in roles):
        raise CanonInputError("default_roles", "must name at least one role, and no role may be empty",
                              field="default_roles")
    return roles


class _Render:
    """One render of an artifact set: the graph, who is rendered, and the documents in order."""

    def __init__(self, governed: list[dict], graph: NodeGraph, *, revision: str, roles: tuple[str, ...] | None,
                 groups: Mapping[str, Mapping[str, Any]], artifacts: str, generated_at: str | None = None):
        self.graph, self.revision, self.roles, self.groups, self.artifacts = graph, revision, roles, groups, artifacts
        self.generated_at = generated_at   # the manifest's metadata.generated_at: when it was published
        self.governed = {g["unique_id"]: g for g in governed}
        self.derived = [] if roles is None else sorted(
            uid for uid, n in graph.nodes.items()
            if n.get("resource_type") in RENDERED_TYPES and uid not in self.governed)
        self._derived_set = set(self.derived)
        self.docs: list[Document] = []
        self.supports: dict[str, list[str]] = {}
        self.impl: dict[str, Implementation] = {}

    def roles_for(self, item: dict) -> tuple[str, ...]:
        canon = item.get("canon") or {}
        if canon.get("allowed_roles"):
            return tuple(canon["allowed_roles"])
        if self.roles is None:
            raise CanonInputError(self.artifacts, f"{item['unique_id']} carries meta.canon without allowed_roles, "
                                  "and default_roles is not set: name who may read it in meta.canon.allowed_roles "
                                  "or configure default_roles", field="default_roles")
        return self.roles

    def rendered(self, uid: str) -> bool:
        return uid in self.governed or uid in self._derived_set

    def doc_id_of(self, uid: str) -> str | None:
        if uid in self.governed:
            return self.governed[uid]["canon"].get("doc_id") or uid
        return uid if uid in self._derived_set else None

    def ref_of(self, uid: str) -> str:
        """How a metric's text names its model: a governed model as `object_id.vN`, any other by its unique id."""
        g = self.governed.get(uid)
        if g is not None:
            return object_ref({"object_id": g["canon"].get("object_id") or object_id_of(uid, g.get("version"))},
                              g.get("version") or g["canon"].get("version"))
        return uid

    def implementation(self, metric_uid: str) -> Implementation:
        impl = self.impl.get(metric_uid)
        if impl is None:
            impl = self.graph.implementing(metric_uid)
            canon = (self.governed.get(metric_uid) or {}).get("canon") or {}
            wanted = str(canon.get("model_version") or "")
            if wanted and impl.models:
                # meta.canon.model_version picks the version of the model the graph resolved.
                hit = self.graph.versions_of(impl.models[0]).get(wanted)
                if hit is not None:
                    impl = Implementation([hit] + [m for m in impl.models if m != hit], impl.semantic_models,
                                          impl.measures)
            self.impl[metric_uid] = impl
        return impl

    # ------------------------------------------------------------ the documents, in order

    def run(self) -> list[Document]:
        governed = list(self.governed.values())
        for g in governed:
            if g["resource_type"] == "metric":
                self.governed_metric(g)
        for g in governed:
            if g["resource_type"] == "model":
                self.governed_model(g)
        for g in governed:
            if g["resource_type"] not in ("metric", "model") and g["resource_type"] in defaults.RENDERERS:
                self.derived_node(g["unique_id"], g)
        for uid in self.derived:
            if self.graph.type_of(uid) == "metric":
                self.derived_metric(uid)
        for uid in self.derived:
            if self.graph.type_of(uid) != "metric":
                self.derived_node(uid, None)
        return self.docs

    def _link_model(self, impl: Implementation, metric_object: str, version: str, meta: dict) -> None:
        if not impl.models:
            return
        first = impl.models[0]
        meta["implemented_by"] = first
        doc_id = self.doc_id_of(first)
        if doc_id is not None:
            meta["model_doc_id"] = doc_id
            self.supports.setdefault(first, []).append(f"{metric_object} version {version}")

    def governed_metric(self, metric: dict) -> None:
        g = self.graph
        canon = metric["canon"]
        uid = metric["unique_id"]
        impl = self.implementation(uid)
        base = _base(metric, canon, kind="metric_definition", revision=self.revision, roles=self.roles_for(metric),
                     generated_at=self.generated_at,
                     default_title=f"{_label(canon['object_id'].rsplit('.', 1)[-1]) if canon.get('object_id') else _label(metric['name'])} governed definition v{canon.get('version', '1')}")
        parts = [
            f"Governed metric {_label(canon.get('label') or base['object_id'].rsplit('.', 1)[-1])} "
            f"version {base['version']} ({base['object_id']}), status {base['status']}, {_period(canon)}.",
        ]
        if canon.get("definition"):
            parts.append(f"Definition: {str(canon['definition']).strip().rstrip('.')}.")
        elif metric.get("description"):
            parts.append(str(metric["description"]).strip())
        elif uid in g.nodes:
            parts.append(defaults.sentence(f"Definition: {defaults.metric_definition(g, uid)}"))
        meta: dict[str, Any] = {"dbt_unique_id": uid, "dbt_resource_type": "metric"}
        if impl.models:
            model = impl.models[0]
            if self.rendered(model):
                parts.append(f"Supporting model is {self.ref_of(model)} (dbt model {g.display(model)}).")
            else:
                parts.append(f"Supporting model is {model} (dbt model {g.display(model)}), which has no "
                             "meta.canon and is not rendered as evidence without default_roles.")
        else:
            parts.append(f"No implementing dbt model resolves from the graph: {impl.reason}.")
            meta["implementation_unresolved"] = impl.reason
        self._link_model(impl, base["object_id"], base["version"], meta)
        if canon.get("lineage_doc_id"):
            meta["lineage_doc_id"] = canon["lineage_doc_id"]
        self.docs.append(_document(base, text=" ".join(parts), metadata=meta))
        if canon.get("lineage_doc_id"):
            lineage_base = dict(base, doc_id=canon["lineage_doc_id"], kind="lineage",
                                object_id=base["object_id"].replace("metric.", "lineage.", 1),
                                title=f"Lineage for {_label(base['object_id'].rsplit('.', 1)[-1])} v{base['version']}",
                                authority=95, supersedes=canon.get("lineage_supersedes"))
            mtxt = f" These feed {g.display(impl.models[0])}" if impl.models else ""
            text = (f"Lineage for {base['object_id']} v{base['version']} from the dbt graph: {self._hops(uid)}.{mtxt}, "
                    f"which supports {base['object_id']} v{base['version']}.")
            self.docs.append(_document(lineage_base, text=text, metadata={
                "lineage_root": uid, "rendered_from": "lineage_edges"}))

    def _hops(self, uid: str) -> str:
        edges, _ = self.graph.upstream(uid)
        return "; ".join(f"{self.graph.display(p)} -> {self.graph.display(c)}" for p, c in edges
                         if self.graph.type_of(p) in RELATION_TYPES)

    def governed_model(self, model: dict) -> None:
        g = self.graph
        canon = model["canon"]
        uid = model["unique_id"]
        node = g.nodes.get(uid)
        version = model.get("version") or canon.get("version")
        base = _base(model, canon, kind="model_schema", revision=self.revision, roles=self.roles_for(model),
                     generated_at=self.generated_at,
                     default_title=f"dbt model schema {model['name']} v{version}")
        cols = defaults._columns(node or {})
        parts = [f"dbt model {object_ref(base, version)} (dbt {g.display(uid)}, relation {model.get('relation_name') or '?'})."]
        grain, key = canon.get("grain"), canon.get("primary_key")
        if node is not None and (not grain or not key):
            derived_grain, _, derived_key, _ = defaults.grain_and_key(g, uid)
            grain = grain or derived_grain
            key = key or (", ".join(derived_key) if derived_key else None)
        if grain:
            parts.append(f"Grain: {str(grain).strip().rstrip('.')}.")
        if key:
            parts.append(f"Primary key: {key}.")
        if cols:
            parts.append("Columns: " + ", ".join(c["name"] for c in cols) + ".")
        if model.get("description"):
            parts.append(str(model["description"]).strip())
        for s in self.supports.get(uid, []):
            parts.append(f"This model supports {s}.")
        self.docs.append(_document(base, text=" ".join(parts), metadata={
            "dbt_unique_id": uid, "dbt_resource_type": "model", "columns": [c["name"] for c in cols]}))

    def derived_metric(self, uid: str) -> None:
        g = self.graph
        impl = self.implementation(uid)
        model_ref = self.ref_of(impl.models[0]) if impl.models else None
        r = defaults.metric(g, uid, self.groups, impl, model_ref)
        base = _base(g.nodes[uid], {}, kind=r.kind, revision=self.revision, default_title=r.title, roles=self.roles,
                     generated_at=self.generated_at)
        lineage_id = "lineage." + uid.split(".", 1)[-1]
        meta = {"dbt_unique_id": uid, "dbt_resource_type": "metric", "dbt_package": g.nodes[uid].get("package_name"),
                "derived_from_dbt": True, "lineage_doc_id": lineage_id, **r.metadata}
        self._link_model(impl, base["object_id"], base["version"], meta)
        self.docs.append(_document(base, text=r.text, metadata=meta))
        hops = self._hops(uid)
        if impl.models:
            tail = f" These feed {g.display(impl.models[0])}, which supports {uid}."
        else:
            tail = f" No implementing dbt model resolves for {uid}: {impl.reason}."
        text = f"Lineage for {uid} from the dbt graph: {hops or 'no upstream model, seed or source'}.{tail}"
        self.docs.append(_document(dict(base, doc_id=lineage_id, object_id=lineage_id, kind="lineage",
                                         title=f"Lineage for {r.title}", authority=95),
                                  text=text, metadata={"lineage_root": uid, "rendered_from": "lineage_edges"}))

    def derived_node(self, uid: str, governed: dict | None) -> None:
        g = self.graph
        n = g.nodes[uid]
        r = defaults.RENDERERS[n["resource_type"]](g, uid, self.groups)
        for s in self.supports.get(uid, []):
            r.sentences.append(f"This model supports {s}.")
        canon = (governed or {}).get("canon") or {}
        roles = self.roles_for(governed) if governed else self.roles
        base = _base(n, canon, kind=r.kind, revision=self.revision, default_title=r.title, roles=roles,
                     status=_version_status(g, uid) if n["resource_type"] == "model" else "approved",
                     generated_at=self.generated_at)
        meta = {"dbt_unique_id": uid, "dbt_resource_type": n["resource_type"],
                "dbt_package": n.get("package_name"), "derived_from_dbt": True, **r.metadata}
        self.docs.append(_document(base, text=r.text, metadata=meta))


def documents_from_artifacts(
    governed: Iterable[dict],
    nodes: Iterable[dict],
    edges: Iterable[dict],
    freshness: Iterable[dict],
    *,
    revision: str,
    freshness_observed_at: str | None = None,
    default_roles: Iterable[str] | None = None,
    groups: Mapping[str, Mapping[str, Any]] | None = None,
    artifacts: str = "dbt artifacts",
    generated_at: str | None = None,
) -> list[Document]:
    """Render dbt nodes as registry documents (the rule is in the module doc). `artifacts` names the
    folder in errors; `groups` is `ArtifactBundle.groups` (group owners); `generated_at` is the
    manifest's metadata.generated_at, the publication time of nodes that declare no valid_from."""
    nodes = list(nodes)
    graph = NodeGraph(nodes, edges)
    roles = _check_default_roles(default_roles)
    render = _Render(list(governed), graph, revision=revision, roles=roles, groups=groups or {}, artifacts=artifacts,
                     generated_at=generated_at)
    docs = render.run()
    if not docs:
        raise CanonInputError(artifacts, f"{len(nodes)} nodes, 0 evidence documents because "
                                         f"{_why_none(graph, roles)}", field="default_roles" if roles is None else None)
    seen_roles = sorted({r for d in docs for r in d.allowed_roles})
    snapshot = freshness_document(list(freshness), observed_at=freshness_observed_at, roles=seen_roles,
                                  revision=revision)
    if snapshot is not None:
        docs.append(snapshot)
    return docs


def _why_none(graph: NodeGraph, roles: tuple[str, ...] | None) -> str:
    if not graph.nodes:
        return "the manifest lists no nodes"
    if roles is None:
        return ("no metric, model or other rendered node carries meta.canon and default_roles is not set: "
                "configure default_roles (who may read evidence without meta.canon.allowed_roles) to render every "
                "metric, model and source")
    return ("none of them is a metric, semantic model, model, seed, snapshot, source, exposure or saved query "
            "(tests, analyses and operations are not evidence)")


def documents_from_bundle(bundle, *, default_roles: Iterable[str] | None = None,
                          freshness_observed_at: str | None = None) -> list[Document]:
    """`documents_from_artifacts` for an `ArtifactBundle` (canon.sources.dbt.artifacts.read_artifacts)."""
    return documents_from_artifacts(
        bundle.governed, bundle.nodes.to_pylist(), bundle.edges.to_pylist(), bundle.freshness,
        revision=bundle.revision, freshness_observed_at=freshness_observed_at, default_roles=default_roles,
        groups=bundle.groups, artifacts=bundle.folder or "dbt artifacts", generated_at=bundle.generated_at)


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
