"""Governed metric values: the number behind a resolved metric definition.

Canon resolves the governing definition first (a `Document` whose metadata names
the dbt metric, `dbt_unique_id = 'metric.<package>.<name>'`), then asks the
semantic layer for the number. This module is that semantic layer, in process:
it reads dbt's `semantic_manifest.json` (the same MetricFlow spec `mf query`
reads) and compiles one metric over one half-open date window

    time_dim >= start AND time_dim < end

into plain SQL against the dbt-built DuckDB warehouse, opened read-only for the
query and closed straight after. The SQL it ran is returned as evidence.

Scope (deliberately small — a total over a window, no group-by, no joins):
- simple metrics: measure agg (sum, count, count_distinct, average, min, max,
  sum_boolean, median, percentile), measure expr, metric/measure filters of the
  form `{{ Dimension('entity__dim') }} <op> <literal>` joined by AND, on the
  measure's agg_time_dimension (or the semantic model's default);
- derived metrics: each input computed, then the expression evaluated by a
  whitelisting AST walker (numbers, names, + - * /, parentheses — nothing else);
- ratio metrics: numerator / denominator;
- cumulative and conversion metrics, offsets, joins to other semantic models,
  semi-additive measures: not computable (`NotComputable` names the reason;
  `MetricEngine.value` returns None).

SQL text inside the semantic manifest (measure and dimension `expr`) comes from
the governed dbt project and is embedded as MetricFlow would embed it; text from
filters is never embedded — filters are parsed and re-rendered from their parts.
"""

from __future__ import annotations

import ast
import datetime as dt
import hashlib
import json
import logging
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb

from canon.core.errors import CanonError, CanonRunError

log = logging.getLogger(__name__)

__all__ = [
    "MetricEngine", "MetricQuery", "NotComputable", "UnsafeExpression",
    "evaluate_expression", "metric_name_of", "query_id_of",
]


class NotComputable(CanonError):
    """The metric has no in-process computation (unknown, unsupported type or filter).

    The message says which metric and why, so a caller can show it as the reason
    for answering without a number."""


class UnsafeExpression(NotComputable):
    """A derived-metric expression uses something other than numbers, names and + - * /."""


# --------------------------------------------------------------------------- helpers


def quote_ident(name: str) -> str:
    """A DuckDB identifier, always quoted (embedded quotes doubled)."""
    return '"' + str(name).replace('"', '""') + '"'


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _column_sql(expr: str | None, name: str) -> str:
    """A measure/dimension expression: a bare column name is quoted, SQL stays as written."""
    text = (expr if expr not in (None, "") else name)
    text = str(text).strip()
    if _IDENT.fullmatch(text):
        return quote_ident(text)
    return f"({text})"


def query_id_of(sql: str) -> str:
    """A short, content-derived id of the SQL text (same SQL → same id)."""
    return "q_" + hashlib.sha256(sql.encode("utf-8")).hexdigest()[:16]


def metric_name_of(doc: Any) -> str | None:
    """The dbt metric a governed definition names, from `metadata.dbt_unique_id`
    (`metric.<package>.<name>`); None when the document is not a dbt metric."""
    meta = getattr(doc, "metadata", None) or {}
    uid = meta.get("dbt_unique_id")
    if not isinstance(uid, str) or not uid.startswith("metric.") or uid.count(".") < 2:
        return None
    return uid.rsplit(".", 1)[-1] or None


def _date(value: dt.date | str, what: str) -> dt.date:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError as exc:
        raise ValueError(f"{what} must be a date (YYYY-MM-DD), got {value!r}") from exc


# --------------------------------------------------------------------------- safe expression


_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def expression_names(expr: str) -> set[str]:
    """The input names an expression uses (after checking it is safe)."""
    tree = _parse_expression(expr)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def _parse_expression(expr: str) -> ast.Expression:
    if not isinstance(expr, str) or not expr.strip():
        raise UnsafeExpression("derived metric expression is empty")
    if len(expr) > 2000:
        raise UnsafeExpression("derived metric expression is too long")
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as exc:
        raise UnsafeExpression(f"derived metric expression {expr!r} is not arithmetic: {exc.msg}") from None
    for node in ast.walk(tree):
        if isinstance(node, (ast.Expression, ast.Load)) or type(node) in _BINOPS or type(node) in _UNARY:
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            continue
        if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
            continue
        if isinstance(node, ast.Name) and not node.id.startswith("_"):
            continue
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            continue
        raise UnsafeExpression(
            f"derived metric expression {expr!r} uses {type(node).__name__}; "
            "only numbers, metric names, + - * / and parentheses are allowed")
    return tree


