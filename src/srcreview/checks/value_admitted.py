"""value-admitted: whether vLLM admits a recipe value, from its declarations and validators.

Two places decide, both read from the source:
- the key's own declaration (the EngineArgs field, or the nested config field): its annotation
  and `Field` constraints as pydantic applies them (srcreview.vllm.declarations); Enum-typed
  keys are matched by member name, as vLLM's parsers do;
- the config field the value lands on while the engine builds its config
  (`kv_cache_dtype` -> `CacheConfig.cache_dtype`), checked with that class's field validators
  walked with the value bound (srcreview.vllm.construction.field_checks).
A refusal by either is `not-admitted`, anchored on the declaration or the validator's raise,
with the closest admitted member as a suggestion. What neither lets us read (an annotation not
modelled, a validator that may raise) is `undecided` with the reason: never admitted silently.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, cast

from srcreview.checks import CheckContext, CheckResult, short, stale
from srcreview.checks import Params as BaseParams
from srcreview.checks._common import admits_none, field_anchor, owner_of
from srcreview.checks._knobs import resolve_key
from srcreview.interp.values import Obj
from srcreview.vllm.anchors import ENGINE_CLASS, ROOT_CONFIG, SPECULATIVE

if TYPE_CHECKING:
    from srcreview.index.facts import FieldFact

OUTCOMES = ("admitted", "not-admitted", "not-applicable", "undecided")
UNDECIDED_OUTCOMES = ("undecided", "not-applicable")


class Details(TypedDict, total=False):
    """The values this kind's claims may name ({key} in a rule's text)."""

    key: str
    value: Any
    annotation: str
    admitted: str
    suggestion: str
    refused_by: str
    admitted_note: str
    reason: str


class Params(BaseParams):
    engine_class: str = ENGINE_CLASS
    container_class: str = ROOT_CONFIG
    auto_means_none: bool = True


def run(ctx: CheckContext, params: Params, setting) -> CheckResult:
    from srcreview.vllm import declarations

    decl = resolve_key(ctx, setting.key, params.engine_class, params.container_class)
    if decl.status == "stale":
        return stale(decl.missing)
    if decl.status not in ("exists", "entry"):
        return CheckResult("not-applicable", reason=decl.reason)
    field = cast("FieldFact", decl.field)  # set for an existing key (for an entry: its mapping's field)
    value = setting.value
    module = owner_of(ctx, decl.owner, field).symbol.module
    declared = declarations.declared(ctx.index, module, field)
    if decl.status == "entry":
        declared = _entry_declaration(declared, setting.key, field.name)
    own = declarations.check(declared, value)
    if own.outcome == "refused" and params.auto_means_none and isinstance(value, str) and value.lower() == "auto" \
            and admits_none(field.annotation) and any(o.kind == "enum" for o in declared.options):
        own = declarations.Verdict("admitted")  # vLLM's parsers read "auto" as None for such a field
    anchor = field_anchor(ctx, field, f"declares {setting.key}: {field.annotation}", decl.owner)
    members = declared.members()
    details: Details = {"key": setting.key, "value": value, "annotation": field.annotation or "",
               "admitted": _shown(members), "suggestion": "", "refused_by": f"{short(field.owner)}.{field.name}"}
    symbols = [f"{short(field.owner)}.{field.name}"]
    evidence = [anchor]
    reasons = [own.reason] if own.outcome == "refused" else []
    open_ = [f"{setting.key}: {own.reason}"] if own.outcome == "unknown" else []
    built = _field_check(ctx, setting.key)
    same = built is not None and built.path == tuple(setting.key.split("."))  # the key's own field
    if built is not None and (built.by or not same):
        role = f"{short(built.by)} refuses {setting.key} = {value!r}" if built.by else \
            f"declares {'.'.join(built.path)} ({built.field})"
        built_anchor = ctx.anchor(built.file, built.lines[0], built.lines[1],
                                  short(built.by).split(".")[-1] if built.by else built.field, role)
        members = members or built.members
        details["admitted"] = details["admitted"] or _shown(built.members)
        if built.outcome == "refused":
            evidence.insert(0, built_anchor)
            reasons.insert(0, built.reason)
            details["refused_by"] = short(built.by) if built.by else built.field
            symbols.append(details["refused_by"])
        elif built.outcome == "unknown":
            evidence.append(built_anchor)
            open_.append(f"{built.field}: {built.reason}")
        elif not same:
            evidence.append(built_anchor)
    if not reasons:
        landed = _draft_landing(ctx, setting)
        if landed is not None:
            check, decided = landed
            role = f"{short(check.by)} refuses {setting.key} = {value!r} in the draft's config" if check.by else \
                f"declares {check.field}, where the draft's copy takes {setting.key}"
            landing = ctx.anchor(check.file, check.lines[0], check.lines[1],
                                 short(check.by).split(".")[-1] if check.by else check.field, role)
            members = members or check.members
            if check.outcome == "refused" and decided:
                evidence.insert(0, landing)
                reasons.append(f"{check.reason} (when the draft's {'.'.join(check.path)} is set to it)")
                details["refused_by"] = short(check.by) if check.by else check.field
                symbols.append(details["refused_by"])
            elif check.outcome in ("refused", "unknown"):
                evidence.append(landing)
                open_.append(f"{check.field}: {check.reason}" + ("" if decided else
                             " (if the draft's config takes the nested value)"))
    if reasons:
        hint = declarations.suggestion(value, members)
        details["suggestion"] = f" Did you mean {hint!r}?" if hint else ""
        details["admitted_note"] = f"; admitted: {_shown(members)}" if members else ""
        details["reason"] = "; ".join(dict.fromkeys(reasons))
        return CheckResult("not-admitted", evidence=tuple(evidence), details=details,
                           symbols=tuple(dict.fromkeys(symbols)), reason=details["reason"])
    if open_:
        return CheckResult("undecided", evidence=tuple(evidence), details=details, symbols=tuple(symbols),
                           tags=("value-undecided",), open=tuple(open_), reason="; ".join(open_))
    return CheckResult("admitted", evidence=tuple(evidence), details=details, symbols=tuple(symbols))


def _entry_declaration(mapping, key: str, name: str):
    """What an entry of a mapping field admits: the item type of its one mapping option, level by
    level below the field (`dict[str, dict[str, int]]`); any other shape is not modelled (open)."""
    from srcreview.vllm import declarations

    parts = key.split(".")
    depth = parts[::-1].index(name)  # levels below the field
    declared = mapping
    for _ in range(depth):
        items = [o.item for o in declared.options if o.kind == "dict"]
        others = [o for o in declared.options if o.kind not in ("dict", "none")]
        if len(items) != 1 or items[0] is None or others:
            return declarations.Declared((declarations.Option("unknown", text=f"an entry of {name} of that shape"),))
        declared = items[0]
    return declared


def _draft_landing(ctx: CheckContext, setting):
    """For a nested `speculative_config.<name>` whose top-level twin lands on a config field: that
    field's check of the value in the draft's copy of the config, where the draft takes the
    nested value (the draft-config fact), and whether it surely does; None otherwise."""
    from srcreview.checks import draft_config
    from srcreview.vllm.construction import check_field
    from srcreview.vllm.runtime import key_paths

    name = setting.key.removeprefix(f"{SPECULATIVE}.")
    if name == setting.key or "." in name or ctx.analyzer is None or ctx.runner.value is None:
        return None
    where = key_paths(ctx.index).get(name)
    if where is None or where.path.count(".") != 1:
        return None
    reached = draft_config.run(ctx, draft_config.Params(setting="*"), setting)
    if reached.outcome != "nested" and "nested" not in reached.possible:
        return None
    section, field = where.path.split(".")
    an = ctx.analyzer
    obj = an.resolver.attribute(an.resolver.at_path(()), section)
    cls = an.resolver.canonical(obj.cls) if isinstance(obj, Obj) and isinstance(obj.cls, str) else None
    info = ctx.index._class_info_abs(cls) if cls else None
    checked = check_field(an, info, section, field, setting.value, setting.key) if info is not None else None
    return (checked, reached.outcome == "nested") if checked is not None else None


def _field_check(ctx: CheckContext, key: str):
    """The construction's check of this key's value, when the engine's config was built."""
    construction = ctx.analyzer.construction if ctx.analyzer is not None else None
    return construction.field_check(key) if construction is not None else None


def _shown(members) -> str:
    return ", ".join(str(m) for m in members)
