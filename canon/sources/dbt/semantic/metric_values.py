"""Governed metric values: the number behind a resolved metric definition.

Canon resolves the governing definition first (a `Document` whose metadata names
the dbt metric, `dbt_unique_id = 'metric.<package>.<name>'`), then asks the
semantic layer for the number. This package is that semantic layer, in process:
it reads dbt's `semantic_manifest.json` (the same MetricFlow spec `mf query`
reads) and compiles one metric over one half-open date window

    time_dim >= start AND time_dim < end

into plain SQL against the warehouse the configured dbt target names (a DuckDB
file, or any dbt adapter's connection: canon/sources/dbt/semantic/target.py and
warehouse.py), opened read-only for the query and closed straight after. The SQL
it ran is returned as evidence.

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

This module is the entry point (MetricEngine); the parts live beside it:
manifest.py (lookups, units), expression.py (derived arithmetic), filters.py,
sql.py (compiling a simple metric), target.py (the dbt target's warehouse),
warehouse.py (the read-only query).
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sys
from pathlib import Path
from typing import Any

from canon.sources.dbt.semantic.errors import NotComputable, UnsafeExpression
from canon.sources.dbt.semantic.expression import evaluate_expression, expression_names
from canon.sources.dbt.semantic.filters import where_templates
from canon.sources.dbt.semantic.manifest import SemanticManifest
from canon.sources.dbt.semantic.sql import MetricQuery, compile_simple, query_id_of
from canon.sources.dbt.semantic.warehouse import DuckDBWarehouse, QueryResult, Session, Warehouse, execute

log = logging.getLogger(__name__)

__all__ = [
    "MetricEngine", "MetricQuery", "NotComputable", "UnsafeExpression",
    "evaluate_expression", "metric_name_of", "query_id_of",
]


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


class MetricEngine:
    """Compiles and runs dbt semantic-layer metrics against the warehouse.

    `semantic_manifest` is dbt's semantic_manifest.json (a dict, the file, or the
    folder holding it); `warehouse` is a Warehouse (canon/sources/dbt/semantic/warehouse.py:
    the configured dbt target's), or the path of the DuckDB file dbt-duckdb built.
    Calling the engine is `value` (the pipeline's `metric_values`)."""

    def __init__(self, semantic_manifest: dict | Path | str, warehouse: "Warehouse | Path | str"):
        self.manifest = SemanticManifest(semantic_manifest)
        self.semantic = self.manifest.raw
        self.warehouse: Warehouse = (DuckDBWarehouse(Path(warehouse)) if isinstance(warehouse, (str, Path))
                                     else warehouse)
        self.metrics = self.manifest.metrics
        self.models = self.manifest.models
        self.measures = self.manifest.measures
        self.last_reason: str | None = None

    # ---------------------------------------------------------------- public API

    def __call__(self, doc: Any, start: dt.date | str, end: dt.date | str) -> dict | None:
        return self.value(doc, start, end)

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
        with self.warehouse.session({q.catalog for q in plans.values() if q.catalog}) as session:
            res = self._run(metric, session, plans, key=metric)
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

    def _plan(self, name: str, start: dt.date, end: dt.date, extra: tuple[str, ...],
              seen: tuple[str, ...], plans: dict[str, MetricQuery], key: str) -> None:
        if name in seen:
            raise NotComputable(f"metric {name!r} depends on itself ({' -> '.join(seen + (name,))})")
        m = self.manifest.metric(name)
        kind = str(m.get("type") or "").lower()
        tp = m.get("type_params") or {}
        filters = extra + tuple(where_templates(m.get("filter")))
        if kind == "simple":
            measure = tp.get("measure") or {}
            plans[key] = compile_simple(self.manifest, self.warehouse, name, measure, start, end,
                                        filters + tuple(where_templates(measure.get("filter"))))
        elif kind in ("derived", "ratio"):
            for inp, role in self.manifest.inputs(name, m):
                self.manifest.check_input(name, inp)
                self._plan(inp["name"], start, end, filters + tuple(where_templates(inp.get("filter"))),
                           seen + (name,), plans, key=f"{key}/{role}")
            if kind == "derived":
                names = expression_names(tp.get("expr") or "")
                known = {inp.get("alias") or inp["name"] for inp, _ in self.manifest.inputs(name, m)}
                if names - known:
                    raise NotComputable(f"derived metric {name!r}: expression names unknown inputs {sorted(names - known)}")
        elif kind in ("cumulative", "conversion"):
            raise NotComputable(
                f"metric {name!r} is a {kind} metric: it needs MetricFlow's time-spine/"
                f"{'window' if kind == 'cumulative' else 'funnel'} semantics, not computed in process")
        else:
            raise NotComputable(f"metric {name!r} has unsupported type {kind!r}")

    def _run(self, name: str, con: Session, plans: dict[str, MetricQuery], key: str) -> QueryResult:
        """Run the compiled plan (same tree walk and keys as `_plan`)."""
        m = self.manifest.metric(name)
        kind = str(m.get("type")).lower()
        if kind == "simple":
            return execute(plans[key], con, self.manifest.unit(m))
        inputs = self.manifest.inputs(name, m)
        parts = {role: self._run(inp["name"], con, plans, key=f"{key}/{role}")
                 for inp, role in inputs}
        queries = [q for r in parts.values() for q in r.queries]
        rows = sum(r.rows for r in parts.values())
        if kind == "ratio":
            num, den = parts["numerator"].value, parts["denominator"].value
            value = None if num is None or den in (None, 0) else num / den
            unit = self.manifest.unit(m, fallback=False)
        else:
            value = evaluate_expression(m["type_params"].get("expr") or "", {k: r.value for k, r in parts.items()})
            unit = self.manifest.unit(m, fallback=False) or self.manifest.derived_unit(m, (r.unit for r in parts.values()))
        return QueryResult(value=value, exact=None, rows=rows, queries=queries, unit=unit)


def load_engine(artifacts_dir: Path | str, warehouse_db: Path | str) -> MetricEngine:
    """Convenience: an engine over `<artifacts_dir>/semantic_manifest.json`."""
    return MetricEngine(Path(artifacts_dir) / "semantic_manifest.json", warehouse_db)


def _main() -> None:  # pragma: no cover - a debugging aid: python -m canon.sources.dbt.semantic.metric_values DIR DB METRIC START END
    art, db, metric, start, end = sys.argv[1:6]
    print(json.dumps(load_engine(art, db).compute(metric, start, end), indent=2, default=str))


if __name__ == "__main__":  # pragma: no cover
    _main()
