"""What names a source tree's content without reading the tree: a digest of what vouches for it.

A tree served from the cache (a registry sdist, a GitHub tarball, a `--source` archive) is
exactly the content its entry's manifest records: every file with its sha256, and a file read
later that differs is refused. So the sha256 of the manifest's bytes names that content, and a
result computed from the tree is a result for that digest (srcreview.store.reviews keys stored
reviews by it). A `--source` directory is named by the digest of its stat index's snapshot
(srcreview.source.statindex: the same listing, hashing only the files whose stat changed, every
read checked against it); a `--source` git checkout by the commit and its tree id (its blobs are
read at the commit from git's content-addressed object store, never from the work tree, so
local edits do not change what is read).

`expected(...)` says, before the tree is opened, which content `open_source` would serve and
its digest; `of_tree(tree)` says the same of the tree actually opened (layers included). A
result is stored under the identity of the tree it was computed from and looked up under the
expected one: a hit is a result for exactly the content the digest names. Sources with nothing
to vouch for them (a directory holding what a snapshot cannot stand for, the git cache) have
no identity here: None.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from srcreview.model.revision import Revision
from srcreview.source.cache import MANIFEST, TREE, Cache


def expected(revision: Revision, *, source: str | Path | None = None, provider: str = "auto",
             layers=(), cache: Cache | None = None) -> dict | None:
    """The identity of the tree `open_source` (then `apply_layers`) would give for these
    arguments, if something vouches for its content (no network, no lock: a cache entry's
    manifest read, a directory's stat index brought up to date, or two git look-ups in a
    checkout); None otherwise."""
    cache = cache or Cache()
    provider = provider or "auto"
    if source is not None:
        if provider not in ("auto", "local"):
            return None
        if Path(source).is_dir():
            return _local_identity(Path(source), revision, cache, layers)
        entry = _local_archive_entry(Path(source), cache)
        kind = "local"
    elif provider in ("auto", "registry") and revision.pin is not None and revision.version is not None:
        from srcreview.source.registry import KIND, cache_key

        kind, entry = KIND, cache.path_for(KIND, cache_key(revision))
        if provider == "auto" and not (entry / MANIFEST).is_file():
            kind, entry = "github", _github_entry(revision, cache)
    elif provider in ("auto", "github"):
        kind, entry = "github", _github_entry(revision, cache)
    else:
        return None
    return _identity(kind, entry, layers)


def of_tree(tree) -> dict | None:
    """The identity of an opened tree (see `expected`); None when it is not a cache entry's."""
    from srcreview.source.base import DirectoryTree
    from srcreview.source.gitrepo import GitTree
    from srcreview.source.patched import PatchedTree
    from srcreview.source.statindex import SnapshotTree

    base, layers = (tree.base, tree.layers) if isinstance(tree, PatchedTree) else (tree, ())
    if isinstance(base, SnapshotTree):
        return _directory_identity(base.snapshot.digest, layers)
    if isinstance(base, GitTree) and base.provider == "local":
        return _checkout(base.commit_id(), base.tree_id(), layers)
    if not isinstance(base, DirectoryTree) or base._manifest is None or base.root.name != TREE:
        return None
    return _identity(base.provider, base.root.parent, layers)


def _identity(kind: str, entry: Path | None, layers) -> dict | None:
    if entry is None:
        return None
    try:
        manifest = (entry / MANIFEST).read_bytes()
    except OSError:
        return None
    return {"provider": kind, "entry": f"{entry.parent.name}/{entry.name}",
            "manifest": hashlib.sha256(manifest).hexdigest(), "layers": _layers(layers)}


def _layers(layers) -> list:
    return [[layer.kind, layer.shown, layer.sha256] for layer in layers]


def _directory_identity(digest: str, layers) -> dict:
    return {"provider": "local", "entry": "directory", "content": digest, "layers": _layers(layers)}


def _checkout(commit: str, tree_id: str, layers) -> dict:
    return {"provider": "local", "entry": "git checkout", "commit": commit, "tree": tree_id, "layers": _layers(layers)}


def _local_identity(path: Path, revision: Revision, cache: Cache, layers) -> dict | None:
    """A `--source` directory as `open_local` reads it: a git checkout at the commit the rev
    names (the one commit, as `open_checkout` resolves it), else an unpacked tree's snapshot."""
    from srcreview.core.errors import SourceUnavailable
    from srcreview.source.gitrepo import git_dir_of, resolve_commit, run_git
    from srcreview.source.sdist import VERSION_FILE
    from srcreview.source.statindex import snapshot

    try:
        git_dir = git_dir_of(path)
    except OSError:
        return None
    if git_dir is not None:
        what = f"--source {path.name}"
        try:
            full = resolve_commit(git_dir, revision.sha, what)
            tree_id = run_git(git_dir, "rev-parse", "--verify", "--end-of-options", f"{full}^{{tree}}",
                              what=what).decode().strip()
        except SourceUnavailable:
            return None  # opening it says why
        return _checkout(full, tree_id, layers)
    if not (path / VERSION_FILE).is_file():
        return None
    snap = snapshot(path, cache.root)
    return _directory_identity(snap.digest, layers) if snap is not None else None


def _github_entry(revision: Revision, cache: Cache) -> Path | None:
    """The tarball entry `github.find_cached` would take: the first key naming the commit with a manifest."""
    for key in cache.keys("github"):
        if revision.matches_commit(key) and (cache.path_for("github", key) / MANIFEST).is_file():
            return cache.path_for("github", key)
    return None


def _local_archive_entry(path: Path, cache: Cache) -> Path | None:
    """The entry a `--source` archive is extracted to (keyed by its sha256), if it is an archive."""
    from srcreview.core.userfile import open_regular
    from srcreview.source.archive import archive_kind

    if not path.is_file() or archive_kind(path) is None:
        return None
    digest = hashlib.sha256()
    try:
        with open_regular(path, f"--source {path.name}", "archive") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except Exception:  # noqa: BLE001 - the review itself reports what is wrong with the archive
        return None
    return cache.path_for("local", digest.hexdigest())
