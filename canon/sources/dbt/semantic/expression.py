"""Derived-metric expressions, evaluated by a whitelisting AST walker instead of `eval`.

Only numbers, names, + - * / and parentheses are accepted; anything else
(calls, attributes, subscripts, comparisons, dunder names) is refused.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping

from canon.sources.dbt.semantic.errors import NotComputable, UnsafeExpression

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def expression_names(expr: str) -> set[str]:
    """The input names an expression uses (after checking it is safe)."""
    tree = parse_expression(expr)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}


def parse_expression(expr: str) -> ast.Expression:
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
    tree = parse_expression(expr)

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
