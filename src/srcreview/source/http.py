"""HTTP for the source providers: bounded retries, bounded time and size, one-line errors.

Connection errors, timeouts, too-slow transfers, cut-short or unreadable bodies and 5xx/429
answers are retried (ATTEMPTS in all, with backoff); any other 4xx answer is final (the
server answered; asking again would get the same answer). Every transfer is bounded three
ways: a timeout for each connect and each read (`SRCREVIEW_HTTP_TIMEOUT`, seconds), a deadline
for the whole request, status line, headers and body (`SRCREVIEW_HTTP_DEADLINE`, seconds: a
server that trickles headers or bytes cannot hold a run forever) and a size cap. Every failure
becomes one SourceUnavailable line that says what could not be reached and why ("connection
refused", "timed out", "HTTP 404"), with credentials redacted and without the exception chain.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from srcreview.core.errors import SourceUnavailable, UsageError
from srcreview.source.base import Progress, VerificationFailed

ATTEMPTS = 3
BACKOFF_SECONDS = 0.5
CONNECT_TIMEOUT = 15.0
READ_TIMEOUT = 60.0
DEADLINE_SECONDS = 1800.0  # one attempt at one body; an sdist of vLLM is tens of MB
MAX_DOCUMENT_BYTES = 64 << 20  # an index page
MAX_DOWNLOAD_BYTES = 2 << 30  # an archive, unless the index states its size
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Limits:
    """The bounds of one transfer attempt (from the environment, else the defaults above)."""

    connect: float
    read: float
    deadline: float


def _seconds(name: str, default: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise UsageError(f"{name}={raw[:40]!r}: expected a positive number of seconds")
    return value


def limits() -> Limits:
    """`SRCREVIEW_HTTP_TIMEOUT` bounds each connect and read; `SRCREVIEW_HTTP_DEADLINE` one whole body."""
    timeout = _seconds("SRCREVIEW_HTTP_TIMEOUT", 0.0)
    connect, read = (timeout, timeout) if timeout else (CONNECT_TIMEOUT, READ_TIMEOUT)
    return Limits(connect, read, _seconds("SRCREVIEW_HTTP_DEADLINE", DEADLINE_SECONDS))


class HTTPStatusError(SourceUnavailable):
    """The server answered with an error status (kept apart so callers can word a 404)."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


def session(verify: str | bool = True):
    import requests

    from srcreview import __version__

    s = requests.Session()
    s.headers["User-Agent"] = f"srcreview/{__version__}"
    s.verify = verify
    adapter = _deadline_adapter()
    s.mount("http://", adapter)
    s.mount("https://", adapter)
    return s


# --- the deadline of a whole request ----------------------------------------------------------
# A per-read timeout cannot stop a server that sends one header line (or one body byte) just
# within it, forever. Each attempt therefore arms a Deadline: the connections the attempt takes
# from urllib3's pools are registered with it, and when it expires it shuts their sockets down,
# so whatever read is blocked (status line, headers, body) returns at once.

_current = threading.local()


class Deadline:
    """Cuts the connections of one attempt when `seconds` have passed (a timer thread)."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.expired = False
        self._connections: list = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        _current.deadline = self
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()
        _current.deadline = None

    def watch(self, connection) -> None:
        with self._lock:
            self._connections.append(connection)
            expired = self.expired
        if expired:
            _cut(connection)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            connections = list(self._connections)
        for connection in connections:
            _cut(connection)


def _cut(connection) -> None:
    sock = getattr(connection, "sock", None)
    if sock is not None:
        with contextlib.suppress(OSError):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)  # the plain socket's: also under TLS


def _deadline_adapter():
    """A requests adapter whose pools register every connection they hand out with the
    calling thread's Deadline."""
    from requests.adapters import HTTPAdapter
    from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

    class Watched:
        def _get_conn(self, timeout=None):
            connection = super()._get_conn(timeout)  # type: ignore[misc]  # a mixin: the pool class follows it
            deadline = getattr(_current, "deadline", None)
            if deadline is not None:
                deadline.watch(connection)
            return connection

    pools = {"http": type("WatchedHTTPConnectionPool", (Watched, HTTPConnectionPool), {}),
             "https": type("WatchedHTTPSConnectionPool", (Watched, HTTPSConnectionPool), {})}

    class DeadlineAdapter(HTTPAdapter):
        def init_poolmanager(self, *args, **kwargs):
            super().init_poolmanager(*args, **kwargs)
            self.poolmanager.pool_classes_by_scheme = pools

        def proxy_manager_for(self, proxy, **kwargs):
            manager = super().proxy_manager_for(proxy, **kwargs)
            if not proxy.lower().startswith("socks"):  # SOCKS pools are their own; bounded per read
                manager.pool_classes_by_scheme = pools
            return manager

    return DeadlineAdapter()


