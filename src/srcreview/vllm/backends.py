"""Whether the attention selector admits a backend under the recipe.

The platform asks a backend class one question, `validate_configuration` (as overridden along
the class's MRO: it composes `supports_kv_cache_dtype`, `supports_compute_capability`,
`supports_head_size`, ... and returns the reasons it refuses), with the device capability and
what the selector hands it. Both are derived here by walking the source under the recipe:

- the selector (`get_attn_backend`), walked with the target's config as the current one:
  the keywords of the selector config it passes on (block size, non-causal, batch invariance,
  ... from the config; the KV dtype the attention layer passes, which is the recipe's). What
  the model's layers pass is bound where vLLM's ModelConfig derives it from the model's bound
  config (anchors.LAYER_FACTS: head size, dtype, MLA-ness, each walked on the config, bound
  only when the walk gives a constant); the rest (sinks, sliding window, ...) stays open, and
  so does every test on it.
- the platform's `get_attn_backend_cls`, walked with the backend selected: the keywords it adds
  (the device capability, from `[hardware] compute_capability`), and whether a refusal raises
  (start-up fails) or the selector falls back to another backend.
- the backend's `validate_configuration` walked with those values: it refuses when every path
  returns a non-empty list, admits when every path returns an empty one, else it depends on
  what stays open. A refusal's reasons are the tests decided under the recipe on a path every
  enclosing test decided, each with what its predicate returned (a subclass override that
  narrows a list by capability is where the anchor points).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from srcreview.index import ir
from srcreview.interp.interpreter import Frame, analyzer
from srcreview.interp.results import frame_anchor
from srcreview.interp.values import (
    ClassRef,
    Const,
    Derived,
    EnumMember,
    External,
    FuncRef,
    LazyCall,
    Obj,
    Ref,
    Unknown,
)
from srcreview.vllm.anchors import (
    ATTN_SELECTOR,
    BACKEND_ENUM,
    BACKEND_VALIDATE,
    CACHE_DTYPE,
    CURRENT_CONFIG,
    HF_CONFIG,
    LAYER_FACTS,
    MODEL_CONFIG,
    MODEL_CONFIG_FIELD,
    PLATFORM_MODULES,
    PLATFORM_SELECTOR,
    ROOT_CONFIG,
    SELECTOR_KV_DTYPE,
)
from srcreview.vllm.runtime import PLATFORM_KEY

if TYPE_CHECKING:
    from srcreview.model.findings import Anchor

MODEL_REASON = "{name}: the model's attention layers pass it ({why})"
NOT_BOUND = "the model's config is not bound"


@dataclass(frozen=True)
class Test:
    """One test of the validating method, on a path the recipe decides up to it."""

    asks: tuple[str, ...]  # the predicates it calls (`supports_kv_cache_dtype`)
    outcome: str  # "refuses" (its decided side adds reasons) | "passes" | "open"
    anchor: Anchor  # the test's lines
    because: tuple[Anchor, ...] = ()  # the returns of those predicates reached under the recipe
    reasons: tuple[str, ...] = ()  # what it adds ("kv_cache_dtype not supported")
    # the config paths of the values its names hold (`block_size`: cache_config.block_size):
    # what a refusal of the recipe rests on
    reads: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class Admission:
    """The selector's answer for one backend under the recipe."""

    backend: str  # the registry Enum member
    cls: str | None  # the backend class (qualname), None when the Enum does not name one in the tree
    verdict: str  # "admits" | "refuses" | "undecided"
    tests: tuple[Test, ...] = ()
    open: tuple[str, ...] = ()  # what an undecided verdict depends on
    evidence: tuple = ()  # Anchors: the Enum member, the class, the validating method, its returns
    raises: bool | None = None  # an explicitly selected backend that is refused makes the platform raise
    raise_anchor: Anchor | None = None  # where that raise is
    arguments: tuple = ()  # (parameter, value text) the validating method was walked with
    reason: str = ""


@dataclass(frozen=True)
class SelectorCall:
    """What the selector hands the platform: the selector config's fields and the backend it names."""

    fields: dict
    backend: object
    evidence: tuple = ()
    open: tuple[str, ...] = ()


