"""The default test command stays quick: tests that need releases other than 0.29.0 are marked
`releases`, left out by default, and run by the command the README documents (issue 13.8); so is
the differential oracle, marked `differential` (issue 23)."""

from __future__ import annotations

import ast
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
# module -> the tests in it that need other releases (None: every test of the module)
MANY_RELEASES = {"e2e/test_compare_real_vllm.py": None, "e2e/test_robust_load.py": None,
                 "e2e/test_analysis_real_vllm.py": {"test_same_questions_on_other_releases"},
                 "e2e/test_recipe_flags_real_vllm.py": {"test_flags_map_through_the_revisions_engine_args"},  # 0.33.0
                 "source/test_releases_index.py": {"test_check_at_a_release_newer_than_pins_with_the_real_index"},
                 "cli/test_matrix_cli.py": {"test_real_vllm_two_examples_at_two_releases"}}  # 0.33.0


def _marked_releases(node) -> bool:
    return any("releases" in ast.unparse(d) for d in getattr(node, "decorator_list", ()))


def test_many_release_tests_run_only_when_asked():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "-m 'not releases and not differential'" in config["addopts"]
    assert any(m.startswith("releases:") for m in config["markers"])
    # the differential oracle (real vLLM wheels, several GB) is left out too (issue 23)
    assert any(m.startswith("differential:") for m in config["markers"])
    for name, tests in MANY_RELEASES.items():
        module = ast.parse((ROOT / "tests" / name).read_text())
        whole = any(isinstance(n, ast.Assign) and any(getattr(t, "id", "") == "pytestmark" for t in n.targets)
                    and "releases" in ast.unparse(n.value) for n in module.body)
        functions = [n for n in module.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
        for function in functions:
            if tests is None or function.name in tests:
                assert whole or _marked_releases(function), f"{name}::{function.name} is not marked releases"
    readme = (ROOT / "README.md").read_text()
    assert ".venv/bin/pytest -q -m releases" in readme and ".venv/bin/pytest -q\n" in readme
    assert "pytest -m differential tests/differential" in readme


# Tests that hold for the whole project rather than one package stay at tests/ root.
PROJECT_WIDE = {"test_layering.py", "test_suite_layout.py", "test_static_guarantees.py", "test_robustness_doc.py",
                "test_lint_config.py"}


def test_tests_sit_by_the_package_they_test():
    """tests/<package>/ mirrors src/srcreview/<package>/ (e2e/: end to end on real vLLM; differential/: against
    vLLM itself), and names
    stay unique across folders: pytest imports test modules by their file name (no __init__.py)."""
    tests = ROOT / "tests"
    units = {p.name for p in (ROOT / "src" / "srcreview").iterdir() if (p / "__init__.py").is_file()} | {"e2e",
                                                                                                    "differential"}
    files = sorted(p.relative_to(tests) for p in tests.rglob("test_*.py") if "data" not in p.relative_to(tests).parts)
    misplaced = [str(f) for f in files if (f.parent.name not in units if len(f.parts) == 2 else
                                           len(f.parts) != 1 or f.name not in PROJECT_WIDE)]
    assert misplaced == [], f"move these under tests/<package>/: {misplaced}"
    names = [f.name for f in files]
    assert sorted({n for n in names if names.count(n) > 1}) == []
