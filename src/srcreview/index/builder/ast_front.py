"""Python's `ast` front end of the IR builder (srcreview.index.builder.core): the fast path.

libcst's parse and position pass take about 2 s per MB of source where `ast.parse` takes 0.15 s;
a cold review parses about 2.4 MB of vLLM, so libcst alone costs more than the whole-tree
`ast.parse` floor. This front end hands `ast`'s tree to the shared builder and answers its
questions the way libcst would: lines as libcst's PositionProvider gives them (a tuple or
generator excludes its own parentheses), node texts as libcst prints them (with the
expression's own parentheses, continuation lines without the block's indentation), statements
sharing a line, one-line suites, `elif`. It also leaves function bodies pending (converted when
first read: convert_body). What it does not take (syntax this Python's `ast` does not parse, a
source that is not UTF-8, a construct it does not know) it refuses with NotTaken: the libcst
front end's (srcreview.index.builder.cst_front). tests/test_ast_facts.py compares the two.
"""

from __future__ import annotations

import ast
import re
from bisect import bisect_right
from typing import cast

from srcreview.index import ir
from srcreview.index.builder.core import JOINED, SIMPLE, Builder, end_line, plain_text
from srcreview.index.facts import MODULE_CODE, ModuleFacts, PendingBody


class NotTaken(Exception):
    """This module (or body) is left to the libcst front end."""


_CODING = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
_LINE_END = re.compile(rb"\r\n|\r|\n")
_OPEN, _CLOSE, _COMMA, _SEMICOLON = ord("("), ord(")"), ord(","), ord(";")


def extract(source: bytes, module: str, path: str, blob_id: str) -> ModuleFacts:
    """Facts of one module, function bodies pending, or NotTaken: the module is libcst's."""
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
    builder = AstBuilder(_Source(source), module, path.endswith("__init__.py"), lazy=True)
    try:
        builder.module_body(tree.body)
        builder.add_module_code(tree.body)
    except RecursionError:
        raise NotTaken("recursion") from None
    return builder.facts(module, path, blob_id)


def convert_body(pending: PendingBody) -> ir.Body:
    """The statement IR of a function body left pending by `extract`: its lines parsed again
    (under an `if 1:` when the `def` is indented, so every column is the module's own), after as
    many empty lines as put the `def` on its line in the module (the parser skips them faster
    than `ast.increment_lineno` moves a tree: a third of a warm review's conversions), and
    converted as an eager build would. NotTaken (or the parser's error) when `ast` cannot take it."""
    if pending.qualname == MODULE_CODE:  # the module's own statements: the whole module again
        return AstBuilder(_Source(pending.source), "", False).module_code(ast.parse(pending.source).body)
    line = pending.line
    segment = pending.source[pending.start:pending.stop]
    if pending.col and line < 2:
        raise NotTaken("an indented def on the first line")  # no line above it for the `if 1:`
    tree = ast.parse(b"\n" * (line - 2) + b"if 1:\n" + segment if pending.col else b"\n" * (line - 1) + segment)
    first = tree.body[0]
    node = first.body[0] if pending.col and isinstance(first, ast.If) else first  # under the `if 1:`
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) or node.lineno != line:
        raise NotTaken("not the function")
    builder = AstBuilder(_Source(segment, first=line), "", False)
    builder._func_imports, builder._scope = [], pending.qualname
    return builder.block(node.body)


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


