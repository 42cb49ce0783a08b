"""Python's own behaviour over abstract values: truth, comparison, operators, builtins and the
methods of constants (`"x".startswith`, `d.get`), computed only when every input is known.

Functions here take already forced values and, where a nested value must be forced or a
class looked up, the one collaborator they need (`force`, `truth`, a resolver).
"""

from __future__ import annotations

import builtins
import fnmatch
import inspect
import operator
import posixpath
import re

from srcreview.interp import paths
from srcreview.interp.values import (
    BoundBuiltin,
    Bounded,
    Builtin,
    ClassRef,
    Const,
    DictVal,
    EnumMember,
    External,
    FuncRef,
    Grown,
    Known,
    ListVal,
    LocalPath,
    ModuleRef,
    Obj,
    OneOf,
    Partial,
    Text,
    TupleVal,
    Union,
    Unknown,
    bounds_of,
    equal,
    iter_items,
    union,
)

BUILTIN_NAMES = frozenset(dir(builtins))

# `type` too: a constant is plain data, never a class (classes are ClassRefs), so
# `isinstance("mp", type)` is False
PLAIN_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "tuple": tuple, "list": list,
               "dict": dict, "type": type}

def _power(base, exponent):
    """`**` over small numbers only (2**40, 10**12): a huge power is not computed here."""
    if isinstance(exponent, bool) or not isinstance(exponent, int) or not 0 <= exponent <= 64 \
            or isinstance(base, bool) or not isinstance(base, (int, float)) or abs(base) > 2 ** 16:
        raise ValueError("not a small power")
    return base ** exponent


def _shift(left, right, op):
    """`<<` and `>>` of ints by a small count (`1 << 30`: a size in bytes)."""
    if any(isinstance(x, bool) or not isinstance(x, int) for x in (left, right)) or not 0 <= right <= 64:
        raise ValueError("not a small shift")
    return op(left, right)


BINOPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
    "%": operator.mod, "|": operator.or_, "&": operator.and_, "**": _power, "^": operator.xor,
    "<<": lambda a, b: _shift(a, b, operator.lshift), ">>": lambda a, b: _shift(a, b, operator.rshift),
}

COMPARE = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge,
}

_CONSTANT_METHODS = {
    str: ("startswith", "endswith", "lower", "upper", "strip", "split", "replace", "count", "find"),
    dict: ("get", "keys", "values", "items"),
    tuple: ("count", "index"),
    list: ("count", "index"),
    frozenset: ("issubset", "issuperset", "intersection", "union"),
    re.Match: ("group", "groups"),
}

TYPING_ARGS = ("typing.get_args", "typing_extensions.get_args")  # get_args(SomeLiteral): its members
# standard-library functions that are pure over constants: computed with Python's own when every
# argument is known (a value parser reading `1k` with re.fullmatch), else Unknown
# (the `regex` package, which vLLM imports as re, is documented as compatible with re in its
# default VERSION0 mode for the patterns re accepts: Python's re runs it)
PURE_EXTERNALS = {f"{module}.{name}": getattr(re, name) for module in ("re", "regex")
                  for name in ("match", "fullmatch", "search")}
# as on the Linux hosts vLLM serves from (posixpath; fnmatch there is case-sensitive)
PURE_EXTERNALS |= {"fnmatch.fnmatch": fnmatch.fnmatchcase, "fnmatch.fnmatchcase": fnmatch.fnmatchcase,
                   "os.path.basename": posixpath.basename, "os.path.dirname": posixpath.dirname}
MAX_PATTERN = 200  # longer patterns or subjects are not run: a pathological regex stays Unknown

MAX_RANGE = 64  # `range(n)` with a constant n up to this is its tuple of items
_PURE_BUILTINS = ("len", "bool", "int", "str", "float", "min", "max", "sum", "any", "all", "sorted", "tuple",
                  "list", "set", "frozenset", "abs", "round", "enumerate", "zip", "reversed")
_SEQUENCES = ("sorted", "list", "enumerate", "zip", "reversed")  # their result as the tuple of its items


