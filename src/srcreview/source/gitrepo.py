"""Sources read from git: a local checkout (`--source PATH`) or the blobless clone cache.

Blobs are read at the commit through gitpython (`repo.commit(sha).tree / path`); the work
tree, the index and HEAD are never touched, so a checkout with local edits is read exactly
as committed. Revisions reach git only as validated hex (never a leading `-`), and the one
user-configurable string, the remote URL, is passed after `--end-of-options`. A short commit
id that matches several commits is an error listing them, never a silent pick.

The git cache (`<cache>/git/vllm.git`) is a bare partial clone (`--filter=blob:none`) of
`$SRCREVIEW_GIT_URL` (default: the anchor repository). Fetching a commit brings its history
without blobs, then the blobs of that one tree in a single batch, so later reads are offline.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from srcreview.core.cachedir import MARKER, make_dirs
from srcreview.core.errors import SourceUnavailable
from srcreview.model.revision import Revision
from srcreview.source.base import (
    HIDDEN,
    Gap,
    SourceTree,
    clean_relpath,
    in_package,
    is_utf8,
    repo_url,
)
from srcreview.source.cache import Cache
from srcreview.source.pipindex import redact_url

_PREFIX = re.compile(r"^[0-9a-f]{4,40}$")
_FILE_MODES = ("100644", "100755")
_LINK_MODE = "120000"
KIND = "git"
CACHE_KEY = "vllm.git"


def _env(config: dict[str, str] | None = None) -> dict[str, str]:
    """The environment git runs in; `config` becomes git configuration without any argument."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_ASKPASS="true", LC_ALL="C")
    for n, (key, value) in enumerate(sorted((config or {}).items())):
        env[f"GIT_CONFIG_KEY_{n}"], env[f"GIT_CONFIG_VALUE_{n}"] = key, value
    if config:
        env["GIT_CONFIG_COUNT"] = str(len(config))
    return env


