"""`srcreview fetch` and `show`: one line per outcome, exit codes, and the real vLLM 0.29.0 source."""

from __future__ import annotations

import pytest
from conftest import FAKE_SHA, Route, make_tar, sdist_files

PIN_029 = "98dff2a81d747d1dba01a47f939f48c3526d4206"
EAGLE = "vllm/v1/worker/gpu/spec_decode/eagle/utils.py"


def one_error_line(result, code: int) -> str:
    assert result.code == code, (result.code, result.err)
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("srcreview: error: "), result.err
    assert "Traceback" not in result.err
    return lines[0].removeprefix("srcreview: error: ")


@pytest.mark.network
def test_real_vllm_029_from_the_registry(vllm_029, cli):
    assert vllm_029.provider == "registry"
    assert vllm_029.revision.sha == PIN_029
    assert vllm_029.read_text(EAGLE).splitlines()[35].startswith("def load_eagle_model(")
    by_version = cli("fetch", "--rev", "0.29.0")
    by_commit = cli("fetch", "--rev", "98dff2a")
    assert by_version.code == by_commit.code == 0, by_version.err + by_commit.err
    assert by_version.out == by_commit.out
    line = by_version.out.strip()
    assert line.startswith("vLLM 0.29.0 (98dff2a81) from registry vllm-0.29.0.tar.gz (cached): commit " + PIN_029)
    assert "/" not in line.split("commit", 1)[0].replace("vllm-0.29.0.tar.gz", "")


@pytest.mark.network
def test_show_prints_numbered_lines_and_the_anchor(vllm_029, cli):
    result = cli("show", "--rev", "0.29.0", f"{EAGLE}:36-49")
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    assert lines[0].startswith("36  def load_eagle_model(")
    assert lines[-2].startswith("49  ")
    assert len(lines) == 15
    assert lines[-1] == f"https://github.com/vllm-project/vllm/blob/{PIN_029}/{EAGLE}#L36-L49"
    single = cli("show", "--rev", "98dff2a", f"{EAGLE}:36")
    assert single.out.splitlines() == [lines[0], f"https://github.com/vllm-project/vllm/blob/{PIN_029}/{EAGLE}#L36"]


@pytest.mark.network
@pytest.mark.parametrize("location, message", [
    (f"{EAGLE}:49-36", "line range must satisfy 1 <= START <= END"),
    (f"{EAGLE}:0", "line range must satisfy"),
    (f"{EAGLE}:36-99999", "out of range"),
    ("vllm/no_such_module.py", "vllm/no_such_module.py: no such file at vLLM 0.29.0 (98dff2a81)"),
    ("../etc/passwd", "not a path inside the source tree"),
    (f"{EAGLE}:x-y", "expected PATH, PATH:LINE or PATH:START-END"),
])
def test_show_refuses_bad_locations(vllm_029, cli, location, message):
    assert message in one_error_line(cli("show", "--rev", "0.29.0", location), 64)


@pytest.mark.parametrize("args, message", [
    (["--rev=-x"], "--rev: '-x' starts with '-'"),
    (["--rev", "zzzzzzz"], "neither a release version (e.g. 0.29.0) nor a hex commit id"),
    (["--rev", "98df"], "too short to name a commit"),
    (["--rev", "0.29.0", "--provider", "local"], "--provider local needs --source PATH"),
    (["--rev", "0.29.0", "--source", "no-such-dir"], "--source no-such-dir: no such file or directory"),
])
def test_usage_errors_are_one_line_exit_64(cli, cache_dir, args, message):
    assert message in one_error_line(cli("fetch", *args), 64)


def test_rev_that_looks_like_an_option_is_refused(cli, cache_dir):
    result = cli("fetch", "--rev", "--upload-pack=x")
    assert result.code == 64 and result.err.splitlines()[-1].endswith("argument --rev: expected one argument")


def test_unreachable_index_is_exit_2_one_line(cli, cache_dir, monkeypatch, refused_url):
    from srcreview.source import http as nethttp

    monkeypatch.setattr(nethttp, "BACKOFF_SECONDS", 0.01)
    monkeypatch.setenv("PIP_INDEX_URL", refused_url.replace("http://", "http://bob:pw@") + "/simple")
    message = one_error_line(cli("fetch", "--rev", "0.29.0", "--provider", "registry"), 2)
    assert message.startswith("cannot reach the package index http://***@127.0.0.1:")
    assert message.endswith("connection refused (3 attempts)") and "pw" not in message


