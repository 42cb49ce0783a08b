"""Python's `ast` -> ModuleFacts: the same facts as the libcst extractor (srcreview.index.extract),
at a tenth of its cost.

libcst's parse and position pass take about 2 s per MB of source where `ast.parse` takes 0.15 s;
a cold review parses about 2.4 MB of vLLM, so libcst alone costs more than the whole-tree
`ast.parse` floor. This builder reads the same module through `ast` and reproduces what the
libcst builder records, rule for rule: lines as libcst's PositionProvider gives them (an `if`
ends with its body, a tuple or generator excludes its own parentheses), node texts as libcst
prints them (with the expression's own parentheses), strings and f-strings as libcst evaluates
them. tests/index/test_ast_facts.py compares both extractors on the fixtures and, module by module,
on whole vLLM releases; libcst stays the reference, and extracts every module this builder does
not take (syntax this Python's `ast` does not parse, a source that is not UTF-8).
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
from typing import cast

from srcreview.index import ir
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
    PendingBody,
)
from srcreview.index.literal import literal_value

# `try/except*` (Python 3.11+) is a try statement like any other
if sys.version_info >= (3, 11):
    _TRY = (ast.Try, ast.TryStar)
else:  # pragma: no cover
    _TRY = (ast.Try,)


class NotTaken(Exception):
    """This module is left to the libcst extractor."""


_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_LINE_END = re.compile(rb"\r\n|\r|\n")

_COMPARE = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.In: "in",
    ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
}
_BINOP = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>", ast.MatMult: "@",
}
_UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
_SIMPLE = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Raise, ast.Assert, ast.Import,
           ast.ImportFrom, ast.Delete, ast.Pass, ast.Break, ast.Continue, ast.Global, ast.Nonlocal)


def extract(source: bytes, module: str, path: str, blob_id: str) -> ModuleFacts:
    """Facts of one module, or NotTaken: the module is libcst's to extract."""
    for line in source.split(b"\n", 2)[:2]:
        found = _CODING.match(line)
        if found and found.group(1).lower().replace(b"_", b"-") not in (b"utf-8", b"utf8"):
            raise NotTaken("encoding")
    if source.startswith(b"\xef\xbb\xbf") or b"\0" in source:
        raise NotTaken("bom or nul")
    try:
        source.decode("utf-8")
        tree = ast.parse(source)
    except (SyntaxError, ValueError, UnicodeDecodeError, RecursionError, MemoryError) as exc:
        raise NotTaken(type(exc).__name__) from None
    builder = _Builder(_Source(source), module, path.endswith("__init__.py"), lazy=True)
    try:
        builder.module_body(tree.body)
    except RecursionError:
        raise NotTaken("recursion") from None
    return ModuleFacts(
        module=module, path=path, blob_id=blob_id,
        imports=tuple(builder.imports), classes=builder.classes, functions=builder.functions,
        constants=builder.constants, all_names=builder.all_names,
    )


class _Source:
    """The module's bytes by (line, UTF-8 column), as `ast` positions count them; `first`: the
    module line `data` starts at (a function's lines alone: convert_body)."""

    def __init__(self, data: bytes, first: int = 1):
        self.data = data
        self.first = first
        starts = [0]
        starts.extend(m.end() for m in _LINE_END.finditer(data))
        self.starts = starts

    def line_start(self, line: int) -> int:
        return self.starts[line - self.first]

    def offset(self, line: int, col: int) -> int:
        return self.starts[line - self.first] + col

    def line_of(self, offset: int) -> int:
        from bisect import bisect_right

        return bisect_right(self.starts, offset) + self.first - 1

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def prev_char(self, offset: int) -> tuple[int, int]:
        """The last significant byte before `offset` (whitespace, continuations and comments
        skipped) and its offset; (0, -1) at the start."""
        data = self.data
        at = offset - 1
        while at >= 0:
            c = data[at]
            if c in b" \t\f\\":
                at -= 1
            elif c in b"\r\n":
                line = self.line_of(at)  # the line `at` ends
                start = self.line_start(line)
                code = _code_part(data[start:at].rstrip(b"\r\n"))
                at = start + len(code) - 1
            else:
                return c, at
        return 0, -1

    def next_char(self, offset: int) -> tuple[int, int]:
        data = self.data
        at, n = offset, len(data)
        while at < n:
            c = data[at]
            if c in b" \t\f\\\r\n":
                at += 1
            elif c == 35:  # '#': to the end of the line
                nl = _LINE_END.search(data, at)
                at = nl.end() if nl else n
            else:
                return c, at
        return 0, n


