"""Entry points of the graph analysis (see the package docstring)."""

from __future__ import annotations

from srcreview.errors import DataError
from srcreview.graph.analyzer import Analyzer, Frame
from srcreview.graph.model import (
    Assumption,
    Candidate,
    Dispatch,
    FieldReads,
    Hop,
    Outcome,
    Read,
    RunnerDecision,
    Site,
    Trace,
)
from srcreview.index import ir
from srcreview.graph.values import ClassRef, Const, FuncRef, LazyCall, Obj, OneOf, Ref, Unknown

DEFAULT_DEPTH_TO_SINK = 6
DEFAULT_DEPTH_TREE = 2
MAX_PATHS = 50


def analyzer(index, bindings: dict) -> Analyzer:
    """One Analyzer per (index, bindings): walks are shared by every question asked with them."""
    cache = index.__dict__.setdefault("_analyzers", {})
    key = tuple(sorted((k, repr(v)) for k, v in bindings.items()))
    if key not in cache:
        cache[key] = Analyzer(index, bindings)
    return cache[key]


def _function_symbol(index, name: str):
    return _entry(index, name)[0]


def _entry(index, name: str):
    """(function symbol, class of self) for a qualified-name suffix; `Class.method` may be inherited."""
    symbol = index.find_one(name, "function")
    if symbol is not None:
        return symbol, _self_class(index, symbol)
    owner, _, method = name.rpartition(".")
    if owner:
        info = index.class_info(owner)
        if info is not None and method in info.methods:
            return info.methods[method], info.qualname
    raise DataError(f"{name}: no such function at {index.tree.revision.label()}")


def _self_class(index, symbol) -> str | None:
    fn = index.module(symbol.module).functions[symbol.local]
    if fn.owner and not fn.is_staticmethod:
        return f"{symbol.module}.{fn.owner}"
    return None


class _SinkMatcher:
    """A sink named by qualified-name suffix; matched on the nodes reached, without a whole-tree search."""

    def __init__(self, sink: str | None):
        self.sink = sink

    def __contains__(self, qualname: str) -> bool:
        return bool(self.sink) and (qualname == self.sink or qualname.endswith("." + self.sink))


class _Explorer:
    """Breadth-first walk of the call graph from an entry, one call level at a time."""

    def __init__(self, index, an: Analyzer, sink: str | None):
        import networkx as nx

        self.index = index
        self.an = an
        self.graph = nx.DiGraph()
        self.sink = sink
        self.sink_last = sink.split(".")[-1] if sink else None
        self.sinks = _SinkMatcher(sink)

    def targets(self, event, lazy: bool):
        """Graph nodes a call event leads to; with `lazy`, static imports are resolved only if they may be the sink."""
        target = event.target
        if isinstance(target, Ref):
            if lazy and target.dotted.split(".")[-1] != self.sink_last:
                return None
            target = self.an.force(target)
        if isinstance(target, FuncRef):
            symbol = self.index.resolve(target.qualname)
            if symbol is None or symbol.kind != "function":
                return []
            self_cls = None
            if isinstance(target.bound, Obj) and target.bound.cls:
                self_cls = self.an.canonical(target.bound.cls)
            elif isinstance(target.bound, ClassRef):
                self_cls = target.bound.qualname
            if self_cls is None:
                self_cls = _self_class(self.index, symbol)
            return [((symbol.qualname, self_cls), target.via)]
        if isinstance(target, ClassRef):
            if target.qualname in self.sinks:
                return [((target.qualname, None), "init")]
            info = self.index._class_info_abs(target.qualname)
            if info is None:
                return []
            out = []
            for name in ("__init__", "__post_init__"):
                method = info.methods.get(name)
                if method is not None:
                    out.append(((method.qualname, target.qualname), "init"))
            return out
        return []

    def explore(self, start, max_depth: int):
        self.graph.add_node(start)
        level = [start]
        seen = {start}
        found = set()
        depth = 0
        for depth in range(1, max_depth + 1):
            pending = []
            for node in level:
                frame = self.an.summary(node[0], node[1])
                for event in frame.calls:
                    if event.status == "static":
                        pending.append((node, event))
            resolved = []
            for node, event in pending:
                targets = self.targets(event, lazy=bool(self.sink))
                resolved.append((node, event, targets))
                for target, _ in targets or ():
                    if target[0] in self.sinks:
                        found.add(target)
            if found:
                for node, event, targets in resolved:
                    for target, via in targets or ():
                        if target in found:
                            self._edge(node, target, event, via)
                break
            next_level = []
            for node, event, targets in resolved:
                if targets is None:
                    targets = self.targets(event, lazy=False)
                for target, via in targets:
                    self._edge(node, target, event, via)
                    if target not in seen and target[0] not in self.sinks:
                        seen.add(target)
                        if self.index.resolve(target[0]).kind == "function":
                            next_level.append(target)
            level = sorted(next_level)
            if not level:
                break
        return found, depth

    def _edge(self, caller, callee, event, via):
        if self.graph.has_edge(caller, callee):
            return
        self.graph.add_edge(caller, callee, line=event.line, end_line=event.end_line, via=via, text=event.text)


