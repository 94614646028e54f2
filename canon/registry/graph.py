"""Lineage from the graph (dbt's parent map in `lineage_edges`), never from prose."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import duckdb


@dataclass
class Subgraph:
    nodes: dict[str, dict] = field(default_factory=dict)
    edges: list[tuple[str, str]] = field(default_factory=list)

    def sources(self) -> list[dict]:
        return [n for n in self.nodes.values() if n.get("resource_type") == "source"]

    def roots(self) -> list[dict]:
        """The nodes nothing in the subgraph feeds: where its data enters (sources, or seeds
        in a project that loads its raw data with `dbt seed`)."""
        fed = {child for _, child in self.edges}
        return [n for nid, n in self.nodes.items() if nid not in fed]

    def of_type(self, resource_type: str) -> list[dict]:
        return [n for n in self.nodes.values() if n.get("resource_type") == resource_type]


def _node_info(con: duckdb.DuckDBPyConnection, ids: list[str]) -> dict[str, dict]:
    if not ids:
        return {}
    rows = con.execute(
        "SELECT unique_id, resource_type, name, version, relation_name FROM dbt_nodes "
        "WHERE unique_id IN (SELECT unnest(?))",
        [ids],
    ).fetchall()
    info = {r[0]: {"id": r[0], "resource_type": r[1], "name": r[2], "version": r[3], "relation_name": r[4]} for r in rows}
    for i in ids:
        info.setdefault(i, {"id": i, "resource_type": i.split(".", 1)[0], "name": i.rsplit(".", 1)[-1],
                            "version": None, "relation_name": None, "dangling": True})
    return info


def _walk(con: duckdb.DuckDBPyConnection, start: str, max_depth: int, *, down: bool) -> Subgraph:
    nexts: dict[str, list[str]] = {}
    for parent, child in con.execute(
        "SELECT DISTINCT parent, child FROM lineage_edges WHERE edge_type = 'model'"
    ).fetchall():
        if down:
            nexts.setdefault(parent, []).append(child)
        else:
            nexts.setdefault(child, []).append(parent)
    seen = {start}
    edges: list[tuple[str, str]] = []
    queue = deque([(start, 0)])
    while queue:
        node, depth = queue.popleft()
        if depth >= max_depth:
            continue
        for n in sorted(nexts.get(node, [])):
            edges.append((node, n) if down else (n, node))
            if n not in seen:
                seen.add(n)
                queue.append((n, depth + 1))
    return Subgraph(nodes=_node_info(con, sorted(seen)), edges=edges)


def upstream(con: duckdb.DuckDBPyConnection, start: str, *, max_depth: int = 50) -> Subgraph:
    """Walk model-level edges from `start` to its roots (the raw sources)."""
    return _walk(con, start, max_depth, down=False)


def downstream(con: duckdb.DuckDBPyConnection, start: str, *, max_depth: int = 50) -> Subgraph:
    """Walk model-level edges from `start` to everything built from it (models, metrics,
    exposures); edges stay (parent, child). dbt's tests hang off the models they test: they
    are checks on it, not data built from it, and are left out."""
    graph = _walk(con, start, max_depth, down=True)
    tests = {nid for nid, n in graph.nodes.items() if n.get("resource_type") == "test"}
    return Subgraph(nodes={k: v for k, v in graph.nodes.items() if k not in tests},
                    edges=[(a, b) for a, b in graph.edges if a not in tests and b not in tests])


def has_dbt_tables(con: duckdb.DuckDBPyConnection) -> bool:
    names = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    return {"dbt_nodes", "lineage_edges"} <= names
