"""The one IR builder: a module's statements, in the shape of Python's `ast`, -> ModuleFacts.

Written once for both front ends. srcreview.index.builder.ast_front hands it `ast.parse`'s tree
as it is (the fast path); srcreview.index.builder.cst_front converts libcst's tree into the same
node classes (the fallback for what `ast` does not take, and the reference tests compare the
fast path with). What the two parsers see differently is asked of the front end through the
hooks at the end of `Builder`: where an expression starts and ends and how it is written
(libcst's conventions: an expression's own parentheses, continuation lines without the block's
indentation), which statements share a line, which block is a one-line suite, which `if` is an
`elif`. Everything recorded (functions, classes, fields, constants, imports, instance
attributes, the statement and expression IR, the order things are found in) is decided here.
"""

from __future__ import annotations

import ast
import inspect
import sys
from typing import TypeGuard

from srcreview.index import ir
from srcreview.index.facts import (
    MODULE_CODE,
    UNKNOWN,
    ClassFacts,
    ConstantFact,
    FieldFact,
    FunctionFacts,
    ImportFact,
    InstanceAttr,
    ModuleFacts,
    Param,
    PendingBody,
)
from srcreview.index.literal import literal_value

_COMPARE = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in",
    ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
}
_BINOP = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@",
}
_UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
# statements libcst keeps in a SimpleStatementLine (several may share a line, `;`-separated)
SIMPLE = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Raise, ast.Assert, ast.Import,
          ast.ImportFrom, ast.Delete, ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal)
# `try` statements: `try: ... except* E:` is ast.TryStar from Python 3.11 on; 3.10's ast has no
# TryStar (it does not parse `except*`: such a module goes to cst_front, which makes it an ast.Try)
if sys.version_info >= (3, 11):
    TRY = (ast.Try, ast.TryStar)
else:
    TRY = (ast.Try,)


