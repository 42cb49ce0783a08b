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
from typing import Any

from srcreview.interp.events import RaiseEvent
from srcreview.interp.values import FuncRef, Obj, Unknown
from srcreview.vllm.anchors import MODEL_CONFIG_FIELD, ROOT_CONFIG, SPECULATIVE

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
class Rewrite:
    """A hook's store to a field the recipe sets, while the engine builds its config."""

    path: tuple[str, ...]  # ("compilation_config", "cudagraph_mode")
    value: object  # what it stores (when `decided`)
    decided: bool  # the stored value is a constant the walk decides
    function: str  # qualname of the hook (or what it calls) that stores it
    file: str
    lines: tuple[int, int]
    conditional: bool  # under a condition the walk does not decide, or in a loop
    condition: str = ""  # that condition, and why it is undecided

    @property
    def overrides(self) -> bool:
        """The engine keeps the stored value, whatever the recipe says."""
        return self.decided and not self.conditional


@dataclass(frozen=True)
class Construction:
    built: bool  # whether the hooks were walked (a tree with EngineArgs and VllmConfig)
    rejections: tuple[Rejection, ...] = ()
    hooks: tuple[str, ...] = ()  # qualnames of the post-init hooks and validators walked
    fields: tuple[FieldCheck, ...] = ()
    rewrites: tuple[Rewrite, ...] = ()
    # raises reached only under a condition the walk does not decide (or in a loop or try): each
    # keeps start-up undecided, and the knobs its conditions read (RaiseEvent.reads)
    open_raises: tuple[Rejection, ...] = ()
    unreached: tuple[Rejection, ...] = ()  # raises after a refused field: pydantic stops before them
    # config path -> the config paths a store to it read (`self.runner_type = f(self.runner)`): a
    # raise reading the field reads those too (startup_knobs.keys_read)
    derived: tuple[tuple[tuple[str, ...], tuple[tuple[str, ...], ...]], ...] = ()

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
    coerce_bindings(an, root)
    sections = _recipe_sections(an, root)
    checks = [check for section, (cls, obj) in sections.items() for check in field_checks(an, cls, section)]
    checks += passed_field_checks(an, {c.key for c in checks})
    entries: list[tuple] = []
    last: dict[int, str] = {}  # the index of each section's last entry -> its class
    for cls, obj in sections.values():  # the model config first, then the speculative one, as the engine builds them
        own = hook_entries(an, cls, obj)
        entries += own
        runtime.walked.add(cls)
        if own:
            last[len(entries) - 1] = cls
    entries += [(q, root) for q in hooks(index, root_cls)]
    runtime.walked.add(root_cls)
    frames = an.construct(entries, keep=True, after=lambda n: runtime.section_built(last[n]) if n in last else None)
    built = {cls for cls, _ in sections.values()} | {root_cls}
    for _field, cls in _other_sections(an, root):  # every other config the engine builds, for its raises
        built.add(cls)
        if cls not in runtime.walked:
            an.walk_hooks(cls)
    an.forget_walks()  # the walks above read the config before it was built
    # a config walked when first read counts only when the engine surely builds it (an unset
    # optional config, such as the speculative one, is None: its hooks never run)
    walks = [(e[0], f) for e, f in zip(entries, frames, strict=True)] + [
        (q, f) for q, f in runtime.hook_walks if q.rsplit(".", 1)[0] in built]
    rejections: list[Rejection] = []
    open_raises: list[Rejection] = []
    # pydantic stops at a refused field: the raises after it are not reached (no start-up
    # question of their own), but what the engine does with the other values once that field is
    # fixed is not decided either: their rows must not read `accepted` (Construction.unreached)
    refused = any(c.outcome == "refused" for c in checks)
    unreached: list[Rejection] = []
    for qualname, walked in walks:
        for event in walked.raises:
            found = Rejection(qualname, event, walked.symbol.path)
            (unreached if refused else rejections if event.certain else open_raises).append(found)
    rewrites = []
    for path, stores in sorted(runtime.rewrites.items()):
        rewrite = _rewrite(path, stores)
        rewrites.append(rewrite)
        if not rewrite.overrides:
            runtime.heap.pop(path, None)  # later questions read the recipe's value (see Analyzer.rewritten)
    derived = tuple((path, tuple(sorted(reads))) for path, reads in sorted(runtime.derived.items()))
    return Construction(True, tuple(rejections), tuple(e[0] for e in entries), tuple(checks), tuple(rewrites),
                        tuple(open_raises), tuple(unreached), derived)


