"""libcst -> ModuleFacts: the only module that imports libcst.

The reference extractor: srcreview.index.ast_facts builds the same facts from Python's `ast`
at a tenth of the cost and leaves to this one every module it does not take (syntax this
Python does not parse, a source that is not UTF-8); tests compare the two.

One pass over the module with PositionProvider positions (the only metadata used: the
others cost several times the parse), computed by the provider's own codegen pass without a
MetadataWrapper (whose resolve() walks the whole tree once more for batched providers, even
when there are none: half the cost). Trees are dropped as soon as their facts exist.
"""

from __future__ import annotations

import gc
import inspect
from contextlib import contextmanager
from typing import cast

import libcst as cst
from libcst.metadata import PositionProvider
from libcst.metadata.position_provider import PositionProvidingCodegenState

from srcreview.index import ir
from srcreview.index.ast_facts import absolute_module
from srcreview.index.ast_facts import one_line as _one_line
from srcreview.index.facts import (
    UNKNOWN,
    ClassFacts,
    ConstantFact,
    FieldFact,
    FunctionFacts,
    ImportFact,
    InstanceAttr,
    ModuleFacts,
    Param,
)
from srcreview.index.literal import literal_value


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
    """Facts of one module; a syntax error gives facts with `parse_error` set, never a crash."""
    with _no_gc():
        try:
            tree = cst.parse_module(source)
        # SyntaxError/LookupError: a missing or unknown encoding declaration; ValueError: bytes
        # the tokenizer refuses
        except (cst.ParserSyntaxError, RecursionError, SyntaxError, UnicodeDecodeError, LookupError,
                ValueError) as exc:
            message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            return ModuleFacts(module=module, path=path, blob_id=blob_id, parse_error=message)
        builder = _Builder(tree, _positions(tree), module, path.endswith("__init__.py"))
        builder.module_body(tree.body)
        return ModuleFacts(
            module=module, path=path, blob_id=blob_id,
            imports=tuple(builder.imports), classes=builder.classes, functions=builder.functions,
            constants=builder.constants, all_names=builder.all_names,
        )


def _positions(tree: cst.Module):
    """What MetadataWrapper(tree).resolve(PositionProvider) gives, from the provider's codegen pass alone."""
    provider = PositionProvider()
    state = PositionProvidingCodegenState(default_indent=tree.default_indent, default_newline=tree.default_newline,
                                          provider=provider)
    tree._codegen(state)
    return provider._computed


def _dotted(node) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return f"{head}.{node.attr.value}" if head else None
    return None


_COMPARE = {
    cst.Equal: "==", cst.NotEqual: "!=", cst.LessThan: "<", cst.LessThanEqual: "<=",
    cst.GreaterThan: ">", cst.GreaterThanEqual: ">=", cst.In: "in", cst.NotIn: "not in",
    cst.Is: "is", cst.IsNot: "is not",
}
_BINOP = {
    cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/", cst.FloorDivide: "//",
    cst.Modulo: "%", cst.Power: "**", cst.BitOr: "|", cst.BitAnd: "&", cst.BitXor: "^",
    cst.LeftShift: "<<", cst.RightShift: ">>", cst.MatrixMultiply: "@",
}
_UNARY = {cst.Minus: "-", cst.Plus: "+", cst.BitInvert: "~"}


