"""flag-exists: the command-line flag of a top-level recipe key is registered by the parser."""

from __future__ import annotations

from srcreview.checks import CheckContext, CheckResult, Params, short, stale
from srcreview.checks._ir import call_name, iter_calls

OUTCOMES = ("registered", "not-registered", "not-applicable", "undecided")
UNDECIDED_OUTCOMES = ("not-applicable", "undecided")


class Params(Params):  # noqa: F811
    parser: str = "EngineArgs.add_cli_args"


def run(ctx: CheckContext, params: Params, setting) -> CheckResult:
    if "." in setting.key:
        return CheckResult("not-applicable")
    flags = ctx.memoized(f"flags:{params.parser}", lambda: _flags(ctx, params.parser))
    if flags is None:
        return stale([params.parser])
    flag = "--" + setting.key.replace("_", "-")
    details = {"key": setting.key, "flag": flag}
    if flag in flags:
        return CheckResult("registered", evidence=(flags[flag],), details=details, symbols=(params.parser, flag))
    return CheckResult("not-registered", details=details, symbols=(params.parser, flag),
                       tags=("dynamic-registration",),
                       reason=f"no add_argument({flag!r}) in {params.parser}")


def _flags(ctx, parser):
    found = ctx.index.find(parser, kind="function")
    if not found:
        return None
    out = {}
    for symbol in found:
        fn = ctx.index.function(symbol.qualname)
        for call in iter_calls(fn.facts.body if fn else ()):
            if (call_name(call) or "").endswith("add_argument"):
                for arg in call[4]:
                    if arg[0] == "const" and isinstance(arg[3], str) and arg[3].startswith("--"):
                        out.setdefault(arg[3], ctx.anchor(symbol.path, call[1], call[2], arg[3],
                                                          f"{short(symbol.qualname)} registers {arg[3]}"))
    return out