def truth(value, force):
    """(True | False | None, why undecided) for the truth of a value; `force` resolves lazy ones."""
    value = force(value)
    if isinstance(value, Const):
        try:
            return bool(value.value), ""
        except Exception:  # noqa: BLE001
            return None, "truth of a constant"
    if isinstance(value, Obj):
        if value.nonnull:
            return True, ""
        if value.path is not None:
            return None, f"{'.'.join(value.path)} is not set by the recipe"
        return None, f"{value.origin or 'value'} is only known at run time"
    if isinstance(value, TupleVal):
        return bool(value.items), ""
    if isinstance(value, ListVal):
        if value.min_len > 0:
            return True, ""
        if not value.maybe_more:
            return False, ""
        return None, "list filled under undecided conditions"
    if isinstance(value, (ClassRef, FuncRef, ModuleRef)):
        return True, ""
    if isinstance(value, Union):
        truths = {truth(o, force)[0] for o in value.options}
        if len(truths) == 1 and None not in truths:
            return truths.pop(), ""
        return None, "value differs between branches"
    if isinstance(value, Known):
        return value.truth, ""
    if isinstance(value, Unknown):
        return None, value.reason
    if isinstance(value, OneOf):
        return None, f"one of {value.source}"
    return None, f"{type(value).__name__} is only known at run time"


def compare(op: str, left, right, truth_of):
    """(result | None, why undecided) of `left op right` over forced values; `truth_of(value)`
    gives the truth of a value (for `x is None` on an object that may be unset). A union is
    decided when every option gives the same result."""
    for side in (left, right):
        if isinstance(side, Union):
            results = [compare(op, o if side is left else left, o if side is right else right, truth_of)
                       for o in side.options]
            if all(r[0] is not None for r in results) and len({r[0] for r in results}) == 1:
                return results[0][0], ""
            return None, next((r[1] for r in results if r[0] is None), "the options of a union disagree")
    if op in ("is", "is not"):
        if isinstance(right, Const) and right.value is None:
            result = None
            if isinstance(left, Const):
                result = left.value is None
            elif isinstance(left, (Obj, ListVal, DictVal, TupleVal, ClassRef, FuncRef, ModuleRef, Text)) and (
                    not isinstance(left, Obj) or left.nonnull):
                result = False  # an object, a list, a dict, a tuple, a class, a function, a str: never None
            if result is None:
                _, reason = truth_of(left)
                return None, reason or "identity"
            return (result if op == "is" else not result), ""
        if isinstance(left, Const) and isinstance(right, Const) and isinstance(left.value, (bool, type(None))):
            same = left.value is right.value
            return (same if op == "is" else not same), ""
        return None, "identity"
    if op in ("in", "not in"):
        if isinstance(right, BoundBuiltin) and right.name == "keys" and isinstance(right.receiver, DictVal):
            right = right.receiver  # `k in table.keys()`: a key of the table
        if isinstance(left, Const) and isinstance(right, Const):
            try:
                container = right.value
                if isinstance(left.value, EnumMember) or any(isinstance(x, EnumMember) for x in iter_items(container)):
                    found = any(equal(left.value, x) for x in iter_items(container))
                else:
                    found = left.value in container
            except TypeError:
                return None, "membership"
            return (found if op == "in" else not found), ""
        if isinstance(left, (Const, ClassRef)) and isinstance(right, TupleVal):
            found = [_same_object(left, item) for item in right.items]  # `SupportsPP in model.__mro__`
            if None not in found:
                return (any(found) if op == "in" else not any(found)), ""
        if isinstance(left, Const) and isinstance(right, ListVal) and right.min_len == 0 and not right.maybe_more:
            return (op == "not in"), ""
        if isinstance(left, Const) and isinstance(right, Grown) and any(equal(left.value, m) for m in right.members):
            return (op == "in"), ""  # a member of its literal: other code only ever adds to it
        if isinstance(left, Const) and isinstance(right, DictVal):
            found = [equal(left.value, k) for k, _ in right.items]  # its keys are constants; values may not be
            if None not in found:
                return (any(found) if op == "in" else not any(found)), ""
        return None, _why(left, right, truth_of)
    decided = _by_bounds(op, left, right)
    if decided is not None:
        return decided, ""
    if isinstance(left, Const) and isinstance(right, Const):
        if op in ("==", "!="):
            eq = equal(left.value, right.value)
            if eq is None:
                return None, "comparison"
            return (eq if op == "==" else not eq), ""
        try:
            return bool(COMPARE[op](left.value, right.value)), ""
        except Exception:  # noqa: BLE001
            return None, "comparison"
    if (op in ("==", "!=") and isinstance(right, Const) and isinstance(left, Obj) and left.nonnull
            and right.value is None):
        return (op == "!="), ""
    return None, _why(left, right, truth_of)


