"""Releases pins/ does not know: discovered on a real PEP 691 index on 127.0.0.1, and `pins update`.

The pins file in use is `$SRCREVIEW_PINS`: here a copy of the shipped one that stops at 0.30.0.
The sdists are built in the test; the last test asks the real index of pip's configuration for
0.31.0 (a `releases` test: `pytest -m releases`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import make_tar, sdist_files

from srcreview.model.revision import load_pins, parse_version
from srcreview.source.pins_update import render_pins

ROOT = Path(__file__).resolve().parent.parent.parent
NESTED = ROOT / "examples" / "thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml"
COMMIT = "abcdef0123456789abcdef0123456789abcdef01"


@pytest.fixture
def old_pins(tmp_path, monkeypatch) -> Path:
    """A pins file that stops at 0.30.0, in use through SRCREVIEW_PINS."""
    path = tmp_path / "pins.toml"
    path.write_text(render_pins([p for p in load_pins() if parse_version(p.version) <= parse_version("0.30.0")]))
    monkeypatch.setenv("SRCREVIEW_PINS", str(path))
    return path


def sdist(version: str, commit: str = COMMIT, claims: str | None = None) -> bytes:
    return make_tar(sdist_files(commit, claims or version), top=f"vllm-{version}")


def serve(http_server, monkeypatch, files: dict[str, bytes], hashes: dict[str, str] | None = None) -> str:
    index = http_server.serve_index(files, hashes=hashes)
    monkeypatch.setenv("PIP_INDEX_URL", index)
    return index


def test_a_release_not_in_pins_comes_from_the_index_and_says_so(cli, cache_dir, old_pins, http_server, monkeypatch,
                                                               tmp_path):
    serve(http_server, monkeypatch, {"vllm-0.99.0.tar.gz": sdist("0.99.0")})
    first = cli("fetch", "--rev", "0.99.0")
    assert first.code == 0, first.err
    assert first.out == ("vLLM 0.99.0 (abcdef012) from registry vllm-0.99.0.tar.gz: commit abcdef012, 4 files "
                         "(release not in pins/: its sdist sha256 and commit come from the package index)\n")
    http_server.routes.clear()  # later runs resolve it from the cache, offline
    (tmp_path / "r.toml").write_text('[recipe]\nname = "r"\n[engine]\nkv_cache_dtype = "fp8"\n')
    checked = cli("check", str(tmp_path / "r.toml"), "--rev", "0.99.0", "--format", "json", "--fail-on", "none")
    (review,) = json.loads(checked.out)["reviews"]
    # the 4-file sdist has none of the modules the rules name: the review is incomplete (exit 2)
    assert checked.code == 2 and review["incomplete"], checked.err
    revision = review["revision"]
    assert (revision["version"], revision["sha"], revision["release_from"]) == ("0.99.0", "abcdef012", "index")
    assert old_pins.read_text().count("[[release]]") == 8  # discovery never writes pins/: `pins update` does


def test_cache_info_and_clean_know_an_index_release_and_its_record(cli, cache_dir, old_pins, http_server,
                                                                    monkeypatch):
    serve(http_server, monkeypatch, {"vllm-0.99.0.tar.gz": sdist("0.99.0")})
    assert cli("fetch", "--rev", "0.99.0").code == 0
    http_server.routes.clear()
    asked = dict(http_server.hits)
    sources = [p["name"] for p in json.loads(cli("cache", "info", "--format", "json").out)["parts"]
               if p["kind"] == "source"]
    assert sources == ["registry/0.99.0-abcdef012", "releases/vllm-0.99.0.json"]
    unknown = cli("cache", "clean", "--rev", "0.98.0")
    assert unknown.code == 64 and "release 0.98.0 is neither in pins/ nor recorded in the cache" in unknown.err
    removed = cli("cache", "clean", "--rev", "0.99.0", "--format", "json")
    assert removed.code == 0 and json.loads(removed.out)["removed"] == sources, removed.err
    assert not (cache_dir / "releases" / "vllm-0.99.0.json").exists()
    assert http_server.hits == asked, "cleaning asks no index"


def test_a_release_the_index_does_not_have_is_a_usage_error(cli, cache_dir, old_pins, http_server, monkeypatch):
    index = serve(http_server, monkeypatch, {"vllm-0.99.0.tar.gz": sdist("0.99.0")})
    result = cli("fetch", "--rev", "0.98.0")
    assert result.code == 64 and result.err == (f"srcreview: error: --rev: release 0.98.0 is neither in pins/ nor on "
                                                f"the package index {index}\n")


@pytest.mark.parametrize("case", ["claims-another-version", "wrong-digest", "no-digest"])
def test_an_index_release_that_cannot_be_verified_is_exit_2(cli, cache_dir, old_pins, http_server, monkeypatch, case):
    data = sdist("0.99.0", claims="0.98.0" if case == "claims-another-version" else None)
    hashes = {"vllm-0.99.0.tar.gz": "0" * 64} if case == "wrong-digest" else None
    serve(http_server, monkeypatch, {"vllm-0.99.0.tar.gz": data}, hashes)
    if case == "no-digest":
        page = json.loads(http_server.routes["/simple/vllm/"].body)
        page["files"][0]["hashes"] = {}
        http_server.routes["/simple/vllm/"].body = json.dumps(page).encode()
    result = cli("fetch", "--rev", "0.99.0")
    assert result.code == 2 and result.out == "" and "Traceback" not in result.err, result
    expected = {"claims-another-version": "vllm-0.99.0.tar.gz: vllm/_version.py records version 0.98.0 and commit "
                                          "abcdef012, not a build of release 0.99.0",
                "wrong-digest": "vllm-0.99.0.tar.gz: sha256 ",
                "no-digest": "vllm-0.99.0.tar.gz: the index gives no sha256, and pins/ does not know vLLM 0.99.0"}
    assert result.err.splitlines()[-1].removeprefix("srcreview: error: ").startswith(expected[case]), result.err


def test_pins_update_adds_index_releases_with_full_commits_from_release_tags(cli, cache_dir, old_pins, http_server,
                                                                           monkeypatch, make_git_repo):
    repo = make_git_repo("vllm")
    full = repo.commit({"README": "release"})
    repo.git("tag", "-a", "v0.99.0", "-m", "v0.99.0")
    other = "1234567890abcdef1234567890abcdef12345678"
    files = {"vllm-0.29.0.tar.gz": b"never downloaded", "vllm-0.99.0.tar.gz": sdist("0.99.0", full),
             "vllm-0.99.1.tar.gz": sdist("0.99.1", other), "vllm-0.99.2rc1.tar.gz": b"a pre-release"}
    serve(http_server, monkeypatch, files)
    result = cli("pins", "update", "--git-url", str(repo.path))
    assert result.code == 0, result.err
    assert result.out == (f"added 0.99.0 {full} (full commit from the release tag v0.99.0)\n"
                          f"added 0.99.1 {other[:9]}\n")
    pins = {p.version: p for p in load_pins(old_pins)}
    digest = hashlib.sha256(files["vllm-0.99.0.tar.gz"]).hexdigest()
    assert (pins["0.99.0"].revision, pins["0.99.0"].sdist_sha256) == (full, digest)
    assert pins["0.99.1"].revision == other[:9] and "0.99.2rc1" not in pins
    assert http_server.hits.get("/files/vllm-0.29.0.tar.gz") is None
    again = cli("pins", "update", "--no-git")
    assert again.out == "pins.toml: up to date with the package index\n"
    fetched = cli("fetch", "--rev", "0.99.0")  # now from pins/, with the full commit, reusing the download
    assert fetched.code == 0, fetched.err
    assert f"commit {full}," in fetched.out and "package index" not in fetched.out.split(":", 1)[1]


def test_pins_update_without_a_reachable_remote_keeps_nine_digits(cli, cache_dir, old_pins, http_server, monkeypatch,
                                                                  tmp_path):
    serve(http_server, monkeypatch, {"vllm-0.99.0.tar.gz": sdist("0.99.0")})
    result = cli("pins", "update", "--git-url", str(tmp_path / "no-such-repo"))
    assert result.code == 0 and result.out == "added 0.99.0 abcdef012\n"
    assert result.err.startswith("srcreview: note: full commits unavailable (git ls-remote ")
    assert str(tmp_path) not in result.err + result.out


@pytest.mark.network
@pytest.mark.releases
def test_check_at_a_release_newer_than_pins_with_the_real_index(cli, old_pins, monkeypatch, tmp_path):
    """`srcreview check RECIPE --rev 0.31.0` on a machine whose pins/ stops at 0.30.0: the release comes
    from the index of pip's configuration (downloaded once into the user cache)."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(NESTED, "nested.toml")
    result = cli("check", "nested.toml", "--rev", "0.31.0", "--format", "json", "--fail-on", "none")
    assert result.code == 0, result.err
    revision = json.loads(result.out)["reviews"][0]["revision"]
    assert (revision["version"], revision["sha"], revision["release_from"]) == ("0.31.0", "db9527a46", "index")
