"""dbt's semantic manifest, indexed for lookups: metrics, semantic models, measures, units.

This is the same MetricFlow spec `mf query` reads (`semantic_manifest.json`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from canon.sources.dbt.artifacts import read_semantic_manifest
from canon.sources.dbt.semantic.errors import NotComputable
from canon.sources.dbt.semantic.expression import parse_expression

_USD = re.compile(r"(^|[^a-z])usd([^a-z]|$)", re.IGNORECASE)


class SemanticManifest:
    """Metrics, semantic models and measures of one semantic manifest, by name.

    `source` is dbt's semantic_manifest.json as a dict, the file, or the folder holding it."""

    def __init__(self, source: dict | Path | str):
        if isinstance(source, (str, Path)):
            path = Path(source)
            if path.is_dir():
                path = path / "semantic_manifest.json"
            source = read_semantic_manifest(path)
        self.raw: dict = source
        self.metrics: dict[str, dict] = {m["name"]: m for m in source.get("metrics") or []}
        self.models: dict[str, dict] = {s["name"]: s for s in source.get("semantic_models") or []}
        self.measures: dict[str, tuple[dict, dict]] = {}
        for sm in self.models.values():
            for ms in sm.get("measures") or []:
                self.measures[ms["name"]] = (ms, sm)

    def metric(self, name: str) -> dict:
        m = self.metrics.get(name)
        if m is None:
            raise NotComputable(f"metric {name!r} is not in the semantic manifest")
        return m

    @staticmethod
    def inputs(name: str, m: dict) -> list[tuple[dict, str]]:
        """The inputs of a derived or ratio metric, each with its role (alias or numerator/denominator)."""
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
    def check_input(name: str, inp: dict) -> None:
        if inp.get("offset_window") or inp.get("offset_to_grain"):
            raise NotComputable(f"metric {name!r}: input {inp.get('name')!r} has a time offset (not computed in process)")

    def unit(self, m: dict, fallback: bool = True) -> str:
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
    def derived_unit(m: dict, input_units: Iterable[str]) -> str:
        """A sum/difference of same-unit inputs keeps the unit; products and quotients do not."""
        units = set(input_units)
        expr = (m.get("type_params") or {}).get("expr") or ""
        tree = parse_expression(expr)
        scaling = any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Div))
                      and not (isinstance(n.right, ast.Constant) or isinstance(n.left, ast.Constant))
                      for n in ast.walk(tree))
        return units.pop() if len(units) == 1 and not scaling else ""
