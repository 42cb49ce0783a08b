"""The directed graph a call-graph trace explores, and the three walks it asks of it.

Importing networkx costs a `check` process about a tenth of a second (more than a stored
review takes in all), for a dict of dicts and three walks. These are networkx's own
definitions, kept to its orders: nodes and each node's successors in insertion order;
`simple_paths` is networkx 3's `all_simple_paths` (depth first, a path yielded when it reaches
the target, not extended past `cutoff` edges); `bfs_parents` is the tree `bfs_tree` builds
(each node's parent the first node of the breadth-first order to reach it), so a path in it is
what `shortest_path` returns there. tests/interp/test_graph.py holds them equal to networkx on
random graphs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

Hashable = Any  # a node: any hashable value (a trace's are (function, class of self) pairs)


class DiGraph:
    """Nodes with successors and one attribute dict per edge (a later add_edge updates it)."""

    def __init__(self) -> None:
        self._succ: dict[Hashable, dict[Hashable, dict]] = {}

    def add_node(self, node: Hashable) -> None:
        self._succ.setdefault(node, {})

    def add_edge(self, u: Hashable, v: Hashable, **data) -> None:
        self.add_node(u)
        self.add_node(v)
        self._succ[u].setdefault(v, {}).update(data)

    def has_edge(self, u: Hashable, v: Hashable) -> bool:
        return v in self._succ.get(u, ())

    @property
    def nodes(self) -> list:
        return list(self._succ)

    def edge(self, u: Hashable, v: Hashable) -> dict:
        return self._succ[u][v]

    def edges(self) -> Iterator[tuple[Hashable, Hashable, dict]]:
        """(u, v, data) for every edge: u in node order, then its successors in insertion order."""
        for u, successors in self._succ.items():
            for v, data in successors.items():
                yield u, v, data

    def successors(self, node: Hashable) -> list:
        return list(self._succ[node])

    def __contains__(self, node: object) -> bool:
        return node in self._succ

    def __len__(self) -> int:
        return len(self._succ)


def simple_paths(graph: DiGraph, source: Hashable, target: Hashable, cutoff: int) -> Iterator[list]:
    """Every path from `source` to `target` that visits no node twice, of at most `cutoff` edges,
    in networkx's order (a depth-first search over successors in insertion order)."""
    if source not in graph:
        raise KeyError(source)
    if cutoff < 0 or target not in graph:
        return
    succ = graph._succ
    current: dict = {None: None}  # node on the path -> the edge that entered it (insertion-ordered)
    stack: list[Iterator[tuple[Any, Any]]] = [iter([(None, source)])]
    while stack:
        next_edge = next((e for e in stack[-1] if e[1] not in current), None)
        if next_edge is None:
            stack.pop()
            current.popitem()
            continue
        node = next_edge[1]
        if node == target:
            yield [source] + [edge[1] for edge in (list(current.values()) + [next_edge])[2:]]
        if len(current) - 1 < cutoff and ({target} - current.keys() - {node}):
            current[node] = next_edge
            stack.append(iter([(node, v) for v in succ[node]]))


def bfs_parents(graph: DiGraph, source: Hashable) -> dict:
    """Each node reachable from `source` -> its parent in the breadth-first tree (None for
    `source`): the first node, in breadth-first order over successors in insertion order, with
    an edge to it."""
    parents: dict = {source: None}
    level = [source]
    while level:
        following = []
        for parent in level:
            for child in graph._succ[parent]:
                if child not in parents:
                    parents[child] = parent
                    following.append(child)
        level = following
    return parents


def tree_path(parents: dict, leaf: Hashable) -> list:
    """The path from the root of a `bfs_parents` tree to `leaf`."""
    path = [leaf]
    while parents[path[-1]] is not None:
        path.append(parents[path[-1]])
    return path[::-1]