def _same_object(left, item) -> bool | None:
    """`left == item` for a constant or a class of the tree against an item of a tuple: a class
    equals only itself; it is never a constant or an out-of-tree class. None when not known."""
    if isinstance(left, ClassRef):
        if isinstance(item, ClassRef):
            return left.qualname == item.qualname
        return False if isinstance(item, (Const, External)) else None
    if isinstance(item, Const):
        return equal(left.value, item.value)
    # a constant is never a class of the tree; an out-of-tree name may stand for a constant (`os.sep`)
    return False if isinstance(item, ClassRef) else None


def _by_bounds(op: str, left, right) -> bool | None:
    """`left op right` where one side is a Bounded number and the other a number or Bounded,
    when the bounds settle it (every value within them gives the same answer); else None."""
    if not (isinstance(left, Bounded) or isinstance(right, Bounded)):
        return None
    a, b = bounds_of(left), bounds_of(right)
    if a is None or b is None:
        return None
    (alo, ahi), (blo, bhi) = a, b

    def below(x, y):  # surely x < y
        return x is not None and y is not None and x < y

    def at_most(x, y):  # surely x <= y
        return x is not None and y is not None and x <= y

    if op == "<":
        return True if below(ahi, blo) else False if at_most(bhi, alo) else None
    if op == "<=":
        return True if at_most(ahi, blo) else False if below(bhi, alo) else None
    if op == ">":
        return True if below(bhi, alo) else False if at_most(ahi, blo) else None
    if op == ">=":
        return True if at_most(bhi, alo) else False if below(ahi, blo) else None
    if op in ("==", "!="):
        apart = below(ahi, blo) or below(bhi, alo)
        return (op == "!=") if apart else None
    return None


def _why(left, right, truth_of) -> str:
    for v in (left, right):
        if not isinstance(v, Const):
            _, reason = truth_of(v)
            if reason:
                return reason
    return "comparison of run-time values"


def binop(op: str, left, right):
    """`left op right` over forced values, or None when not computed here. An operand that
    differs between branches (a Union) gives one of the results of its options: decided when
    they agree (`world_size * data_parallel_size` with both 1 on every path)."""
    if isinstance(left, Union) or isinstance(right, Union):
        results = []
        for a in (left.options if isinstance(left, Union) else (left,)):
            for b in (right.options if isinstance(right, Union) else (right,)):
                result = binop(op, a, b)
                if result is None:
                    return None
                results.append(result)
        return union(results)
    if isinstance(left, Const) and isinstance(right, Const):
        fn = BINOPS.get(op)
        if fn is not None:
            try:
                return Const(fn(left.value, right.value))
            except Exception:  # noqa: BLE001 - e.g. None + 1: the program would raise; stay undecided
                pass
    if isinstance(left, ListVal) and op == "+":
        return ListVal(left.min_len, True)
    if isinstance(left, LocalPath) and op == "/":
        return paths.join(left, right)
    return None


_EMPTY_CONTAINERS = {"set": frozenset, "frozenset": frozenset, "list": list, "tuple": tuple, "dict": dict}
SIGNATURE = "inspect.signature"
# the kinds of `inspect.Parameter`, as the stdlib defines them (an IntEnum: compared as ints too)
STDLIB_CONSTANTS = {f"inspect.Parameter.{k}": getattr(inspect.Parameter, k) for k in
                    ("POSITIONAL_ONLY", "POSITIONAL_OR_KEYWORD", "VAR_POSITIONAL", "KEYWORD_ONLY", "VAR_KEYWORD")}
_PARAM_KINDS = {"positional": inspect.Parameter.POSITIONAL_OR_KEYWORD, "vararg": inspect.Parameter.VAR_POSITIONAL,
                "keyword": inspect.Parameter.KEYWORD_ONLY, "kwarg": inspect.Parameter.VAR_KEYWORD}


def signature_of(facts) -> inspect.Signature | None:
    """The signature `inspect.signature` gives a `def` with these facts (names and kinds only;
    the first `posonly` positional parameters are positional-only); None if it cannot be built."""
    try:
        return inspect.Signature([
            inspect.Parameter(p.name, inspect.Parameter.POSITIONAL_ONLY if i < facts.posonly else _PARAM_KINDS[p.kind])
            for i, p in enumerate(facts.params)])
    except (KeyError, ValueError):
        return None


def const_attr(value, name: str):
    """An attribute of a constant: an enum member's name, a capability's major/minor, a
    signature's parameters (a dict, in order) and a parameter's name and kind, else a bound
    method computed by `bound_builtin` when called."""
    if isinstance(value, inspect.Signature) and name == "parameters":
        return Const(dict(value.parameters))
    if isinstance(value, inspect.Parameter) and name in ("name", "kind"):
        return Const(getattr(value, name))
    if isinstance(value, EnumMember):
        if name == "name":
            return Const(value.name)
        return Unknown(f"{value.name}.{name}")
    if isinstance(value, tuple) and len(value) == 2 and name in ("major", "minor"):
        return Const(value[0] if name == "major" else value[1])
    return BoundBuiltin(name, value)


