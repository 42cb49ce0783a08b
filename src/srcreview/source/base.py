"""The SourceTree interface: read a file, list files, a stable blob id, an anchor URL.

Every provider (local checkout, unpacked sdist, registry sdist, GitHub tarball, git cache)
yields one of these; the analysis sees nothing else, so it never depends on where the source
came from. Blob ids are git blob hashes of the content, identical across providers, so the
facts cache is shared between a git checkout and an sdist of the same commit.
"""

from __future__ import annotations

import hashlib
import os
import stat
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import NamedTuple, cast

from srcreview.core.errors import SourceUnavailable
from srcreview.model.revision import Revision
from srcreview.vllm.anchors import PACKAGE

DEFAULT_REPO_URL = "https://github.com/vllm-project/vllm"

# Progress callbacks: (label, done, total or None). Library code reports through these; only
# the CLI draws (srcreview.cli.progress).
Progress = Callable[[str, int, "int | None"], None]


class VerificationFailed(SourceUnavailable):
    """Obtained, but not provably the requested source (digest or commit mismatch, hostile archive).

    Unlike an unreachable server, this is never retried with another provider.
    """


def repo_url() -> str:
    """The repository that anchors link to; `SRCREVIEW_REPO_URL` points them at a fork."""
    return os.environ.get("SRCREVIEW_REPO_URL", DEFAULT_REPO_URL).rstrip("/")


def git_blob_id(data: bytes) -> str:
    """The id git gives this content as a blob: stable, provider-independent."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def anchor_url(sha: str, path: str, start: int | None = None, end: int | None = None,
               base: str | None = None) -> str:
    url = f"{base or repo_url()}/blob/{sha}/{path}"
    if start is not None:
        url += f"#L{start}" + (f"-L{end}" if end is not None and end != start else "")
    return url


def is_utf8(name: str) -> bool:
    """Whether a file name read from disk or git was valid UTF-8 (else it carries surrogate
    escapes). Such a name is no Python module and no GitHub path: trees leave it out."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def clean_relpath(path: str) -> str:
    """A tree-relative POSIX path; refuses absolute paths and `..` so reads stay inside the tree,
    and a NUL byte (no file name holds one; the OS would raise ValueError)."""
    if "\x00" in path:
        raise SourceUnavailable(f"{path!r}: has a NUL byte: not a path inside the source tree")
    posix = PurePosixPath(path.replace("\\", "/"))
    if posix.is_absolute() or ".." in posix.parts or not posix.parts:
        raise SourceUnavailable(f"{path}: not a path inside the source tree")
    return str(posix)


def _plain_relpath(path: str) -> bool:
    """Whether `path` is already what clean_relpath makes of it (the common case, decided
    without building a path object): relative, POSIX, no empty, `.` or `..` part, no NUL."""
    parts = path.split("/")
    return bool(path) and "\\" not in path and "\x00" not in path and "" not in parts and "." not in parts \
        and ".." not in parts


HIDDEN = ": the modules under it cannot be read"


def in_package(path: str) -> bool:
    """Whether a tree path is the package or under it."""
    return path == PACKAGE or path.startswith(PACKAGE + "/")


class Gap(NamedTuple):
    """An entry of a tree that may hold Python modules but cannot be read (srcreview.source.gaps).

    `blocking`: the review is incomplete whatever the rules ask: a whole directory is hidden (a
    symlinked or unlistable directory, a submodule), so modules under it are missing where
    Python imports them; or a cached file was found changed since the entry was written.
    """

    why: str
    blocking: bool = False


def read_regular(target: str | Path, path: str) -> bytes:
    """The bytes of `target` if it is a regular file; SourceUnavailable naming `path` for a
    directory, FIFO, socket or device (opened non-blocking: a FIFO cannot hold the run)."""
    from srcreview.core.userfile import file_kind

    fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise SourceUnavailable(f"{path}: {file_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb") as fh:
            fd = -1
            return fh.read()
    finally:
        if fd >= 0:
            os.close(fd)


