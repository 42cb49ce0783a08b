"""The layering holds: recipe -> revision -> source -> index -> interpreter -> checks -> rules ->
engine -> gate and history -> reports -> CLI. A module imports only from its own layer or the
layers below (function-level imports included), and nothing below the CLI prints or exits."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "srcreview"

LAYERS = [
    ("base", ("__init__", "errors", "textsafe", "userfile", "dates", "resources", "templates", "sealed",
              "records")),
    ("data", ("findings", "revision", "recipe", "hfconfig", "model_configs")),
    ("source", ("source", "overlays")),
    ("index", ("index",)),
    ("interpreter", ("interp",)),
    ("checks", ("checks",)),
    ("rules", ("rules", "rules_doc")),
    ("engine", ("engine", "patched_review")),
    ("gate and history", ("gate", "baseline", "waivers", "audit", "registry_audit", "compare", "bisect",
                          "explain", "pins_update", "cache_admin", "recipe_files", "review_cache")),
    ("reports", ("report",)),
    ("cli", ("cli", "commands", "__main__", "progress")),
]
RANK = {name: rank for rank, (_, names) in enumerate(LAYERS) for name in names}
CLI = RANK["cli"]


def modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        yield path, path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def imported(tree: ast.AST):
    """srcreview modules a file imports (at any depth), as their top-level part."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("srcreview"):
            parts = node.module.split(".")
            if len(parts) > 1:
                yield parts[1], node.lineno
            else:
                for alias in node.names:
                    yield alias.name, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("srcreview."):
                    yield alias.name.split(".")[1], node.lineno


def test_every_module_has_a_layer():
    assert {top for _, top in modules()} <= set(RANK)


@pytest.mark.parametrize("path, top", list(modules()), ids=lambda v: str(v) if isinstance(v, str) else v.name)
def test_no_import_runs_back_up(path, top):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    upward = [(name, line) for name, line in imported(tree) if name in RANK and RANK[name] > RANK[top]]
    assert upward == [], f"{path.relative_to(PACKAGE)} ({LAYERS[RANK[top]][0]}) imports from above: {upward}"


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
