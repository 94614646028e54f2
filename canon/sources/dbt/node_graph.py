"""The dbt graph as the document renderer reads it: nodes by id, model-level
parents and children, the tests attached to each table, which semantic model
defines each measure, and — the point of it — which model implements a metric.

A metric's implementing model comes from the graph, never from names: its
measures (`type_params.measure`, `input_measures`, a conversion's base and
conversion measures, or those of the metrics it is built from) are defined by
semantic models, and each semantic model's parent model (dbt's
`depends_on`, else its `node_relation`, already resolved into
`lineage_edges` by `canon.sources.dbt.manifest.model_level_edges`) is the
implementing model version. A dbt <= 1.5 metric (`calculation_method`) names
its model directly. When nothing resolves, `implementing` says why instead of
guessing.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

TABLE_TYPES = ("model", "seed", "snapshot")
# Parents that a lineage hop or a raw-source list shows: relations, not semantic objects or tests.
RELATION_TYPES = ("source", "model", "seed", "snapshot")
_REF = re.compile(r"""(?:ref|source)\(\s*['"]([^'"]+)['"](?:\s*,\s*['"]([^'"]+)['"])?""")


def loads(value: Any, default: Any) -> Any:
    """A *_json column, or `default` when it is empty or not JSON."""
    if not value:
        return default
    try:
        return json.loads(value)
    except (TypeError, ValueError):
        return default


@dataclass
class Implementation:
    """The model(s) a metric runs on, through which semantic models, or why none resolves."""

    models: list[str] = field(default_factory=list)            # model unique ids, first = the primary one
    semantic_models: list[str] = field(default_factory=list)
    measures: list[str] = field(default_factory=list)
    reason: str | None = None                                  # set when `models` is empty


@dataclass
class TableTests:
    """The data tests attached to one table, by kind."""

    unique: list[str] = field(default_factory=list)
    not_null: list[str] = field(default_factory=list)
    combinations: list[list[str]] = field(default_factory=list)   # dbt_utils.unique_combination_of_columns
    other: dict[str, list[str]] = field(default_factory=dict)     # test name → columns ("" = the table)


class NodeGraph:
    """Indexes over the dbt_nodes rows and model-level lineage_edges, built once per render."""

    def __init__(self, nodes: Iterable[Mapping[str, Any]], edges: Iterable[Mapping[str, Any]]):
        self.nodes: dict[str, Mapping[str, Any]] = {n["unique_id"]: n for n in nodes}
        self.parents: dict[str, list[str]] = {}
        self.children: dict[str, list[str]] = {}
        for e in edges:
            if e.get("edge_type", "model") == "model":
                self.parents.setdefault(e["child"], []).append(e["parent"])
                self.children.setdefault(e["parent"], []).append(e["child"])
        for m in (self.parents, self.children):
            for k in m:
                m[k] = sorted(set(m[k]))
        self.definitions = {uid: loads(n.get("definition_json"), {}) for uid, n in self.nodes.items()
                            if n.get("definition_json")}
        self.measure_owner: dict[str, str] = {}     # measure name → semantic model unique id
        self.measure_def: dict[str, Mapping[str, Any]] = {}   # measure name → its definition
        self.semantic_of_model: dict[str, list[str]] = {}
        for uid, n in sorted(self.nodes.items()):
            if n.get("resource_type") != "semantic_model":
                continue
            for m in self.definitions.get(uid, {}).get("measures") or ():
                if isinstance(m, dict) and m.get("name") and str(m["name"]) not in self.measure_owner:
                    self.measure_owner[str(m["name"])] = uid
                    self.measure_def[str(m["name"])] = m
            for p in self.parents_of(uid, ("model",)):
                self.semantic_of_model.setdefault(p, []).append(uid)
        self.metric_by_name = {str(n.get("name")): uid for uid, n in sorted(self.nodes.items())
                               if n.get("resource_type") == "metric"}
        self._tests: dict[str, TableTests] | None = None
        self._roots: dict[str, tuple[str, ...]] = {}

    # ------------------------------------------------------------ basic lookups

    def type_of(self, uid: str) -> str | None:
        n = self.nodes.get(uid)
        return n.get("resource_type") if n else None

    def parents_of(self, uid: str, types: Iterable[str] | None = None) -> list[str]:
        ps = self.parents.get(uid, [])
        return [p for p in ps if types is None or self.type_of(p) in types]

    def children_of(self, uid: str, types: Iterable[str] | None = None) -> list[str]:
        cs = self.children.get(uid, [])
        return [c for c in cs if types is None or self.type_of(c) in types]

    def display(self, uid: str) -> str:
        """How lineage text names a node: a source by its relation, a model by name (and version)."""
        n = self.nodes.get(uid) or {}
        if n.get("resource_type") == "source":
            return n.get("relation_name") or uid
        if n.get("resource_type") == "model":
            return f"{n['name']} v{n['version']}" if n.get("version") else n.get("name", uid)
        if n.get("resource_type") in ("seed", "snapshot"):
            return n.get("name") or uid
        return uid

    def upstream(self, start: str) -> tuple[list[tuple[str, str]], set[str]]:
        """Every model-level edge above `start` (breadth first, parents sorted) and the nodes reached."""
        seen, edges, queue = {start}, [], deque([start])
        while queue:
            node = queue.popleft()
            for p in self.parents.get(node, []):
                edges.append((p, node))
                if p not in seen:
                    seen.add(p)
                    queue.append(p)
        return edges, seen

    def roots(self, uid: str) -> tuple[str, ...]:
        """The sources and seeds at the top of `uid`'s lineage (memoised: tuva has 868 models). A model
        that reads nothing (`select 1`) is no raw source, so it adds none."""
        got = self._roots.get(uid)
        if got is not None:
            return got
        self._roots[uid] = ()   # a cycle (never in a valid manifest) ends here instead of recursing forever
        found: set[str] = set()
        for p in self.parents_of(uid, RELATION_TYPES):
            if self.type_of(p) in ("source", "seed"):
                found.add(p)
            else:
                found.update(self.roots(p))
        self._roots[uid] = tuple(sorted(found))
        return self._roots[uid]

    # ------------------------------------------------------------ tests on tables

    def tests_of(self, uid: str) -> TableTests:
        if self._tests is None:
            self._tests = self._index_tests()
        return self._tests.get(uid) or TableTests()

    def _index_tests(self) -> dict[str, TableTests]:
        by_table: dict[str, TableTests] = {}
        by_name = {(n.get("resource_type"), str(n.get("name"))): uid for uid, n in self.nodes.items()
                   if n.get("resource_type") in TABLE_TYPES}
        for uid, n in sorted(self.nodes.items()):
            if n.get("resource_type") != "test":
                continue
            d = self.definitions.get(uid, {})
            meta = d.get("test_metadata") if isinstance(d.get("test_metadata"), dict) else {}
            name = str(meta.get("name") or "")
            if not name:
                continue   # a singular (SQL file) test says nothing structured
            kwargs = meta.get("kwargs") if isinstance(meta.get("kwargs"), dict) else {}
            table = self._tested_table(uid, d, kwargs, by_name)
            if table is None:
                continue
            t = by_table.setdefault(table, TableTests())
            column = d.get("column_name") or kwargs.get("column_name")
            if name == "unique" and column:
                t.unique.append(str(column))
            elif name == "not_null" and column:
                t.not_null.append(str(column))
            elif name == "unique_combination_of_columns" and isinstance(kwargs.get("combination_of_columns"), list):
                t.combinations.append([str(c) for c in kwargs["combination_of_columns"]])
            else:
                t.other.setdefault(name, []).append(str(column or ""))
        return by_table

    def _tested_table(self, uid: str, d: Mapping[str, Any], kwargs: Mapping[str, Any],
                      by_name: Mapping[tuple[str, str], str]) -> str | None:
        attached = d.get("attached_node")
        if isinstance(attached, str) and attached in self.nodes:
            return attached
        # Before dbt 1.5 there is no attached_node: the tested relation is kwargs.model's ref, else the only parent.
        m = _REF.search(str(kwargs.get("model") or ""))
        if m and not m.group(2):
            for rtype in TABLE_TYPES:
                hit = by_name.get((rtype, m.group(1)))
                if hit:
                    return hit
        parents = self.parents_of(uid, TABLE_TYPES + ("source",))
        return parents[0] if len(parents) == 1 else None

    # ------------------------------------------------------------ metrics → models

    def metric_measures(self, uid: str, _seen: set[str] | None = None) -> list[str]:
        """The measures a metric reads, in the order dbt lists them (its input metrics' for derived ones)."""
        seen = _seen if _seen is not None else set()
        if uid in seen:
            return []
        seen.add(uid)
        tp = self.definitions.get(uid, {}).get("type_params") or {}
        names: list[str] = []

        def add(ref: Any) -> None:
            name = ref.get("name") if isinstance(ref, dict) else ref
            if isinstance(name, str) and name and name not in names:
                names.append(name)

        add(tp.get("measure"))
        for ref in tp.get("input_measures") or ():
            add(ref)
        conv = tp.get("conversion_type_params") or {}
        add(conv.get("base_measure"))
        add(conv.get("conversion_measure"))
        if not names:  # derived and ratio metrics of schemas without input_measures: their input metrics'
            inputs = [tp.get("numerator"), tp.get("denominator"), *(tp.get("metrics") or ())]
            for ref in inputs:
                name = ref.get("name") if isinstance(ref, dict) else ref
                other = self.metric_by_name.get(str(name)) if name else None
                for m in self.metric_measures(other, seen) if other else ():
                    add(m)
        return names

    def implementing(self, uid: str) -> Implementation:
        """The model version(s) implementing metric `uid`, from the graph (see the module doc)."""
        d = self.definitions.get(uid, {})
        measures = self.metric_measures(uid)
        semantic: list[str] = []
        unowned: list[str] = []
        for m in measures:
            owner = self.measure_owner.get(m)
            if owner is None:
                unowned.append(m)
            elif owner not in semantic:
                semantic.append(owner)
        if not measures:
            # A metric defined on a semantic model without measures (newer specs): its semantic-model ancestors.
            semantic = [s for s in self._ancestors_through_metrics(uid) if self.type_of(s) == "semantic_model"]
        models: list[str] = []
        for s in semantic:
            for p in self.parents_of(s, ("model",)):
                if p not in models:
                    models.append(p)
        if not models and ("calculation_method" in d or "model" in d):
            # dbt <= 1.5: the metric's own model parent(s), through the metrics it is built from.
            models = [m for m in self._ancestors_through_metrics(uid) if self.type_of(m) in TABLE_TYPES]
        if models:
            return Implementation(models, semantic, measures)
        if unowned:
            why = f"no semantic model in the manifest defines its measure(s) {', '.join(unowned)}"
        elif semantic:
            why = f"semantic model(s) {', '.join(semantic)} name no dbt model the manifest holds"
        elif measures:
            why = "its measures resolve to no semantic model"
        else:
            why = "it names no measure, semantic model or model"
        return Implementation([], semantic, measures, reason=why)

    def _ancestors_through_metrics(self, uid: str) -> list[str]:
        """Direct parents of `uid`, following metric parents upward (a derived metric's inputs), in order."""
        out: list[str] = []
        seen = {uid}
        queue = deque([uid])
        while queue:
            node = queue.popleft()
            for p in self.parents.get(node, []):
                if p in seen:
                    continue
                seen.add(p)
                if self.type_of(p) == "metric":
                    queue.append(p)
                else:
                    out.append(p)
        return out

    def versions_of(self, model_uid: str) -> dict[str, str]:
        """{version: unique id} of every version of the model `model_uid` is a version of."""
        n = self.nodes.get(model_uid) or {}
        name, pkg = n.get("name"), n.get("package_name")
        return {str(m.get("version")): uid for uid, m in self.nodes.items()
                if m.get("resource_type") == "model" and m.get("name") == name and m.get("package_name") == pkg
                and m.get("version") is not None}
