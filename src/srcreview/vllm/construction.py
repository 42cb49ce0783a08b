"""What runs while the engine builds its config: the configs' post-init hooks and validators.

vLLM turns its arguments into a VllmConfig (`EngineArgs.create_engine_config`), and each
config validates itself as it is built (`__post_init__`, pydantic `model_validator`s of mode
"after"). What they store and whether they raise decide what the rest of the engine sees, so
the interpreter walks them once per recipe, before any question: the speculative config's
hooks (when the recipe uses one), then VllmConfig's. It is an effects walk: calls on config
objects run although their value is not needed, the config fields they store land on the
runtime's heap (a store under an undecided condition makes the field unknown; the recipe's own
values are taken as final), and their raises are kept. A raise reached on the path the recipe
decides, nothing catching it, means the engine refuses the recipe at start-up.

The values the walk starts from are the recipe's, and for what it leaves unset, what the
engine passes (srcreview.interp.resolver: EngineArgs defaults, the root `VllmConfig(...)`
arguments, declared defaults of fields the engine does not pass). Nothing here runs when the
tree has no EngineArgs (pattern fixtures).

Before the hooks, each value the recipe sets in a config class (`cache_config.cache_dtype`,
`speculative_config.method`, ...) is checked as pydantic checks it when that class is built:
its field validators of mode "before" / "wrap" walked with the value bound, then the
declaration (srcreview.vllm.declarations: the annotation and its `Field` constraints), then
the validators of mode "after". A certain raise or a declaration that refuses the value is a
`FieldCheck` of outcome "refused" (srcreview.checks.value_admitted reports it as an invalid
value); pydantic stops there, so the model's own hooks are not reached and their raises are
not reported as start-up rejections.
"""

from __future__ import annotations

from dataclasses import dataclass

from srcreview.interp.events import RaiseEvent
from srcreview.interp.values import Obj, Unknown
from srcreview.vllm.anchors import ROOT_CONFIG, SPECULATIVE

AFTER_VALIDATORS = ("model_validator",)
FIELD_VALIDATORS = ("field_validator",)


@dataclass(frozen=True)
class Rejection:
    """A raise reached while the engine builds its config, on the path the recipe decides."""

    function: str  # qualname of the function walked (the hook), where the raise or the raising call is
    raise_event: RaiseEvent
    path: str  # file of that function


@dataclass(frozen=True)
class FieldCheck:
    """One recipe value checked as the config class holding it is built (see the module doc)."""

    key: str  # the recipe key (`kv_cache_dtype`), bound at `path` (`cache_config.cache_dtype`)
    path: tuple[str, ...]
    field: str  # `CacheConfig.cache_dtype`
    value: object
    outcome: str  # "admitted" | "refused" | "unknown"
    reason: str = ""
    by: str = ""  # qualname of the validator that decided, "" for the declaration
    file: str = ""  # where the deciding declaration or raise is, and its lines
    lines: tuple[int, int] = (0, 0)
    members: tuple = ()  # the Literal / Enum members the declaration names


@dataclass(frozen=True)
class Construction:
    built: bool  # whether the hooks were walked (a tree with EngineArgs and VllmConfig)
    rejections: tuple[Rejection, ...] = ()
    hooks: tuple[str, ...] = ()  # qualnames of the post-init hooks and validators walked
    fields: tuple[FieldCheck, ...] = ()

    def field_check(self, key: str) -> FieldCheck | None:
        """The check of the recipe key's value (the first that refuses it when several do)."""
        found = [f for f in self.fields if f.key == key]
        return next((f for f in found if f.outcome == "refused"), found[0] if found else None)


