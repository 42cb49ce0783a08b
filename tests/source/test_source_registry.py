"""Registry sdists from a real PEP 691 index on 127.0.0.1: verified, cached, reused offline."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap

import pytest
from conftest import FAKE_SHA, Route, make_tar, sdist_files

from srcreview.core.errors import EXIT_INCOMPLETE, SourceUnavailable
from srcreview.model.revision import Pin, Revision
from srcreview.source import http as nethttp
from srcreview.source.base import VerificationFailed
from srcreview.source.cache import Cache
from srcreview.source.obtain import open_source

VERSION = "0.0.1"
SDIST = f"vllm-{VERSION}.tar.gz"


def release(data: bytes, commit: str = FAKE_SHA, sha256: str | None = None) -> Revision:
    pin = Pin(version=VERSION, revision=commit, sdist_sha256=sha256 or hashlib.sha256(data).hexdigest())
    return Revision(requested=VERSION, sha=commit, version=VERSION, pin=pin)


@pytest.fixture
def sdist() -> bytes:
    return make_tar(sdist_files(), top=f"vllm-{VERSION}")


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch):
    monkeypatch.setattr(nethttp, "BACKOFF_SECONDS", 0.01)


def one_line(exc) -> str:
    assert "\n" not in exc.message
    assert exc.exit_code == EXIT_INCOMPLETE
    return exc.message


def test_sdist_is_verified_cached_and_reused_offline(http_server, cache_dir, monkeypatch, sdist):
    monkeypatch.setenv("PIP_INDEX_URL", http_server.serve_index({SDIST: sdist}))
    tree = open_source(release(sdist), provider="registry")
    assert tree.provider == "registry" and not tree.cached
    assert tree.revision.sha == FAKE_SHA
    assert tree.read_text("vllm/config/speculative.py").startswith("class SpeculativeConfig")
    assert "PKG-INFO" in tree.files() and all("manifest" not in f for f in tree.files())
    assert tree.describe() == f"vLLM {VERSION} (123456789) from registry {SDIST}"
    assert http_server.hits["/files/" + SDIST] == 1

    http_server.routes.clear()  # the index is gone: only the cache can answer now
    again = open_source(release(sdist))
    assert again.provider == "registry" and again.cached
    assert again.read("PKG-INFO") == tree.read("PKG-INFO")
    assert again.describe().endswith("(cached)")


@pytest.mark.parametrize("verify", [False, True])
def test_corrupt_cached_tree_is_downloaded_again(http_server, cache_dir, monkeypatch, sdist, verify):
    monkeypatch.setenv("PIP_INDEX_URL", http_server.serve_index({SDIST: sdist}))
    tree = open_source(release(sdist), provider="registry")
    target = tree.root / "vllm/config/speculative.py"
    original = target.read_bytes()
    # a quick check sees a size change; only the deep check (srcreview fetch) sees a same-size edit
    target.write_bytes(original.upper() if verify else original[:10])
    again = open_source(release(sdist), verify=verify)
    assert not again.cached
    assert again.read("vllm/config/speculative.py") == original
    assert http_server.hits["/files/" + SDIST] == 2


def test_html_index_and_absolute_urls_are_understood(http_server, cache_dir, monkeypatch, sdist):
    digest = hashlib.sha256(sdist).hexdigest()
    http_server.routes["/files/" + SDIST] = Route(sdist)
    http_server.routes["/html/vllm/"] = Route(
        f'<html><body><a href="{http_server.url("/files/" + SDIST)}#sha256={digest}">{SDIST}</a></body></html>'.encode(),
        content_type="text/html")
    monkeypatch.setenv("PIP_INDEX_URL", http_server.url("/html"))
    assert open_source(release(sdist), provider="registry").exists("vllm/_version.py")


def test_index_hash_mismatch_is_refused_and_nothing_cached(http_server, cache_dir, monkeypatch, sdist):
    monkeypatch.setenv("PIP_INDEX_URL", http_server.serve_index({SDIST: sdist}, hashes={SDIST: "0" * 64}))
    with pytest.raises(VerificationFailed) as info:
        open_source(release(sdist))
    assert f"{SDIST}: sha256 {hashlib.sha256(sdist).hexdigest()} does not match the index's" in one_line(info.value)
    assert Cache(cache_dir).keys("registry") == []


def test_pin_hash_mismatch_is_refused(http_server, cache_dir, monkeypatch, sdist):
    monkeypatch.setenv("PIP_INDEX_URL", http_server.serve_index({SDIST: sdist}))
    with pytest.raises(VerificationFailed, match=r"does not match pins/ \(f{64}\)"):
        open_source(release(sdist, sha256="f" * 64), provider="registry")
    assert Cache(cache_dir).keys("registry") == []


def test_sdist_of_another_commit_is_refused(http_server, cache_dir, monkeypatch):
    other = make_tar(sdist_files(commit="abcdef0123456789"), top=f"vllm-{VERSION}")
    monkeypatch.setenv("PIP_INDEX_URL", http_server.serve_index({SDIST: other}))
    with pytest.raises(VerificationFailed) as info:
        open_source(release(other), provider="registry")
    assert one_line(info.value) == f"{SDIST}: built from commit abcdef012 (version {VERSION}), not the requested {VERSION} (123456789)"


def test_truncated_download_is_retried_then_refused(http_server, cache_dir, monkeypatch, sdist):
    monkeypatch.setenv("PIP_INDEX_URL", http_server.serve_index({SDIST: sdist}))
    http_server.routes["/files/" + SDIST] = Route(sdist[: len(sdist) // 2], content_length=len(sdist))
    with pytest.raises(SourceUnavailable) as info:
        open_source(release(sdist), provider="registry")
    assert "connection closed before the whole body arrived" in one_line(info.value)
    assert http_server.hits["/files/" + SDIST] == nethttp.ATTEMPTS
    assert Cache(cache_dir).keys("registry") == []


def test_server_errors_are_retried_and_reported(http_server, cache_dir, monkeypatch, sdist):
    monkeypatch.setenv("PIP_INDEX_URL", http_server.url("/simple"))
    http_server.routes["/simple/vllm/"] = Route(b"oops", status=503)
    with pytest.raises(SourceUnavailable, match=r"package index http://127\.0\.0\.1:\d+/simple: HTTP 503"):
        open_source(release(sdist), provider="registry")
    assert http_server.hits["/simple/vllm/"] == nethttp.ATTEMPTS


def test_missing_project_and_missing_release(http_server, cache_dir, monkeypatch, sdist):
    monkeypatch.setenv("PIP_INDEX_URL", http_server.url("/empty"))
    with pytest.raises(SourceUnavailable, match=r"has no project vllm \(HTTP 404\)"):
        open_source(release(sdist), provider="registry")
    monkeypatch.setenv("PIP_INDEX_URL", http_server.serve_index({"vllm-9.9.9.tar.gz": sdist}))
    with pytest.raises(SourceUnavailable, match=rf"lists no {SDIST}"):
        open_source(release(sdist), provider="registry")


def test_unreachable_index_is_one_line_without_credentials(cache_dir, monkeypatch, refused_url, sdist):
    monkeypatch.setenv("PIP_INDEX_URL", refused_url.replace("http://", "http://alice:s3cret@") + "/simple")
    with pytest.raises(SourceUnavailable) as info:
        open_source(release(sdist), provider="registry")
    message = one_line(info.value)
    assert message.startswith("cannot reach the package index http://***@127.0.0.1:")
    assert message.endswith(": connection refused (3 attempts)")
    assert "s3cret" not in message and "alice" not in message


def test_commit_is_not_a_release_for_the_registry(cache_dir):
    from srcreview.core.errors import UsageError

    with pytest.raises(UsageError, match="not a pinned release"):
        open_source(Revision(requested=FAKE_SHA, sha=FAKE_SHA), provider="registry")


CONCURRENT = textwrap.dedent("""
    import hashlib, json, sys
    from pathlib import Path
    from srcreview.model.revision import Pin, Revision
    from srcreview.source.obtain import open_source
    data = Path(sys.argv[1]).read_bytes()
    pin = Pin(version="0.0.1", revision=sys.argv[2], sdist_sha256=hashlib.sha256(data).hexdigest())
    tree = open_source(Revision(requested="0.0.1", sha=sys.argv[2], version="0.0.1", pin=pin), provider="registry")
    print(json.dumps({"cached": tree.cached, "files": tree.files()}))
