"""git sources: a local checkout read at the rev (work tree untouched) and the blobless clone cache."""

from __future__ import annotations

import hashlib
import shutil
import subprocess

import pytest

from srcreview.core.errors import SourceUnavailable
from srcreview.model.revision import Revision
from srcreview.source.base import git_blob_id
from srcreview.source.gitrepo import commits_with_prefix, resolve_commit
from srcreview.source.obtain import open_source

FILES = {
    "vllm/__init__.py": "",
    "vllm/config/speculative.py": "class SpeculativeConfig:\n    attention_backend: str | None = None\n",
    "README.md": "fixture\n",
}


def commit_rev(sha: str) -> Revision:
    return Revision(requested=sha, sha=sha)


def colliding_commits(tree: str, digits: int) -> list[tuple[str, bytes]]:
    """Two commit objects whose ids share the first `digits` hex digits (found by hashing, not by git)."""
    seen: dict[str, tuple[str, bytes]] = {}
    for i in range(5_000_000):
        body = (f"tree {tree}\nauthor t <t@example.invalid> 0 +0000\n"
                f"committer t <t@example.invalid> 0 +0000\n\ncollide {i}\n").encode()
        sha = hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()
        if sha[:digits] in seen:
            return [seen[sha[:digits]], (sha, body)]
        seen[sha[:digits]] = (sha, body)
    raise AssertionError("no collision found")


@pytest.fixture
def repo(make_git_repo):
    repo = make_git_repo("vllm")
    repo.first = repo.commit({**FILES, "vllm/old.py": "removed later\n"}, "first")
    (repo.path / "vllm/old.py").unlink()
    repo.second = repo.commit({"vllm/config/speculative.py": FILES["vllm/config/speculative.py"] + "# v2\n"}, "second")
    return repo


def test_checkout_is_read_at_the_rev_not_from_the_work_tree(repo):
    (repo.path / "vllm/config/speculative.py").write_text("edited in the work tree\n")
    tree = open_source(commit_rev(repo.first[:7]), source=repo.path)
    assert tree.provider == "local" and tree.revision.sha == repo.first
    assert tree.read_text("vllm/config/speculative.py") == FILES["vllm/config/speculative.py"]
    assert tree.read_text("vllm/old.py") == "removed later\n"
    assert tree.files("vllm") == ["vllm/__init__.py", "vllm/config/speculative.py", "vllm/old.py"]
    assert tree.blob_id("README.md") == git_blob_id(b"fixture\n") == repo.git("rev-parse", f"{repo.first}:README.md")
    with pytest.raises(SourceUnavailable, match="no such file"):
        tree.read("vllm/missing.py")


def test_work_tree_index_and_head_are_untouched(repo, cli, cache_dir):
    (repo.path / "vllm/config/speculative.py").write_text("local edit\n")
    (repo.path / "untracked.py").write_text("x\n")
    watched = [repo.path / ".git" / "index", repo.path / ".git" / "HEAD", repo.path / "vllm/config/speculative.py"]
    status = repo.git("status", "--porcelain")
    # `git status` may refresh the index stat cache; take the snapshot after it
    before = [(p.read_bytes(), p.stat().st_mtime_ns) for p in watched]
    result = cli("show", "--rev", repo.first, "--source", str(repo.path), "vllm/config/speculative.py:1-2")
    assert result.code == 0, result.err
    assert "class SpeculativeConfig" in result.out and "local edit" not in result.out
    assert result.out.strip().endswith(f"/blob/{repo.first}/vllm/config/speculative.py#L1-L2")
    assert [(p.read_bytes(), p.stat().st_mtime_ns) for p in watched] == before
    assert repo.git("status", "--porcelain") == status
    assert repo.git("rev-parse", "HEAD") == repo.second


def test_nonexistent_commit_is_a_clear_error(repo, cli):
    result = cli("fetch", "--rev", "deadbee", "--source", str(repo.path))
    assert result.code == 2
    assert result.err == "srcreview: error: --source vllm: no commit deadbee\n"


def test_ambiguous_short_sha_lists_the_candidates(repo, cli):
    tree_id = repo.git("rev-parse", "HEAD^{tree}")
    pair = colliding_commits(tree_id, 7)
    for _, body in pair:
        repo.git("hash-object", "-t", "commit", "-w", "--stdin", input=body)
    shas = sorted(sha for sha, _ in pair)
    prefix = shas[0][:7]
    assert commits_with_prefix(repo.path / ".git", prefix, "test") == shas
    result = cli("fetch", "--rev", prefix, "--source", str(repo.path))
    assert result.code == 2
    assert result.err == (f"srcreview: error: --source vllm: {prefix} is ambiguous: it matches commits "
                          f"{shas[0]}, {shas[1]}; give more digits\n")
    # the full ids still resolve
    assert resolve_commit(repo.path / ".git", shas[1], "test") == shas[1]


def test_ambiguity_among_short_prefixes_in_the_git_layer(repo):
    tree_id = repo.git("rev-parse", "HEAD^{tree}")
    pair = colliding_commits(tree_id, 4)
    for _, body in pair:
        repo.git("hash-object", "-t", "commit", "-w", "--stdin", input=body)
    with pytest.raises(SourceUnavailable, match=rf"{pair[0][0][:4]} is ambiguous: it matches commits"):
        resolve_commit(repo.path / ".git", pair[0][0][:4], "test")


def test_blob_prefix_is_not_a_commit(repo):
    blob = repo.git("rev-parse", f"{repo.first}:README.md")
    assert commits_with_prefix(repo.path / ".git", blob[:12], "test") == []


def test_prefix_that_is_not_hex_never_reaches_git(repo):
    with pytest.raises(SourceUnavailable, match="not a hex commit prefix"):
        commits_with_prefix(repo.path / ".git", "--output=/tmp/x", "test")


@pytest.fixture
def remote(repo, monkeypatch):
    """The test repo as a file:// remote that allows partial clones and fetching by id."""
    repo.git("config", "uploadpack.allowFilter", "true")
    repo.git("config", "uploadpack.allowAnySHA1InWant", "true")
    monkeypatch.setenv("SRCREVIEW_GIT_URL", f"file://{repo.path}")
    return repo


@pytest.mark.parametrize("digits", [40, 7])
def test_git_cache_is_a_blobless_clone_that_serves_offline(remote, cache_dir, digits):
    tree = open_source(commit_rev(remote.second[:digits]), provider="git")
    assert tree.provider == "git" and tree.revision.sha == remote.second and not tree.cached
    git_dir = cache_dir / "git" / "vllm.git"
    config = subprocess.run(["git", f"--git-dir={git_dir}", "config", "remote.origin.partialclonefilter"],
                            capture_output=True, text=True).stdout.strip()
    assert config == "blob:none"
    missing = subprocess.run(["git", f"--git-dir={git_dir}", "rev-list", "--objects", "--missing=print", "--no-walk",
                              remote.first], capture_output=True, text=True).stdout
    assert "?" in missing  # the older commit's blobs were never downloaded
    shutil.rmtree(remote.path)  # offline from now on
    again = open_source(commit_rev(remote.second[:9]))
    assert again.provider == "git" and again.cached
    assert again.read_text("vllm/config/speculative.py").endswith("# v2\n")
    assert again.files() == sorted(FILES)


def test_git_cache_unknown_commit(remote, cache_dir):
    with pytest.raises(SourceUnavailable, match=r"git fetch from file://.*: fatal: .*"):
        open_source(commit_rev("0" * 40), provider="git")
