"""The two front ends of the IR builder give the same facts: srcreview.index.builder.ast_front
(Python's `ast`, the fast path every module goes through first) and srcreview.index.builder.cst_front
(libcst, the reference and the fallback). Lines, texts, values and IR are compared field by field (dataclass equality,
function bodies included): on the constructs where the two parsers disagree about positions or
text (a tuple's or generator's parentheses, an `if`/`for` with `else`, continuation lines in
brackets, one-line suites, `;`), on every fixture tree, and on the real vLLM modules a review
reads (every module of whole releases with `-m releases`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from srcreview.index import ir
from srcreview.index.builder.ast_front import NotTaken
from srcreview.index.builder.ast_front import extract as extract_ast
from srcreview.index.builder.cst_front import extract as extract_cst

ROOT = Path(__file__).resolve().parent.parent.parent

TRICKY = '''\
"""Module docstring."""
from __future__ import annotations
import os.path as osp, sys
from . import sibling
from ..pkg.mod import (
    a as b,  # comment
    c,
)
from .star import *

X = 1; Y: int = (2)
Z = (  # why
    "a" "b",
    f"{X!r:>{Y}}" "tail",
)
if sys.version_info >= (3, 11): FAST = True
if os.environ.get("A"):
    A = 1
elif os.environ.get("B"):
    A = 2
else:
    A = 3
if TYPE_CHECKING:
    from x import Y
else:
    if X:
        B = 1
    else:
        B = 2
try:
    import torch
except ImportError: torch = None
else:
    HAVE = True
finally:
    DONE = True
with open(osp.join("a", "b")) as fh:
    DATA = fh.read()
COMPLEX = 1j + 0o17 + 1_000 + 1.5e3
TABLE = {"k": (1, 2), **{"m": [3]}, "n": {4, 5}}
BYTES = b"x" b"y"
LONG = f"""a
{X}
b"""
TEXT = call(
    first,
    """keep
    this indentation""",
)


@decorator(
    arg=(1, 2),
)
class Config(Base[int], metaclass=Meta, **extra):
    """Doc
       string."""

    field: Literal["a", "b"] = "a"
    """The field's own docstring."""
    other: (int | None) = field(
        default=None,
        repr=False,
    )
    x = y = 3; z = 4
    if TYPE_CHECKING:
        hidden: int = 0

        def typed(self) -> int: ...
    class Inner: pass

    def __init__(self, a: int = (1), /, b=(x for x in y), *args, c: "str" = "s", **kw) -> None:
        self.a = a
        self.b: list[int] = [*args]
        self.c, self.d = c, kw
        del self.x, self.y
        del (self.z)

    async def run(self):
        async with lock:
            await go()
        async for item in stream():
            yield item
        yield from other()

    @property
    def prop(self):
        return (
            self.a
            and self.b
            and (self.c or self.d)
        )


def walk(items, /, *, key=lambda v, *rest, k=1: v):
    import json
    from .. import up
    total = 0
    for i, (a, b) in enumerate(items):
        if a: continue
        elif b:
            break
        else:
            total += a; total -= b
    else:
        total = -1
    while total > 0:
        total -= 1
    else:
        pass
    with (
        open("x") as f,
        open("y") as g,
    ):
        pass
    with (ctx()):
        pass
    with ctx() as (
        p,
        q,
    ):
        pass
    try:
        pass
    except (ValueError, TypeError) as exc:
        raise RuntimeError("x") from exc
    try:
        pass
    except* OSError:
        pass
    match total:
        case 0:
            return None
        case [x, *rest] if x:
            return rest
        case {"k": v}:
            return v
        case _:
            pass
    assert (
        total >= 0
    ), "message"
    values = sum(
        x for x in items if x
    )
    picked = items[1:2, ::3][(0, 1)][0, 1][()][a, ]
    (n := len(items))
    result = [x * 2 for x in items if x] + list({k: v for k, v in items}) + list({x for x in items})
    global GLOBAL
    s = "a" + \\
        "b"
    cond = (a if b else
            c)
    message = f"{n=} {'q'!s}" f"""{n}"""
    def inner():
        nonlocal total
        class Local:
            attr: int = 1
        return Local
    return not -n, ~n, +n, n @ n, n ** 2, n // 2, n << 1, a is not b, a not in b, *items
