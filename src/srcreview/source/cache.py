"""The on-disk cache: verified source trees, the git cache, and other modules' files (facts).

Everything written here is built aside and renamed into place, so a reader sees a whole entry
or none. An entry carries a manifest (every file with its size and sha256, plus a digest of
the manifest itself); an entry whose manifest is missing, unreadable or disagrees with the
files is rebuilt, never trusted. Two runs sharing the cache serialize on a per-entry file
lock; the one that waited finds the winner's entry complete and uses it. What a killed run
leaves (a staging tree, a half-downloaded file in `.tmp/`) is never at an entry's path, so it
is never trusted; the next run that locks that entry removes its staging trees, and the next
download removes every scratch directory under `.tmp/` whose owner died (its lock is free).

Location: `$SRCREVIEW_CACHE`, else `$XDG_CACHE_HOME/srcreview`, else `~/.cache/srcreview`.
A read-only cache still serves the entries it already holds; building a new one there fails
with one line (exit 2) naming the setting that chose the directory.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import cast

from srcreview.core.cachedir import MARKER as MARKER_FILE
from srcreview.core.cachedir import is_marked, make_dirs
from srcreview.core.errors import SourceUnavailable

MANIFEST = "manifest.json"
TREE = "tree"
MANIFEST_SCHEMA = 1
TRASH_SECONDS = 3600
OWNER = ".owner"  # the lock file of a scratch directory under .tmp/
_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")


class CacheNotWritable(SourceUnavailable):
    """The cache directory cannot be written; callers that can live without the cache catch this."""


def default_root() -> tuple[Path, str]:
    """The cache directory and the setting that chose it (for messages without local paths)."""
    if os.environ.get("SRCREVIEW_CACHE"):
        return Path(os.environ["SRCREVIEW_CACHE"]).expanduser(), "$SRCREVIEW_CACHE"
    if os.environ.get("XDG_CACHE_HOME"):
        return Path(os.environ["XDG_CACHE_HOME"]).expanduser() / "srcreview", "$XDG_CACHE_HOME/srcreview"
    return Path.home() / ".cache" / "srcreview", "~/.cache/srcreview"


def _check_part(value: str, what: str) -> str:
    if not _KEY.match(value):
        raise ValueError(f"invalid cache {what}: {value!r}")
    return value


def file_digests(root: Path) -> dict[str, list]:
    """Every regular file and symlink under `root`: relpath -> [size, sha256] (links: [-1, sha256 of target])."""
    found: dict[str, list] = {}
    base = str(root)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, base).replace(os.sep, "/")
            if os.path.islink(full):
                target = os.readlink(full).encode()
                found[rel] = [-1, hashlib.sha256(target).hexdigest()]
                continue
            digest = hashlib.sha256()
            size = 0
            with open(full, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
                    size += len(chunk)
            found[rel] = [size, digest.hexdigest()]
    return dict(sorted(found.items()))


def _manifest_digest(meta: dict, files: dict) -> str:
    body = json.dumps({"meta": meta, "files": files}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()


def read_manifest(path: Path) -> dict | None:
    """The entry's manifest if it is intact (its own digest checks), else None."""
    try:
        data = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        if data.get("schema") != MANIFEST_SCHEMA:
            return None
        if data.get("digest") != _manifest_digest(data["meta"], data["files"]):
            return None
        return data
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def verified_manifest(path: Path, deep: bool = False) -> dict | None:
    """The whole manifest (meta and files) if the entry at `path` is complete and unchanged, else None.

    The quick check compares every file's presence and size (one stat each); `deep` also
    re-hashes every file's content. Its file list is then the tree's listing: callers need
    not walk the tree again.
    """
    data = read_manifest(path)
    if data is None:
        return None
    files = data["files"]
    tree = path / TREE
    if not tree.is_dir():
        return None
    if deep:
        return data if file_digests(tree) == files else None
    try:
        seen = _stat_walk(str(tree), "", files)
    except (_Mismatch, OSError):
        return None
    return data if seen == len(files) else None


