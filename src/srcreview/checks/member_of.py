"""member-of: a class-level constant (a backend's supported KV dtypes, ...) contains a value."""

from __future__ import annotations

from srcreview.checks import CheckContext, CheckResult, Params, short, stale
from srcreview.checks._backend import backend_class
from srcreview.templates import fill

OUTCOMES = ("member", "not-member", "undecided")
UNDECIDED_OUTCOMES = ("undecided",)


class Params(Params):  # noqa: F811
    cls: str | None = None  # the class, by qualified-name suffix; or:
    enum: str | None = None  # an Enum whose member (named by `member`) holds the class path
    member: str | None = None
    constant: str  # the class-level constant, looked up along the MRO
    value: str  # template of the value to look for, e.g. "{kv_cache_dtype}"


def run(ctx: CheckContext, params: Params, subject=None) -> CheckResult:
    values = ctx.template_values
    evidence = []
    if params.enum:
        info, anchor, missing, reason = backend_class(ctx, params.enum, fill(params.member or "", values))
        if missing:
            return stale(missing)
        if info is None:
            return CheckResult("undecided", reason=reason, tags=("unresolved-type",))
        if anchor is not None:
            evidence.append(anchor)
    else:
        info = ctx.index.class_info(params.cls or "")
        if info is None:
            return stale([params.cls or "cls"])
    wanted = fill(params.value, values)
    cls = info.symbol.local
    details = {"class": cls, "constant": params.constant, "wanted": wanted}
    field = info.field(params.constant)
    constant = info.constants.get(params.constant)
    if field is None and constant is None:
        return stale([f"{cls}.{params.constant}"])
    from srcreview.index import UNKNOWN

    value = field.value if field is not None and field.value is not UNKNOWN else constant
    if field is not None:
        from srcreview.checks._common import owner_of

        owner = owner_of(ctx, info, field)
        evidence.append(ctx.anchor(owner.symbol.path, field.start_line, field.end_line,
                                   f"{short(field.owner)}.{params.constant}",
                                   f"{short(field.owner)}.{params.constant} lists the admitted values"))
    else:
        evidence.append(ctx.symbol_anchor(info.symbol, f"{cls} (declares {params.constant})"))
    symbols = (f"{cls}.{params.constant}",)
    if value is None or value is UNKNOWN or not isinstance(value, (list, tuple, set, frozenset, dict)):
        return CheckResult("undecided", evidence=tuple(evidence), details=details, symbols=symbols,
                           tags=("non-literal-constant",), reason=f"{cls}.{params.constant} is not a literal collection")
    details["members"] = ", ".join(str(v) for v in value)
    outcome = "member" if wanted in value else "not-member"
    return CheckResult(outcome, evidence=tuple(evidence), details=details, symbols=symbols)