def evaluate_expression(expr: str, values: Mapping[str, float | None]) -> float | None:
    """Evaluate a derived-metric expression over input values without `eval`.

    Only numbers, names (looked up in `values`), + - * / and parentheses are
    accepted; anything else (calls, attributes, subscripts, comparisons, dunder
    names) raises UnsafeExpression. A None input or a division by zero gives None,
    as SQL NULL would."""
    tree = _parse_expression(expr)

    def walk(node: ast.AST) -> float | None:
        if isinstance(node, ast.Expression):
            return walk(node.body)
        if isinstance(node, ast.Constant):
            return float(node.value)
        if isinstance(node, ast.Name):
            if node.id not in values:
                raise NotComputable(f"derived metric expression {expr!r} names unknown input {node.id!r}")
            v = values[node.id]
            return None if v is None else float(v)
        if isinstance(node, ast.UnaryOp):
            v = walk(node.operand)
            return None if v is None else _UNARY[type(node.op)](v)
        if isinstance(node, ast.BinOp):
            left, right = walk(node.left), walk(node.right)
            if left is None or right is None:
                return None
            if isinstance(node.op, ast.Div) and right == 0:
                return None
            return _BINOPS[type(node.op)](left, right)
        raise UnsafeExpression(f"unexpected {type(node).__name__} in {expr!r}")  # unreachable after parse

    return walk(tree)


# --------------------------------------------------------------------------- filters


_FILTER_TERM = re.compile(
    r"""\s*\{\{\s*(?P<kind>Dimension|TimeDimension)\(\s*(?P<q>['"])(?P<ref>[A-Za-z0-9_]+)(?P=q)
        (?:\s*,\s*(?P<q2>['"])(?P<grain>[A-Za-z_]+)(?P=q2))?\s*\)\s*\}\}\s*
        (?:
            (?P<op>=|!=|<>|<=|>=|<|>)\s*(?P<lit>'(?:[^'\\]|'')*'|-?\d+(?:\.\d+)?|true|false)
          | (?P<isnull>is\s+(?:not\s+)?null)
          | (?P<inop>(?:not\s+)?in)\s*\((?P<inlist>\s*'(?:[^'\\]|'')*'(?:\s*,\s*'(?:[^'\\]|'')*')*\s*)\)
        )\s*""",
    re.IGNORECASE | re.VERBOSE,
)
_GRAINS = ("day", "week", "month", "quarter", "year")
_AND = re.compile(r"\s+and\s+", re.IGNORECASE)
_STRING_LIT = re.compile(r"'(?:[^'\\]|'')*'")


def _split_and(text: str) -> list[str]:
    """Split on top-level AND outside quotes (a filter term never contains parentheses
    around AND, so quote-awareness is enough)."""
    parts, buf, i, in_q = [], [], 0, False
    while i < len(text):
        ch = text[i]
        if ch == "'":
            in_q = not in_q
        if not in_q:
            m = _AND.match(text, i)
            if m and i > 0:
                parts.append("".join(buf))
                buf, i = [], m.end()
                continue
        buf.append(ch)
        i += 1
    parts.append("".join(buf))
    return parts


@dataclass(frozen=True)
class _FilterTerm:
    ref: str           # entity__dimension or metric_time
    sql_tail: str      # re-rendered operator and literal(s)
    grain: str | None  # TimeDimension(..., 'month'): compare the truncated value


