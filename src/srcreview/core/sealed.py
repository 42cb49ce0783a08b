"""Sealed cache entries: a payload behind the sha256 of its content, checked when read.

Every entry srcreview keeps in its cache (facts, stored reviews) is written this way, so an
entry damaged or edited in place after it was written reads as absent and is rebuilt: a cache
is never trusted over what it caches. Entries that carry a verdict (stored reviews) are sealed
under a secret key instead (srcreview.store.reviews), so that no one without it can forge one.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import tempfile
from pathlib import Path

from srcreview.core.cachedir import make_dirs

MAGIC = b"srcreview-facts\n"  # the facts cache's (srcreview.index.cache); others name their kind
KEY_VARIABLE = "SRCREVIEW_CACHE_KEY"


def secret_key(purpose: bytes, environ=None) -> bytes | None:
    """The key of the entries sealed for `purpose`, derived from the secret in $SRCREVIEW_CACHE_KEY
    (one that does not live in the cache); None when it is unset or empty."""
    secret = (os.environ if environ is None else environ).get(KEY_VARIABLE, "")
    if not secret:
        return None
    return hashlib.sha256(purpose + secret.encode("utf-8", "surrogateescape")).digest()


def seal(payload: bytes, magic: bytes = MAGIC, key: bytes | None = None) -> bytes:
    """An entry as written: `magic`, the sha256 of the payload (its HMAC-SHA256 under `key`),
    then the payload (see `unseal`)."""
    return magic + _digest(payload, key) + payload


def unseal(data: bytes, magic: bytes = MAGIC, key: bytes | None = None) -> bytes | None:
    """The payload of a sealed entry, or None if the entry is not one or its content changed.

    An unkeyed seal only catches damage: whoever can write the cache can seal anything again.
    A seal under `key` (a secret that does not live in the cache) also proves that the entry
    was written by someone holding the key, so a cache restored from another CI run, or
    edited, cannot have a verdict served."""
    head = len(magic) + 32
    if len(data) < head or not data.startswith(magic):
        return None
    payload = data[head:]
    return payload if hmac.compare_digest(_digest(payload, key), data[len(magic):head]) else None


def _digest(payload: bytes, key: bytes | None) -> bytes:
    if key is None:
        return hashlib.sha256(payload).digest()
    return hmac.new(key, payload, hashlib.sha256).digest()


def write_atomic(target: Path, data: bytes) -> bool:
    """Write `data` to `target` through a temporary file beside it and a rename, so a reader sees
    the old entry or the new one, never part of one; whether it was written (a cache that cannot
    be written only costs time). No temporary file is left behind, even when the write fails."""
    tmp = None
    try:
        make_dirs(target.parent)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
        tmp = None
        return True
    except OSError:
        return False
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