'''


def _same(source: bytes, module: str = "pkg.mod", path: str = "pkg/mod.py", *, taken: bool = True) -> None:
    """Both extractors give equal facts; with `taken=False`, `ast` may leave the module to libcst
    (the index then extracts it with libcst: the same facts by definition)."""
    reference = extract_cst(source, module, path, "blob")
    try:
        fast = extract_ast(source, module, path, "blob")
    except NotTaken:
        assert not taken
        return
    assert reference.parse_error is None, reference.parse_error
    for name in ("imports", "constants", "classes", "all_names"):
        assert getattr(fast, name) == getattr(reference, name), name
    assert list(fast.functions) == list(reference.functions)
    for name, function in reference.functions.items():
        assert fast.functions[name] == function, name
    assert fast == reference


def test_tricky_constructs_give_the_same_facts():
    facts = extract_ast(TRICKY.encode(), "pkg.mod", "pkg/mod.py", "blob")
    assert "walk.<locals>.inner" in facts.functions and facts.classes["Config"].docstring == "Doc\nstring."
    _same(TRICKY.encode())


def test_windows_line_endings_and_a_package_give_the_same_facts():
    _same(TRICKY.replace("\n", "\r\n").encode(), "pkg", "pkg/__init__.py")


def test_indented_module_blocks_keep_their_texts():
    source = b"if X:\n    VALUE = dict(\n        a=1,\n    )\n    def f(a=(\n        1)):\n        pass\n"
    _same(source)


@pytest.mark.parametrize("source", [
    b"# -*- coding: latin-1 -*-\nNAME = '\xe9'\n",  # another encoding
    b"\xef\xbb\xbfNAME = 1\n",  # a byte-order mark
    b"def f(:\n",  # a syntax error: libcst reports it
    b"NAME = '\xff'\n",  # not UTF-8
])
def test_what_ast_does_not_take_is_left_to_libcst(source):
    with pytest.raises(NotTaken):
        extract_ast(source, "pkg.mod", "pkg/mod.py", "blob")


def test_a_module_left_to_libcst_gets_the_facts_ast_would_give():
    """The fallback end to end (srcreview.index.builder.extract_facts): the tricky module declared
    Latin-1, which `ast`'s front end leaves to libcst, has the facts of the same module in UTF-8
    read through `ast`: classes, constants, imports, every body, lines and texts."""
    from srcreview.index.builder import extract_facts

    text = TRICKY.replace('"a" "b"', '"\u00e9" "b"')
    latin = ("# -*- coding: latin-1 -*-\n" + text).encode("latin-1")
    utf8 = ("# -*- coding: utf-8 -*-\n" + text).encode()
    with pytest.raises(NotTaken):
        extract_ast(latin, "pkg.mod", "pkg/mod.py", "blob")
    fallback = extract_facts(latin, "pkg.mod", "pkg/mod.py", "blob")
    fast = extract_facts(utf8, "pkg.mod", "pkg/mod.py", "blob")
    assert fallback.parse_error is None and fallback.constants["Z"].value[0] == "\u00e9b"
    assert list(fallback.functions) == list(fast.functions) and fallback == fast


def test_a_class_opening_with_an_f_string_concatenation_has_no_docstring_through_either_parser():
    """libcst evaluates `"a" f"{b}"` to None: no docstring (the libcst extractor used to crash on it)."""
    source = b'class C:\n    "a" f"{b}"\n    x = 1\n'
    assert extract_cst(source, "pkg.mod", "pkg/mod.py", "blob").classes["C"].docstring is None
    _same(source)


def test_a_module_with_except_star_gets_its_facts_through_libcst_on_every_python():
    """Python 3.10 does not parse `except*` (its `ast` has no TryStar): such a module is left to
    libcst, whose conversion must not name ast.TryStar there (it did: an AttributeError). The
    shared builder reads `try`/`except*` as a `try` either way."""
    source = (b"try:\n    X = 1\nexcept* ValueError:\n    X = 2\n\n"
              b"def f():\n    try:\n        return 1\n    except* OSError:\n        raise\n")
    facts = extract_cst(source, "pkg.mod", "pkg/mod.py", "blob")
    assert facts.parse_error is None and facts.constants["X"].start_line == 2 and facts.constants["X"].reassigned
    [stmt] = facts.functions["f"].body
    assert isinstance(stmt, ir.Try) and (stmt.line, stmt.end_line) == (7, 10)
    assert [(h.line, h.end_line) for h in stmt.handlers] == [(9, 10)]
    if sys.version_info >= (3, 11):
        _same(source)


def test_every_fixture_module_gives_the_same_facts():
    files = sorted((ROOT / "fixtures").rglob("*.py"))
    assert len(files) > 50
    for path in files:
        _same(path.read_bytes(), "fixture", path.relative_to(ROOT).as_posix(), taken=False)


def _release_tree(version: str) -> Path:
    base = Path(os.environ.get("SRCREVIEW_CACHE") or Path.home() / ".cache" / "srcreview") / "registry"
    found = sorted(base.glob(f"{version}-*/tree"))
    if not found:
        pytest.skip(f"vLLM {version} is not in the cache (srcreview fetch --rev {version})")
    return found[0]


@pytest.mark.network
def test_the_modules_a_review_reads_give_the_same_facts():
    """The modules a review of the 0.29.0 example recipe parses (the config, the runners, the
    speculators, the loaders, the attention backends), each compared."""
    tree = _release_tree("0.29.0")
    prefixes = ("vllm/config/", "vllm/engine/arg_utils.py", "vllm/v1/worker/gpu/", "vllm/v1/worker/gpu_model_runner.py",
                "vllm/v1/spec_decode/", "vllm/model_executor/model_loader/", "vllm/v1/attention/", "vllm/envs.py",
                "vllm/platforms/")
    files = sorted(p for p in tree.rglob("*.py") if p.relative_to(tree).as_posix().startswith(prefixes))
    assert len(files) > 80
    for path in files:
        rel = path.relative_to(tree).as_posix()
        _same(path.read_bytes(), rel[:-3].replace("/", "."), rel, taken=False)


@pytest.mark.releases
@pytest.mark.parametrize("version", ["0.25.0", "0.29.0", "0.33.0"])
def test_whole_releases_give_the_same_facts(version):
    tree = _release_tree(version)
    for path in sorted((tree / "vllm").rglob("*.py")):
        rel = path.relative_to(tree).as_posix()
        _same(path.read_bytes(), rel[:-3].replace("/", "."), rel, taken=False)