def parse_filter(template: str) -> list[_FilterTerm]:
    """Parse one `where_sql_template` into AND-ed terms, or raise NotComputable."""
    terms = []
    for part in _split_and(template):
        m = _FILTER_TERM.fullmatch(part)
        if not m:
            raise NotComputable(
                f"filter {template!r} is not supported in process: only "
                "{{ Dimension('entity__dimension') }} <op> <literal> terms joined by AND are")
        if m.group("op"):
            lit = m.group("lit")
            tail = f"{'<>' if m.group('op') == '!=' else m.group('op')} {lit.lower() if lit.lower() in ('true', 'false') else lit}"
        elif m.group("isnull"):
            tail = " ".join(m.group("isnull").lower().split())
        else:
            items = ", ".join(_STRING_LIT.findall(m.group("inlist")))
            tail = f"{' '.join(m.group('inop').lower().split())} ({items})"
        grain = (m.group("grain") or "").lower() or None
        if grain is not None and grain not in _GRAINS:
            raise NotComputable(f"filter {template!r}: time grain {grain!r} is not supported in process")
        terms.append(_FilterTerm(ref=m.group("ref"), sql_tail=tail, grain=grain))
    return terms


def _where_templates(filter_obj: Any) -> list[str]:
    """The where_sql_template strings of a (possibly null) WhereFilterIntersection."""
    if not filter_obj:
        return []
    if isinstance(filter_obj, str):
        return [filter_obj]
    if isinstance(filter_obj, Mapping):
        out = []
        for f in filter_obj.get("where_filters") or []:
            t = f.get("where_sql_template") if isinstance(f, Mapping) else f
            if t:
                out.append(str(t))
        return out
    raise NotComputable(f"unreadable filter {filter_obj!r}")


# --------------------------------------------------------------------------- plan


@dataclass
class MetricQuery:
    """One compiled query (a simple metric, or one input of a derived/ratio metric)."""

    metric: str
    sql: str
    relation: str
    time_dimension: str
    fill_nulls_with: float | None = None


@dataclass
class _Result:
    value: float | None
    exact: Decimal | None
    rows: int
    queries: list[dict] = field(default_factory=list)
    unit: str = ""


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
_USD = re.compile(r"(^|[^a-z])usd([^a-z]|$)", re.IGNORECASE)


