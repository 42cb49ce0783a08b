"""A local directory's content identity without reading it again: a stat index, as git keeps one.

`--source DIR` names a tree srcreview did not write, so no manifest vouches for it. The stat
index (`<cache>/statindex/v<SCHEMA>/<digest of DIR's real path>.idx`) remembers, for each
regular file, the lstat it had when it was hashed (size, mtime_ns, inode, ctime_ns) with its
sha256 and git blob id; a later scan stats every entry and hashes only the files whose stat
changed. The scan's result, a `Snapshot`, lists the tree in a cache manifest's shape (relpath
-> [size, sha256], symlinks [-1, sha256 of the link text]) and its `digest` names the content
(srcreview.source.identity), so stored reviews are served for such a tree. A review of it
reads through `SnapshotTree`: listings from the snapshot, every file read checked against its
sha256 (a file changed since the scan is refused, and the index is dropped), blob ids (the
facts cache's keys) from the index.

The racy-git rule: a file modified within the timestamp granularity of the moment it was
stat'd can change again without its stat changing. So an entry is trusted only when its mtime
and ctime are older than the moment the previous scan began minus RACY_NS (2 s: FAT's mtime
granularity, above one second filesystems and the kernel's coarse clock); any other is hashed
again, and the index is rewritten at the later moment. The moment is this machine's clock: a
network filesystem whose clock lags it by more than the window could let a racy edit through.

What is trusted: that a file whose size, mtime, inode and ctime are all unchanged has its old
content. Someone who edits a file and then restores all four exactly is not detected; mtime is
set by any `touch -d`, but ctime cannot be set by ordinary tools (only by changing the clock,
or writing the disk directly), which is why it is in the key.

The index file is written atomically, sealed (its sha256, or its HMAC under the secret of
$SRCREVIEW_CACHE_KEY when set, so no one without it can vouch for content), bounded
(MAX_FILES entries, MAX_BYTES, MAX_INDEXES trees, the least recently used go), and refused
(rebuilt from the files, never trusted) when unreadable, malformed or another tree's. A tree
with anything a manifest cannot stand for (a special file, an unreadable file or directory, a
name that is not UTF-8, a directory named `*.py`, a symlink to a directory, an absolute one or
one leaving the tree) gets no snapshot: it is read as a plain directory, as before.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import posixpath
import re
import stat
import time
from pathlib import Path

from srcreview.core.sealed import seal, secret_key, unseal, write_atomic
from srcreview.source.base import DirectoryTree, git_blob_id, is_utf8

SCHEMA = 1
DIRECTORY = "statindex"
MAGIC = b"srcreview-statindex\n"
SUFFIX = ".idx"
RACY_NS = 2_000_000_000
MAX_FILES = 200_000  # a vLLM release has about 7,000
MAX_BYTES = 64_000_000  # one index file (about 150 bytes an entry)
MAX_INDEXES = 32  # trees remembered
_DIGESTS = re.compile(r"[0-9a-f]{64} [0-9a-f]{40}\Z")  # a record's sha256 and blob id


class Snapshot:
    """A directory's content as one scan found it (see the module docstring)."""

    def __init__(self, records: dict[str, list], links: dict[str, str], digest: str, hashed: tuple[str, ...]):
        self._records = records  # relpath of each regular file -> [size, mtime_ns, ino, ctime_ns, sha256, blob id]
        self._links = links  # relpath of each symlink -> the sha256 of its text
        self.digest = digest  # the sha256 of `files` in one canonical spelling: the tree's content identity
        self.hashed = hashed  # the files this scan read (new, changed, racy, or no usable index)

    @functools.cached_property
    def files(self) -> dict[str, list]:
        """The listing in a cache manifest's shape: relpath -> [size, sha256] (a symlink: [-1, sha256 of its text])."""
        found = {rel: [record[0], record[4]] for rel, record in self._records.items()}
        found.update((rel, [-1, sha]) for rel, sha in self._links.items())
        return dict(sorted(found.items()))

    @functools.cached_property
    def blobs(self) -> dict[str, str]:
        """The git blob id of each regular file (the facts cache's key)."""
        return {rel: record[5] for rel, record in self._records.items()}


class _Unusual(Exception):
    """An entry a manifest cannot stand for: the tree gets no snapshot."""


def index_dir(cache_root: Path) -> Path:
    """Where the stat indexes of a srcreview cache root live (`<root>/statindex/v<SCHEMA>`)."""
    return Path(cache_root) / DIRECTORY / f"v{SCHEMA}"


