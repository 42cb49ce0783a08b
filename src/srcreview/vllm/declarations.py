"""What a config field's declaration admits: pydantic's lax validation of one recipe value.

vLLM's config classes are pydantic dataclasses (`@config`): a value passed to one is checked
against the field's annotation and its `Field(...)` constraints before any validator of the
model runs. This module is that check, modelled once (pytype's overlays): the annotation read
from the source (scalar types, `Literal` members through aliases of any length, `Enum`
members, unions, containers) and the constraints `gt`, `ge`, `lt`, `le`, `multiple_of`,
`min_length`, `max_length`, `allow_inf_nan`, applied to a value as pydantic's lax mode does
(`"5"` is an int, `5.0` is an int, `nan` is not; a number is never a str). Recipe values are
TOML values: str, int, float (NaN and infinities included), bool, arrays and tables.

Fail closed: what the declaration does not let us read (a class annotation, an alias computed
at import time) is `unknown`, never admitted.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from dataclasses import dataclass
from typing import Any

from srcreview.index.facts import UNKNOWN
from srcreview.index.index import _ast_dotted as _dotted

CONSTRAINTS = ("gt", "ge", "lt", "le", "multiple_of", "min_length", "max_length", "allow_inf_nan")
_SEQUENCES = ("list", "tuple", "set", "frozenset", "Sequence", "Collection", "Iterable", "MutableSequence")
_MAPPINGS = ("dict", "Mapping", "MutableMapping")
_PASSTHROUGH = ("Any", "object")
_TRUE = ("1", "on", "t", "true", "y", "yes")
_FALSE = ("0", "off", "f", "false", "n", "no")
MAX_DEPTH = 12


@dataclass(frozen=True)
class Option:
    """One member of a declared type: kind is none | int | float | bool | str | any | literal |
    enum | list | dict | unknown; `members` for literal/enum, `item` for containers."""

    kind: str
    members: tuple = ()
    item: Declared | None = None
    values: tuple = ()  # an Enum's member values
    text: str = ""


@dataclass(frozen=True)
class Declared:
    """A field's declared type as options of a union, and its pydantic constraints."""

    options: tuple[Option, ...]
    constraints: tuple[tuple[str, object], ...] = ()
    text: str = ""

    def members(self) -> tuple:
        """Every Literal / Enum member the declaration names (for messages and suggestions)."""
        out: list[Any] = []
        for o in self.options:
            out.extend(o.members)
        return tuple(dict.fromkeys(out))


@dataclass(frozen=True)
class Verdict:
    outcome: str  # "admitted" | "refused" | "unknown"
    reason: str = ""


def declared(index, module: str, field) -> Declared:
    """The declaration of a FieldFact read in `module` (the module of the class declaring it)."""
    constraints = field_constraints(field)
    if not field.annotation:
        return Declared((Option("unknown", text="no annotation"),), constraints, "")
    try:
        node = ast.parse(field.annotation, mode="eval").body
    except SyntaxError:
        return Declared((Option("unknown", text=field.annotation),), constraints, field.annotation)
    reader = _Reader(index)
    options, more = reader.options(node, module, 0)
    return Declared(tuple(options), constraints + tuple(more), field.annotation)


def field_constraints(field) -> tuple[tuple[str, object], ...]:
    """`Field(default=..., gt=0)`: the constraints with literal values, in declaration order."""
    from srcreview.index import ir

    expr = field.default_expr
    if not isinstance(expr, ir.Call) or (ir.dotted(expr.func) or "").split(".")[-1] != "Field":
        return ()
    return _call_constraints(expr)


def _call_constraints(call) -> tuple[tuple[str, object], ...]:
    from srcreview.index.literal import literal_value

    out = []
    for kw in call.keywords:
        if kw.name in CONSTRAINTS:
            value = literal_value(kw.value)
            out.append((kw.name, value if value is not UNKNOWN else UNKNOWN))
    return tuple(out)


