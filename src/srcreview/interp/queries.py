"""The questions the checks ask of the interpreter, each answered from one shared walk per
(index, bindings): which config fields a path reads (`field_reads`), what a dispatcher
which model runner the recipe selects (`model_runner`), and
what a function returns under the recipe (`evaluate_function`).
"""

from __future__ import annotations

from srcreview.core.errors import DataError
from srcreview.interp.interpreter import Frame, analyzer
from srcreview.interp.resolver import entry_function, self_class
from srcreview.interp.results import (
    FieldReads,
    Outcome,
    Read,
    RunnerDecision,
    Site,
    Trace,
    assumptions_of,
    frame_anchor,
    unique,
)
from srcreview.interp.values import ClassRef, Const, FuncRef, Obj, OneOf, Ref, Unknown
from srcreview.vllm.anchors import RUNNER_SELECTOR


def field_reads(index, source, field: str, bindings: dict | None = None, helpers: bool = True) -> FieldReads:
    """Reads of `Class.field` in the functions of a Trace (or given function qualnames).

    With `helpers` (the default), functions called from them (other than the trace's own
    hops and sink) that receive the config are inspected too, two calls deep: a helper that
    builds the draft config before the sink is where a field is applied. Constructors are
    not followed.
    """
    owner, _, name = field.rpartition(".")
    if not owner:
        raise DataError(f"{field!r}: expected Class.field")
    info = index.class_info(owner)
    if isinstance(source, Trace):
        contexts = list(source.contexts)
        bindings = dict(source.bindings) if bindings is None else bindings
        skip = {h.symbol for p in source.paths for h in p}
    else:
        contexts = []
        for q in source:
            contexts.append(tuple(x if i else x.qualname for i, x in enumerate(entry_function(index, q))))
        skip = {c[0] for c in contexts}
        bindings = bindings or {}
    if info is None or (info.field(name) is None and name not in info.methods):
        return FieldReads(field, (), (), tuple(dict.fromkeys(c[0] for c in contexts)), exists=False)
    an = analyzer(index, bindings)
    target = info.qualname
    target_path = an.runtime.config_path_for(target)
    matcher = _Matcher(index, an, target, target_path)

    reads, dynamic, functions = [], [], []
    queue = [(c, 0, None) for c in contexts]
    done = set()
    while queue:
        (qualname, self_cls), level, args = queue.pop(0)
        key = (qualname, self_cls, repr(args))
        if key in done:
            continue
        done.add(key)
        frame = an.summary(qualname, self_cls, args)
        functions.append(qualname)
        local = frame.symbol.local + ".<locals>."
        for nested in sorted(frame.module.functions):  # closures may run on the path too
            if nested.startswith(local) and ".<locals>." not in nested[len(local):]:
                queue.append(((f"{frame.module.module}.{nested}", self_cls), level, None))
        for r in frame.reads:
            if r.attr != name:
                continue
            if matcher.is_instance(r.receiver):
                reads.append(Read(field, qualname, r.kind, frame_anchor(index, frame, r.line, r.end_line, "read"),
                                  r.text, r.line))
            elif matcher.untyped(r.receiver):
                # `.field` on a value of unknown type may be this field: never counted as absent
                dynamic.append(Site("untyped-read", r.text, qualname,
                                    frame_anchor(index, frame, r.line, r.end_line, "untyped-read")))
        for d in frame.dynamic:
            if matcher.may_hold(d.receiver):
                dynamic.append(Site(d.kind, d.text, qualname, frame_anchor(index, frame, d.line, d.end_line, d.kind)))
        for c in frame.calls:
            carries = any(matcher.may_contain(a) for a in c.args) or _on_self(c.target)
            if c.status in ("unresolved", "external") and carries:
                kind = "unresolved-call"
                dynamic.append(Site(kind, f"{c.text}: {c.reason}", qualname,
                                    frame_anchor(index, frame, c.line, c.end_line, kind)))
            elif helpers and c.status == "static" and carries and level < 2:
                callee = c.target
                if isinstance(callee, Ref):
                    callee = an.force(callee)
                if isinstance(callee, FuncRef):
                    symbol = index.resolve(callee.qualname)
                    if symbol is not None and symbol.kind == "function" and symbol.qualname not in skip:
                        self_cls = an.resolver.canonical(callee.bound.cls) \
                            if isinstance(callee.bound, Obj) and callee.bound.cls else None
                        queue.append(((symbol.qualname, self_cls or self_class(index, symbol)), level + 1,
                                      _call_args(index, symbol, c.args)))
    reads = sorted(set(reads), key=lambda r: (r.anchor.path, r.line, r.kind, r.function))
    return FieldReads(field, tuple(reads), unique(dynamic), tuple(dict.fromkeys(functions)))


def _on_self(target) -> bool:
    """A method called on `self`: it sees every config the object holds."""
    return isinstance(target, FuncRef) and isinstance(target.bound, Obj) and target.bound.origin == "self"


def _call_args(index, symbol, args):
    """Positional call arguments mapped onto the callee's parameters (keywords are kept by position too)."""
    fn = index.module(symbol.module).functions[symbol.local]
    params = [p for p in fn.params if p.kind == "positional"]
    if fn.owner and not fn.is_staticmethod and params:
        params = params[1:]
    return {p.name: a for p, a in zip(params, args) if isinstance(a, (Obj, Const))}