def admission(index, bindings: dict, member: str) -> Admission:
    """The selector's verdict on the backend the registry Enum names `member` (memoized per recipe)."""
    an = analyzer(index, bindings)
    memo = an.__dict__.setdefault("_admission", {})
    key = member.upper()
    if key not in memo:
        memo[key] = _admission(an, key)
    return memo[key]


def _admission(an, member: str) -> Admission:
    index = an.index
    enum = index.class_info(BACKEND_ENUM)
    if enum is None or enum.enum_members is None:
        return Admission(member, None, "undecided", reason=f"{BACKEND_ENUM} is not in the tree",
                         open=(f"{BACKEND_ENUM} is not in the tree",))
    path = next((v for n, v in enum.enum_members if n == member), None)
    if path is None:
        return Admission(member, None, "undecided", reason=f"{member} is not a member of {BACKEND_ENUM}",
                         open=(f"{member} is not a member of {BACKEND_ENUM}",))
    info = index.class_info(path) if isinstance(path, str) and path else None
    if info is None:
        why = f"{BACKEND_ENUM}.{member} names no class in the tree ({path!r})"
        return Admission(member, None, "undecided", reason=why, open=(why,))
    evidence: list = []
    method = info.methods.get(BACKEND_VALIDATE)
    if method is None:
        why = f"{info.symbol.local}.{BACKEND_VALIDATE} does not exist"
        return Admission(member, info.qualname, "undecided", reason=why, open=(why,), evidence=tuple(evidence))
    selector = selector_call(an)
    platform = _platform_walk(an, Const(EnumMember(enum.qualname, member)), selector)
    values = dict(selector.fields)
    values.update(platform.get("kwargs", {}))
    fn = index.function_at(method)
    frame = Frame(an, fn.module, fn.facts, method, ClassRef(info.qualname), _bound(fn.facts, values)).run()
    evidence.append(index.symbol_anchor(method, f"{_local(info.qualname)}.{BACKEND_VALIDATE}: the platform asks it"))
    evidence += selector.evidence
    truths = set()
    for r in frame.returns:
        truths.add(an.truth(r.value)[0])
    tests = _tests(an, frame)
    open_ = _open(frame)
    arguments = tuple(sorted((k, _show(an.force(v))) for k, v in values.items()))
    common = dict(backend=member, cls=info.qualname, arguments=arguments, raises=platform.get("raises"),
                  raise_anchor=platform.get("anchor"))
    if frame.raises:
        why = f"{_local(info.qualname)}.{BACKEND_VALIDATE} may raise under the recipe"
        return Admission(verdict="undecided", tests=tests, open=open_ + (why,), reason=why,
                         evidence=tuple(evidence), **common)
    if truths == {True}:
        evidence += [a for t in tests if t.outcome == "refuses" for a in (t.anchor, *t.because)]
        return Admission(verdict="refuses", tests=tests, evidence=tuple(evidence), **common)
    returns = [frame_anchor(index, frame, r.line, r.end_line, "returns") for r in frame.returns]
    if truths == {False}:
        evidence += [a.model_copy(update={"symbol": "return", "role": "returns no reason to refuse under the recipe"})
                     for a in returns]
        return Admission(verdict="admits", evidence=tuple(evidence), **common)
    why = "; ".join(open_) or "the reasons it returns are not known under the recipe"
    return Admission(verdict="undecided", tests=tests, open=open_ or (why,), reason=why,
                     evidence=tuple(evidence), **common)


def _open(frame) -> tuple[str, ...]:
    """What the walk left undecided: the values the model's layers pass, named once; every
    other condition with its reason; the env vars read as unset."""
    model: dict[str, list] = {}
    other: list = []
    for c in frame.assumptions:
        m = re.match(r"(\w+): the model's attention layers pass it \((.*)\)$", c.reason or "")
        if m:
            model.setdefault(m.group(2), []).append(m.group(1))
        else:
            other.append(f"if {c.text}" + (f" ({c.reason})" if c.reason else ""))
    out = [f"what the model's attention layers pass ({', '.join(dict.fromkeys(names))}): {why}"
           for why, names in model.items()]
    out += other
    out += [f"env {n} unset" for n in sorted(frame.env_reads)]
    return tuple(dict.fromkeys(out))


