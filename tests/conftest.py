"""Shared fixtures: the real vLLM 0.29.0 tree, a local HTTP server, archives and git repos built here.

`vllm_029` is obtained by the project's own registry provider into the user cache
(`$SRCREVIEW_CACHE` or the user cache directory), so it is downloaded once and reused by every
later run, on CI too. Everything else is built inside the test: no mocks of what is tested.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import tarfile
import tempfile
import threading
import time
import zipfile
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

# The Hugging Face Hub is never asked by accident: every test, and every process a test starts,
# reads model configs from local directories or an empty huggingface_hub cache, offline, unless
# the test serves its own Hub on 127.0.0.1 (tests/hub_support.py sets its own HF_* variables).
# Set before huggingface_hub is first imported, which reads them once.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HOME"] = tempfile.mkdtemp(prefix="srcreview-tests-hf-")
for _name in ("HF_HUB_CACHE", "HF_ENDPOINT", "HUGGINGFACE_HUB_CACHE"):
    os.environ.pop(_name, None)

# Commit ids used by tests that build their own trees (not vLLM commits).
FAKE_SHA = "1234567890abcdef1234567890abcdef12345678"


REAL_SOURCE_FIXTURES = ("vllm_029", "vllm_release")


def pytest_collection_modifyitems(config, items):
    """Every test that needs the real vLLM source is a `network` test, marked or not in its file.

    So `-m "not network"` always deselects them, and `-m network` always selects them.
    """
    for item in items:
        if any(name in getattr(item, "fixturenames", ()) for name in REAL_SOURCE_FIXTURES) \
                and item.get_closest_marker("network") is None:
            item.add_marker(pytest.mark.network)


@pytest.fixture(scope="session")
def vllm_release():
    """Factory: `vllm_release("0.27.0")` is the SourceTree of that pinned release's real sdist.

    Obtained by the registry provider into the user cache (`$SRCREVIEW_CACHE` or the user
    cache directory), so downloaded once and reused offline afterwards. Offline with an empty
    cache it FAILS (never skips: CI must not pass without the real source) with one line
    saying what to do.
    """
    from srcreview.core.errors import SrcreviewError
    from srcreview.model.revision import resolve_rev
    from srcreview.source.cache import Cache, default_root
    from srcreview.source.obtain import open_source

    trees = {}

    def obtain(version: str):
        if version not in trees:
            root, origin = default_root()
            try:
                trees[version] = open_source(resolve_rev(version), provider="registry", cache=Cache(root, origin))
            except SrcreviewError as exc:
                pytest.fail(f"the real vLLM {version} source is neither in the cache ({origin}) nor obtainable: "
                            f"{exc.message}. Run the tests once with the package index reachable (PIP_INDEX_URL "
                            "or pip's configuration), point SRCREVIEW_CACHE at a cache that holds it, or "
                            "deselect these tests with -m 'not network'.", pytrace=False)
        return trees[version]

    return obtain


@pytest.fixture(scope="session")
def vllm_029(vllm_release):
    """SourceTree of the real vLLM 0.29.0 sdist (see `vllm_release`)."""
    return vllm_release("0.29.0")


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    """A private, empty srcreview cache for this test (SRCREVIEW_CACHE points at it)."""
    path = tmp_path / "cache"
    monkeypatch.setenv("SRCREVIEW_CACHE", str(path))
    return path


# --- a local HTTP server ---------------------------------------------------------------------


@dataclass
class Route:
    body: bytes = b""
    status: int = 200
    content_type: str = "application/octet-stream"
    content_length: int | None = None  # a lie larger than the body makes a truncated download; -1: none
    delay: float = 0.0  # before the status line
    trickle: tuple[int, float] | None = None  # (bytes, seconds): send the body that many bytes at a time
    header_trickle: float | None = None  # seconds between header lines, sent without end (a slowloris)


@dataclass
class Server:
    """A real HTTP server on 127.0.0.1 answering from `routes` and counting requests per path."""

    base: str
    routes: dict[str, Route] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)

    def url(self, path: str) -> str:
        return self.base + path

    def serve_index(self, files: dict[str, bytes], *, prefix: str = "/simple", hashes: dict[str, str] | None = None,
                    relative: bool = True) -> str:
        """Publish `files` (name -> content) as project vllm on a PEP 691 index; returns the index URL."""
        entries = []
        for name, data in sorted(files.items()):
            path = f"/files/{name}"
            self.routes[path] = Route(data)
            digest = (hashes or {}).get(name, hashlib.sha256(data).hexdigest())
            entries.append({"filename": name, "url": f"../../files/{name}" if relative else self.url(path),
                            "hashes": {"sha256": digest}, "size": len(data)})
        page = {"meta": {"api-version": "1.1"}, "name": "vllm", "files": entries, "versions": []}
        self.routes[f"{prefix}/vllm/"] = Route(json.dumps(page).encode(), content_type="application/vnd.pypi.simple.v1+json")
        return self.url(prefix)


@pytest.fixture
def http_server():
    routes: dict[str, Route] = {}
    hits: dict[str, int] = {}
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server API
            path = self.path.split("?", 1)[0]
            with lock:
                hits[path] = hits.get(path, 0) + 1
            route = routes.get(path)
            if route is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if route.delay:
                time.sleep(route.delay)
            if route.header_trickle is not None:  # each line within any read timeout; never the end
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                for n in range(1000):
                    self.wfile.write(b"X-Slow-%d: x\r\n" % n)
                    self.wfile.flush()
                    time.sleep(route.header_trickle)
                return
            self.send_response(route.status)
            self.send_header("Content-Type", route.content_type)
            if route.content_length != -1:  # -1: no length; the body ends when the connection closes
                self.send_header("Content-Length", str(route.content_length or len(route.body)))
            if route.content_length:
                self.send_header("Connection", "close")
                self.close_connection = True
            self.end_headers()
            if route.trickle is None:
                self.wfile.write(route.body)
                return
            step, pause = route.trickle
            for start in range(0, len(route.body), step):
                self.wfile.write(route.body[start:start + step])
                self.wfile.flush()
                time.sleep(pause)

        def log_message(self, *args):
            pass

    class QuietServer(ThreadingHTTPServer):
        def handle_error(self, request, client_address):
            pass  # clients that give up (timeouts, retries) close sockets under the handler

    server = QuietServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Server(f"http://127.0.0.1:{server.server_address[1]}", routes, hits)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def refused_url():
    """An http URL on 127.0.0.1 where nothing listens (connection refused)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@pytest.fixture