class _Reader:
    """Reads an annotation's AST into options, resolving aliases and imports in the index."""

    def __init__(self, index):
        self.index = index

    def options(self, node, module: str, depth: int) -> tuple[list[Option], list]:
        if depth > MAX_DEPTH:
            return [Option("unknown", text="annotation nested too deep")], []
        text = ast.unparse(node)
        if isinstance(node, ast.Constant):
            if node.value is None:
                return [Option("none")], []
            if isinstance(node.value, str):  # a forward reference
                try:
                    return self.options(ast.parse(node.value, mode="eval").body, module, depth + 1)
                except SyntaxError:
                    return [Option("unknown", text=node.value)], []
            return [Option("unknown", text=text)], []
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            left, lc = self.options(node.left, module, depth + 1)
            right, rc = self.options(node.right, module, depth + 1)
            return left + right, lc + rc
        if isinstance(node, ast.Subscript):
            head = _dotted(node.value) or ""
            tail = head.split(".")[-1]
            elements = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
            if tail == "Literal":
                members = self.index.literal_values(text, module)
                if members is None:
                    return [Option("unknown", text=f"{text}: a member is not a literal")], []
                return [Option("literal", tuple(members), text=text)], []
            if tail == "InitVar":  # a dataclass init-only field: pydantic validates it as its type
                return self.options(elements[0], module, depth + 1)
            if tail in ("Optional", "Union"):
                out, more = ([Option("none")] if tail == "Optional" else []), []
                for el in elements:
                    opts, c = self.options(el, module, depth + 1)
                    out += opts
                    more += c
                return out, more
            if tail == "Annotated":
                out, more = self.options(elements[0], module, depth + 1)
                for meta in elements[1:]:
                    if isinstance(meta, ast.Call) and (_dotted(meta.func) or "").split(".")[-1] == "Field":
                        from srcreview.index import ir

                        more += list(_call_constraints(ir.from_ast(meta, 1)))
                return out, more
            if tail == "SkipValidation":
                return [Option("any", text=text)], []
            if tail in _SEQUENCES or tail in _MAPPINGS:
                item = None
                arg = elements[-1] if tail in _MAPPINGS else elements[0]
                if (not (tail == "tuple" and len(elements) != 2)
                        and not (isinstance(arg, ast.Constant) and arg.value is Ellipsis)):
                    opts, _ = self.options(arg, module, depth + 1)
                    item = Declared(tuple(opts), (), ast.unparse(arg))
                return [Option("dict" if tail in _MAPPINGS else "list", item=item, text=text)], []
            return [Option("unknown", text=text)], []
        dotted = _dotted(node)
        if dotted is None:
            return [Option("unknown", text=text)], []
        if dotted in ("int", "float", "bool", "str"):
            return [Option(dotted)], []
        if dotted.split(".")[-1] in _PASSTHROUGH:
            return [Option("any", text=text)], []
        if dotted in _SEQUENCES or dotted in _MAPPINGS:
            return [Option("dict" if dotted in _MAPPINGS else "list", text=text)], []
        symbol = self.index.resolve_name(module, dotted)
        if symbol is None:
            return [Option("unknown", text=f"{text} is not resolved in the tree")], []
        if symbol.kind == "constant":
            const = self.index.module(symbol.module).constants[symbol.local]
            if const.reassigned or (const.guard is not None and const.guard != "TYPE_CHECKING"):
                return [Option("unknown", text=f"{text} is bound conditionally")], []
            try:
                value = ast.parse(const.text, mode="eval").body
            except SyntaxError:
                return [Option("unknown", text=text)], []
            if isinstance(value, ast.Call) and (_dotted(value.func) or "").split(".")[-1] == "TypeAliasType" \
                    and len(value.args) >= 2:
                value = value.args[1]
            return self.options(value, symbol.module, depth + 1)
        if symbol.kind == "class":
            info = self.index.class_info(symbol.qualname)
            if info is not None and info.enum_members is not None:
                return [Option("enum", tuple(name for name, _ in info.enum_members),
                               values=tuple(v for _, v in info.enum_members if v is not UNKNOWN),
                               text=symbol.qualname)], []
        return [Option("unknown", text=text)], []


def check(decl: Declared, value) -> Verdict:
    """Whether pydantic admits `value` for this declaration (lax mode), with the reason."""
    reasons: list[str] = []
    unknown: list[str] = []
    for option in decl.options:
        verdict = _option(option, value)
        if verdict.outcome == "admitted":
            bounded = _constraints(decl.constraints, value, option)
            if bounded.outcome == "admitted":
                return bounded
            (unknown if bounded.outcome == "unknown" else reasons).append(bounded.reason)
        elif verdict.outcome == "unknown":
            unknown.append(verdict.reason)
        else:
            reasons.append(verdict.reason)
    if unknown:
        return Verdict("unknown", "; ".join(dict.fromkeys(unknown)))
    return Verdict("refused", "; ".join(dict.fromkeys(r for r in reasons if r)) or f"not a {decl.text}")


def coerced(kind: str, value):
    """The value pydantic hands on for a scalar option (lax mode), or UNKNOWN when it refuses it."""
    if kind == "int":
        if isinstance(value, bool):
            return int(value)
        if isinstance(value, int):
            return value
        if isinstance(value, float):
            return int(value) if math.isfinite(value) and value == int(value) else UNKNOWN
        if isinstance(value, str):
            text = value.strip()
            try:
                return int(text)
            except ValueError:
                try:
                    number = float(text)
                except ValueError:
                    return UNKNOWN
                return int(number) if math.isfinite(number) and number == int(number) else UNKNOWN
        return UNKNOWN
    if kind == "float":
        if isinstance(value, (bool, int, float)):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value.strip())
            except ValueError:
                return UNKNOWN
        return UNKNOWN
    if kind == "bool":
        if isinstance(value, bool):
            return value
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in _TRUE + _FALSE:
            return value.strip().lower() in _TRUE
        return UNKNOWN
    if kind == "str":
        return value if isinstance(value, str) else UNKNOWN
    return UNKNOWN