class AstBuilder(Builder):
    """The shared builder over `ast`'s tree, positions and texts taken from the source bytes."""

    def __init__(self, src: _Source, module: str, is_package: bool, *, lazy: bool = False):
        super().__init__(module, is_package, lazy=lazy)
        self.src = src
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
        line = self.src.data[self.src.line_start(node.lineno):self.src.offset(node.lineno, node.col_offset)]
        self._indent = line[:len(line) - len(line.lstrip(b" \t\f"))].decode("utf-8")

    def mark_sole(self, args) -> None:
        if len(args) == 1:
            self._sole.add(id(args[0]))

    def parenthesized(self, node) -> bool:
        return self.outer(node) != self.span(node)

    # -- statements as libcst's lines and blocks ----------------------------------------------
    def groups(self, body) -> list:
        out: list[ast.stmt | list[ast.stmt]] = []
        for stmt in body:
            if isinstance(stmt, SIMPLE) and out and isinstance(out[-1], list):
                prev = out[-1][-1]
                c, at = self.src.next_char(self.src.offset(*_end(prev)))
                if c == _SEMICOLON and at < self.src.offset(stmt.lineno, stmt.col_offset):
                    out[-1].append(stmt)
                    continue
            out.append([stmt] if isinstance(stmt, SIMPLE) else stmt)
        return out

    def is_suite(self, body) -> bool:
        """A suite's first statement shares its line with the block's colon; an indented block's
        has only indentation before it."""
        first = body[0]
        before = self.src.data[self.src.line_start(first.lineno):self.src.offset(first.lineno, first.col_offset)]
        return bool(before.strip(b" \t\f"))

    def is_elif(self, node: ast.If) -> bool:
        at = self.src.offset(node.lineno, node.col_offset)
        return self.src.data[at:at + 4] == b"elif"

    def withitem_lines(self, item: ast.withitem) -> tuple[int, int]:
        start = self.outer(item.context_expr)[0]
        end = self.outer(item.optional_vars if item.optional_vars is not None else item.context_expr)[1]
        return self.src.line_of(start), self.src.line_of(end - 1)

    def case_lines(self, case: ast.match_case) -> tuple[int, int]:
        return case.pattern.lineno, end_line(case.body[-1])

    def pending_module(self) -> PendingBody:
        return PendingBody(self.src.data, MODULE_CODE, 1, 0, 0, len(self.src.data))

    def pending_body(self, node, qualname: str) -> PendingBody:
        starts = self.src.starts
        stop = starts[node.end_lineno] if node.end_lineno < len(starts) else len(self.src.data)
        return PendingBody(self.src.data, qualname, node.lineno, node.col_offset, starts[node.lineno - 1], stop)

    # -- expressions only `ast` has --------------------------------------------------------------
    def other_expr(self, node, l: int, e: int) -> ir.Expr:
        if isinstance(node, ast.JoinedStr):
            if self.concatenated(node):
                return ir.Constant(l, e, None)  # libcst does not evaluate a concatenation with an f-string
            if all((isinstance(v, ast.Constant) and isinstance(v.value, str) and plain_text(v.value))
                   or (isinstance(v, ast.FormattedValue) and v.conversion == -1 and v.format_spec is None)
                   for v in node.values):
                # every part in order: the literal text and the plain `{expr}` ones (what it joins)
                parts = tuple(self.expr(v.value) if isinstance(v, ast.FormattedValue)
                              else ir.Constant(l, e, cast(ast.Constant, v).value) for v in node.values)
                return ir.OtherExpr(l, e, JOINED, parts)
            return ir.OtherExpr(l, e, "FormattedString", tuple(self.expr(c) for c in _fstring_exprs(node)))
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            kind = "YieldFrom" if isinstance(node, ast.YieldFrom) else "Yield"
            return ir.OtherExpr(l, e, kind, (self.expr(node.value),) if node.value is not None else ())
        if isinstance(node, ast.Starred):
            return ir.OtherExpr(l, e, "StarredElement", (self.expr(node.value),))
        raise NotTaken(type(node).__name__)

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


def _end(node: ast.stmt) -> tuple[int, int]:
    """A parsed statement's end (line, column): typeshed allows None, `ast.parse` sets both."""
    assert node.end_lineno is not None and node.end_col_offset is not None, "a statement without its end"
    return node.end_lineno, node.end_col_offset


def _fstring_exprs(node: ast.JoinedStr):
    for value in node.values:
        if isinstance(value, ast.FormattedValue):
            yield value.value
            if isinstance(value.format_spec, ast.JoinedStr):  # typeshed: an expr; `ast` gives a JoinedStr
                yield from _fstring_exprs(value.format_spec)