def build(an) -> Construction:
    """Walk the config's post-init hooks and validators for `an` (an Analyzer) once; see the
    module doc."""
    index = an.index
    runtime = an.runtime
    root_cls = _root_class(index)
    if root_cls is None or runtime.engine_class() is None:
        return Construction(False)
    root = Obj(cls=root_cls, path=(), nonnull=True, origin="self")
    sections = _recipe_sections(an, root)
    checks = [check for section, (cls, obj) in sections.items() for check in field_checks(an, cls, section)]
    entries = []
    for section, (cls, obj) in sections.items():  # the speculative config first, as the engine builds it
        entries += [(q, obj) for q in hooks(index, cls)]
        runtime.walked.add(cls)
    entries += [(q, root) for q in hooks(index, root_cls)]
    runtime.walked.add(root_cls)
    frames = an.construct(entries)
    rejections = []
    if not any(c.outcome == "refused" for c in checks):  # pydantic stops at a refused field
        for (qualname, _), walked in zip(entries, frames):
            for event in walked.raises:
                if event.certain:
                    rejections.append(Rejection(qualname, event, walked.symbol.path))
    return Construction(True, tuple(rejections), tuple(q for q, _ in entries), tuple(checks))


def _recipe_sections(an, root) -> dict:
    """The config sections the recipe sets a value in (`speculative_config`, `cache_config`),
    each with its class and its object at that path; the speculative config first."""
    found = {}
    for key in sorted(an.runtime.prefix_keys, key=lambda k: (k != SPECULATIVE, k)):
        if "." in key or key in ("env", "hardware"):
            continue
        obj = an.resolver.attribute(root, key)
        cls = an.resolver.canonical(obj.cls) if isinstance(obj, Obj) and isinstance(obj.cls, str) else None
        if cls is not None and an.runtime.config_path_for(cls) == (key,):
            found[key] = (cls, obj)
    return found


def field_checks(an, cls: str, section: str) -> list[FieldCheck]:
    """Each value the recipe binds under `section` checked as pydantic builds `cls` (module doc)."""
    from srcreview.vllm.runtime import engine_paths

    index, runtime = an.index, an.runtime
    info = index._class_info_abs(cls)
    if info is None:
        return []
    recipe_keys = engine_paths(index)
    out = []
    for key, value in sorted(runtime.bindings.items()):
        head, _, name = key.partition(".")
        if head != section or not name or "." in name:
            continue
        where = recipe_keys.get(key)
        recipe_key = where.key if where is not None and where.key in runtime.bindings else key
        checked = check_field(an, info, section, name, value, recipe_key)
        if checked is not None:
            out.append(checked)
    return out


def check_field(an, info, section: str, name: str, value, key: str) -> FieldCheck | None:
    """`value` for field `name` of config class `info` (at `section`) as pydantic builds it:
    before/wrap validators, the declaration, after validators (None: no such field)."""
    from srcreview.vllm import declarations

    index = an.index
    cls = info.qualname
    f = info.field(name)
    if f is None or f.classvar:
        return None
    path = (section, name)
    owner = an.resolver.owner_class(info, f.owner)
    file = index._class_info_abs(owner).symbol.path
    field_name = f"{owner.rsplit('.', 1)[-1]}.{name}"
    validators = field_validators(index, info, name)
    pending = []
    # pydantic runs before/wrap validators last-defined first, after validators in order
    decided = _walk_validators(an, cls, [v for v in reversed(validators) if v[1] in ("before", "wrap", "plain")],
                               value, path)
    if decided[0] != "value":
        return _decided(key, path, field_name, value, decided)
    current = decided[1]
    declared = declarations.declared(index, index._class_info_abs(owner).symbol.module, f)
    members = declared.members()
    if not any(v[1] == "plain" for v in validators):  # a plain validator replaces the declaration
        verdict = declarations.check(declared, current)
        if verdict.outcome == "refused":
            return FieldCheck(key, path, field_name, value, "refused", verdict.reason, "", file,
                              (f.start_line, f.end_line), members)
        if verdict.outcome == "unknown":
            pending.append(verdict.reason)
    after = _walk_validators(an, cls, [v for v in validators if v[1] == "after"], current, path)
    if after[0] != "value":
        return _decided(key, path, field_name, value, after, members)
    if pending:
        return FieldCheck(key, path, field_name, value, "unknown", "; ".join(pending), "", file,
                          (f.start_line, f.end_line), members)
    return FieldCheck(key, path, field_name, value, "admitted", "", "", file, (f.start_line, f.end_line), members)


def _decided(key, path, field_name, value, decided, members=()) -> FieldCheck:
    outcome, fn, file, lines, reason = decided
    return FieldCheck(key, path, field_name, value, outcome, reason, fn, file, lines, members)