def silent_url():
    """An http URL on 127.0.0.1 that accepts connections and never answers (a hung server)."""
    import socket

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # the kernel completes the handshakes; nobody ever reads or writes
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        sock.close()


# --- archives ----------------------------------------------------------------------------------


def version_file(commit: str, version: str = "0.0.1") -> bytes:
    """A vllm/_version.py as the sdist build writes it."""
    return (f"__version__ = version = '{version}'\n"
            f"__commit_id__ = commit_id = 'g{commit[:9]}'\n").encode()


def sdist_files(commit: str = FAKE_SHA, version: str = "0.0.1") -> dict[str, bytes]:
    return {
        "vllm/__init__.py": b"",
        "vllm/_version.py": version_file(commit, version),
        "vllm/config/speculative.py": b"class SpeculativeConfig:\n    attention_backend: str | None = None\n",
        "PKG-INFO": f"Name: vllm\nVersion: {version}\n".encode(),
    }


def make_tar(files: dict[str, bytes], top: str = "vllm-0.0.1", *, comment: str | None = None,
             extra: list[tarfile.TarInfo] | None = None, compress: bool = True) -> bytes:
    """A tarball with `files` under `top/`, plus raw `extra` members (to build hostile archives)."""
    out = io.BytesIO()
    pax = {"comment": comment} if comment else {}
    with tarfile.open(fileobj=out, mode="w:gz" if compress else "w", format=tarfile.PAX_FORMAT,
                      pax_headers=pax) as tar:
        info = tarfile.TarInfo(top)
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        tar.addfile(info)
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{top}/{name}")
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
        for member in extra or []:
            tar.addfile(member, io.BytesIO(b"x" * member.size) if member.isreg() else None)
    return out.getvalue()