def _bound(fn, values: dict) -> dict:
    """The validating method's parameters bound to what the selector and platform pass; a
    parameter neither passes stays as its annotation types it (open)."""
    names = [p.name for p in fn.params][1:]  # after `cls`
    return {n: values[n] for n in names if n in values}


# ---------------------------------------------------------------------------------------------
# the selector and the platform


class _SelectorFrame(Frame):
    """The selector's own walk: the config it asks for (`get_current_vllm_config()`) is the
    target's, the root config; `typing.cast(T, x)` is `x`."""

    root: Obj | Unknown | None = None

    def call(self, e):
        if not e.args:
            callee = self.ev(e.func)
            if isinstance(callee, (Ref, FuncRef)) and _dotted(callee).rsplit(".", 1)[-1] == CURRENT_CONFIG:
                return self.root
        elif len(e.args) == 2 and not e.keywords:
            callee = self.force(self.ev(e.func))
            if isinstance(callee, External) and callee.name == "typing.cast":
                return self.ev(e.args[1])
        return super().call(e)

    _EV = {**Frame._EV, ir.Call: call}


def selector_call(an) -> SelectorCall:
    """What the selector passes the platform under the recipe (memoized per analyzer)."""
    memo = an.__dict__.setdefault("_admission", {})
    if "<selector>" not in memo:
        memo["<selector>"] = _selector_call(an)
    return memo["<selector>"]


def _selector_call(an) -> SelectorCall:
    from srcreview.interp.resolver import entry_function

    index = an.index
    try:
        symbol, _ = entry_function(index, ATTN_SELECTOR)
    except Exception as exc:  # noqa: BLE001 - absent or ambiguous: nothing is passed
        return SelectorCall({}, None, open=(f"the selector: {exc}",))
    root = index.find_one(ROOT_CONFIG, "class")
    fn = index.function_at(symbol)
    args = {}
    cache_dtype = _config_value(an, root, CACHE_DTYPE)
    evidence = [index.symbol_anchor(symbol, "the selector: what it passes the platform")]
    for p in fn.facts.params:
        if p.name == SELECTOR_KV_DTYPE:  # the target's attention layers pass the cache config's dtype
            args[p.name] = cache_dtype if isinstance(cache_dtype, Const) else Unknown(
                "kv_cache_dtype: cache_config.cache_dtype is not decided under the recipe (an unset or "
                "auto KV dtype may be resolved from the model's quantization config)")
        else:
            args[p.name], anchor = _layer_fact(an, root, p.name)
            evidence += [anchor] if anchor is not None else []
    frame = _SelectorFrame(an, fn.module, fn.facts, symbol, None, args)
    frame.root = Obj(cls=root.qualname, path=(), nonnull=True, origin="the current config") if root else \
        Unknown("the root config is not in the tree")
    frame.run()
    calls = [r.value for r in frame.returns if isinstance(r.value, LazyCall)]
    selectors = [v for c in calls for _, v in c.kwargs if isinstance(v, Derived)] + \
        [v for c in calls for v in c.args if isinstance(v, Derived)]
    if len({repr(s.overrides) for s in selectors}) != 1:
        return SelectorCall({}, None, open=("the selector's config could not be followed",))
    selector = selectors[0]
    fields = {k: v for k, v in selector.overrides}
    defaults = index.class_info(selector.cls)
    for f in (defaults.fields if defaults is not None else ()):
        if f.name not in fields:
            from srcreview.vllm.runtime import UNDECIDED, static_default

            value = static_default(index, defaults, f)
            if value is not UNDECIDED:
                fields[f.name] = Const(value)
    backend = next((v for c in calls for k, v in c.kwargs if k == "backend"), None)
    return SelectorCall(fields, backend, tuple(evidence))