def trace(index, entry: str, bindings: dict, sink: str | None = None, max_depth: int | None = None) -> Trace:
    """Feasible call paths from `entry` (to `sink`, if given) with the recipe's values bound."""
    import networkx as nx

    entry_symbol, entry_self = _entry(index, entry)
    an = analyzer(index, bindings)
    explorer = _Explorer(index, an, sink)
    start = (entry_symbol.qualname, entry_self)
    depth_limit = max_depth if max_depth is not None else (DEFAULT_DEPTH_TO_SINK if sink else DEFAULT_DEPTH_TREE)
    found, depth = explorer.explore(start, depth_limit)
    graph = explorer.graph

    if sink:
        node_paths = []
        for target in sorted(found):
            for path in nx.all_simple_paths(graph, start, target, cutoff=depth_limit + 1):
                node_paths.append(tuple(path))
                if len(node_paths) >= MAX_PATHS:
                    break
        inspected = sorted({n for p in node_paths for n in p[:-1]})
    else:
        tree = nx.bfs_tree(graph, start)
        leaves = sorted(n for n in tree.nodes if tree.out_degree(n) == 0)
        node_paths = [tuple(nx.shortest_path(tree, start, leaf)) for leaf in leaves][:MAX_PATHS * 4]
        inspected = sorted(n for n in graph.nodes if _is_function(index, n[0]))
        if not node_paths:
            node_paths = [(start,)]
    node_paths.sort()

    paths = tuple(tuple(_hops(index, graph, path)) for path in node_paths)
    assumptions, unresolved, dynamic = [], [], []
    for node in inspected:
        frame = an.summary(node[0], node[1])
        assumptions.extend(_assumptions(index, frame))
        unresolved.extend(_unresolved(index, frame))
        dynamic.extend(_dynamic(index, frame))
    inspected_names = {n[0] for n in inspected}
    for u, v, d in graph.edges(data=True):
        if u[0] in inspected_names and _is_abstract(index, v[0]):
            caller = index.resolve(u[0])
            unresolved.append(Site("virtual-call", f"{d['text']}: {v[0].rsplit('.', 2)[-2]}.{v[0].rsplit('.', 1)[-1]} "
                                   "is abstract here; the override that runs depends on the run-time class",
                                   u[0], index.anchor(caller.path, d["line"], d["end_line"], caller.qualname, "virtual-call")))
    edges = tuple(sorted((u[0], v[0], d["line"], d["via"]) for u, v, d in graph.edges(data=True)))
    return Trace(
        entry=entry_symbol.qualname, sink=sink, bindings=tuple(sorted(bindings.items(), key=lambda kv: kv[0])),
        paths=paths, functions=tuple(dict.fromkeys(n[0] for n in inspected)),
        reachable=tuple(sorted({n[0] for n in graph.nodes})),
        assumptions=_unique(assumptions), unresolved=_unique(unresolved), dynamic=_unique(dynamic),
        found_sink=bool(found), contexts=tuple(inspected), edges=edges, depth=depth,
    )


