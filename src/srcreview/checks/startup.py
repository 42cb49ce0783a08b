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
from srcreview.vllm.construction import depends_on, open_order, open_site, raise_symbol, site_text

if TYPE_CHECKING:
    from srcreview.interp.interpreter import Analyzer

OUTCOMES = ("rejected", "undecided", "none-found")
UNDECIDED_OUTCOMES = ("undecided", "none-found")
SHOWN = 5  # open raises named in a finding (the review's start-up line counts them all)


class Details(TypedDict, total=False):
    """The values this kind's claims may name ({key} in a rule's text)."""

    raises: str
    hooks: str
    count: int


class Params(BaseParams):
    pass


def run(ctx: CheckContext, params: Params, subject=None) -> CheckResult:
    construction = cast("Analyzer", ctx.analyzer).prepare()  # the engine gives every check its analyzer
    if not construction.rejections and construction.open_raises:
        return _undecided(ctx, construction)
    if not construction.rejections:
        return CheckResult("none-found", reason="no raise is reachable under the recipe on the walked path while the "
                                                "config is built")
    evidence, hops, texts, symbols = [], [], [], []
    for rejection in construction.rejections:
        event = rejection.raise_event
        fn = short(rejection.function)
        call = ctx.anchor(rejection.path, event.line, event.end_line, fn.split(".")[-1],
                          f"{fn} raises here under the recipe" if not event.chain else f"{fn} calls a function "
                          "that raises on every path under the recipe")
        evidence.append(call)
        hops.append(Hop(kind="call", text=f"{fn}: {event.text}", anchor=call))
        for qualname, path, line, end, text in event.chain:
            anchor = ctx.anchor(path, line, end, raise_symbol(text), f"raises: {text}")
            evidence.append(anchor)
            hops.append(Hop(kind="sink", text=f"{short(qualname)} raises {text}", anchor=anchor))
            symbols.append(short(qualname))
        texts.append(_readable(event.text))
        symbols.append(fn)
    details: Details = {"raises": "; ".join(dict.fromkeys(texts)),
                        "hooks": ", ".join(short(h) for h in construction.hooks)}
    return CheckResult("rejected", evidence=tuple(evidence), trace=tuple(hops), details=details,
                       symbols=tuple(dict.fromkeys(symbols)))


def _readable(text: str) -> str:
    """A raise's text for a message: an exception whose message is computed is named by its type
    (each alternative of "one of ..." on its own)."""
    if text.startswith("one of "):
        return "one of " + "; ".join(_readable(part) for part in text[len("one of "):].split("; "))
    return text.split("(")[0] if "<" in text or text.endswith("(None)") else text


def _undecided(ctx: CheckContext, construction) -> CheckResult:
    """Raises reached under conditions the recipe does not decide: start-up is undecided. The
    finding names the first few (by file and line) and what each depends on."""
    evidence, texts, symbols, opened = [], [], [], []
    for rejection in sorted(construction.open_raises, key=open_order)[:SHOWN]:
        event = rejection.raise_event
        fn = short(rejection.function)
        path, line, end = open_site(rejection)
        evidence.append(ctx.anchor(path, line, end, raise_symbol(site_text(rejection)),
                                   f"may raise {_readable(site_text(rejection))}: a condition on the way is not "
                                   "decided by the recipe"))
        opened.append(f"{fn} may raise {_readable(event.text)} ({path}:{line}) if {depends_on(event)}")
        texts.append(_readable(event.text))
        symbols.append(fn)
    count = len(construction.open_raises)
    details: Details = {"raises": "; ".join(dict.fromkeys(texts)), "count": count,
                        "hooks": ", ".join(short(h) for h in construction.hooks)}
    return CheckResult("undecided", evidence=tuple(evidence), details=details, open=tuple(opened),
                       reason=f"{count} raise{'s' if count != 1 else ''} on the start-up path "
                              f"depend{'s' if count == 1 else ''} on what the recipe does not say",
                       symbols=tuple(dict.fromkeys(symbols)))