class _Matcher:
    """Whether an abstract value is (or may hold) an instance of the field's class."""

    def __init__(self, index, an, target: str, target_path):
        self.index = index
        self.an = an
        self.target = target
        self.target_path = target_path

    def is_instance(self, value) -> bool:
        if not isinstance(value, Obj):
            return False
        cls = self.an.resolver.canonical(value.cls) if value.cls else None
        if cls is not None:
            return self.index.subclass_of(cls, self.target) or self.index.subclass_of(self.target, cls)
        return self.target_path is not None and value.path == self.target_path

    def untyped(self, value) -> bool:
        if isinstance(value, Obj):
            if value.path is not None:
                return False
            return value.cls is None or (isinstance(value.cls, tuple) and self.an.resolver.canonical(value.cls) is None)
        return isinstance(value, (Unknown, OneOf))

    def may_hold(self, value) -> bool:
        """Dynamic access on `value` may touch the field: it is the class, or its type is unknown."""
        if self.is_instance(value):
            return True
        if isinstance(value, Obj):
            return self.untyped(value)
        return not isinstance(value, (Const, ClassRef, FuncRef))

    def may_contain(self, value) -> bool:
        """`value` is the class or a config that holds it (VllmConfig for a nested config)."""
        if self.is_instance(value):
            return True
        if isinstance(value, Obj) and value.path is not None and self.target_path is not None:
            return self.target_path[: len(value.path)] == value.path
        return False


# ---------------------------------------------------------------------------------------------


def model_runner(index, bindings: dict) -> RunnerDecision:
    """v1 or v2, from VllmConfig.use_v2_model_runner evaluated under the bindings."""
    try:
        symbol = index.find_one(RUNNER_SELECTOR, "function")
    except DataError as exc:
        return RunnerDecision(None, str(exc))
    if symbol is None:
        return RunnerDecision(None, f"{RUNNER_SELECTOR} does not exist at {index.tree.revision.label()}")
    an = analyzer(index, bindings)
    frame = an.summary(symbol.qualname, self_class(index, symbol))
    outcomes = []
    for r in frame.returns:
        truth, reason = an.truth(r.value)
        outcomes.append((truth, reason, r))
    evidence = [index.symbol_anchor(symbol, "runner-selection")]
    evidence += [frame_anchor(index, frame, d.line, d.end_line, "decided") for d in frame.decisions]
    assumptions = tuple(assumptions_of(index, frame))
    env_notes = [f"env {k}: not set by the recipe, taken as unset" for k in sorted(frame.env_reads)]
    values = {t for t, _, _ in outcomes}
    if outcomes and values <= {True} or values <= {False} and outcomes:
        value = "v2" if values == {True} else "v1"
        returns = [r for _, _, r in outcomes]
        evidence += [frame_anchor(index, frame, r.line, r.end_line, "returns") for r in returns]
        decided = "; ".join(f"{d.text} -> {d.value}" for d in frame.decisions)
        reason = f"use_v2_model_runner returns {values.pop()} ({decided or 'unconditionally'})"
        if env_notes:
            reason += "; " + "; ".join(env_notes)
        return RunnerDecision(value, reason, tuple(evidence), assumptions)
    depends = [a.text + (f" ({a.reason})" if a.reason else "") for a in assumptions if not a.text.startswith("env ")]
    undecided_returns = [reason for t, reason, _ in outcomes if t is None and reason]
    parts = depends or undecided_returns or ["no return reached"]
    reason = "runner depends on: " + "; ".join(dict.fromkeys(parts))
    if env_notes:
        reason += "; " + "; ".join(env_notes)
    evidence += [frame_anchor(index, frame, r.line, r.end_line, "returns") for _, _, r in outcomes]
    return RunnerDecision(None, reason, tuple(evidence), assumptions)


def evaluate_function(index, function: str, bindings: dict, args: dict | None = None) -> Outcome:
    """The value a function returns under the bindings and the given argument values.

    `decided` only when every feasible path returns that same constant and none raises; the
    raise statements reachable under the bindings are listed either way.
    """
    symbol, self_cls = entry_function(index, function)
    an = analyzer(index, bindings)
    values = {k: (v if isinstance(v, (Obj, Const, Unknown)) else Const(v)) for k, v in (args or {}).items()}
    info = index.function_at(symbol)
    self_obj = Obj(cls=self_cls, nonnull=True, path=an.runtime.config_path_for(self_cls)) if self_cls else None
    platform_before = an.runtime.platform_calls
    frame = Frame(an, info.module, info.facts, symbol, self_obj, values).run()
    truths = []
    for r in frame.returns:
        v = an.force(r.value)
        truths.append(v)
    value, decided = None, False
    if truths and all(isinstance(v, Const) for v in truths) and len({repr(v.value) for v in truths}) == 1:
        value = truths[0].value
        decided = not frame.raises  # a reachable raise is another outcome: not decided
    raises = tuple(Site("raise", r.text, symbol.qualname, frame_anchor(index, frame, r.line, r.end_line, "raise"))
                   for r in frame.raises)
    returns = tuple(frame_anchor(index, frame, r.line, r.end_line, "returns") for r in frame.returns)
    certain = tuple(Site("raise", r.text, symbol.qualname, frame_anchor(index, frame, r.line, r.end_line, "raise"))
                    for r in frame.raises if not r.conditions and not r.in_loop)
    branches = sorted({(d.line, d.value) for d in frame.decisions} | {(c.line, None) for c in frame.assumptions},
                      key=lambda b: (b[0], repr(b[1])))
    return Outcome(value=value, decided=decided, raises=raises, assumptions=tuple(assumptions_of(index, frame)),
                   returns=returns, certain_raises=certain, branches=tuple(branches),
                   platform=an.runtime.platform_calls > platform_before)