def _is_abstract(index, qualname: str) -> bool:
    """A method whose body only raises NotImplementedError (or is `...`/pass/docstring) or is abstract."""
    symbol = index.resolve(qualname)
    if symbol is None or symbol.kind != "function":
        return False
    fn = index.module(symbol.module).functions[symbol.local]
    if fn.owner is None:
        return False
    if any(d.split(".")[-1] == "abstractmethod" for d in fn.decorators):
        return True
    body = [s for s in fn.body if not (isinstance(s, ir.ExprStmt) and isinstance(s.value, ir.Constant))]
    if not body:
        return True
    if len(body) == 1 and isinstance(body[0], ir.Raise) and body[0].exc is not None:
        exc = body[0].exc
        name = exc.func if isinstance(exc, ir.Call) else exc
        return isinstance(name, ir.Name) and name.id == "NotImplementedError"
    return len(body) == 1 and isinstance(body[0], ir.OtherStmt) and not body[0].exprs


def _is_function(index, qualname: str) -> bool:
    symbol = index.resolve(qualname)
    return symbol is not None and symbol.kind == "function"


def _unique(items) -> tuple:
    seen = {}
    for item in items:
        seen.setdefault(item, None)
    return tuple(sorted(seen, key=lambda s: (s.anchor.path, s.anchor.start_line, s.text)))


def _hops(index, graph, path):
    previous = None
    for node in path:
        symbol = index.resolve(node[0])
        anchor = index.symbol_anchor(symbol, role="hop")
        if previous is None:
            yield Hop(symbol.qualname, symbol.path, symbol.start_line, symbol.end_line, anchor, via="entry")
        else:
            data = graph.edges[previous, node]
            caller = index.resolve(previous[0])
            call_anchor = index.anchor(caller.path, data["line"], data["end_line"], caller.qualname, "call")
            yield Hop(symbol.qualname, symbol.path, symbol.start_line, symbol.end_line, anchor,
                      call_line=data["line"], call_anchor=call_anchor, via=data["via"])
        previous = node


def _anchor(index, frame: Frame, line: int, end: int, role: str):
    return index.anchor(frame.symbol.path, line, end, frame.symbol.qualname, role)


def _assumptions(index, frame: Frame):
    for c in frame.assumptions:
        yield Assumption(c.text, frame.symbol.qualname, _anchor(index, frame, c.line, c.end_line, "assumption"), c.reason)
    for name, (line, end) in sorted(frame.env_reads.items()):
        yield Assumption(f"env {name} unset", frame.symbol.qualname, _anchor(index, frame, line, end, "assumption"),
                         "env-unset: not set by the recipe, taken as unset")


def _unresolved(index, frame: Frame):
    for c in frame.calls:
        if c.status in ("unresolved", "external"):
            kind = "unresolved-call" if c.status == "unresolved" else "external-call"
            yield Site(kind, f"{c.text}: {c.reason}" if c.reason else c.text, frame.symbol.qualname,
                       _anchor(index, frame, c.line, c.end_line, kind))


def _dynamic(index, frame: Frame):
    for d in frame.dynamic:
        yield Site(d.kind, d.text, frame.symbol.qualname, _anchor(index, frame, d.line, d.end_line, d.kind))


