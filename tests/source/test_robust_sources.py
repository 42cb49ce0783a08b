"""Hostile archives, failing networks, damaged and shared caches, secrets in URLs (issue 7).

Everything runs offline against what the test builds: archives made here, a real HTTP server
on 127.0.0.1, the real CLI (in this process, or as separate `python -m srcreview` processes).
Each case states what the tool must do; docs/robustness.md tabulates them.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import signal
import stat
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest
from conftest import (
    FAKE_SHA,
    Route,
    make_tar,
    make_zip,
    permission_bound,
    sdist_files,
    srcreview_process,
)

from srcreview.core.cachedir import MARKER
from srcreview.core.errors import EXIT_INCOMPLETE, SourceUnavailable
from srcreview.model.revision import Pin
from srcreview.source import archive as archive_mod
from srcreview.source import http as nethttp
from srcreview.source.archive import extract
from srcreview.source.cache import MANIFEST, Cache, _manifest_digest, verified_manifest

VERSION = "0.0.1"
SDIST = f"vllm-{VERSION}.tar.gz"
KEY = f"{VERSION}-{FAKE_SHA[:9]}"  # registry entries are keyed by what the sdist proves
USER, SECRET = "alice", "s3cr3t-pw-7f3a"
GOOD_LINE = f"vLLM {VERSION} (123456789) from registry {SDIST}: commit {FAKE_SHA}, 4 files"


# --------------------------------------------------------------------------------------- helpers


def member(name: str, kind=tarfile.REGTYPE, linkname: str = "", size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.size = size
    info.mode = 0o644
    return info


def refused(tmp_path: Path, name: str, data: bytes, pattern: str, **limits) -> SourceUnavailable:
    """Extracting `data` fails with one line matching `pattern`, and nothing lands outside `out/`."""
    path = tmp_path / name
    path.write_bytes(data)
    dest = tmp_path / "out"
    dest.mkdir()
    with pytest.raises(SourceUnavailable, match=pattern) as info:
        extract(path, dest, **limits)
    assert info.value.exit_code == EXIT_INCOMPLETE and "\n" not in info.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, "out"])
    return info.value


def error_line(result, code: int = EXIT_INCOMPLETE) -> str:
    """The one `srcreview: error:` line; anything else on stderr may only be download notes."""
    assert result.code == code, (result.code, result.out, result.err)
    lines = result.err.splitlines()
    errors = [line for line in lines if line.startswith("srcreview: error: ")]
    assert len(errors) == 1, result.err
    assert all(line in errors or line.startswith("srcreview: downloading ") for line in lines), result.err
    assert lines[-1] == errors[0] and "Traceback" not in result.err
    return errors[0].removeprefix("srcreview: error: ")


def no_secret(*texts: str) -> None:
    for text in texts:
        assert SECRET not in text and f"{USER}:" not in text and f"{USER}@" not in text, text


def with_credentials(url: str) -> str:
    return url.replace("http://", f"http://{USER}:{SECRET}@", 1)


def leftovers(cache_dir: Path, kind: str) -> list[str]:
    """Scratch files and staging trees anywhere in the cache: none may survive a finished run."""
    found = []
    for folder in (cache_dir / ".tmp", cache_dir / kind):
        if folder.is_dir():
            found += [f"{folder.name}/{p.name}" for p in folder.iterdir() if p.name != MARKER and (
                      folder.name == ".tmp" or p.name.startswith("."))]  # (the marker is srcreview's own)
    return sorted(found)


# ------------------------------------------------------------------------------------- archives
# Already covered in test_source_archive.py: tar traversal, absolute names, symlinks and hard
# links out of the root, writes through links, tar devices and fifos, the size and member
# limits on tar, the size limit on zip, a truncated tar.gz, a corrupt zip, a non-archive.


@pytest.mark.parametrize("name, data, pattern", [
    ("drive.zip", make_zip({"C:/evil": b"x"}, top=""), r"member 'C:/evil' has an absolute path"),
    ("drive.tar", make_tar({}, extra=[member("C:/evil", size=1)], compress=False), r"'C:/evil' has an absolute path"),
    ("backslash.zip", make_zip({"vllm-0.0.1\\..\\..\\evil": b"x"}, top=""), r"has a '\.\.' component"),
    ("abs-link.zip", make_zip(sdist_files(), links={"s": "/etc/passwd"}), r"symbolic link to an absolute"),
    ("hardlink-to-symlink.tar", make_tar(sdist_files(), compress=False, extra=[
        member("vllm-0.0.1/s", tarfile.SYMTYPE, "vllm/__init__.py"),
        member("vllm-0.0.1/h", tarfile.LNKTYPE, "vllm-0.0.1/s")]), r"hard link to 'vllm-0.0.1/s', which is not a file"),
], ids=["drive-letter-zip", "drive-letter-tar", "backslash-traversal-zip", "absolute-symlink-zip",
        "hardlink-to-symlink-tar"])
def test_hostile_members_not_yet_covered_are_refused(tmp_path, name, data, pattern):
    refused(tmp_path, name, data, pattern)


def _zip_with_mode(mode: int) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr("vllm-0.0.1/vllm/__init__.py", b"")
        info = zipfile.ZipInfo("vllm-0.0.1/dev")
        info.external_attr = mode << 16
        zf.writestr(info, b"")
    return out.getvalue()


@pytest.mark.parametrize("mode", [stat.S_IFCHR | 0o644, stat.S_IFBLK | 0o644, stat.S_IFIFO | 0o644],
                         ids=["char-device", "block-device", "fifo"])
def test_zip_device_or_fifo_is_refused(tmp_path, mode):
    refused(tmp_path, "dev.zip", _zip_with_mode(mode), r"member 'vllm-0.0.1/dev' is a device or fifo")


def test_zip_member_count_bomb_is_refused(tmp_path):
    refused(tmp_path, "many.zip", make_zip({f"f{i}": b"" for i in range(50)}), r"more than 10 members",
            max_members=10)


def _big_tar(compress: bool = True) -> bytes:
    return make_tar({f"f{i:02}.bin": hashlib.sha256(b"%d" % i).digest() * 600 for i in range(20)}, compress=compress)


def _damaged(kind: str) -> bytes:
    data = bytearray(_big_tar(compress=kind != "cut-at-member-boundary"))
    if kind == "mid-stream-garbage":  # tarfile alone reads this as a shorter, valid-looking archive
        data[len(data) // 2: len(data) // 2 + 64] = bytes(64)
    elif kind == "gzip-crc":  # only reading to the very end of the gzip stream notices
        data[-8:-4] = bytes(4) if data[-8:-4] != bytes(4) else b"\1\1\1\1"
    elif kind == "cut-at-member-boundary":  # a plain tar cut after a whole member: no end marker
        header = 512
        body = 12 * 1600 // 512 * 512 + 512  # 19,200 bytes of data per member, padded to blocks
        return bytes(data[: header + 5 * (header + body)])
    elif kind == "truncated-zip":
        zipped = make_zip({f"f{i}": bytes(range(256)) * 40 for i in range(10)})
        return zipped[: len(zipped) * 2 // 3]
    return bytes(data)


@pytest.mark.parametrize("kind, name", [("mid-stream-garbage", "bad.tar.gz"), ("gzip-crc", "crc.tar.gz"),
                                        ("cut-at-member-boundary", "cut.tar"), ("truncated-zip", "cut.zip")],
                         ids=["mid-stream-garbage", "gzip-crc", "cut-at-member-boundary", "truncated-zip"])
def test_damaged_archives_are_refused_never_half_extracted(tmp_path, kind, name):
    error = refused(tmp_path, name, _damaged(kind), rf"archive {re.escape(name)}: truncated or corrupt")
    assert error.message.startswith(f"archive {name}: ")


def test_an_intact_archive_of_the_same_shape_extracts(tmp_path):
    """The damaged archives above differ from this one only by the damage."""
    for name, data in (("ok.tar.gz", _big_tar()), ("ok.tar", _big_tar(compress=False))):
        (tmp_path / name).write_bytes(data)
        dest = tmp_path / f"out-{name}"
        dest.mkdir()
        info = extract(tmp_path / name, dest)
        assert info.members == 21 and len(list(dest.iterdir())) == 20


def test_archive_limits_come_from_the_environment(monkeypatch):
    monkeypatch.delenv("SRCREVIEW_ARCHIVE_MAX_BYTES", raising=False)
    monkeypatch.delenv("SRCREVIEW_ARCHIVE_MAX_MEMBERS", raising=False)
    assert archive_mod.default_limits() == (archive_mod.MAX_TOTAL_BYTES, archive_mod.MAX_MEMBERS)
    monkeypatch.setenv("SRCREVIEW_ARCHIVE_MAX_BYTES", "1000")
    monkeypatch.setenv("SRCREVIEW_ARCHIVE_MAX_MEMBERS", "7")
    assert archive_mod.default_limits() == (1000, 7)


def test_default_archive_limits_are_sane():
    """Bounded (a bomb stops before it fills a disk) yet far above any real release."""
    assert 1 << 30 <= archive_mod.MAX_TOTAL_BYTES <= 16 << 30
    assert 50_000 <= archive_mod.MAX_MEMBERS <= 1_000_000
    assert 100 << 20 <= nethttp.MAX_DOWNLOAD_BYTES <= archive_mod.MAX_TOTAL_BYTES
    assert nethttp.MAX_DOCUMENT_BYTES <= 256 << 20
    assert nethttp.ATTEMPTS <= 5 and nethttp.READ_TIMEOUT <= 300 and nethttp.DEADLINE_SECONDS <= 3600


def test_default_archive_limits_admit_the_real_release_with_room(vllm_029):
    """The real vLLM 0.29.0 tree fits the defaults eight times over (so its growth is no surprise)."""
    files = vllm_029.files()
    size = sum((vllm_029.root / f).stat().st_size for f in files)
    assert len(files) > 5_000 and size > 50 << 20  # it is the real tree
    assert 8 * len(files) < archive_mod.MAX_MEMBERS and 8 * size < archive_mod.MAX_TOTAL_BYTES


@pytest.mark.parametrize("env, message", [
    ({"SRCREVIEW_ARCHIVE_MAX_BYTES": str(1 << 20)}, r"expands beyond 1048576 bytes \(refusing a decompression bomb\)"),
    ({"SRCREVIEW_ARCHIVE_MAX_MEMBERS": "10"}, r"more than 10 members \(refusing a decompression bomb\)"),
], ids=["size", "member-count"])
def test_bomb_through_the_cli_is_exit_2_and_leaves_no_entry(cli, cache_dir, tmp_path, monkeypatch, env, message):
    files = {**sdist_files(), "zeros.bin": bytes(2 << 20), **{f"many/f{i}": b"" for i in range(20)}}
    bomb = tmp_path / "vllm-0.0.1.tar.gz"
    bomb.write_bytes(make_tar(files))
    assert bomb.stat().st_size < 100_000
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    line = error_line(cli("fetch", "--rev", FAKE_SHA[:7], "--source", str(bomb)))
    assert re.fullmatch(rf"archive vllm-0\.0\.1\.tar\.gz: member '[^']+' {message}", line), line
    assert Cache(cache_dir).keys("local") == [] and leftovers(cache_dir, "local") == []


def test_malformed_archive_limit_is_a_usage_error(cli, cache_dir, tmp_path, monkeypatch):
    archive = tmp_path / "vllm-0.0.1.tar.gz"
    archive.write_bytes(make_tar(sdist_files()))
    monkeypatch.setenv("SRCREVIEW_ARCHIVE_MAX_BYTES", "lots")
    assert error_line(cli("fetch", "--rev", FAKE_SHA[:7], "--source", str(archive)), 64) == \
        "SRCREVIEW_ARCHIVE_MAX_BYTES='lots': expected a positive whole number"


# -------------------------------------------------------------------------------------- network


@pytest.fixture
def sdist() -> bytes:
    return make_tar(sdist_files(), top=f"vllm-{VERSION}")


@pytest.fixture
def release(sdist, cache_dir, monkeypatch, refused_url):
    """`--rev 0.0.1` is a pinned release of the test's sdist; no other source is reachable.

    Retries keep their count, not their waiting; timeouts and the deadline are short so the
    hung and trickling servers below fail in a second.
    """
    pin = Pin(version=VERSION, revision=FAKE_SHA, sdist_sha256=hashlib.sha256(sdist).hexdigest())
    monkeypatch.setattr("srcreview.model.revision.load_pins", lambda path=None: (pin,))
    monkeypatch.setattr(nethttp, "BACKOFF_SECONDS", 0.01)
    monkeypatch.setenv("SRCREVIEW_HTTP_TIMEOUT", "0.4")
    monkeypatch.setenv("SRCREVIEW_HTTP_DEADLINE", "0.8")
    monkeypatch.setenv("SRCREVIEW_GITHUB_URL", refused_url + "/archive")
    monkeypatch.setenv("SRCREVIEW_GIT_URL", refused_url + "/vllm.git")
    return sdist


def _index(server, sdist: bytes) -> str:
    return with_credentials(server.serve_index({SDIST: sdist}))


def _json_page(server) -> Route:
    return server.routes["/simple/vllm/"]


# each case: (id, how the server misbehaves, the error line, the path whose hits are counted, hits)
def _refused(server, sdist, refused_url, silent_url):
    return with_credentials(refused_url + "/simple")


def _hung_index(server, sdist, refused_url, silent_url):
    return with_credentials(silent_url + "/simple")


def _hung_download(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    server.routes["/files/" + SDIST].delay = 3
    return url


def _slow_index(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    _json_page(server).trickle = (4, 0.05)
    return url


def _slow_download(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    server.routes["/files/" + SDIST].trickle = (8, 0.05)
    return url


def _trickled_index_headers(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    _json_page(server).header_trickle = 0.2
    return url


def _trickled_download_headers(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    server.routes["/files/" + SDIST].header_trickle = 0.2
    return url


def _index_404(server, sdist, refused_url, silent_url):
    return with_credentials(server.url("/nothing-here"))


def _download_404(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    del server.routes["/files/" + SDIST]
    return url


def _index_500(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    _json_page(server).status = 500
    return url


def _download_500(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    server.routes["/files/" + SDIST].status = 500
    return url


def _html_not_an_index(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    server.routes["/simple/vllm/"] = Route(b"<html><body><h1>Please sign in</h1></body></html>",
                                           content_type="text/html; charset=utf-8")
    return url


def _html_labelled_json(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    server.routes["/simple/vllm/"] = Route(b"<html><body>502 Bad Gateway</body></html>",
                                           content_type="application/vnd.pypi.simple.v1+json")
    return url


def _other_content_type(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    _json_page(server).content_type = "application/octet-stream"
    return url


def _truncated_index(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    page = _json_page(server)
    page.content_length, page.body = len(page.body), page.body[: len(page.body) // 2]
    return url


def _truncated_download(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    server.routes["/files/" + SDIST] = Route(sdist[: len(sdist) // 2], content_length=len(sdist))
    return url


def _short_download_without_length(server, sdist, refused_url, silent_url):
    """No Content-Length, connection closed early: only the index's stated size tells."""
    url = _index(server, sdist)
    server.routes["/files/" + SDIST] = Route(sdist[: len(sdist) // 2], content_length=-1)
    return url


def _long_download(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    server.routes["/files/" + SDIST] = Route(sdist + bytes(4096), content_length=-1)
    return url


def _deep_index(server, sdist, refused_url, silent_url):
    url = _index(server, sdist)
    _json_page(server).body = b'{"files": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    return url


def _sha_mismatch(server, sdist, refused_url, silent_url):
    return with_credentials(server.serve_index({SDIST: sdist}, hashes={SDIST: "0" * 64}))


INDEX = r"http://\*\*\*@127\.0\.0\.1:\d+/simple"
FILE = "/files/" + SDIST
PAGE = "/simple/vllm/"
A = nethttp.ATTEMPTS
NETWORK_CASES = [
    ("refused connection", _refused, rf"cannot reach the package index {INDEX}: connection refused \({A} attempts\)", None, 0),
    ("hung index (timeout)", _hung_index, rf"cannot reach the package index {INDEX}: timed out \({A} attempts\)", None, 0),
    ("hung download (timeout)", _hung_download,
     rf"cannot reach the package index {INDEX} for {SDIST}: timed out \({A} attempts\)", FILE, A),
    ("slow index", _slow_index, rf"the package index {INDEX}: too slow: no complete answer within 0\.8 s "
     rf"\(SRCREVIEW_HTTP_DEADLINE\) \({A} attempts\)", PAGE, A),
    ("slow download", _slow_download, rf"the package index {INDEX} for {SDIST}: too slow: no complete answer "
     rf"within 0\.8 s \(SRCREVIEW_HTTP_DEADLINE\) \({A} attempts\)", FILE, A),
    ("trickled headers, index", _trickled_index_headers, rf"the package index {INDEX}: too slow: no complete "
     rf"answer within 0\.8 s \(SRCREVIEW_HTTP_DEADLINE\) \({A} attempts\)", PAGE, A),
    ("trickled headers, download", _trickled_download_headers, rf"the package index {INDEX} for {SDIST}: too slow: "
     rf"no complete answer within 0\.8 s \(SRCREVIEW_HTTP_DEADLINE\) \({A} attempts\)", FILE, A),
    ("index 404", _index_404, r"package index http://\*\*\*@127\.0\.0\.1:\d+/nothing-here has no project vllm "
     r"\(HTTP 404\)", "/nothing-here/vllm/", 1),
    ("download 404", _download_404, rf"the package index {INDEX} for {SDIST}: HTTP 404", FILE, 1),
    ("index 500", _index_500, rf"package index {INDEX}: HTTP 500 \({A} attempts\)", PAGE, A),
    ("download 500", _download_500, rf"the package index {INDEX} for {SDIST}: HTTP 500 \({A} attempts\)", FILE, A),
    ("HTML page instead of PEP 691 JSON", _html_not_an_index,
     rf"the package index {INDEX}: answered with a text/html page that is not a project page \(no file links; "
     rf"expected PEP 691 JSON\) \({A} attempts\)", PAGE, A),
    ("HTML body labelled JSON", _html_labelled_json,
     rf"the package index {INDEX}: answered with an unreadable application/vnd\.pypi\.simple\.v1\+json project "
     rf"page \(not PEP 691 JSON, or cut short\) \({A} attempts\)", PAGE, A),
    ("neither JSON nor HTML", _other_content_type,
     rf"the package index {INDEX}: answered with content type 'application/octet-stream', not a PEP 691 JSON or "
     rf"PEP 503 HTML project page \({A} attempts\)", PAGE, A),
    ("index page nested 100,000 deep", _deep_index,
     rf"the package index {INDEX}: answered with an unreadable application/vnd\.pypi\.simple\.v1\+json project "
     rf"page \(not PEP 691 JSON, or cut short\) \({A} attempts\)", PAGE, A),
    ("truncated index page", _truncated_index,
     rf"cannot reach the package index {INDEX}: connection closed before the whole body arrived \({A} attempts\)",
     PAGE, A),
    ("truncated download", _truncated_download,
     rf"cannot reach the package index {INDEX} for {SDIST}: connection closed before the whole body arrived "
     rf"\({A} attempts\)", FILE, A),
    ("short download, no Content-Length", _short_download_without_length,
     rf"the package index {INDEX} for {SDIST}: connection closed before the whole body arrived "
     rf"\(got \d+ of \d+ bytes\) \({A} attempts\)", FILE, A),
    ("download longer than the index states", _long_download,
     rf"the package index {INDEX} for {SDIST}: {SDIST} is larger than the \d+ bytes the index states", FILE, 1),
    ("sha256 mismatch", _sha_mismatch,
     rf"{SDIST}: sha256 [0-9a-f]{{64}} does not match the index's 0{{64}}", FILE, 1),
]


@pytest.mark.parametrize("case, misbehave, expected, counted, hits", NETWORK_CASES, ids=[c[0] for c in NETWORK_CASES])
def test_network_fault_is_bounded_one_line_exit_2_and_never_cached(
        case, misbehave, expected, counted, hits, cli, http_server, release, cache_dir, monkeypatch,
        refused_url, silent_url):
    monkeypatch.setenv("PIP_INDEX_URL", misbehave(http_server, release, refused_url, silent_url))
    started = time.monotonic()
    result = cli("fetch", "--rev", VERSION, "--provider", "registry")
    elapsed = time.monotonic() - started
    line = error_line(result)
    assert re.fullmatch(expected, line), line
    no_secret(result.out, result.err)
    if counted:
        assert http_server.hits.get(counted, 0) == hits, http_server.hits
    assert elapsed < 8, f"{case}: {elapsed:.1f} s: retries or waits are not bounded"
    # nothing the cache would trust, nothing left behind
    cache = Cache(cache_dir)
    assert cache.lookup("registry", KEY) is None and cache.keys("registry") == []
    assert leftovers(cache_dir, "registry") == []
    # the fault is gone: the next run downloads, verifies and caches; the one after is offline
    http_server.routes.clear()
    monkeypatch.setenv("PIP_INDEX_URL", _index(http_server, release))
    good = cli("fetch", "--rev", VERSION, "--provider", "registry")
    assert (good.code, good.out.strip()) == (0, GOOD_LINE), good.err
    http_server.routes.clear()
    again = cli("fetch", "--rev", VERSION)
    assert (again.code, again.out.strip()) == (0, GOOD_LINE.replace(f"{SDIST}:", f"{SDIST} (cached):")), again.err
    no_secret(good.out, good.err, again.out, again.err)


def test_a_run_killed_mid_download_leaves_nothing_the_cache_trusts(http_server, cache_dir, tmp_path):
    """SIGKILL during the download (a separate process): the next run finds no entry and builds a good one."""
    files = {k: v for k, v in sdist_files().items() if k != "vllm/_version.py"}
    files["vllm/data.bin"] = b"".join(hashlib.sha256(b"%d" % i).digest() for i in range(2500))  # incompressible
    tarball = make_tar(files, top=f"vllm-{FAKE_SHA}", comment=FAKE_SHA)
    path = f"/archive/{FAKE_SHA}.tar.gz"
    http_server.routes[path] = Route(tarball, trickle=(4096, 0.05))
    env = {**os.environ, "SRCREVIEW_CACHE": str(cache_dir), "SRCREVIEW_GITHUB_URL": http_server.url("/archive")}
    proc = srcreview_process("fetch", "--rev", FAKE_SHA, "--provider", "github", env=env)
    deadline = time.monotonic() + 20
    while not list((cache_dir / ".tmp").glob("*/*.tar.gz")) and time.monotonic() < deadline:
        time.sleep(0.02)
    partial = list((cache_dir / ".tmp").glob("*/*.tar.gz"))
    assert partial and proc.poll() is None, "the download never started"
    time.sleep(0.3)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=10)
    assert 0 < partial[0].stat().st_size < len(tarball)
    cache = Cache(cache_dir)
    assert cache.lookup("github", FAKE_SHA) is None and cache.keys("github") == []
    http_server.routes[path] = Route(tarball)
    good = srcreview_process("fetch", "--rev", FAKE_SHA, "--provider", "github", env=env)
    out, err = good.communicate(timeout=60)
    assert good.returncode == 0, err
    assert out == f"vLLM 123456789 from github tarball: commit {FAKE_SHA}, 4 files\n"
    assert verified_manifest(cache.path_for("github", FAKE_SHA), deep=True)["meta"] == {"provider": "github", "sha": FAKE_SHA}
    assert [p.name for p in (cache_dir / "github").iterdir() if p.name != MARKER] == [FAKE_SHA]  # staging gone
    # and so is its partial archive (fixed: it stayed in .tmp/ for a day)
    assert [p.name for p in (cache_dir / ".tmp").iterdir()] == [MARKER]


@pytest.mark.parametrize("server", ["hung", "trickling"])
def test_git_fetch_from_a_hung_or_trickling_server_is_bounded(cli, cache_dir, http_server, silent_url, monkeypatch,
                                                             server):
    """git gives up on a stalled transfer after the read timeout, and is killed at the deadline."""
    monkeypatch.setenv("SRCREVIEW_HTTP_TIMEOUT", "1")
    monkeypatch.setenv("SRCREVIEW_HTTP_DEADLINE", "2")
    if server == "hung":
        url = silent_url
    else:  # one byte every 0.3 s: never "too slow" for git's own low-speed limit, never done either
        http_server.routes["/vllm.git/info/refs"] = Route(b"#" * 1000, content_type="text/plain", trickle=(1, 0.3))
        url = http_server.base
    monkeypatch.setenv("SRCREVIEW_GIT_URL", with_credentials(url) + "/vllm.git")
    started = time.monotonic()
    result = cli("fetch", "--rev", "abcdef0", "--provider", "git")
    elapsed = time.monotonic() - started
    line = error_line(result)
    assert line.startswith(r"git fetch from http://***@127.0.0.1:"), line
    killed = line.endswith("too slow: no complete answer within 2 s (SRCREVIEW_HTTP_DEADLINE)")
    gave_up = "Operation too slow" in line  # git's own low-speed limit (needs git >= 2.31)
    assert (gave_up or killed) if server == "hung" else killed, line
    assert elapsed < 8, f"{elapsed:.1f} s"
    no_secret(result.out, result.err)
    assert Cache(cache_dir).keys("git") in ([], ["vllm.git"])  # at most the empty clone, never a commit


def test_malformed_index_urls_are_one_line_without_credentials(cli, release, cache_dir, monkeypatch):
    for url in (f"http://{USER}:{SECRET}@example.invalid:notaport/simple",
                f"http://{USER}:{SECRET}@example.invalid:99999/simple",
                f"http://{USER}:{SECRET}@[::1/simple", f"http://{USER}:{SECRET}@/simple"):
        monkeypatch.setenv("PIP_INDEX_URL", url)
        result = cli("fetch", "--rev", VERSION, "--provider", "registry")
        line = error_line(result)
        assert line.startswith("package index "), line
        assert line.endswith(("not a valid URL (check its host and port)", "the URL names no host")), line
        no_secret(result.out, result.err)


def test_credentials_from_pips_configuration_are_not_shown_either(cli, release, cache_dir, monkeypatch, tmp_path,
                                                                  refused_url):
    conf = tmp_path / "pip.conf"
    conf.write_text(f"[global]\nindex-url = {with_credentials(refused_url)}/simple\n")
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    monkeypatch.setenv("PIP_CONFIG_FILE", str(conf))
    result = cli("fetch", "--rev", VERSION, "--provider", "registry")
    assert error_line(result).startswith("cannot reach the package index http://***@127.0.0.1:")
    no_secret(result.out, result.err)


def test_malformed_http_limits_are_usage_errors(cli, release, cache_dir, monkeypatch, http_server):
    monkeypatch.setenv("PIP_INDEX_URL", _index(http_server, release))
    for name, value in (("SRCREVIEW_HTTP_TIMEOUT", "soon"), ("SRCREVIEW_HTTP_DEADLINE", "-1"),
                        ("SRCREVIEW_HTTP_TIMEOUT", "inf")):
        monkeypatch.setenv(name, value)
        assert error_line(cli("fetch", "--rev", VERSION, "--provider", "registry"), 64) == \
            f"{name}={value!r}: expected a positive number of seconds"
        monkeypatch.setenv(name, "5")


# ---------------------------------------------------------------------------------------- cache


@pytest.fixture
def cached_release(cli, http_server, release, cache_dir, monkeypatch):
    """The test release fetched once through the CLI; the index then stays up for rebuilds."""
    monkeypatch.setenv("PIP_INDEX_URL", _index(http_server, release))
    first = cli("fetch", "--rev", VERSION, "--provider", "registry")
    assert (first.code, first.out.strip()) == (0, GOOD_LINE), first.err
    return Cache(cache_dir).path_for("registry", KEY)


def _rewrite_manifest(entry: Path, change) -> None:
    data = json.loads((entry / MANIFEST).read_text())
    change(data)
    (entry / MANIFEST).write_text(json.dumps(data))


def _older_schema(entry: Path) -> None:
    def change(data):
        data["schema"] = 0
        data["digest"] = _manifest_digest(data["meta"], data["files"])  # intact, just old
    _rewrite_manifest(entry, change)


def _newer_schema(entry: Path) -> None:
    _rewrite_manifest(entry, lambda data: data.update(schema=99))


def _older_layout(entry: Path) -> None:
    """An entry laid out as files beside the manifest, without the `tree/` directory."""
    for child in (entry / "tree").iterdir():
        child.rename(entry / child.name)
    (entry / "tree").rmdir()


def _truncated_manifest(entry: Path) -> None:
    text = (entry / MANIFEST).read_bytes()
    (entry / MANIFEST).write_bytes(text[: len(text) // 2])


def _truncated_file(entry: Path) -> None:
    target = entry / "tree" / "vllm" / "config" / "speculative.py"
    target.write_bytes(target.read_bytes()[:7])


def _same_size_edit(entry: Path) -> None:
    target = entry / "tree" / "vllm" / "config" / "speculative.py"
    target.write_bytes(target.read_bytes().upper())


def _empty_manifest(entry: Path) -> None:
    (entry / MANIFEST).write_bytes(b"")


def _deep_manifest(entry: Path) -> None:
    (entry / MANIFEST).write_bytes(b'{"files": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")


@pytest.mark.parametrize("damage", [_older_schema, _newer_schema, _older_layout, _truncated_manifest,
                                    _empty_manifest, _deep_manifest, _truncated_file, _same_size_edit],
                         ids=lambda f: f.__name__.strip("_"))
def test_damaged_or_foreign_cache_entry_is_rebuilt_never_trusted(cli, cached_release, cache_dir, http_server, damage):
    damage(cached_release)
    assert verified_manifest(cached_release, deep=True) is None
    result = cli("fetch", "--rev", VERSION)
    assert (result.code, result.out.strip()) == (0, GOOD_LINE), result.err  # rebuilt: not "(cached)"
    assert http_server.hits[FILE] == 2
    assert verified_manifest(cached_release, deep=True)["meta"]["sdist"] == SDIST
    assert (cached_release / "tree" / "vllm" / "config" / "speculative.py").read_bytes() == \
        sdist_files()["vllm/config/speculative.py"]
    assert leftovers(cache_dir, "registry") == []


def _make_read_only(root: Path) -> None:
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o444)
        os.chmod(dirpath, 0o555)


def _make_writable(root: Path) -> None:
    for dirpath, _dirnames, _filenames in os.walk(root):
        os.chmod(dirpath, 0o755)


def _snapshot(root: Path) -> list[tuple[str, int]]:
    return sorted((str(p.relative_to(root)), p.stat().st_size if p.is_file() else -1) for p in root.rglob("*"))


@pytest.fixture
def tarball_env(http_server, cache_dir):
    files = {k: v for k, v in sdist_files().items() if k != "vllm/_version.py"}
    http_server.routes[f"/archive/{FAKE_SHA}.tar.gz"] = Route(make_tar(files, top=f"vllm-{FAKE_SHA}", comment=FAKE_SHA))
    http_server.routes[f"/archive/{FAKE_SHA[:7]}.tar.gz"] = http_server.routes[f"/archive/{FAKE_SHA}.tar.gz"]
    return {**os.environ, "SRCREVIEW_CACHE": str(cache_dir), "SRCREVIEW_GITHUB_URL": http_server.url("/archive"),
            "SRCREVIEW_GIT_URL": http_server.url("/no-git"), "PIP_INDEX_URL": http_server.url("/no-index")}


def test_read_only_cache_serves_its_entries_and_refuses_new_ones_in_one_line(tarball_env, cache_dir, tmp_path):
    """As root too: the child process runs without the capability that lets root ignore permissions."""
    first = srcreview_process("fetch", "--rev", FAKE_SHA, "--provider", "github", env=tarball_env)
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    _make_read_only(cache_dir)
    try:
        before = _snapshot(cache_dir)
        probe = subprocess.run([sys.executable, "-c", f"open({str(cache_dir / 'probe')!r}, 'w')"],
                               capture_output=True, text=True, **permission_bound())
        assert probe.returncode != 0 and "PermissionError" in probe.stderr, "the cache is not read-only for the child"
        served = srcreview_process("fetch", "--rev", FAKE_SHA, env=tarball_env, bound=True)
        out, err = served.communicate(timeout=60)
        assert (served.returncode, out) == (0, f"vLLM 123456789 from github tarball (cached): commit {FAKE_SHA}, "
                                               "3 files\n"), err
        new = srcreview_process("fetch", "--rev", "abcdef0", env=tarball_env, bound=True)
        out, err = new.communicate(timeout=60)
        assert (new.returncode, out) == (2, "")
        assert err == ("srcreview: error: cache directory ($SRCREVIEW_CACHE) is not writable; "
                       "set SRCREVIEW_CACHE to a writable directory\n")
        assert _snapshot(cache_dir) == before
    finally:
        _make_writable(cache_dir)


@pytest.mark.parametrize("rev, max_downloads", [(FAKE_SHA, 1), (FAKE_SHA[:7], 3)], ids=["full-sha", "short-sha"])
def test_concurrent_cli_runs_share_one_cache_correctly(tarball_env, http_server, cache_dir, rev, max_downloads):
    """Three `python -m srcreview fetch` processes at once: all right, one entry, whole, nothing left over."""
    for path in (f"/archive/{FAKE_SHA}.tar.gz", f"/archive/{FAKE_SHA[:7]}.tar.gz"):
        http_server.routes[path].delay = 0.3
    procs = [srcreview_process("fetch", "--rev", rev, "--provider", "github", env=tarball_env) for _ in range(3)]
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        outputs.append(out)
    expected = f"vLLM 123456789 from github tarball: commit {FAKE_SHA}, 3 files\n"
    assert [out.replace(" (cached)", "") for out in outputs] == [expected] * 3
    downloads = sum(http_server.hits.values())
    assert 1 <= downloads <= max_downloads
    if max_downloads == 1:  # a full sha is locked before downloading: the others wait, then reuse it
        assert sorted("(cached)" in out for out in outputs) == [False, True, True]
    cache = Cache(cache_dir)
    assert cache.keys("github") == [FAKE_SHA]
    assert verified_manifest(cache.path_for("github", FAKE_SHA), deep=True) is not None
    tree = cache.tree_path("github", FAKE_SHA)
    assert (tree / "vllm/config/speculative.py").read_bytes() == sdist_files()["vllm/config/speculative.py"]
    assert leftovers(cache_dir, "github") == []


WRITER = """
import sys
from srcreview.index.cache import FactsCache
from srcreview.index.facts import ModuleFacts
facts = ModuleFacts(module="m", path="m.py", blob_id="ab" * 20, parse_error=sys.argv[2] * (256 * 1024))
for _ in range(40):
    FactsCache(sys.argv[1]).store(facts)
"""


def test_concurrent_writers_of_one_cache_file_never_tear_it(cache_dir):
    """Two processes rewrite the same facts entry (two reviews of one revision) while this one
    reads it: every read is one whole version."""
    from srcreview.index.cache import FactsCache, facts_dir
    from srcreview.index.facts import ModuleFacts

    def version():
        facts = FactsCache(cache_dir).load("ab" * 20, "m", "m.py")
        assert facts is not None and len(facts.parse_error) == 256 * 1024 and len(set(facts.parse_error)) == 1
        return facts.parse_error[0]

    FactsCache(cache_dir).store(ModuleFacts(module="m", path="m.py", blob_id="ab" * 20, parse_error="0" * (256 * 1024)))
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(cache_dir), str(n)]) for n in (1, 2)]
    seen = set()
    while any(w.poll() is None for w in writers):
        seen.add(version())
    assert all(w.wait() == 0 for w in writers)
    assert version() in ("1", "2")
    assert sorted(p.name for p in (facts_dir(cache_dir) / "ab").iterdir()) == [MARKER, "ab" * 20 + ".pickle"]  # no temp
    assert seen - {"0"}, "the reader never saw a writer's version"


# -------------------------------------------------------------------------------- the real source


FIXTURE_PROBE = """
def test_uses_the_real_source(vllm_029):
    assert vllm_029.files()
"""


def test_vllm_029_offline_and_uncached_fails_loudly_and_is_a_network_test(tmp_path):
    """Never a silent skip: without the index and without a cache the fixture fails with what to do."""
    (tmp_path / "test_probe.py").write_text(FIXTURE_PROBE)
    env = {**os.environ, "SRCREVIEW_CACHE": str(tmp_path / "empty-cache"),
           "PIP_INDEX_URL": "http://127.0.0.1:notaport/simple",
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent.parent), os.environ.get("PYTHONPATH", "")])}
    base = [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q", "-rfEs",
            "--rootdir", str(tmp_path), "-c", os.devnull, str(tmp_path / "test_probe.py")]
    ran = subprocess.run(base, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "1 error" in ran.stdout and "skipped" not in ran.stdout, ran.stdout
    assert "the real vLLM 0.29.0 source is neither in the cache ($SRCREVIEW_CACHE) nor obtainable: " \
           "package index http://127.0.0.1:notaport/simple: not a valid URL" in ran.stdout, ran.stdout
    assert "-m 'not network'" in ran.stdout and "Traceback" not in ran.stdout
    deselected = subprocess.run(base + ["-m", "not network"], capture_output=True, text=True, env=env, cwd=tmp_path,
                                timeout=120)
    assert deselected.returncode == 5 and "1 deselected" in deselected.stdout, deselected.stdout
