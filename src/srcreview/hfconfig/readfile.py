"""Read one model file whole, bounded, and only if it is a regular file.

A model directory is the user's, and a Hub cache entry is a link to a blob: links are
followed, but a FIFO, device or directory in a file's place is refused (opening a FIFO
would block the review), and no more than one byte past the size limit is read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from srcreview.hfconfig.files import MAX_FILE_BYTES, ConfigUnavailable


def read_regular_file(path: Path, name: str) -> bytes | None:
    """The bytes of `path` (named `name` in reasons), at most MAX_FILE_BYTES + 1 of them; None
    when it does not exist."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigUnavailable(f"{name} cannot be read: {exc.strerror or type(exc).__name__}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigUnavailable(f"{name} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ConfigUnavailable(f"{name} cannot be read: {exc.strerror or type(exc).__name__}") from None
    finally:
        os.close(fd)
    return raw  # one byte past the limit at most: parse_document refuses it
