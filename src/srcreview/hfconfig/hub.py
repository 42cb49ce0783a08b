"""A model config read through huggingface_hub, with the Hub's own conventions, config files only.

`hf_hub_download` decides everything a Hub user has configured: the cache (`HF_HOME`,
`HF_HUB_CACHE`), the endpoint (`HF_ENDPOINT`), offline mode (`HF_HUB_OFFLINE`), the token
(`HF_TOKEN`, the token file of `hf auth login`), timeouts and retries. huggingface_hub reads
those variables once, when it is first imported, and is imported only here, and only when the
Hub itself is asked: what its cache answers (offline, an unresolvable endpoint, a file cached
at a pinned commit) is read directly, the same way (srcreview.hfconfig.hubcache).
srcreview asks only for the files of `files.MODEL_FILES`, never weights. config.json is
fetched at the revision asked for; the other files at the commit it resolved to, so all come
from one commit, and what the cache knows about that (immutable) commit is not asked again.

Failures become one reason line built here from the error's kind and HTTP status, never from
the library's message text: a message could carry a URL, and the token must never be shown.
"""

from __future__ import annotations

import hashlib
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

from srcreview.hfconfig.facts import ConfigFile, ModelFacts
from srcreview.hfconfig.files import (
    CONFIG_FILE,
    MAX_FILE_BYTES,
    OPTIONAL_FILES,
    ConfigUnavailable,
    parse_document,
)
from srcreview.hfconfig.hubcache import NO_EXIST, HubSettings, lookup, snapshot_file
from srcreview.hfconfig.readfile import read_regular_file
from srcreview.hfconfig.ref import ModelRef

_COMMIT = re.compile(r"[0-9a-f]{40}")


class _NotCached(Exception):
    """The cache cannot say whether the file exists (and the Hub is not to be asked)."""


class _CachedAbsent(Exception):
    """The cache remembers the Hub saying the file does not exist at this commit."""


def read_hub_config(ref: ModelRef, *, offline: bool | None = None) -> ModelFacts:
    """The config files of Hub model `ref`; `offline=True` reads the huggingface_hub cache only
    (None: as huggingface_hub decides, from HF_HUB_OFFLINE). ConfigUnavailable with the reason
    when config.json cannot be had or a file is not a JSON object."""
    from importlib.util import find_spec

    if find_spec("huggingface_hub") is None:
        raise ConfigUnavailable("huggingface_hub is not installed")
    hub = _Hub(HubSettings.from_environment())
    cache_only = bool(offline) or hub.settings.offline
    unreachable = not cache_only and not _resolves(hub.settings.endpoint)
    cache_only = cache_only or unreachable
    try:
        path = hub.cached(ref, CONFIG_FILE, ref.revision) if cache_only else hub.fetch(ref, CONFIG_FILE, ref.revision)
    except Exception as exc:  # the library's network, HTTP and cache errors: the review goes on without it
        if unreachable and isinstance(exc, _NotCached):  # (cache only: the library was not asked)
            raise ConfigUnavailable(f"the Hub endpoint's host does not resolve and {CONFIG_FILE} is not in "
                                    "the huggingface_hub cache") from None
        raise ConfigUnavailable(hub.reason(exc, CONFIG_FILE, ref, cache_only)) from None
    commit = _snapshot_commit(path)
    raw = _read(path, CONFIG_FILE)
    documents = {CONFIG_FILE: parse_document(CONFIG_FILE, raw)}
    files = [_described(CONFIG_FILE, raw, commit)]
    unresolved = []
    pinned = commit or ref.revision
    for name in OPTIONAL_FILES:
        try:
            path = hub.optional(ref, name, pinned, ask_hub=not cache_only and commit is not None)
        except _CachedAbsent:
            continue
        except _NotCached:
            unresolved.append(name)
            continue
        except Exception as exc:  # absent, or unknown: not a reason to stop; after a network failure, ask no more
            if hub.said_absent(exc):
                continue
            unresolved.append(name)
            cache_only = cache_only or hub.is_error(exc, "LocalEntryNotFoundError")
            continue
        raw = _read(path, name)
        documents[name] = parse_document(name, raw)
        files.append(_described(name, raw, _snapshot_commit(path)))
    return ModelFacts(source="hub", ref=ref.text, kind="hub", revision=ref.revision, commit=commit,
                      files=tuple(files), documents=documents, unresolved=tuple(unresolved))