class SourceTree(ABC):
    """The exact source of one revision."""

    provider: str = "unknown"
    origin: str | None = None  # what the provider fetched or read, e.g. "vllm-0.29.0.tar.gz" (no local paths)
    cached: bool = False  # reused from the cache rather than obtained by this run
    # what sets this tree's content apart from the plain revision (a patched tree's layers);
    # anything cached per revision rather than per file content must be keyed by it too
    variant: str = ""

    def __init__(self, revision: Revision):
        self.revision = revision
        self._blob_ids: dict[str, str] = {}

    @abstractmethod
    def read(self, path: str) -> bytes:
        """The bytes of a tree-relative file; SourceUnavailable if missing."""

    @abstractmethod
    def files(self, prefix: str = "") -> list[str]:
        """Sorted tree-relative POSIX paths of regular files under `prefix`."""

    def exists(self, path: str) -> bool:
        try:
            self.read(path)
        except SourceUnavailable:
            return False
        return True

    def read_text(self, path: str) -> str:
        return self.read(path).decode("utf-8", errors="replace")

    def unreadable_entries(self) -> dict[str, Gap]:
        """Entries of the package (`vllm` and under it) that may hold Python modules but cannot
        be read, with why: what the tree cannot show (see srcreview.source.gaps). Empty by default."""
        return {}

    def blob_id(self, path: str) -> str:
        if path not in self._blob_ids:
            self._blob_ids[path] = git_blob_id(self.read(path))
        return self._blob_ids[path]

    def url(self, path: str, start: int | None = None, end: int | None = None) -> str:
        return anchor_url(self.revision.sha, path, start, end)

    def describe(self) -> str:
        """One line for the user: what was obtained, from where (never an absolute local path)."""
        where = self.provider + (f" {self.origin}" if self.origin else "")
        return f"vLLM {self.revision.label()} from {where}" + (" (cached)" if self.cached else "")