def describe_failure(exc: BaseException) -> str:
    """A short reason for a network failure, found anywhere in the exception chain (never a URL)."""
    if isinstance(exc, _Retryable):
        return exc.reason
    seen = set()
    stack: list[BaseException | None] = [exc]
    texts = []
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError) or getattr(current, "errno", None) == errno.ECONNREFUSED:
            return "connection refused"
        if isinstance(current, socket.gaierror):
            return "host name could not be resolved"
        if isinstance(current, (socket.timeout, TimeoutError)):
            return "timed out"
        if isinstance(current, ConnectionResetError):
            return "connection reset"
        texts.append(f"{type(current).__name__} {current}")
        stack.extend([current.__cause__, current.__context__])
        stack.extend(a for a in getattr(current, "args", ()) if isinstance(a, BaseException))
        reason = getattr(current, "reason", None)
        if isinstance(reason, BaseException):
            stack.append(reason)
    text = " ".join(texts).lower()
    for needle, reason in (("refused", "connection refused"),
                           ("name or service not known", "host name could not be resolved"),
                           ("nodename nor servname", "host name could not be resolved"),
                           ("temporary failure in name resolution", "host name could not be resolved"),
                           ("timed out", "timed out"), ("timeout", "timed out"),
                           ("certificate", "TLS certificate verification failed"), ("ssl", "TLS error"),
                           ("incompleteread", "connection closed before the whole body arrived"),
                           ("connection broken", "connection closed before the whole body arrived"),
                           ("reset", "connection reset"),
                           ("invalidurl", "invalid URL"), ("invalidschema", "unsupported URL scheme"),
                           ("missingschema", "invalid URL"), ("locationparseerror", "invalid URL")):
        if needle in text:
            return reason
    return "network error"


