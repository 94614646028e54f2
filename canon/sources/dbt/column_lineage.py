"""Best-effort column-level lineage from compiled SQL, with sqlglot.

Only what can be derived cheaply: each node's compiled SQL is parsed once
(no `qualify` pass, which costs 3-5x the parse) and the output columns of the
outermost SELECT are traced through CTEs, subqueries, unions and `*`
pass-throughs down to the tables the query reads; tables are matched to the
node's dbt parents by relation name, and dbt's inlined ephemeral CTEs
(`__dbt__cte__<model>`) to the ephemeral parent. Anything ambiguous (an
unqualified column in a join whose sources have unknown columns) is skipped
rather than guessed. A node whose SQL fails to parse yields no column edges and
never fails the load. Column names are lower-cased.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from typing import Any

ADAPTER_DIALECTS = {
    "duckdb": "duckdb", "postgres": "postgres", "snowflake": "snowflake", "bigquery": "bigquery",
    "redshift": "redshift", "databricks": "databricks", "spark": "spark", "trino": "trino",
    "athena": "athena", "clickhouse": "clickhouse", "sqlite": "sqlite", "mysql": "mysql",
    "sqlserver": "tsql", "fabric": "tsql", "synapse": "tsql", "oracle": "oracle", "teradata": "teradata",
    "materialize": "materialize", "starrocks": "starrocks", "doris": "doris", "dremio": "dremio",
}
EPHEMERAL_PREFIX = "__dbt__cte__"
MAX_SQL_CHARS = 200_000   # beyond this a "model" is generated code; skip it
_MAX_DEPTH = 64


class _Tracer:
    """Traces one query. `parents` maps relation keys (full, schema.table, table) to unique ids."""

    def __init__(self, exp_mod, parents: Mapping[str, str], ephemerals: Mapping[str, str],
                 known_columns: Mapping[str, frozenset[str]]):
        self.exp = exp_mod
        self.parents = parents
        self.ephemerals = ephemerals
        self.known = known_columns
        self.memo: dict[tuple[int, str], frozenset[tuple[str, str]]] = {}
        self.shapes: dict[int, tuple] = {}

    # -- sources -----------------------------------------------------------
    def _table_uid(self, table) -> str | None:
        parts = [p.lower() for p in (table.catalog, table.db, table.name) if p]
        for i in range(len(parts)):
            uid = self.parents.get(".".join(parts[i:]))
            if uid:
                return uid
        return None

    def _source_leaf(self, node, source, column: str) -> frozenset[tuple[str, str]] | None:
        """Terminal resolution: a parent table or an inlined ephemeral CTE; None means recurse."""
        exp = self.exp
        if isinstance(source, exp.Table):
            uid = self._table_uid(source)
            return frozenset({(uid, column)}) if uid else frozenset()
        name = node.name.lower() if isinstance(node, exp.Table) else ""
        if name.startswith(EPHEMERAL_PREFIX):
            uid = self.ephemerals.get(name[len(EPHEMERAL_PREFIX):])
            return frozenset({(uid, column)}) if uid else frozenset()
        return None

    def _source_has(self, node, source, column: str, depth: int = 0) -> bool | None:
        """Does a selected source expose `column`? None when unknowable."""
        exp = self.exp
        if isinstance(source, exp.Table):
            uid = self._table_uid(source)
            cols = self.known.get(uid) if uid else None
            return (column in cols) if cols else None
        if isinstance(node, exp.Table) and node.name.lower().startswith(EPHEMERAL_PREFIX):
            uid = self.ephemerals.get(node.name.lower()[len(EPHEMERAL_PREFIX):])
            cols = self.known.get(uid) if uid else None
            return (column in cols) if cols else None
        sel = source.expression
        if not isinstance(sel, exp.Select):
            return None
        selected, by_name, stars = self._shape(source, sel)
        if column in by_name:
            return True
        if not stars or depth > _MAX_DEPTH:
            return False if not stars else None
        # `select *` (or `t.*`): the column is there iff one of the starred sources has it.
        verdicts = []
        for p in stars:
            qual = p.table.lower() if isinstance(p, exp.Column) and p.table else ""
            cands = [selected[qual]] if qual and qual in selected else list(selected.values())
            verdicts.extend(self._source_has(n, s, column, depth + 1) for n, s in cands)
        if any(v is True for v in verdicts):
            return True
        return False if verdicts and all(v is False for v in verdicts) else None

    def _through(self, node, source, column: str, depth: int) -> frozenset[tuple[str, str]]:
        leaf = self._source_leaf(node, source, column)
        if leaf is not None:
            return leaf
        return self.trace(source, column, depth + 1)

    # -- tracing -----------------------------------------------------------
    def trace(self, scope, column: str, depth: int = 0) -> frozenset[tuple[str, str]]:
        key = (id(scope), column)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        self.memo[key] = frozenset()  # cycle guard
        result = self._trace(scope, column, depth) if depth < _MAX_DEPTH else frozenset()
        self.memo[key] = result
        return result

    def _trace(self, scope, column: str, depth: int) -> frozenset[tuple[str, str]]:
        exp = self.exp
        branches = scope.set_operation_scopes
        if branches:
            # Output names come from the first branch; the others match by position.
            first = _leftmost_select(branches[0])
            idx = _projection_index(first, column, exp) if first is not None else None
            out: set[tuple[str, str]] = set()
            for br in branches:
                sel = _leftmost_select(br)
                if sel is None or br.set_operation_scopes:
                    out |= self.trace(br, column, depth + 1)
                    continue
                if idx is not None and idx < len(sel.expressions) and not _is_star(sel.expressions[idx], exp):
                    name = sel.expressions[idx].alias_or_name.lower()
                    out |= self._trace_select(br, sel, name, depth)
                else:
                    out |= self._trace_select(br, sel, column, depth)
            return frozenset(out)
        sel = scope.expression
        if not isinstance(sel, exp.Select):
            return frozenset()
        return self._trace_select(scope, sel, column, depth)

    def _shape(self, scope, sel):
        """Per-scope cache: lower-cased selected sources, projections by output name, star projections."""
        shape = self.shapes.get(id(scope))
        if shape is None:
            exp = self.exp
            by_name: dict[str, Any] = {}
            stars = []
            for proj in sel.expressions:
                if _is_star(proj, exp):
                    stars.append(proj)
                else:
                    by_name.setdefault(proj.alias_or_name.lower(), proj)
            shape = ({k.lower(): v for k, v in scope.selected_sources.items()}, by_name, stars)
            self.shapes[id(scope)] = shape
        return shape

    def _trace_select(self, scope, sel, column: str, depth: int) -> frozenset[tuple[str, str]]:
        exp = self.exp
        selected, by_name, stars = self._shape(scope, sel)
        proj = by_name.get(column)
        if proj is not None:
            out: set[tuple[str, str]] = set()
            for col in proj.find_all(exp.Column):
                if _is_star(col, exp):
                    continue
                cname = col.name.lower()
                entry = self._resolve(selected, col.table.lower() if col.table else "", cname)
                if entry is not None:
                    out |= self._through(entry[0], entry[1], cname, depth)
            return frozenset(out)
        # Not projected by name: a `*` or `t.*` may pass it through.
        out = set()
        for proj in stars:
            qual = proj.table.lower() if isinstance(proj, exp.Column) and proj.table else ""
            cands = [selected[qual]] if qual and qual in selected else list(selected.values())
            if len(cands) == 1:
                out |= self._through(cands[0][0], cands[0][1], column, depth)
                continue
            for node, source in cands:
                if self._source_has(node, source, column):
                    out |= self._through(node, source, column, depth)
                    break
        return frozenset(out)

    def _resolve(self, selected: Mapping[str, Any], table: str, column: str):
        if table:
            return selected.get(table)
        if len(selected) == 1:
            return next(iter(selected.values()))
        matches = [entry for entry in selected.values() if self._source_has(entry[0], entry[1], column)]
        return matches[0] if len(matches) == 1 else None


def _is_star(proj, exp) -> bool:
    return isinstance(proj, exp.Star) or (isinstance(proj, exp.Column) and proj.is_star)


def _leftmost_select(scope):
    while scope.set_operation_scopes:
        scope = scope.set_operation_scopes[0]
    return scope.expression if scope.expression.__class__.__name__ == "Select" else None


def _projection_index(sel, column: str, exp) -> int | None:
    for i, p in enumerate(sel.expressions):
        if not _is_star(p, exp) and p.alias_or_name.lower() == column:
            return i
    return None


_SQLGLOT: tuple | None = None


def _sqlglot():
    """Import sqlglot lazily (it is only needed when there is compiled SQL); the optional Rust
    tokenizer wheel warns about its own deprecation on import, which is not ours to report."""
    global _SQLGLOT
    if _SQLGLOT is None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from sqlglot import exp
            from sqlglot.dialects.dialect import Dialect
            from sqlglot.optimizer.scope import build_scope
        _SQLGLOT = (Dialect, exp, build_scope)
    return _SQLGLOT


def trace_query(sql: str, dialect: str | None, parents: Mapping[str, str], ephemerals: Mapping[str, str],
                known_columns: Mapping[str, frozenset[str]], output_hint: Iterable[str] = ()) -> set[tuple[str, str, str]]:
    """(parent_uid, parent_column, child_column) for one compiled query. Raises on unparsable SQL."""
    Dialect, exp, build_scope = _sqlglot()
    trees = Dialect.get_or_raise(dialect).parse(sql)
    if len(trees) != 1 or trees[0] is None:
        return set()  # empty or several statements: not a model's single SELECT
    tree = trees[0]
    root = build_scope(tree)
    if root is None:
        return set()
    first = _leftmost_select(root)
    if first is None:
        return set()
    outputs: list[str] = []
    star = False
    for p in first.expressions:
        if _is_star(p, exp):
            star = True
        elif p.alias_or_name:
            outputs.append(p.alias_or_name.lower())
    if star:  # `select * from final`: the documented / catalogued columns say what comes out
        outputs.extend(c for c in output_hint if c not in outputs)
    tracer = _Tracer(exp, parents, ephemerals, known_columns)
    out: set[tuple[str, str, str]] = set()
    for col in dict.fromkeys(outputs):
        for uid, pcol in tracer.trace(root, col):
            out.add((uid, pcol, col))
    return out


def column_edges(
    included: Mapping[str, tuple[str, Mapping[str, Any]]],
    model_pairs: Iterable[tuple[str, str]],
    relations: Mapping[str, str | None],
    known_columns: Mapping[str, frozenset[str]],
    *,
    adapter_type: str | None,
    compiled_override: Mapping[str, str] | None = None,
) -> list[tuple[str, str, str, str]]:
    """Column edges (parent, child, parent_column, child_column) for every node with compiled SQL."""
    try:
        _sqlglot()
    except ImportError:  # pragma: no cover - sqlglot is a pinned dependency; lineage stays optional
        return []
    dialect = ADAPTER_DIALECTS.get((adapter_type or "").lower())
    parents_of: dict[str, list[str]] = {}
    for p, c in model_pairs:
        parents_of.setdefault(c, []).append(p)
    rows: list[tuple[str, str, str, str]] = []
    for uid, (rtype, node) in included.items():
        if rtype not in ("model", "snapshot"):
            continue
        sql = node.get("compiled_code") or node.get("compiled_sql")
        if not sql and compiled_override:
            sql = compiled_override.get(uid)
        if not sql or not isinstance(sql, str) or len(sql) > MAX_SQL_CHARS:
            continue
        parents = parents_of.get(uid)
        if not parents:
            continue
        rel_keys: dict[str, str] = {}
        ambiguous: set[str] = set()
        ephemerals: dict[str, str] = {}
        for p in parents:
            rtype_p, pnode = included[p]
            rel = relations.get(p)
            if rel:
                parts = rel.lower().split(".")
                for i in range(len(parts)):
                    k = ".".join(parts[i:])
                    if i == 0:
                        rel_keys[k] = p
                    elif k in rel_keys and rel_keys[k] != p:
                        ambiguous.add(k)
                    else:
                        rel_keys.setdefault(k, p)
            elif rtype_p == "model":
                ephemerals[str(pnode.get("alias") or pnode.get("name")).lower()] = p
                ephemerals.setdefault(str(pnode.get("name")).lower(), p)
        for k in ambiguous:
            rel_keys.pop(k, None)
        try:
            traced = trace_query(sql, dialect, rel_keys, ephemerals, known_columns, sorted(known_columns.get(uid, ())))
        except Exception:  # noqa: BLE001 - best effort by contract (RecursionError included): no column edges
            continue
        rows.extend((p, uid, pcol, ccol) for p, pcol, ccol in traced if p != uid)
    return rows
