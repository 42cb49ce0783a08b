"""Literal values of IR expressions: strings, numbers, and containers of them. No eval."""

from __future__ import annotations

from srcreview.index.facts import UNKNOWN

MAX_ELEMENTS = 10_000


def literal_value(expr):
    """The Python value of a literal expression (nested tuples/lists/sets/dicts), else UNKNOWN."""
    if expr is None:
        return UNKNOWN
    kind = expr[0]
    if kind == "const":
        return expr[3]
    if kind in ("tuple", "list", "set"):
        elts = expr[3]
        if len(elts) > MAX_ELEMENTS:
            return UNKNOWN
        values = []
        for elt in elts:
            value = literal_value(elt)
            if value is UNKNOWN:
                return UNKNOWN
            values.append(value)
        if kind == "tuple":
            return tuple(values)
        if kind == "list":
            return list(values)
        try:
            return frozenset(values)
        except TypeError:
            return UNKNOWN
    if kind == "dict":
        out = {}
        for key, value in zip(expr[3], expr[4]):
            k = literal_value(key) if key is not None else UNKNOWN
            v = literal_value(value)
            if k is UNKNOWN:
                return UNKNOWN
            try:
                out[k] = v
            except TypeError:
                return UNKNOWN
        return out
    if kind == "unary" and expr[3] in ("-", "+"):
        value = literal_value(expr[4])
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return -value if expr[3] == "-" else value
    return UNKNOWN
