"""The text and metadata Canon derives from dbt itself for a node that carries
no `meta.canon`: what dbt already says about it, in sentences an answer can
cite. One function per resource type; `canon.sources.dbt.documents` adds the
registry keys (ids, status, roles) and the links between documents.

Everything here is a function of the artifacts only (no clock, no order but
dbt's and sorted ids), so the same manifest renders the same text, the same
content hash and the same chunk ids.

E-mail addresses (group and exposure owners) are never copied into text or
metadata: the dbt source contract allows no PII (`contracts/dbt_artifacts.yml`),
and the gate would quarantine the whole document for one address.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from canon.sources.dbt.node_graph import Implementation, NodeGraph, loads

MAX_LISTED = 40   # names listed in one sentence (upstream models, raw sources) before "and N more"


@dataclass
class Rendered:
    """One node's derived document parts."""

    kind: str
    title: str
    sentences: list[str]
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return " ".join(s for s in self.sentences if s)


def clean(text: Any) -> str:
    """One line, single spaces: dbt descriptions are YAML blocks with newlines."""
    return " ".join(str(text or "").split())


def sentence(text: str) -> str:
    text = clean(text)
    if not text:
        return ""
    return text if text[-1] in ".!?" else text + "."


def listed(names: list[str], limit: int = MAX_LISTED) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f" and {len(names) - limit} more"


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(", ", ": "), default=str)


EMAIL_ONLY = "an e-mail contact (address not copied)"


def owner_text(owner: Mapping[str, Any] | str | None) -> str | None:
    """An owner's name; an e-mail-only owner is said to exist without copying the address (see the module doc)."""
    if not owner:
        return None
    if isinstance(owner, str):
        return EMAIL_ONLY if "@" in owner else clean(owner)
    name = owner.get("name") or owner.get("owner_name")
    email = owner.get("email") or owner.get("owner_email")
    if name and "@" not in str(name):
        return clean(name)
    return EMAIL_ONLY if email or name else None


def common_facts(node: Mapping[str, Any], groups: Mapping[str, Mapping[str, Any]]) -> tuple[list[str], dict]:
    """Owner (group owner, meta.owner), group, access, tags, deprecation and file: sentences and metadata."""
    meta = loads(node.get("meta_json"), {})
    group = node.get("group_name")
    owner = owner_text(meta.get("owner")) if isinstance(meta, dict) and meta.get("owner") else None
    if owner is None and group and group in groups:
        owner = owner_text(groups[group])
    out: list[str] = []
    md: dict[str, Any] = {}
    if owner == EMAIL_ONLY and group:
        out.append(f"Owner: group {group}, whose owner is {EMAIL_ONLY}.")
        md["owner"] = f"group {group}"
    elif owner:
        out.append(f"Owner: {owner}" + (f" (group {group})." if group else "."))
        md["owner"] = owner
    elif group:
        out.append(f"Group: {group}.")
    if group:
        md["group"] = group
    if node.get("access"):
        out.append(f"Access: {node['access']}.")
        md["access"] = node["access"]
    tags = list(node.get("tags") or [])
    if tags:
        out.append(f"Tags: {', '.join(tags)}.")
        md["tags"] = tags
    if node.get("deprecation_date"):
        out.append(f"Deprecation date: {str(node['deprecation_date'])[:10]}.")
        md["deprecation_date"] = str(node["deprecation_date"])[:10]
    if node.get("original_file_path"):
        out.append(f"Defined in {node['original_file_path']}.")
    return out, md


# ---------------------------------------------------------------- metrics


def _filters(f: Any) -> list[str]:
    """dbt filters in every shape the schemas used: {where_filters: [...]}, {where_sql_template}, a list."""
    if not f:
        return []
    if isinstance(f, str):
        return [clean(f)]
    if isinstance(f, list):
        out = []
        for item in f:
            if isinstance(item, dict) and "field" in item:   # dbt <= 1.5: {field, operator, value}
                out.append(clean(f"{item.get('field')} {item.get('operator')} {item.get('value')}"))
            else:
                out.extend(_filters(item))
        return out
    if isinstance(f, dict):
        if f.get("where_filters"):
            return _filters(f["where_filters"])
        if f.get("where_sql_template"):
            return [clean(f["where_sql_template"])]
    return []


def _window(w: Any) -> str | None:
    if not w:
        return None
    if isinstance(w, dict):
        return clean(f"{w.get('count')} {w.get('granularity')}")
    return clean(w)


