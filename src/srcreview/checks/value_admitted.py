"""value-admitted: a recipe value is a member of its field's Literal / Enum at this revision."""

from __future__ import annotations

from srcreview.checks import CheckContext, CheckResult, Params, short, stale
from srcreview.checks._common import admits_none, field_anchor
from srcreview.checks._knobs import resolve_key

OUTCOMES = ("admitted", "not-admitted", "unconstrained", "not-applicable", "undecided")
UNDECIDED_OUTCOMES = ("undecided", "unconstrained", "not-applicable")


class Params(Params):  # noqa: F811
    engine_class: str = "EngineArgs"
    container_class: str = "VllmConfig"
    enum_names_case_insensitive: bool = True
    auto_means_none: bool = True


def run(ctx: CheckContext, params: Params, setting) -> CheckResult:
    decl = resolve_key(ctx, setting.key, params.engine_class, params.container_class)
    if decl.status == "stale":
        return stale(decl.missing)
    if decl.status != "exists":
        return CheckResult("not-applicable", reason=decl.reason)
    field = decl.field
    from srcreview.checks._common import owner_of

    module = owner_of(ctx, decl.owner, field).symbol.module
    admitted = ctx.index.literal_values(field.annotation or "", module) if field.annotation else None
    details = {"key": setting.key, "value": setting.value, "annotation": field.annotation or ""}
    anchor = field_anchor(ctx, field, f"declares {setting.key}: {field.annotation}", decl.owner)
    symbols = (f"{short(field.owner)}.{field.name}",)
    if not admitted:
        return CheckResult("unconstrained", evidence=(anchor,), details=details, symbols=symbols)
    value = setting.value
    details["admitted"] = ", ".join(str(a) for a in admitted)
    if value in admitted:
        return CheckResult("admitted", evidence=(anchor,), details=details, symbols=symbols)
    if isinstance(value, str):
        is_enum = ctx.index.enum_members(_strip(field.annotation)) is not None
        if is_enum and params.enum_names_case_insensitive and value.upper() in admitted:
            return CheckResult("admitted", evidence=(anchor,), details=details, symbols=symbols)
        if params.auto_means_none and value.lower() == "auto" and is_enum and admits_none(field.annotation):
            return CheckResult("admitted", evidence=(anchor,), details=details, symbols=symbols)
    return CheckResult("not-admitted", evidence=(anchor,), details=details, symbols=symbols,
                       reason=f"{value!r} is not one of {details['admitted']}")


def _strip(annotation: str) -> str:
    from srcreview.checks._common import strip_optional

    return strip_optional(annotation) or ""
