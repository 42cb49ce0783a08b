"""Commit sources from GitHub: the repository tarball of one commit, safely extracted.

URL: `$SRCREVIEW_GITHUB_URL/<sha>.tar.gz`, default `<repo>/archive/<sha>.tar.gz` where
<repo> is the anchor repository (`SRCREVIEW_REPO_URL`, a fork, or vLLM's). The tarball
itself names the full commit (its pax comment and its `vllm-<sha>/` directory); it must
agree with the requested revision, and the tree is cached under that full commit.
"""

from __future__ import annotations

import os
import re
from typing import cast

from srcreview.core.errors import SourceUnavailable
from srcreview.model.revision import Revision
from srcreview.source.base import DirectoryTree, Progress, VerificationFailed, repo_url
from srcreview.source.cache import Cache

# The network and archive modules are imported by `_fetch_into`: a cached tree never needs them.

KIND = "github"
_FULL = re.compile(r"[0-9a-f]{40}")


def tarball_base() -> str:
    return os.environ.get("SRCREVIEW_GITHUB_URL", "").strip().rstrip("/") or f"{repo_url()}/archive"


def _full_sha(comment: str | None, top: str) -> str | None:
    """The full commit the tarball names: pax comment first, else the `<repo>-<sha>` directory."""
    if comment and _FULL.fullmatch(comment.strip()):
        return comment.strip()
    match = re.search(r"-([0-9a-f]{40})$", top)
    return match.group(1) if match else None


def find_cached(revision: Revision, cache: Cache, deep: bool = False) -> DirectoryTree | None:
    """A verified tarball tree of this commit already in the cache, if any."""
    for key in cache.keys(KIND):
        if revision.matches_commit(key):
            data = cache.lookup_manifest(KIND, key, deep)
            if data is not None:
                return _tree(cache.tree_path(KIND, key), revision, data["meta"], cached=True, files=data["files"],
                             cache=cache)
    return None


def _tree(path, revision: Revision, meta: dict, cached: bool, files: dict | None = None,
          cache: Cache | None = None) -> DirectoryTree:
    sha = meta.get("sha", revision.sha)
    if len(sha) > len(revision.sha):
        revision = revision.model_copy(update={"sha": sha})
    tree = DirectoryTree(path, revision, provider=KIND, manifest=files,
                         on_damage=(lambda: cache.mark_damaged(KIND, sha)) if cache is not None else None)
    tree.cached = cached
    tree.origin = "tarball"
    return tree


def open_github(revision: Revision, cache: Cache, progress: Progress | None = None,
                deep: bool = False) -> DirectoryTree:
    """The tree of `revision` from the GitHub tarball (cached under the full commit).

    With a full commit the entry is locked before downloading, so concurrent runs download
    once; an abbreviated commit learns its full id from the tarball first.
    """
    found = find_cached(revision, cache, deep)
    if found is not None:
        return found
    with cache.scratch() as scratch:
        if revision.is_full:
            with cache.entry(KIND, revision.sha, deep=deep) as entry:
                if not entry.ready:
                    _fetch_into(revision, entry.staging(), scratch, progress)
                    entry.commit({"provider": KIND, "sha": revision.sha})
                return _tree(entry.tree, revision, cast(dict, entry.meta), cached=entry.was_ready, files=entry.files,
                             cache=cache)
        unpacked = scratch / "tree"
        unpacked.mkdir()
        full = _fetch_into(revision, unpacked, scratch, progress)
        with cache.entry(KIND, full, deep=deep) as entry:
            if not entry.ready:
                os.rmdir(entry.staging())
                os.replace(unpacked, entry.staging())
                entry.commit({"provider": KIND, "sha": full})
            return _tree(entry.tree, revision, cast(dict, entry.meta), cached=entry.was_ready, files=entry.files,
                         cache=cache)


def _fetch_into(revision: Revision, dest, scratch, progress) -> str:
    """Download and extract the tarball into `dest`; returns the full commit it names."""
    from srcreview.source import http as nethttp
    from srcreview.source.archive import extract
    from srcreview.source.pipindex import redact_url

    base = tarball_base()
    shown = redact_url(base)
    archive = scratch / f"vllm-{revision.sha}.tar.gz"
    try:
        nethttp.download(nethttp.session(), f"{base}/{revision.sha}.tar.gz", archive, f"GitHub ({shown})",
                         archive.name, progress)
    except nethttp.HTTPStatusError as exc:
        if exc.status == 404:
            raise SourceUnavailable(f"GitHub ({shown}) has no commit {revision.sha} (HTTP 404)") from None
        raise SourceUnavailable(f"GitHub ({shown}): HTTP {exc.status} for commit {revision.sha}") from None
    info = extract(archive, dest, progress=progress)
    archive.unlink()
    full = _full_sha(info.comment, info.top)
    if full is None:
        raise VerificationFailed(f"GitHub tarball for {revision.sha} does not name its commit")
    if not revision.matches_commit(full):
        raise VerificationFailed(f"GitHub tarball for {revision.sha} is of commit {full}")
    return full
