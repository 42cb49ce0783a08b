"""Inside srcreview.index the modules are layered too (function-level imports included): the IR
and the facts are plain data that import nothing above them, the builder and the cache depend on
the facts and not on each other, the Index on all of them. A lower module reaching up (facts
converting a body through the builder, say) would be a cycle the moment the higher one imports it.
"""

from __future__ import annotations

from test_layering import MODULES, import_graph

# rank of each module of srcreview.index, low to high; a module imports only from lower ranks or its own group
RANKS = {
    "srcreview.index.ir": 0,
    "srcreview.index.facts": 1,
    "srcreview.index.literal": 2,
    "srcreview.index.builder": 3,
    "srcreview.index.cache": 3,
    "srcreview.index.dormant": 3,
    "srcreview.index.index": 4,
    "srcreview.index.prefetch": 5,
    "srcreview.index": 6,
}


def _group(module: str) -> str:
    return next(g for g in sorted(RANKS, key=len, reverse=True) if module == g or module.startswith(g + "."))


def test_every_index_module_has_a_rank():
    assert {_group(m) for m in MODULES if m.startswith("srcreview.index")} == set(RANKS)


def test_no_index_module_imports_a_higher_or_sibling_one():
    graph = import_graph()
    wrong = []
    for module in MODULES:
        if not module.startswith("srcreview.index"):
            continue
        group = _group(module)
        for target in graph.successors(module):
            if target.startswith("srcreview.index") and _group(target) != group and RANKS[_group(target)] >= RANKS[group]:
                wrong.append(f"{module} -> {target} (line {graph.edges[module, target]['line']})")
    assert wrong == []


def test_the_facts_are_a_leaf():
    graph = import_graph()
    assert {t for t in graph.successors("srcreview.index.facts") if t.startswith("srcreview.index")} == {"srcreview.index.ir"}
