"""libcst front end of the IR builder (srcreview.index.builder.core): the only module that imports libcst.

The fallback for every module the `ast` front end does not take (syntax this Python does not
parse, a source that is not UTF-8), and the reference tests compare that front end with: its
positions and texts are libcst's own. libcst's tree is converted into the node classes of
Python's `ast` that the shared builder reads, each node carrying its libcst positions and the
libcst node it came from (for its text); what the IR keeps opaque becomes core.Opaque.

Positions come from PositionProvider alone (the other providers cost several times the parse),
computed by the provider's own codegen pass without a MetadataWrapper (whose resolve() walks the
whole tree once more for batched providers, even when there are none: half the cost). Trees are
dropped as soon as their facts exist.
"""

from __future__ import annotations

import ast
import gc
from collections.abc import Callable
from contextlib import contextmanager
from typing import cast

import libcst as cst
from libcst.metadata import PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from srcreview.index.builder.core import JOINED, Builder, Opaque, plain_text
from srcreview.index.facts import ModuleFacts


@contextmanager
def _no_gc():
    """Parsing allocates millions of small objects; the collector only slows it down."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def extract(source: bytes, module: str, path: str, blob_id: str) -> ModuleFacts:
    """Facts of one module, bodies converted; a syntax error gives facts with `parse_error` set,
    never a crash. A NUL byte is one: libcst would parse it, Python refuses to import it."""
    if b"\0" in source:
        return ModuleFacts(module=module, path=path, blob_id=blob_id,
                           parse_error="a NUL byte: Python cannot import the module")
    with _no_gc():
        try:
            tree = cst.parse_module(source)
        # SyntaxError/LookupError: a missing or unknown encoding declaration; ValueError: bytes
        # the tokenizer refuses
        except (cst.ParserSyntaxError, RecursionError, SyntaxError, UnicodeDecodeError, LookupError,
                ValueError) as exc:
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return ModuleFacts(module=module, path=path, blob_id=blob_id, parse_error=message)
        body = _Converter(tree, _positions(tree)).statements(tree.body)
        builder = CstBuilder(tree, module, path.endswith("__init__.py"))
        builder.module_body(body)
        builder.add_module_code(body)
        return builder.facts(module, path, blob_id)


def _positions(tree: cst.Module):
    """What MetadataWrapper(tree).resolve(PositionProvider) gives, from the provider's codegen pass alone."""
    provider = PositionProvider()
    state = PositionProvidingCodegenState(default_indent=tree.default_indent, default_newline=tree.default_newline,
                                          provider=provider)
    tree._codegen(state)
    return provider._computed


class Suite(list):
    """The statements of a block written on its colon's line (libcst's SimpleStatementSuite)."""


class _If(ast.If):
    """An `if` that tells whether it was written `elif` (`elif_`)."""

    elif_: bool


class _WithItem(ast.withitem):
    """A `with` item with libcst's lines (`ast` gives a withitem none)."""

    lines: tuple[int, int]


class _MatchCase(ast.match_case):
    """A `case` with libcst's lines (`ast` gives a match_case none)."""

    lines: tuple[int, int]


# `try: ... except* E:` (libcst parses it whatever the Python): ast.TryStar from Python 3.11 on;
# 3.10's ast has none, and the shared builder reads both as one kind of `try` (core.TRY)
_TRY_STAR: Callable[..., ast.stmt] = getattr(ast, "TryStar", ast.Try)


class CstBuilder(Builder):
    """The shared builder over a converted libcst tree: positions and texts are libcst's."""

    def __init__(self, tree: cst.Module, module: str, is_package: bool):
        super().__init__(module, is_package)
        self.tree = tree

    def lines(self, node) -> tuple[int, int]:
        return node.lineno, node.end_lineno

    def text(self, node) -> str:
        return self.tree.code_for_node(node.cst)

    def groups(self, body) -> list:
        out = []
        for stmt in body:
            line = getattr(stmt, "cst_line", None)
            if line is None:
                out.append(stmt)
            elif out and isinstance(out[-1], list) and out[-1][-1].cst_line is line:
                out[-1].append(stmt)
            else:
                out.append([stmt])
        return out

    def is_suite(self, body) -> bool:
        return isinstance(body, Suite)

    def is_elif(self, node: ast.If) -> bool:
        assert isinstance(node, _If), "an `if` the converter did not make"
        return node.elif_

    def parenthesized(self, node) -> bool:
        return node.cst is not None and bool(node.cst.lpar)

    def withitem_lines(self, item: ast.withitem) -> tuple[int, int]:
        assert isinstance(item, _WithItem), "a `with` item the converter did not make"
        return item.lines

    def case_lines(self, case: ast.match_case) -> tuple[int, int]:
        assert isinstance(case, _MatchCase), "a `case` the converter did not make"
        return case.lines


