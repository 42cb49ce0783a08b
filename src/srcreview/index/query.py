"""Plain questions about one function's body, answered from its facts (no evaluation).

    from srcreview.index.query import calls, attribute_reads, getattr_sites, branches, raises, ir_text

    calls(fn)            -> list[CallSite]   every call: callee text, line, args/kwargs count, `**` forwards
    attribute_reads(fn)  -> list[AttrRead]   every `receiver.attr` load: receiver text, attr, line
    getattr_sites(fn)    -> list[GetattrSite] getattr/setattr/hasattr/delattr: receiver text, name (None if not literal), line
    branches(fn)         -> list[Branch]     every if/elif: test text and expr, lines, whether the body
                                             (or the else side) raises or returns, and the raise/return lines
    raises(fn)           -> list[RaiseSite]  raise statements with the exception text and line
    ir_text(expr)        -> str              a readable rendering of an IR expression

`fn` is a FunctionFacts (index.function(...).facts).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CallSite:
    callee: str
    line: int
    end_line: int
    expr: tuple
    forwards_kwargs: bool


@dataclass(frozen=True)
class AttrRead:
    receiver: str
    attr: str
    line: int
    expr: tuple


@dataclass(frozen=True)
class GetattrSite:
    function: str  # "getattr" | "setattr" | "hasattr" | "delattr"
    receiver: str
    name: str | None
    line: int
    expr: tuple


@dataclass(frozen=True)
class Branch:
    test: str
    test_expr: tuple
    start_line: int
    end_line: int
    body_raises: bool
    body_returns: bool
    orelse_raises: bool
    orelse_returns: bool
    raise_lines: tuple[int, ...]
    return_lines: tuple[int, ...]
    depth: int


@dataclass(frozen=True)
class RaiseSite:
    text: str
    line: int
    end_line: int


def iter_statements(body):
    """Every statement, nested ones included, in source order."""
    for stmt in body:
        yield stmt
        for block in _blocks(stmt):
            yield from iter_statements(block)


def _blocks(stmt):
    kind = stmt[0]
    if kind == "if":
        return (stmt[4], stmt[5])
    if kind in ("for",):
        return (stmt[5], stmt[6])
    if kind == "while":
        return (stmt[4], stmt[5])
    if kind == "with":
        return (stmt[4],)
    if kind == "try":
        return (stmt[3], *(h[1] for h in stmt[4]), stmt[5], stmt[6])
    return ()


def statement_exprs(stmt):
    """The expressions a statement evaluates itself (not those of nested blocks)."""
    kind = stmt[0]
    if kind == "expr":
        return (stmt[3],)
    if kind == "assign":
        return (*stmt[3], *((stmt[4],) if stmt[4] is not None else ()))
    if kind == "augassign":
        return (stmt[3], stmt[4])
    if kind in ("return", "raise"):
        return (stmt[3],) if stmt[3] is not None else ()
    if kind in ("if", "assert", "while"):
        return (stmt[3],)
    if kind == "for":
        return (stmt[3], stmt[4])
    if kind == "with":
        return tuple(x for item in stmt[3] for x in item if x is not None)
    if kind == "try":
        return tuple(h[0] for h in stmt[4] if h[0] is not None)
    if kind == "other":
        return stmt[3]
    return ()


def sub_exprs(expr):
    """Direct sub-expressions of an IR expression."""
    kind = expr[0]
    if kind == "attr":
        return (expr[3],)
    if kind == "call":
        return (expr[3], *expr[4], *(v for _, v in expr[5]))
    if kind == "compare":
        return (expr[3], *expr[5])
    if kind == "boolop":
        return expr[4]
    if kind in ("not", "star"):
        return (expr[3],)
    if kind == "unary":
        return (expr[4],)
    if kind == "binop":
        return (expr[4], expr[5])
    if kind == "subscript":
        return (expr[3], *expr[4])
    if kind in ("tuple", "list", "set"):
        return expr[3]
    if kind == "dict":
        return (*(k for k in expr[3] if k is not None), *expr[4])
    if kind == "ifexp":
        return (expr[3], expr[4], expr[5])
    if kind == "lambda":
        return (expr[4],)
    if kind == "comp":
        return (*expr[3], *(x for target, it, ifs in expr[4] for x in (target, it, *ifs)))
    if kind == "other":
        return expr[4]
    return ()


def iter_exprs(expr):
    stack = [expr]
    while stack:
        e = stack.pop()
        yield e
        stack.extend(reversed(sub_exprs(e)))


def _all_exprs(fn):
    for stmt in iter_statements(fn.body):
        for expr in statement_exprs(stmt):
            yield from iter_exprs(expr)


def calls(fn) -> list[CallSite]:
    out = [CallSite(ir_text(e[3]), e[1], e[2], e, any(k is None for k, _ in e[5]))
           for e in _all_exprs(fn) if e[0] == "call"]
    return sorted(out, key=lambda c: (c.line, c.callee))


def attribute_reads(fn) -> list[AttrRead]:
    store_targets = set()
    for stmt in iter_statements(fn.body):
        if stmt[0] == "assign":
            store_targets.update(id(t) for t in stmt[3])
        elif stmt[0] == "augassign":
            store_targets.add(id(stmt[3]))
    out = [AttrRead(ir_text(e[3]), e[4], e[1], e) for e in _all_exprs(fn) if e[0] == "attr" and id(e) not in store_targets]
    return sorted(out, key=lambda r: (r.line, r.receiver, r.attr))


_ATTR_FUNCS = ("getattr", "setattr", "hasattr", "delattr")


def getattr_sites(fn) -> list[GetattrSite]:
    out = []
    for e in _all_exprs(fn):
        if e[0] == "call" and e[3][0] == "name" and e[3][3] in _ATTR_FUNCS and len(e[4]) >= 2:
            name_expr = e[4][1]
            name = name_expr[3] if name_expr[0] == "const" and isinstance(name_expr[3], str) else None
            out.append(GetattrSite(e[3][3], ir_text(e[4][0]), name, e[1], e))
    return sorted(out, key=lambda s: (s.line, s.function, s.receiver))


def _terminal(block, kind):
    return [s[1] for s in iter_statements(block) if s[0] == kind]


def branches(fn) -> list[Branch]:
    out = []

    def visit(body, depth):
        for stmt in body:
            if stmt[0] == "if":
                body_r, body_ret = _terminal(stmt[4], "raise"), _terminal(stmt[4], "return")
                else_r, else_ret = _terminal(stmt[5], "raise"), _terminal(stmt[5], "return")
                out.append(Branch(stmt[6], stmt[3], stmt[1], stmt[2], bool(body_r), bool(body_ret),
                                  bool(else_r), bool(else_ret), tuple(body_r), tuple(body_ret), depth))
                visit(stmt[4], depth + 1)
                # an elif chain continues at the same depth
                elif_chain = len(stmt[5]) == 1 and stmt[5][0][0] == "if"
                visit(stmt[5], depth if elif_chain else depth + 1)
            else:
                for block in _blocks(stmt):
                    visit(block, depth + 1)

    visit(fn.body, 0)
    return sorted(out, key=lambda b: (b.start_line, b.depth))


def raises(fn) -> list[RaiseSite]:
    return [RaiseSite(ir_text(s[3]) if s[3] is not None else "raise", s[1], s[2])
            for s in iter_statements(fn.body) if s[0] == "raise"]


_PREC_OPS = {"or": 1, "and": 2}


def ir_text(expr, limit: int = 160) -> str:
    """A compact, readable rendering of an IR expression (for messages, not for re-parsing)."""
    text = _text(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _text(e) -> str:
    if e is None:
        return ""
    kind = e[0]
    if kind == "name":
        return e[3]
    if kind == "const":
        return "..." if e[3] is ... else repr(e[3])
    if kind == "attr":
        return f"{_text(e[3])}.{e[4]}"
    if kind == "call":
        parts = [_text(a) for a in e[4]]
        parts += [(f"{k}={_text(v)}" if k is not None else f"**{_text(v)}") for k, v in e[5]]
        return f"{_text(e[3])}({', '.join(parts)})"
    if kind == "compare":
        out = _text(e[3])
        for op, right in zip(e[4], e[5]):
            out += f" {op} {_text(right)}"
        return out
    if kind == "boolop":
        return f" {e[3]} ".join(_paren(v) for v in e[4])
    if kind == "not":
        return f"not {_paren(e[3])}"
    if kind == "unary":
        return f"{e[3]}{_paren(e[4])}"
    if kind == "binop":
        return f"{_paren(e[4])} {e[3]} {_paren(e[5])}"
    if kind == "subscript":
        return f"{_text(e[3])}[{', '.join(_text(s) for s in e[4])}]"
    if kind == "tuple":
        inner = ", ".join(_text(x) for x in e[3])
        return f"({inner}{',' if len(e[3]) == 1 else ''})"
    if kind == "list":
        return f"[{', '.join(_text(x) for x in e[3])}]"
    if kind == "set":
        return "{" + ", ".join(_text(x) for x in e[3]) + "}"
    if kind == "dict":
        return "{" + ", ".join((f"{_text(k)}: {_text(v)}" if k is not None else f"**{_text(v)}")
                               for k, v in zip(e[3], e[4])) + "}"
    if kind == "ifexp":
        return f"{_text(e[4])} if {_text(e[3])} else {_text(e[5])}"
    if kind == "star":
        return f"*{_text(e[3])}"
    if kind == "lambda":
        return f"lambda {', '.join(e[3])}: {_text(e[4])}"
    if kind == "comp":
        gens = " ".join(f"for {_text(t)} in {_text(i)}" + "".join(f" if {_text(c)}" for c in ifs) for t, i, ifs in e[4])
        return f"({', '.join(_text(x) for x in e[3])} {gens})"
    if kind == "other":
        return f"<{e[3]}>" if not e[4] else f"<{e[3]}: {', '.join(_text(x) for x in e[4])}>"
    return "?"


def _paren(e) -> str:
    text = _text(e)
    return f"({text})" if e[0] in ("boolop", "ifexp", "compare", "binop") else text
