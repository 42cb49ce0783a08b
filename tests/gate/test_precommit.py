"""The pre-commit hook: its manifest, its file selection, and a real run through pre-commit.

`pre-commit try-repo` installs the hook the way users get it (language: python, pip installs
this project into a fresh environment), so it needs the package index: that test is marked
`network`. The offline test runs the same hook definition as a local hook against the
installed srcreview.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from gate_support import DATA

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / ".pre-commit-hooks.yaml"
pre_commit = pytest.importorskip("pre_commit")


def _hook() -> dict:
    from pre_commit.clientlib import load_manifest

    hooks = load_manifest(str(MANIFEST))
    assert [h["id"] for h in hooks] == ["srcreview"]
    return hooks[0]


def test_manifest_is_valid_and_reviews_the_repository_by_content():
    hook = _hook()
    assert hook["entry"] == "srcreview check --format concise ." and hook["language"] == "python"
    assert hook["pass_filenames"] is False, "the recipes are found by content, not by a file pattern"
    assert hook["require_serial"] is True and hook["types"] == ["file"] and hook["files"]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=srcreview-test", "-c", "user.email=test@localhost", *args],
                   cwd=cwd, check=True, capture_output=True)


def _user_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "user"
    (repo / "recipes").mkdir(parents=True)
    (repo / "recipes" / "broken.toml").write_text('[recipe]\nname = "broken"\n\n[engine]\nmax_model_len = \n')
    (repo / "pyproject.toml").write_text('[project]\nname = "not-a-recipe"\n')
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    return repo


def _env(tmp_path: Path) -> dict:
    env = dict(os.environ, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("SOURCE_DATE_EPOCH", None)
    return env


def _pre_commit(*args: str, cwd: Path, env: dict, timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pre_commit", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_hook_runs_offline_as_a_local_hook(tmp_path):
    """The manifest's hook, run by pre-commit against the installed srcreview (no install step)."""
    hook = _hook()
    repo = _user_repo(tmp_path)
    local = {k: hook[k] for k in ("id", "name", "entry", "pass_filenames", "files", "types", "require_serial")}
    local["language"] = "system"
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]}))
    _git(repo, "add", "-A")
    proc = _pre_commit("run", "--all-files", cwd=repo, env=_env(tmp_path))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert re.search(r"srcreview \(vLLM recipe review gate\)\.+Failed", out), out
    assert "exit code: 65" in out and "recipes/broken.toml:5: malformed TOML" in out
    assert "pyproject.toml" not in out, "files that are not recipes are not passed to the hook"


def _hook_repo(tmp_path: Path) -> Path:
    """This project as a hook repository (what users point `repo:` at), committed in tmp_path."""
    repo = tmp_path / "hook"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in ("src", "rules", "pins"):
        shutil.copytree(ROOT / name, repo / name, ignore=ignore)
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(ROOT / name, repo / name)
    if not any((repo / "rules").iterdir()):
        (repo / "rules" / ".keep").write_text("")  # git keeps no empty directory; the wheel build needs it
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "hook repository")
    return repo


@pytest.mark.network
def test_try_repo_installs_and_runs_the_hook(tmp_path):
    hook_repo = _hook_repo(tmp_path)
    repo = _user_repo(tmp_path)
    shutil.copy(DATA / "nested.toml", repo / "notes.toml")
    _git(repo, "add", "-A")
    proc = _pre_commit("try-repo", str(hook_repo), "srcreview", "--all-files", cwd=repo, env=_env(tmp_path))
    out = proc.stdout + proc.stderr
    if proc.returncode == 3 and re.search(r"(No matching distribution|Could not find a version|"
                                          r"Failed to establish|Network is unreachable)", out):
        pytest.skip("the package index is unreachable: pre-commit cannot install the hook")
    assert proc.returncode == 1, out
    assert re.search(r"srcreview \(vLLM recipe review gate\)\.+Failed", out), out
    assert "exit code: 65" in out and "recipes/broken.toml:5: malformed TOML" in out
    assert "notes.toml" not in out and "pyproject.toml" not in out