def _rewrite(path: tuple[str, ...], stores: list[tuple]) -> Rewrite:
    """The stores of one field, in walk order, as one Rewrite: the last one when it is decided and
    unconditional (it is what the field holds after every hook), else undecided, anchored on the
    first store whose value or condition is open."""
    value, decided, function, file, line, end, conditional, _ = stores[-1]
    if decided and not conditional:
        return Rewrite(path, value, True, function, file, (line, end), False)
    open_store = next(s for s in stores if not s[1] or s[6])
    value, decided, function, file, line, end, conditional, condition = open_store
    return Rewrite(path, value if decided else None, decided, function, file, (line, end),
                   any(s[6] for s in stores), condition)


def coerce_bindings(an, root) -> None:
    """Each recipe value bound at a config field, as pydantic's lax mode hands it on: `"4096"`
    and `4096.0` for an `int` field become 4096, `"true"` for a `bool` True. The hooks and every
    later question read the field as the engine stores it, not as the recipe spells it. A value
    no scalar option of the declaration takes as it is (a str for a `str | int`) stays."""
    from srcreview.vllm import declarations

    runtime = an.runtime
    for key, value in list(runtime.bindings.items()):
        head, _, name = key.rpartition(".")
        if not head or "." in name or isinstance(value, (Unknown, dict, list)) or value is None:
            continue
        obj = an.resolver.attribute(root, head) if "." not in head else None
        cls = an.resolver.canonical(obj.cls) if isinstance(obj, Obj) and isinstance(obj.cls, str) else None
        info = an.index._class_info_abs(cls) if cls else None
        f = info.field(name) if info is not None else None
        if f is None or f.classvar:
            continue
        owner = an.index._class_info_abs(an.resolver.owner_class(info, f.owner))
        decl = declarations.declared(an.index, owner.symbol.module, f)
        if any(o.kind in ("str", "any", "literal", "enum") and declarations.check(
                declarations.Declared((o,)), value).outcome == "admitted" for o in decl.options):
            continue  # taken as it is (pydantic's smart union prefers the exact type)
        for option in decl.options:
            if option.kind in ("int", "float", "bool"):
                value_as = declarations.coerced(option.kind, value)
                if value_as is not declarations.UNKNOWN:
                    if type(value_as) is not type(value):
                        runtime.bindings[key] = value_as
                    break


def hook_entries(an, cls: str, obj) -> list[tuple]:
    """The walks that run when the engine builds `cls` at `obj`: `(hook, obj)`, and for a
    `__post_init__` taking init-only arguments, `(hook, obj, arguments)`, each argument the
    value the engine's builder passes for it (`SchedulerConfig(max_model_len=model_config.
    max_model_len)`), computed when the walk reaches it: after the hooks of the configs built
    before, so it reads what they stored. A parameter the builder does not pass is unknown."""
    out: list[tuple] = []
    for qualname in hooks(an.index, cls):
        fn = an.index.function(qualname)
        params = [p.name for p in fn.facts.params if p.kind in ("positional", "keyword")][1:] if fn else []
        if qualname.endswith(".__post_init__") and params:
            out.append((qualname, obj, LazyArguments(an, cls, tuple(params))))
        else:
            out.append((qualname, obj))
    return out


class LazyArguments:
    """The init-only arguments of a config's `__post_init__`, as the engine's builder passes them
    (see `hook_entries`); `resolve()` computes them when the walk reaches the hook."""

    def __init__(self, an, cls: str, params: tuple[str, ...]):
        self.an, self.cls, self.params = an, cls, params

    def resolve(self) -> dict:
        passed = builder_keywords(self.an, self.cls)
        return {name: passed[name]() if name in passed else Unknown(f"{name}: the engine's builder does not pass it")
                for name in self.params}


