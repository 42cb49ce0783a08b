"""srcreview.interp.graph against networkx (the reference whose orders a trace keeps): the same
simple paths in the same order under a cutoff, and the same breadth-first tree paths, on random
directed graphs with self-loops, cycles and unreachable nodes."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from srcreview.interp.graph import DiGraph, bfs_parents, simple_paths, tree_path

edges = st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=30)


def _both(pairs):
    ours, theirs = DiGraph(), nx.DiGraph()
    ours.add_node(0)
    theirs.add_node(0)
    for n, (u, v) in enumerate(pairs):
        ours.add_edge(u, v, line=n)
        theirs.add_edge(u, v, line=n)
    return ours, theirs


@settings(max_examples=300, deadline=None)
@given(edges, st.integers(0, 7), st.integers(-1, 6))
def test_simple_paths_are_networkx_s_in_its_order(pairs, target, cutoff):
    ours, theirs = _both(pairs)
    if target not in theirs:
        assert list(simple_paths(ours, 0, target, cutoff)) == []
        return
    expected = list(nx.all_simple_paths(theirs, 0, target, cutoff=cutoff))
    assert list(simple_paths(ours, 0, target, cutoff)) == expected


@settings(max_examples=300, deadline=None)
@given(edges)
def test_bfs_tree_paths_are_networkx_s(pairs):
    ours, theirs = _both(pairs)
    tree = nx.bfs_tree(theirs, 0)
    parents = bfs_parents(ours, 0)
    assert set(parents) == set(tree.nodes)
    inner = set(parents.values())
    leaves = sorted(n for n in parents if n not in inner)
    assert leaves == sorted(n for n in tree.nodes if tree.out_degree(n) == 0)
    for leaf in leaves:
        assert tree_path(parents, leaf) == nx.shortest_path(tree, 0, leaf)


@given(edges)
def test_nodes_and_edges_keep_networkx_s_order_and_data(pairs):
    ours, theirs = _both(pairs)
    assert ours.nodes == list(theirs.nodes)
    assert list(ours.edges()) == list(theirs.edges(data=True))
    for u, v in theirs.edges:
        assert ours.has_edge(u, v) and ours.edge(u, v) == theirs.edges[u, v]
    assert not ours.has_edge(99, 0)
