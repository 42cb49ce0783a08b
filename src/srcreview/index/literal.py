"""Literal values of IR expressions: strings, numbers, and containers of them. No eval."""

from __future__ import annotations

from srcreview.index import ir
from srcreview.index.facts import UNKNOWN

MAX_ELEMENTS = 10_000


def literal_value(expr):
    """The Python value of a literal expression (nested tuples/lists/sets/dicts), else UNKNOWN."""
    if expr is None:
        return UNKNOWN
    if isinstance(expr, ir.Constant):
        return expr.value
    if isinstance(expr, ir.Seq):
        if len(expr.elts) > MAX_ELEMENTS:
            return UNKNOWN
        values = []
        for elt in expr.elts:
            value = literal_value(elt)
            if value is UNKNOWN:
                return UNKNOWN
            values.append(value)
        if expr.kind == "tuple":
            return tuple(values)
        if expr.kind == "list":
            return list(values)
        try:
            return frozenset(values)
        except TypeError:
            return UNKNOWN
    if isinstance(expr, ir.Dict):
        out = {}
        for key, value in zip(expr.keys, expr.values, strict=True):
            k = literal_value(key) if key is not None else UNKNOWN
            v = literal_value(value)
            if k is UNKNOWN:
                return UNKNOWN
            try:
                out[k] = v
            except TypeError:
                return UNKNOWN
        return out
    if isinstance(expr, ir.Unary) and expr.op in ("-", "+"):
        value = literal_value(expr.operand)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if expr.op == "-" else value
    return UNKNOWN