def _code_part(line: bytes) -> bytes:
    """A line without its comment (a `#` outside string quotes)."""
    if b"#" not in line:
        return line
    quote = None
    i, n = 0, len(line)
    while i < n:
        c = line[i:i + 1]
        if quote is None:
            if c == b"#":
                return line[:i]
            if c in (b"'", b'"'):
                quote = line[i:i + 3] if line[i:i + 3] in (b"'''", b'"""') else c
                i += len(quote)
                continue
        elif c == b"\\":
            i += 2
            continue
        elif line[i:i + len(quote)] == quote:
            i += len(quote)
            quote = None
            continue
        i += 1
    return line


_OPEN, _CLOSE, _COMMA = ord("("), ord(")"), ord(",")


class _Builder:
    def __init__(self, src: _Source, module: str, is_package: bool, *, lazy: bool = False):
        self.src = src
        self.lazy = lazy  # function bodies left pending (converted when first read: convert_body)
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
        self._sole: set[int] = set()  # ids of expressions whose adjacent parentheses are their parent's
        self._indent = ""  # the indentation of the statement whose texts are taken

    # -- positions and texts, as libcst gives them ------------------------------------------
    def span(self, node) -> tuple[int, int]:
        """(start, end) offsets of an expression without its own parentheses."""
        if isinstance(node, ast.Tuple) and node.elts:
            start = self.outer(node.elts[0])[0]
            end = self.outer(node.elts[-1])[1]
            c, at = self.src.next_char(end)
            if c == _COMMA:
                end = at + 1
            return start, end
        if isinstance(node, ast.Tuple):  # `()`: libcst's position is between the parentheses
            at = self.src.offset(node.lineno, node.col_offset) + 1
            return at, at
        if isinstance(node, ast.GeneratorExp):
            last = node.generators[-1]
            return self.outer(node.elt)[0], self.outer(last.ifs[-1] if last.ifs else last.iter)[1]
        return (self.src.offset(node.lineno, node.col_offset),
                self.src.offset(node.end_lineno, node.end_col_offset))

    def outer(self, node) -> tuple[int, int]:
        """(start, end) with the expression's own parentheses (a sole call argument's nearest
        pair is the call's)."""
        start, end = self.span(node)
        pairs = []
        while True:
            c1, a = self.src.prev_char(start)
            if c1 != _OPEN:
                break
            c2, b = self.src.next_char(end)
            if c2 != _CLOSE:
                break
            pairs.append((a, b + 1))
            start, end = a, b + 1
        if pairs and id(node) in self._sole:
            pairs.pop()
        return pairs[-1] if pairs else self.span(node)

    def lines(self, node) -> tuple[int, int]:
        if isinstance(node, (ast.Tuple, ast.GeneratorExp)):
            start, end = self.span(node)
            return self.src.line_of(start), self.src.line_of(max(start, end - 1))
        return node.lineno, node.end_lineno

    def text(self, node) -> str:
        """The expression as libcst prints it: its own parentheses, and continuation lines inside
        brackets without the indentation of the block the statement sits in."""
        start, end = self.outer(node)
        raw = self.src.data[start:end]
        if not self._indent or (b"\n" not in raw and b"\r" not in raw):
            return raw.decode("utf-8")
        return _dedent(raw.decode("utf-8"), self._indent)

    def at(self, node) -> None:
        """Texts from here on belong to the statement `node` (its line's indentation)."""
        line = self.src.data[self.src.line_start(node.lineno):self.src.offset(node.lineno, node.col_offset)]
        self._indent = line[:len(line) - len(line.lstrip(b" \t\f"))].decode("utf-8")

    def mark_sole(self, args) -> None:
        if len(args) == 1:
            self._sole.add(id(args[0]))

    # -- statements grouped as libcst's lines ------------------------------------------------
    def groups(self, body):
        """The statements of a block as libcst sees them: a list of simple statements sharing a
        line (`a = 1; b = 2`), or one compound statement."""
        out: list = []
        for stmt in body:
            if isinstance(stmt, _SIMPLE) and out and isinstance(out[-1], list):
                prev = out[-1][-1]
                c, at = self.src.next_char(self.src.offset(prev.end_lineno, prev.end_col_offset))
                if c == ord(";") and at < self.src.offset(stmt.lineno, stmt.col_offset):
                    out[-1].append(stmt)
                    continue
            out.append([stmt] if isinstance(stmt, _SIMPLE) else stmt)
        return out

    def is_suite(self, header: int, body) -> bool:
        """Whether a block follows its colon on the same line (libcst's SimpleStatementSuite).
        `header`: an offset in the block's header (any colon in it comes before the header's own)."""
        between = self.src.data[header:self.start(body[0])]
        return not _LINE_END.search(between[between.rfind(b":") + 1:])

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
                self.module_block(self.start(stmt), stmt.body, test)
                node = stmt
                while node.orelse:
                    orelse = node.orelse
                    if len(orelse) == 1 and isinstance(orelse[0], ast.If) and self.is_elif(orelse[0]):
                        node = orelse[0]
                        self.at(node)
                        self.module_block(self.start(node), node.body, self.text(node.test))
                    else:
                        self.module_block(self.end(node.body[-1]), orelse, f"not ({test})")
                        break
            elif isinstance(stmt, _TRY):
                self.module_block(self.start(stmt), stmt.body, "try")
                for handler in stmt.handlers:
                    self.module_block(self.start(handler), handler.body, "except")
                if stmt.orelse:
                    self.module_block(self.end(stmt.handlers[-1].body[-1]), stmt.orelse, "try-else")
                if stmt.finalbody:
                    prev = stmt.orelse or (stmt.handlers[-1].body if stmt.handlers else stmt.body)
                    self.module_block(self.end(prev[-1]), stmt.finalbody, guard)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                self.module_block(self.start(stmt), stmt.body, guard)

    def start(self, node) -> int:
        return self.src.offset(node.lineno, node.col_offset)

    def end(self, node) -> int:
        return self.src.offset(node.end_lineno, node.end_col_offset)

    def is_elif(self, node: ast.If) -> bool:
        at = self.start(node)
        return self.src.data[at:at + 4] == b"elif"

    def module_block(self, header: int, body, guard) -> None:
        """module_body of a block, unless it is a one-line suite (libcst's builder skips those)."""
        if not self.is_suite(header, body):
            self.module_body(body, guard)

    def add_import(self, node, scope: str) -> None:
        line = node.lineno
        out = cast("list[ImportFact]", self._func_imports) if scope else self.imports  # set inside a function
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
                    continue
                fact = ConstantFact(name, literal, text, start, end, expr, annotation, guard)
                previous = self.constants.get(name)
                if previous is not None and previous.expr is not None:
                    fact = ConstantFact(name, UNKNOWN, previous.text, previous.start_line, previous.end_line,
                                        previous.expr, previous.annotation, previous.guard or guard, True)
                self.constants[name] = fact
                if name == "__all__" and isinstance(literal, (list, tuple)):
                    if all(isinstance(v, str) for v in literal):
                        self.all_names = tuple(literal)

    # -- classes ---------------------------------------------------------------------------
    def add_class(self, node: ast.ClassDef, prefix: str) -> None:
        qualname = f"{prefix}{node.name}"
        start, end = node.lineno, node.end_lineno
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
        body = [] if self.is_suite(self.start(node), node.body) else self.groups(node.body)
        saved_attrs = self._instance_attrs
        self._instance_attrs = []
        for index, stmt in enumerate(body):
            self.at(stmt[0] if isinstance(stmt, list) else stmt)
            if isinstance(stmt, list):
                if index == 0 and self.docstring(stmt) is not None:
                    docstring = self.docstring(stmt)
                    continue
                span = (stmt[0].lineno, stmt[-1].end_lineno)
                for small in stmt:
                    if isinstance(small, (ast.AnnAssign, ast.Assign)):
                        fields.extend(self.class_field(small, span, qualname, body, index))
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                methods.append(stmt.name)
                self.add_function(stmt, f"{qualname}.", qualname)
            elif isinstance(stmt, ast.ClassDef):
                self.add_class(stmt, f"{qualname}.")
            elif isinstance(stmt, ast.If):  # `if TYPE_CHECKING:` inside a class body
                if self.is_suite(self.start(stmt), stmt.body):
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
            start_line=start, end_line=cast(int, end), fields=tuple(fields), methods=tuple(dict.fromkeys(methods)),
            keywords=keywords, docstring=docstring, instance_attrs=attrs,
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
        for arg, default in zip(positional, defaults, strict=True):
            params.append(self.param(arg, default, "positional"))
        if a.vararg is not None:
            params.append(self.param(a.vararg, None, "vararg"))
        for arg, default in zip(a.kwonlyargs, a.kw_defaults, strict=True):
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
            starts = self.src.starts
            stop = starts[node.end_lineno] if node.end_lineno < len(starts) else len(self.src.data)
            body = PendingBody(self.src.data, qualname, node.lineno, node.col_offset, starts[node.lineno - 1], stop)
        else:
            body = self.block(node.body)
        imports = tuple(self._func_imports)
        self._func_imports, self._scope, self._method = saved
        self.functions[qualname] = FunctionFacts(
            qualname=qualname, name=node.name, owner=owner, params=tuple(params),
            decorators=decorators, returns=returns, start_line=start, end_line=end, stored_body=body,
            imports=imports, is_async=isinstance(node, ast.AsyncFunctionDef),
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
                        attr = cast(ast.Attribute, target).attr
                        self._instance_attrs.append(InstanceAttr(attr, value, annotation, node.lineno, self._method))
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
            elif isinstance(node, _TRY):
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
        if isinstance(node, _SIMPLE):
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
                start = self.outer(item.context_expr)[0]
                end = self.outer(item.optional_vars if item.optional_vars is not None else item.context_expr)[1]
                items.append(ir.WithItem(self.src.line_of(start), self.src.line_of(end - 1),
                                         self.expr(item.context_expr),
                                         self.expr(item.optional_vars) if item.optional_vars is not None else None))
            return [ir.With(l, e, tuple(items), self.block(node.body))]
        if isinstance(node, _TRY):
            handlers = tuple(ir.Handler(h.lineno, cast(int, h.end_lineno),
                                        self.expr(h.type) if h.type is not None else None, self.block(h.body))
                             for h in node.handlers)
            return [ir.Try(l, e, self.block(node.body), handlers, self.block(node.orelse),
                           self.block(node.finalbody))]
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
            cases = tuple(ir.Handler(c.pattern.lineno, cast(int, c.body[-1].end_lineno), None, self.block(c.body))
                          for c in node.cases)
            return [ir.ExprStmt(l, l, self.expr(node.subject)), ir.Try(l, e, (), cases, (), ())]
        return [ir.OtherStmt(l, e, ())]

    def if_stmt(self, node: ast.If) -> ir.If:
        l, e = node.lineno, node.end_lineno
        self.at(node)
        test = one_line(self.text(node.test))
        if not node.orelse:
            other = ()
        elif len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and self.is_elif(node.orelse[0]):
            other = (self.if_stmt(node.orelse[0]),)
        else:
            other = self.block(node.orelse)
        return ir.If(l, cast(int, e), self.expr(node.test), self.block(node.body), other, test)

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
            return [ir.AugAssign(l, e, self.expr(node.target), self.expr(node.value))]
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
        if isinstance(node, ast.JoinedStr):
            if self.concatenated(node):
                return ir.Constant(l, e, None)  # libcst does not evaluate a concatenation with an f-string
            return ir.OtherExpr(l, e, "FormattedString", tuple(self.expr(c) for c in _fstring_exprs(node)))
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
            return self.boolop(node)
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
            for k, v in zip(node.keys, node.values, strict=True):  # in source order, as libcst builds them
                keys.append(self.expr(k) if k is not None else None)
                values.append(self.expr(v))
            return ir.Dict(l, e, tuple(keys), tuple(values))
        if isinstance(node, ast.IfExp):
            return ir.IfExp(l, e, self.expr(node.test), self.expr(node.body), self.expr(node.orelse))
        if isinstance(node, ast.Lambda):
            a = node.args
            return ir.Lambda(l, e, tuple(p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)), self.expr(node.body))
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            elts = ((self.expr(node.key), self.expr(node.value)) if isinstance(node, ast.DictComp)
                    else (self.expr(node.elt),))
            gens = []
            for comp in node.generators:
                target = self.expr(comp.target)
                gens.append(ir.Generator(target.line, target.end_line, target, self.expr(comp.iter),
                                         tuple(self.expr(i) for i in comp.ifs)))
            return ir.Comp(l, e, elts, tuple(gens))
        if isinstance(node, ast.Await):
            return self.expr(node.value)
        if isinstance(node, ast.NamedExpr):
            return ir.Walrus(l, e, self.expr(node.target), self.expr(node.value))
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return ir.OtherExpr(l, e, "Yield", (self.expr(node.value),) if node.value is not None else ())
        if isinstance(node, ast.Starred):
            return ir.OtherExpr(l, e, "StarredElement", (self.expr(node.value),))
        raise NotTaken(type(node).__name__)

    def boolop(self, node: ast.BoolOp) -> ir.BoolOp:
        """libcst nests `a and b and c` as ((a and b) and c); its builder flattens what is not
        parenthesized, which is what `ast` already gives. Lines are those of the whole chain."""
        l, e = self.lines(node)
        op = "and" if isinstance(node.op, ast.And) else "or"
        return ir.BoolOp(l, e, op, tuple(self.expr(v) for v in node.values))

    def parenthesized(self, node) -> bool:
        return self.outer(node) != self.span(node)

    def concatenated(self, node: ast.JoinedStr) -> bool:
        """Whether an f-string is one token or several literals written side by side."""
        import io
        import tokenize

        start, end = self.span(node)
        text = "(" + self.src.text(start, end) + ")"
        try:
            tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type == tokenize.STRING]
        except (tokenize.TokenError, SyntaxError):
            raise NotTaken("f-string") from None
        return len(tokens) > 1