def builder_keywords(an, cls: str) -> dict:
    """Keyword -> a thunk of its value, of the one `Cls(...)` call of the engine's builder
    (EngineArgs.create_engine_config) that builds `cls`; evaluated in the builder with `self` the
    engine arguments and each config local the config at its path. Empty when the builder makes
    no such call or more than one."""
    from srcreview.vllm.anchors import BUILDER
    from srcreview.vllm.runtime import builder_locals

    index = an.index
    engine = an.runtime.engine_class()
    method = engine.methods.get(BUILDER) if engine is not None else None
    builder = index.function(method.qualname) if method is not None else None
    if builder is None:
        return {}
    calls = _calls_named(index, builder).get(cls.rsplit(".", 1)[-1], ((), ()))[0]
    if len(calls) != 1:
        return {}
    locals_: dict = {}
    root = Obj(cls=_root_class(index) or "", path=(), nonnull=True, origin="self")
    for local, field in builder_locals(index, builder.qualname).items():
        value = an.resolver.attribute(root, field)
        if isinstance(value, Obj):
            locals_[local] = value
    self_obj = Obj(cls=engine.qualname, nonnull=True, origin="self")
    return {kw.name: (lambda expr=kw.value: an.force(an.evaluate(builder.module, expr, builder.facts, self_obj,
                                                                 locals_)))
            for kw in calls[0].keywords if kw.name}


def _section(an, root, field: str, surely_built: bool = False) -> tuple[str, Obj] | None:
    """(config class, its object) of VllmConfig's `field` when it holds a config class of that
    path (`surely_built`: only when the engine builds it whatever the recipe says, not an
    optional one left None)."""
    obj = an.resolver.attribute(root, field)
    if not isinstance(obj, Obj) or not isinstance(obj.cls, str) or (surely_built and not obj.nonnull):
        return None
    cls = an.resolver.canonical(obj.cls)
    return (cls, obj) if cls is not None and an.runtime.config_path_for(cls) == (field,) else None


def _other_sections(an, root) -> list[tuple[str, str]]:
    """(VllmConfig field, config class) of every config section at this revision that the engine
    surely builds (an optional one, such as the speculative config, only when the recipe sets it:
    then it is a recipe section already)."""
    found = [(field, _section(an, root, field, surely_built=True))
             for field in sorted(an.runtime.config_prefixes().values())]
    return [(field, section[0]) for field, section in found if section is not None]


def _recipe_sections(an, root) -> dict:
    """The config sections the recipe sets a value in (`speculative_config`, `cache_config`), and the
    model's config always, each with its class and its object at that path, in the order the
    engine builds them."""
    found = {}
    model = _section(an, root, MODEL_CONFIG_FIELD, surely_built=True)  # built whatever the recipe says, read by others
    if model is not None:
        found[MODEL_CONFIG_FIELD] = model
    # as the engine builds them: the model's config first (the speculative config reads it), then
    # the speculative config, then the others
    for key in sorted(an.runtime.prefix_keys, key=lambda k: (k != MODEL_CONFIG_FIELD, k != SPECULATIVE, k)):
        if "." in key or key in ("env", "hardware"):
            continue
        section = _section(an, root, key)
        if section is not None:
            found[key] = section
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