def make_zip(files: dict[str, bytes], top: str = "vllm-0.0.1", *, links: dict[str, str] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in sorted(files.items()):
            zf.writestr(f"{top}/{name}" if top else name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(f"{top}/{name}")
            info.external_attr = (0o120777 << 16)
            zf.writestr(info, target)
    return out.getvalue()


# --- git repositories --------------------------------------------------------------------------

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.invalid", "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
           "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z", "GIT_CONFIG_NOSYSTEM": "1"}


class GitRepo:
    """A git repository built in a test: write files, commit, read ids."""

    def __init__(self, path: Path):
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        self.git("init", "--quiet", "--initial-branch=main")

    def git(self, *args: str, input: bytes | None = None) -> str:
        env = {**os.environ, **GIT_ENV, "HOME": str(self.path.parent)}
        done = subprocess.run(["git", "-C", str(self.path), *args], input=input, capture_output=True, env=env,
                              check=True)
        return done.stdout.decode().strip()

    def commit(self, files: dict[str, str | bytes], message: str = "change") -> str:
        for name, data in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data.encode() if isinstance(data, str) else data)
        self.git("add", "--all")
        self.git("commit", "--quiet", "-m", message)
        return self.git("rev-parse", "HEAD")


@pytest.fixture
def make_git_repo(tmp_path):
    """Factory: make_git_repo(name) -> GitRepo under tmp_path."""
    return lambda name="repo": GitRepo(tmp_path / name)


# --- separate processes ---------------------------------------------------------------------------

# Linux capability numbers (linux/capability.h) and prctl(PR_CAPBSET_DROP)
_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH, _PR_CAPBSET_DROP = 1, 2, 24


def _drop_permission_override() -> None:  # runs in the child, between fork and exec
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (_CAP_DAC_OVERRIDE, _CAP_DAC_READ_SEARCH):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def permission_bound() -> dict:
    """subprocess keyword arguments that make the child obey file permissions, even as root.

    root ignores permission bits through CAP_DAC_OVERRIDE; dropping it (and
    CAP_DAC_READ_SEARCH) from the child's bounding set before exec makes a read-only
    directory really read-only for it, without changing users, mounts or the test's files.
    """
    return {"preexec_fn": _drop_permission_override} if os.geteuid() == 0 else {}


def srcreview_process(*args: str, env: dict, cwd: Path | None = None, bound: bool = False,
                      **popen) -> subprocess.Popen:
    """Start `python -m srcreview ARGS...` as its own process (stdout/stderr piped, text)."""
    import sys

    extra = permission_bound() if bound else {}
    return subprocess.Popen([sys.executable, "-m", "srcreview", *args], env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, **extra, **popen)


# --- the CLI in-process --------------------------------------------------------------------------


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys):
    """Run `srcreview ARGS...` in this process; returns exit code, stdout and stderr."""
    from srcreview.cli.main import main

    def run(*args: str) -> Result:
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


# --- a fixture tree as the source of a full review -------------------------------------------------

FIXTURE_REV = "1234567ab"  # the commit the copied tree's _version.py names (not a vLLM commit)
DEMO_RECIPE = Path(__file__).resolve().parent / "data" / "demo-mtp3-nested-triton.toml"


def fixture_source(target: Path, name: str = "rules_spec_decode") -> Path:
    """A tree of fixtures/vllm_snippets copied to `target` as an unpacked sdist of FIXTURE_REV,
    so `check RECIPE --source target --rev FIXTURE_REV` runs a whole review offline."""
    import shutil

    shutil.copytree(Path(__file__).resolve().parent.parent / "fixtures" / "vllm_snippets" / name, target)
    (target / "vllm" / "_version.py").write_text(f"__version__ = version = '0.0.0'\n"
                                                f"__commit_id__ = commit_id = 'g{FIXTURE_REV}'\n")
    (target / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: vllm\nVersion: 0.0.0\n")  # as an sdist has
    return target


@pytest.fixture
def offline_workdir(tmp_path, monkeypatch) -> Path:
    """The working directory of a whole review offline: `tree/` (fixture_source), an empty
    `recipes/`, a private cache; the test writes its recipes."""
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    fixture_source(tmp_path / "tree")
    (tmp_path / "recipes").mkdir()
    return tmp_path


@pytest.fixture(autouse=True, scope="session")
def _vllm_domain():
    """Tests that walk vLLM-shaped trees without the engine run over vLLM's framework model, as
    the engine and `srcreview graph` install it."""
    from srcreview.interp.domain import install
    from srcreview.vllm.domain import VLLM

    install(VLLM)
