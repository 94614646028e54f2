"""Compiling one simple metric into plain SQL over one half-open date window.

    time_dim >= start AND time_dim < end

SQL text inside the semantic manifest (measure and dimension `expr`) comes from
the governed dbt project and is embedded as MetricFlow would embed it; filter
text is re-rendered from its parsed parts (canon/sources/dbt/semantic/filters.py).

The SQL is written for the warehouse's dialect: DuckDB's, or for every other
adapter the standard forms PostgreSQL accepts (double-quoted identifiers,
`date '…'` literals, `date_trunc('month', x)`, `percentile_cont(p) within group
(order by x)` where DuckDB has `median` and `quantile_cont`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from canon.sources.dbt.semantic.errors import NotComputable
from canon.sources.dbt.semantic.filters import parse_filter
from canon.sources.dbt.semantic.manifest import SemanticManifest


def quote_ident(name: str) -> str:
    """A DuckDB or PostgreSQL identifier, always quoted (embedded quotes doubled)."""
    return '"' + str(name).replace('"', '""') + '"'


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def column_sql(expr: str | None, name: str) -> str:
    """A measure/dimension expression: a bare column name is quoted, SQL stays as written."""
    text = (expr if expr not in (None, "") else name)
    text = str(text).strip()
    if _IDENT.fullmatch(text):
        return quote_ident(text)
    return f"({text})"


def query_id_of(sql: str) -> str:
    """A short, content-derived id of the SQL text (same SQL → same id)."""
    return "q_" + hashlib.sha256(sql.encode("utf-8")).hexdigest()[:16]



@dataclass
class MetricQuery:
    """One compiled query (a simple metric, or one input of a derived/ratio metric)."""

    metric: str
    sql: str
    relation: str
    time_dimension: str
    fill_nulls_with: float | None = None
    catalog: str = ""        # the relation's catalog (node_relation.database), "" when dbt names none


_AGG = {
    "sum": "sum({e})",
    "count": "count({e})",
    "count_distinct": "count(distinct {e})",
    "average": "avg({e})",
    "min": "min({e})",
    "max": "max({e})",
    "sum_boolean": "sum(cast({e} as integer))",
    "median": "median({e})",
}
# The standard ordered-set aggregates (PostgreSQL and most warehouses) where DuckDB has its own names.
_STANDARD_AGG = {"median": "percentile_cont(0.5) within group (order by {e})"}


def _percentile(dialect: str, expr: str, p: float, discrete: bool) -> str:
    if dialect == "duckdb":
        return f"{'quantile_disc' if discrete else 'quantile_cont'}({expr}, {p!r})"
    return f"{'percentile_disc' if discrete else 'percentile_cont'}({p!r}) within group (order by {expr})"


def compile_simple(manifest: SemanticManifest, warehouse, name: str, measure_ref: dict,
                   start: dt.date, end: dt.date, filters: tuple[str, ...]) -> MetricQuery:
    """One simple metric over [start, end) as a single aggregate query; raises NotComputable.

    `warehouse` is a canon.sources.dbt.semantic.warehouse Warehouse (its catalogs and
    dialect), or the path of a DuckDB file."""
    dialect = "duckdb" if isinstance(warehouse, (str, Path)) else warehouse.dialect
    mname = measure_ref.get("name")
    if not mname or mname not in manifest.measures:
        raise NotComputable(f"metric {name!r}: measure {mname!r} is not in any semantic model")
    measure, sm = manifest.measures[mname]
    if measure.get("non_additive_dimension"):
        raise NotComputable(f"metric {name!r}: measure {mname!r} is semi-additive (non_additive_dimension)")
    agg = str(measure.get("agg") or "").lower()
    expr = column_sql(measure.get("expr"), mname)
    if agg in _AGG:
        agg_sql = (_AGG if dialect == "duckdb" else {**_AGG, **_STANDARD_AGG})[agg].format(e=expr)
    elif agg == "percentile":
        params = measure.get("agg_params") or {}
        p = params.get("percentile")
        if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0 <= p <= 1:
            raise NotComputable(f"metric {name!r}: percentile measure {mname!r} lacks a percentile in [0, 1]")
        agg_sql = _percentile(dialect, expr, float(p), bool(params.get("use_discrete_percentile")))
    else:
        raise NotComputable(f"metric {name!r}: aggregation {agg!r} of measure {mname!r} is not supported")

    dims = {d["name"]: d for d in sm.get("dimensions") or []}
    time_name = measure.get("agg_time_dimension") or (sm.get("defaults") or {}).get("agg_time_dimension")
    if not time_name or time_name not in dims:
        raise NotComputable(f"metric {name!r}: semantic model {sm['name']!r} has no agg_time_dimension {time_name!r}")
    if str(dims[time_name].get("type")).lower() != "time":
        raise NotComputable(f"metric {name!r}: agg_time_dimension {time_name!r} is not a time dimension")
    time_sql = column_sql(dims[time_name].get("expr"), time_name)

    relation = relation_of(warehouse, name, sm)
    where = [f"{time_sql} >= date '{start.isoformat()}'", f"{time_sql} < date '{end.isoformat()}'"]
    for template in filters:
        for term in parse_filter(template):
            col = filter_column(name, sm, dims, term.ref, time_name)
            if term.grain and term.grain != "day":
                col = f"date_trunc('{term.grain}', {col})"
            where.append(f"{col} {term.sql_tail}")
    sql = (f"select {agg_sql} as metric_value, count(*) as rows_scanned\n"
           f"from {relation}\n"
           f"where " + "\n  and ".join(where))
    fill = measure_ref.get("fill_nulls_with")
    return MetricQuery(metric=name, sql=sql, relation=relation, time_dimension=time_name,
                       catalog=str((sm.get("node_relation") or {}).get("database") or ""),
                       fill_nulls_with=float(fill) if isinstance(fill, (int, float)) and not isinstance(fill, bool) else None)

def filter_column(metric: str, sm: dict, dims: dict, ref: str, time_name: str) -> str:
    if ref == "metric_time":
        return column_sql(dims[time_name].get("expr"), time_name)
    entity, sep, dim = ref.rpartition("__")
    entities = {e["name"] for e in sm.get("entities") or []}
    if sm.get("primary_entity"):
        entities.add(sm["primary_entity"])
    if not sep or dim not in dims or entity not in entities:
        raise NotComputable(
            f"metric {metric!r}: filter dimension {ref!r} is not a local dimension of semantic model "
            f"{sm['name']!r} (joins are not computed in process)")
    return column_sql(dims[dim].get("expr"), dim)

def relation_of(warehouse, metric: str, sm: dict) -> str:
    """The semantic model's relation in the warehouse: `schema.alias` in the connection's own
    catalog (the SQL the demo always ran), `catalog.schema.alias` in another catalog the
    target attaches (DuckDB's `attach`); a catalog the target does not reach is NotComputable."""
    rel = sm.get("node_relation") or {}
    schema, alias = rel.get("schema_name"), rel.get("alias")
    if not schema or not alias:
        raise NotComputable(f"metric {metric!r}: semantic model {sm['name']!r} has no node_relation")
    database = rel.get("database")
    if isinstance(warehouse, (str, Path)):
        own, catalogs, where = Path(warehouse).stem, {Path(warehouse).stem}, f"the warehouse file {Path(warehouse).name!r}"
    else:
        own, catalogs = warehouse.catalog, warehouse.catalogs
        where = f"the warehouse's catalogs ({', '.join(sorted(catalogs))})"
    if database and database not in catalogs:
        raise NotComputable(f"metric {metric!r}: relation lives in catalog {database!r}, not in {where}")
    if database and database != own:
        return f"{quote_ident(database)}.{quote_ident(schema)}.{quote_ident(alias)}"
    return f"{quote_ident(schema)}.{quote_ident(alias)}"