# ---------------------------------------------------------------------------------------------


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
            contexts.append(tuple(x if i else x.qualname for i, x in enumerate(_entry(index, q))))
        skip = {c[0] for c in contexts}
        bindings = bindings or {}
    if info is None or (info.field(name) is None and name not in info.methods):
        return FieldReads(field, (), (), tuple(dict.fromkeys(c[0] for c in contexts)), exists=False)
    an = analyzer(index, bindings)
    target = info.qualname
    target_path = an.config_path_for(target)
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
                reads.append(Read(field, qualname, r.kind, _anchor(index, frame, r.line, r.end_line, "read"), r.text, r.line))
            elif matcher.untyped(r.receiver):
                # `.field` on a value of unknown type may be this field: never counted as absent
                dynamic.append(Site("untyped-read", r.text, qualname, _anchor(index, frame, r.line, r.end_line, "untyped-read")))
        for d in frame.dynamic:
            if matcher.may_hold(d.receiver):
                dynamic.append(Site(d.kind, d.text, qualname, _anchor(index, frame, d.line, d.end_line, d.kind)))
        for c in frame.calls:
            carries = any(matcher.may_contain(a) for a in c.args) or _on_self(c.target)
            if c.status in ("unresolved", "external") and carries:
                kind = "unresolved-call"
                dynamic.append(Site(kind, f"{c.text}: {c.reason}", qualname, _anchor(index, frame, c.line, c.end_line, kind)))
            elif helpers and c.status == "static" and carries and level < 2:
                callee = c.target
                if isinstance(callee, Ref):
                    callee = an.force(callee)
                if isinstance(callee, FuncRef):
                    symbol = index.resolve(callee.qualname)
                    if symbol is not None and symbol.kind == "function" and symbol.qualname not in skip:
                        self_cls = an.canonical(callee.bound.cls) if isinstance(callee.bound, Obj) and callee.bound.cls else None
                        queue.append(((symbol.qualname, self_cls or _self_class(index, symbol)), level + 1,
                                      _call_args(index, symbol, c.args)))
    reads = sorted(set(reads), key=lambda r: (r.anchor.path, r.line, r.kind, r.function))
    return FieldReads(field, tuple(reads), _unique(dynamic), tuple(dict.fromkeys(functions)))


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
        cls = self.an.canonical(value.cls) if value.cls else None
        if cls is not None:
            return self.index.subclass_of(cls, self.target) or self.index.subclass_of(self.target, cls)
        return self.target_path is not None and value.path == self.target_path

    def untyped(self, value) -> bool:
        if isinstance(value, Obj):
            if value.path is not None:
                return False
            return value.cls is None or (isinstance(value.cls, tuple) and self.an.canonical(value.cls) is None)
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


def resolve_dispatch(index, function: str, bindings: dict) -> Dispatch:
    """The candidates a dispatcher (e.g. init_speculator) returns under the bindings."""
    symbol, self_cls = _entry(index, function)
    bound = analyzer(index, bindings).summary(symbol.qualname, self_cls)
    free = analyzer(index, {}).summary(symbol.qualname, self_cls)

    def candidates(frame: Frame, an: Analyzer):
        out = []
        for r in frame.returns:
            qual = _returned_class(an, r.value)
            if qual is None:
                continue
            conds = tuple(Assumption(c.text, symbol.qualname, _anchor(index, frame, c.line, c.end_line, "assumption"),
                                     c.reason, c.taken) for c in r.conditions)
            anchor = _anchor(index, frame, r.line, r.end_line, "candidate")
            out.append((Candidate(qual, anchor, conds), r))
        return out

    feasible = candidates(bound, analyzer(index, bindings))
    chosen = [c for c, _ in feasible if all(a.taken is False for a in c.assumptions)]
    if not chosen:
        chosen = [c for c, _ in feasible]
    alternatives = [c for c, _ in feasible if c not in chosen]
    canonical = []
    for c in chosen:  # the chosen class, named and anchored where it is defined
        cls_symbol = index.resolve(c.symbol)
        if cls_symbol is not None and cls_symbol.kind == "class":
            c = Candidate(cls_symbol.qualname, index.symbol_anchor(cls_symbol, "candidate"), c.assumptions)
        canonical.append(c)
    chosen = canonical
    everything = [c for c, _ in candidates(free, analyzer(index, {}))]
    return Dispatch(
        function=symbol.qualname, chosen=tuple(chosen), alternatives=tuple(alternatives),
        candidates=tuple(everything), assumptions=tuple(_assumptions(index, bound)),
        anchor=index.symbol_anchor(symbol, "dispatcher"),
    )