def _measure_text(graph: NodeGraph, ref: Any) -> str:
    name = ref.get("name") if isinstance(ref, dict) else ref
    m = graph.measure_def.get(str(name)) or {}
    agg = m.get("agg")
    expr = m.get("expr") or name
    parts = [f"the {agg} of {expr} (measure {name})" if agg else f"measure {name}"]
    if isinstance(ref, dict):
        flt = _filters(ref.get("filter"))
        if flt:
            parts.append(f"filtered by {' and '.join(flt)}")
        if ref.get("fill_nulls_with") is not None:
            parts.append(f"nulls filled with {ref['fill_nulls_with']}")
        if ref.get("join_to_timespine"):
            parts.append("joined to the time spine")
    return ", ".join(parts)


def _metric_ref(ref: Any) -> str:
    if not isinstance(ref, dict):
        return f"metric {ref}"
    text = f"metric {ref.get('name')}"
    extras = []
    if ref.get("alias"):
        extras.append(f"as {ref['alias']}")
    offset = _window(ref.get("offset_window"))
    if offset:
        extras.append(f"offset by {offset}")
    if ref.get("offset_to_grain"):
        extras.append(f"offset to the start of the {ref['offset_to_grain']}")
    flt = _filters(ref.get("filter"))
    if flt:
        extras.append(f"filtered by {' and '.join(flt)}")
    return text + (f" ({', '.join(extras)})" if extras else "")


def metric_definition(graph: NodeGraph, uid: str) -> str:
    """The formula of a metric, from type, type_params and (dbt <= 1.5) calculation_method."""
    d = graph.definitions.get(uid, {})
    tp = d.get("type_params") or {}
    mtype = d.get("type")
    if mtype == "simple":
        return _measure_text(graph, tp.get("measure")) if tp.get("measure") else \
            f"a simple metric with type_params {_compact(tp)}"
    if mtype == "ratio":
        return f"{_metric_ref(tp.get('numerator'))} divided by {_metric_ref(tp.get('denominator'))}"
    if mtype == "derived":
        inputs = "; ".join(_metric_ref(m) for m in tp.get("metrics") or ())
        return f"the expression {clean(tp.get('expr'))} over {inputs}" if inputs else f"the expression {clean(tp.get('expr'))}"
    if mtype == "cumulative":
        ctp = tp.get("cumulative_type_params") or {}
        window = _window(ctp.get("window") or tp.get("window"))
        to_date = ctp.get("grain_to_date") or tp.get("grain_to_date")
        span = (f"over a trailing window of {window}" if window else
                f"from the start of each {to_date} to date" if to_date else "over all time")
        agg = f", reported per period by its {ctp['period_agg']} value" if ctp.get("period_agg") else ""
        return f"the running total of {_measure_text(graph, tp.get('measure'))} {span}{agg}"
    if mtype == "conversion":
        cp = tp.get("conversion_type_params") or {}
        text = (f"the {cp.get('calculation') or 'conversion_rate'} from {_measure_text(graph, cp.get('base_measure'))} "
                f"to {_measure_text(graph, cp.get('conversion_measure'))} for entity {cp.get('entity')}")
        window = _window(cp.get("window"))
        if window:
            text += f" within {window}"
        props = cp.get("constant_properties") or []
        if props:
            text += ", holding " + ", ".join(clean(_compact(p)) for p in props) + " constant"
        return text
    if d.get("calculation_method"):   # dbt <= 1.5 metrics (manifest v5..v9)
        text = f"the {d['calculation_method']} of {clean(d.get('expression') or d.get('sql') or '?')}"
        if d.get("model"):
            text += f" on {clean(d['model'])}"
        if d.get("timestamp"):
            text += f", timestamped by {d['timestamp']}"
        if d.get("time_grains"):
            text += f", at time grains {', '.join(map(str, d['time_grains']))}"
        if d.get("dimensions"):
            text += f", by dimensions {', '.join(map(str, d['dimensions']))}"
        return text
    return f"a {mtype or 'metric'} with type_params {_compact(tp)}" if tp else f"a {mtype or 'metric'} metric"


