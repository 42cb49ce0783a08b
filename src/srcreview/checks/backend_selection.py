"""backend-selection: which attention backend the platform selects when the recipe names none.

Asks srcreview.vllm.selection: the platform's priority list for the recipe (capability, KV
dtype, what the model's config decides) and each candidate's admission, in order. With
`expected` (a backend name), the outcome says whether that backend is the one selected: when
the choice stays open but the expected backend is not among the possible ones, the answer
holds (`possible`).
"""

from __future__ import annotations

from typing import Any, TypedDict

from srcreview.checks import CheckContext, CheckResult, Outcome, stale
from srcreview.checks import Params as BaseParams
from srcreview.checks._common import dedupe
from srcreview.core.tags import Tag
from srcreview.core.templates import fill
from srcreview.model.findings import Hop
from srcreview.vllm.anchors import ATTN_SELECTOR, PLATFORM_SELECTOR
from srcreview.vllm.startup_knobs import recipe_key

OUTCOMES = ("selects", "selects-other", "none-admitted", "undecided", "not-applicable")
UNDECIDED_OUTCOMES = ("undecided",)


class Details(TypedDict, total=False):
    """The values this kind's claims may name ({key} in a rule's text)."""

    selected: str
    capability: Any
    candidates: str
    refused: str
    effective: str
    how: str
    open: str


class Params(BaseParams):
    enum: str  # the registry Enum whose members the priority lists name
    expected: str | None = None  # template of a backend name: is it the one selected?
    field: str | None = None  # the config field naming the backend (e.g. AttentionConfig.backend): its declaration


def anchors(params: Params) -> list[str]:
    return [ATTN_SELECTOR]


def run(ctx: CheckContext, params: Params, subject=None) -> CheckResult:
    from srcreview.vllm.selection import UNREADABLE, selection

    if ctx.index.enum_members(params.enum) is None:
        return stale((params.enum,))
    declaration = None
    if params.field:
        from srcreview.checks._common import class_info, field_anchor, split_field

        cls_name, attr = split_field(params.field)
        info = class_info(ctx, cls_name)
        declared = info.field(attr) if info is not None else None
        if declared is None:
            return stale((params.field,))
        declaration = field_anchor(ctx, declared, f"declares {params.field} (default {declared.default})", info)
    found = selection(ctx.index, ctx.bindings)
    expected = str(fill(params.expected, ctx.template_values)).upper() if params.expected else None
    capability = ctx.template_values.get("hardware.compute_capability")
    details: Details = {"selected": found.selected or "undecided", "capability": capability,
               "candidates": _candidates(found), "refused": _refused(found), "effective": _effective(found)}
    details["how"] = _how(found, capability)
    evidence = dedupe(list(found.evidence) + ([declaration] if declaration is not None else []), by_role=True)
    hops = tuple(Hop(kind="branch" if "priority list" in a.role else "call", text=a.role, anchor=a)
                 for a in evidence[:6])
    symbols = (PLATFORM_SELECTOR, "priorities")
    if found.verdict == "not-applicable":
        details["how"] = f"the selector passes the platform {found.selected}, the backend the recipe names"
        if not expected:
            return CheckResult("not-applicable", reason=found.reason, details=details, symbols=symbols)
        return CheckResult("selects" if found.selected == expected else "selects-other", evidence=tuple(evidence),
                           trace=hops, details=details, symbols=symbols)
    if found.verdict == "none-admitted":
        refusing = tuple(dict.fromkeys(k for path in found.refusal_reads if (k := recipe_key(ctx, path))))
        return CheckResult("none-admitted", evidence=tuple(evidence), trace=hops, details=details, symbols=symbols,
                           refusing=refusing)
    if found.verdict == "selects":
        outcome: Outcome = "selects-other" if expected and found.selected != expected else "selects"
        return CheckResult(outcome, evidence=tuple(evidence), trace=hops, details=details, symbols=symbols)
    details["open"] = found.reason
    reason = _summary(found)
    possible = ()
    if expected and found.possible and expected not in found.possible and UNREADABLE not in found.possible:
        possible = ("selects-other",)  # whichever wins, it is not the expected backend
    tags: tuple[Tag, ...] = ("model-config-unknown",) if "model" in found.reason else ("runtime-branch",)
    return CheckResult("undecided", evidence=tuple(evidence), trace=hops, details=details, tags=tags,
                       reason=reason, open=found.open or (found.reason,), possible=possible, symbols=symbols)


def _summary(found) -> str:
    """What an open selection rests on, in one line: the layer values and conditions it waits for
    (each in full among the finding's open questions)."""
    import re

    passed = sorted({n.strip() for o in found.open for m in re.findall(r"attention layers pass \(([^)]*)\)", o)
                     for n in m.split(",")})
    conditions = [o for o in found.open if o.startswith("if ") or " only if " in o]
    parts = [f"what the model's attention layers pass ({', '.join(passed)})"] if passed else []
    parts += conditions[:3] + ([f"{len(conditions) - 3} more conditions"] if len(conditions) > 3 else [])
    return "; ".join(parts) or found.reason


def _candidates(found) -> str:
    from srcreview.vllm.selection import NONE_ADMITTED

    shown = [p if p != NONE_ADMITTED else "none (start-up fails)" for p in found.possible]
    return ", ".join(shown) or "none"


def _refused(found) -> str:
    refused = [a.backend for a in found.admissions if a.verdict == "refuses"]
    return ", ".join(refused) or "none"


def _effective(found) -> str:
    if found.verdict == "selects":
        return found.selected
    if found.verdict == "none-admitted":
        return "none admitted (start-up fails)"
    if found.verdict == "undecided" and found.possible:
        return "one of " + _candidates(found)
    return "undecided"


def _how(found, capability) -> str:
    """How the target's backend is chosen, in words (for messages)."""
    where = f"on compute capability {capability}" if capability else "on this GPU"
    refused = f"; refused first: {_refused(found)}" if _refused(found) != "none" else ""
    if found.verdict == "selects":
        return (f"no backend is named, so the platform selects {found.selected} {where}, the first backend on its "
                f"priority list whose validate_configuration admits the recipe{refused}")
    if found.verdict == "none-admitted":
        return (f"no backend is named and no backend on the platform's priority list admits the recipe {where}: "
                "start-up fails")
    if found.possible:
        return (f"no backend is named, so the platform selects {where} the first backend its priority list "
                f"admits, one of {_candidates(found)}{refused}")
    return f"no backend is named, so the platform selects one automatically ({found.reason})"
