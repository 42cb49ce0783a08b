"""A hand-written fixture tree (fixtures/vllm_snippets) committed to a git repository made in the test."""

from __future__ import annotations

import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "vllm_snippets"


def fixture_repo(make_git_repo, fixture: str = "rules_spec_decode", name: str | None = None):
    """A GitRepo (conftest.make_git_repo) holding `fixture` as its one commit."""
    repo = make_git_repo(name or fixture)
    shutil.copytree(FIXTURES / fixture, repo.path, dirs_exist_ok=True)
    repo.git("add", "--all")
    repo.git("commit", "--quiet", "-m", "base")
    return repo