def metric(graph: NodeGraph, uid: str, groups: Mapping[str, Mapping[str, Any]], impl: Implementation,
           model_ref: str | None) -> Rendered:
    """`model_ref`: how the text names the primary implementing model's evidence (its doc id), if any."""
    n = graph.nodes[uid]
    d = graph.definitions.get(uid, {})
    title = clean(n.get("label")) or n["name"]
    mtype = d.get("type") or d.get("calculation_method") or "metric"
    s = [f"dbt metric {title} ({uid}), a {mtype} metric.",
         sentence(f"Definition: {metric_definition(graph, uid)}")]
    flt = _filters(d.get("filter") or d.get("filters"))
    if flt:
        s.append(sentence(f"Filter: {' and '.join(flt)}"))
    if n.get("description"):
        s.append(sentence(f"Description: {n['description']}"))
    measures = []
    for m in impl.measures:
        spec = graph.measure_def.get(m) or {}
        owner = graph.measure_owner.get(m)
        bits = [f"{spec['agg']} of {spec.get('expr') or m}"] if spec.get("agg") else []
        bits.append(f"semantic model {graph.nodes[owner]['name']}" if owner else "no semantic model defines it")
        text = f"{m} ({', '.join(bits)})"
        if spec.get("description"):
            text += f": {clean(spec['description']).rstrip('.')}"
        measures.append(text)
    if measures:
        s.append(sentence("Measures: " + "; ".join(measures)))
    if d.get("time_granularity"):
        s.append(f"Default time granularity: {d['time_granularity']}.")
    md: dict[str, Any] = {}
    if impl.models:
        first = impl.models[0]
        via = f", through semantic model {', '.join(graph.nodes[x]['name'] for x in impl.semantic_models)}" \
            if impl.semantic_models else ""
        rel = graph.nodes[first].get("relation_name")
        s.append(f"Supporting model is {model_ref or first} (dbt model {graph.display(first)}"
                 f"{', relation ' + rel if rel else ''}){via}.")
        if len(impl.models) > 1:
            s.append(f"It also reads dbt model(s) {', '.join(graph.display(m) for m in impl.models[1:])}.")
        md["implemented_by_all"] = list(impl.models)
    else:
        s.append(f"No implementing dbt model resolves from the graph: {impl.reason}.")
        md["implementation_unresolved"] = impl.reason
    if impl.semantic_models:
        md["semantic_models"] = list(impl.semantic_models)
    if impl.measures:
        md["measures"] = list(impl.measures)
    facts, fmd = common_facts(n, groups)
    s += facts
    md.update(fmd, metric_type=mtype)
    if n.get("label") and clean(n["label"]).lower() != str(n["name"]).replace("_", " ").lower():
        md["aliases"] = [clean(n["label"])]
    return Rendered("metric_definition", title, s, md)


# ---------------------------------------------------------------- tables: models, seeds, snapshots, sources


def _constraint_columns(graph: NodeGraph, uid: str) -> list[str]:
    d = graph.definitions.get(uid, {})
    for c in d.get("constraints") or ():
        if isinstance(c, dict) and c.get("type") == "primary_key" and c.get("columns"):
            return [str(x) for x in c["columns"]]
    return [col for col, cs in (d.get("column_constraints") or {}).items()
            if any(isinstance(c, dict) and c.get("type") == "primary_key" for c in cs)]


def _primary_entity(graph: NodeGraph, sm_uid: str) -> tuple[str, str] | None:
    """(entity name, key expression) of a semantic model's primary entity."""
    d = graph.definitions.get(sm_uid, {})
    for e in d.get("entities") or ():
        if isinstance(e, dict) and e.get("type") == "primary" and e.get("name"):
            return str(e["name"]), str(e.get("expr") or e["name"])
    if d.get("primary_entity"):
        return str(d["primary_entity"]), ""
    return None


