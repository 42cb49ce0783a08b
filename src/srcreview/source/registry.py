"""Release sources from the package index: the `vllm-<version>.tar.gz` sdist, verified twice.

The index is asked through the PEP 691 JSON simple API (PEP 503 HTML is understood as a
fallback). The download must match both the sha256 the index publishes and the pin's
`sdist_sha256`; the unpacked tree's `vllm/_version.py` must name the pinned commit. Only then
is the tree renamed into the cache, keyed by version and the sdist's 9-digit commit (what
the sdist proves: a full commit learnt later for pins/ keeps the entry), and later runs reuse
it offline. `pip download` is not used: building vLLM's metadata fails.

A release that is not in pins/ is discovered (`discover_release`): the index gives the
sdist and its sha256, the sdist's `_version.py` the commit; the pin that results is marked
as coming from the index and recorded in the cache, so later runs resolve it offline.
`index_releases` lists the releases the index has (for `srcreview pins update`).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import cast
from urllib.parse import urljoin, urlsplit

from srcreview.core.errors import SourceUnavailable, UsageError
from srcreview.model.revision import VERSION, Pin, Revision
from srcreview.source.base import DirectoryTree, Progress, VerificationFailed
from srcreview.source.cache import Cache
from srcreview.vllm.anchors import DISTRIBUTION

# The network, archive and HTML modules are imported inside the functions that download:
# a run served from the cache (every warm `check`) never needs them.

PROJECT = DISTRIBUTION
KIND = "registry"
JSON_ACCEPT = "application/vnd.pypi.simple.v1+json, text/html;q=0.1"


class NotOnIndex(SourceUnavailable):
    """The index answered, and does not list the release."""


@dataclass(frozen=True)
class SdistFile:
    filename: str
    url: str
    sha256: str | None
    size: int | None = None


def _anchors():
    """A parser collecting a page's (href, text) links (built on first use: html.parser is lazy)."""
    from html.parser import HTMLParser

    class Anchors(HTMLParser):
        def __init__(self):
            super().__init__()
            self.links: list[tuple[str, str]] = []
            self._href: str | None = None
            self._text: list[str] = []

        def handle_starttag(self, tag, attrs):
            if tag == "a":
                self._href = dict(attrs).get("href")
                self._text = []

        def handle_data(self, data):
            if self._href is not None:
                self._text.append(data)

        def handle_endtag(self, tag):
            if tag == "a" and self._href is not None:
                self.links.append((self._href, "".join(self._text).strip()))
                self._href = None

    return Anchors()


def parse_index(page_url: str, content_type: str, body: bytes) -> list[SdistFile]:
    """The files a project page lists, with absolute URLs (PEP 691 JSON or PEP 503 HTML).

    Anything else (a proxy's error page, a truncated page, another content type) raises
    `BadDocument`: it is not the index's answer, so it is retried and then reported, never
    read as "the index lists nothing".
    """
    from srcreview.source import http as nethttp

    kind = content_type.split(";", 1)[0].strip().lower()
    head = body.lstrip()[:1]
    if "json" in kind or (not kind and head == b"{"):
        return _parse_json(page_url, body, kind or "no content type")
    if "html" in kind or (not kind and head == b"<"):
        return _parse_html(page_url, body, kind or "no content type")
    raise nethttp.BadDocument(f"answered with content type {kind[:60]!r}, not a PEP 691 JSON or "
                              "PEP 503 HTML project page")


def _parse_json(page_url: str, body: bytes, kind: str) -> list[SdistFile]:
    from srcreview.source import http as nethttp

    try:
        data = json.loads(body)
        files = []
        for item in data["files"]:
            url = urljoin(page_url, item["url"])
            hashes = item.get("hashes") or {}
            size = item.get("size")
            files.append(SdistFile(str(item["filename"]), url.split("#", 1)[0], hashes.get("sha256"),
                                   size if isinstance(size, int) and size >= 0 else None))
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        raise nethttp.BadDocument(f"answered with an unreadable {kind} project page "
                                  "(not PEP 691 JSON, or cut short)") from None
    return files


def _parse_html(page_url: str, body: bytes, kind: str) -> list[SdistFile]:
    from srcreview.source import http as nethttp

    parser = _anchors()
    parser.feed(body.decode("utf-8", errors="replace"))
    parser.close()
    if not parser.links and b"<a" not in body.lower():
        # a PEP 503 project page is a list of links; a page without any is someone else's page
        raise nethttp.BadDocument(f"answered with a {kind} page that is not a project page "
                                  "(no file links; expected PEP 691 JSON)")
    files = []
    for href, text in parser.links:
        url = urljoin(page_url, href)
        base, _, fragment = url.partition("#")
        match = re.search(r"sha256=([0-9a-f]{64})", fragment)
        filename = text or urlsplit(base).path.rsplit("/", 1)[-1]
        files.append(SdistFile(filename, base, match.group(1) if match else None))
    return files