def _walk_validators(an, cls: str, validators, value, path):
    """Walk field validators in order with the value bound: ("value", the value handed on), or
    (outcome, validator, file, lines, reason) when one raises for certain ("refused"), may
    raise, or hands on a value the walk cannot decide ("unknown"). A wrap validator hands the
    value to pydantic's handler (the declaration, checked next) unless it returns a constant."""
    from srcreview.interp.values import ClassRef, Const

    current = value
    for qualname, mode in validators:
        fn = an.index.function(qualname)
        params = [p for p in fn.facts.params if p.kind == "positional"]
        if fn.facts.owner and not fn.facts.is_staticmethod:
            params = params[1:]
        if not params:
            return ("unknown", qualname, "", (0, 0), f"{short_name(qualname)}: no value parameter")
        args = {params[0].name: Const(current, origin=path)}
        for extra in params[1:]:
            args[extra.name] = Unknown(f"pydantic's {extra.name}")
        receiver = ClassRef(cls) if fn.facts.is_classmethod else Obj(cls=cls, path=path[:-1], nonnull=True, origin="self")
        walked = an.construct([(qualname, receiver, args)], keep=True)[0]
        certain = [e for e in walked.raises if e.certain]
        if certain:
            event = certain[0]
            return ("refused", qualname, walked.symbol.path, (event.line, event.end_line),
                    f"{short_name(qualname)} raises {_exception(event.text)}")
        if walked.raises:
            event = walked.raises[0]
            why = "; ".join(c.text for c in event.conditions) or "inside a loop or a try"
            return ("unknown", qualname, walked.symbol.path, (event.line, event.end_line),
                    f"{short_name(qualname)} may raise {_exception(event.text)} (if {why})")
        if mode in ("before", "wrap", "plain"):
            returned = an.force(an.returns_of(walked, fn.facts))
            if isinstance(returned, Const):
                current = returned.value
            elif mode != "wrap":
                return ("unknown", qualname, walked.symbol.path, (fn.facts.start_line, fn.facts.end_line),
                        f"what {short_name(qualname)} returns is not decided")
    return ("value", current)


def _exception(text: str) -> str:
    return text.split("(", 1)[0] or text


def short_name(qualname: str) -> str:
    parts = qualname.split(".")
    return ".".join(parts[-2:]) if len(parts) > 1 else qualname


def field_validators(index, info, name: str) -> list[tuple[str, str]]:
    """(qualname, mode) of the pydantic field validators of a class (and its bases in the tree)
    that validate field `name` (or every field, "*"), in declaration order."""
    import ast

    out = []
    for method, symbol in info.methods.items():
        fn = index.function(symbol.qualname)
        if fn is None:
            continue
        for decorator in fn.facts.decorators:
            if decorator.split("(")[0].split(".")[-1] not in FIELD_VALIDATORS:
                continue
            try:
                call = ast.parse(decorator, mode="eval").body
            except SyntaxError:
                continue
            if not isinstance(call, ast.Call):
                continue
            names = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
            mode = next((k.value.value for k in call.keywords if k.arg == "mode" and isinstance(k.value, ast.Constant)),
                        "after")
            if name in names or "*" in names:
                out.append((symbol.qualname, mode))
    return out


def _root_class(index) -> str | None:
    """The qualname of VllmConfig at this revision (None when absent or ambiguous)."""
    from srcreview.core.errors import DataError

    try:
        info = index.class_info(ROOT_CONFIG)
    except DataError:
        return None
    return info.qualname if info is not None else None


def hooks(index, cls: str) -> list[str]:
    """The methods that run when an instance of `cls` is built: `__post_init__`, then the
    pydantic validators of mode "after" (in the order the class declares them)."""
    info = index._class_info_abs(cls)
    if info is None:
        return []
    out = []
    if "__post_init__" in info.methods:
        out.append(info.methods["__post_init__"].qualname)
    for name, symbol in info.methods.items():
        fn = index.function(symbol.qualname)
        if fn is None:
            continue
        if any(d.split("(")[0].split(".")[-1] in AFTER_VALIDATORS and "after" in d for d in fn.facts.decorators):
            out.append(symbol.qualname)
    return out