def grain_and_key(graph: NodeGraph, uid: str) -> tuple[str | None, str | None, list[str], str]:
    """(grain, primary-key source, key columns, sentences) from the semantic model's primary entity, the
    primary_key constraint, and the unique / not_null tests — the first that says something, in that order
    for the grain; constraints before entities before tests for the key."""
    tests = graph.tests_of(uid)
    key: list[str] = []
    how = None
    constrained = _constraint_columns(graph, uid)
    entity = next((e for s in graph.semantic_of_model.get(uid, []) for e in [_primary_entity(graph, s)] if e), None)
    sm_name = next((graph.nodes[s]["name"] for s in graph.semantic_of_model.get(uid, []) if _primary_entity(graph, s)),
                   None)
    both = [c for c in tests.unique if c in tests.not_null]
    unique_key = graph.definitions.get(uid, {}).get("unique_key") if graph.type_of(uid) == "snapshot" else None
    if constrained:
        key, how = constrained, "its primary_key constraint"
    elif unique_key:
        key = [str(k) for k in unique_key] if isinstance(unique_key, list) else [str(unique_key)]
        how = "its snapshot unique_key"
    elif entity and entity[1]:
        key, how = [entity[1]], f"the primary entity {entity[0]} of semantic model {sm_name}"
    elif len(both) == 1:
        key, how = both, "its unique and not_null tests"
    elif tests.combinations:
        key, how = tests.combinations[0], "its unique_combination_of_columns test"
    elif len(tests.unique) == 1:
        key, how = list(tests.unique), "its unique test (no not_null test)"
    if entity:
        grain = f"one row per {entity[0]} (the primary entity of semantic model {sm_name})"
    elif unique_key and not constrained:
        grain = (f"one row per {', '.join(key)} and change (a snapshot keeps every version of a row, "
                 "between dbt_valid_from and dbt_valid_to)")
    elif key:
        grain = (f"one row per {key[0]}" if len(key) == 1 else f"one row per combination of {', '.join(key)}") + \
            f" (from {how})"
    else:
        grain = None
    out = []
    out.append(sentence(f"Grain: {grain}") if grain else
               "Grain: not declared in dbt (no semantic model entity, primary_key constraint or unique test).")
    if key:
        out.append(sentence(f"Primary key: {', '.join(key)} (from {how})"))
    elif len(both) > 1:
        out.append(sentence(f"Unique and not-null columns: {', '.join(both)}"))
    return grain, how, key, " ".join(out)


def _columns(node: Mapping[str, Any]) -> list[dict]:
    cols = loads(node.get("columns_json"), [])
    return [c for c in cols if isinstance(c, dict) and c.get("name")]


def _column_sentence(cols: list[dict]) -> str:
    parts = []
    for c in cols:
        text = str(c["name"]) + (f" ({c['data_type']})" if c.get("data_type") else "")
        if c.get("description"):
            text += f": {clean(c['description']).rstrip('.')}"
        parts.append(text)
    return sentence("Columns: " + "; ".join(parts)) if parts else ""


def _tests_sentence(graph: NodeGraph, uid: str) -> str:
    t = graph.tests_of(uid)
    parts = []
    if t.unique:
        parts.append(f"unique on {', '.join(sorted(set(t.unique)))}")
    if t.not_null:
        parts.append(f"not_null on {', '.join(sorted(set(t.not_null)))}")
    for combo in t.combinations:
        parts.append(f"unique combination of {', '.join(combo)}")
    for name, cols in sorted(t.other.items()):
        named = sorted({c for c in cols if c})
        parts.append(f"{name} on {', '.join(named)}" if named else name)
    return sentence("Tests: " + "; ".join(parts)) if parts else ""


def _lineage_sentences(graph: NodeGraph, uid: str) -> list[str]:
    out = []
    parents = [graph.display(p) for p in graph.parents_of(uid, ("source", "model", "seed", "snapshot"))]
    if parents:
        out.append(sentence(f"Built from {listed(parents)}"))
    roots = [graph.display(r) for r in graph.roots(uid)]
    if roots and roots != parents:
        out.append(sentence(f"Raw sources upstream: {listed(roots)}"))
    used = [graph.display(c) for c in graph.children_of(uid, ("model", "seed", "snapshot"))]
    if used:
        out.append(sentence(f"Used by {listed(used)}"))
    sms = graph.children_of(uid, ("semantic_model",))
    if sms:
        out.append(sentence(f"Semantic models on it: {', '.join(graph.nodes[s]['name'] for s in sms)}"))
    exposures = graph.children_of(uid, ("exposure",))
    if exposures:
        out.append(sentence(f"Exposures that depend on it: {', '.join(graph.nodes[e]['name'] for e in exposures)}"))
    return out