def _layer_fact(an, root, name: str):
    """(value, anchor) of what the model's layers pass as `name`: the ModelConfig member that
    derives it (anchors.LAYER_FACTS) walked on the model's bound config; open otherwise."""
    from srcreview.vllm.models import MODELS_KEY

    member = LAYER_FACTS.get(name)
    if root is None or an.runtime.bindings.get(MODELS_KEY) is None:
        return Unknown(MODEL_REASON.format(name=name, why=NOT_BOUND)), None
    if member is None:
        return Unknown(MODEL_REASON.format(name=name, why="not derived from the model's config")), None
    model = an.force(an.resolver.attribute(Obj(cls=root.qualname, path=(), nonnull=True), MODEL_CONFIG_FIELD))
    info = an.index._class_info_abs(an.resolver.canonical(model.cls)) if isinstance(model, Obj) and \
        isinstance(model.cls, str) else None
    if info is None:
        return Unknown(MODEL_REASON.format(name=name, why=f"no {MODEL_CONFIG} in the tree")), None
    hf = an.force(an.resolver.attribute(model, HF_CONFIG))
    if isinstance(hf, Unknown):  # the model's config was not obtained: say that, not where the walk stops
        return Unknown(MODEL_REASON.format(name=name, why=hf.reason.removeprefix("model-config-unknown: "))), None
    attr = member.removesuffix("()")
    method = info.methods.get(attr)
    if member.endswith("()"):
        value = an.force(an.return_value(FuncRef(method.qualname, bound=model), (), ())) if method else \
            Unknown(f"{MODEL_CONFIG}.{attr} is not in the tree")
    else:
        value = an.force(an.resolver.attribute(model, attr))
    if not isinstance(value, Const):
        why = (f"{MODEL_CONFIG}.{member} is not decided on the model's config: "
               f"{getattr(value, 'reason', '') or 'unknown'}")
        return Unknown(MODEL_REASON.format(name=name, why=why)), None
    anchor = an.index.symbol_anchor(method,
                                    f"{name} = {value.value!r}: {MODEL_CONFIG}.{member} on the model's config") \
        if method is not None else None
    return value, anchor


def platform_selector(an):
    """The platform's `get_attn_backend_cls` for the recipe's platform (None when the tree has
    no single one)."""
    module = PLATFORM_MODULES.get(an.runtime.bindings.get(PLATFORM_KEY) or "")
    if module is None:
        return None
    found = [s for s in an.index.find(PLATFORM_SELECTOR, kind="function") if s.module == module]
    return found[0] if len(found) == 1 else None


def selector_value(selector: SelectorCall) -> Derived:
    """The selector config the platform receives, as a value: its fields are what the selector set."""
    return Derived(cls=None, nonnull=True, origin="the selector config", overrides=tuple(selector.fields.items()))


def _platform_walk(an, member, selector: SelectorCall) -> dict:
    """The platform's selector walked with `member` selected: the keywords it passes the
    validating method (besides the selector config), and whether refusal raises."""
    index = an.index
    symbol = platform_selector(an)
    if symbol is None:
        return {}
    fn = index.function_at(symbol)
    params = [p.name for p in fn.facts.params][1:]
    args = {params[0]: member} if params else {}
    if len(params) > 1:
        args[params[1]] = selector_value(selector)
    frame = Frame(an, fn.module, fn.facts, symbol, None, args).run()
    kwargs = {}
    for c in frame.calls:
        if c.text.split("(", 1)[0].endswith("." + BACKEND_VALIDATE):
            kwargs.update({k: v for k, v in c.kwargs})
    result_names = {t.id for s in ir.iter_statements(fn.facts.body) if isinstance(s, ir.Assign)
                    and isinstance(s.value, ir.Call) and isinstance(s.value.func, ir.Attr)
                    and s.value.func.attr == BACKEND_VALIDATE for t in s.targets if isinstance(t, ir.Name)}
    raises, anchor = False, None
    for r in frame.raises:
        if len(r.conditions) == 1 and r.conditions[0].taken is True and not r.in_loop \
                and result_names & set(re.findall(r"\w+", r.conditions[0].text)):
            raises = True
            anchor = _anchor(an, frame, r.line, r.end_line, "raise",
                             f"the platform raises for a selected backend that {BACKEND_VALIDATE} refuses")
            break
    return {"kwargs": kwargs, "raises": raises if result_names else None, "anchor": anchor}


def _config_value(an, root, path):
    """The value the engine's config holds at `path` (the recipe's, a hook's store, the default)."""
    if root is None:
        return None
    value = Obj(cls=root.qualname, path=(), nonnull=True)
    for name in path:
        value = an.force(an.resolver.attribute(value, name))
    return value


# ---------------------------------------------------------------------------------------------
# the reasons


