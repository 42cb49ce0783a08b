"""The project's own lint and type-check set-up: what CI and the pre-commit hooks run, and how.

CI (.ci/run) runs ruff and mypy before the tests; the pre-commit config runs the same tools from
the venv. The settings live in pyproject.toml and silence nothing wholesale: no module's errors
are ignored, and ignores in the code name their code.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_ci_lints_and_type_checks_before_the_tests():
    steps = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and not line.startswith("#")]
    commands = " && ".join(steps)
    assert "pip install -q -e '.[test]'" in commands
    ruff, mypy, tests = (commands.index(c) for c in (".venv/bin/ruff check", ".venv/bin/mypy", ".venv/bin/pytest -q"))
    assert ruff < tests and mypy < tests


def test_the_test_extra_brings_the_tools_at_a_minimum_version():
    extra = " ".join(PYPROJECT["project"]["optional-dependencies"]["test"])
    assert re.search(r"\bruff>=\d", extra) and re.search(r"\bmypy>=\d", extra)


def test_mypy_checks_the_package_strictly_enough_and_silences_no_module():
    mypy = PYPROJECT["tool"]["mypy"]
    assert mypy["files"] == ["src/srcreview"]
    for setting in ("check_untyped_defs", "warn_unused_ignores", "warn_redundant_casts", "no_implicit_optional",
                    "strict_equality"):
        assert mypy[setting] is True, setting
    assert "ignore-without-code" in mypy["enable_error_code"]
    assert "ignore_errors" not in mypy
    for override in mypy.get("overrides", []):
        assert not override.get("ignore_errors") and "disable_error_code" not in override, override
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        assert not any(m.startswith("srcreview") for m in modules), "the project's own modules are checked"


def test_code_ignores_name_their_codes():
    bare = []
    for path in sorted((ROOT / "src" / "srcreview").rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"#\s*type:\s*ignore(?!\[)", line) or re.search(r"#\s*noqa(?!:)", line):
                bare.append(f"{path.relative_to(ROOT)}:{n}")
    assert not bare


def test_the_pre_commit_config_runs_ruff_and_mypy_from_the_venv():
    pytest.importorskip("pre_commit")
    from pre_commit.clientlib import load_config

    config = load_config(str(ROOT / ".pre-commit-config.yaml"))
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    assert set(hooks) == {"ruff", "mypy"}
    assert hooks["ruff"]["entry"].startswith(".venv/bin/ruff check")
    assert hooks["mypy"]["entry"] == ".venv/bin/mypy" and hooks["mypy"]["pass_filenames"] is False
    # `system` (pre-commit 4.4 reads it as its new name, `unsupported`): the venv's tools, nothing installed
    assert all(h["language"] in ("system", "unsupported") for h in hooks.values())


def test_ruff_passes_on_the_tree():
    ruff = Path(sys.executable).with_name("ruff")
    if not ruff.exists():
        pytest.skip("ruff is not installed in this environment (pip install -e '.[test]')")
    done = subprocess.run([str(ruff), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