def _option(option: Option, value) -> Verdict:
    kind = option.kind
    if kind == "any":
        return Verdict("admitted")
    if kind == "none":
        return Verdict("admitted") if value is None else Verdict("refused", "")
    if kind in ("int", "float", "bool", "str"):
        if coerced(kind, value) is UNKNOWN:
            shown = "NaN" if isinstance(value, float) and math.isnan(value) else repr(value)
            why = "not finite" if kind == "int" and isinstance(value, float) and not math.isfinite(value) else \
                f"not a valid {kind}"
            return Verdict("refused", f"{shown} is {why}")
        return Verdict("admitted")
    if kind == "literal":
        if any(type(m) is type(value) and m == value for m in option.members):
            return Verdict("admitted")
        if any(m == value for m in option.members if not isinstance(m, str)):
            return Verdict("unknown", f"{value!r} equals a member of another type")  # True == 1: pydantic's call
        return Verdict("refused", f"{value!r} is not one of the Literal's {len(option.members)} members")
    if kind == "enum":
        # a member, its name (vLLM's parsers take names, upper-cased) or its value
        name = getattr(value, "name", None) if type(value).__name__ == "EnumMember" else None
        if name in option.members or (isinstance(value, str) and (value.upper() in option.members
                                                                 or value in option.members)) \
                or (not isinstance(value, bool) and value in option.values):
            return Verdict("admitted")
        if isinstance(value, str) and re.fullmatch(r"\s*[+-]?[0-9]+\s*", value) and option.values \
                and all(type(v) is int for v in option.values) and int(value) in option.values:
            return Verdict("admitted")  # an IntEnum from the command line's text: pydantic's lax mode takes "3"
        return Verdict("refused", f"{value!r} is not a member of {option.text.rsplit('.', 1)[-1]}")
    if kind == "list":
        if not isinstance(value, list):
            return Verdict("refused", f"{value!r} is not a list")
        return _items(option.item, value)
    if kind == "dict":
        if not isinstance(value, dict):
            return Verdict("refused", f"{value!r} is not a table")
        return _items(option.item, list(value.values()))
    return Verdict("unknown", f"the declared type {option.text} is not modelled")


def _items(item: Declared | None, values: list) -> Verdict:
    if item is None:
        return Verdict("admitted")
    for v in values:
        verdict = check(item, v)
        if verdict.outcome != "admitted":
            return verdict
    return Verdict("admitted")


def _constraints(constraints, value, option: Option) -> Verdict:
    """Field constraints on the value as the option coerced it."""
    if not constraints:
        return Verdict("admitted")
    number = coerced(option.kind, value) if option.kind in ("int", "float") else value
    for name, bound in constraints:
        if bound is UNKNOWN:
            return Verdict("unknown", f"Field({name}=...) is not a literal")
        if name in ("min_length", "max_length"):
            if not isinstance(number, (str, list, dict)):
                continue
            size = len(number)
            if (name == "min_length" and size < bound) or (name == "max_length" and size > bound):
                return Verdict("refused", f"length {size} violates Field({name}={bound})")
            continue
        if option.kind not in ("int", "float"):
            continue
        if name == "allow_inf_nan":
            if bound is False and isinstance(number, float) and not math.isfinite(number):
                return Verdict("refused", f"{number!r} violates Field(allow_inf_nan=False)")
            continue
        if name == "multiple_of":
            ok = bound != 0 and math.isfinite(number) and number % bound == 0
        else:
            ok = _BOUND_TESTS[name](number, bound)
        if not ok:
            shown = "NaN" if isinstance(number, float) and math.isnan(number) else repr(value)
            return Verdict("refused", f"{shown} violates Field({name}={bound})")
    return Verdict("admitted")


_BOUND_TESTS = {"gt": operator.gt, "ge": operator.ge, "lt": operator.lt, "le": operator.le}


def suggestion(value, members) -> str:
    """A close admitted member for a string value (`TRITON` -> `TRITON_ATTN`), else ""."""
    import difflib

    if not isinstance(value, str):
        return ""
    names = [m for m in members if isinstance(m, str)]
    by_upper = {m.upper(): m for m in names}
    close = difflib.get_close_matches(value.upper(), list(by_upper), n=1, cutoff=0.6)
    if close:
        return by_upper[close[0]]
    prefixed = sorted(m for m in names if m.upper().startswith(value.upper()))
    return prefixed[0] if len(prefixed) == 1 else ""