def _tests(an, frame) -> tuple[Test, ...]:
    """Each test of the validating method on a path the recipe decides up to it: refused (its
    decided side adds reasons), passed, or open, with the predicates it asks."""
    decided = {(d.line, d.value) for d in frame.decisions}
    out = []

    def walk(body):
        for s in body:
            if not isinstance(s, ir.If):
                continue
            line, end = s.test.line, s.test.end_line
            asks = tuple(sorted({c.target.qualname.rsplit(".", 1)[-1] for c in frame.calls
                                 if line <= c.line <= end and isinstance(c.target, FuncRef)}))
            text = " ".join(s.text.split())
            taken = s.body if (line, True) in decided else s.orelse if (line, False) in decided else None
            named = asks[0] if asks else (re.findall(r"[A-Za-z_]\w*", text) or ["if"])[0]
            if taken is None:
                out.append(Test(asks, "open", _anchor(an, frame, line, end, named,
                                                      f"`{named}` undecided under the recipe (if {text})")))
                continue
            reasons = tuple(_reason_text(an, frame, x) for x in taken if isinstance(x, ir.ExprStmt))
            side = "true" if taken is s.body else "false"
            anchor = _anchor(an, frame, line, end, named, f"`{named}` decided {side} under the recipe (if {text})")
            because = _because(an, frame, line, end)
            out.append(Test(asks, "refuses" if reasons else "passes", anchor, because, reasons,
                            _held_paths(an, frame, text)))
            walk(taken)

    walk(frame.fn.body)
    return tuple(out)


def _held_paths(an, frame, text: str) -> tuple[tuple[str, ...], ...]:
    """The config paths of the values a test's names hold in the frame (a parameter bound to
    the recipe's `block_size`, a config object's field)."""
    out = []
    for name in dict.fromkeys(re.findall(r"(?<![\w.])[A-Za-z_]\w*", text)):
        if name not in frame.env:
            continue
        value = an.force(frame.env[name])
        path = value.path if isinstance(value, Obj) else value.origin if isinstance(value, Const) else None
        if isinstance(path, tuple) and path:
            out.append(tuple(path))
    return tuple(out)


def _reason_text(an, frame, stmt) -> str:
    """`reasons.append("x not supported")` -> "x not supported"; a name -> its value when known."""
    call = stmt.value
    if isinstance(call, ir.Call) and call.args:
        arg = call.args[0]
        if isinstance(arg, ir.Constant) and isinstance(arg.value, str):
            return arg.value
        if isinstance(arg, ir.Name):
            value = an.force(frame.env.get(arg.id, Unknown("")))
            if isinstance(value, Const) and isinstance(value.value, str):
                return value.value
    return " ".join(ir.text(stmt.value).split())


def _because(an, frame, line: int, end: int) -> tuple:
    """The returns reached, under the recipe, of each in-tree predicate the test calls."""
    out = []
    for c in frame.calls:
        if not (line <= c.line <= end) or not isinstance(c.target, FuncRef):
            continue
        callee = an.walk_call(c)
        if callee is None:
            continue
        symbol = callee.symbol
        owner = _local(symbol.qualname.rsplit(".", 1)[0]) if callee.fn.owner else ""
        name = f"{owner}.{symbol.local.rsplit('.', 1)[-1]}" if owner else symbol.local
        for r in callee.returns:
            value = an.force(r.value)
            shown = repr(value.value) if isinstance(value, Const) else "a value the recipe does not decide"
            when = "" if not r.conditions else " (on a path the recipe does not decide)"
            out.append(_anchor(an, callee, r.line, r.end_line, "return",
                               f"{name} returns {shown} under the recipe{when}"))
    return tuple(out)


def _anchor(an, frame, line: int, end: int, symbol: str, role: str):
    """An anchor on lines of a walked function, named by what those lines show."""
    return frame_anchor(an.index, frame, line, end, role).model_copy(update={"symbol": symbol})


def _dotted(ref) -> str:
    return ref.dotted if isinstance(ref, Ref) else ref.qualname


def _local(qualname: str) -> str:
    parts = qualname.split(".")
    return next((".".join(parts[i:]) for i, p in enumerate(parts) if p[:1].isupper()), parts[-1])


def _show(value) -> str:
    if isinstance(value, Const):
        return repr(value.value)
    if isinstance(value, Unknown):
        return "open"
    return type(value).__name__

