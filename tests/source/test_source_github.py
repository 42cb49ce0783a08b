"""GitHub tarballs served on 127.0.0.1: the tarball names its commit, which must be the one asked."""

from __future__ import annotations

import pytest
from conftest import FAKE_SHA, Route, make_tar, sdist_files

from srcreview.core.errors import SourceUnavailable
from srcreview.model.revision import Revision
from srcreview.source import http as nethttp
from srcreview.source.base import VerificationFailed
from srcreview.source.cache import Cache
from srcreview.source.obtain import open_source


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch):
    monkeypatch.setattr(nethttp, "BACKOFF_SECONDS", 0.01)


def commit(sha: str) -> Revision:
    return Revision(requested=sha, sha=sha)


def publish(server, monkeypatch, name: str, full: str = FAKE_SHA, comment: bool = True) -> None:
    files = {k: v for k, v in sdist_files().items() if k != "vllm/_version.py"}
    server.routes[f"/archive/{name}.tar.gz"] = Route(
        make_tar(files, top=f"vllm-{full}", comment=full if comment else None))
    monkeypatch.setenv("SRCREVIEW_GITHUB_URL", server.url("/archive"))


def test_tarball_of_an_abbreviated_commit_yields_the_full_commit(http_server, cache_dir, monkeypatch):
    publish(http_server, monkeypatch, FAKE_SHA[:7])
    tree = open_source(commit(FAKE_SHA[:7]), provider="github")
    assert tree.provider == "github" and tree.revision.sha == FAKE_SHA
    assert tree.url("vllm/config/speculative.py", 1, 2).endswith(f"/blob/{FAKE_SHA}/vllm/config/speculative.py#L1-L2")
    assert tree.exists("vllm/config/speculative.py")
    http_server.routes.clear()
    again = open_source(commit(FAKE_SHA[:9]))  # auto finds the cached tree, offline
    assert again.provider == "github" and again.cached and again.revision.sha == FAKE_SHA


def test_full_commit_is_downloaded_once_and_named_by_the_directory(http_server, cache_dir, monkeypatch):
    publish(http_server, monkeypatch, FAKE_SHA, comment=False)
    open_source(commit(FAKE_SHA), provider="github")
    assert open_source(commit(FAKE_SHA), provider="github").cached
    assert http_server.hits[f"/archive/{FAKE_SHA}.tar.gz"] == 1
    assert Cache(cache_dir).keys("github") == [FAKE_SHA]


def test_tarball_of_another_commit_is_refused(http_server, cache_dir, monkeypatch):
    publish(http_server, monkeypatch, "abcdef0", full=FAKE_SHA)
    with pytest.raises(VerificationFailed, match=rf"GitHub tarball for abcdef0 is of commit {FAKE_SHA}"):
        open_source(commit("abcdef0"), provider="github")
    assert Cache(cache_dir).keys("github") == []


def test_unknown_commit_is_a_clear_error(http_server, cache_dir, monkeypatch):
    monkeypatch.setenv("SRCREVIEW_GITHUB_URL", http_server.url("/archive"))
    with pytest.raises(SourceUnavailable, match=r"GitHub \(http://127\.0\.0\.1:\d+/archive\) has no commit abcdef0 \(HTTP 404\)"):
        open_source(commit("abcdef0"), provider="github")


def test_auto_without_any_reachable_source_reports_each_attempt(cache_dir, monkeypatch, refused_url):
    monkeypatch.setenv("SRCREVIEW_GITHUB_URL", refused_url + "/archive")
    monkeypatch.setenv("SRCREVIEW_GIT_URL", refused_url + "/vllm.git")
    with pytest.raises(SourceUnavailable) as info:
        open_source(commit("abcdef0"))
    message = info.value.message
    assert "\n" not in message
    assert message.startswith("cannot obtain vLLM abcdef0: cannot reach GitHub (http://127.0.0.1:")
    assert "connection refused" in message and "git fetch from" in message