def passed_field_checks(an, checked: set[str]) -> list[FieldCheck]:
    """Each recipe value the engine's builder hands a config constructor as it is
    (`UVAOffloadConfig(cpu_offload_gb=self.cpu_offload_gb)`, nested in another config's call or
    not), checked as pydantic builds that config: its declaration's constraints may refuse what
    the engine argument's own declaration admits. Keys in `checked` are checked already."""
    from srcreview.index import ir
    from srcreview.interp.values import ClassRef
    from srcreview.vllm.anchors import BUILDER

    engine = an.runtime.engine_class()
    method = engine.methods.get(BUILDER) if engine is not None else None
    builder = an.index.function(method.qualname) if method is not None else None
    if builder is None:
        return []
    out = []
    for call in _unconditional_calls(builder.facts.body):
        if not (ir.dotted(call.func) or "").endswith("Config"):
            continue
        passed = [(kw.name, kw.value.attr) for kw in call.keywords
                  if kw.name and isinstance(kw.value, ir.Attr) and isinstance(kw.value.value, ir.Name)
                  and kw.value.value.id == "self" and kw.value.attr not in checked
                  and kw.value.attr in an.runtime.bindings]
        if not passed:
            continue
        cls = an.force(an.evaluate(builder.module, call.func))
        info = an.index._class_info_abs(cls.qualname) if isinstance(cls, ClassRef) else None
        if info is None:
            continue
        section = an.runtime.config_path_for(info.qualname) or (info.qualname.rsplit(".", 1)[-1],)
        for field, key in passed:
            value = an.runtime.bindings[key]
            if isinstance(value, Unknown):
                continue
            found = check_field(an, info, ".".join(section), field, value, key)
            if found is not None:
                out.append(found)
                checked.add(key)
    return out


def _unconditional_calls(body):
    """The calls a body makes whenever it runs to its end: those of its own statements (and of
    `with` blocks), not those under an `if`, a loop or a `try`, nor in a conditional
    expression, a boolean operand, a lambda or a comprehension (a config built only when a
    flag is on is not built for a recipe that leaves it off)."""
    from srcreview.index import ir

    def walk(node):
        if isinstance(node, (ir.IfExp, ir.BoolOp, ir.Lambda, ir.Comp, ir.Generator, ir.Def)):
            return
        if isinstance(node, ir.Call):
            yield node
        for child in ir.children(node):
            yield from walk(child)

    for stmt in body:
        if isinstance(stmt, ir.With):
            yield from _unconditional_calls(stmt.body)
        elif not isinstance(stmt, (ir.If, ir.For, ir.While, ir.Try, ir.Def)):
            yield from walk(stmt)


def check_field(an, info, section: str, name: str, value, key: str) -> FieldCheck | None:
    """`value` for field `name` of config class `info` (at `section`) as pydantic builds it:
    before/wrap validators, the declaration, after validators (None: no such field)."""
    from srcreview.vllm import declarations

    index = an.index
    cls = info.qualname
    f = info.field(name)
    if f is None or f.classvar:
        return None
    path = (*section.split("."), name)
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
        args: dict[str, Any] = {params[0].name: Const(current, origin=path)}
        for extra in params[1:]:
            args[extra.name] = Unknown(f"pydantic's {extra.name}")
        receiver = ClassRef(cls) if fn.facts.is_classmethod else Obj(cls=cls, path=path[:-1], nonnull=True,
                                                                     origin="self")
        walked = an.construct([(qualname, receiver, args)], keep=True)[0]
        certain = [e for e in walked.raises if e.certain]
        if certain:
            event = certain[0]
            return ("refused", qualname, walked.symbol.path, (event.line, event.end_line),
                    f"{short_name(qualname)} raises {_exception(event.text)}")
        if walked.raises:
            event = walked.raises[0]
            why = "; ".join(c.as_taken for c in event.conditions) or "inside a loop or a try"
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


def field_validators(index, info, name: str) -> list[tuple[str, object]]:  # (qualname, mode as written)
    """(qualname, mode) of the pydantic field validators of a class (and its bases in the tree)
    that validate field `name` (or every field, "*"), in declaration order."""
    import ast

    out: list[tuple[str, object]] = []
    for symbol in info.methods.values():
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
    for symbol in info.methods.values():
        fn = index.function(symbol.qualname)
        if fn is None:
            continue
        if any(d.split("(")[0].split(".")[-1] in AFTER_VALIDATORS and "after" in d for d in fn.facts.decorators):
            out.append(symbol.qualname)
    return out


def open_site(rejection) -> tuple[str, int, int]:
    """Where an open raise is: the raise itself (the innermost of a call's chain)."""
    event = rejection.raise_event
    if event.chain:
        _, path, line, end, _ = event.chain[-1]
        return path, line, end
    return rejection.path, event.line, event.end_line


def site_text(rejection) -> str:
    """The text of the raise an open raise's anchor is on (the innermost of its chain)."""
    event = rejection.raise_event
    return event.chain[-1][4] if event.chain else event.text