def run_git(git_dir: Path, *args: str, input: bytes | None = None, what: str = "git",
            timeout: float | None = None, config: dict[str, str] | None = None) -> bytes:
    """Run git on `git_dir` (a .git or bare directory); SourceUnavailable with git's first error line.

    `timeout` (network operations) kills git and its transport helpers after that many seconds;
    `config` is passed through the environment (GIT_CONFIG_COUNT), never as arguments.
    """
    import signal

    try:
        proc = subprocess.Popen(["git", f"--git-dir={git_dir}", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=_env(config), start_new_session=timeout is not None,
                                stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL)
    except OSError as exc:
        raise SourceUnavailable(f"{what}: cannot run git ({exc.strerror or exc})") from None
    try:
        stdout, stderr = proc.communicate(input, timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)  # git and its remote helper (own session, see above)
        proc.communicate()
        raise SourceUnavailable(f"{what}: too slow: no complete answer within {timeout:g} s "
                                "(SRCREVIEW_HTTP_DEADLINE)") from None
    if proc.returncode != 0:
        lines = [line for line in stderr.decode(errors="replace").splitlines() if line.strip()]
        reason = next((line for line in lines if line.startswith(("fatal:", "error:"))), lines[-1] if lines else "")
        raise SourceUnavailable(f"{what}: {redact_urls(reason) or f'git exited with {proc.returncode}'}")
    return stdout




def redact_urls(text: str) -> str:
    return re.sub(r"[a-z][a-z0-9+.-]*://[^\s'\"]+", lambda m: redact_url(m.group(0)), text)


def git_dir_of(path: Path) -> Path | None:
    """The git directory of a checkout or bare repository at exactly `path`, else None."""
    dot_git = path / ".git"
    if dot_git.is_dir():
        return dot_git
    if dot_git.is_file():  # worktree or submodule: "gitdir: <path>"
        text = dot_git.read_text(errors="replace").strip()
        if text.startswith("gitdir:"):
            target = Path(text[len("gitdir:"):].strip())
            return target if target.is_absolute() else (path / target)
    if (path / "HEAD").is_file() and (path / "objects").is_dir() and (path / "refs").is_dir():
        return path
    return None


def commits_with_prefix(git_dir: Path, prefix: str, what: str) -> list[str]:
    """Full ids of the commits (present locally) whose id starts with the hex `prefix`."""
    if not _PREFIX.match(prefix):
        raise SourceUnavailable(f"{what}: {prefix!r} is not a hex commit prefix of 4 to 40 digits")
    listed = run_git(git_dir, "rev-parse", f"--disambiguate={prefix}", what=what).decode().split()
    objects = [oid for oid in listed if re.fullmatch(r"[0-9a-f]{40}", oid)]
    if not objects:
        return []
    checked = run_git(git_dir, "cat-file", "--batch-check=%(objectname) %(objecttype)",
                      input=("\n".join(objects) + "\n").encode(), what=what).decode().splitlines()
    return sorted(line.split()[0] for line in checked if line.endswith(" commit"))


def resolve_commit(git_dir: Path, prefix: str, what: str) -> str:
    """The one commit `prefix` names; an error listing the candidates when it names several."""
    found = commits_with_prefix(git_dir, prefix, what)
    if not found:
        raise SourceUnavailable(f"{what}: no commit {prefix}")
    if len(found) > 1:
        raise SourceUnavailable(f"{what}: {prefix} is ambiguous: it matches commits {', '.join(found)}; "
                                "give more digits")
    return found[0]


class GitTree(SourceTree):
    """The tree of one commit in a git repository, read as blobs (never from the work tree).

    One `git ls-tree` lists the commit's blobs; each read streams that blob from gitpython's
    object database (`git cat-file --batch`), so the work tree and index are never consulted.
    """

    def __init__(self, git_dir: Path, revision: Revision, provider: str, origin: str | None = None):
        import git

        super().__init__(revision)
        self.provider = provider
        self.origin = origin
        self.git_dir = Path(git_dir)
        self._repo = git.Repo(self.git_dir)
        self._commit = self._repo.commit(revision.sha)  # fails early if the commit is absent
        self._entries: dict[str, tuple[str, str]] | None = None
        self._submodules: list[str] = []

    def _listing(self) -> dict[str, tuple[str, str]]:
        """path -> (mode, blob id) of every blob at the commit, from one `git ls-tree`."""
        if self._entries is None:
            out = run_git(self.git_dir, "ls-tree", "-r", "-z", "--full-tree", self.revision.sha,
                          what=self.revision.label())
            entries = {}
            for record in out.split(b"\0"):
                if not record:
                    continue
                meta, _, path = record.partition(b"\t")
                mode, kind, oid = meta.decode().split()
                name = path.decode("utf-8", errors="surrogateescape")
                if kind == "blob" and is_utf8(name):  # an undecodable name is no module nor anchor
                    entries[name] = (mode, oid)
                elif kind == "commit" and is_utf8(name):  # a submodule: its files are not in this tree
                    self._submodules.append(name)
            self._entries = entries
        return self._entries

    def _resolve(self, path: str) -> str:
        """Follow in-tree symbolic links (a few hops) to a regular file's path."""
        current = clean_relpath(path)
        for _ in range(8):
            entry = self._listing().get(current)
            if entry is None:
                raise SourceUnavailable(f"{path}: no such file at {self.revision.label()}")
            mode, oid = entry
            if mode in _FILE_MODES:
                return current
            if mode != _LINK_MODE:
                raise SourceUnavailable(f"{path}: not a regular file at {self.revision.label()}")
            target = self._repo.odb.stream(bytes.fromhex(oid)).read().decode(errors="replace")
            joined = posixpath.normpath(posixpath.join(posixpath.dirname(current), target))
            current = clean_relpath(joined)
        raise SourceUnavailable(f"{path}: too many symbolic links at {self.revision.label()}")

    def read(self, path: str) -> bytes:
        oid = self._listing()[self._resolve(path)][1]
        try:
            return self._repo.odb.stream(bytes.fromhex(oid)).read()
        except (ValueError, OSError) as exc:
            raise SourceUnavailable(f"{path}: unreadable at {self.revision.label()}: {exc}") from None

    def exists(self, path: str) -> bool:
        try:
            self._resolve(path)
        except SourceUnavailable:
            return False
        return True

    def unreadable_entries(self) -> dict[str, Gap]:
        """Module-like entries of the commit a review cannot read: a symbolic link that does not
        resolve to a regular file inside the tree (it leaves the tree, dangles, loops or names a
        directory), a submodule."""
        found = {p: Gap("a submodule (not analysed)" + HIDDEN, blocking=True) for p in self._submodules
                 if in_package(p)}
        for path, (mode, _) in self._listing().items():
            if mode != _LINK_MODE or not in_package(path):
                continue
            name = path.rsplit("/", 1)[-1]
            try:
                self._resolve(path)
            except SourceUnavailable:  # (its target is not shown: it may be a local path)
                if name.endswith(".py") or "." not in name:
                    found[path] = Gap("a symlink that does not resolve to a regular file inside the tree"
                                      + (HIDDEN if "." not in name else ""), blocking="." not in name)
        return dict(sorted(found.items()))

    def files(self, prefix: str = "") -> list[str]:
        paths = sorted(p for p, (mode, _) in self._listing().items() if mode in _FILE_MODES)
        prefix = prefix.strip("/")
        if not prefix:
            return paths
        return [p for p in paths if p == prefix or p.startswith(prefix + "/")]

    def blob_id(self, path: str) -> str:
        return self._listing()[self._resolve(path)][1]

    def commit_id(self) -> str:
        """The full id of the commit read, as git spells it."""
        return self._commit.hexsha

    def tree_id(self) -> str:
        """The id of the commit's tree: git's name for all of its content."""
        return self._commit.tree.hexsha


def open_checkout(path: Path, revision: Revision) -> GitTree:
    """The tree of `revision` in the local repository at `path` (work tree untouched)."""
    git_dir = git_dir_of(path)
    if git_dir is None:
        raise SourceUnavailable(f"--source {path.name}: not a git repository")
    what = f"--source {path.name}"
    full = resolve_commit(git_dir, revision.sha, what)
    if len(full) > len(revision.sha):
        revision = revision.model_copy(update={"sha": full})
    return GitTree(git_dir, revision, provider="local", origin="git checkout")


def tag_commits(url: str) -> dict[str, str]:
    """Tag -> full commit of a remote repository (`git ls-remote --tags`; an annotated tag's
    peeled commit wins), within SRCREVIEW_HTTP_DEADLINE; SourceUnavailable if unreachable."""
    from srcreview.source.http import limits

    if url.startswith("-"):
        raise SourceUnavailable("git remote URL must not start with '-'")
    shown = redact_url(url) if "://" in url else Path(url).name  # a local path: its name only
    try:
        out = run_git(Path(os.devnull), "ls-remote", "--tags", "--end-of-options", url, what=f"git ls-remote {shown}",
                      timeout=limits().deadline)
    except SourceUnavailable as exc:  # git quotes the URL in its errors: never a local path in output
        raise SourceUnavailable(exc.message.replace(url, shown)) from None
    found: dict[str, str] = {}
    for line in out.decode(errors="replace").splitlines():
        sha, _, ref = line.partition("\t")
        if not re.fullmatch(r"[0-9a-f]{40}", sha) or not ref.startswith("refs/tags/"):
            continue
        tag = ref[len("refs/tags/"):]
        if tag.endswith("^{}"):
            found[tag[:-3]] = sha  # the commit an annotated tag points at
        else:
            found.setdefault(tag, sha)
    return found


def remote_url() -> str:
    url = os.environ.get("SRCREVIEW_GIT_URL", "").strip() or f"{repo_url()}.git"
    if url.startswith("-"):
        raise SourceUnavailable("SRCREVIEW_GIT_URL must not start with '-'")
    return url


class GitCache:
    """The blobless bare clone under the cache, fetched one commit at a time."""

    def __init__(self, cache: Cache):
        self.cache = cache
        self.git_dir = cache.path_for(KIND, CACHE_KEY)

    def _usable(self) -> bool:
        if not (self.git_dir / "HEAD").is_file():
            return False
        try:
            run_git(self.git_dir, "rev-parse", "--git-dir", what="git cache")
        except SourceUnavailable:
            return False
        return True

    def _create(self) -> None:
        if self.git_dir.exists():
            self.cache._discard(self.git_dir)
        make_dirs(self.git_dir.parent)
        tmp = Path(tempfile.mkdtemp(prefix=".vllm.git.", dir=self.git_dir.parent))
        (tmp / MARKER).touch()  # srcreview's, wherever the cache is (git ignores it)
        try:
            run_git(tmp, "init", "--bare", "--quiet", what="git cache")
            for key, value in (("remote.origin.url", remote_url()),
                               ("remote.origin.promisor", "true"),
                               ("remote.origin.partialclonefilter", "blob:none"),
                               ("extensions.partialclone", "origin"),
                               ("core.repositoryformatversion", "1"),
                               ("gc.auto", "0")):
                run_git(tmp, "config", "--end-of-options", key, value, what="git cache")
            os.replace(tmp, self.git_dir)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def find(self, revision: Revision) -> str | None:
        """The full commit if it and all its blobs are already in the cache (no network)."""
        if not self._usable():
            return None
        found = commits_with_prefix(self.git_dir, revision.sha, "git cache")
        if len(found) != 1:
            return None
        return found[0] if not self._missing_blobs(found[0]) else None

    def _missing_blobs(self, sha: str) -> list[str]:
        out = run_git(self.git_dir, "rev-list", "--objects", "--no-object-names", "--missing=print",
                      "--no-walk", sha, what="git cache").decode().split()
        return [line[1:] for line in out if line.startswith("?")]

    def ensure(self, revision: Revision) -> str:
        """Fetch `revision` (and the blobs of its tree) into the cache; returns its full id.

        Each fetch is bounded: git gives up on a transfer stalled for the HTTP read timeout,
        and is killed after the HTTP deadline.
        """
        from srcreview.source.http import limits

        shown = redact_url(remote_url())
        what = f"git fetch from {shown}"
        self.cache._ensure_writable()
        with self.cache.lock(KIND, CACHE_KEY):
            if not self._usable():
                self._create()
            present = commits_with_prefix(self.git_dir, revision.sha, "git cache")
            bounds = limits()  # a transfer stalled for the read timeout is given up; all is killed at the deadline
            net: dict[str, Any] = {"timeout": bounds.deadline,
                   "config": {"http.lowSpeedLimit": "1", "http.lowSpeedTime": str(max(1, round(bounds.read)))}}
            if len(present) != 1:
                fetch = ["fetch", "--quiet", "--no-tags", "--filter=blob:none", "origin"]
                if revision.is_full:
                    run_git(self.git_dir, *fetch, revision.sha, what=what, **net)
                else:
                    run_git(self.git_dir, *fetch, "+refs/heads/*:refs/remotes/origin/*", what=what, **net)
            full = resolve_commit(self.git_dir, revision.sha, f"git repository {shown}")
            missing = self._missing_blobs(full)
            if missing:
                run_git(self.git_dir, "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags",
                        "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--stdin",
                        "origin", input=("\n".join(missing) + "\n").encode(), what=what, **net)
            return full

    def tree(self, revision: Revision, full: str, cached: bool) -> GitTree:
        if len(full) > len(revision.sha):
            revision = revision.model_copy(update={"sha": full})
        tree = GitTree(self.git_dir, revision, provider="git", origin="partial clone")
        tree.cached = cached
        return tree