def _dotted(node) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


_COMPARE = {
    cst.Equal: ast.Eq, cst.NotEqual: ast.NotEq, cst.LessThan: ast.Lt, cst.LessThanEqual: ast.LtE,
    cst.GreaterThan: ast.Gt, cst.GreaterThanEqual: ast.GtE, cst.In: ast.In, cst.NotIn: ast.NotIn,
    cst.Is: ast.Is, cst.IsNot: ast.IsNot,
}
_BINOP = {
    cst.Add: ast.Add, cst.Subtract: ast.Sub, cst.Multiply: ast.Mult, cst.Divide: ast.Div,
    cst.FloorDivide: ast.FloorDiv, cst.Modulo: ast.Mod, cst.Power: ast.Pow, cst.BitOr: ast.BitOr,
    cst.BitAnd: ast.BitAnd, cst.BitXor: ast.BitXor, cst.LeftShift: ast.LShift, cst.RightShift: ast.RShift,
    cst.MatrixMultiply: ast.MatMult,
}
_UNARY = {cst.Minus: ast.USub, cst.Plus: ast.UAdd, cst.BitInvert: ast.Invert, cst.Not: ast.Not}
_AUGOP = {
    cst.AddAssign: ast.Add, cst.SubtractAssign: ast.Sub, cst.MultiplyAssign: ast.Mult, cst.DivideAssign: ast.Div,
    cst.FloorDivideAssign: ast.FloorDiv, cst.ModuloAssign: ast.Mod, cst.PowerAssign: ast.Pow,
    cst.BitOrAssign: ast.BitOr, cst.BitAndAssign: ast.BitAnd, cst.BitXorAssign: ast.BitXor,
    cst.LeftShiftAssign: ast.LShift, cst.RightShiftAssign: ast.RShift, cst.MatrixMultiplyAssign: ast.MatMult,
}
_SEQ = {cst.Tuple: ast.Tuple, cst.List: ast.List, cst.Set: ast.Set}
_COMP = {cst.ListComp: ast.ListComp, cst.SetComp: ast.SetComp, cst.GeneratorExp: ast.GeneratorExp}