class _Builder:
    def __init__(self, tree: cst.Module, positions, module: str, is_package: bool):
        self.tree = tree
        self.pos = positions
        self.module = module
        self.is_package = is_package
        self.imports: list[ImportFact] = []
        self.classes: dict[str, ClassFacts] = {}
        self.functions: dict[str, FunctionFacts] = {}
        self.constants: dict[str, ConstantFact] = {}
        self.all_names: tuple[str, ...] | None = None
        self._func_imports: list[ImportFact] | None = None
        self._scope = ""
        self._instance_attrs: list | None = None
        self._method = ""

    # -- helpers -------------------------------------------------------------------------
    def lines(self, node) -> tuple[int, int]:
        p = self.pos[node]
        return p.start.line, p.end.line

    def text(self, node) -> str:
        return self.tree.code_for_node(node)

    # -- module level ----------------------------------------------------------------------
    def module_body(self, body, guard: str | None = None) -> None:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, (cst.Import, cst.ImportFrom)):
                        self.add_import(small, "")
                    elif isinstance(small, (cst.Assign, cst.AnnAssign)):
                        self.add_constant(small, stmt, guard)
            elif isinstance(stmt, cst.ClassDef):
                self.add_class(stmt, "")
            elif isinstance(stmt, cst.FunctionDef):
                self.add_function(stmt, "", None)
            elif isinstance(stmt, cst.If):
                test = self.text(stmt.test)
                self.module_body(stmt.body.body, test)
                orelse = stmt.orelse
                while orelse is not None:
                    if isinstance(orelse, cst.If):
                        self.module_body(orelse.body.body, self.text(orelse.test))
                        orelse = orelse.orelse
                    else:
                        self.module_body(orelse.body.body, f"not ({test})")
                        orelse = None
            elif isinstance(stmt, (cst.Try, cst.TryStar)):
                self.module_body(stmt.body.body, "try")
                for handler in stmt.handlers:
                    self.module_body(handler.body.body, "except")
                if stmt.orelse is not None:
                    self.module_body(stmt.orelse.body.body, "try-else")
                if stmt.finalbody is not None:
                    self.module_body(stmt.finalbody.body.body, guard)
            elif isinstance(stmt, cst.With):
                self.module_body(stmt.body.body, guard)

    def add_import(self, node, scope: str) -> None:
        line = self.lines(node)[0]
        out = cast("list[ImportFact]", self._func_imports) if scope else self.imports  # set inside a function
        if isinstance(node, cst.Import):
            for alias in node.names:
                name = _dotted(alias.name)
                if not name:
                    continue
                if alias.asname is not None:
                    local = cast(str, _dotted(alias.asname.name))  # an alias is a name
                    out.append(ImportFact(local, name, line, True, scope))
                else:
                    out.append(ImportFact(name.split(".")[0], name.split(".")[0], line, True, scope))
            return
        level = len(node.relative)
        base = absolute_module(self.module, self.is_package, level, _dotted(node.module) if node.module else None)
        if isinstance(node.names, cst.ImportStar):
            out.append(ImportFact("*", base, line, True, scope))
            return
        for alias in node.names:
            name = cast(str, _dotted(alias.name))  # an imported name is a name
            local = cast(str, _dotted(alias.asname.name)) if alias.asname is not None else name
            out.append(ImportFact(local, f"{base}.{name}" if base else name, line, False, scope))

    def add_constant(self, node, line_node, guard: str | None) -> None:
        if isinstance(node, cst.AnnAssign):
            targets = [node.target]
            value = node.value
            annotation = self.text(node.annotation.annotation)
        else:
            targets = [t.target for t in node.targets]
            value = node.value
            annotation = None
        start, end = self.lines(line_node)
        expr = self.expr(value) if value is not None else None
        literal = literal_value(expr) if expr is not None else UNKNOWN
        text = self.text(value) if value is not None else ""
        for target in targets:
            if isinstance(target, cst.Name):
                name = target.value
                if value is None and name in self.constants:
                    continue  # a bare `NAME: T` declaration after the assignment adds nothing
                fact = ConstantFact(name, literal, text, start, end, expr, annotation, guard)
                previous = self.constants.get(name)
                if previous is not None and previous.expr is not None:
                    # bound twice (if/else, try/except, or reassigned): keep the first site, drop the value
                    fact = ConstantFact(name, UNKNOWN, previous.text, previous.start_line, previous.end_line,
                                        previous.expr, previous.annotation, previous.guard or guard, True)
                self.constants[name] = fact
                if name == "__all__" and isinstance(literal, (list, tuple)):
                    if all(isinstance(v, str) for v in literal):
                        self.all_names = tuple(literal)

    # -- classes ---------------------------------------------------------------------------
    def add_class(self, node: cst.ClassDef, prefix: str) -> None:
        qualname = f"{prefix}{node.name.value}"
        start, end = self.lines(node)
        bases = tuple(self.text(a.value) for a in node.bases if a.keyword is None and a.star == "")
        keywords = tuple((a.keyword.value, self.text(a.value)) for a in node.keywords if a.keyword is not None)
        decorators = tuple(self.text(d.decorator) for d in node.decorators)
        fields: list[FieldFact] = []
        methods: list[str] = []
        docstring = None
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        saved_attrs = self._instance_attrs
        self._instance_attrs = []
        for index, stmt in enumerate(body):
            if isinstance(stmt, cst.SimpleStatementLine):
                if index == 0 and _docstring(stmt) is not None:
                    docstring = _docstring(stmt)
                    continue
                for small in stmt.body:
                    if isinstance(small, (cst.AnnAssign, cst.Assign)):
                        fields.extend(self.class_field(small, stmt, qualname, body, index))
            elif isinstance(stmt, cst.FunctionDef):
                methods.append(stmt.name.value)
                self.add_function(stmt, f"{qualname}.", qualname)
            elif isinstance(stmt, cst.ClassDef):
                self.add_class(stmt, f"{qualname}.")
            elif isinstance(stmt, cst.If):  # `if TYPE_CHECKING:` inside a class body
                for inner in stmt.body.body:
                    if isinstance(inner, cst.SimpleStatementLine):
                        for small in inner.body:
                            if isinstance(small, (cst.AnnAssign, cst.Assign)):
                                fields.extend(self.class_field(small, inner, qualname, (), 0))
                    elif isinstance(inner, cst.FunctionDef):
                        methods.append(inner.name.value)
                        self.add_function(inner, f"{qualname}.", qualname)
        attrs = tuple(self._instance_attrs)
        self._instance_attrs = saved_attrs
        self.classes[qualname] = ClassFacts(
            qualname=qualname, name=node.name.value, bases=bases, decorators=decorators,
            start_line=start, end_line=end, fields=tuple(fields), methods=tuple(dict.fromkeys(methods)),
            keywords=keywords, docstring=docstring, instance_attrs=attrs,
        )

    def class_field(self, node, line_node, owner: str, body, index: int) -> list[FieldFact]:
        start, end = self.lines(line_node)
        docstring = None
        if index + 1 < len(body) and isinstance(body[index + 1], cst.SimpleStatementLine):
            docstring = _docstring(body[index + 1])
            if docstring is not None:
                end = self.lines(body[index + 1])[1]
        value = node.value
        value_expr = self.expr(value) if value is not None else None
        literal = literal_value(value_expr) if value_expr is not None else UNKNOWN
        default = self.text(value) if value is not None else None
        if isinstance(node, cst.AnnAssign):
            annotation = self.text(node.annotation.annotation)
            ann_expr = self.expr(node.annotation.annotation)
            targets = [node.target]
        else:
            annotation = None
            ann_expr = None
            targets = [t.target for t in node.targets]
        classvar = annotation is not None and (annotation.startswith("ClassVar") or ".ClassVar" in annotation)
        out = []
        for target in targets:
            if isinstance(target, cst.Name):
                out.append(FieldFact(
                    name=target.value, owner=owner, annotation=annotation, default=default,
                    docstring=docstring, start_line=start, end_line=end, classvar=classvar,
                    annotation_expr=ann_expr, default_expr=value_expr, value=literal,
                ))
        return out

    # -- functions -------------------------------------------------------------------------
    def add_function(self, node: cst.FunctionDef, prefix: str, owner: str | None) -> None:
        qualname = f"{prefix}{node.name.value}"
        start, end = self.lines(node)
        params = []
        p = node.params
        for param in (*p.posonly_params, *p.params):
            params.append(self.param(param, "positional"))
        if isinstance(p.star_arg, cst.Param):
            params.append(self.param(p.star_arg, "vararg"))
        for param in p.kwonly_params:
            params.append(self.param(param, "keyword"))
        if p.star_kwarg is not None:
            params.append(self.param(p.star_kwarg, "kwarg"))
        decorators = tuple(self.text(d.decorator) for d in node.decorators)
        returns = self.text(node.returns.annotation) if node.returns is not None else None
        saved = (self._func_imports, self._scope, self._method)
        self._func_imports = []
        self._scope = qualname
        self._method = qualname if owner else self._method
        body = self.block(node.body)
        imports = tuple(self._func_imports)
        self._func_imports, self._scope, self._method = saved
        self.functions[qualname] = FunctionFacts(
            qualname=qualname, name=node.name.value, owner=owner, params=tuple(params),
            decorators=decorators, returns=returns, start_line=start, end_line=end, stored_body=body,
            imports=imports, is_async=node.asynchronous is not None,
        )

    def param(self, param: cst.Param, kind: str) -> Param:
        annotation = param.annotation.annotation if param.annotation is not None else None
        return Param(
            name=param.name.value,
            annotation=self.text(annotation) if annotation is not None else None,
            default=self.text(param.default) if param.default is not None else None,
            kind=kind,
            annotation_expr=self.expr(annotation) if annotation is not None else None,
        )

    # -- statements ------------------------------------------------------------------------
    def block(self, block) -> ir.Body:
        if isinstance(block, cst.SimpleStatementSuite):
            out = []
            for small in block.body:
                out.extend(self.small(small, small))
            return tuple(out)
        out = []
        for stmt in block.body:
            out.extend(self.stmt(stmt))
        return tuple(out)

    def stmt(self, node) -> list:
        if isinstance(node, cst.SimpleStatementLine):
            out = []
            for small in node.body:
                out.extend(self.small(small, small if len(node.body) > 1 else node))
            return out
        l, e = self.lines(node)
        if isinstance(node, cst.If):
            return [self.if_stmt(node)]
        if isinstance(node, cst.For):
            return [ir.For(l, e, self.expr(node.target), self.expr(node.iter), self.block(node.body),
                           self.block(node.orelse.body) if node.orelse is not None else ())]
        if isinstance(node, cst.While):
            return [ir.While(l, e, self.expr(node.test), self.block(node.body),
                             self.block(node.orelse.body) if node.orelse is not None else ())]
        if isinstance(node, cst.With):
            items = tuple(ir.WithItem(*self.lines(i), self.expr(i.item),
                                      self.expr(i.asname.name) if i.asname is not None else None)
                          for i in node.items)
            return [ir.With(l, e, items, self.block(node.body))]
        if isinstance(node, (cst.Try, cst.TryStar)):
            handlers = tuple(ir.Handler(*self.lines(h), self.expr(h.type) if h.type is not None else None,
                                        self.block(h.body))
                             for h in node.handlers)
            return [ir.Try(l, e, self.block(node.body), handlers,
                           self.block(node.orelse.body) if node.orelse is not None else (),
                           self.block(node.finalbody.body) if node.finalbody is not None else ())]
        if isinstance(node, cst.FunctionDef):
            qualname = f"{self._scope}.<locals>.{node.name.value}"
            saved_method = self._method
            self.add_function(node, f"{self._scope}.<locals>.", None)
            self._method = saved_method
            return [ir.Def(l, e, qualname)]
        if isinstance(node, cst.ClassDef):
            self.add_class(node, f"{self._scope}.<locals>.")
            return [ir.Def(l, e, f"{self._scope}.<locals>.{node.name.value}")]
        if isinstance(node, cst.Match):
            # any case may run: the subject is evaluated, then one of the bodies
            cases = tuple(ir.Handler(*self.lines(case), None, self.block(case.body)) for case in node.cases)
            return [ir.ExprStmt(l, l, self.expr(node.subject)), ir.Try(l, e, (), cases, (), ())]
        return [ir.OtherStmt(l, e, ())]

    def if_stmt(self, node: cst.If) -> ir.If:
        l, e = self.lines(node)
        orelse = node.orelse
        if orelse is None:
            other = ()
        elif isinstance(orelse, cst.If):
            other = (self.if_stmt(orelse),)
        else:
            other = self.block(orelse.body)
        return ir.If(l, e, self.expr(node.test), self.block(node.body), other, _one_line(self.text(node.test)))

    def small(self, node, line_node) -> list:
        l, e = self.lines(line_node)
        if isinstance(node, cst.Expr):
            return [ir.ExprStmt(l, e, self.expr(node.value))]
        if isinstance(node, cst.Assign):
            targets = tuple(self.expr(t.target) for t in node.targets)
            value = self.expr(node.value)
            self.note_instance_attrs(targets, value, None, l)
            return [ir.Assign(l, e, targets, value, None)]
        if isinstance(node, cst.AnnAssign):
            target = self.expr(node.target)
            value = self.expr(node.value) if node.value is not None else None
            annotation = self.text(node.annotation.annotation)
            self.note_instance_attrs((target,), value, annotation, l)
            return [ir.Assign(l, e, (target,), value, annotation)]
        if isinstance(node, cst.AugAssign):
            return [ir.AugAssign(l, e, self.expr(node.target), self.expr(node.value))]
        if isinstance(node, cst.Return):
            return [ir.Return(l, e, self.expr(node.value) if node.value is not None else None)]
        if isinstance(node, cst.Raise):
            return [ir.Raise(l, e, self.expr(node.exc) if node.exc is not None else None)]
        if isinstance(node, cst.Assert):
            return [ir.Assert(l, e, self.expr(node.test), _one_line(self.text(node.test)))]
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            if self._func_imports is not None:
                self.add_import(node, self._scope)
            return []
        if isinstance(node, cst.Del):
            return [ir.OtherStmt(l, e, (self.expr(node.target),))]
        if isinstance(node, (cst.Break, cst.Continue)):
            return [ir.Jump(l, e, "break" if isinstance(node, cst.Break) else "continue")]
        return [ir.OtherStmt(l, e, ())]

    def note_instance_attrs(self, targets, value, annotation, line) -> None:
        if self._instance_attrs is None or not self._method:
            return
        for target in targets:
            if isinstance(target, ir.Attr) and isinstance(target.value, ir.Name) and target.value.id == "self":
                self._instance_attrs.append(InstanceAttr(target.attr, value, annotation, line, self._method))

    # -- expressions -----------------------------------------------------------------------
    def expr(self, node) -> ir.Expr:
        l, e = self.lines(node)
        if isinstance(node, cst.Name):
            if node.value in ("True", "False", "None"):
                return ir.Constant(l, e, {"True": True, "False": False, "None": None}[node.value])
            return ir.Name(l, e, node.value)
        if isinstance(node, cst.Attribute):
            return ir.Attr(l, e, self.expr(node.value), node.attr.value)
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            try:
                value = node.evaluated_value
            except Exception:  # noqa: BLE001 - odd escapes: keep the expression, lose the value
                return ir.OtherExpr(l, e, self.text(node), ())
            return ir.Constant(l, e, value)
        if isinstance(node, cst.Integer):
            return ir.Constant(l, e, int(node.value, 0))
        if isinstance(node, cst.Float):
            return ir.Constant(l, e, float(node.value))
        if isinstance(node, cst.Ellipsis):
            return ir.Constant(l, e, ...)
        if isinstance(node, cst.Call):
            args: list[ir.Expr] = []
            keywords: list[ir.Keyword] = []
            for arg in node.args:
                value = self.expr(arg.value)
                if arg.keyword is not None:
                    keywords.append(ir.Keyword(value.line, value.end_line, arg.keyword.value, value))
                elif arg.star == "**":
                    keywords.append(ir.Keyword(value.line, value.end_line, None, value))
                elif arg.star == "*":
                    args.append(ir.Starred(value.line, value.end_line, value))
                else:
                    args.append(value)
            return ir.Call(l, e, self.expr(node.func), tuple(args), tuple(keywords))
        if isinstance(node, cst.Comparison):
            ops = tuple(_COMPARE.get(type(c.operator), "?") for c in node.comparisons)
            return ir.Compare(l, e, self.expr(node.left), ops, tuple(self.expr(c.comparator) for c in node.comparisons))
        if isinstance(node, cst.BooleanOperation):
            op = "and" if isinstance(node.operator, cst.And) else "or"
            values: list[ir.Expr] = []
            for side in (node.left, node.right):
                sub = self.expr(side)
                if isinstance(sub, ir.BoolOp) and sub.op == op and not side.lpar:
                    values.extend(sub.values)
                else:
                    values.append(sub)
            return ir.BoolOp(l, e, op, tuple(values))
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Not):
                return ir.Not(l, e, self.expr(node.expression))
            return ir.Unary(l, e, _UNARY.get(type(node.operator), "?"), self.expr(node.expression))
        if isinstance(node, cst.BinaryOperation):
            return ir.BinOp(l, e, _BINOP.get(type(node.operator), "?"), self.expr(node.left), self.expr(node.right))
        if isinstance(node, cst.Subscript):
            index = []
            for element in node.slice:
                if isinstance(element.slice, cst.Index):
                    index.append(self.expr(element.slice.value))
                else:
                    sl = cast(cst.Slice, element.slice)
                    index.append(ir.Slice(l, e, *(self.expr(x) if x is not None else None
                                                  for x in (sl.lower, sl.upper, sl.step))))
            return ir.Subscript(l, e, self.expr(node.value), tuple(index))
        if isinstance(node, (cst.Tuple, cst.List, cst.Set)):
            kind = {cst.Tuple: "tuple", cst.List: "list", cst.Set: "set"}[type(node)]
            elts = tuple(self.expr(el.value) if isinstance(el, cst.Element)
                         else ir.Starred(l, e, self.expr(el.value)) for el in node.elements)
            return ir.Seq(l, e, kind, elts)
        if isinstance(node, cst.Dict):
            keys: list[ir.Expr | None] = []
            values = []
            for el in node.elements:
                if isinstance(el, cst.DictElement):
                    keys.append(self.expr(el.key))
                    values.append(self.expr(el.value))
                else:
                    keys.append(None)
                    values.append(self.expr(el.value))
            return ir.Dict(l, e, tuple(keys), tuple(values))
        if isinstance(node, cst.IfExp):
            return ir.IfExp(l, e, self.expr(node.test), self.expr(node.body), self.expr(node.orelse))
        if isinstance(node, cst.Lambda):
            names = tuple(p.name.value for p in (*node.params.posonly_params, *node.params.params,
                                                 *node.params.kwonly_params))
            return ir.Lambda(l, e, names, self.expr(node.body))
        if isinstance(node, (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)):
            elts = ((self.expr(node.key), self.expr(node.value)) if isinstance(node, cst.DictComp)
                    else (self.expr(node.elt),))
            gens = []
            comp = node.for_in
            while comp is not None:
                target = self.expr(comp.target)
                gens.append(ir.Generator(target.line, target.end_line, target, self.expr(comp.iter),
                                         tuple(self.expr(i.test) for i in comp.ifs)))
                comp = comp.inner_for_in
            return ir.Comp(l, e, elts, tuple(gens))
        if isinstance(node, cst.Await):
            return self.expr(node.expression)
        if isinstance(node, cst.NamedExpr):
            return ir.Walrus(l, e, self.expr(node.target), self.expr(node.value))
        # f-strings, yield, starred, ...: keep sub-expressions so calls and reads inside are seen
        return ir.OtherExpr(l, e, type(node).__name__, tuple(self.expr(c) for c in _child_exprs(node)))


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


def _docstring(stmt: cst.SimpleStatementLine) -> str | None:
    if len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Expr):
        value = stmt.body[0].value
        if isinstance(value, (cst.SimpleString, cst.ConcatenatedString)):
            try:
                text = value.evaluated_value
            except Exception:  # noqa: BLE001
                return None
            if not isinstance(text, str):  # bytes, or None for a concatenation with an f-string
                return None
            return inspect.cleandoc(text)
    return None