def find_sdist(http, index: str, version: str) -> SdistFile:
    """The sdist of `version` on the index; SourceUnavailable if the index lacks it."""
    from srcreview.source import http as nethttp
    from srcreview.source.pipindex import redact_url

    page = f"{index}/{PROJECT}/"
    shown = redact_url(index)
    what = f"the package index {shown}"
    try:
        files = nethttp.get_document(http, page, what, headers={"Accept": JSON_ACCEPT}, parse=parse_index)
    except nethttp.HTTPStatusError as exc:
        if exc.status == 404:
            raise SourceUnavailable(f"package index {shown} has no project {PROJECT} (HTTP 404)") from None
        raise SourceUnavailable(f"package index {shown}: {exc.message.removeprefix(what + ': ')}") from None
    wanted = f"{PROJECT}-{version}.tar.gz"
    for candidate in files:
        if candidate.filename == wanted:
            return candidate
    raise NotOnIndex(f"package index {shown} lists no {wanted}")


def cache_key(revision: Revision) -> str:
    pin = cast(Pin, revision.pin)  # a release
    return f"{pin.version}-{pin.revision[:9]}"


def open_registry(revision: Revision, cache: Cache, progress: Progress | None = None,
                  deep: bool = False) -> DirectoryTree:
    """The verified sdist tree of a pinned release, from the cache or downloaded into it."""
    pin = revision.pin
    if pin is None or revision.version is None:
        raise UsageError(f"--provider registry: {revision.sha} is not a pinned release; "
                         "use --provider github or git for a commit")
    with cache.entry(KIND, cache_key(revision), deep=deep) as entry:
        if entry.ready and pin.sdist_sha256 and cast(dict, entry.meta).get("sdist_sha256") != pin.sdist_sha256:
            entry.invalidate()
        if not entry.ready:
            _build(entry, revision, cache, progress)
        return _tree(entry.tree, revision, cast(dict, entry.meta), cached=entry.was_ready, files=entry.files,
                     cache=cache)


def find_cached(revision: Revision, cache: Cache) -> DirectoryTree | None:
    """The verified sdist tree of a pinned release already in the cache, if any (no lock, no network)."""
    pin = revision.pin
    if pin is None or revision.version is None:
        return None
    data = cache.lookup_manifest(KIND, cache_key(revision))
    if data is None or (pin.sdist_sha256 and data["meta"].get("sdist_sha256") != pin.sdist_sha256):
        return None
    return _tree(cache.tree_path(KIND, cache_key(revision)), revision, data["meta"], cached=True,
                 files=data["files"], cache=cache)


def _tree(path, revision: Revision, meta: dict, cached: bool, files: dict | None = None,
          cache: Cache | None = None) -> DirectoryTree:
    from srcreview.source.sdist import vouched

    commit = meta.get("commit_id")
    if isinstance(commit, str) and commit and revision.matches_commit(commit):
        revision = vouched(revision, commit)
    key = cache_key(revision)
    tree = DirectoryTree(path, revision, provider=KIND, manifest=files,
                         on_damage=(lambda: cache.mark_damaged(KIND, key)) if cache is not None else None)
    tree.cached = cached and not (revision.pin is not None and key in _BUILT)
    tree.origin = meta.get("sdist")
    return tree


def _build(entry, revision: Revision, cache: Cache, progress) -> None:
    from srcreview.source.sdist import verify_commit

    pin = cast(Pin, revision.pin)  # open_registry checked it
    http, index = _index()
    sdist = find_sdist(http, index, pin.version)
    with cache.scratch() as scratch:
        got, unpacked = _fetch(http, index, sdist, pin, scratch, progress)
        commit = verify_commit(DirectoryTree(unpacked, revision), revision, sdist.filename)
        _move_into(entry, unpacked)
    entry.commit({"provider": KIND, "version": pin.version, "sha": revision.sha, "commit_id": commit,
                  "sdist": sdist.filename, "sdist_sha256": got})


def _index():
    from srcreview.source import http as nethttp
    from srcreview.source.pipindex import index_cert, index_url

    return nethttp.session(index_cert()), index_url()


def _fetch(http, index: str, sdist: SdistFile, pin: Pin | None, scratch, progress):
    """Download `sdist` into `scratch`, check its sha256 against the index and `pin`, unpack it;
    (sha256, the unpacked tree)."""
    from srcreview.source import http as nethttp
    from srcreview.source.archive import extract
    from srcreview.source.pipindex import redact_url

    pinned = pin.sdist_sha256 if pin is not None else None
    if not sdist.sha256 and not pinned:
        raise SourceUnavailable(f"{sdist.filename}: neither the index nor pins/ give a sha256 to verify it against")
    archive = scratch / sdist.filename
    got = nethttp.download(http, sdist.url, archive, f"the package index {redact_url(index)} for {sdist.filename}",
                           sdist.filename, progress, expected_size=sdist.size)
    if sdist.sha256 and got != sdist.sha256:
        raise VerificationFailed(f"{sdist.filename}: sha256 {got} does not match the index's {sdist.sha256}")
    if pinned and got != pinned:
        raise VerificationFailed(f"{sdist.filename}: sha256 {got} does not match pins/ ({pinned})")
    unpacked = scratch / "tree"
    unpacked.mkdir()
    extract(archive, unpacked, progress=progress)
    archive.unlink()
    return got, unpacked