class Builder:
    """Facts of one module, from its statements (`module_body`) or of one function body (`block`).

    `lazy`: function bodies are left pending (PendingBody, converted when first read) and only
    what converting them would record besides their IR is collected (`scan`)."""

    def __init__(self, module: str, is_package: bool, *, lazy: bool = False):
        self.lazy = lazy
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
        self._module_code = False  # converting the module's own statements (module_code)

    def facts(self, module: str, path: str, blob_id: str) -> ModuleFacts:
        return ModuleFacts(
            module=module, path=path, blob_id=blob_id,
            imports=tuple(self.imports), classes=self.classes, functions=self.functions,
            constants=self.constants, all_names=self.all_names,
        )

    # -- module level ----------------------------------------------------------------------
    def module_body(self, body, guard: str | None = None) -> None:
        for group in self.groups(body):
            self.at(group[0] if isinstance(group, list) else group)
            if isinstance(group, list):
                span = (group[0].lineno, group[-1].end_lineno)
                for small in group:
                    if isinstance(small, (ast.Import, ast.ImportFrom)):
                        self.add_import(small, "")
                    elif isinstance(small, (ast.Assign, ast.AnnAssign)):
                        self.add_constant(small, span, guard)
                continue
            stmt = group
            if isinstance(stmt, ast.ClassDef):
                self.add_class(stmt, "")
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.add_function(stmt, "", None)
            elif isinstance(stmt, ast.If):
                test = self.text(stmt.test)
                self.module_block(stmt.body, test)
                node = stmt
                while node.orelse:
                    orelse = node.orelse
                    if len(orelse) == 1 and isinstance(orelse[0], ast.If) and self.is_elif(orelse[0]):
                        node = orelse[0]
                        self.at(node)
                        self.module_block(node.body, self.text(node.test))
                    else:
                        self.module_block(orelse, f"not ({test})")
                        break
            elif isinstance(stmt, TRY):
                self.module_block(stmt.body, "try")
                for handler in stmt.handlers:
                    self.module_block(handler.body, "except")
                if stmt.orelse:
                    self.module_block(stmt.orelse, "try-else")
                if stmt.finalbody:
                    self.module_block(stmt.finalbody, guard)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                self.module_block(stmt.body, guard)

    def module_block(self, body, guard) -> None:
        """module_body of a block, unless it is a one-line suite (its statements are not recorded)."""
        if not self.is_suite(body):
            self.module_body(body, guard)

    def add_module_code(self, body) -> None:
        """The module's own statements, what runs at import, as a function named MODULE_CODE:
        registrations, decorators applied, `if __name__ == "__main__":` are calls a sound call
        graph walks (a claim that nothing calls a function is only as good as that)."""
        last = end_line(body[-1]) if body else 1
        stored = self.pending_module() if self.lazy else self.module_code(body)
        self.functions[MODULE_CODE] = FunctionFacts(
            qualname=MODULE_CODE, name=MODULE_CODE, owner=None, params=(), decorators=(), returns=None,
            start_line=1, end_line=last, stored_body=stored)

    def module_code(self, body) -> ir.Body:
        """The IR of the module's statements: a `def` or `class` binds its name, then each
        decorator is applied to it (innermost first), as a call; their bodies are their own."""
        saved, self._module_code = self._module_code, True
        try:
            return self.block(body)
        finally:
            self._module_code = saved

    def add_import(self, node, scope: str) -> None:
        line = node.lineno
        out = self._func_imports if scope else self.imports
        assert out is not None, "a function's imports are collected only while its body is read"
        if isinstance(node, ast.Import):
            for alias in node.names:
                name = alias.name
                if alias.asname is not None:
                    out.append(ImportFact(alias.asname, name, line, True, scope))
                else:
                    out.append(ImportFact(name.split(".")[0], name.split(".")[0], line, True, scope))
            return
        base = absolute_module(self.module, self.is_package, node.level, node.module)
        if len(node.names) == 1 and node.names[0].name == "*":
            out.append(ImportFact("*", base, line, True, scope))
            return
        for alias in node.names:
            local = alias.asname if alias.asname is not None else alias.name
            out.append(ImportFact(local, f"{base}.{alias.name}" if base else alias.name, line, False, scope))

    def add_constant(self, node, span, guard: str | None) -> None:
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
            annotation = self.text(node.annotation)
        else:
            targets = node.targets
            annotation = None
        value = node.value
        start, end = span
        expr = self.expr(value) if value is not None else None
        literal = literal_value(expr) if expr is not None else UNKNOWN
        text = self.text(value) if value is not None else ""
        for target in targets:
            if isinstance(target, ast.Name):
                name = target.id
                if value is None and name in self.constants:
                    continue  # a bare `NAME: T` declaration after the assignment adds nothing
                fact = ConstantFact(name, literal, text, start, end, expr, annotation, guard)
                previous = self.constants.get(name)
                if previous is not None and previous.expr is not None:
                    # bound twice (if/else, try/except, or reassigned): keep the first site, drop the value
                    fact = ConstantFact(name, UNKNOWN, previous.text, previous.start_line, previous.end_line,
                                        previous.expr, previous.annotation, previous.guard or guard, True)
                self.constants[name] = fact
                if (name == "__all__" and isinstance(literal, (list, tuple))
                        and all(isinstance(v, str) for v in literal)):
                    self.all_names = tuple(literal)

    # -- classes ---------------------------------------------------------------------------
    def add_class(self, node: ast.ClassDef, prefix: str) -> None:
        qualname = f"{prefix}{node.name}"
        start, end = node.lineno, end_line(node)
        self.at(node)
        bases_nodes = [b for b in node.bases if not isinstance(b, ast.Starred)]
        if len(node.bases) + len(node.keywords) == 1:
            self.mark_sole(node.bases)
        bases = tuple(self.text(b) for b in bases_nodes)
        keywords = tuple((k.arg, self.text(k.value)) for k in node.keywords if k.arg is not None)
        decorators = tuple(self.text(d) for d in node.decorator_list)
        fields: list[FieldFact] = []
        methods: list[str] = []
        docstring = None
        body = [] if self.is_suite(node.body) else self.groups(node.body)
        saved_attrs = self._instance_attrs
        self._instance_attrs = []
        body_closed = True
        for index, stmt in enumerate(body):
            self.at(stmt[0] if isinstance(stmt, list) else stmt)
            if isinstance(stmt, list):
                if index == 0 and self.docstring(stmt) is not None:
                    docstring = self.docstring(stmt)
                    continue
                span = (stmt[0].lineno, stmt[-1].end_lineno)
                for small in stmt:
                    body_closed = body_closed and _binds_only_listed(small)
                    if isinstance(small, (ast.AnnAssign, ast.Assign)):
                        fields.extend(self.class_field(small, span, qualname, body, index))
            elif not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                body_closed = False
            if isinstance(stmt, list):
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods.append(stmt.name)
                self.add_function(stmt, f"{qualname}.", qualname)
            elif isinstance(stmt, ast.ClassDef):
                self.add_class(stmt, f"{qualname}.")
            elif isinstance(stmt, ast.If):  # `if TYPE_CHECKING:` inside a class body
                if self.is_suite(stmt.body):
                    continue
                for inner in self.groups(stmt.body):
                    self.at(inner[0] if isinstance(inner, list) else inner)
                    if isinstance(inner, list):
                        span = (inner[0].lineno, inner[-1].end_lineno)
                        for small in inner:
                            if isinstance(small, (ast.AnnAssign, ast.Assign)):
                                fields.extend(self.class_field(small, span, qualname, (), 0))
                    elif isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        methods.append(inner.name)
                        self.add_function(inner, f"{qualname}.", qualname)
        attrs = tuple(self._instance_attrs)
        self._instance_attrs = saved_attrs
        self.classes[qualname] = ClassFacts(
            qualname=qualname, name=node.name, bases=bases, decorators=decorators,
            start_line=start, end_line=end, fields=tuple(fields), methods=tuple(dict.fromkeys(methods)),
            keywords=keywords, docstring=docstring, instance_attrs=attrs, body_closed=body_closed,
        )

    def docstring(self, group) -> str | None:
        if len(group) == 1 and isinstance(group[0], ast.Expr):
            value = group[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return inspect.cleandoc(value.value)
        return None

    def class_field(self, node, span, owner: str, body, index: int) -> list[FieldFact]:
        start, end = span
        docstring = None
        if index + 1 < len(body) and isinstance(body[index + 1], list):
            docstring = self.docstring(body[index + 1])
            if docstring is not None:
                end = body[index + 1][-1].end_lineno
        value = node.value
        value_expr = self.expr(value) if value is not None else None
        literal = literal_value(value_expr) if value_expr is not None else UNKNOWN
        default = self.text(value) if value is not None else None
        if isinstance(node, ast.AnnAssign):
            annotation = self.text(node.annotation)
            ann_expr = self.expr(node.annotation)
            targets = [node.target]
        else:
            annotation = None
            ann_expr = None
            targets = node.targets
        classvar = annotation is not None and (annotation.startswith("ClassVar") or ".ClassVar" in annotation)
        out = []
        for target in targets:
            if isinstance(target, ast.Name):
                out.append(FieldFact(
                    name=target.id, owner=owner, annotation=annotation, default=default,
                    docstring=docstring, start_line=start, end_line=end, classvar=classvar,
                    annotation_expr=ann_expr, default_expr=value_expr, value=literal,
                ))
        return out

    # -- functions -------------------------------------------------------------------------
    def add_function(self, node, prefix: str, owner: str | None) -> None:
        qualname = f"{prefix}{node.name}"
        start, end = node.lineno, node.end_lineno
        self.at(node)
        a = node.args
        params = []
        positional = [*a.posonlyargs, *a.args]
        defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
        for arg, default in zip(positional, defaults, strict=True):  # padded to one per parameter
            params.append(self.param(arg, default, "positional"))
        if a.vararg is not None:
            params.append(self.param(a.vararg, None, "vararg"))
        for arg, default in zip(a.kwonlyargs, a.kw_defaults, strict=True):  # one per parameter, None for none
            params.append(self.param(arg, default, "keyword"))
        if a.kwarg is not None:
            params.append(self.param(a.kwarg, None, "kwarg"))
        decorators = tuple(self.text(d) for d in node.decorator_list)
        returns = self.text(node.returns) if node.returns is not None else None
        saved = (self._func_imports, self._scope, self._method)
        self._func_imports = []
        self._scope = qualname
        self._method = qualname if owner else self._method
        if self.lazy:
            self.scan(node.body)
            body = self.pending_body(node, qualname)
        else:
            body = self.block(node.body)
        imports = tuple(self._func_imports)
        self._func_imports, self._scope, self._method = saved
        self.functions[qualname] = FunctionFacts(
            qualname=qualname, name=node.name, owner=owner, params=tuple(params),
            decorators=decorators, returns=returns, start_line=start, end_line=end, stored_body=body,
            imports=imports, is_async=isinstance(node, ast.AsyncFunctionDef), posonly=len(a.posonlyargs),
        )

    def param(self, arg: ast.arg, default, kind: str) -> Param:
        annotation = arg.annotation
        return Param(
            name=arg.arg,
            annotation=self.text(annotation) if annotation is not None else None,
            default=self.text(default) if default is not None else None,
            kind=kind,
            annotation_expr=self.expr(annotation) if annotation is not None else None,
        )

    # -- statements ------------------------------------------------------------------------
    def scan(self, body) -> None:
        """What converting `body` (block) records besides its IR, in the same order, without
        converting it: nested functions and classes, the function's imports, `self.x = ...`
        of a method. A review reads about one body in eight of the modules it loads."""
        for node in body:
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if self._instance_attrs is None or not self._method or not any(map(_is_self_attr, targets)):
                    continue
                self.at(node)
                if isinstance(node, ast.Assign):
                    value, annotation = self.expr(node.value), None
                else:
                    value = self.expr(node.value) if node.value is not None else None
                    annotation = self.text(node.annotation)
                for target in targets:
                    if _is_self_attr(target):
                        self._instance_attrs.append(InstanceAttr(target.attr, value, annotation, node.lineno,
                                                                 self._method))
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                self.add_import(node, self._scope)
            elif isinstance(node, ast.If):  # as if_stmt converts it: the else branch first
                if node.orelse:
                    self.scan(node.orelse)
                self.scan(node.body)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                self.scan(node.body)
                self.scan(node.orelse)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                self.scan(node.body)
            elif isinstance(node, TRY):
                for handler in node.handlers:
                    self.scan(handler.body)
                self.scan(node.body)
                self.scan(node.orelse)
                self.scan(node.finalbody)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.at(node)
                saved_method = self._method
                self.add_function(node, f"{self._scope}.<locals>.", None)
                self._method = saved_method
            elif isinstance(node, ast.ClassDef):
                self.at(node)
                self.add_class(node, f"{self._scope}.<locals>.")
            elif isinstance(node, ast.Match):
                for case in node.cases:
                    self.scan(case.body)

    def block(self, body) -> ir.Body:
        out = []
        for stmt in body:
            out.extend(self.stmt(stmt))
        return tuple(out)

    def stmt(self, node) -> list:
        self.at(node)
        if isinstance(node, SIMPLE):
            return self.small(node)
        l, e = node.lineno, node.end_lineno
        if isinstance(node, ast.If):
            return [self.if_stmt(node)]
        if isinstance(node, (ast.For, ast.AsyncFor)):
            return [ir.For(l, e, self.expr(node.target), self.expr(node.iter),
                           self.block(node.body), self.block(node.orelse))]
        if isinstance(node, ast.While):
            return [ir.While(l, e, self.expr(node.test), self.block(node.body),
                             self.block(node.orelse))]
        if isinstance(node, (ast.With, ast.AsyncWith)):
            items = []
            if len(node.items) == 1 and node.items[0].optional_vars is None:  # `with (x):`: the statement's
                self.mark_sole([node.items[0].context_expr])
            for item in node.items:
                items.append(ir.WithItem(*self.withitem_lines(item), self.expr(item.context_expr),
                                         self.expr(item.optional_vars) if item.optional_vars is not None else None))
            return [ir.With(l, e, tuple(items), self.block(node.body))]
        if isinstance(node, TRY):
            handlers = tuple(ir.Handler(h.lineno, end_line(h), self.expr(h.type) if h.type is not None else None,
                                        self.block(h.body))
                             for h in node.handlers)
            return [ir.Try(l, e, self.block(node.body), handlers, self.block(node.orelse),
                           self.block(node.finalbody))]
        if self._module_code and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return self.defined_at_import(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            qualname = f"{self._scope}.<locals>.{node.name}"
            saved_method = self._method
            self.add_function(node, f"{self._scope}.<locals>.", None)
            self._method = saved_method
            return [ir.Def(l, e, qualname)]
        if isinstance(node, ast.ClassDef):
            self.add_class(node, f"{self._scope}.<locals>.")
            return [ir.Def(l, e, f"{self._scope}.<locals>.{node.name}")]
        if isinstance(node, ast.Match):
            # any case may run: the subject is evaluated, then one of the bodies
            cases = tuple(ir.Handler(*self.case_lines(c), None, self.block(c.body)) for c in node.cases)
            return [ir.ExprStmt(l, l, self.expr(node.subject)), ir.Try(l, e, (), cases, (), ())]
        return [ir.OtherStmt(l, e, ())]

    def defined_at_import(self, node) -> list:
        """`@d def f` at module level: `f` bound, then `f = d(f)` at the decorator's line."""
        out: list = [ir.Def(node.lineno, node.end_lineno, node.name)]
        for decorator in reversed(node.decorator_list):
            l, e = self.lines(decorator)
            target = ir.Name(l, e, node.name)
            out.append(ir.Assign(l, e, (target,), ir.Call(l, e, self.expr(decorator), (target,), ()), None))
        return out

    def if_stmt(self, node: ast.If) -> ir.If:
        l = node.lineno
        self.at(node)
        test = one_line(self.text(node.test))
        if not node.orelse:
            other = ()
        elif len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and self.is_elif(node.orelse[0]):
            other = (self.if_stmt(node.orelse[0]),)
        else:
            other = self.block(node.orelse)
        return ir.If(l, end_line(node), self.expr(node.test), self.block(node.body), other, test)

    def small(self, node) -> list:
        l, e = node.lineno, node.end_lineno
        if isinstance(node, ast.Expr):
            return [ir.ExprStmt(l, e, self.expr(node.value))]
        if isinstance(node, ast.Assign):
            targets = tuple(self.expr(t) for t in node.targets)
            value = self.expr(node.value)
            self.note_instance_attrs(targets, value, None, l)
            return [ir.Assign(l, e, targets, value, None)]
        if isinstance(node, ast.AnnAssign):
            target = self.expr(node.target)
            value = self.expr(node.value) if node.value is not None else None
            annotation = self.text(node.annotation)
            self.note_instance_attrs((target,), value, annotation, l)
            return [ir.Assign(l, e, (target,), value, annotation)]
        if isinstance(node, ast.AugAssign):
            return [ir.AugAssign(l, e, self.expr(node.target), self.expr(node.value), _BINOP.get(type(node.op), "?"))]
        if isinstance(node, ast.Return):
            return [ir.Return(l, e, self.expr(node.value) if node.value is not None else None)]
        if isinstance(node, ast.Raise):
            return [ir.Raise(l, e, self.expr(node.exc) if node.exc is not None else None)]
        if isinstance(node, ast.Assert):
            return [ir.Assert(l, e, self.expr(node.test), one_line(self.text(node.test)))]
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if self._func_imports is not None:
                self.add_import(node, self._scope)
            return []
        if isinstance(node, ast.Delete):
            if len(node.targets) == 1:
                return [ir.OtherStmt(l, e, (self.expr(node.targets[0]),))]
            first, last = node.targets[0], node.targets[-1]
            seq = ir.Seq(self.lines(first)[0], self.lines(last)[1], "tuple", tuple(self.expr(t) for t in node.targets))
            return [ir.OtherStmt(l, e, (seq,))]
        if isinstance(node, (ast.Break, ast.Continue)):
            return [ir.Jump(l, e, "break" if isinstance(node, ast.Break) else "continue")]
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
        if isinstance(node, ast.Name):
            return ir.Name(l, e, node.id)
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, complex):
                return ir.OtherExpr(l, e, "Imaginary", ())
            return ir.Constant(l, e, value)
        if isinstance(node, ast.Attribute):
            return ir.Attr(l, e, self.expr(node.value), node.attr)
        if isinstance(node, ast.Call):
            if len(node.args) + len(node.keywords) == 1:
                self.mark_sole(node.args)
            args: list[ir.Expr] = []
            keywords: list[ir.Keyword] = []
            for arg in node.args:
                if isinstance(arg, ast.Starred):
                    value = self.expr(arg.value)
                    args.append(ir.Starred(value.line, value.end_line, value))
                else:
                    args.append(self.expr(arg))
            for kw in node.keywords:
                value = self.expr(kw.value)
                keywords.append(ir.Keyword(value.line, value.end_line, kw.arg, value))
            return ir.Call(l, e, self.expr(node.func), tuple(args), tuple(keywords))
        if isinstance(node, ast.Compare):
            ops = tuple(_COMPARE.get(type(op), "?") for op in node.ops)
            return ir.Compare(l, e, self.expr(node.left), ops, tuple(self.expr(c) for c in node.comparators))
        if isinstance(node, ast.BoolOp):
            # libcst nests `a and b and c` as ((a and b) and c) and the IR flattens what is not
            # parenthesized: what `ast` gives (cst_front flattens the same). Lines: the whole chain's.
            op = "and" if isinstance(node.op, ast.And) else "or"
            return ir.BoolOp(l, e, op, tuple(self.expr(v) for v in node.values))
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return ir.Not(l, e, self.expr(node.operand))
            return ir.Unary(l, e, _UNARY.get(type(node.op), "?"), self.expr(node.operand))
        if isinstance(node, ast.BinOp):
            return ir.BinOp(l, e, _BINOP.get(type(node.op), "?"), self.expr(node.left), self.expr(node.right))
        if isinstance(node, ast.Subscript):
            sl = node.slice
            elements = sl.elts if isinstance(sl, ast.Tuple) and sl.elts and not self.parenthesized(sl) else [sl]
            index: list[ir.Expr] = []
            for element in elements:
                if isinstance(element, ast.Slice):
                    index.append(ir.Slice(l, e, *(self.expr(x) if x is not None else None
                                                  for x in (element.lower, element.upper, element.step))))
                else:
                    index.append(self.expr(element))
            return ir.Subscript(l, e, self.expr(node.value), tuple(index))
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            kind = {ast.Tuple: "tuple", ast.List: "list", ast.Set: "set"}[type(node)]
            elts = tuple(ir.Starred(l, e, self.expr(el.value)) if isinstance(el, ast.Starred) else self.expr(el)
                         for el in node.elts)
            return ir.Seq(l, e, kind, elts)
        if isinstance(node, ast.Dict):
            keys, values = [], []
            for k, v in zip(node.keys, node.values, strict=True):  # in source order; a None key for `**`
                keys.append(self.expr(k) if k is not None else None)
                values.append(self.expr(v))
            return ir.Dict(l, e, tuple(keys), tuple(values))
        if isinstance(node, ast.IfExp):
            return ir.IfExp(l, e, self.expr(node.test), self.expr(node.body), self.expr(node.orelse))
        if isinstance(node, ast.Lambda):
            a = node.args
            return ir.Lambda(l, e, tuple(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)), self.expr(node.body))
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            if isinstance(node, ast.DictComp):
                elts = (self.expr(node.key), self.expr(node.value))
            else:
                elts = (self.expr(node.elt),)
            gens = []
            for comp in node.generators:
                target = self.expr(comp.target)
                gens.append(ir.Generator(target.line, target.end_line, target, self.expr(comp.iter),
                                         tuple(self.expr(i) for i in comp.ifs)))
            kind = {ast.ListComp: "list", ast.SetComp: "set", ast.DictComp: "dict"}.get(type(node), "generator")
            return ir.Comp(l, e, elts, tuple(gens), kind)
        if isinstance(node, ast.Await):
            return self.expr(node.value)
        if isinstance(node, ast.NamedExpr):
            return ir.Walrus(l, e, self.expr(node.target), self.expr(node.value))
        if isinstance(node, Opaque):
            return ir.OtherExpr(l, e, node.kind, tuple(self.expr(c) for c in node.children))
        return self.other_expr(node, l, e)

    # -- what the front end answers ------------------------------------------------------------
    def lines(self, node) -> tuple[int, int]:
        """First and last line of an expression, as libcst's PositionProvider gives them."""
        raise NotImplementedError

    def text(self, node) -> str:
        """An expression as libcst prints it (code_for_node): with its own parentheses."""
        raise NotImplementedError

    def at(self, node) -> None:
        """Texts from here on belong to the statement `node`."""

    def mark_sole(self, args) -> None:
        """`args` are the only argument of a call or class header: parentheses around them are
        their parent's, not theirs."""

    def groups(self, body) -> list:
        """The statements of a block as libcst sees them: a list of simple statements sharing a
        line (`a = 1; b = 2`), or one compound statement."""
        raise NotImplementedError

    def is_suite(self, body) -> bool:
        """Whether a block follows its colon on the same line (libcst's SimpleStatementSuite)."""
        raise NotImplementedError

    def is_elif(self, node: ast.If) -> bool:
        """Whether an `if` that is the whole `orelse` of another was written `elif`."""
        raise NotImplementedError

    def parenthesized(self, node) -> bool:
        raise NotImplementedError

    def withitem_lines(self, item: ast.withitem) -> tuple[int, int]:
        raise NotImplementedError

    def case_lines(self, case: ast.match_case) -> tuple[int, int]:
        raise NotImplementedError

    def pending_body(self, node, qualname: str) -> PendingBody:
        """The body of the function `node`, left to convert when first read (lazy builders)."""
        raise NotImplementedError

    def pending_module(self) -> PendingBody:
        """The module's own statements, left to convert when first read (lazy builders)."""
        raise NotImplementedError

    def other_expr(self, node, line: int, end: int) -> ir.Expr:
        """An expression of a kind the shared cases above do not cover."""
        raise NotImplementedError