def open_order(rejection) -> tuple:
    path, line, _ = open_site(rejection)
    return (path, line, rejection.raise_event.text)


def depends_on(event) -> str:
    """The undecided conditions a raise is under, with why each is undecided: the two nearest
    the raise (its own test first of all; the guards of early exits above it are counted)."""
    parts = [f"{c.as_taken} ({c.reason})" if c.reason else c.as_taken for c in event.conditions[-2:]]
    more = len(event.conditions) - 2
    return " and ".join(parts) + (f" and {more} more" if more > 0 else "") if parts else "inside a loop or a try"


def raise_symbol(text: str) -> str:
    """The word of a raise's source line an anchor names: its exception (`ValueError`), or
    `assert` / `raise` (a bare re-raise)."""
    text = text.removeprefix("one of ")
    if text.startswith("assert"):
        return "assert"
    word = text.split("(", 1)[0].split()
    return word[0] if word else "raise"


def passed_argument(an, cls: str, name: str):
    """What the engine's builder passes as `name=` to the one `Cls(...)` call that builds `cls`
    (`ParallelConfig(data_parallel_size_local=data_parallel_size_local)`), as the walk of the
    builder computes it on its path: a constant, or a union of constants (one per branch the
    recipe leaves open). None when the builder builds `cls` more than once or under a condition,
    passes no such keyword, stores the field on the object itself afterwards, or the value is
    not a constant (a value EngineArgs' other methods fill in, `_set_default_...`: not followed).

    The builder is walked with `self` the recipe's engine arguments, the fields only its own
    statements store followed store by store (runtime.builder_tracked_fields). Calls the builder
    makes with the config object after building it are assumed not to store that field (as for
    the keys the builder passes as they are, runtime.engine_default)."""
    memo = an.__dict__.setdefault("_passed_arguments", {})
    key = (cls, name, an.runtime.built_epoch)  # the builder reads the configs built so far (Analyzer.value_walk)
    if key in memo:
        return memo[key]
    memo[key] = None  # a cycle (the builder reads the config it builds) reads it as not known
    memo[key] = _passed_argument(an, cls, name)
    return memo[key]


def _passed_argument(an, cls: str, name: str):
    from srcreview.interp.values import Const, Union
    from srcreview.vllm.anchors import BUILDER

    engine = an.runtime.engine_class()
    method = engine.methods.get(BUILDER) if engine is not None else None
    builder = an.index.function(method.qualname) if method is not None else None
    if builder is None or engine is None or method is None:
        return None
    short = cls.rsplit(".", 1)[-1]
    outer = frame = an.value_walk(method.qualname, Obj(cls=engine.qualname, nonnull=True, origin="self"))
    site = _building_call(an.index, builder, short)
    if site is None and short not in _calls_named(an.index, builder):
        # built in a method the builder calls on `self` (`model_config = self.create_model_config()`)
        site, frame = _built_in_method(an, engine, builder, frame, short)
    if site is None or not any(kw.name == name for kw in site.keywords):
        return None
    events = [e for e in frame.calls if e.line == site.line
              and (getattr(e.target, "dotted", None) or getattr(e.target, "qualname", None) or "").endswith(short)]
    if len(events) != 1 or any(s.attr == name and not _is_engine(an, s.receiver, engine)
                               for f in {id(frame): frame, id(outer): outer}.values() for s in f.stores):
        return None  # the builder stores the field on the config it built (or on an unknown object)
    value = an.force(events[0].argument(name))
    options = value.options if isinstance(value, Union) else (value,)
    if all(isinstance(o, Const) for o in options):
        return value
    filled = _filled_by(an, engine, value)
    return Unknown(f"{short}.{name}: {filled}") if filled else None


def _building_call(index, fn, short: str):
    """The one call of `short` (a class's name) a function makes, when it makes it once and
    whenever it runs to its end; None otherwise."""
    every, unconditional = _calls_named(index, fn).get(short, ((), ()))
    return every[0] if len(every) == 1 and len(unconditional) == 1 else None