class _Converter:
    """libcst nodes -> `ast` nodes with libcst's lines (`lineno`, `end_lineno`) and the libcst node
    (`cst`, for texts). A simple statement carries the line it shares (`cst_line`), a block written
    on its colon's line is a Suite, an `if` tells whether it is an `elif` (`elif_`)."""

    def __init__(self, tree: cst.Module, positions):
        self.tree = tree
        self.pos = positions

    def placed(self, new, node):
        p = self.pos[node]
        new.lineno, new.end_lineno, new.cst = p.start.line, p.end.line, node
        return new

    def unplaced(self, new):
        """A node libcst has none for (the elements of a subscript): no text, no parentheses."""
        new.cst = None
        return new

    def lines(self, node) -> tuple[int, int]:
        p = self.pos[node]
        return p.start.line, p.end.line

    # -- statements ------------------------------------------------------------------------
    def statements(self, stmts) -> list:
        out = []
        for stmt in stmts:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    converted = self.small(small)
                    converted.cst_line = stmt
                    out.append(converted)
            else:
                out.append(self.compound(stmt))
        return out

    def block(self, block) -> list:
        if isinstance(block, cst.SimpleStatementSuite):
            return Suite(self.small(small) for small in block.body)
        return self.statements(block.body)

    def orelse(self, orelse) -> list:
        return self.block(orelse.body) if orelse is not None else []

    def compound(self, node):
        if isinstance(node, cst.If):
            return self.if_stmt(node, False)
        if isinstance(node, cst.For):
            kind = ast.AsyncFor if node.asynchronous is not None else ast.For
            return self.placed(kind(target=self.expr(node.target), iter=self.expr(node.iter),
                                    body=self.block(node.body), orelse=self.orelse(node.orelse)), node)
        if isinstance(node, cst.While):
            return self.placed(ast.While(test=self.expr(node.test), body=self.block(node.body),
                                         orelse=self.orelse(node.orelse)), node)
        if isinstance(node, cst.With):
            items: list[ast.withitem] = []
            for item in node.items:
                converted = _WithItem(context_expr=self.expr(item.item),
                                      optional_vars=self.expr(item.asname.name) if item.asname is not None else None)
                converted.lines = self.lines(item)
                items.append(converted)
            kind = ast.AsyncWith if node.asynchronous is not None else ast.With
            return self.placed(kind(items=items, body=self.block(node.body)), node)
        if isinstance(node, (cst.Try, cst.TryStar)):
            handlers = [self.placed(ast.ExceptHandler(type=self.optional(h.type), name=None, body=self.block(h.body)),
                                    h)
                        for h in node.handlers]
            kind = _TRY_STAR if isinstance(node, cst.TryStar) else ast.Try
            return self.placed(kind(body=self.block(node.body), handlers=handlers, orelse=self.orelse(node.orelse),
                                    finalbody=self.orelse(node.finalbody)), node)
        if isinstance(node, cst.FunctionDef):
            kind = ast.AsyncFunctionDef if node.asynchronous is not None else ast.FunctionDef
            return self.placed(kind(
                name=node.name.value, args=self.parameters(node.params), body=self.block(node.body),
                decorator_list=[self.expr(d.decorator) for d in node.decorators],
                returns=self.expr(node.returns.annotation) if node.returns is not None else None), node)
        if isinstance(node, cst.ClassDef):
            bases = [self.expr(a.value) if a.keyword is None and a.star == "" else ast.Starred(value=self.expr(a.value))
                     for a in node.bases]
            keywords = [ast.keyword(arg=a.keyword.value if a.keyword is not None else None, value=self.expr(a.value))
                        for a in node.keywords]
            return self.placed(ast.ClassDef(name=node.name.value, bases=bases, keywords=keywords,
                                            body=self.block(node.body),
                                            decorator_list=[self.expr(d.decorator) for d in node.decorators]), node)
        if isinstance(node, cst.Match):
            cases: list[ast.match_case] = []
            for case in node.cases:
                # the pattern is not converted: the builder reads a case's lines and body
                converted = _MatchCase(pattern=ast.MatchAs(), guard=None, body=self.block(case.body))
                converted.lines = self.lines(case)
                cases.append(converted)
            return self.placed(ast.Match(subject=self.expr(node.subject), cases=cases), node)
        return self.placed(ast.Pass(), node)  # a statement the IR does not model

    def if_stmt(self, node: cst.If, elif_: bool) -> ast.If:
        orelse = node.orelse
        other: list[ast.stmt]
        if orelse is None:
            other = []
        elif isinstance(orelse, cst.If):
            other = [self.if_stmt(orelse, True)]
        else:
            other = self.block(orelse.body)
        converted = self.placed(_If(test=self.expr(node.test), body=self.block(node.body), orelse=other), node)
        converted.elif_ = elif_
        return converted

    def parameters(self, p: cst.Parameters) -> ast.arguments:
        positional = [*p.posonly_params, *p.params]
        return ast.arguments(
            posonlyargs=[self.param(x) for x in p.posonly_params], args=[self.param(x) for x in p.params],
            vararg=self.param(p.star_arg) if isinstance(p.star_arg, cst.Param) else None,
            kwonlyargs=[self.param(x) for x in p.kwonly_params],
            kw_defaults=[self.optional(x.default) for x in p.kwonly_params],
            kwarg=self.param(p.star_kwarg) if p.star_kwarg is not None else None,
            defaults=[self.optional(x.default) for x in positional],  # one per parameter: None for none
        )

    def param(self, param: cst.Param) -> ast.arg:
        annotation = param.annotation.annotation if param.annotation is not None else None
        return ast.arg(arg=param.name.value, annotation=self.optional(annotation))

    def small(self, node):
        if isinstance(node, cst.Expr):
            new = ast.Expr(value=self.expr(node.value))
        elif isinstance(node, cst.Assign):
            new = ast.Assign(targets=[self.expr(t.target) for t in node.targets], value=self.expr(node.value))
        elif isinstance(node, cst.AnnAssign):
            new = ast.AnnAssign(target=self.expr(node.target), annotation=self.expr(node.annotation.annotation),
                                value=self.optional(node.value),
                                simple=int(isinstance(node.target, cst.Name) and not node.target.lpar))
        elif isinstance(node, cst.AugAssign):
            new = ast.AugAssign(target=self.expr(node.target), op=_AUGOP[type(node.operator)](),
                                value=self.expr(node.value))
        elif isinstance(node, cst.Return):
            new = ast.Return(value=self.optional(node.value))
        elif isinstance(node, cst.Raise):
            new = ast.Raise(exc=self.optional(node.exc))
        elif isinstance(node, cst.Assert):
            new = ast.Assert(test=self.expr(node.test))
        elif isinstance(node, cst.Import):
            new = ast.Import(names=[ast.alias(name=name,
                                              asname=_dotted(a.asname.name) if a.asname is not None else None)
                                    for a in node.names if (name := _dotted(a.name))])
        elif isinstance(node, cst.ImportFrom):
            names = [ast.alias(name="*")] if isinstance(node.names, cst.ImportStar) else [
                ast.alias(name=name, asname=_dotted(a.asname.name) if a.asname is not None else None)
                for a in node.names if (name := _dotted(a.name))]  # a Name: every one is kept
            new = ast.ImportFrom(module=_dotted(node.module) if node.module else None, names=names,
                                 level=len(node.relative))
        elif isinstance(node, cst.Del):
            new = ast.Delete(targets=[self.expr(node.target)])
        elif isinstance(node, cst.Break):
            new = ast.Break()
        elif isinstance(node, cst.Continue):
            new = ast.Continue()
        else:
            new = ast.Pass()  # pass, global, nonlocal, ...: the IR keeps only where they are
        return self.placed(new, node)

    # -- expressions -----------------------------------------------------------------------
    def optional(self, node):
        return self.expr(node) if node is not None else None

    def expr(self, node):
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                new = ast.Constant(value={"True": True, "False": False, "None": None}[node.value])
            else:
                new = ast.Name(id=node.value)
        elif isinstance(node, cst.Attribute):
            new = ast.Attribute(value=self.expr(node.value), attr=node.attr.value)
        elif isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            try:
                new = ast.Constant(value=node.evaluated_value)
            except Exception:  # noqa: BLE001 - odd escapes: keep the expression (its text), lose the value
                new = Opaque(self.tree.code_for_node(node), [])
        elif isinstance(node, cst.Integer):
            new = ast.Constant(value=int(node.value, 0))
        elif isinstance(node, cst.Float):
            new = ast.Constant(value=float(node.value))
        elif isinstance(node, cst.Ellipsis):
            new = ast.Constant(value=...)
        elif isinstance(node, cst.Call):
            args: list[ast.expr] = []
            keywords: list[ast.keyword] = []
            for arg in node.args:
                value = self.expr(arg.value)
                if arg.keyword is not None:
                    keywords.append(ast.keyword(arg=arg.keyword.value, value=value))
                elif arg.star == "**":
                    keywords.append(ast.keyword(arg=None, value=value))
                elif arg.star == "*":
                    args.append(ast.Starred(value=value))
                else:
                    args.append(value)
            new = ast.Call(func=self.expr(node.func), args=args, keywords=keywords)
        elif isinstance(node, cst.Comparison):
            new = ast.Compare(left=self.expr(node.left), ops=[_COMPARE[type(c.operator)]() for c in node.comparisons],
                              comparators=[self.expr(c.comparator) for c in node.comparisons])
        elif isinstance(node, cst.BooleanOperation):
            op = ast.And if isinstance(node.operator, cst.And) else ast.Or
            values = []
            for side in (node.left, node.right):
                sub = self.expr(side)
                inner = sub
                while isinstance(inner, ast.Await):  # the IR of `await x` is that of x
                    inner = inner.value
                if isinstance(inner, ast.BoolOp) and isinstance(inner.op, op) and not side.lpar:
                    values.extend(inner.values)  # (a and b) and c, unparenthesized: one chain
                else:
                    values.append(sub)
            new = ast.BoolOp(op=op(), values=values)
        elif isinstance(node, cst.UnaryOperation):
            new = ast.UnaryOp(op=_UNARY[type(node.operator)](), operand=self.expr(node.expression))
        elif isinstance(node, cst.BinaryOperation):
            new = ast.BinOp(left=self.expr(node.left), op=_BINOP[type(node.operator)](), right=self.expr(node.right))
        elif isinstance(node, cst.Subscript):
            elements = []
            for element in node.slice:
                sl = element.slice
                if isinstance(sl, cst.Index):
                    elements.append(self.expr(sl.value))
                else:
                    assert isinstance(sl, cst.Slice), "a subscript element neither an index nor a slice"
                    elements.append(ast.Slice(lower=self.optional(sl.lower), upper=self.optional(sl.upper),
                                              step=self.optional(sl.step)))
            index = self.unplaced(ast.Tuple(elts=elements))  # each element of the subscript, as written
            new = ast.Subscript(value=self.expr(node.value), slice=index)
        elif isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            new = _SEQ[type(node)](elts=[self.expr(el.value) if isinstance(el, cst.Element)
                                         else ast.Starred(value=self.expr(el.value)) for el in node.elements])
        elif isinstance(node, cst.Dict):
            keys, values = [], []
            for el in node.elements:
                keys.append(self.expr(el.key) if isinstance(el, cst.DictElement) else None)
                values.append(self.expr(el.value))
            new = ast.Dict(keys=keys, values=values)
        elif isinstance(node, cst.IfExp):
            new = ast.IfExp(test=self.expr(node.test), body=self.expr(node.body), orelse=self.expr(node.orelse))
        elif isinstance(node, cst.Lambda):
            p = node.params
            names = [[ast.arg(arg=x.name.value) for x in params]
                     for params in (p.posonly_params, p.params, p.kwonly_params)]
            # the parameters' names only: the IR of a lambda keeps no more (defaults are not converted)
            new = ast.Lambda(args=ast.arguments(posonlyargs=names[0], args=names[1], vararg=None, kwonlyargs=names[2],
                                                kw_defaults=[None] * len(names[2]), kwarg=None, defaults=[]),
                             body=self.expr(node.body))
        elif isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            generators = []
            comp = node.for_in
            while comp is not None:
                generators.append(ast.comprehension(target=self.expr(comp.target), iter=self.expr(comp.iter),
                                                    ifs=[self.expr(i.test) for i in comp.ifs],
                                                    is_async=int(comp.asynchronous is not None)))
                comp = comp.inner_for_in
            if isinstance(node, cst.DictComp):
                new = ast.DictComp(key=self.expr(node.key), value=self.expr(node.value), generators=generators)
            else:
                new = _COMP[type(node)](elt=self.expr(node.elt), generators=generators)
        elif isinstance(node, cst.Await):
            new = ast.Await(value=self.expr(node.expression))
        elif isinstance(node, cst.NamedExpr):
            new = ast.NamedExpr(target=self.expr(node.target), value=self.expr(node.value))
        elif isinstance(node, cst.Yield) and isinstance(node.value, cst.From):
            new = Opaque("YieldFrom", [self.expr(node.value.item)])
        elif isinstance(node, cst.FormattedString) and _plain_parts(node):
            # an f-string of literal text and plain `{x}` parts: every part, in order (as ast_front)
            new = Opaque(JOINED, [self.placed(ast.Constant(value=p.value), node)
                                  if isinstance(p, cst.FormattedStringText)
                                  else self.expr(cast(cst.FormattedStringExpression, p).expression)
                                  for p in node.parts])
        else:
            # f-strings, yield, starred, ...: keep sub-expressions so calls and reads inside are seen
            new = Opaque(type(node).__name__, [self.expr(c) for c in _child_exprs(node)])
        return self.placed(new, node)


def _plain_parts(node: cst.FormattedString) -> bool:
    """Whether every part is text that reads as it is written (printable ASCII, no escape, no
    brace) or a `{x}` with no conversion, format spec or `=` (srcreview.index.builder.ast_front
    keeps the same f-strings opaque)."""
    for part in node.parts:
        if isinstance(part, cst.FormattedStringText):
            if not plain_text(part.value):
                return False
        elif not isinstance(part, cst.FormattedStringExpression) or part.conversion is not None \
                or part.format_spec is not None or part.equal is not None:
            return False
    return "r" not in node.prefix.lower()


def _child_exprs(node):
    """The outermost expressions below `node` (through non-expression wrappers)."""
    found = []
    stack = list(node.children)
    while stack:
        child = stack.pop(0)
        if isinstance(child, cst.BaseExpression):
            found.append(child)
        else:
            stack[:0] = list(child.children)
    return found