def test_unwritable_cache_is_exit_2_one_line(cli, tmp_path, monkeypatch, refused_url):
    (tmp_path / "file").write_bytes(b"")
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "file" / "cache"))
    monkeypatch.setenv("PIP_INDEX_URL", refused_url + "/simple")
    message = one_error_line(cli("fetch", "--rev", "0.29.0", "--provider", "registry"), 2)
    assert message.startswith("cache directory ($SRCREVIEW_CACHE) is not writable")


def test_github_provider_through_the_cli(cli, cache_dir, http_server, monkeypatch):
    files = {k: v for k, v in sdist_files().items() if k != "vllm/_version.py"}
    http_server.routes[f"/archive/{FAKE_SHA[:7]}.tar.gz"] = Route(make_tar(files, top=f"vllm-{FAKE_SHA}", comment=FAKE_SHA))
    monkeypatch.setenv("SRCREVIEW_GITHUB_URL", http_server.url("/archive"))
    result = cli("fetch", "--rev", FAKE_SHA[:7], "--provider", "github")
    assert result.code == 0, result.err
    assert result.out == f"vLLM 123456789 from github tarball: commit {FAKE_SHA}, 3 files\n"
    assert result.err == f"srcreview: downloading vllm-{FAKE_SHA[:7]}.tar.gz (0.0 MB)\n"  # no terminal: no bar


@pytest.fixture
def sdist_dir(tmp_path):
    root = tmp_path / "vllm-0.0.1"
    for name, data in sdist_files().items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


def test_unpacked_sdist_directory_is_verified(cli, cache_dir, sdist_dir):
    ok = cli("fetch", "--rev", FAKE_SHA[:10], "--source", str(sdist_dir))
    assert ok.code == 0, ok.err
    # the sdist proves 9 digits: the 10th is reported as unverified, never printed as the commit
    assert ok.out == (f"vLLM 123456789 from local sdist directory: commit 123456789, 4 files (requested commit "
                      f"{FAKE_SHA[:10]} is unverified: the source records only 123456789)\n")
    wrong = one_error_line(cli("fetch", "--rev", "abcdef0", "--source", str(sdist_dir)), 2)
    assert wrong == "--source vllm-0.0.1: built from commit 123456789 (version 0.0.1), not the requested abcdef0"


def test_show_whole_file_has_an_unanchored_url(cli, cache_dir, sdist_dir):
    result = cli("show", "--rev", FAKE_SHA[:10], "--source", str(sdist_dir), "vllm/config/speculative.py")
    assert result.code == 0, result.err
    assert result.out == ("1  class SpeculativeConfig:\n2      attention_backend: str | None = None\n"
                          f"https://github.com/vllm-project/vllm/blob/{FAKE_SHA[:9]}/vllm/config/speculative.py\n")


def test_directory_that_is_no_source_is_a_usage_error(cli, cache_dir, tmp_path):
    (tmp_path / "empty").mkdir()
    assert "neither a git repository nor an unpacked vLLM sdist" in one_error_line(
        cli("fetch", "--rev", "abcdef0", "--source", str(tmp_path / "empty")), 64)


def test_packed_sdist_is_extracted_once_and_verified(cli, cache_dir, tmp_path):
    archive = tmp_path / "vllm-0.0.1.tar.gz"
    archive.write_bytes(make_tar(sdist_files()))
    first = cli("fetch", "--rev", FAKE_SHA[:7], "--source", str(archive))
    assert first.code == 0, first.err
    assert first.out == f"vLLM 1234567 from local vllm-0.0.1.tar.gz: commit {FAKE_SHA[:7]}, 4 files\n"
    second = cli("show", "--rev", FAKE_SHA[:7], "--source", str(archive), "vllm/config/speculative.py:1")
    assert second.out.splitlines()[0] == "1  class SpeculativeConfig:"
    assert str(tmp_path) not in first.out + second.out
    assert "built from commit 123456789" in one_error_line(
        cli("fetch", "--rev", "abcdef0", "--source", str(archive)), 2)


def test_hostile_sdist_archive_is_exit_2(cli, cache_dir, tmp_path):
    import tarfile

    evil = tarfile.TarInfo("vllm-0.0.1/../../evil")
    evil.size = 1
    archive = tmp_path / "evil.tar.gz"
    archive.write_bytes(make_tar(sdist_files(), extra=[evil]))
    assert one_error_line(cli("fetch", "--rev", "abcdef0", "--source", str(archive)), 2) == \
        "archive evil.tar.gz: member 'vllm-0.0.1/../../evil' has a '..' component"