class MetricEngine:
    """Compiles and runs dbt semantic-layer metrics against the DuckDB warehouse.

    `semantic_manifest` is dbt's semantic_manifest.json (a dict, the file, or the
    folder holding it); `warehouse_db` is the DuckDB file dbt-duckdb built."""

    def __init__(self, semantic_manifest: dict | Path | str, warehouse_db: Path | str):
        if isinstance(semantic_manifest, (str, Path)):
            path = Path(semantic_manifest)
            if path.is_dir():
                path = path / "semantic_manifest.json"
            from canon.sources.dbt.artifacts import read_semantic_manifest  # lazy: keeps import light
            semantic_manifest = read_semantic_manifest(path)
        self.semantic = semantic_manifest
        self.warehouse_db = Path(warehouse_db)
        self.metrics: dict[str, dict] = {m["name"]: m for m in semantic_manifest.get("metrics") or []}
        self.models: dict[str, dict] = {s["name"]: s for s in semantic_manifest.get("semantic_models") or []}
        self.measures: dict[str, tuple[dict, dict]] = {}
        for sm in self.models.values():
            for ms in sm.get("measures") or []:
                self.measures[ms["name"]] = (ms, sm)
        self.last_reason: str | None = None

    # ---------------------------------------------------------------- public API

    def value(self, doc: Any, start: dt.date | str, end: dt.date | str) -> dict | None:
        """The governed number for `doc` over [start, end), or None when not computable
        (the reason is in `self.last_reason` and the log).

        Returns {metric, value, unit, sql, query_id, rows_scanned, start, end,
        doc_id, evidence_revision, value_exact, queries}; `value` is None when no
        row fell in the window (SQL NULL), unless the metric fills nulls."""
        self.last_reason = None
        name = metric_name_of(doc)
        try:
            if name is None:
                raise NotComputable(
                    f"{getattr(doc, 'doc_id', doc)!r} names no dbt metric (metadata.dbt_unique_id)")
            out = self.compute(name, start, end)
        except NotComputable as exc:
            self.last_reason = str(exc)
            log.info("metric value not computable: %s", exc)
            return None
        out["doc_id"] = getattr(doc, "doc_id", None)
        out["evidence_revision"] = getattr(doc, "content_hash", None)
        return out

    def compute(self, metric: str, start: dt.date | str, end: dt.date | str) -> dict:
        """The value of the named metric over [start, end); raises NotComputable."""
        start_d, end_d = _date(start, "start"), _date(end, "end")
        if not start_d < end_d:
            raise ValueError(f"empty window: start {start_d} must be before end {end_d}")
        plans = self.plan(metric, start_d, end_d)  # compile everything before touching the warehouse
        con = self._connect()
        try:
            res = self._run(metric, con, plans, key=metric)
        finally:
            con.close()
        sql = ";\n".join(q["sql"] for q in res.queries)
        return {
            "metric": metric,
            "value": res.value,
            "value_exact": None if res.exact is None else str(res.exact),
            "unit": res.unit,
            "sql": sql,
            "query_id": query_id_of(sql),
            "rows_scanned": res.rows,
            "start": start_d.isoformat(),
            "end": end_d.isoformat(),
            "queries": res.queries,
        }

    def plan(self, metric: str, start: dt.date | str, end: dt.date | str) -> dict[str, MetricQuery]:
        """Compile without running: every SQL query the metric needs, keyed by input path.
        Raises NotComputable for anything outside scope."""
        start_d, end_d = _date(start, "start"), _date(end, "end")
        plans: dict[str, MetricQuery] = {}
        self._plan(metric, start_d, end_d, (), (), plans, key=metric)
        return plans

    def why_not(self, metric: str) -> str | None:
        """The reason the metric cannot be computed, or None when it can."""
        try:
            self.plan(metric, dt.date(2000, 1, 1), dt.date(2000, 1, 2))
        except NotComputable as exc:
            return str(exc)
        return None

    # ---------------------------------------------------------------- compile

    def _metric(self, name: str) -> dict:
        m = self.metrics.get(name)
        if m is None:
            raise NotComputable(f"metric {name!r} is not in the semantic manifest")
        return m

    def _plan(self, name: str, start: dt.date, end: dt.date, extra: tuple[str, ...],
              seen: tuple[str, ...], plans: dict[str, MetricQuery], key: str) -> None:
        if name in seen:
            raise NotComputable(f"metric {name!r} depends on itself ({' -> '.join(seen + (name,))})")
        m = self._metric(name)
        kind = str(m.get("type") or "").lower()
        tp = m.get("type_params") or {}
        filters = extra + tuple(_where_templates(m.get("filter")))
        if kind == "simple":
            measure = tp.get("measure") or {}
            plans[key] = self._compile_simple(name, measure, start, end,
                                              filters + tuple(_where_templates(measure.get("filter"))))
        elif kind in ("derived", "ratio"):
            for inp, role in self._inputs(name, m):
                self._check_input(name, inp)
                self._plan(inp["name"], start, end, filters + tuple(_where_templates(inp.get("filter"))),
                           seen + (name,), plans, key=f"{key}/{role}")
            if kind == "derived":
                names = expression_names(tp.get("expr") or "")
                known = {inp.get("alias") or inp["name"] for inp, _ in self._inputs(name, m)}
                if names - known:
                    raise NotComputable(f"derived metric {name!r}: expression names unknown inputs {sorted(names - known)}")
        elif kind in ("cumulative", "conversion"):
            raise NotComputable(
                f"metric {name!r} is a {kind} metric: it needs MetricFlow's time-spine/"
                f"{'window' if kind == 'cumulative' else 'funnel'} semantics, not computed in process")
        else:
            raise NotComputable(f"metric {name!r} has unsupported type {kind!r}")

    @staticmethod
    def _inputs(name: str, m: dict) -> list[tuple[dict, str]]:
        tp = m.get("type_params") or {}
        if str(m.get("type")).lower() == "ratio":
            num, den = tp.get("numerator"), tp.get("denominator")
            if not num or not den:
                raise NotComputable(f"ratio metric {name!r} lacks a numerator or denominator")
            return [(num, "numerator"), (den, "denominator")]
        inputs = tp.get("metrics") or []
        if not inputs:
            raise NotComputable(f"derived metric {name!r} has no input metrics")
        return [(inp, inp.get("alias") or inp["name"]) for inp in inputs]

    @staticmethod
    def _check_input(name: str, inp: dict) -> None:
        if inp.get("offset_window") or inp.get("offset_to_grain"):
            raise NotComputable(f"metric {name!r}: input {inp.get('name')!r} has a time offset (not computed in process)")

    def _compile_simple(self, name: str, measure_ref: dict, start: dt.date, end: dt.date,
                        filters: tuple[str, ...]) -> MetricQuery:
        mname = measure_ref.get("name")
        if not mname or mname not in self.measures:
            raise NotComputable(f"metric {name!r}: measure {mname!r} is not in any semantic model")
        measure, sm = self.measures[mname]
        if measure.get("non_additive_dimension"):
            raise NotComputable(f"metric {name!r}: measure {mname!r} is semi-additive (non_additive_dimension)")
        agg = str(measure.get("agg") or "").lower()
        expr = _column_sql(measure.get("expr"), mname)
        if agg in _AGG:
            agg_sql = _AGG[agg].format(e=expr)
        elif agg == "percentile":
            params = measure.get("agg_params") or {}
            p = params.get("percentile")
            if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0 <= p <= 1:
                raise NotComputable(f"metric {name!r}: percentile measure {mname!r} lacks a percentile in [0, 1]")
            fn = "quantile_disc" if params.get("use_discrete_percentile") else "quantile_cont"
            agg_sql = f"{fn}({expr}, {float(p)!r})"
        else:
            raise NotComputable(f"metric {name!r}: aggregation {agg!r} of measure {mname!r} is not supported")

        dims = {d["name"]: d for d in sm.get("dimensions") or []}
        time_name = measure.get("agg_time_dimension") or (sm.get("defaults") or {}).get("agg_time_dimension")
        if not time_name or time_name not in dims:
            raise NotComputable(f"metric {name!r}: semantic model {sm['name']!r} has no agg_time_dimension {time_name!r}")
        if str(dims[time_name].get("type")).lower() != "time":
            raise NotComputable(f"metric {name!r}: agg_time_dimension {time_name!r} is not a time dimension")
        time_sql = _column_sql(dims[time_name].get("expr"), time_name)

        relation = self._relation(name, sm)
        where = [f"{time_sql} >= date '{start.isoformat()}'", f"{time_sql} < date '{end.isoformat()}'"]
        for template in filters:
            for term in parse_filter(template):
                col = self._filter_column(name, sm, dims, term.ref, time_name)
                if term.grain and term.grain != "day":
                    col = f"date_trunc('{term.grain}', {col})"
                where.append(f"{col} {term.sql_tail}")
        sql = (f"select {agg_sql} as metric_value, count(*) as rows_scanned\n"
               f"from {relation}\n"
               f"where " + "\n  and ".join(where))
        fill = measure_ref.get("fill_nulls_with")
        return MetricQuery(metric=name, sql=sql, relation=relation, time_dimension=time_name,
                           fill_nulls_with=float(fill) if isinstance(fill, (int, float)) and not isinstance(fill, bool) else None)

    def _filter_column(self, metric: str, sm: dict, dims: dict, ref: str, time_name: str) -> str:
        if ref == "metric_time":
            return _column_sql(dims[time_name].get("expr"), time_name)
        entity, sep, dim = ref.rpartition("__")
        entities = {e["name"] for e in sm.get("entities") or []}
        if sm.get("primary_entity"):
            entities.add(sm["primary_entity"])
        if not sep or dim not in dims or entity not in entities:
            raise NotComputable(
                f"metric {metric!r}: filter dimension {ref!r} is not a local dimension of semantic model "
                f"{sm['name']!r} (joins are not computed in process)")
        return _column_sql(dims[dim].get("expr"), dim)

    def _relation(self, metric: str, sm: dict) -> str:
        rel = sm.get("node_relation") or {}
        schema, alias = rel.get("schema_name"), rel.get("alias")
        if not schema or not alias:
            raise NotComputable(f"metric {metric!r}: semantic model {sm['name']!r} has no node_relation")
        database = rel.get("database")
        catalog = self.warehouse_db.stem
        if database and database != catalog:
            raise NotComputable(
                f"metric {metric!r}: relation lives in catalog {database!r}, not in the warehouse file "
                f"{self.warehouse_db.name!r}")
        return f"{quote_ident(schema)}.{quote_ident(alias)}"

    # ---------------------------------------------------------------- run

    def _connect(self) -> duckdb.DuckDBPyConnection:
        if not self.warehouse_db.exists():
            raise NotComputable(f"warehouse {self.warehouse_db} does not exist (dbt has not built it)")
        try:
            return duckdb.connect(str(self.warehouse_db), read_only=True)
        except duckdb.Error as exc:  # e.g. a writer holds the file's lock
            raise CanonRunError(f"{self.warehouse_db}: cannot open the warehouse read-only: {exc}") from exc

    def _run(self, name: str, con: duckdb.DuckDBPyConnection, plans: dict[str, MetricQuery], key: str) -> _Result:
        """Run the compiled plan (same tree walk and keys as `_plan`)."""
        m = self._metric(name)
        kind = str(m.get("type")).lower()
        if kind == "simple":
            return self._execute(plans[key], con, self._unit(m))
        inputs = self._inputs(name, m)
        parts = {role: self._run(inp["name"], con, plans, key=f"{key}/{role}")
                 for inp, role in inputs}
        queries = [q for r in parts.values() for q in r.queries]
        rows = sum(r.rows for r in parts.values())
        if kind == "ratio":
            num, den = parts["numerator"].value, parts["denominator"].value
            value = None if num is None or den in (None, 0) else num / den
            unit = self._unit(m, fallback=False)
        else:
            value = evaluate_expression(m["type_params"].get("expr") or "", {k: r.value for k, r in parts.items()})
            unit = self._unit(m, fallback=False) or self._derived_unit(m, parts)
        return _Result(value=value, exact=None, rows=rows, queries=queries, unit=unit)

    def _execute(self, q: MetricQuery, con: duckdb.DuckDBPyConnection, unit: str) -> _Result:
        try:
            rows = con.execute(q.sql).fetchall()
        except duckdb.CatalogException as exc:
            raise NotComputable(f"metric {q.metric!r}: {q.relation} is not in the warehouse: {exc}") from exc
        raw, scanned = (rows[0] if rows else (None, 0))
        if raw is None and q.fill_nulls_with is not None:
            raw = q.fill_nulls_with
        exact = raw if isinstance(raw, Decimal) else None
        value = None if raw is None else float(raw)
        return _Result(value=value, exact=exact, rows=int(scanned or 0), unit=unit,
                       queries=[{"metric": q.metric, "sql": q.sql, "query_id": query_id_of(q.sql),
                                 "relation": q.relation, "time_dimension": q.time_dimension,
                                 "value": value, "rows_scanned": int(scanned or 0)}])

    # ---------------------------------------------------------------- units

    def _unit(self, m: dict, fallback: bool = True) -> str:
        """'USD' when the metric's meta, or (for simple metrics) its measure's meta or the
        metric/measure names say so; otherwise ''."""
        meta = (m.get("config") or {}).get("meta") or {}
        for candidate in (meta.get("unit"), (meta.get("canon") or {}).get("unit")):
            if candidate:
                return str(candidate)
        if not fallback:
            return ""
        names = [m.get("name") or ""]
        measure_name = ((m.get("type_params") or {}).get("measure") or {}).get("name")
        if measure_name in self.measures:
            ms = self.measures[measure_name][0]
            mmeta = (ms.get("config") or {}).get("meta") or {}
            if mmeta.get("unit"):
                return str(mmeta["unit"])
            names.append(measure_name)
        return "USD" if any(_USD.search(n) for n in names) else ""

    @staticmethod
    def _derived_unit(m: dict, parts: dict[str, _Result]) -> str:
        """A sum/difference of same-unit inputs keeps the unit; products and quotients do not."""
        units = {r.unit for r in parts.values()}
        expr = (m.get("type_params") or {}).get("expr") or ""
        tree = _parse_expression(expr)
        scaling = any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Div))
                      and not (isinstance(n.right, ast.Constant) or isinstance(n.left, ast.Constant))
                      for n in ast.walk(tree))
        return units.pop() if len(units) == 1 and not scaling else ""


def load_engine(artifacts_dir: Path | str, warehouse_db: Path | str) -> MetricEngine:
    """Convenience: an engine over `<artifacts_dir>/semantic_manifest.json`."""
    return MetricEngine(Path(artifacts_dir) / "semantic_manifest.json", warehouse_db)


def _main() -> None:  # pragma: no cover - a debugging aid: python -m canon.sources.dbt.semantic.metric_values DIR DB METRIC START END
    import sys
    art, db, metric, start, end = sys.argv[1:6]
    print(json.dumps(load_engine(art, db).compute(metric, start, end), indent=2, default=str))


if __name__ == "__main__":  # pragma: no cover
    _main()