""")


def test_two_concurrent_fetches_share_the_cache(http_server, cache_dir, monkeypatch, sdist, tmp_path):
    monkeypatch.setenv("PIP_INDEX_URL", http_server.serve_index({SDIST: sdist}))
    http_server.routes["/files/" + SDIST].delay = 0.5
    archive = tmp_path / SDIST
    archive.write_bytes(sdist)
    procs = [subprocess.Popen([sys.executable, "-c", CONCURRENT, str(archive), FAKE_SHA], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    assert http_server.hits["/files/" + SDIST] == 1
    assert sorted(r["cached"] for r in results) == [False, True]
    assert results[0]["files"] == results[1]["files"]


def test_auto_falls_back_to_github_when_the_index_is_unreachable(http_server, cache_dir, monkeypatch, sdist,
                                                                    refused_url):
    from conftest import make_tar

    monkeypatch.setenv("PIP_INDEX_URL", refused_url + "/simple")
    files = {k: v for k, v in sdist_files().items() if k != "vllm/_version.py"}
    http_server.routes[f"/archive/{FAKE_SHA}.tar.gz"] = Route(make_tar(files, top=f"vllm-{FAKE_SHA}", comment=FAKE_SHA))
    monkeypatch.setenv("SRCREVIEW_GITHUB_URL", http_server.url("/archive"))
    tree = open_source(release(sdist))
    assert tree.provider == "github" and tree.revision.version == VERSION


def test_verification_failure_never_falls_back(http_server, cache_dir, monkeypatch, sdist):
    monkeypatch.setenv("PIP_INDEX_URL", http_server.serve_index({SDIST: sdist}, hashes={SDIST: "0" * 64}))
    files = {k: v for k, v in sdist_files().items() if k != "vllm/_version.py"}
    http_server.routes[f"/archive/{FAKE_SHA}.tar.gz"] = Route(make_tar(files, top=f"vllm-{FAKE_SHA}", comment=FAKE_SHA))
    monkeypatch.setenv("SRCREVIEW_GITHUB_URL", http_server.url("/archive"))
    with pytest.raises(VerificationFailed, match="does not match the index's"):
        open_source(release(sdist))
    assert f"/archive/{FAKE_SHA}.tar.gz" not in http_server.hits
