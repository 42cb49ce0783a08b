"""HTTP for the source providers: bounded retries, streamed downloads, one-line errors.

Connection errors, timeouts, cut-short bodies and 5xx answers are retried a few times with
backoff; a 4xx answer is final. Every failure becomes one SourceUnavailable line that says
what could not be reached and why ("connection refused", "timed out", "HTTP 404"), with
credentials redacted and without the exception chain.
"""

from __future__ import annotations

import errno
import hashlib
import socket
import time
from pathlib import Path

from srcreview.errors import SourceUnavailable
from srcreview.source.base import Progress
from srcreview.source.pipindex import redact_url


ATTEMPTS = 3
BACKOFF_SECONDS = 0.5
TIMEOUT = (15, 60)
_CHUNK = 1 << 16


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
    return s


def describe_failure(exc: BaseException) -> str:
    """A short reason for a network failure, found anywhere in the exception chain."""
    seen = set()
    stack = [exc]
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
    for needle, reason in (("refused", "connection refused"), ("name or service not known", "host name could not be resolved"),
                           ("nodename nor servname", "host name could not be resolved"),
                           ("temporary failure in name resolution", "host name could not be resolved"),
                           ("timed out", "timed out"), ("timeout", "timed out"),
                           ("certificate", "TLS certificate verification failed"), ("ssl", "TLS error"),
                           ("incompleteread", "connection closed before the whole body arrived"),
                           ("connection broken", "connection closed before the whole body arrived"),
                           ("reset", "connection reset")):
        if needle in text:
            return reason
    return "network error"


def _retryable(exc: BaseException) -> bool:
    import requests

    if isinstance(exc, HTTPStatusError):
        return exc.status >= 500 or exc.status == 429
    return isinstance(exc, (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError,
                            _ShortBody))


class _ShortBody(Exception):
    pass


def _with_retries(what: str, action, attempts: int = ATTEMPTS):
    import requests

    for attempt in range(attempts):
        try:
            return action()
        except (requests.RequestException, _ShortBody, HTTPStatusError) as exc:
            if attempt + 1 < attempts and _retryable(exc):
                time.sleep(BACKOFF_SECONDS * (2 ** attempt))
                continue
            if isinstance(exc, HTTPStatusError):
                raise
            raise SourceUnavailable(f"cannot reach {what}: {describe_failure(exc)}") from None
    raise AssertionError("unreachable")


def _check_status(response, what: str) -> None:
    if response.status_code >= 400:
        raise HTTPStatusError(f"{what}: HTTP {response.status_code}", response.status_code)


def get_document(http, url: str, what: str, headers: dict | None = None) -> tuple[str, str, bytes]:
    """GET a small document; returns (final URL, content type, body)."""

    def action():
        response = http.get(url, headers=headers or {}, timeout=TIMEOUT, allow_redirects=True)
        _check_status(response, what)
        return response.url, response.headers.get("Content-Type", ""), response.content

    return _with_retries(what, action)


def download(http, url: str, dest: Path, what: str, label: str, progress: Progress | None = None) -> str:
    """Stream `url` into `dest` (overwritten per attempt); returns the sha256 of what was written."""

    def action():
        digest = hashlib.sha256()
        with http.get(url, stream=True, timeout=TIMEOUT, allow_redirects=True) as response:
            _check_status(response, what)
            total = response.headers.get("Content-Length")
            encoded = response.headers.get("Content-Encoding", "identity") not in ("", "identity")
            total = int(total) if total and total.isdigit() and not encoded else None
            done = 0
            with open(dest, "wb") as out:
                for chunk in response.iter_content(_CHUNK):
                    out.write(chunk)
                    digest.update(chunk)
                    done += len(chunk)
                    if progress is not None:
                        progress(label, done, total)
            if total is not None and done != total:
                raise _ShortBody(f"IncompleteRead: got {done} of {total} bytes")
        return digest.hexdigest()

    return _with_retries(what, action)


def safe(url: str) -> str:
    return redact_url(url)
