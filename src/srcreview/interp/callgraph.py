"""The call graph: recipe-conditioned reachability from an entry, explored with networkx.

`trace` walks the graph breadth-first from an entry with the recipe bound: each function is
interpreted once (srcreview.interp.interpreter), only the calls its feasible paths make are
followed, imports are resolved lazily (a module off the way to the sink is never parsed),
and every undecided branch, unresolved call and dynamic access of the functions inspected
is kept with its anchor.
"""

from __future__ import annotations

from srcreview.index import ir
from srcreview.interp.interpreter import Analyzer, analyzer
from srcreview.interp.resolver import entry_function, self_class
from srcreview.interp.results import (
    Hop,
    Site,
    Trace,
    assumptions_of,
    dynamic_of,
    unique,
    unresolved_of,
)
from srcreview.interp.values import ClassRef, FuncRef, Obj, Ref

DEFAULT_DEPTH_TO_SINK = 6
DEFAULT_DEPTH_TREE = 2
MAX_PATHS = 50


class _SinkMatcher:
    """A sink named by qualified-name suffix; matched on the nodes reached, without a whole-tree search."""

    def __init__(self, sink: str | None):
        self.sink = sink

    def __contains__(self, qualname: str) -> bool:
        if not self.sink:
            return False
        return qualname == self.sink or qualname.endswith("." + self.sink)


class _Explorer:
    """Breadth-first walk of the call graph from an entry, one call level at a time."""

    def __init__(self, index, an: Analyzer, sink: str | None):
        import networkx as nx

        self.index = index
        self.an = an
        self.graph: nx.DiGraph = nx.DiGraph()
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
                self_cls = self.an.resolver.canonical(target.bound.cls)
            elif isinstance(target.bound, ClassRef):
                self_cls = target.bound.qualname
            if self_cls is None:
                self_cls = self_class(self.index, symbol)
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
        """(sinks found, depth reached, the functions left unwalked when the depth limit stopped it)."""
        self.graph.add_node(start)
        level = [start]
        seen = {start}
        found = set()
        depth = 0
        for depth in range(1, max_depth + 1):  # noqa: B007 - the depth reached is returned
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
        else:
            return found, depth, level  # the limit stopped it with functions still to walk
        return found, depth, []

    def _edge(self, caller, callee, event, via):
        if self.graph.has_edge(caller, callee):
            return
        self.graph.add_edge(caller, callee, line=event.line, end_line=event.end_line, via=via, text=event.text)


def trace(index, entry: str, bindings: dict, sink: str | None = None, max_depth: int | None = None,
          self_cls: str | None = None) -> Trace:
    """Feasible call paths from `entry` (to `sink`, if given) with the recipe's values bound;
    `self_cls` walks an inherited method with self of that class."""
    import networkx as nx

    entry_symbol, entry_self = entry_function(index, entry)
    entry_self = self_cls or entry_self
    an = analyzer(index, bindings)
    explorer = _Explorer(index, an, sink)
    start = (entry_symbol.qualname, entry_self)
    depth_limit = max_depth if max_depth is not None else (DEFAULT_DEPTH_TO_SINK if sink else DEFAULT_DEPTH_TREE)
    found, depth, unwalked = explorer.explore(start, depth_limit)
    graph = explorer.graph

    if sink:
        node_paths = []
        for target in sorted(found):
            for path in nx.all_simple_paths(graph, start, target, cutoff=depth_limit + 1):
                node_paths.append(tuple(path))
                if len(node_paths) >= MAX_PATHS:
                    break
        inspected = sorted({n for p in node_paths for n in p[:-1]})
        if not found:  # an absence rests on every function walked, and on what each could not resolve
            inspected = sorted(n for n in graph.nodes if _is_function(index, n[0]))
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
        assumptions.extend(assumptions_of(index, frame))
        unresolved.extend(unresolved_of(index, frame))
        dynamic.extend(dynamic_of(index, frame))
    inspected_names = {n[0] for n in inspected}
    for u, v, d in graph.edges(data=True):
        if u[0] in inspected_names and is_abstract(index, v[0]):
            caller = index.resolve(u[0])
            unresolved.append(Site("virtual-call", f"{d['text']}: {v[0].rsplit('.', 2)[-2]}.{v[0].rsplit('.', 1)[-1]} "
                                   "is abstract here; the override that runs depends on the run-time class",
                                   u[0], index.anchor(caller.path, d["line"], d["end_line"], caller.qualname,
                                                      "virtual-call")))
    if sink and unwalked and not found:  # the sink may lie beyond the limit: "not reached" is not proven
        unresolved.append(Site("unresolved-call", f"the walk stopped {depth_limit} calls deep with "
                               f"{len(unwalked)} function(s) not walked", entry_symbol.qualname,
                               index.symbol_anchor(entry_symbol, "depth-limit")))
    edges = tuple(sorted((u[0], v[0], d["line"], d["via"]) for u, v, d in graph.edges(data=True)))
    return Trace(
        entry=entry_symbol.qualname, sink=sink, bindings=tuple(sorted(bindings.items(), key=lambda kv: kv[0])),
        paths=paths, functions=tuple(dict.fromkeys(n[0] for n in inspected)),
        reachable=tuple(sorted({n[0] for n in graph.nodes})),
        assumptions=unique(assumptions), unresolved=unique(unresolved), dynamic=unique(dynamic),
        found_sink=bool(found), contexts=tuple(inspected), edges=edges, depth=depth,
    )


def is_abstract(index, qualname: str) -> bool:
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
