"""knob-exists: a recipe key is an engine argument or a nested config field at this revision."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, cast

from srcreview.checks import CheckContext, CheckResult, short, stale
from srcreview.checks import Params as BaseParams
from srcreview.checks._common import field_anchor
from srcreview.checks._knobs import resolve_key
from srcreview.vllm.anchors import ENGINE_CLASS, ROOT_CONFIG

if TYPE_CHECKING:
    from srcreview.index.facts import FieldFact
    from srcreview.index.index import ClassInfo

OUTCOMES = ("exists", "missing", "undecided")
UNDECIDED_OUTCOMES = ("undecided",)
VALUE_BLIND = True  # the answer never depends on the value: it runs on values the shell decides too


class Details(TypedDict, total=False):
    """The values this kind's claims may name ({key} in a rule's text)."""

    key: str
    value: Any
    suggestion: str
    did_you_mean: str
    reason: str


class Params(BaseParams):
    engine_class: str = ENGINE_CLASS
    container_class: str = ROOT_CONFIG


def run(ctx: CheckContext, params: Params, setting) -> CheckResult:
    decl = resolve_key(ctx, setting.key, params.engine_class, params.container_class)
    if decl.status == "stale":
        return stale(decl.missing)
    details: Details = {"key": setting.key, "value": setting.value, "suggestion": decl.suggestion,
               "did_you_mean": f" (did you mean {decl.suggestion}?)" if decl.suggestion else "",
               "reason": decl.reason}
    if decl.status in ("exists", "entry"):
        field = cast("FieldFact", decl.field)  # set for an existing key (for an entry: its mapping's field)
        role = f"declares {setting.key}" if decl.status == "exists" else \
            f"declares {field.name} a mapping: {setting.key} is one of its entries"
        evidence = [field_anchor(ctx, field, role, decl.owner)]
        return CheckResult("exists", evidence=tuple(evidence), details=details,
                           symbols=(f"{short(field.owner)}.{field.name}",))
    if decl.status == "missing":
        owner = cast("ClassInfo", decl.owner)  # set for a missing key: the class that lacks it
        evidence = (ctx.symbol_anchor(owner.symbol, f"declares the admitted keys; no {setting.key.split('.')[-1]}"),)
        return CheckResult("missing", evidence=evidence, details=details, symbols=(owner.symbol.local,),
                           reason=decl.reason)
    return CheckResult("undecided", details=details, tags=("unresolved-type",), reason=decl.reason)