JOINED = "JoinedString"  # an f-string whose children are its parts in order (no `!r`, no format spec)


def plain_text(text: str) -> bool:
    """Text of an f-string that reads the same in its source and as a value: printable ASCII
    with no backslash or brace (both parsers' f-strings of such parts are JOINED)."""
    return all(" " <= c <= "~" and c not in "\\{}" for c in text)


class Opaque:
    """An expression the IR keeps as OtherExpr: its kind and the expressions below it (what
    cst_front makes of f-strings, `yield`, starred elements and whatever else libcst has)."""

    def __init__(self, kind: str, children: list):
        self.kind = kind
        self.children = children


def end_line(node: ast.stmt | ast.excepthandler) -> int:
    """A statement's last line: typeshed allows None (a node made by hand), every node the
    builder reads has one (parsed by `ast`, or placed by cst_front)."""
    end = node.end_lineno
    assert end is not None, "a statement without its last line"
    return end


def _is_self_attr(target: ast.expr) -> TypeGuard[ast.Attribute]:
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"


def one_line(text: str) -> str:
    """A multi-line condition as one line, for messages: `f(\n    a,\n)` -> `f(a)`."""
    out = " ".join(text.split())
    return out.replace("( ", "(").replace(" )", ")").replace(", )", ")").replace(",)", ")")


def absolute_module(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute module a relative import names (`from ..x import y` inside `module`)."""
    if level == 0:
        return name or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    if level > 1:
        parts = parts[: len(parts) - (level - 1)] if level - 1 <= len(parts) else []
    base = ".".join(parts)
    if name:
        return f"{base}.{name}" if base else name
    return base


def _binds_only_listed(stmt) -> bool:
    """Whether a simple statement of a class body binds nothing but what the class's facts list:
    a (possibly annotated) assignment to plain names, a string, `pass`."""
    if isinstance(stmt, ast.Assign):
        return all(isinstance(t, ast.Name) for t in stmt.targets)
    if isinstance(stmt, ast.AnnAssign):
        return isinstance(stmt.target, ast.Name)
    if isinstance(stmt, ast.Expr):  # a docstring-like string (an f-string one too: libcst gives its text)
        return isinstance(stmt.value, (ast.Constant, ast.JoinedStr))
    return isinstance(stmt, ast.Pass)