def table(graph: NodeGraph, uid: str, groups: Mapping[str, Mapping[str, Any]]) -> Rendered:
    """A model version, a seed or a snapshot."""
    n = graph.nodes[uid]
    rtype = n["resource_type"]
    version = n.get("version")
    title = f"{n['name']} v{version}" if version else n["name"]
    rel = n.get("relation_name")
    mat = n.get("materialized")
    head = f"dbt {rtype} {title} ({uid})"
    head += f", relation {rel}" if rel else (", ephemeral (no relation)" if mat == "ephemeral" else "")
    head += f", materialized as {mat}" if mat and mat != "ephemeral" and rtype == "model" else ""
    s = [head + "."]
    md: dict[str, Any] = {}
    if version:
        latest = n.get("latest_version")
        s.append(f"Version {version} of {n['name']}" + (f"; the latest version is {latest}." if latest else "."))
        md.update(version=str(version), latest_version=latest)
    grain, how, key, sentences = grain_and_key(graph, uid)
    s.append(sentences)
    d = graph.definitions.get(uid, {})
    if rtype == "snapshot" and d.get("strategy"):
        s.append(f"Snapshot strategy: {d['strategy']}.")
    if n.get("contract_enforced"):
        s.append("Its contract is enforced (dbt checks column names and types at build).")
    if n.get("description"):
        s.append(sentence(f"Description: {n['description']}"))
    cols = _columns(n)
    s.append(_column_sentence(cols))
    s.append(_tests_sentence(graph, uid))
    s += _lineage_sentences(graph, uid)
    facts, fmd = common_facts(n, groups)
    s += facts
    md.update(fmd)
    md.update(columns=[c["name"] for c in cols])
    if grain:
        md["grain"] = grain
    if key:
        md["primary_key"] = key
        md["primary_key_from"] = how
    if rel:
        md["relation_name"] = rel
    return Rendered("model_schema", title, s, md)


def source(graph: NodeGraph, uid: str, groups: Mapping[str, Mapping[str, Any]]) -> Rendered:
    n = graph.nodes[uid]
    d = graph.definitions.get(uid, {})
    title = f"{d.get('source_name')}.{n['name']}" if d.get("source_name") else n["name"]
    rel = n.get("relation_name")
    s = [f"dbt source {title} ({uid})" + (f", relation {rel}." if rel else ".")]
    if d.get("loader"):
        s.append(f"Loaded by {d['loader']}.")
    fresh = d.get("freshness") if isinstance(d.get("freshness"), dict) else {}
    limits = [f"{word} after {fresh[k]['count']} {fresh[k].get('period')}{'' if fresh[k]['count'] == 1 else 's'}"
              for k, word in (("warn_after", "warn"), ("error_after", "error"))
              if isinstance(fresh.get(k), dict) and fresh[k].get("count")]
    if d.get("loaded_at_field") or limits:
        s.append(sentence("Freshness: " + ", ".join(
            ([f"loaded_at_field {d['loaded_at_field']}"] if d.get("loaded_at_field") else []) + limits)))
    if d.get("source_description"):
        s.append(sentence(f"Source {d.get('source_name')}: {d['source_description']}"))
    if n.get("description"):
        s.append(sentence(f"Description: {n['description']}"))
    grain, how, key, sentences = grain_and_key(graph, uid)
    if key:
        s.append(sentences)
    cols = _columns(n)
    s.append(_column_sentence(cols))
    s.append(_tests_sentence(graph, uid))
    used = [graph.display(c) for c in graph.children_of(uid, ("model", "seed", "snapshot"))]
    if used:
        s.append(sentence(f"Feeds {listed(used)}"))
    facts, md = common_facts(n, groups)
    s += facts
    md.update(columns=[c["name"] for c in cols])
    if rel:
        md["relation_name"] = rel
    if key:
        md["primary_key"] = key
    return Rendered("source_table", title, s, md)


# ---------------------------------------------------------------- semantic models, exposures, saved queries


