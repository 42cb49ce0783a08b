"""flag-exists: the command-line flag of a top-level recipe key is registered by the parser."""

from __future__ import annotations

from typing import TypedDict

from srcreview.checks import CheckContext, CheckResult, short, stale
from srcreview.checks import Params as BaseParams
from srcreview.index import ir
from srcreview.index.ir import dotted, iter_calls
from srcreview.model.findings import Anchor
from srcreview.vllm.anchors import ENGINE_PARSER

OUTCOMES = ("registered", "not-registered", "not-applicable", "undecided")
UNDECIDED_OUTCOMES = ("not-applicable", "undecided")
VALUE_BLIND = True  # the answer never depends on the value: it runs on values the shell decides too


class Details(TypedDict, total=False):
    """The values this kind's claims may name ({key} in a rule's text)."""

    key: str
    flag: str


class Params(BaseParams):
    parser: str = ENGINE_PARSER


def run(ctx: CheckContext, params: Params, setting) -> CheckResult:
    if "." in setting.key:
        return CheckResult("not-applicable")
    flags = ctx.tree_memoized(f"flags:{params.parser}", lambda: _flags(ctx, params.parser))
    if flags is None:
        return stale([params.parser])
    flag = "--" + setting.key.replace("_", "-")
    details: Details = {"key": setting.key, "flag": flag}
    if flag in flags:
        return CheckResult("registered", evidence=(flags[flag],), details=details, symbols=(params.parser, flag))
    return CheckResult("not-registered", details=details, symbols=(params.parser, flag),
                       tags=("dynamic-registration",),
                       reason=f"no add_argument({flag!r}) in {params.parser}")


def _flags(ctx, parser):
    found = ctx.index.find(parser, kind="function")
    if not found:
        return None
    out: dict[str, Anchor] = {}
    for symbol in found:
        fn = ctx.index.function(symbol.qualname)
        for call in iter_calls(fn.facts.body if fn else ()):
            if (dotted(call.func) or "").endswith("add_argument"):
                for arg in call.args:
                    if isinstance(arg, ir.Constant) and isinstance(arg.value, str) and arg.value.startswith("--"):
                        out.setdefault(arg.value, ctx.anchor(symbol.path, call.line, call.end_line, arg.value,
                                                             f"{short(symbol.qualname)} registers {arg.value}"))
    return out
