"""The layering holds: each package of src/srcreview is one stage of the data flow, and a module
imports only from its own package or the packages below it (function-level imports included).
Inside and between packages the imports form no cycle, and nothing below the CLI prints or exits.

    core -> hfconfig -> model -> source -> index -> interp -> vllm -> checks -> rules -> evidence -> engine
         -> gate, history, audit, store -> report -> api -> cli
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "srcreview"

LAYERS = [
    ("base", ("__init__", "core")),
    ("model configs", ("hfconfig",)),
    ("data", ("model",)),
    ("source", ("source",)),
    ("index", ("index",)),
    ("interpreter", ("interp",)),
    ("vLLM knowledge", ("vllm",)),
    ("checks", ("checks",)),
    ("rules", ("rules",)),
    ("start-up evidence", ("evidence",)),
    ("engine", ("engine",)),
    ("gate", ("gate",)),
    ("history", ("history",)),
    ("audit", ("audit",)),
    ("store", ("store",)),
    ("reports", ("report",)),
    ("api", ("api",)),
    ("cli", ("cli", "__main__")),
]
# Debt being paid (issue 22): none is owed now. An entry must still be owed (a paid one is
# removed here).
KNOWN_UPWARD: set[tuple[str, str]] = set()
KNOWN_CYCLIC: set[str] = set()  # modules on an import cycle
# Leaves any layer may read: srcreview.vllm.anchors holds vLLM's names (class, module, field
# names as strings) and imports nothing of the project but core, so reading it from below
# brings no vLLM behaviour down and can close no cycle; it lets the recipe readers, the source
# providers and the index name vLLM's package, entry points and keys without spelling them
# (tests/vllm/test_vllm_literals.py) and without asking the layer above for them.
READABLE_FROM_BELOW = {"srcreview.vllm.anchors"}
LEAF_MAY_IMPORT = ("core",)
RANK = {name: rank for rank, (_, names) in enumerate(LAYERS) for name in names}
CLI = RANK["cli"]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def modules():
    for name, path in MODULES.items():
        yield path, name.split(".")[1] if "." in name else "__init__"


def imported(name: str, tree: ast.AST):
    """(srcreview module, line) for every import of a srcreview module in a file, at any depth;
    `from package import submodule` names the submodule."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "srcreview":
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                yield (sub if sub in MODULES else node.module), node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "srcreview":
                    yield alias.name, node.lineno


def _top(module: str) -> str:
    return module.split(".")[1] if "." in module else "__init__"


def import_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for name, path in MODULES.items():
        graph.add_node(name)
        for target, line in imported(name, ast.parse(path.read_text(encoding="utf-8"))):
            if target != name and target in MODULES:
                graph.add_edge(name, target, line=line)
    return graph


def test_every_module_has_a_layer():
    assert {top for _, top in modules()} <= set(RANK)


def test_no_loose_module_beside_the_packages():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py", "api.py"))
    assert loose == []


@pytest.mark.parametrize("name", list(MODULES))
def test_no_import_runs_back_up(name):
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    top = _top(name)
    upward = [(target, line) for target, line in imported(name, tree)
              if _top(target) in RANK and RANK[_top(target)] > RANK[top] and (name, target) not in KNOWN_UPWARD
              and target not in READABLE_FROM_BELOW]
    assert upward == [], f"{name} ({LAYERS[RANK[top]][0]}) imports from above: {upward}"


@pytest.mark.parametrize("name", sorted(READABLE_FROM_BELOW))
def test_a_leaf_read_from_below_imports_only_core(name):
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    assert [(t, line) for t, line in imported(name, tree) if _top(t) not in LEAF_MAY_IMPORT] == []


def test_no_import_cycle_between_modules():
    """Function-level imports count: a cycle hidden inside a function is still a cycle."""
    graph = import_graph()
    cyclic = set().union(*(s for s in nx.strongly_connected_components(graph) if len(s) > 1))
    assert KNOWN_CYCLIC <= cyclic, f"no longer on a cycle (remove from KNOWN_CYCLIC): {sorted(KNOWN_CYCLIC - cyclic)}"
    cycles = [cycle for cycle in nx.simple_cycles(graph) if len(cycle) > 1 and not set(cycle) <= KNOWN_CYCLIC]
    shown = [" -> ".join(c + [c[0]]) + "  (" + ", ".join(
        f"{a}:{graph.edges[a, b]['line']}" for a, b in zip(c, c[1:] + [c[0]], strict=True)) + ")" for c in sorted(cycles)[:10]]
    assert shown == [], f"{len(cycles)} import cycles, e.g.:\n" + "\n".join(shown)


def test_known_debt_is_still_owed():
    graph = import_graph()
    assert {(a, b) for a, b in KNOWN_UPWARD if graph.has_edge(a, b)} == KNOWN_UPWARD


def test_a_package_init_imports_only_its_own_modules():
    """A package's `__init__` re-exports its own modules; one importing a sibling package's
    modules would run that package whenever any submodule is imported."""
    graph = import_graph()
    for name, path in MODULES.items():
        if path.name == "__init__.py" and name != "srcreview":
            outside = [t for t in graph.successors(name) if not t.startswith(name + ".")
                       and _top(t) != _top(name) and RANK[_top(t)] >= RANK[_top(name)] and (name, t) not in KNOWN_UPWARD]
            assert outside == [], f"{name} imports {outside}"


@pytest.mark.parametrize("path, top", [m for m in modules() if RANK[m[1]] < CLI],
                         ids=lambda v: str(v) if isinstance(v, str) else v.name)
def test_nothing_below_the_cli_prints_or_exits(path, top):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else \
                f"{getattr(func.value, 'id', '')}.{func.attr}" if isinstance(func, ast.Attribute) else ""
            assert name not in ("print", "sys.exit", "exit", "quit", "os._exit"), \
                f"{path.relative_to(PACKAGE)}:{node.lineno} calls {name}"
            if isinstance(func, ast.Attribute) and func.attr == "write":
                target = ast.unparse(func.value)
                assert target not in ("sys.stdout", "sys.stderr"), f"{path.relative_to(PACKAGE)}:{node.lineno} writes to {target}"
