"""What `vllm serve`'s parser does to the command line before argparse sees it, read from the
pinned tree.

`FlexibleArgumentParser.parse_args` (vllm/utils/argparse_utils.py at 0.29.0 and 0.33.0)
rewrites argv: `--max_model_len` becomes `--max-model-len` (underscores between `--` and the
first `.`), `-O3` / `-O=3` / `-O 3` become `--optimization-level 3`, every dotted argument
(`--compilation-config.pass_config.x=v`, `-cc.x=v`, `-cc.custom_ops+=a,b`) is taken out, its
value read as JSON (else a human-readable int, else the text), merged per written key and
appended at the end as `<key> <json>` (so it replaces a JSON value given to the same flag),
and `--model X` moves to the positional model. Then argparse itself takes a unique prefix of a
long option for the option (`--tensor-parallel 4`), unless the parser is built with
`allow_abbrev=False`: abbreviations are assumed only where no module of the package passes that
keyword. Each of these is recognised in the pinned
method's own statements; what is not found there is not assumed (`ParserForms.missing`), and
the flag mapping leaves such arguments open instead of calling them unknown.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field

from srcreview.core.errors import DataError
from srcreview.vllm.anchors import ARGV_PARSER as PARSER
from srcreview.vllm.anchors import CLI_PACKAGE

ABBREV_KEYWORD = "allow_abbrev"  # argparse's own keyword: where the tree passes it, abbreviations are not assumed


@dataclass(frozen=True)
class ParserForms:
    where: str = ""  # path:line of parse_args, "" when the tree has none we can read
    source: str = ""  # path:start-end of parse_args
    underscores: bool = False
    optimization_flag: str | None = None  # what -O<level> becomes
    optimization_levels: frozenset = frozenset()  # the levels `-O <n>` (two words) accepts
    dotted: bool = False
    dotted_json: bool = False  # a dotted value is read as JSON first
    dotted_human_int: bool = False  # then as a human-readable int (1k, 80g)
    list_suffix: str | None = None  # `-cc.custom_ops+ a,b`
    model_option: bool = False  # `--model X` is the served model
    abbreviations: bool | None = None  # argparse's prefix matching: True, or None when not settled
    missing: tuple[str, ...] = field(default=())

    @property
    def found(self) -> bool:
        return bool(self.where)


def parser_forms(index) -> ParserForms:
    """The rewrites the revision's `parse_args` makes (see the module doc); memoized per index."""
    if index not in _MEMO:
        _MEMO[index] = _read(index)
    return _MEMO[index]