def bound_builtin(bound: BoundBuiltin, values):
    """A method of a constant called with forced arguments (`to_int` of a capability too)."""
    if not all(isinstance(v, Const) for v in values):
        return Unknown(f".{bound.name}()")
    receiver = bound.receiver
    if bound.name == "to_int" and isinstance(receiver, tuple) and len(receiver) == 2:
        return Const(receiver[0] * 10 + receiver[1])
    for kind, names in _CONSTANT_METHODS.items():
        if isinstance(receiver, kind) and bound.name in names:
            try:
                result = getattr(receiver, bound.name)(*[v.value for v in values])
            except Exception:  # noqa: BLE001
                return Unknown(f".{bound.name}()")
            if bound.name in ("keys", "values", "items"):
                result = tuple(result)
            return Const(result)
    return Unknown(f".{bound.name}()")


def builtin_value(name: str, values, text: str, resolver, truth_of):
    """A builtin called with forced arguments: isinstance/type through the resolver's classes,
    pure builtins over constants; anything else is Unknown. An argument that differs between
    branches (a Union) gives one of the results of its options."""
    at = next((i for i, v in enumerate(values) if isinstance(v, Union)), None)
    if at is not None and (name in ("isinstance", "callable") or name in _PURE_BUILTINS):
        results = [builtin_value(name, (*values[:at], option, *values[at + 1:]), text, resolver, truth_of)
                   for option in values[at].options]
        return Unknown(text) if any(isinstance(r, Unknown) for r in results) else union(results)
    if name == "isinstance" and len(values) == 2:
        obj, cls = values
        if isinstance(obj, ClassRef):  # a class object
            if isinstance(cls, Builtin) and cls.name in PLAIN_TYPES:
                return Const(cls.name == "type")
            if isinstance(cls, ClassRef):
                canonical = resolver.canonical(obj.qualname)
                found = resolver.class_isinstance(canonical, cls.qualname) if canonical else None
                return Const(found) if found is not None else Unknown(text)
        if isinstance(obj, Obj) and isinstance(cls, ClassRef) and obj.cls:
            canonical = resolver.canonical(obj.cls)
            if canonical is not None:
                return Const(resolver.index.subclass_of(canonical, cls.qualname))
        if isinstance(obj, Const) and obj.value is None:
            return Const(False)
        if isinstance(obj, Const) and isinstance(cls, ClassRef):
            # plain data is an instance of a builtin type, never of a class of the tree whose
            # every base is of the tree too (one over `tuple` or `NamedTuple` may be what a
            # tuple constant stands for: a device capability); an enum member is one of its
            # enum's class and that class's bases
            if isinstance(obj.value, EnumMember):
                enum = resolver.canonical(obj.value.enum)
                if enum is not None:
                    return Const(resolver.index.subclass_of(enum, cls.qualname))
            elif _only_tree_bases(resolver.index, cls.qualname):
                return Const(False)
        if isinstance(cls, External) and cls.name in paths.PATH_CLASSES and isinstance(obj, (LocalPath, Const)):
            return Const(isinstance(obj, LocalPath))  # a constant is plain data, never a path
        if isinstance(obj, DictVal) and isinstance(cls, Builtin) and cls.name in PLAIN_TYPES:
            return Const(cls.name == "dict")
        if isinstance(obj, Text) and isinstance(cls, Builtin) and cls.name in PLAIN_TYPES:
            return Const(cls.name == "str")
        if isinstance(obj, Const) and isinstance(cls, Builtin) and cls.name in PLAIN_TYPES \
                and not isinstance(obj.value, EnumMember):
            return Const(isinstance(obj.value, PLAIN_TYPES[cls.name]))
        if isinstance(obj, Const) and isinstance(cls, Builtin) and cls.name == "type":
            return Const(False)  # a constant is plain data (or an enum member), never a class
        return Unknown(text)
    if name == "issubclass" and len(values) == 2 and isinstance(values[0], ClassRef):
        canonical = resolver.canonical(values[0].qualname)
        found = resolver.class_subclass(canonical, values[1]) if canonical else None
        return Const(found) if found is not None else Unknown(text)
    if name == "type" and len(values) == 1:
        obj = values[0]
        if isinstance(obj, Obj) and obj.cls and resolver.canonical(obj.cls):
            return ClassRef(resolver.canonical(obj.cls))
        return Unknown(text)
    if name == "callable" and len(values) == 1:
        obj = values[0]
        if isinstance(obj, Const):  # plain data: None, numbers, strings, containers
            return Const(callable(obj.value))
        if isinstance(obj, (FuncRef, ClassRef, Partial)):
            return Const(True)
        return Unknown(text)
    if name == "range" and 1 <= len(values) <= 3 and all(isinstance(v, Const) and type(v.value) is int
                                                          for v in values):
        numbers = range(*(v.value for v in values))
        # its items, in order (iterated, measured and indexed as the range is); a long one is not spelled out
        return Const(tuple(numbers)) if len(numbers) <= MAX_RANGE else Unknown(text)
    if name == "str" and len(values) == 1 and isinstance(values[0], LocalPath):
        shown = paths.text(values[0])
        return Const(shown) if shown is not None else Unknown(text)
    if name in _PURE_BUILTINS:
        if len(values) == 1 and isinstance(values[0], TupleVal) and name in ("bool", "len"):
            return Const(len(values[0].items) if name == "len" else bool(values[0].items))
        if len(values) == 1 and isinstance(values[0], ListVal) and name in ("bool", "len"):
            lv = values[0]
            if name == "bool":
                return Const(True) if lv.min_len > 0 else (Const(False) if not lv.maybe_more else Unknown(text))
            return Const(lv.min_len) if not lv.maybe_more else Unknown(text)
        if name == "bool" and len(values) == 1:
            value, reason = truth_of(values[0])
            return Const(value) if value is not None else Unknown(reason)
        if not values and name in _EMPTY_CONTAINERS:  # `set()`: an empty container, as a display gives it
            return Const(_EMPTY_CONTAINERS[name]())
        if values and all(isinstance(v, Const) for v in values):
            try:
                result = getattr(builtins, name)(*[v.value for v in values])
            except Exception:  # noqa: BLE001 - the program would raise here; stay undecided
                return Unknown(text)
            return Const(tuple(result) if name in _SEQUENCES else result)
        if name in ("min", "max") and len(values) >= 2:
            return _bounded_extreme(name, values, text)
        return Unknown(text)
    return Unknown(text)


