"""The typed IR of function bodies and expressions, and the only walkers over it.

The index keeps facts, not trees: statements and expressions of function bodies (and the
expressions of fields, parameters and constants) are stored as these frozen nodes, so the
interpreter, the call graph and the checks read the cache alone and never import libcst.
Every node carries `line` and `end_line` (1-based, as libcst's PositionProvider gives them). Fields
are read by name; the walkers below are the one way to visit a body.

    iter_statements(body)   every statement, nested blocks included, in source order
    iter_exprs(node)        every expression below a node, body or tuple of them (pre-order)
    iter_calls(node)        the calls among them
    dotted(expr)            `a.b.c` for a name/attribute chain, else None
    text(expr)              a readable rendering for messages (not for re-parsing)
    from_ast(node, line)    a stdlib `ast` annotation as IR (annotations kept as text)
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any, ClassVar, TypeVar

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover
    from typing_extensions import dataclass_transform


@dataclass(frozen=True, slots=True)
class Node:
    line: int
    end_line: int

    # fields holding nodes or tuples of nodes, in source order (what the walkers descend into)
    _kids: ClassVar[tuple[str, ...]] = ()
    _state: ClassVar[Any] = None

    def __reduce__(self):
        # (class, field values): half the pickle of the dataclass default, loaded by one call
        return type(self), self._state(self)


_N = TypeVar("_N", bound=Node)


@dataclass_transform(frozen_default=True)
def _node(cls: type[_N]) -> type[_N]:
    """A node class: a frozen, slotted dataclass (`dataclass_transform` says so to type checkers)."""
    cls = dataclass(frozen=True, slots=True)(cls)
    cls._state = attrgetter(*(f.name for f in fields(cls)))
    return cls


@_node
class Expr(Node):
    """An expression."""


@_node
class Stmt(Node):
    """A statement."""


# -- expressions ----------------------------------------------------------------------------


@_node
class Name(Expr):
    id: str


@_node
class Constant(Expr):
    """str, bytes, int, float, bool, None or Ellipsis."""

    value: Any


@_node
class Attr(Expr):
    value: Expr
    attr: str
    _kids = ("value",)


@_node
class Keyword(Node):
    """`name=value` in a call; `name` None for `**mapping`."""

    name: str | None
    value: Expr
    _kids = ("value",)


@_node
class Call(Expr):
    func: Expr
    args: tuple[Expr, ...]  # a `*x` argument is Starred
    keywords: tuple[Keyword, ...]
    _kids = ("func", "args", "keywords")

    def keyword(self, name: str) -> Expr | None:
        return next((k.value for k in self.keywords if k.name == name), None)


@_node
class Starred(Expr):
    value: Expr
    _kids = ("value",)


@_node
class Compare(Expr):
    left: Expr
    ops: tuple[str, ...]  # "==", "!=", "<", "<=", ">", ">=", "in", "not in", "is", "is not"
    comparators: tuple[Expr, ...]
    _kids = ("left", "comparators")


@_node
class BoolOp(Expr):
    op: str  # "and" | "or"
    values: tuple[Expr, ...]
    _kids = ("values",)


@_node
class Not(Expr):
    operand: Expr
    _kids = ("operand",)


@_node
class Unary(Expr):
    op: str  # "-" | "+" | "~"
    operand: Expr
    _kids = ("operand",)


@_node
class BinOp(Expr):
    op: str
    left: Expr
    right: Expr
    _kids = ("left", "right")


@_node
class Subscript(Expr):
    value: Expr
    index: tuple[Expr, ...]  # one entry per subscript element: `x[a, b]` has two
    _kids = ("value", "index")


@_node
class Slice(Expr):
    lower: Expr | None
    upper: Expr | None
    step: Expr | None
    _kids = ("lower", "upper", "step")


@_node
class Seq(Expr):
    kind: str  # "tuple" | "list" | "set"
    elts: tuple[Expr, ...]
    _kids = ("elts",)


@_node
class Dict(Expr):
    keys: tuple[Expr | None, ...]  # None for a `**mapping` entry
    values: tuple[Expr, ...]
    _kids = ("keys", "values")


@_node
class IfExp(Expr):
    test: Expr
    body: Expr
    orelse: Expr
    _kids = ("test", "body", "orelse")


@_node
class Lambda(Expr):
    params: tuple[str, ...]
    body: Expr
    _kids = ("body",)


@_node
class Generator(Node):
    """`for target in iter if ifs` of a comprehension."""

    target: Expr
    iter: Expr
    ifs: tuple[Expr, ...]
    _kids = ("target", "iter", "ifs")


@_node
class Comp(Expr):
    """List, set, dict comprehension or generator expression (a dict's elts are key, value)."""

    elts: tuple[Expr, ...]
    generators: tuple[Generator, ...]
    kind: str = "generator"  # "list" | "set" | "dict" | "generator": what an empty one evaluates to
    _kids = ("elts", "generators")


@_node
class Walrus(Expr):
    target: Expr
    value: Expr
    _kids = ("target", "value")


@_node
class OtherExpr(Expr):
    """f-strings, yield, odd strings...: kept so that calls and reads inside are seen."""

    kind: str  # libcst's class name ("FormattedString"), or the expression's text when it has no value
    children: tuple[Expr, ...]
    _kids = ("children",)


# -- statements ------------------------------------------------------------------------------

Body = tuple  # tuple[Stmt, ...]


@_node
class ExprStmt(Stmt):
    value: Expr
    _kids = ("value",)


@_node
class Assign(Stmt):
    targets: tuple[Expr, ...]
    value: Expr | None  # None for a bare declaration `x: T`
    annotation: str | None
    _kids = ("targets", "value")


@_node
class AugAssign(Stmt):
    target: Expr
    value: Expr
    op: str  # as BinOp's: "+", "*", ...
    _kids = ("target", "value")


@_node
class If(Stmt):
    test: Expr
    body: Body
    orelse: Body  # an `elif` is one If here
    text: str  # the test's source text on one line
    _kids = ("test", "body", "orelse")


@_node
class For(Stmt):
    target: Expr
    iter: Expr
    body: Body
    orelse: Body
    _kids = ("target", "iter", "body", "orelse")


@_node
class While(Stmt):
    test: Expr
    body: Body
    orelse: Body
    _kids = ("test", "body", "orelse")


@_node
class WithItem(Node):
    context: Expr
    target: Expr | None
    _kids = ("context", "target")


@_node
class With(Stmt):
    items: tuple[WithItem, ...]
    body: Body
    _kids = ("items", "body")


@_node
class Handler(Node):
    """An `except` clause (or a `match` case: any of them may run)."""

    type: Expr | None
    body: Body
    _kids = ("type", "body")


@_node
class Try(Stmt):
    body: Body
    handlers: tuple[Handler, ...]
    orelse: Body
    finalbody: Body
    _kids = ("body", "handlers", "orelse", "finalbody")


@_node
class Return(Stmt):
    value: Expr | None
    _kids = ("value",)


@_node
class Raise(Stmt):
    exc: Expr | None
    _kids = ("exc",)


@_node
class Assert(Stmt):
    test: Expr
    text: str  # the test's source text on one line
    _kids = ("test",)


@_node
class Def(Stmt):
    """A nested function or class; its facts are kept apart under `qualname`."""

    qualname: str


@_node
class Jump(Stmt):
    """`break` or `continue`: an unrolled loop must know where a path leaves its body."""

    kind: str  # "break" | "continue"


@_node
class OtherStmt(Stmt):
    """del, global, pass, ...: the expressions it evaluates."""

    exprs: tuple[Expr, ...]
    _kids = ("exprs",)


NODE_CLASSES = (
    Name, Constant, Attr, Keyword, Call, Starred, Compare, BoolOp, Not, Unary, BinOp, Subscript, Slice, Seq, Dict,
    IfExp, Lambda, Generator, Comp, Walrus, OtherExpr,
    ExprStmt, Assign, AugAssign, If, For, While, WithItem, With, Handler, Try, Return, Raise, Assert, Def, Jump,
    OtherStmt,
)


# -- walkers ---------------------------------------------------------------------------------


def children(node: Node):
    """The nodes directly below `node`, in source order."""
    out: list[Node] = []
    for name in node._kids:
        value = getattr(node, name)
        if value is None:
            continue
        if isinstance(value, tuple):
            out.extend(v for v in value if v is not None)
        else:
            out.append(value)
    return out


def blocks(stmt: Stmt) -> tuple[Body, ...]:
    """The statement blocks nested in a statement."""
    if isinstance(stmt, (If, For, While)):
        return (stmt.body, stmt.orelse)
    if isinstance(stmt, With):
        return (stmt.body,)
    if isinstance(stmt, Try):
        return (stmt.body, *(h.body for h in stmt.handlers), stmt.orelse, stmt.finalbody)
    return ()


def iter_statements(body):
    """Every statement, nested ones included, in source order."""
    for stmt in body:
        yield stmt
        for block in blocks(stmt):
            yield from iter_statements(block)


def iter_exprs(node):
    """Every expression in a node, a body or a tuple of them, each before its sub-expressions."""
    stack = [node]
    pop, push = stack.pop, stack.extend
    while stack:
        item = pop()
        if item is None:
            continue
        if isinstance(item, tuple):
            push(reversed(item))
            continue
        if isinstance(item, Expr):
            yield item
        kids = item._kids
        if kids:  # the fields as they are: a tuple or None among them is taken apart when popped
            push(reversed([getattr(item, name) for name in kids]))


def iter_calls(node):
    for expr in iter_exprs(node):
        if isinstance(expr, Call):
            yield expr


def calls_by_name(node) -> dict[str, tuple[Call, ...]]:
    """The calls under a node, by the last name of what they call (`ModelConfig` for
    `config.ModelConfig(...)`), in source order."""
    named: dict[str, list[Call]] = {}
    for call in iter_calls(node):
        named.setdefault((dotted(call.func) or "").split(".")[-1], []).append(call)
    return {name: tuple(calls) for name, calls in named.items()}


def dotted(expr) -> str | None:
    """`a.b.c` for a name/attribute chain, else None."""
    if isinstance(expr, Name):
        return expr.id
    if isinstance(expr, Attr):
        base = dotted(expr.value)
        return f"{base}.{expr.attr}" if base else None
    return None


# id(node) -> (node, its text): a walk renders the same call or attribute thousands of times a
# review (every event carries its text). Holding the node keeps its id from being reused; the
# memo is emptied when it reaches _TEXT_LIMIT entries, so it never holds a tree's worth.
_TEXTS: dict[int, tuple[Any, str]] = {}
_TEXT_LIMIT = 100_000


def text(expr, limit: int = 160) -> str:
    """A compact, readable rendering of an expression (for messages, not for re-parsing)."""
    hit = _TEXTS.get(id(expr))
    if hit is not None and hit[0] is expr:
        out = hit[1]
    else:
        out = _text(expr)
        if len(_TEXTS) >= _TEXT_LIMIT:
            _TEXTS.clear()
        _TEXTS[id(expr)] = (expr, out)
    return out if len(out) <= limit else out[: limit - 3] + "..."


def _text(e) -> str:
    if e is None:
        return ""
    if isinstance(e, Name):
        return e.id
    if isinstance(e, Constant):
        return "..." if e.value is ... else repr(e.value)
    if isinstance(e, Attr):
        return f"{_text(e.value)}.{e.attr}"
    if isinstance(e, Call):
        parts = [_text(a) for a in e.args]
        parts += [(f"{k.name}={_text(k.value)}" if k.name is not None else f"**{_text(k.value)}") for k in e.keywords]
        return f"{_text(e.func)}({', '.join(parts)})"
    if isinstance(e, Compare):
        out = _text(e.left)
        for op, right in zip(e.ops, e.comparators, strict=True):
            out += f" {op} {_text(right)}"
        return out
    if isinstance(e, BoolOp):
        return f" {e.op} ".join(_paren(v) for v in e.values)
    if isinstance(e, Not):
        return f"not {_paren(e.operand)}"
    if isinstance(e, Unary):
        return f"{e.op}{_paren(e.operand)}"
    if isinstance(e, BinOp):
        return f"{_paren(e.left)} {e.op} {_paren(e.right)}"
    if isinstance(e, Subscript):
        return f"{_text(e.value)}[{', '.join(_text(s) for s in e.index)}]"
    if isinstance(e, Seq):
        inner = ", ".join(_text(x) for x in e.elts)
        if e.kind == "tuple":
            return f"({inner}{',' if len(e.elts) == 1 else ''})"
        return f"[{inner}]" if e.kind == "list" else "{" + inner + "}"
    if isinstance(e, Dict):
        return "{" + ", ".join((f"{_text(k)}: {_text(v)}" if k is not None else f"**{_text(v)}")
                               for k, v in zip(e.keys, e.values, strict=True)) + "}"
    if isinstance(e, IfExp):
        return f"{_text(e.body)} if {_text(e.test)} else {_text(e.orelse)}"
    if isinstance(e, Starred):
        return f"*{_text(e.value)}"
    if isinstance(e, Lambda):
        return f"lambda {', '.join(e.params)}: {_text(e.body)}"
    if isinstance(e, Comp):
        gens = " ".join(f"for {_text(g.target)} in {_text(g.iter)}" + "".join(f" if {_text(c)}" for c in g.ifs)
                        for g in e.generators)
        return f"({', '.join(_text(x) for x in e.elts)} {gens})"
    if isinstance(e, (Slice, Walrus, OtherExpr)):
        kind = "slice" if isinstance(e, Slice) else "walrus" if isinstance(e, Walrus) else e.kind
        kids = children(e)
        return f"<{kind}>" if not kids else f"<{kind}: {', '.join(_text(x) for x in kids)}>"
    return "?"


def _paren(e) -> str:
    out = _text(e)
    return f"({out})" if isinstance(e, (BoolOp, IfExp, Compare, BinOp)) else out


def from_ast(node, line: int) -> Expr:
    """A stdlib-ast annotation as IR, every node on `line` (annotations stored as text, e.g.
    `self.x: T = ...` or a function's return annotation)."""
    import ast

    if isinstance(node, ast.Name):
        return Name(line, line, node.id)
    if isinstance(node, ast.Attribute):
        return Attr(line, line, from_ast(node.value, line), node.attr)
    if isinstance(node, ast.Constant):
        return Constant(line, line, node.value)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return BinOp(line, line, "|", from_ast(node.left, line), from_ast(node.right, line))
    if isinstance(node, ast.Subscript):
        sl = node.slice
        index = tuple(from_ast(x, line) for x in sl.elts) if isinstance(sl, ast.Tuple) else (from_ast(sl, line),)
        return Subscript(line, line, from_ast(node.value, line), index)
    return OtherExpr(line, line, type(node).__name__, ())