def semantic_model(graph: NodeGraph, uid: str, groups: Mapping[str, Mapping[str, Any]]) -> Rendered:
    n = graph.nodes[uid]
    d = graph.definitions.get(uid, {})
    title = clean(n.get("label")) or n["name"]
    models = graph.parents_of(uid, ("model",))
    rel = n.get("relation_name")
    on = f" on dbt model {graph.display(models[0])} ({models[0]}" + (f", relation {rel})" if rel else ")") \
        if models else (f" on relation {rel}" if rel else "")
    s = [f"dbt semantic model {title} ({uid}){on}."]
    entity = _primary_entity(graph, uid)
    md: dict[str, Any] = {}
    if entity:
        s.append(f"Grain: one row per {entity[0]} (its primary entity" + (f", key {entity[1]})." if entity[1] else ")."))
        md["grain"] = f"one row per {entity[0]}"
    ents = [f"{e.get('name')} ({e.get('type')}{', ' + str(e['expr']) if e.get('expr') else ''})"
            for e in d.get("entities") or () if isinstance(e, dict)]
    if ents:
        s.append(sentence("Entities: " + "; ".join(ents)))
    dims = []
    for x in d.get("dimensions") or ():
        if not isinstance(x, dict):
            continue
        gran = (x.get("type_params") or {}).get("time_granularity") if isinstance(x.get("type_params"), dict) else None
        dims.append(f"{x.get('name')} ({x.get('type')}{', ' + gran if gran else ''})")
    if dims:
        s.append(sentence("Dimensions: " + "; ".join(dims)))
    ms = []
    for m in d.get("measures") or ():
        if isinstance(m, dict):
            text = f"{m.get('name')} ({m.get('agg')} of {m.get('expr') or m.get('name')})"
            if m.get("description"):
                text += f": {clean(m['description']).rstrip('.')}"
            ms.append(text)
    if ms:
        s.append(sentence("Measures: " + "; ".join(ms)))
    agg_time = (d.get("defaults") or {}).get("agg_time_dimension") if isinstance(d.get("defaults"), dict) else None
    if agg_time:
        s.append(f"Default time dimension: {agg_time}.")
    if n.get("description"):
        s.append(sentence(f"Description: {n['description']}"))
    metrics = [graph.nodes[c]["name"] for c in graph.children_of(uid, ("metric",))]
    if metrics:
        s.append(sentence(f"Metrics on it: {listed(metrics)}"))
    facts, fmd = common_facts(n, groups)
    s += facts
    md.update(fmd)
    if models:
        md["model"] = models[0]
    return Rendered("semantic_model", title, s, md)


def exposure(graph: NodeGraph, uid: str, groups: Mapping[str, Mapping[str, Any]]) -> Rendered:
    n = graph.nodes[uid]
    d = graph.definitions.get(uid, {})
    title = clean(n.get("label")) or n["name"]
    kind = d.get("type") or "exposure"
    s = [f"dbt exposure {title} ({uid}), a {kind}" + (f" of maturity {d['maturity']}." if d.get("maturity") else ".")]
    owner = owner_text(d.get("owner") if isinstance(d.get("owner"), dict) else None)
    md: dict[str, Any] = {}
    if owner:
        s.append(f"Owned by {owner}.")
        md["owner"] = owner
    if d.get("url"):
        s.append(f"URL: {clean(d['url'])}.")
    deps = [graph.display(p) for p in graph.parents_of(uid)]
    if deps:
        s.append(sentence(f"It depends on {listed(deps)}"))
    roots = [graph.display(r) for r in graph.roots(uid)]
    if roots:
        s.append(sentence(f"Raw sources upstream: {listed(roots)}"))
    if n.get("description"):
        s.append(sentence(f"Description: {n['description']}"))
    facts, fmd = common_facts(n, groups)
    s += facts
    md.update({k: v for k, v in fmd.items() if k not in md})
    return Rendered("exposure", title, s, md)


def saved_query(graph: NodeGraph, uid: str, groups: Mapping[str, Mapping[str, Any]]) -> Rendered:
    n = graph.nodes[uid]
    d = graph.definitions.get(uid, {})
    title = clean(n.get("label")) or n["name"]
    q = d.get("query_params") if isinstance(d.get("query_params"), dict) else {}
    s = [f"dbt saved query {title} ({uid})."]
    if q.get("metrics"):
        s.append(sentence(f"Metrics: {', '.join(map(str, q['metrics']))}"))
    if q.get("group_by"):
        s.append(sentence(f"Grouped by {', '.join(map(str, q['group_by']))}"))
    where = _filters(q.get("where"))
    if where:
        s.append(sentence(f"Where {' and '.join(where)}"))
    if q.get("order_by"):
        s.append(sentence(f"Ordered by {', '.join(map(str, q['order_by']))}"))
    if q.get("limit"):
        s.append(f"Limit {q['limit']}.")
    exports = []
    for e in d.get("exports") or ():
        if isinstance(e, dict):
            cfg = e.get("config") if isinstance(e.get("config"), dict) else {}
            target = ".".join(str(x) for x in (cfg.get("database"), cfg.get("schema_name"), cfg.get("alias")) if x)
            exports.append(f"{e.get('name')} as {cfg.get('export_as') or '?'}" + (f" {target}" if target else ""))
    if exports:
        s.append(sentence(f"Exports: {'; '.join(exports)}"))
    if n.get("description"):
        s.append(sentence(f"Description: {n['description']}"))
    facts, md = common_facts(n, groups)
    s += facts
    return Rendered("saved_query", title, s, md)


RENDERERS = {"model": table, "seed": table, "snapshot": table, "source": source,
             "semantic_model": semantic_model, "exposure": exposure, "saved_query": saved_query}
