"""A model config read through huggingface_hub, with the Hub's own conventions, config files only.

`hf_hub_download` decides everything a Hub user has configured: the cache (`HF_HOME`,
`HF_HUB_CACHE`), the endpoint (`HF_ENDPOINT`), offline mode (`HF_HUB_OFFLINE`), the token
(`HF_TOKEN`, the token file of `hf auth login`), timeouts and retries. huggingface_hub reads
those variables once, when it is first imported, and is imported only here, on first use.
srcreview asks only for the files of `files.MODEL_FILES`, never weights. config.json is
fetched at the revision asked for; the other files at the commit it resolved to, so all come
from one commit, and what the cache knows about that (immutable) commit is not asked again.

Failures become one reason line built here from the error's kind and HTTP status, never from
the library's message text: a message could carry a URL, and the token must never be shown.
"""

from __future__ import annotations

import hashlib
import logging
import re
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from srcreview.hfconfig.facts import ConfigFile, ModelFacts
from srcreview.hfconfig.files import CONFIG_FILE, OPTIONAL_FILES, ConfigUnavailable, parse_document
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
    try:
        hub = _Hub.load()
    except ImportError:
        raise ConfigUnavailable("huggingface_hub is not installed") from None
    cache_only = bool(offline) or hub.offline()
    unreachable = not cache_only and not _resolves(str(getattr(hub.constants, "ENDPOINT", "")))
    cache_only = cache_only or unreachable
    with _quiet():
        try:
            path = hub.cached(ref, CONFIG_FILE, ref.revision) if cache_only else hub.download(ref, CONFIG_FILE,
                                                                                             ref.revision)
        except Exception as exc:  # the library's network, HTTP and cache errors: the review goes on without it
            if unreachable and isinstance(exc, (_NotCached, hub.errors.LocalEntryNotFoundError)):
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
                cache_only = cache_only or hub.unreachable(exc)
                continue
            raw = _read(path, name)
            documents[name] = parse_document(name, raw)
            files.append(_described(name, raw, _snapshot_commit(path)))
    return ModelFacts(source="hub", ref=ref.text, kind="hub", revision=ref.revision, commit=commit,
                      files=tuple(files), documents=documents, unresolved=tuple(unresolved))


@dataclass(frozen=True)
class _Hub:
    """The parts of huggingface_hub used here, imported together (which also configures its logger)."""

    hf_hub_download: Callable[..., str]
    try_to_load_from_cache: Callable[..., Any]
    cached_no_exist: object
    errors: Any
    constants: Any

    @classmethod
    def load(cls) -> "_Hub":
        from huggingface_hub import _CACHED_NO_EXIST, constants, errors, hf_hub_download, try_to_load_from_cache

        return cls(hf_hub_download, try_to_load_from_cache, _CACHED_NO_EXIST, errors, constants)

    def offline(self) -> bool:
        is_offline = getattr(self.constants, "is_offline_mode", None)
        return bool(is_offline()) if callable(is_offline) else bool(getattr(self.constants, "HF_HUB_OFFLINE", False))

    def download(self, ref: ModelRef, name: str, revision: str | None) -> str:
        from srcreview import __version__

        return self.hf_hub_download(ref.repo_id, name, revision=revision, library_name="srcreview",
                                    library_version=__version__, tqdm_class=_NoProgress)

    def cached(self, ref: ModelRef, name: str, revision: str | None) -> str:
        """The cached file, found the way huggingface_hub resolves its cache (refs/<branch> ->
        snapshot), without any request: offline means no network at all, not even the library's own."""
        found = self.try_to_load_from_cache(ref.repo_id, name, revision=revision)
        if found is self.cached_no_exist:
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
        errors = self.errors
        return isinstance(exc, errors.EntryNotFoundError) and not isinstance(exc, errors.LocalEntryNotFoundError)

    def unreachable(self, exc: Exception) -> bool:
        return isinstance(exc, self.errors.LocalEntryNotFoundError)

    def reason(self, exc: Exception, name: str, ref: ModelRef, cache_only: bool) -> str:
        """One line for why `name` could not be had, from the error's class and HTTP status only."""
        errors = self.errors
        at = f"revision {ref.revision}" if ref.revision else "the default branch"
        cause = exc.__cause__ if isinstance(exc, errors.LocalEntryNotFoundError) else None
        status = _status(exc) or _status(cause)
        if isinstance(exc, _CachedAbsent):
            return f"the repository has no {name} at {at} (the huggingface_hub cache says so; offline)"
        if isinstance(exc, (_NotCached, errors.LocalEntryNotFoundError, errors.OfflineModeIsEnabled)):
            if cache_only:
                return f"{name} is not in the huggingface_hub cache and the Hub is offline (HF_HUB_OFFLINE)"
            if isinstance(cause, errors.FileMetadataError):
                return (f"the Hub endpoint's answer for {name} lacks the Hub's headers (check HF_ENDPOINT), "
                        "and it is not in the huggingface_hub cache")
            why = f"the Hub answered HTTP {status}" if status else "the Hub could not be reached"
            return f"{why} and {name} is not in the huggingface_hub cache"
        if isinstance(exc, errors.GatedRepoError):
            return f"the repository is gated and the token in use has no access to it (HTTP {status})"
        if isinstance(exc, errors.RepositoryNotFoundError):
            return f"the repository does not exist, or is private and the token in use cannot read it (HTTP {status})"
        if isinstance(exc, errors.RevisionNotFoundError):
            return f"{at} does not exist in the repository"
        if isinstance(exc, errors.EntryNotFoundError):
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
    """A progress bar that shows nothing (huggingface_hub would draw one on stderr)."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, n=1):
        pass

    def close(self):
        pass