class _Retryable(Exception):
    """A fault of this attempt (short or unreadable body, too slow) that another attempt may not meet."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def _network_errors() -> tuple[type[BaseException], ...]:
    import requests
    import urllib3

    return (requests.RequestException, urllib3.exceptions.HTTPError, _Retryable, HTTPStatusError)


def _retryable(exc: BaseException) -> bool:
    import requests
    import urllib3

    if isinstance(exc, HTTPStatusError):
        return exc.status >= 500 or exc.status == 429
    if isinstance(exc, (requests.exceptions.InvalidURL, requests.exceptions.InvalidSchema,
                        requests.exceptions.MissingSchema, urllib3.exceptions.LocationValueError)):
        return False
    return isinstance(exc, (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError,
                            requests.exceptions.ContentDecodingError, urllib3.exceptions.HTTPError, _Retryable))


def _with_retries(what: str, action, attempts: int | None = None):
    attempts = attempts or ATTEMPTS
    errors = _network_errors()
    for attempt in range(attempts):
        try:
            return action()
        except errors as exc:
            retry = _retryable(exc)
            if attempt + 1 < attempts and retry:
                time.sleep(BACKOFF_SECONDS * (2 ** attempt))
                continue
            tried = f" ({attempt + 1} attempts)" if attempt else ""
            if isinstance(exc, HTTPStatusError):
                raise HTTPStatusError(exc.message + tried, exc.status) from None
            if isinstance(exc, _Retryable):
                raise SourceUnavailable(f"{what}: {exc.reason}{tried}") from None
            raise SourceUnavailable(f"cannot reach {what}: {describe_failure(exc)}{tried}") from None
    raise AssertionError("unreachable")


def _check_status(response, what: str) -> None:
    if response.status_code >= 400:
        raise HTTPStatusError(f"{what}: HTTP {response.status_code}", response.status_code)


def _stream(http, url: str, what: str, sink: Callable[[bytes], None], *, headers: dict | None, max_bytes: int,
            expected_size: int | None = None, progress: Progress | None = None, label: str = "") -> tuple[str, str]:
    """One attempt: GET `url` and feed the body to `sink`, within the time and size bounds.

    Returns (final URL, content type). The Deadline cuts the connection wherever the attempt
    waits (status line, headers, body); the body loop also checks it between reads (`read1`,
    so a trickling server meets it between any two reads, not only after a full chunk).
    """
    bounds = limits()
    too_slow = f"too slow: no complete answer within {bounds.deadline:g} s (SRCREVIEW_HTTP_DEADLINE)"
    with Deadline(bounds.deadline) as cut:
        try:
            return _attempt(http, url, what, sink, headers=headers, max_bytes=max_bytes, bounds=bounds,
                            expected_size=expected_size, progress=progress, label=label)
        except _network_errors() as exc:
            if cut.expired and not isinstance(exc, HTTPStatusError):  # the cut broke the connection
                raise _Retryable(too_slow) from None
            raise


def _attempt(http, url: str, what: str, sink: Callable[[bytes], None], *, headers: dict | None, max_bytes: int,
             bounds: Limits, expected_size: int | None, progress: Progress | None, label: str) -> tuple[str, str]:
    deadline = time.monotonic() + bounds.deadline
    with http.get(url, headers=headers or {}, stream=True, timeout=(bounds.connect, bounds.read),
                  allow_redirects=True) as response:
        _check_status(response, what)
        declared = response.headers.get("Content-Length")
        encoded = response.headers.get("Content-Encoding", "identity") not in ("", "identity")
        sane = declared and declared.isascii() and declared.isdigit() and len(declared) <= 18
        total = int(declared) if sane and not encoded else None
        if expected_size is not None:
            total = expected_size
        raw = response.raw
        read = getattr(raw, "read1", None) or raw.read
        done = 0
        while True:
            if time.monotonic() > deadline:
                raise _Retryable(f"too slow: no complete answer within {bounds.deadline:g} s "
                                 "(SRCREVIEW_HTTP_DEADLINE)")
            chunk = read(_CHUNK, decode_content=True)
            if not chunk:
                break
            done += len(chunk)
            if expected_size is not None and done > expected_size:
                raise VerificationFailed(f"{what}: {label or 'the body'} is larger than the {expected_size} bytes "
                                         "the index states")
            if done > max_bytes:
                raise SourceUnavailable(f"{what}: {label or 'the body'} is larger than {max_bytes} bytes; refused")
            sink(chunk)
            if progress is not None:
                progress(label, done, total)
        if total is not None and done != total:
            raise _Retryable(f"connection closed before the whole body arrived (got {done} of {total} bytes)")
        return response.url, response.headers.get("Content-Type", "")


def get_document(http, url: str, what: str, headers: dict | None = None,
                 parse: Callable[[str, str, bytes], object] | None = None):
    """GET a small document; returns (final URL, content type, body), or `parse` of them.

    `parse` runs inside the retried attempt: it raises `BadDocument` when the body is not what
    was asked for (an error page of a proxy, a truncated page), which is retried like a fault.
    """

    def action():
        parts: list[bytes] = []
        final_url, content_type = _stream(http, url, what, parts.append, headers=headers,
                                          max_bytes=MAX_DOCUMENT_BYTES)
        body = b"".join(parts)
        return parse(final_url, content_type, body) if parse else (final_url, content_type, body)

    return _with_retries(what, action)


class BadDocument(_Retryable):
    """The server answered 200 with something that is not the document asked for."""


def download(http, url: str, dest: Path, what: str, label: str, progress: Progress | None = None,
             expected_size: int | None = None) -> str:
    """Stream `url` into `dest` (overwritten per attempt); returns the sha256 of what was written.

    `expected_size` (when the index states it) both detects a short body and caps a long one.
    The caller keeps `dest` out of any place the cache trusts until the digest is checked.
    """

    def action():
        digest = hashlib.sha256()
        try:
            out = open(dest, "wb")
        except OSError as exc:
            raise SourceUnavailable(f"cannot write {label}: {exc.strerror or exc}") from None
        with out:
            def sink(chunk: bytes) -> None:
                try:
                    out.write(chunk)
                except OSError as exc:
                    raise SourceUnavailable(f"cannot write {label}: {exc.strerror or exc}") from None
                digest.update(chunk)

            _stream(http, url, what, sink, headers=None, max_bytes=MAX_DOWNLOAD_BYTES,
                    expected_size=expected_size, progress=progress, label=label)
        return digest.hexdigest()

    return _with_retries(what, action)

