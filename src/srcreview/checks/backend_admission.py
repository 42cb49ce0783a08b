"""backend-admission: whether the attention selector admits the backend a recipe names.

Asks srcreview.vllm.backends for the backend class the registry Enum names: its
`validate_configuration` (as overridden along the class's MRO) walked with what the selector
and the platform pass under the recipe (the device capability from `[hardware]`). With `part`
(a predicate such as `supports_kv_cache_dtype`), only the tests that ask it count. A refusal
is a test decided on a path the recipe decides; what the model's layers pass (head size,
dtype, MLA-ness) stays open, so an admission rests on it.
"""

from __future__ import annotations

from srcreview.checks import CheckContext, CheckResult, Params, short, stale
from srcreview.checks._backend import backend_class
from srcreview.checks._common import dedupe
from srcreview.core.templates import fill
from srcreview.model.findings import Hop
from srcreview.vllm.anchors import ATTN_SELECTOR, BACKEND_VALIDATE

OUTCOMES = ("admits", "refuses", "undecided")
UNDECIDED_OUTCOMES = ("undecided",)


class Params(Params):  # noqa: F811
    enum: str  # the registry Enum whose member names the backend class
    member: str  # template of the member, e.g. "{attention_backend}"
    part: str | None = None  # only the tests asking this predicate (e.g. "supports_kv_cache_dtype")


def anchors(params: Params) -> list[str]:
    return [ATTN_SELECTOR]


def run(ctx: CheckContext, params: Params, subject=None) -> CheckResult:
    from srcreview.vllm.backends import admission

    member = str(fill(params.member, ctx.template_values))
    info, enum_anchor, missing, reason = backend_class(ctx, params.enum, member)
    if missing:
        return stale(missing)
    if info is None:
        return CheckResult("undecided", reason=reason, tags=("unresolved-type",), open=(reason,))
    found = admission(ctx.index, ctx.bindings, member)
    cls = info.symbol.local
    evidence = [enum_anchor] if enum_anchor is not None else []
    hops = [Hop(kind="field", text=enum_anchor.role, anchor=enum_anchor)] if enum_anchor is not None else []
    details = {"class": cls, "capability": ctx.template_values.get("hardware.compute_capability"),
               "part": params.part or BACKEND_VALIDATE}
    if found.cls is None or found.cls != info.qualname:
        why = found.reason or f"the selector's verdict on {cls} could not be obtained"
        return CheckResult("undecided", evidence=tuple(evidence), trace=tuple(hops), details=details,
                           tags=("unresolved-type",), reason=why, open=(why,), symbols=(cls,))
    tests = [t for t in found.tests if params.part is None or params.part in t.asks]
    if params.part is None:
        outcome = found.verdict
    elif any(t.outcome == "refuses" for t in tests):
        outcome = "refuses"
    elif tests and all(t.outcome == "passes" for t in tests):
        outcome = "admits"
    else:
        outcome = "undecided"
    # the proof: the tests that refuse, or (an admission) every test passed; an open verdict shows none
    shown = [t for t in tests if t.outcome == {"refuses": "refuses", "admits": "passes"}.get(outcome)]
    context = [a for a in found.evidence if a.role.endswith("the platform asks it") or "selector" in a.role]
    decisive = [a for t in shown for a in (t.anchor, *t.because)]
    if outcome == "refuses" and found.raises and found.raise_anchor is not None:
        decisive.append(found.raise_anchor)
    evidence = decisive + evidence + context  # what decides first: the test, the override, the raise
    for t in shown:
        hops.append(Hop(kind="branch", text=t.anchor.role, anchor=t.anchor))
        hops += [Hop(kind="call", text=a.role, anchor=a) for a in t.because]
    reasons = [r for t in shown if t.outcome == "refuses" for r in t.reasons]
    because = [a.role for t in shown for a in t.because]
    details["reasons"] = "; ".join(dict.fromkeys(reasons)) or "none"
    details["because"] = "; ".join(dict.fromkeys(because)) or "its tests decide it directly"
    details["arguments"] = ", ".join(f"{k}={v}" for k, v in found.arguments if v != "open")
    if outcome == "refuses":
        if found.raises and found.raise_anchor is not None:
            hops.append(Hop(kind="call", text=found.raise_anchor.role, anchor=found.raise_anchor))
            details["consequence"] = "The platform raises for an explicitly selected backend it refuses: start-up fails"
        else:
            details["consequence"] = ("The platform was not shown to raise for a refused explicit backend: "
                                      "it may fall back to another backend")
        return CheckResult("refuses", evidence=dedupe(evidence, by_role=True), trace=tuple(hops), details=details,
                           symbols=(f"{cls}.{params.part or BACKEND_VALIDATE}",))
    open_ = tuple(found.open) if params.part is None else tuple(
        t.anchor.role.replace("`", "") for t in tests if t.outcome == "open")
    if outcome == "admits":
        return CheckResult("admits", evidence=dedupe(evidence, by_role=True), trace=tuple(hops), details=details,
                           symbols=(f"{cls}.{params.part or BACKEND_VALIDATE}",))
    why = ("; ".join(open_) if open_ else
           f"no test of {short(found.cls)}.{BACKEND_VALIDATE} asks {params.part} on a path the recipe decides")
    details["open"] = why
    tags = ("model-config-unknown",) if "model" in why else ("runtime-branch",)
    return CheckResult("undecided", evidence=dedupe(evidence, by_role=True), trace=tuple(hops), details=details,
                       tags=tags, reason=why, open=open_ or (why,), possible=("admits", "refuses"),
                       symbols=(f"{cls}.{params.part or BACKEND_VALIDATE}",))
