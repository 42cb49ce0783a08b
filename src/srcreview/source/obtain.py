"""Choose and run a source provider: the one entry point the rest of srcreview calls.

`auto` takes the cheapest source that works: `--source PATH` if given; else a verified
cache entry of the revision; else the registry sdist of a pinned release; else the GitHub
tarball of the commit; else the git cache. An unreachable server moves on to the next
provider; a verification failure (digest or commit mismatch, hostile archive) stops at once.

`--source PATH` may be a git checkout (read at the rev, work tree untouched), an unpacked
sdist directory or a packed sdist archive; an sdist must record the requested commit in its
`vllm/_version.py` and agree with pins/ (srcreview.source.sdist), and an archive that claims
a release pins/ knows must be that release's sdist (its sha256), else SourceUnavailable
(exit 2: the exact source could not be verified). A full commit asked for that only the
sdist's 9 digits support is reported as unverified. A missing PATH is a usage error (exit 64).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from srcreview.core.errors import SourceUnavailable, UsageError
from srcreview.model.revision import Revision
from srcreview.source.base import (
    DirectoryTree,
    Progress,
    SourceTree,
    VerificationFailed,
)

PROVIDERS = ("auto", "local", "registry", "github", "git")


def open_source(revision: Revision, *, source: Path | None = None, provider: str = "auto",
                progress: Progress | None = None, cache=None, verify: bool = False) -> SourceTree:
    """The exact source tree of `revision`.

    `cache` defaults to the user cache (`Cache()`); `verify` re-hashes a cached tree's every
    file instead of the quick size check (used by `srcreview fetch`).
    """
    from srcreview.source.cache import Cache

    if provider not in PROVIDERS:
        raise UsageError(f"--provider: {provider!r} is not one of {', '.join(PROVIDERS)}")
    if source is not None and provider not in ("auto", "local"):
        raise UsageError(f"--source cannot be combined with --provider {provider}")
    if provider == "local" or source is not None:
        if source is None:
            raise UsageError("--provider local needs --source PATH")
        return open_local(Path(source), revision, cache=cache, progress=progress)
    cache = cache or Cache()
    if provider == "registry":
        from srcreview.source.registry import open_registry

        return open_registry(revision, cache, progress, deep=verify)
    if provider == "github":
        from srcreview.source.github import open_github

        return open_github(revision, cache, progress, deep=verify)
    if provider == "git":
        return _open_git(revision, cache)
    return _auto(revision, cache, progress, verify)


def _open_git(revision: Revision, cache) -> SourceTree:
    from srcreview.source.gitrepo import GitCache

    git_cache = GitCache(cache)
    full = git_cache.find(revision)
    cached = full is not None
    if full is None:
        full = git_cache.ensure(revision)
    return git_cache.tree(revision, full, cached=cached)


def find_cached(revision: Revision, cache) -> SourceTree | None:
    """A verified tree of `revision` already in the cache (any provider), without network."""
    from srcreview.source import github, registry

    found = registry.find_cached(revision, cache) or github.find_cached(revision, cache)
    if found is not None:
        return found
    from srcreview.source.gitrepo import (
        GitCache,  # only now: a cached sdist or tarball never needs git
    )

    git_cache = GitCache(cache)
    full = git_cache.find(revision)
    return git_cache.tree(revision, full, cached=True) if full else None


def _auto(revision: Revision, cache, progress, verify: bool) -> SourceTree:
    from srcreview.source.cache import CacheNotWritable
    from srcreview.source.github import open_github
    from srcreview.source.registry import open_registry

    found = find_cached(revision, cache)
    if found is not None and verify and found.provider == "registry":
        return open_registry(revision, cache, progress, deep=True)
    if found is not None and verify and found.provider == "github":
        return open_github(found.revision, cache, progress, deep=True)
    if found is not None:
        return found
    attempts: list[Callable[[], SourceTree]] = []
    if revision.pin is not None:
        attempts.append(lambda: open_registry(revision, cache, progress, deep=verify))
    attempts.append(lambda: open_github(revision, cache, progress, deep=verify))
    attempts.append(lambda: _open_git(revision, cache))
    failures = []
    for attempt in attempts:
        try:
            return attempt()
        except (VerificationFailed, CacheNotWritable):
            raise  # a forged source stops here; and no provider can work without a writable cache
        except SourceUnavailable as exc:
            failures.append(exc.message)
    raise SourceUnavailable(f"cannot obtain vLLM {revision.label()}: " + "; ".join(failures))


def open_local(path: Path, revision: Revision, cache=None, progress: Progress | None = None) -> SourceTree:
    """`--source PATH`: a git checkout, an unpacked sdist directory, or an sdist archive."""
    from srcreview.source.archive import archive_kind
    from srcreview.source.gitrepo import git_dir_of, open_checkout
    from srcreview.source.sdist import VERSION_FILE, verify_identity, vouched

    if not path.exists():
        raise UsageError(f"--source {path.name}: no such file or directory")
    if path.is_dir():
        if git_dir_of(path) is not None:
            return open_checkout(path, revision)
        if not (path / VERSION_FILE).is_file():
            raise UsageError(f"--source {path.name}: neither a git repository nor an unpacked vLLM sdist "
                             f"(no {VERSION_FILE})")
        tree = open_directory(path, revision, cache)
        tree.origin = "sdist directory"
        commit, unverified = verify_identity(tree, revision, f"--source {path.name}")
        tree.revision = vouched(revision, commit).model_copy(update={"identity_unverified": unverified})
        return tree
    if archive_kind(path) is None:
        raise UsageError(f"--source {path.name}: not a directory, .tar.gz, .tar or .zip")
    return _open_local_archive(path, revision, cache, progress)


def open_directory(path: Path, revision: Revision, cache=None) -> DirectoryTree:
    """An unpacked tree as its stat index's snapshot (srcreview.source.statindex: hashing only the
    files whose stat changed, every read checked against it), or read as a plain directory when
    it holds what a snapshot cannot stand for."""
    from srcreview.source.cache import Cache
    from srcreview.source.statindex import SnapshotTree, snapshot

    root = (cache or Cache()).root
    snap = snapshot(path, root)
    return SnapshotTree(path, revision, snap, root) if snap is not None else DirectoryTree(path, revision,
                                                                                         provider="local")


def _open_local_archive(path: Path, revision: Revision, cache, progress) -> SourceTree:
    """An sdist archive, extracted once into the cache under its content digest."""
    from srcreview.core.userfile import open_regular
    from srcreview.source.archive import extract
    from srcreview.source.cache import Cache
    from srcreview.source.sdist import verify_commit, verify_identity, vouched

    cache = cache or Cache()
    what = f"--source {path.name}"
    digest = hashlib.sha256()
    with open_regular(path, what, "archive") as fh:  # a FIFO or /dev/zero named .tar.gz: refused, never read
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    key = digest.hexdigest()
    with cache.entry("local", key) as entry:
        if not entry.ready:
            staging = entry.staging()
            extract(path, staging, progress=progress)
            commit = verify_commit(DirectoryTree(staging, revision), revision, what)
            entry.commit({"provider": "local", "archive_sha256": key, "commit_id": commit})
        tree = DirectoryTree(entry.tree, revision, provider="local", manifest=entry.files,
                             on_damage=lambda: cache.mark_damaged("local", key))
        tree.origin = path.name
        tree.cached = entry.was_ready
        commit, unverified = verify_identity(tree, revision, what)
        if _check_release_archive(tree, key, what):
            unverified = None  # the release's own sdist, byte for byte
        tree.revision = vouched(revision, commit).model_copy(update={"identity_unverified": unverified})
        return tree


def _check_release_archive(tree: SourceTree, sha256: str, what: str) -> bool:
    """An archive that says it is a release pins/ knows must be that release's sdist, byte for
    byte: an edited `_version.py` (or any other edit) changes its sha256. True when it is."""
    from srcreview.model.revision import load_pins
    from srcreview.source.sdist import VERSION_FILE, version_info

    version, _ = version_info(tree.read_text(VERSION_FILE))
    pin = next((p for p in load_pins() if p.version == version), None)
    if pin is not None and pin.sdist_sha256 and sha256 != pin.sdist_sha256:
        raise VerificationFailed(f"{what}: claims vLLM {version}, but its sha256 {sha256[:16]}... is not that "
                                 f"release's sdist ({pin.sdist_sha256[:16]}... in pins/)")
    return pin is not None and pin.sdist_sha256 == sha256