def _returned_class(an: Analyzer, value) -> str | None:
    if isinstance(value, LazyCall):
        target = value.target
        if isinstance(target, Ref):
            return target.dotted  # named by its import; canonical only if chosen (parsing costs)
        if isinstance(target, ClassRef):
            return target.qualname
        return None
    if isinstance(value, Obj) and value.cls and value.origin.endswith("(...)"):
        return an.canonical(value.cls) or value.cls
    return None


# ---------------------------------------------------------------------------------------------


def model_runner(index, bindings: dict) -> RunnerDecision:
    """v1 or v2, from VllmConfig.use_v2_model_runner evaluated under the bindings."""
    try:
        symbol = index.find_one("VllmConfig.use_v2_model_runner", "function")
    except DataError as exc:
        return RunnerDecision(None, str(exc))
    if symbol is None:
        return RunnerDecision(None, f"VllmConfig.use_v2_model_runner does not exist at {index.tree.revision.label()}")
    an = analyzer(index, bindings)
    frame = an.summary(symbol.qualname, _self_class(index, symbol))
    outcomes = []
    for r in frame.returns:
        truth, reason = an.truth(r.value, frame)
        outcomes.append((truth, reason, r))
    evidence = [index.symbol_anchor(symbol, "runner-selection")]
    evidence += [_anchor(index, frame, d.line, d.end_line, "decided") for d in frame.decisions]
    assumptions = tuple(_assumptions(index, frame))
    env_notes = [f"env {k}: not set by the recipe, taken as unset" for k in sorted(frame.env_reads)]
    values = {t for t, _, _ in outcomes}
    if outcomes and values <= {True} or values <= {False} and outcomes:
        value = "v2" if values == {True} else "v1"
        returns = [r for _, _, r in outcomes]
        evidence += [_anchor(index, frame, r.line, r.end_line, "returns") for r in returns]
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
    evidence += [_anchor(index, frame, r.line, r.end_line, "returns") for _, _, r in outcomes]
    return RunnerDecision(None, reason, tuple(evidence), assumptions)


def evaluate_function(index, function: str, bindings: dict, args: dict | None = None) -> Outcome:
    """The value a function returns under the bindings and the given argument values.

    `decided` only when every feasible path returns that same constant and none raises; the
    raise statements reachable under the bindings are listed either way.
    """
    symbol, self_cls = _entry(index, function)
    an = analyzer(index, bindings)
    values = {k: (v if isinstance(v, (Obj, Const, Unknown)) else Const(v)) for k, v in (args or {}).items()}
    info = index.function_at(symbol)
    self_obj = Obj(cls=self_cls, nonnull=True, path=an.config_path_for(self_cls)) if self_cls else None
    platform_before = an.platform_calls
    frame = Frame(an, info.module, info.facts, symbol, self_obj, values).run()
    truths = []
    for r in frame.returns:
        v = an.force(r.value, frame)
        truths.append(v)
    value, decided = None, False
    if truths and all(isinstance(v, Const) for v in truths) and len({repr(v.value) for v in truths}) == 1:
        value = truths[0].value
        decided = not frame.raises  # a reachable raise is another outcome: not decided
    raises = tuple(Site("raise", r.text, symbol.qualname, _anchor(index, frame, r.line, r.end_line, "raise"))
                   for r in frame.raises)
    returns = tuple(_anchor(index, frame, r.line, r.end_line, "returns") for r in frame.returns)
    certain = tuple(Site("raise", r.text, symbol.qualname, _anchor(index, frame, r.line, r.end_line, "raise"))
                    for r in frame.raises if not r.conditions and not r.in_loop)
    branches = sorted({(d.line, d.value) for d in frame.decisions} | {(c.line, None) for c in frame.assumptions},
                      key=lambda b: (b[0], repr(b[1])))
    return Outcome(value=value, decided=decided, raises=raises, assumptions=tuple(_assumptions(index, frame)),
                   returns=returns, certain_raises=certain, branches=tuple(branches),
                   platform=an.platform_calls > platform_before)
