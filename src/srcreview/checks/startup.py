"""startup: whether the engine refuses the recipe while it builds its config.

The config's post-init hooks and validators are walked once per recipe (srcreview.interp.
construction). A raise reached on the path the recipe decides (no undecided condition on the
way, no loop that may not run, no `try` that may catch it), directly or through a call that
raises on every path, means the engine stops at start-up: `rejected`, anchored on the raise.
No such raise is not proof that the recipe starts (`none-found`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict, cast

from srcreview.checks import CheckContext, CheckResult, short
from srcreview.checks import Params as BaseParams
from srcreview.model.findings import Hop

if TYPE_CHECKING:
    from srcreview.interp.interpreter import Analyzer

OUTCOMES = ("rejected", "none-found")
UNDECIDED_OUTCOMES = ("none-found",)


class Details(TypedDict, total=False):
    """The values this kind's claims may name ({key} in a rule's text)."""

    raises: str
    hooks: str


class Params(BaseParams):
    pass


def run(ctx: CheckContext, params: Params, subject=None) -> CheckResult:
    construction = cast("Analyzer", ctx.analyzer).prepare()  # the engine gives every check its analyzer
    if not construction.rejections:
        return CheckResult("none-found", reason="no raise is certain under the recipe while the config is built")
    evidence, hops, texts, symbols = [], [], [], []
    for rejection in construction.rejections:
        event = rejection.raise_event
        fn = short(rejection.function)
        call = ctx.anchor(rejection.path, event.line, event.end_line, fn.split(".")[-1],
                          f"{fn} raises here under the recipe" if not event.chain else f"{fn} calls a function "
                          "that raises on every path under the recipe")
        evidence.append(call)
        hops.append(Hop(kind="call", text=f"{fn}: {event.text}", anchor=call))
        for qualname, path, line, end in event.chain:
            anchor = ctx.anchor(path, line, end, short(qualname).split(".")[-1], f"raises: {event.text}")
            evidence.append(anchor)
            hops.append(Hop(kind="sink", text=f"{short(qualname)} raises {event.text}", anchor=anchor))
            symbols.append(short(qualname))
        texts.append(event.text.split("(")[0] if "<" in event.text else event.text)
        symbols.append(fn)
    details: Details = {"raises": "; ".join(dict.fromkeys(texts)),
                        "hooks": ", ".join(short(h) for h in construction.hooks)}
    return CheckResult("rejected", evidence=tuple(evidence), trace=tuple(hops), details=details,
                       symbols=tuple(dict.fromkeys(symbols)))