def content_digest(files: dict[str, list]) -> str:
    """The identity of a manifest-shaped listing: sha256 of its canonical JSON."""
    return hashlib.sha256(json.dumps(files, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def snapshot(root: Path, cache_root: Path, *, racy_ns: int = RACY_NS) -> Snapshot | None:
    """Scan `root` against its stat index under `cache_root`, hashing what changed, and keep the
    index up to date (a cache that cannot be written only costs the hashing next time); None
    when the tree holds an entry a manifest cannot stand for, or more than MAX_FILES."""
    real = os.path.realpath(root)
    try:
        dev = os.stat(real).st_dev
    except OSError:
        return None
    tree_key = hashlib.sha256(os.fsencode(real)).hexdigest()
    target = index_dir(cache_root) / f"{tree_key}{SUFFIX}"
    key = secret_key(b"srcreview stat index\n")
    index = _load(target, tree_key, dev, key)
    old = index["entries"] if index else {}
    moment = time.time_ns()  # before the first stat: a file changed during the scan is racy
    try:
        records, links, hashed = _scan(real, old, dev, (index["moment_ns"] if index else 0) - racy_ns)
    except (_Unusual, OSError, RecursionError):
        return None
    if index and not hashed and records.keys() == old.keys() and links == index["links"]:
        # every record trusted, the same files and links: the listing the stored digest was computed from
        snap = Snapshot(records, links, index["digest"], ())
        with contextlib.suppress(OSError):
            os.utime(target)  # used: the least recently used go first
        return snap
    snap = Snapshot(records, links, "", tuple(hashed))
    snap.digest = content_digest(snap.files)
    body = json.dumps({"schema": SCHEMA, "tree": tree_key, "dev": dev, "moment_ns": moment, "digest": snap.digest,
                       "links": links, "entries": records}, separators=(",", ":")).encode()
    if len(body) <= MAX_BYTES and write_atomic(target, seal(body, MAGIC, key)):
        _bound(target.parent)
    return snap


def forget(root: Path, cache_root: Path) -> None:
    """Drop the stat index of `root` (a file found changed behind an unchanged stat): the next
    scan hashes every file."""
    tree_key = hashlib.sha256(os.fsencode(os.path.realpath(root))).hexdigest()
    with contextlib.suppress(OSError):
        (index_dir(cache_root) / f"{tree_key}{SUFFIX}").unlink()


def _load(target: Path, tree_key: str, dev: int, key: bytes | None) -> dict | None:
    """The intact index of this tree; None when absent, over the bound, damaged, malformed or
    another tree's (then no record is trusted: every file is hashed)."""
    try:
        with open(target, "rb") as fh:
            data = fh.read(MAX_BYTES + len(MAGIC) + 33)
    except OSError:
        return None
    payload = unseal(data, MAGIC, key) if len(data) <= MAX_BYTES + len(MAGIC) + 32 else None
    try:
        index = json.loads(payload) if payload is not None else None
    except (ValueError, RecursionError):
        return None
    if not isinstance(index, dict) or index.get("schema") != SCHEMA or index.get("tree") != tree_key \
            or index.get("dev") != dev or type(index.get("moment_ns")) is not int \
            or not isinstance(index.get("digest"), str) or not isinstance(index.get("links"), dict) \
            or not isinstance(index.get("entries"), dict) or len(index["entries"]) > MAX_FILES:
        return None
    return index


def _scan(real: str, old: dict, dev: int, cutoff: int):
    """Every entry under `real`: the index records of its files, the digests of its links, the
    paths hashed. A record is trusted only when its (size, mtime_ns, inode, ctime_ns) is the
    file's lstat and both times are older than `cutoff` (the racy-git rule)."""
    records: dict[str, list] = {}
    links: dict[str, str] = {}
    hashed: list[str] = []
    pending = [(real, "")]
    while pending:
        folder, prefix = pending.pop()
        with os.scandir(folder) as entries:
            items = list(entries)
        for item in items:
            name = item.name
            if not (name.isascii() or is_utf8(name)):
                raise _Unusual(name)  # a plain read skips it, a manifest would refuse it
            rel = prefix + name
            if item.is_symlink():
                links[rel] = _link_digest(item.path, rel)
                continue
            if item.is_dir(follow_symlinks=False):
                if name.endswith(".py"):
                    raise _Unusual(rel)  # a gap only a walk of the tree finds
                pending.append((item.path, rel + "/"))
                continue
            st = item.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode):
                raise _Unusual(rel)  # a FIFO, socket or device
            size, mtime, ino, ctime = st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns
            entry = old.get(rel)
            if type(entry) is list and len(entry) == 6 and entry[0] == size and entry[1] == mtime \
                    and entry[2] == ino and entry[3] == ctime and mtime < cutoff and ctime < cutoff \
                    and st.st_dev == dev and _DIGESTS.match(f"{entry[4]} {entry[5]}"):
                records[rel] = entry
            else:
                sha, blob = _hash(item.path)
                hashed.append(rel)
                records[rel] = [size, mtime, ino, ctime, sha, blob]
            if len(records) > MAX_FILES:
                raise _Unusual("too many files")
    return records, links, sorted(hashed)


def _link_digest(full: str, rel: str) -> str:
    """The sha256 of a symlink's text; _Unusual unless it is relative, stays inside the tree
    and names no directory (so it resolves the same wherever the tree lies)."""
    text = os.readlink(full)
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel), text))
    if not is_utf8(text) or posixpath.isabs(text) or joined == ".." or joined.startswith("../") \
            or os.path.isdir(full):
        raise _Unusual(rel)
    return hashlib.sha256(text.encode()).hexdigest()


def _hash(full: str) -> tuple[str, str]:
    """The sha256 and git blob id of a regular file (never following a link put there meanwhile)."""
    fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NOCTTY", 0))
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise _Unusual(full)
        data = fh.read()
    return hashlib.sha256(data).hexdigest(), git_blob_id(data)


def _bound(folder: Path) -> None:
    """Keep the MAX_INDEXES most recently used indexes."""
    try:
        found = sorted(((p.stat().st_mtime_ns, p.name, p) for p in folder.iterdir() if p.name.endswith(SUFFIX)),
                       reverse=True)
    except OSError:
        return
    for _, _, path in found[MAX_INDEXES:]:
        with contextlib.suppress(OSError):
            path.unlink()


class SnapshotTree(DirectoryTree):
    """A `--source` directory read as its snapshot: listed from it, every read checked against it."""

    CHANGED_GAP = "changed since the tree was scanned at the start of the review (read again by the next run)"
    CHANGED_ERROR = "changed since the tree was scanned at the start of the review (read again by the next run)"

    def __init__(self, root: Path, revision, snap: Snapshot, cache_root: Path):
        super().__init__(root, revision, provider="local", manifest=snap.files,
                         on_damage=lambda: forget(root, cache_root))
        self.snapshot = snap
        self._blob_ids.update(snap.blobs)