class _Mismatch(Exception):
    """A file on disk that the manifest does not list, or lists with another size."""


def _stat_walk(folder: str, prefix: str, files: dict) -> int:
    """Count the entries under `folder` after checking each against the manifest (one scandir
    per directory, one lstat per file; symlinked directories are listed, never entered)."""
    seen = 0
    with os.scandir(folder) as entries:
        for item in entries:
            rel = prefix + item.name
            if item.is_dir(follow_symlinks=False):
                seen += _stat_walk(item.path, rel + "/", files)
                continue
            expected = files.get(rel)
            if expected is None:
                raise _Mismatch(rel)
            size = -1 if item.is_symlink() else item.stat(follow_symlinks=False).st_size
            if size != expected[0]:
                raise _Mismatch(rel)
            seen += 1
    return seen


class Entry:
    """One cache entry under construction or in use; see `Cache.entry`."""

    def __init__(self, cache: Cache, kind: str, key: str, meta: dict | None, files: dict | None = None):
        self.cache = cache
        self.kind = kind
        self.key = key
        self.path = cache.path_for(kind, key)
        self.meta = meta
        self.files = files  # the verified manifest's listing (relpath -> [size, sha256]) once ready
        self._found = meta is not None
        self._staging: Path | None = None

    @property
    def was_ready(self) -> bool:
        """Whether the entry was already in place when the lock was taken (a cache hit)."""
        return self._found

    def invalidate(self) -> None:
        """Drop an entry that is intact but no longer wanted (e.g. its pin changed), to rebuild it."""
        if self.path.exists() or self.path.is_symlink():
            self.cache._discard(self.path)
        self.meta = None
        self.files = None
        self._found = False

    @property
    def ready(self) -> bool:
        """Whether a verified entry is in place (built earlier, or by the run we waited for)."""
        return self.meta is not None

    @property
    def tree(self) -> Path:
        """The entry's tree (the files it caches); its manifest sits beside it."""
        return self.path / TREE

    def staging(self) -> Path:
        """An empty directory to build the tree in; `commit` renames it into place with its manifest."""
        if self._staging is None:
            self.cache._ensure_writable()
            parent = self.path.parent
            make_dirs(parent)
            self._staging = Path(tempfile.mkdtemp(prefix=f".{self.key}.", suffix=".tmp", dir=parent))
            os.chmod(self._staging, 0o755)
            (self._staging / MARKER_FILE).touch()  # the entry is srcreview's, wherever the cache is
            (self._staging / TREE).mkdir()
        return self._staging / TREE

    def commit(self, meta: dict) -> dict:
        """Write the manifest beside the staged tree and rename the whole entry into place."""
        tree = self.staging()
        files = file_digests(tree)
        body = {"schema": MANIFEST_SCHEMA, "meta": meta, "files": files,
                "digest": _manifest_digest(meta, files)}
        staging = cast(Path, self._staging)  # staging() made it
        _write_atomic(staging / MANIFEST, json.dumps(body, sort_keys=True, indent=0).encode())
        if self.path.exists() or self.path.is_symlink():
            self.cache._discard(self.path)
        os.replace(staging, self.path)
        self._staging = None
        self.meta = meta
        self.files = files
        return meta

    def _abandon(self) -> None:
        if self._staging is not None:
            shutil.rmtree(self._staging, ignore_errors=True)
            self._staging = None


