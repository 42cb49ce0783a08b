"""Speculative decoding as the engine sets it up: which component the runner builds, whether it
loads a draft model, and what config the draft model is built with.

Every answer is derived by interpreting the source under the recipe; only the anchor points
are named, once, among vLLM's names (srcreview.vllm.anchors.RUNNERS): the runner class of
each model runner, the attribute holding its speculative component, its model-loading method,
and the model loader (`get_model`).

- `component(an, runner)`: the classes the runner's `__init__` may store in that attribute,
  following calls to in-tree functions through their returns (the V2 `init_speculator`) and
  if/elif chains (the V1 `self.drafter = ...`), each with the undecided conditions it needs.
  A store of a value the analysis cannot type leaves the set open.
- `draft_loading(an, runner, cls)`: the runner's load method walked with that component bound;
  the component methods it calls (`self.drafter.load_model(...)`, only if `hasattr`/`isinstance`
  guards let it) are followed to the model loader. No call, or no path to the loader with
  every call resolved: the component loads no draft model.
- `draft_value(an, loading, path)`: the config the loader receives (`get_model(vllm_config=X)`),
  re-walked hop by hop with the arguments each call passes, and the value at a config path of
  it: where it comes from (the target's field, the nested speculative field, a constant).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from srcreview.index import ir
from srcreview.interp.events import Condition
from srcreview.interp.results import Assumption, Hop, Site, Trace, frame_anchor
from srcreview.interp.values import (
    ClassRef,
    Const,
    Derived,
    FuncRef,
    LazyCall,
    Obj,
    Ref,
    Rewritable,
    Union,
    Unknown,
)
from srcreview.model.findings import Anchor
from srcreview.vllm.anchors import REINIT_HOOK, RUNNERS, SPECULATIVE

COMPONENT_ORIGIN = "the speculative component"
Source = Literal["nested", "target", "fixed", "undecided"]  # where the draft's value comes from


@dataclass(frozen=True)
class Candidate:
    cls: str  # canonical qualname of the class built
    site: Anchor  # where it is built (the store or the return)
    conditions: tuple[Assumption, ...]  # undecided conditions it needs (empty: the recipe decides it)


@dataclass(frozen=True)
class Component:
    """The classes a runner may build as its speculative component under the recipe."""

    runner: str
    attribute: str
    candidates: tuple[Candidate, ...] = ()
    open: tuple[Site, ...] = ()  # stores the analysis could not type: the set is not closed
    missing: tuple[str, ...] = ()  # runner symbols absent at this revision
    anchor: Anchor | None = None  # the runner's __init__


@dataclass(frozen=True)
class Loading:
    """How a component loads its draft model (if it does)."""

    cls: str
    loads: bool | None  # None: undecided
    reason: str
    guard: tuple[Anchor, ...] = ()  # the runner's load method and the call (or guard) deciding it
    entries: tuple[str, ...] = ()  # component methods the runner calls to load it
    trace: Trace | None = None  # from the first entry to the model loader
    open: tuple[Site, ...] = ()


@dataclass(frozen=True)
class DraftValue:
    """The value at a config path of the config the draft model is built with."""

    source: Source
    value: object  # the abstract value
    text: str  # what it is, for messages
    hops: tuple[Hop, ...] = ()  # the calls followed to the loader
    sink_call: Anchor | None = None
    reason: str = ""
    reinit: str = ""  # the draft's config is a copy whose post-init hooks run again (why)
    possible: tuple[str, ...] = ()  # the sources it may be (one when decided; several when a hook may rewrite it)


# -- the component -----------------------------------------------------------------------------


def component(an, runner: str) -> Component:

    index = an.index
    module, cls_name, attribute, _ = RUNNERS[runner]
    cls = _class(index, f"{module}.{cls_name}")
    init = cls.methods.get("__init__") if cls is not None else None
    if init is None:
        return Component(runner, attribute, missing=(f"{cls_name}.__init__ ({module})",))
    frame = an.frame_for(init.qualname, Obj(cls=cls.qualname, nonnull=True, origin="self"))
    candidates: list[Candidate] = []
    open_sites: list[Site] = []
    for store in frame.stores:
        if store.attr != attribute or not (isinstance(store.receiver, Obj) and store.receiver.origin == "self"):
            continue
        site = frame_anchor(index, frame, store.line, store.end_line, f"stores {attribute}")
        conds = _assumptions(index, frame, store.conditions)
        for found in _classes(an, store.value, site, conds, depth=0):
            if isinstance(found, Site):
                open_sites.append(found)
            elif all(found.cls != c.cls for c in candidates):
                candidates.append(found)
    return Component(runner, attribute, tuple(candidates), tuple(open_sites),
                     anchor=index.symbol_anchor(init, "runner"))


def returned_classes(an, function: str) -> tuple[list[Candidate], list[Site]]:
    """The classes a function may return instances of under the recipe (a dispatcher such as
    init_speculator), each with the undecided conditions it needs, and the returns it cannot
    type."""
    from srcreview.interp.resolver import entry_function

    symbol, self_cls = entry_function(an.index, function)
    value = LazyCall(FuncRef(symbol.qualname), (), (), function)
    site = an.index.symbol_anchor(symbol, "dispatcher")
    found = _classes(an, value, site, (), depth=0)
    return [c for c in found if isinstance(c, Candidate)], [s for s in found if isinstance(s, Site)]


def _classes(an, value, site: Anchor, conds: tuple, depth: int):
    """The classes a stored or returned value may be an instance of (Candidates), or Sites where
    it cannot be told."""
    index = an.index
    if isinstance(value, Const) and value.value is None:
        return []
    if isinstance(value, Union):
        return [c for option in value.options for c in _classes(an, option, site, conds, depth)]
    target = value.target if isinstance(value, LazyCall) else None
    if isinstance(target, Ref):
        target = an.force(target)
    if isinstance(target, ClassRef) or (isinstance(value, Derived) and value.origin.endswith("(...)")):
        qual = target.qualname if isinstance(target, ClassRef) else an.resolver.canonical(value.cls)
        if qual:
            return [Candidate(qual, site, conds)]
    if isinstance(target, FuncRef) and depth < 3:
        symbol = index.resolve(target.qualname)
        if symbol is not None and symbol.kind == "function":
            fn = index.function_at(symbol).facts
            self_obj, bound = an.bind_arguments(fn, target.bound, value.args, value.kwargs)
            frame = an.frame_for(symbol.qualname, self_obj, bound)
            out = []
            for ret in frame.returns:
                at = frame_anchor(index, frame, ret.line, ret.end_line, "returns")
                out += _classes(an, ret.value, at, conds + _assumptions(index, frame, ret.conditions), depth + 1)
            return out
    why = value.reason if isinstance(value, Unknown) else f"a value of type {type(value).__name__}"
    return [Site("unresolved-call", f"the component stored here is not typed: {why}", "", site)]


# -- loading -----------------------------------------------------------------------------------


def draft_loading(an, runner: str, cls: str, sink: str, max_depth: int = 8) -> Loading:
    from srcreview.interp.callgraph import trace

    index = an.index
    module, cls_name, attribute, load = RUNNERS[runner]
    runner_cls = _class(index, f"{module}.{cls_name}")
    method = runner_cls.methods.get(load) if runner_cls is not None else None
    if method is None:
        return Loading(cls, None, f"{cls_name}.{load} does not exist at this revision")
    part = Obj(cls=cls, nonnull=True, origin=COMPONENT_ORIGIN)
    runner_obj = Derived(cls=runner_cls.qualname, nonnull=True, origin="self", overrides=((attribute, part),))
    frame = an.frame_for(method.qualname, runner_obj)
    guard = [index.symbol_anchor(method, "loads the models")]
    calls = [c for c in frame.calls if isinstance(c.target, FuncRef) and isinstance(c.target.bound, Obj)
             and c.target.bound.origin == COMPONENT_ORIGIN]
    short = cls.rsplit(".", 1)[-1]
    if not calls:
        undecided = [c for c in frame.assumptions if attribute in c.text]
        if undecided:
            return Loading(cls, None, f"whether {load} calls the {short} depends on `{undecided[0].text}`",
                           tuple(guard + [frame_anchor(index, frame, undecided[0].line, undecided[0].end_line,
                                                       "undecided")]))
        decided = [d for d in frame.decisions if attribute in d.text]
        guard += [frame_anchor(index, frame, d.line, d.end_line, f"decides: {d.text} -> {d.value}") for d in decided]
        return Loading(cls, False, f"{cls_name}.{load} never calls a method of {short}: it loads no draft model",
                       tuple(guard))
    entries = []
    for call in calls:
        guard.append(frame_anchor(index, frame, call.line, call.end_line, f"calls {call.text}"))
        entries.append(call.target.qualname)
    t = trace(index, entries[0], an.runtime.bindings, sink=sink, max_depth=max_depth, self_cls=cls)
    if t.found_sink:
        return Loading(cls, True, f"{short} builds its draft model through {sink}", tuple(guard), tuple(entries), t)
    blind = tuple(t.unresolved) + tuple(t.dynamic)
    if blind:
        return Loading(cls, None, f"{sink} is not reached from {entries[0].rsplit('.', 2)[-2]}."
                       f"{entries[0].rsplit('.', 1)[-1]}, but calls on the way are not resolved",
                       tuple(guard), tuple(entries), t, blind)
    return Loading(cls, False, f"no path from {entries[0].rsplit('.', 1)[-1]} of {short} reaches {sink}: "
                   "it loads no draft model", tuple(guard), tuple(entries), t)


# -- the draft's config ------------------------------------------------------------------------


def draft_value(an, loading: Loading, argument: str, path: tuple[str, ...], top_key: str | None) -> DraftValue:
    """The value at `path` of the `argument` the loader receives on the first path found."""
    index = an.index
    t = loading.trace
    if t is None or not t.paths:
        return DraftValue("undecided", None, "", reason="no path to the model loader")
    hops = t.paths[0]
    self_obj = Obj(cls=loading.cls, nonnull=True, origin=COMPONENT_ORIGIN)
    frame = an.frame_for(hops[0].symbol, self_obj)
    passed = None
    sink_call = None
    for hop in hops[1:]:
        call = next((c for c in frame.calls if c.line == hop.call_line and _calls(an, c, hop.symbol)), None)
        if call is None:
            return DraftValue("undecided", None, "", hops, reason=f"the call of {hop.symbol} is not found")
        if hop is hops[-1]:
            passed = call.argument(argument)
            sink_call = frame_anchor(index, frame, call.line, call.end_line, f"passes {argument}")
            if path and call.argument(path[0]) is not None:  # `get_model(vllm_config=x, model_config=y)`
                return DraftValue("undecided", None, "", hops, sink_call,
                                  f"the loader passes {path[0]} apart from {argument}: the draft's {'.'.join(path)} "
                                  "comes from that argument, which is not followed")
            break
        symbol = index.resolve(hop.symbol)
        fn = index.function_at(symbol).facts
        receiver = call.target.bound if isinstance(call.target, FuncRef) else None
        positional = call.args[: len(call.args) - len(call.kwargs)]
        callee_self, bound = an.bind_arguments(fn, receiver, positional, call.kwargs)
        frame = an.frame_for(hop.symbol, callee_self, bound)
    if passed is None:
        return DraftValue("undecided", None, "", hops, sink_call, f"the loader is not passed {argument}")
    value = _forced(an, passed)
    reinit = _reinit(value)
    for name in path:
        value = _read(an, value, name)
    source, text, reason = classify(value, path, top_key)
    possible = (source,) if source != "undecided" else ()
    if isinstance(value, Rewritable):  # the base value, unless a post-init hook of the copy rewrites it
        base, text, _ = classify(value.base, path, top_key)
        hooks = rewriters(an, path)
        if not hooks:  # no architecture hook may store that field under the recipe
            return DraftValue(base, value.base, text, hops, sink_call, "", reinit,
                              (base,) if base != "undecided" else ())
        possible = tuple(sorted({base, "fixed"})) if base != "undecided" else ()
        shown = ", ".join(q.rsplit(".", 2)[-2] for q in hooks[:3]) + (" ..." if len(hooks) > 3 else "")
        reinit = f"{reinit} ({shown} may store {'.'.join(path)})"
        text = f"{text}, unless an architecture hook rewrites it" if base != "undecided" else ""
    return DraftValue(source, value, text, hops, sink_call, reason, reinit, possible)


def rewriters(an, path: tuple[str, ...]) -> list[str]:
    """The architecture hooks (REINIT_HOOK) that may store `path` of the config they are given,
    under the recipe: each walked with its config parameter bound to the recipe's config; a
    store it reaches (on any path the recipe leaves open) counts."""

    def compute():
        index = an.index
        attr = path[-1]
        found = []
        hook_files = set(index.grep(f"def {REINIT_HOOK}"))
        for file in index.grep_re(rf"\.{attr}\s*=[^=]", literal=f".{attr}"):
            if file not in hook_files:
                continue
            module = index.module(file, allow_unparsable=True)
            if module.parse_error:  # a hook there cannot be ruled out: it may store the field
                found.append(f"{file} (does not parse)")
                continue
            for fn in module.functions.values():
                qualname = f"{module.module}.{fn.qualname}"
                if fn.name != REINIT_HOOK:
                    # a helper of the hooks: counted when it stores the field at all (whether a
                    # hook calls it is not followed)
                    if any(isinstance(t, ir.Attr) and t.attr == attr for st in ir.iter_statements(fn.body)
                           if isinstance(st, ir.Assign) for t in st.targets):
                        found.append(qualname)
                    continue
                frame = an.frame_for(qualname, None)
                if any(s.attr == attr and (s.path is None or s.path == tuple(path)) for s in frame.stores):
                    found.append(qualname)
        return sorted(found)

    cache = an.__dict__.setdefault("_rewriters", {})
    if path not in cache:
        cache[path] = compute()
    return cache[path]


def _forced(an, value):
    value = an.force(value)
    if isinstance(value, Union):
        return Union(tuple(_forced(an, o) for o in value.options))
    return value


def _read(an, value, name: str):
    """`value.name`, each option of a union read on its own (equal values from different
    fields stay apart: where a value comes from is the question)."""
    if isinstance(value, Union):
        return Union(tuple(_read(an, o, name) for o in value.options))
    return _forced(an, an.resolver.attribute(value, name))


def _reinit(value) -> str:
    if isinstance(value, Union):
        return next((r for r in (_reinit(o) for o in value.options) if r), "")
    return value.reinit if isinstance(value, Derived) else ""


def classify(value, path: tuple[str, ...], top_key: str | None) -> tuple[Source, str, str]:
    """Where a value comes from: the nested speculative field, the target's own value (its
    config path, or the engine key that lands there), a constant, or undecided (with why)."""
    if isinstance(value, Union):
        found = {classify(o, path, top_key) for o in value.options}
        sources = {f[0] for f in found}
        if len(sources) == 1:
            return sources.pop(), " or ".join(sorted(f[1] for f in found)), ""
        return "undecided", "", "the value differs between branches the recipe leaves open"
    nested = (SPECULATIVE, top_key) if top_key else None
    if isinstance(value, Const):
        if value.origin is not None and value.origin == nested:
            return "nested", f"{SPECULATIVE}.{top_key} ({_show(value.value)})", ""
        if value.origin is not None and (value.origin == tuple(path) or value.origin == (top_key,)):
            return "target", f"the target's {'.'.join(path)} ({_show(value.value)})", ""
        if value.origin is not None:
            return "fixed", f"{'.'.join(value.origin)} ({_show(value.value)})", ""
        return "fixed", f"the constant {_show(value.value)}", ""
    if isinstance(value, Obj) and value.path is not None and not isinstance(value, Derived):
        if value.path == nested:
            return "nested", f"{SPECULATIVE}.{top_key}", ""
        if value.path == tuple(path):
            return "target", f"the target's {'.'.join(path)}", ""
    if isinstance(value, Unknown):
        return "undecided", "", value.reason
    return "undecided", "", "the value at that field is not known statically"


def _show(value) -> str:
    from srcreview.interp.values import EnumMember

    return value.name if isinstance(value, EnumMember) else repr(value)


def _calls(an, call, qualname: str) -> bool:
    target = call.target
    if isinstance(target, Ref):
        target = an.force(target)
    return isinstance(target, FuncRef) and (target.qualname == qualname
                                            or qualname.endswith("." + target.qualname.rsplit(".", 1)[-1]))


def _assumptions(index, frame, conditions) -> tuple[Assumption, ...]:
    return tuple(Assumption(c.text, frame.symbol.qualname, frame_anchor(index, frame, c.line, c.end_line, "assumption"),
                            c.reason, c.taken) for c in conditions if isinstance(c, Condition))


def _class(index, qualname: str):
    return index._class_info_abs(qualname)


def inherited_model_fields(index) -> frozenset[str]:
    """The target ModelConfig fields the draft's own ModelConfig is built with: the keywords of a
    `ModelConfig(...)` call in a SpeculativeConfig method whose value is `self.target_model_config.
    <field>` (`dtype=self.target_model_config.dtype`). A top-level key that lands on such a
    field reaches the draft though speculative_config has no key of that name."""
    from srcreview.core.errors import DataError
    from srcreview.vllm.anchors import MODEL_CONFIG, SPECULATIVE_CLASS, TARGET_MODEL_CONFIG

    try:
        info = index.class_info(SPECULATIVE_CLASS)
    except DataError:
        return frozenset()
    out: set[str] = set()
    for method in (info.methods.values() if info is not None else ()):
        fn = index.function(method.qualname)
        for call in (ir.iter_calls(fn.facts.body) if fn is not None else ()):
            if (ir.dotted(call.func) or "").split(".")[-1] != MODEL_CONFIG:
                continue
            for kw in call.keywords:
                value = kw.value
                if kw.name and isinstance(value, ir.Attr) and isinstance(value.value, ir.Attr) \
                        and value.value.attr == TARGET_MODEL_CONFIG and isinstance(value.value.value, ir.Name) \
                        and value.value.value.id == "self":
                    out.add(value.attr)
    return frozenset(out)