_MEMO: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _read(index) -> ParserForms:
    from srcreview.index import ir

    try:
        symbols = index.find(PARSER, kind="function")
    except DataError:
        symbols = []
    if len(symbols) != 1:
        why = "not found" if not symbols else "defined more than once"
        return ParserForms(missing=(f"{PARSER} is {why} at this revision",), abbreviations=_abbreviations(index))
    symbol = symbols[0]
    fn = index.function(symbol.qualname)
    if fn is None:
        return ParserForms(missing=(f"{PARSER} cannot be read",), abbreviations=_abbreviations(index))
    tests: list[tuple[str, tuple]] = []
    constants: set[str] = set()
    calls: list[str] = []
    for stmt in ir.iter_statements(fn.facts.body):
        if isinstance(stmt, ir.If):
            tests.append((ir.text(stmt.test, 400), stmt.body))
        for expr in ir.iter_exprs(stmt):
            if isinstance(expr, ir.Constant) and isinstance(expr.value, str):
                constants.add(expr.value)
            if isinstance(expr, ir.Call):
                calls.append(ir.text(expr, 200))

    def body_constants(body) -> list[str]:
        out = []
        for stmt in ir.iter_statements(body):
            for expr in ir.iter_exprs(stmt):
                if isinstance(expr, ir.Constant) and isinstance(expr.value, str):
                    out.append(expr.value)
        return out

    optimization = None
    levels: frozenset = frozenset()
    dotted = json_values = human = False
    suffix = None
    for test, body in tests:
        if re.search(r"startswith\('-O'\)", test):
            optimization = next((c for c in body_constants(body) if c.startswith("--")), optimization)
        spaced = re.search(r"== '-O'\).*in \{([^}]*)\}", test)
        if spaced:
            levels = frozenset(re.findall(r"'([^']*)'", spaced.group(1)))
        if re.search(r"startswith\('-'\)", test) and "'.' in" in test:
            dotted = True
            inner = {ir.dotted(c.func) or "" for c in ir.iter_calls(body)}
            json_values = "json.loads" in inner
            human = any(name.split(".")[-1] == "human_readable_int" for name in inner)
        if re.search(r"endswith\('\+'\)", test):
            suffix = "+"
    underscores = "(?<=--)[^\\.]*" in constants and any(c.startswith("pattern.sub(") for c in calls) \
        and any(_replaces_underscores(index, symbol.module, s) for s in ir.iter_statements(fn.facts.body)
                if isinstance(s, ir.Def))
    missing = []
    if optimization is None:
        missing.append("no -O rewrite found in it")
    if not dotted:
        missing.append("no dotted-argument rewrite found in it")
    if not underscores:
        missing.append("no underscore-to-dash rewrite found in it")
    return ParserForms(where=f"{symbol.path}:{symbol.start_line}",
                       source=f"{symbol.path}:{symbol.start_line}-{symbol.end_line}", underscores=underscores,
                       optimization_flag=optimization, optimization_levels=levels, dotted=dotted,
                       dotted_json=json_values, dotted_human_int=human, list_suffix=suffix,
                       model_option="--model" in constants, abbreviations=_abbreviations(index),
                       missing=tuple(missing))


def diverting_flags(index) -> dict[str, str]:
    """Flags the `vllm` command looks for in `sys.argv` before any parser runs (`if "--omni"
    not in sys.argv: return False` at 0.33.0, which then hands the command to vLLM-Omni):
    flag -> "path:line" of the test. A recipe using one is not served by the code reviewed."""
    from srcreview.index import ir

    cache = _DIVERTING.setdefault(index, {})
    if "flags" in cache:
        return cache["flags"]
    found: dict[str, str] = {}
    try:
        paths = index.grep("sys.argv", prefix=CLI_PACKAGE)
    except DataError:
        paths = []
    for path in paths:
        facts = index.module(path, allow_unparsable=True)
        for fn in facts.functions.values():
            for stmt in ir.iter_statements(fn.body):
                for expr in ir.iter_exprs(stmt):
                    if (isinstance(expr, ir.Compare) and len(expr.ops) == 1 and expr.ops[0] in ("in", "not in")
                            and isinstance(expr.left, ir.Constant) and isinstance(expr.left.value, str)
                            and expr.left.value.startswith("-") and ir.dotted(expr.comparators[0]) == "sys.argv"):
                        found.setdefault(expr.left.value, f"{path}:{expr.line}")
    cache["flags"] = found
    return found


_DIVERTING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _abbreviations(index) -> bool | None:
    """argparse matches unique prefixes of long options by default (`allow_abbrev=True`); where
    any module of the package passes `allow_abbrev`, which parser it applies to is not read, so
    abbreviations are not settled (None)."""
    try:
        return None if index.grep(ABBREV_KEYWORD) else True
    except DataError:
        return None


def _replaces_underscores(index, module: str, nested) -> bool:
    """Whether a function nested in parse_args rewrites `_` to `-` (its `repl` for `pattern.sub`)."""
    from srcreview.index import ir

    fn = index.function(f"{module}.{nested.qualname}")
    if fn is None:
        return False
    return any(isinstance(c.func, ir.Attr) and c.func.attr == "replace"
               and [a.value for a in c.args if isinstance(a, ir.Constant)] == ["_", "-"]
               for c in ir.iter_calls(fn.facts.body))
