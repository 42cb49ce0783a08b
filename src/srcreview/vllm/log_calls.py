"""The logger calls of a pinned tree: where each `logger.info(...)`-like call stands, at which level,
whether it prints once, and the format string it prints.

A start-up log says which file and line printed each record (`[cuda.py:492]`); this table is
what those pairs must match at the review's revision (srcreview.evidence.verify), and what
the evidence plan cites (srcreview.evidence.plan). Calls are read from the Index's function
facts (the IR bodies), never from a table of line numbers: a release that moves a call moves
its row. Format strings are literal when the source makes them so (a string, a concatenation
of strings); an f-string or a computed message is kept with no format (it matches any text).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from srcreview.core.errors import SourceUnavailable
from srcreview.index import ir
from srcreview.vllm.anchors import (
    BACKEND_ENUM,
    BACKEND_IMPL_METHOD,
    LOG_METHODS,
    LOG_SCOPE_DEFAULT,
    LOG_SCOPE_KEYWORD,
    LOGGER_NAME,
    ONCE_SUFFIX,
    PACKAGE_DIR,
)

_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[hlL]?[diouxXeEfFgGcrsa%]")


@dataclass(frozen=True)
class LogCall:
    """One logger call of the tree: `path:line` is what vLLM's log prefix prints for it."""

    path: str
    line: int
    end_line: int
    level: str  # DEBUG, INFO, WARNING, ERROR, CRITICAL
    once: bool
    scope: str  # for once calls: local, global or process (LOG_SCOPES)
    format: str | None  # None: not a literal (an f-string, a computed message)
    function: str  # module-relative qualname of the function it is called in
    method: str = ""  # the logger method as the call writes it (`info_once`)

    @property
    def file(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @cached_property
    def _patterns(self) -> tuple[re.Pattern, re.Pattern | None] | None:
        if self.format is None:
            return None
        first = self.format.split("\n", 1)[0]
        pieces = _SPEC.split(first)
        specs = _SPEC.findall(first)
        body = "".join(re.escape(p) + ("(.*?)" if n < len(specs) and specs[n] != "%%" else
                                       ("%" if n < len(specs) else ""))
                       for n, p in enumerate(pieces))
        full = re.compile(body, re.S)
        # an argument may hold a newline: its message's first line then ends inside it
        last = max((n for n, s in enumerate(specs) if s != "%%"), default=None)
        head = None
        if last is not None:
            head_body = "".join(re.escape(p) + ("(.*?)" if specs[n] != "%%" else "%")
                                for n, p in enumerate(pieces[:last + 1]))
            head = re.compile(head_body + ".*", re.S)
        return full, head

    def match(self, message: str) -> tuple[str, ...] | None:
        """The arguments a record's first line shows for this call's format, or None when the
        line is not this format; a call with no literal format matches any line, with no argument."""
        patterns = self._patterns
        if patterns is None:
            return ()
        full, head = patterns
        found = full.fullmatch(message) or (head.fullmatch(message) if head is not None else None)
        return None if found is None else tuple(found.groups())


def _format(expr) -> str | None:
    if isinstance(expr, ir.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ir.BinOp) and expr.op == "+":
        left, right = _format(expr.left), _format(expr.right)
        return None if left is None or right is None else left + right
    return None


def _scope(call: ir.Call) -> str:
    value = call.keyword(LOG_SCOPE_KEYWORD)
    if isinstance(value, ir.Constant) and isinstance(value.value, str):
        return value.value
    return LOG_SCOPE_DEFAULT if value is None else "unknown"


CALL_SPAN = 4  # lines between `logger.info(` and the format literal it is given (black's layout)


def calls_in_module(index, path: str, lines: frozenset[int] | None = None) -> tuple[LogCall, ...]:
    """Every logger call in the functions of one module, in line order (a module the Index cannot
    read has none); with `lines`, only in the functions whose lines hold one of them (a body is
    converted to IR only when read: the rest stay unread). A fact of the tree: computed once per
    Index, not once per recipe."""
    from srcreview.index.cache import reuse_enabled
    from srcreview.vllm.runtime import _memo

    if not reuse_enabled():
        return _calls_in_module(index, path, lines)
    key = f"log_calls:{path}:{','.join(map(str, sorted(lines))) if lines is not None else '*'}"
    return _memo(index, key, lambda: _calls_in_module(index, path, lines))


def _calls_in_module(index, path: str, lines: frozenset[int] | None) -> tuple[LogCall, ...]:
    try:
        facts = index.module(path)
    except SourceUnavailable:
        return ()
    seen: dict[int, LogCall] = {}
    for qualname, function in sorted(facts.functions.items()):
        if lines is not None and not any(function.start_line <= n <= function.end_line for n in lines):
            continue
        for call in ir.iter_calls(function.body):
            func = call.func
            if not (isinstance(func, ir.Attr) and func.attr in LOG_METHODS):
                continue
            receiver = ir.dotted(func.value)
            if receiver is None or receiver.rsplit(".", 1)[-1] != LOGGER_NAME:
                continue
            if call.line in seen:  # a nested function's body is walked from its parent too
                continue
            once = func.attr.endswith(ONCE_SUFFIX)
            fmt = _format(call.args[0]) if call.args else None
            seen[call.line] = LogCall(path=path, line=call.line, end_line=call.end_line, level=LOG_METHODS[func.attr],
                                      once=once, scope=_scope(call) if once else "process", format=fmt,
                                      function=qualname, method=func.attr)
    return tuple(sorted(seen.values(), key=lambda c: c.line))


def calls_of_function(index, qualname: str) -> tuple[LogCall, ...]:
    """The logger calls in one function (suffix of its qualname, as Index.find takes it)."""
    info = index.function(qualname)
    if info is None:
        return ()
    lines = frozenset(range(info.facts.start_line, info.facts.end_line + 1))
    return tuple(c for c in calls_in_module(index, info.symbol.path, lines)
                 if c.function == info.facts.qualname or c.function.startswith(info.facts.qualname + "."))


def calls_with_format(index, fmt: str, prefix: str = PACKAGE_DIR) -> tuple[LogCall, ...]:
    """The logger calls whose format starts with `fmt`, located by a raw-text search of its first
    words (a format split over string literals is found by its head)."""
    # where they are is a fact of the tree, kept with its other raw-text answers: a later review
    # reads only the functions at those lines
    key = f"{CALLS_KEY}\0{prefix.strip('/')}\0{fmt}"
    sites = index.remembered(key, lambda: [f"{c.path}:{c.line}" for c in _find_with_format(index, fmt, prefix)])
    found = []
    for path, lines in _by_path(sites).items():
        found += [c for c in calls_in_module(index, path, lines) if c.line in lines]
    return tuple(sorted(found, key=lambda c: (c.path, c.line)))


CALLS_KEY = "log-calls-v2"  # the key of calls_with_format's answers in the Index's raw-text cache


def _by_path(sites: list[str]) -> dict[str, frozenset[int]]:
    out: dict[str, set[int]] = {}
    for site in sites:
        path, _, line = site.rpartition(":")
        out.setdefault(path, set()).add(int(line))
    return {path: frozenset(lines) for path, lines in out.items()}


def _find_with_format(index, fmt: str, prefix: str) -> list[LogCall]:
    head = fmt.split("%", 1)[0].split("\n", 1)[0].strip() or fmt
    needle, logger = head.encode(), LOGGER_NAME.encode()
    # the format's longest word past its head: a call whose literal is split over several
    # strings still has it within a few lines of the head
    words = [w for w in re.findall(r"[A-Za-z_]{4,}", fmt[len(head):]) if w not in ("self",)]
    word = max(words, key=len).encode() if words else None
    found = []
    for path in index.grep(head, prefix=prefix):
        text = index.raw_text(path).splitlines()
        # a line holding the head within a few lines of the logger it is passed to (and of the
        # format's word): only the modules and functions around those lines are read (a common
        # head such as "Using" is everywhere; parsing every file holding it cost seconds cold)
        lines = frozenset(n for n, line in enumerate(text, 1)
                          if needle in line and any(logger in t for t in text[max(0, n - 1 - CALL_SPAN):n])
                          and (word is None or any(word in t for t in text[n - 1:n + CALL_SPAN])))
        if lines:
            found += [c for c in calls_in_module(index, path, lines)
                      if c.format is not None and c.format.startswith(fmt)]
    return found


def file_matches(token: str, path: str, package: str = PACKAGE_DIR) -> bool:
    """Whether the file a log prefix names (a basename; under DEBUG a path relative to the package
    with `...` for the middle) is this tree path."""
    if "/" not in token:
        return path.rsplit("/", 1)[-1] == token
    parts = path[len(package):].split("/") if path.startswith(package) else path.split("/")
    if "..." in token.split("/"):
        head, _, tail = token.partition("/.../")
        heads, tails = head.split("/"), tail.split("/")
        return (len(parts) >= len(heads) + len(tails) and parts[:len(heads)] == heads
                and parts[-len(tails):] == tails)
    return parts == token.split("/")


class LogTable:
    """The logger calls of the tree files a log names, built only for those files (a log names a
    few dozen of the tree's two thousand modules)."""

    MAX_FILES = 400  # distinct file names looked up; a log naming more is not vLLM's

    def __init__(self, index, prefix: str = PACKAGE_DIR):
        self.index = index
        self.prefix = prefix
        self._by_token: dict[str, dict[int, list[LogCall]]] = {}
        self._paths: dict[str, tuple[str, ...]] = {}

    def paths_for(self, token: str) -> tuple[str, ...]:
        if token not in self._paths:
            base = token.rsplit("/", 1)[-1]
            self._paths[token] = tuple(p for p in self.index.python_files(self.prefix)
                                       if p.rsplit("/", 1)[-1] == base and file_matches(token, p, self.prefix))
        return self._paths[token]

    def calls_at(self, token: str, line: int) -> list[LogCall]:
        """The calls of every tree file the token may name whose call starts at `line`."""
        if token not in self._by_token:
            if len(self._by_token) >= self.MAX_FILES:
                return []
            table: dict[int, list[LogCall]] = {}
            for path in self.paths_for(token):
                for call in calls_in_module(self.index, path):
                    table.setdefault(call.line, []).append(call)
            self._by_token[token] = table
        return self._by_token[token].get(line, [])


def impl_backends(index) -> dict[str, tuple[str, ...]]:
    """Attention impl class name -> the backend enum members whose class returns it from
    `get_impl_cls`: what the loader's structure print (`backend=TritonAttentionImpl`) names."""
    enum = index.class_info(BACKEND_ENUM)
    if enum is None or enum.enum_members is None:
        return {}
    found: dict[str, list[str]] = {}
    for name, value in enum.enum_members:
        if not isinstance(value, str) or "." not in value:
            continue
        info = index.class_info(value)
        method = info.methods.get(BACKEND_IMPL_METHOD) if info is not None else None
        function = index.function(method.qualname) if method is not None else None
        if function is None:
            continue
        for stmt in ir.iter_statements(function.facts.body):
            if isinstance(stmt, ir.Return) and isinstance(stmt.value, (ir.Name, ir.Attr)):
                impl = ir.dotted(stmt.value)
                if impl:
                    found.setdefault(impl.rsplit(".", 1)[-1], []).append(name)
    return {impl: tuple(sorted(set(names))) for impl, names in sorted(found.items())}


def unique(calls: Iterable[LogCall]) -> tuple[LogCall, ...]:
    return tuple(sorted(set(calls), key=lambda c: (c.path, c.line)))
