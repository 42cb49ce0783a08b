"""Small walkers over the index's statement/expression IR (srcreview.index.facts), for checks.

Only what the checks need that the graph API does not give directly: calls in a body, the
text of an expression, and a three-valued evaluator for the simple conditions that guard an
assignment (`x.kv_cache_dtype is not None` with the recipe bound).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class _Undecided:
    def __repr__(self) -> str:
        return "UNDECIDED"


UNDECIDED: Any = _Undecided()


def iter_exprs(node) -> Iterator[tuple]:
    """Every expression tuple nested in a statement or expression (pre-order)."""
    if isinstance(node, tuple):
        if node and isinstance(node[0], str) and len(node) >= 3 and isinstance(node[1], int):
            if node[0] in _EXPR_KINDS:
                yield node
            for child in node[3:]:
                yield from iter_exprs(child)
        else:
            for child in node:
                yield from iter_exprs(child)


_EXPR_KINDS = {"name", "attr", "const", "call", "compare", "boolop", "not", "unary", "binop", "subscript",
               "tuple", "list", "set", "dict", "ifexp", "star", "other"}


def iter_calls(body) -> Iterator[tuple]:
    for expr in iter_exprs(body):
        if expr[0] == "call":
            yield expr


def dotted(expr) -> str | None:
    """`a.b.c` for a name/attribute chain, else None."""
    if not isinstance(expr, tuple) or not expr:
        return None
    if expr[0] == "name":
        return expr[3]
    if expr[0] == "attr":
        base = dotted(expr[3])
        return f"{base}.{expr[4]}" if base else None
    return None


def call_name(call: tuple) -> str | None:
    """The dotted callee of a call expression (`get_model`, `self.vllm_config.replace`)."""
    return dotted(call[3])


def call_kwarg(call: tuple, name: str):
    for key, value in call[5]:
        if key == name:
            return value
    return None


def evaluate(expr, lookup) -> Any:
    """Three-valued evaluation of a simple condition; `lookup(dotted) -> value | UNDECIDED`."""
    kind = expr[0]
    if kind == "const":
        return expr[3]
    if kind in ("name", "attr"):
        name = dotted(expr)
        return lookup(name) if name else UNDECIDED
    if kind == "not":
        value = evaluate(expr[3], lookup)
        return UNDECIDED if value is UNDECIDED else (not value)
    if kind == "boolop":
        values = [evaluate(v, lookup) for v in expr[4]]
        if expr[3] == "and":
            if any(v is not UNDECIDED and not v for v in values):
                return False
            return UNDECIDED if any(v is UNDECIDED for v in values) else True
        if any(v is not UNDECIDED and v for v in values):
            return True
        return UNDECIDED if any(v is UNDECIDED for v in values) else False
    if kind == "compare" and len(expr[4]) == 1:
        left = evaluate(expr[3], lookup)
        right = evaluate(expr[5][0], lookup)
        if left is UNDECIDED or right is UNDECIDED:
            return UNDECIDED
        op = expr[4][0]
        try:
            return {"==": lambda: left == right, "!=": lambda: left != right,
                    "is": lambda: left is right, "is not": lambda: left is not right,
                    "in": lambda: left in right, "not in": lambda: left not in right}[op]()
        except (KeyError, TypeError):
            return UNDECIDED
    return UNDECIDED