def _only_tree_bases(index, qualname: str) -> bool:
    """Whether every class of `qualname`'s MRO is a class of the tree (or `object`)."""
    info = index._class_info_abs(qualname)
    return info is not None and all(q in ("object", "builtins.object") or index._class_symbol(q) is not None
                                    for q in info.linearization)


def _bounded_extreme(name: str, values, text: str):
    """`min(a, b, ...)` (or max) of numbers some of which are not known: at most (at least)
    the smallest upper (largest lower) bound among them, which a comparison may settle.
    Unknown when no argument bounds it, or one may not be a number at all."""
    bounds = [bounds_of(v) for v in values]
    if not any(b is not None for b in bounds) or any(
            b is None and type(v) is not Unknown for b, v in zip(bounds, values, strict=True)):
        return Unknown(text)
    los = [b[0] for b in bounds if b is not None and b[0] is not None]
    his = [b[1] for b in bounds if b is not None and b[1] is not None]
    every = len(values)  # a bound on that side from every argument
    if name == "min":  # at most the least upper bound; at least the least lower one, if all have one
        hi, lo = (min(his) if his else None), (min(los) if len(los) == every else None)
    else:
        lo, hi = (max(los) if los else None), (max(his) if len(his) == every else None)
    return Unknown(text) if lo is None and hi is None else Bounded(text, lo, hi)


def external_value(name: str, values, text: str):
    """A pure standard-library function (PURE_EXTERNALS) over constant strings and ints."""
    if not values or not all(isinstance(v, Const) and isinstance(v.value, (str, int)) for v in values) \
            or any(isinstance(v.value, str) and len(v.value) > MAX_PATTERN for v in values):
        return Unknown(text)
    try:
        return Const(PURE_EXTERNALS[name](*[v.value for v in values]))
    except Exception:  # noqa: BLE001 - a bad pattern: the program would raise; stay undecided
        return Unknown(text)


def typing_args(index, module: str, text: str):
    """`typing.get_args(Alias)` of a Literal alias: its members, however long and through
    nested aliases (a tuple, as Python gives); Unknown when the alias is not a Literal."""
    members = index.literal_values(text, module)
    if members is None:
        return Unknown(f"get_args({text}): not a Literal the source fixes")
    return Const(tuple(members))