class _Hub:
    """The Hub as huggingface_hub sees it: its cache read directly (srcreview.hfconfig.hubcache),
    the library imported only to ask the Hub itself (which also configures its logger)."""

    def __init__(self, settings: HubSettings):
        self.settings = settings
        self._library: tuple[Any, Any] | None = None  # (huggingface_hub, huggingface_hub.errors)

    def library(self):
        if self._library is None:
            import huggingface_hub
            from huggingface_hub import errors

            _bound_downloads(huggingface_hub.get_session())
            self._library = (huggingface_hub, errors)
        return self._library

    def is_error(self, exc: BaseException, name: str) -> bool:
        """Whether `exc` is huggingface_hub's error `name` (never, when it was not imported: then
        nothing raised it)."""
        return self._library is not None and isinstance(exc, getattr(self._library[1], name))

    def download(self, ref: ModelRef, name: str, revision: str | None) -> str:
        from srcreview import __version__

        hf_hub_download = self.library()[0].hf_hub_download
        with _quiet():
            return hf_hub_download(ref.repo_id, name, revision=revision, library_name="srcreview",
                                   library_version=__version__, tqdm_class=_NoProgress)

    def fetch(self, ref: ModelRef, name: str, revision: str | None) -> str:
        """`name` at `revision` as hf_hub_download gives it: a file the cache holds at a pinned
        commit without a request (the library's own shortcut), anything else from the Hub."""
        if revision is not None and _COMMIT.fullmatch(revision):
            found = snapshot_file(self.settings.cache_dir, cast(str, ref.repo_id), name, revision)  # a Hub ref
            if found is not None:
                return found
        return self.download(ref, name, revision)

    def cached(self, ref: ModelRef, name: str, revision: str | None) -> str:
        """The cached file, found the way huggingface_hub resolves its cache (refs/<branch> ->
        snapshot), without any request: offline means no network at all, not even the library's own."""
        found = lookup(self.settings.cache_dir, cast(str, ref.repo_id), name, revision)  # a Hub ref
        if found is NO_EXIST:
            raise _CachedAbsent(name)
        if not isinstance(found, str):
            raise _NotCached(name)
        return found

    def optional(self, ref: ModelRef, name: str, commit: str | None, *, ask_hub: bool) -> str:
        """An optional file at `commit`: the cache answers for a commit it knows, else the Hub."""
        try:
            return self.cached(ref, name, commit)
        except _NotCached:
            if not ask_hub:
                raise
        return self.download(ref, name, commit)

    def said_absent(self, exc: Exception) -> bool:
        return self.is_error(exc, "EntryNotFoundError") and not self.is_error(exc, "LocalEntryNotFoundError")

    def reason(self, exc: Exception, name: str, ref: ModelRef, cache_only: bool) -> str:
        """One line for why `name` could not be had, from the error's class and HTTP status only."""
        error = self.is_error
        at = f"revision {ref.revision}" if ref.revision else "the default branch"
        cause = exc.__cause__ if error(exc, "LocalEntryNotFoundError") else None
        status = _status(exc) or _status(cause)
        if isinstance(exc, DownloadRefused):
            return exc.reason
        if isinstance(exc, _CachedAbsent):
            return f"the repository has no {name} at {at} (the huggingface_hub cache says so; offline)"
        if isinstance(exc, _NotCached) or error(exc, "LocalEntryNotFoundError") or error(exc, "OfflineModeIsEnabled"):
            if cache_only:
                return f"{name} is not in the huggingface_hub cache and the Hub is offline (HF_HUB_OFFLINE)"
            if cause is not None and error(cause, "FileMetadataError"):
                return (f"the Hub endpoint's answer for {name} lacks the Hub's headers (check HF_ENDPOINT), "
                        "and it is not in the huggingface_hub cache")
            why = f"the Hub answered HTTP {status}" if status else "the Hub could not be reached"
            return f"{why} and {name} is not in the huggingface_hub cache"
        if error(exc, "GatedRepoError"):
            return f"the repository is gated and the token in use has no access to it (HTTP {status})"
        if error(exc, "RepositoryNotFoundError"):
            return f"the repository does not exist, or is private and the token in use cannot read it (HTTP {status})"
        if error(exc, "RevisionNotFoundError"):
            return f"{at} does not exist in the repository"
        if error(exc, "EntryNotFoundError"):
            return f"the repository has no {name} at {at}"
        if status:
            return f"the Hub answered HTTP {status} for {name}"
        return f"huggingface_hub could not fetch {name} ({type(exc).__name__})"