def _move_into(entry, unpacked) -> None:
    """Rename an unpacked tree (in the cache's scratch space) to be the entry's staged tree."""
    staging = entry.staging()
    os.rmdir(staging)
    os.replace(unpacked, staging)


# ---------------------------------------------------------------------------------------------
# releases that pins/ does not know

_BUILT: set[str] = set()  # entries this process downloaded while discovering (not "cached" when opened)
RELEASES = "releases"  # cache files: releases/vllm-<version>.json, the pins discovered on the index


def discover_release(version: str, cache: Cache, progress: Progress | None = None) -> Pin:
    """The pin of a release that pins/ does not list, from the index (or from an earlier
    discovery recorded in the cache); SourceUnavailable if the index does not have it."""
    from srcreview.source.sdist import VERSION_FILE, version_info

    known = recorded_release(cache, version)
    if known is not None and cache.lookup(KIND, f"{version}-{known.revision[:9]}") is not None:
        return known
    http, index = _index()
    try:
        sdist = find_sdist(http, index, version)
    except NotOnIndex:
        from srcreview.source.pipindex import redact_url

        raise UsageError(f"--rev: release {version} is neither in pins/ nor on the package index "
                         f"{redact_url(index)}") from None
    if not sdist.sha256:
        raise SourceUnavailable(f"{sdist.filename}: the index gives no sha256, and pins/ does not know "
                                f"vLLM {version}: it cannot be verified")
    with cache.scratch() as scratch:
        got, unpacked = _fetch(http, index, sdist, None, scratch, progress)
        try:
            text = (unpacked / VERSION_FILE).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            raise VerificationFailed(f"{sdist.filename}: has no readable {VERSION_FILE}, so its commit "
                                     "cannot be known") from None
        found, commit = version_info(text)
        if found != version or commit is None:
            raise VerificationFailed(f"{sdist.filename}: {VERSION_FILE} records version {found} and commit "
                                     f"{commit}, not a build of release {version}")
        pin = Pin(version=version, revision=commit, sdist_sha256=got, origin="index")
        revision = Revision(requested=version, sha=commit, version=version, pin=pin)
        with cache.entry(KIND, cache_key(revision)) as entry:
            if not entry.ready:
                _BUILT.add(cache_key(revision))
                _move_into(entry, unpacked)
                entry.commit({"provider": KIND, "version": version, "sha": commit, "commit_id": commit,
                              "sdist": sdist.filename, "sdist_sha256": got, "from_index": True})
    cache.write_bytes_atomic(f"{RELEASES}/{PROJECT}-{version}.json",
                             json.dumps({"version": version, "revision": commit, "sdist_sha256": got},
                                        sort_keys=True).encode())
    return pin


def recorded_release(cache: Cache, version: str) -> Pin | None:
    """The pin an earlier discovery of `version` recorded in the cache (None if none, or damaged)."""
    raw = cache.read_bytes(f"{RELEASES}/{PROJECT}-{version}.json")
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        pin = Pin.model_validate({**data, "origin": "index"})
    except ValueError:  # corrupt: discover again
        return None
    return pin if pin.version == version else None


def project_files(project: str, http=None, index: str | None = None) -> list[SdistFile]:
    """Every file the index pip is configured with lists for `project` (PEP 691 JSON, or the
    PEP 503 page), with its URL, size and sha256."""
    from srcreview.source import http as nethttp
    from srcreview.source.pipindex import redact_url

    if http is None or index is None:
        http, index = _index()
    what = f"the package index {redact_url(index)}"
    try:
        return nethttp.get_document(http, f"{index}/{project}/", what, headers={"Accept": JSON_ACCEPT},
                                    parse=parse_index)
    except nethttp.HTTPStatusError as exc:
        raise SourceUnavailable(f"{what}: {exc.message.removeprefix(what + ': ')}") from None


def index_releases(http=None, index: str | None = None) -> list[SdistFile]:
    """The release sdists (`vllm-X.Y.Z.tar.gz`, no pre-releases) the index lists."""
    files = project_files(PROJECT, http, index)
    found = []
    for item in files:
        match = re.fullmatch(rf"{PROJECT}-(.+)\.tar\.gz", item.filename)
        if match and VERSION.fullmatch(match.group(1)) and "rc" not in match.group(1):
            found.append(item)
    return found