class DirectoryTree(SourceTree):
    """A tree on disk: an unpacked sdist or tarball, or a cache entry."""

    provider = "directory"
    # what a file that differs from its manifest entry is said to be (a cache entry's words)
    CHANGED_GAP = "differs from what was hashed when the cache entry was written (the entry is damaged; the next " \
                  "run rebuilds it)"
    CHANGED_ERROR = "the cached copy differs from what was hashed when it was cached (the cache entry is damaged; " \
                    "the next run rebuilds it)"

    def __init__(self, root: Path, revision: Revision, provider: str | None = None,
                 manifest: dict[str, list] | None = None, on_damage: Callable[[], None] | None = None):
        """`manifest`: a verified cache manifest of `root` (relpath -> [size, sha256], links
        size -1); when given, the listings come from it instead of walking the tree again, and
        every file read is checked against its sha256 (a cached file edited in place, even at
        the same size, is refused, and `on_damage` is called so the entry is rebuilt)."""
        super().__init__(revision)
        self.root = Path(root)
        if provider:
            self.provider = provider
        self._manifest = manifest
        self._on_damage = on_damage
        self._damaged: dict[str, Gap] = {}
        self._listing: list[str] | None = None
        self._real_dirs: dict[str, str] = {}  # a directory -> its real path (see _resolve)

    def _path(self, path: str) -> Path:
        return self.root / clean_relpath(path)

    def _real_root(self) -> Path:
        """The root with its symlinks resolved, once (a scan of the tree reads thousands of files)."""
        if getattr(self, "_resolved_root", None) is None:
            self._resolved_root = self.root.resolve()
        return self._resolved_root

    def _resolve(self, target: str) -> str:
        """The real path of `target` (`Path.resolve`), with the real path of each directory found
        once: a scan of the tree reads thousands of files from a few hundred directories."""
        if os.path.islink(target):
            return str(Path(target).resolve())
        folder, name = os.path.split(target)
        parent = self._real_dirs.get(folder)
        if parent is None:
            parent = self._real_dirs[folder] = str(Path(folder).resolve())
        return os.path.join(parent, name)

    def read(self, path: str) -> bytes:
        # string paths: pathlib's objects cost more than the read and its digest on a scan of
        # the whole tree (a first review reads every module once)
        relative = path if _plain_relpath(path) else clean_relpath(path)
        target = os.path.join(str(self.root), relative)
        try:
            # also through a symlinked directory on the way (`vllm/linked_dir/x.py`)
            resolved = self._resolve(target)
            real_root = str(self._real_root())
            inside = real_root.rstrip(os.sep) + os.sep
            if resolved != real_root and not resolved.startswith(inside):
                raise SourceUnavailable(f"{path}: symlink leaves the source tree")
            data = read_regular(target, path)
            if self._manifest is not None:
                self._verify(relative, target, resolved[len(inside):].replace(os.sep, "/"), data)
            return data
        except (FileNotFoundError, NotADirectoryError):
            raise SourceUnavailable(f"{path}: no such file at {self.revision.label()}") from None
        except RuntimeError:  # Path.resolve on a symlink loop (Python < 3.13; later an OSError, ELOOP)
            raise SourceUnavailable(f"{path}: unreadable: symlink loop") from None
        except OSError as exc:
            raise SourceUnavailable(f"{path}: unreadable: {exc.strerror or exc}") from None

    def _verify(self, path: str, target: str, relative: str, data: bytes) -> None:
        """Refuse what a cache entry holds unless it is what was hashed when the entry was
        written (the quick check at open compares sizes only); `relative`: the real file's path
        inside the tree (another than `path` when `path` is a link of the entry)."""
        manifest = cast(dict, self._manifest)  # verified only where there is one
        expected = manifest.get(relative)
        link = manifest.get(path) if relative != path else None
        intact = expected is not None and expected[0] == len(data) \
            and hashlib.sha256(data).hexdigest() == expected[1]
        if link is not None:  # a link of the entry: its target is recorded too
            try:
                intact = intact and link[0] < 0 and hashlib.sha256(os.readlink(target).encode()).hexdigest() == link[1]
            except OSError:
                intact = False
        if not intact:
            self._damaged[path] = Gap(self.CHANGED_GAP, blocking=True)
            if self._on_damage is not None:
                self._on_damage()
            raise SourceUnavailable(f"{path}: {self.CHANGED_ERROR}")

    def exists(self, path: str) -> bool:
        try:
            return self._path(path).is_file()
        except SourceUnavailable:
            return False

    def symlinks(self) -> list[str]:
        """Sorted tree-relative paths of symlinks to files (not in `files()`); `read` follows
        those that stay inside the tree and refuses the others."""
        if self._manifest is not None:
            return sorted(p for p, (size, _) in self._manifest.items()
                          if size < 0 and is_utf8(p) and not os.path.isdir(os.path.join(self.root, p)))
        found = []
        root = str(self.root)
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if is_utf8(d)]
            rel = os.path.relpath(dirpath, root)
            for name in filenames + dirnames:
                full = os.path.join(dirpath, name)
                if is_utf8(name) and os.path.islink(full) and not os.path.isdir(full):
                    found.append(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/"))
        return sorted(found)

    def unreadable_entries(self) -> dict[str, Gap]:
        """Module-like entries of the package a review cannot read: a `*.py` that is not a
        regular file (a directory, FIFO, socket or device), a symlink that leaves the tree,
        dangles or loops, a symlinked directory (never walked), a directory or file that cannot
        be opened; and the cached files found changed so far. A cache entry's are found in its
        verified manifest (extraction admits no special file); a directory on disk is walked once."""
        if getattr(self, "_gaps", None) is None:
            self._gaps = self._manifest_gaps() if self._manifest is not None else self._walk_gaps()
        return dict(sorted({**self._gaps, **self._damaged}.items()))

    def _manifest_gaps(self) -> dict[str, Gap]:
        found: dict[str, Gap] = {}
        for path, (size, _) in cast(dict, self._manifest).items():  # (only when there is one)
            if not in_package(path):
                continue
            parts = path.split("/")
            for depth, part in enumerate(parts[:-1], start=1):
                if part.endswith(".py"):
                    found["/".join(parts[:depth])] = Gap("a directory, not a module file")
            if size < 0 and is_utf8(path):
                gap = self._link_gap(os.path.join(str(self.root), path), parts[-1])
                if gap is not None:
                    found[path] = gap
        return dict(sorted(found.items()))

    def _link_gap(self, full: str, name: str) -> Gap | None:
        """What is wrong with the symlink at `full`, if a review cannot read through it."""
        module_like = name.endswith(".py") or "." not in name
        try:
            target = Path(full).resolve(strict=True)
        except (OSError, RuntimeError):
            if not module_like:
                return None
            return Gap("a dangling or looping symlink" + (HIDDEN if "." not in name else ""), blocking="." not in name)
        if not target.is_relative_to(self._real_root()):
            if target.is_dir():
                return Gap("a symlink leaving the source tree" + HIDDEN, blocking=True)
            return Gap("a symlink leaving the source tree") if module_like else None
        if target.is_dir():
            return Gap("a symlinked directory (not analysed)" + HIDDEN, blocking=True)
        if not target.is_file() and name.endswith(".py"):
            return Gap("a symlink to something that is not a regular file")
        return None

    def _walk_gaps(self) -> dict[str, Gap]:
        from srcreview.core.userfile import file_kind

        found: dict[str, Gap] = {}
        root = str(self.root)

        def relative(full: str) -> str:
            return os.path.relpath(full, root).replace(os.sep, "/")

        def walk_error(exc: OSError) -> None:
            if exc.filename and os.path.normpath(exc.filename) != os.path.normpath(root):
                found[relative(exc.filename)] = Gap(f"cannot be listed ({exc.strerror or exc})" + HIDDEN, blocking=True)

        for dirpath, dirnames, filenames in os.walk(root, onerror=walk_error):
            dirnames[:] = [d for d in dirnames if is_utf8(d)]
            if dirpath == root:  # only the package is analysed
                dirnames[:] = [d for d in dirnames if d == PACKAGE]
                filenames = []
            for name in dirnames + filenames:
                if not is_utf8(name):
                    continue
                full = os.path.join(dirpath, name)
                try:
                    mode = os.lstat(full).st_mode
                except OSError as exc:
                    found[relative(full)] = Gap(f"cannot be read ({exc.strerror or exc})")
                    continue
                if stat.S_ISLNK(mode):
                    gap = self._link_gap(full, name)
                    if gap is not None:
                        found[relative(full)] = gap
                elif stat.S_ISDIR(mode):
                    if name.endswith(".py"):
                        found[relative(full)] = Gap("a directory, not a module file")
                elif not stat.S_ISREG(mode):
                    if name.endswith(".py"):
                        found[relative(full)] = Gap(f"{file_kind(mode)}, not a regular file")
                elif name.endswith(".py") and not os.access(full, os.R_OK):
                    found[relative(full)] = Gap("cannot be read (permission denied)")
        return dict(sorted(found.items()))

    def files(self, prefix: str = "") -> list[str]:
        if self._listing is None and self._manifest is not None:
            self._listing = sorted(p for p, (size, _) in self._manifest.items() if size >= 0 and is_utf8(p))
        if self._listing is None:
            found = []
            root = str(self.root)
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if is_utf8(d))
                rel = os.path.relpath(dirpath, root)
                for name in filenames:
                    full = os.path.join(dirpath, name)
                    if is_utf8(name) and os.path.isfile(full) and not os.path.islink(full):
                        found.append(name if rel == "." else f"{rel}/{name}".replace(os.sep, "/"))
            self._listing = sorted(found)
        prefix = prefix.strip("/")
        if not prefix:
            return list(self._listing)
        return [f for f in self._listing if f == prefix or f.startswith(prefix + "/")]


class AnyPythonTree(DirectoryTree):
    """A directory of any Python code, read without a revision (`srcreview graph --tree`):
    anchors are the tree's own paths with their lines, nothing claims a vLLM commit."""

    provider = "tree"

    def url(self, path: str, start: int | None = None, end: int | None = None) -> str:
        if start is None:
            return path
        return f"{path}#L{start}" + (f"-L{end}" if end is not None and end != start else "")

    def describe(self) -> str:
        return "a Python tree given with --tree"
