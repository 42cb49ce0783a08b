"""Which package index to ask for release sdists: the one pip is configured to use.

Order: `PIP_INDEX_URL`; else pip's configuration as `python -m pip config list` reports it
(`download.index-url`, `install.index-url`, `global.index-url`); else pip's own default
index. No index host is written in this package. Credentials embedded in an index URL are
used for requests but never shown: every message goes through `redact_url`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from functools import lru_cache
from urllib.parse import urlsplit, urlunsplit

from srcreview.core.errors import SourceUnavailable

_CONFIG_LINE = re.compile(r"^(?P<key>[^=\s]+)=(?P<value>.*)$")
_INDEX_KEYS = (":env:.index-url", "download.index-url", "install.index-url", "global.index-url")
_CERT_KEYS = (":env:.cert", "download.cert", "install.cert", "global.cert")


def redact_url(url: str) -> str:
    """The URL with any user name, password or query (tokens) replaced by `***`; never raises."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    query = "***" if parts.query else ""  # private indexes also take tokens as ?token=...
    userinfo, at, host = parts.netloc.rpartition("@")  # textual: a malformed port must not raise here
    netloc = f"***@{host}" if at else host
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value


@lru_cache(maxsize=8)
def _pip_config(python: str, env_key: tuple) -> dict[str, str]:
    """pip's merged configuration, one `section.key` -> value (empty if pip is unavailable)."""
    try:
        out = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True,
                             timeout=60, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return {}
    if out.returncode != 0:
        return {}
    config = {}
    for line in out.stdout.splitlines():
        match = _CONFIG_LINE.match(line.strip())
        if match:
            config[match["key"]] = _unquote(match["value"])
    return config


def pip_config() -> dict[str, str]:
    env_key = tuple(sorted((k, v) for k,
                           v in os.environ.items() if k.startswith("PIP_") or k in ("HOME", "XDG_CONFIG_HOME",
                                                                                    "VIRTUAL_ENV")))
    return _pip_config(sys.executable, env_key)


def _pip_default_index() -> str | None:
    try:
        from pip._internal.models.index import PyPI
    except Exception:  # noqa: BLE001 - pip missing or its internals moved
        return None
    return PyPI.simple_url


def index_url() -> str:
    """The simple-index base URL to use (no trailing slash)."""
    url = os.environ.get("PIP_INDEX_URL", "").strip()
    if not url:
        config = pip_config()
        url = next((config[k] for k in _INDEX_KEYS if config.get(k)), "")
    if not url:
        url = _pip_default_index() or ""
    if not url:
        raise SourceUnavailable("no package index is configured and pip is not available to name its default; "
                                "set PIP_INDEX_URL")
    url = url.split()[0]
    try:
        parts = urlsplit(url)
        scheme, host, _port = parts.scheme, parts.hostname, parts.port  # .port raises on a bad port
    except ValueError:
        raise SourceUnavailable(f"package index {redact_url(url)}: not a valid URL (check its host and port)") from None
    if scheme not in ("http", "https"):
        raise SourceUnavailable(f"package index {redact_url(url)}: only http(s) indexes are supported")
    if not host:
        raise SourceUnavailable(f"package index {redact_url(url)}: the URL names no host")
    return url.rstrip("/")


def index_cert() -> str | bool:
    """The CA bundle pip is configured with (`PIP_CERT` / `cert`), else requests' default."""
    cert = os.environ.get("PIP_CERT", "").strip()
    if not cert:
        config = pip_config()
        cert = next((config[k] for k in _CERT_KEYS if config.get(k)), "")
    return cert if cert and os.path.exists(cert) else True
