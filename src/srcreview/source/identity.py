"""What names a source tree's content without reading the tree: the digest of its cache manifest.

A tree served from the cache (a registry sdist, a GitHub tarball, a `--source` archive) is
exactly the content its entry's manifest records: every file with its sha256, and a file read
later that differs is refused. So the sha256 of the manifest's bytes names that content, and a
result computed from the tree is a result for that digest (srcreview.store.reviews keys stored
reviews by it).

`expected(...)` says, before anything is opened, which entry `open_source` would serve and its
digest; `of_tree(tree)` says the same of the tree actually opened (layers included). A result
is stored under the identity of the tree it was computed from and looked up under the expected
one: a hit is a result for exactly the content the manifest names. Sources without a manifest
(a `--source` directory or git checkout, the git cache) have no identity here: None.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from srcreview.model.revision import Revision
from srcreview.source.cache import MANIFEST, TREE, Cache


def expected(revision: Revision, *, source: str | Path | None = None, provider: str = "auto",
             layers=(), cache: Cache | None = None) -> dict | None:
    """The identity of the tree `open_source` (then `apply_layers`) would give for these
    arguments, if it would come from a cache entry (no network, no lock, nothing but the
    manifest read); None otherwise."""
    cache = cache or Cache()
    provider = provider or "auto"
    if source is not None:
        entry = _local_archive_entry(Path(source), cache) if provider in ("auto", "local") else None
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
    from srcreview.source.patched import PatchedTree

    base, layers = (tree.base, tree.layers) if isinstance(tree, PatchedTree) else (tree, ())
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
            "manifest": hashlib.sha256(manifest).hexdigest(),
            "layers": [[layer.kind, layer.shown, layer.sha256] for layer in layers]}


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
        return None  # a directory or checkout: no manifest names its content
    digest = hashlib.sha256()
    try:
        with open_regular(path, f"--source {path.name}", "archive") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    except Exception:  # noqa: BLE001 - the review itself reports what is wrong with the archive
        return None
    return cache.path_for("local", digest.hexdigest())