class Cache:
    """The srcreview cache rooted at `root` (default: see module docstring)."""

    def __init__(self, root: Path | None = None, origin: str | None = None):
        if root is None:
            root, origin = default_root()
        self.root = Path(root)
        self.origin = origin or self.root.name

    def path_for(self, kind: str, key: str) -> Path:
        """Where entry `key` of `kind` ("registry", "github", "local", "git", ...) lives."""
        return self.root / _check_part(kind, "kind") / _check_part(key, "key")

    def tree_path(self, kind: str, key: str) -> Path:
        """The tree of entry `key` of `kind` (valid only once `lookup` or `entry` verified it)."""
        return self.path_for(kind, key) / TREE

    def mark_damaged(self, kind: str, key: str) -> None:
        """Drop the manifest of an entry whose content was found changed while it was read, so
        the next run rebuilds it (a read-only cache keeps it, and keeps refusing it)."""
        with contextlib.suppress(OSError):
            (self.path_for(kind, key) / MANIFEST).unlink()

    def keys(self, kind: str) -> list[str]:
        """Keys of the entries of `kind` currently present (complete or not), sorted."""
        folder = self.root / _check_part(kind, "kind")
        try:
            return sorted(p.name for p in folder.iterdir() if not p.name.startswith(".") and p.is_dir())
        except OSError:
            return []

    def lookup(self, kind: str, key: str, deep: bool = False) -> dict | None:
        """The meta of a verified entry, without locking (entries are immutable once in place)."""
        data = self.lookup_manifest(kind, key, deep)
        return None if data is None else data["meta"]

    def lookup_manifest(self, kind: str, key: str, deep: bool = False) -> dict | None:
        """Like `lookup`, but the whole verified manifest: its `files` list the tree."""
        path = self.path_for(kind, key)
        return verified_manifest(path, deep) if path.is_dir() else None

    @contextlib.contextmanager
    def entry(self, kind: str, key: str, deep: bool = False) -> Iterator[Entry]:
        """Hold the entry's lock; yield an Entry that is `ready` or must be built and committed.

        A present but corrupt entry is discarded here so the caller rebuilds it. If the cache
        cannot be written, a verified entry is still served (without a lock).
        """
        path = self.path_for(kind, key)
        try:
            fd = self._acquire(kind, key)
        except CacheNotWritable:
            data = verified_manifest(path, deep) if path.is_dir() else None
            if data is None:
                raise
            yield Entry(self, kind, key, data["meta"], data["files"])
            return
        try:
            self._sweep_leftovers(kind, key)
            data = verified_manifest(path, deep) if path.is_dir() else None
            if data is None and (path.exists() or path.is_symlink()):
                self._discard(path)
            entry = Entry(self, kind, key, None if data is None else data["meta"],
                          None if data is None else data["files"])
            try:
                yield entry
            finally:
                entry._abandon()
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def lock(self, kind: str, key: str) -> Iterator[None]:
        """Hold the exclusive lock of (kind, key) for a block (e.g. to update a mutable entry)."""
        fd = self._acquire(kind, key)
        try:
            yield
        finally:
            os.close(fd)

    def _acquire(self, kind: str, key: str) -> int:
        """Open and flock the lock file of (kind, key); closing the fd releases it."""
        import fcntl

        self._ensure_writable()
        locks = self.root / ".locks"
        try:
            make_dirs(locks)
            fd = os.open(locks / f"{_check_part(kind, 'kind')}--{_check_part(key, 'key')}.lock",
                         os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise self._not_writable(exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def _ensure_writable(self) -> None:
        try:
            make_dirs(self.root)
        except OSError as exc:
            raise self._not_writable(exc) from None
        if not os.access(self.root, os.W_OK | os.X_OK):
            raise self._not_writable(None)

    def _not_writable(self, exc: OSError | None) -> CacheNotWritable:
        reason = f": {exc.strerror}" if exc is not None and exc.strerror else ""
        return CacheNotWritable(f"cache directory ({self.origin}) is not writable{reason}; "
                                "set SRCREVIEW_CACHE to a writable directory")

    def _sweep_leftovers(self, kind: str, key: str) -> None:
        """Remove what killed runs left beside entry `key`: its staging trees and discarded entries.

        Called with the entry's lock held: only the lock holder stages `key`, so any staging
        tree of `key` found now belongs to a run that died. None of it was ever trusted (it is
        not at the entry's path); this only gives the disk space back, and only in a directory
        srcreview created (an unmarked `kind` directory is another program's: nothing is removed).
        """
        folder = self.root / kind
        if not is_marked(folder):
            return
        staging = re.compile(r"^\." + re.escape(key) + r"\.[A-Za-z0-9_]+\.tmp$")
        try:
            names = [p.name for p in folder.iterdir()]
        except OSError:
            return
        now = time.time()
        for name in names:
            if staging.match(name):
                shutil.rmtree(folder / name, ignore_errors=True)
            elif name.startswith(".trash."):  # another run may be discarding into it right now
                with contextlib.suppress(OSError):
                    if now - (folder / name).stat().st_mtime > TRASH_SECONDS:
                        shutil.rmtree(folder / name, ignore_errors=True)

    def _discard(self, path: Path) -> None:
        """Move a stale entry aside (atomic) and delete it."""
        trash = Path(tempfile.mkdtemp(prefix=".trash.", dir=path.parent))
        os.replace(path, trash / "entry")
        shutil.rmtree(trash, ignore_errors=True)

    @contextlib.contextmanager
    def scratch(self) -> Iterator[Path]:
        """A fresh private directory inside the cache (same filesystem as the entries) for one
        download, removed afterwards.

        Its owner holds a lock on a file in it for as long as it exists; the kernel releases the
        lock when the owner dies, even by SIGKILL. Every new scratch directory first removes the
        directories whose lock is free: what killed runs left (a partial archive), never what a
        live run is writing.
        """
        import fcntl

        self._ensure_writable()
        tmp = self.root / ".tmp"
        try:
            make_dirs(tmp)
            self._sweep(tmp)
            folder = Path(tempfile.mkdtemp(dir=tmp))
            fd = os.open(folder / f"{OWNER}.new", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise self._not_writable(exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.replace(folder / f"{OWNER}.new", folder / OWNER)  # visible only once locked
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            os.close(fd)

    @staticmethod
    def _sweep(tmp: Path) -> None:
        """Remove the scratch directories of runs that died: their owner lock is free (or, for a
        directory without one, it is over an hour old), in a `.tmp` srcreview created only:
        `SRCREVIEW_CACHE=~` makes `~/.tmp`, another program's, the scratch directory."""
        import fcntl

        if not is_marked(tmp):
            return
        now = time.time()
        for child in tmp.iterdir():
            if child.name == MARKER_FILE:
                continue
            try:
                fd = os.open(child / OWNER, os.O_RDWR)
            except OSError:  # no lock: another layout, or created this instant (no lock yet)
                with contextlib.suppress(OSError):
                    if now - child.lstat().st_mtime > TRASH_SECONDS:
                        _remove(child)
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its owner is alive
            else:
                _remove(child)
            finally:
                os.close(fd)



    def write_bytes_atomic(self, relpath: str, data: bytes) -> Path:
        """Write a small file under the cache root atomically (temp file beside it + os.replace);
        the index releases record (srcreview.source.registry) is one."""
        target = self._file(relpath)
        self._ensure_writable()
        try:
            make_dirs(target.parent)
            _write_atomic(target, data)
        except OSError as exc:
            raise self._not_writable(exc) from None
        return target

    def read_bytes(self, relpath: str, limit: int = 1 << 20) -> bytes | None:
        """A file written by `write_bytes_atomic` (at most `limit` bytes), or None if absent,
        unreadable or larger."""
        try:
            with open(self._file(relpath), "rb") as fh:
                data = fh.read(limit + 1)
        except OSError:
            return None
        return data if len(data) <= limit else None

    def _file(self, relpath: str) -> Path:
        from srcreview.source.base import clean_relpath

        return self.root / clean_relpath(relpath)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            path.unlink()


def _write_atomic(target: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
