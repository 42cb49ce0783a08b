"""Sealed cache entries: a payload behind the sha256 of its content, checked when read.

Every entry srcreview keeps in its cache (facts, stored reviews) is written this way, so an
entry damaged or edited in place after it was written reads as absent and is rebuilt: a cache
is never trusted over what it caches.
"""

from __future__ import annotations

import hashlib

MAGIC = b"srcreview-facts\n"  # the facts cache's (srcreview.index.cache); others name their kind


def seal(payload: bytes, magic: bytes = MAGIC) -> bytes:
    """An entry as written: `magic`, the sha256 of the payload, then the payload (see `unseal`)."""
    return magic + hashlib.sha256(payload).digest() + payload


def unseal(data: bytes, magic: bytes = MAGIC) -> bytes | None:
    """The payload of a sealed entry, or None if the entry is not one or its content changed."""
    head = len(magic) + 32
    if len(data) < head or not data.startswith(magic):
        return None
    payload = data[head:]
    return payload if hashlib.sha256(payload).digest() == data[len(magic):head] else None