def _is_self_attr(target) -> bool:
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"


def convert_body(pending: PendingBody) -> ir.Body:
    """The statement IR of a function body left pending by `extract`: its lines parsed again
    (under an `if 1:` when the `def` is indented, so every column is the module's own), moved to
    their lines in the module and converted as `extract` would have. A body `ast` cannot take
    is libcst's, as its module would have been."""
    line = pending.line
    segment = pending.source[pending.start:pending.stop]
    try:
        tree = ast.parse(b"if 1:\n" + segment if pending.col else segment)
        node = cast(ast.If, tree.body[0]).body[0] if pending.col else tree.body[0]
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.lineno != (2 if pending.col else 1):
            raise NotTaken("not the function")
        ast.increment_lineno(node, line - node.lineno)
        builder = _Builder(_Source(segment, first=line), "", False)
        builder._func_imports, builder._scope = [], pending.qualname
        return builder.block(node.body)
    except (NotTaken, SyntaxError, ValueError, RecursionError, MemoryError):
        from srcreview.index.extract import extract as extract_cst

        return extract_cst(pending.source, "_pending", "_pending.py", "").functions[pending.qualname].body


def _dedent(text: str, indent: str) -> str:
    """Continuation lines of `text` without `indent`, except inside string literals and after a
    backslash (libcst keeps those as written)."""
    import io
    import tokenize

    keep = []  # (start, end) offsets of string tokens spanning lines
    try:
        starts = [0]
        wrapped = "(" + text + ")"
        for line in io.StringIO(wrapped):
            starts.append(starts[-1] + len(line))
        for tok in tokenize.generate_tokens(io.StringIO(wrapped).readline):
            if tok.type == tokenize.STRING and tok.start[0] != tok.end[0]:
                keep.append((starts[tok.start[0] - 1] + tok.start[1] - 1, starts[tok.end[0] - 1] + tok.end[1] - 1))
    except (tokenize.TokenError, SyntaxError):
        raise NotTaken("text") from None
    out, at = [], 0
    for found in re.finditer(r"\r\n|\r|\n", text):
        end = found.end()
        if text[:found.start()].endswith("\\") or any(a < found.start() < b for a, b in keep):
            continue
        if text.startswith(indent, end):
            out.append(text[at:end])
            at = end + len(indent)
    out.append(text[at:])
    return "".join(out)


def _fstring_exprs(node: ast.JoinedStr | ast.expr):  # a format spec is a JoinedStr
    for value in cast(ast.JoinedStr, node).values:
        if isinstance(value, ast.FormattedValue):
            yield value.value
            if value.format_spec is not None:
                yield from _fstring_exprs(value.format_spec)


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