def _calls_named(index, fn) -> dict[str, tuple[tuple, tuple]]:
    """The calls a function makes, by the last name of what they call: (every one, those made
    whenever it runs to its end); computed once per tree (asked for each field the engine fills)."""
    from srcreview.index import ir
    from srcreview.vllm.runtime import _memo

    def compute():
        unconditional = list(_unconditional_calls(fn.facts.body))
        return {name: (calls, tuple(c for c in unconditional if c in calls))
                for name, calls in ir.calls_by_name(fn.facts.body).items()}

    return _memo(index, f"calls_named:{fn.qualname}", compute)


def _built_in_method(an, engine, builder, frame, short: str):
    """(the call that builds the class, the walk it is in) when the builder builds it through one
    method it calls on `self` once, unconditionally, that builds it once (walked as the builder
    calls it: with the engine fields the builder has at that call); (None, frame) otherwise."""
    from srcreview.index import ir

    receiver = builder.facts.params[0].name if builder.facts.params else None
    own = [c for c in ir.iter_calls(builder.facts.body) if isinstance(c.func, ir.Attr)
           and isinstance(c.func.value, ir.Name) and c.func.value.id == receiver]
    for call in own:
        target = an.index.function(f"{engine.qualname}.{call.func.attr}")
        site = _building_call(an.index, target, short) if target is not None else None
        if site is None:
            continue
        if sum(1 for c in own if c.func.attr == call.func.attr) != 1 or call not in list(
                _unconditional_calls(builder.facts.body)):
            return None, frame
        events = [e for e in frame.calls if e.line == call.line and isinstance(e.target, FuncRef)
                  and e.target.qualname == target.qualname]
        if len(events) != 1:
            return None, frame
        saved = (an.effects, an.constructing)
        an.effects = an.constructing = False
        try:
            return site, an.walk_call(events[0])
        finally:
            an.effects, an.constructing = saved
    return None, frame


def _is_engine(an, value, engine) -> bool:
    """Whether a store's receiver is the engine's arguments (`self` in the builder)."""
    return isinstance(value, Obj) and isinstance(value.cls, str) and an.resolver.canonical(value.cls) == engine.qualname


def _filled_by(an, engine, value) -> str:
    """For the engine argument `value` reads (`self.max_num_batched_tokens`), the methods of
    EngineArgs other than the builder that store it, and what their walks leave undecided (the
    calls they make that the walk does not resolve: the platform's device memory, ...); "" when
    it is not such a read (or it reads an object of a known class)."""
    from srcreview.vllm.anchors import BUILDER

    if not isinstance(value, Obj) or value.cls is not None or value.owner != engine.qualname or not value.attr:
        return ""  # a config object of a known class is worth more than a reason
    fillers = sorted({a.method for a in engine.facts.instance_attrs if a.attr == value.attr
                      and not a.method.endswith(f".{BUILDER}")})
    if not fillers:
        return ""
    saved = (an.effects, an.constructing)
    an.effects = an.constructing = False
    open_calls: list[str] = []
    try:
        for qualname in fillers:
            full = qualname if qualname.startswith(engine.symbol.module) else f"{engine.symbol.module}.{qualname}"
            if an.index.function(full) is None:
                continue
            frames = [an.summary(full, engine.qualname)]
            frames += [an.summary(c.target.qualname, engine.qualname) for c in frames[0].calls
                       if c.status == "static" and getattr(c.target, "qualname", "").startswith(engine.qualname + ".")
                       and an.index.function(c.target.qualname) is not None]
            open_calls += [c.text for f in frames for c in f.calls if c.status == "unresolved"
                           and not c.reason.startswith(("attribute debug", "attribute info", "attribute warning"))]
    finally:
        an.effects, an.constructing = saved
    names = ", ".join(f"{m.rsplit('.', 1)[-1]}()" for m in fillers)
    shown = list(dict.fromkeys(open_calls))
    more = f" ({', '.join(shown[:3])}{', ...' if len(shown) > 3 else ''})" if shown else ""
    return f"the recipe leaves it to the engine, which fills it in ({engine.symbol.local}.{names}) from what the " \
           f"source does not decide{more}"