_RESOLVED: dict[str, bool] = {}
_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def _resolves(endpoint: str) -> bool:
    """Whether the endpoint's host name resolves (asked once per process). huggingface_hub
    retries a failed connection with back-off for about 20 s; a host that does not resolve,
    with no proxy to ask instead, cannot answer, so the cache is all there is."""
    import os
    import socket
    from urllib.parse import urlsplit

    if endpoint not in _RESOLVED:
        parts = urlsplit(endpoint)
        if not parts.hostname or any(os.environ.get(name) for name in _PROXY_VARIABLES):
            _RESOLVED[endpoint] = True
        else:
            try:
                socket.getaddrinfo(parts.hostname, parts.port or 443, type=socket.SOCK_STREAM)
                _RESOLVED[endpoint] = True
            except (OSError, UnicodeError):
                _RESOLVED[endpoint] = False
    return _RESOLVED[endpoint]


def _read(path: str, name: str) -> bytes:
    raw = read_regular_file(Path(path), name)
    if raw is None:
        raise ConfigUnavailable(f"{name} vanished from the huggingface_hub cache")
    return raw


def _described(name: str, raw: bytes, commit: str | None) -> ConfigFile:
    return ConfigFile(path=name, sha256=hashlib.sha256(raw).hexdigest(), size=len(raw), commit=commit)


def _snapshot_commit(path: str) -> str | None:
    """The commit of a cached file: huggingface_hub keeps it at `snapshots/<commit>/<file>`."""
    parent = Path(path).parent
    return parent.name if parent.parent.name == "snapshots" and _COMMIT.fullmatch(parent.name) else None


def _status(exc: BaseException | None) -> int | None:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


@contextmanager
def _quiet():
    """huggingface_hub logs retries and warnings to stderr on its own handler; below the CLI
    nothing prints (its logger is configured when it is imported, so this comes after)."""
    import logging
    import warnings

    logger = logging.getLogger("huggingface_hub")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


class _NoProgress:
    """A progress bar that shows nothing (huggingface_hub would draw one on stderr). It also
    counts what the library writes, decoded: a gzip body small on the wire (what
    _bound_downloads counts) stops here once it decodes past MAX_FILE_BYTES."""

    def __init__(self, *args, initial=0, **kwargs):
        self.written = initial or 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        self.written += n or 0
        if self.written > MAX_FILE_BYTES:
            raise DownloadRefused(f"a file from the Hub decodes to more than {MAX_FILE_BYTES} bytes; stopped there")

    def close(self):
        pass


class DownloadRefused(Exception):
    """A file the Hub sends past what a config file can be: stopped while it streams."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _download_seconds() -> float:
    """How long one file may take: three times huggingface_hub's per-read timeout
    (HF_HUB_DOWNLOAD_TIMEOUT, 10 s by default), at least 10 s. The per-read timeout alone lets
    a server that trickles a byte a second hold a run forever."""
    from huggingface_hub import constants

    try:
        return max(10.0, 3 * float(constants.HF_HUB_DOWNLOAD_TIMEOUT))
    except (TypeError, ValueError):
        return 30.0


def _bound_downloads(session) -> None:
    """Make every body huggingface_hub's HTTP client reads stop at MAX_FILE_BYTES (announced
    or received) and after _download_seconds(), while it streams: srcreview fetches config
    files only, so an endless body, a 64 MiB config.json or a server that trickles a byte a
    second ends as one reason (DownloadRefused raised out of the library's download loop),
    never a download to its end or a run held forever. A response hook on the library's
    own client, so its proxies, headers and retries stay as configured."""
    import time

    import httpx2

    limit, seconds = MAX_FILE_BYTES, _download_seconds()

    class _Bounded(httpx2.SyncByteStream):
        def __init__(self, inner, name: str):
            self.inner, self.name, self.deadline = inner, name, time.monotonic() + seconds

        def __iter__(self):
            received = 0
            for chunk in self.inner:
                received += len(chunk)
                if received > limit:
                    raise DownloadRefused(f"the Hub sent more than {limit} bytes of {self.name}; stopped there")
                if time.monotonic() > self.deadline:
                    raise DownloadRefused(f"the Hub took over {seconds:.0f} s to send {self.name}; stopped "
                                          "(HF_HUB_DOWNLOAD_TIMEOUT sets the pace)")
                yield chunk

        def close(self):
            self.inner.close()

    def bound(response) -> None:
        if response.request.method != "GET":
            return
        name = response.request.url.path.rpartition("/")[2] or "a file"
        announced = response.headers.get("Content-Length", "")
        if announced.isdigit() and len(announced) < 20 and int(announced) > limit:
            response.close()
            raise DownloadRefused(f"the Hub announced {name} as {announced} bytes, over the {limit}-byte limit; "
                                  "not downloaded")
        response.stream = _Bounded(response.stream, name)

    hooks = session.event_hooks
    if not any(getattr(h, "__name__", "") == "bound" and getattr(h, "__module__", "") == __name__
               for h in hooks.get("response", ())):
        hooks.setdefault("response", []).append(bound)
        session.event_hooks = hooks
