"""The call-graph micro-benchmark (fixtures/callgraph_bench/): no expected edge dropped silently.

One small tree per case, grouped by category (PyCG's categories as a model; the snippets are
written here). Each case's `edges.txt` lists, by hand, the calls that run (`caller -> callee`,
qualified names in the tree; `main` alone is the module's own code, run at import; a lambda's
body counts as its enclosing function's). Every edge must be either found (the call graph
walked from the caller reaches the callee in one call) or recorded open: the caller's walk
keeps an unresolved or dynamic site, so a reach query from the caller does not say "never
reached". A claim of absence is only as good as the calls it did not miss.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from srcreview.core.errors import DataError
from srcreview.index import Index
from srcreview.index.facts import MODULE_CODE
from srcreview.interp import trace
from srcreview.model.revision import Revision
from srcreview.source.base import AnyPythonTree

BENCH = Path(__file__).resolve().parent.parent.parent / "fixtures" / "callgraph_bench"
CASES = sorted(str(p.parent.relative_to(BENCH)) for p in BENCH.glob("*/*/edges.txt"))


@dataclass(frozen=True)
class Edge:
    caller: str
    callee: str
    verdict: str  # "found" | "open" | "dropped"
    why: str = ""


def expected_edges(case: str) -> list[tuple[str, str]]:
    out = []
    for line in (BENCH / case / "edges.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            caller, _, callee = line.partition("->")
            out.append((caller.strip(), callee.strip()))
    return out


def index_of(case: str) -> Index:
    """The index as `srcreview graph --tree` builds it: any Python tree, every module of it."""
    tree = AnyPythonTree(BENCH / case, Revision(requested="tree", sha="0" * 40))
    return Index(tree, package="")


def judge(index: Index, caller: str, callee: str) -> Edge:
    """Found, recorded open, or dropped: the edge from the caller's own walk, and the reach
    query from the caller to the callee (which must not say "never reached")."""
    if index.has_module(caller):  # the module's own code, what runs at import
        caller = f"{caller}.{MODULE_CODE}"
    try:
        direct = trace(index, caller, {}, sink=callee, max_depth=1)
        reach = trace(index, caller, {}, sink=callee)
    except DataError as exc:
        return Edge(caller, callee, "dropped", f"no walk from {caller}: {exc.message}")
    if reach.found_sink is False and not (reach.unresolved or reach.dynamic):
        return Edge(caller, callee, "dropped", "the reach query says never reached")
    if direct.found_sink:
        return Edge(caller, callee, "found")
    own = [s for s in direct.unresolved + direct.dynamic if s.function == direct.entry and s.anchor.role != "depth-limit"]
    if own:
        return Edge(caller, callee, "open", "; ".join(sorted({f"{s.kind}: {s.text}" for s in own})))
    return Edge(caller, callee, "dropped", "no edge and no open site in the caller")


def score(case: str) -> list[Edge]:
    index = index_of(case)
    return [judge(index, caller, callee) for caller, callee in expected_edges(case)]


def table(cases=CASES) -> list[tuple[str, int, int, int, int, int]]:
    """(category, cases, edges expected, found, recorded open, silently dropped) per category."""
    rows: dict[str, list[int]] = {}
    for case in cases:
        category = case.split("/")[0]
        edges = score(case)
        row = rows.setdefault(category, [0, 0, 0, 0, 0])
        row[0] += 1
        row[1] += len(edges)
        for edge in edges:
            row[2 + ("found", "open", "dropped").index(edge.verdict)] += 1
    return [(category, *row) for category, row in sorted(rows.items())]  # type: ignore[misc]


def test_the_benchmark_has_cases_in_every_category_it_names():
    assert len(CASES) >= 30
    assert all(expected_edges(case) for case in CASES)


@pytest.mark.parametrize("case", CASES)
def test_no_expected_edge_is_dropped_silently(case):
    dropped = [e for e in score(case) if e.verdict == "dropped"]
    assert not dropped, [(e.caller, e.callee, e.why) for e in dropped]


if __name__ == "__main__":  # the table the issue note reports: python tests/interp/test_callgraph_bench.py
    from srcreview.interp.domain import install
    from srcreview.vllm.domain import VLLM

    install(VLLM)  # the framework model the analysis consults (conftest installs it under pytest)

    print("category cases expected found open dropped")
    for row in table():
        print(*row)
