"""Files the user names (recipes, baselines, waiver files, reviews, --source archives): read
whole, bounded in time and size.

One place decides what a missing or unreadable file is (a usage error, exit 64), what a path
that is not a regular file is (a FIFO, a device such as /dev/zero or /dev/urandom, a socket, a
directory: a usage error, refused before a byte is read, so nothing waits on a writer or reads
forever) and what oversized content is (invalid data, exit 65: over the caller's byte limit,
or a number of more digits than Python converts to an int), so every command answers the same
way.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path
from typing import BinaryIO

from srcreview.core.errors import DataError, UsageError

# Python refuses to convert longer digit strings to int (CVE-2020-10735); json and tomllib
# then raise a bare ValueError. A file holding one is refused up front, with its line.
MAX_INT_DIGITS = sys.get_int_max_str_digits() or 4300
_LONG_NUMBER = re.compile(rb"(?<![0-9_])[0-9][0-9_]{%d,}" % MAX_INT_DIGITS)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words for a message."""
    for test, name in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | Path, shown: str, what: str) -> BinaryIO:
    """`path` opened for reading if it is a regular file (symlinks followed), else UsageError.

    Opened non-blocking, so a FIFO without a writer cannot hold the run at `open`; the kind is
    then checked on the open file itself (no window between the check and the read).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise UsageError(f"{shown}: no such {what} file") from None
    except OSError as exc:  # a socket (ENXIO), no permission, a dangling or looping symlink
        try:
            mode = os.stat(path).st_mode
        except OSError:
            mode = stat.S_IFREG
        reason = exc.strerror or str(exc) if stat.S_ISREG(mode) else f"{file_kind(mode)}, not a regular file"
        raise UsageError(f"{shown}: cannot read {what}: {reason}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UsageError(f"{shown}: cannot read {what}: {file_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_user_file(path: str | Path, shown: str, what: str, limit: int | None = None) -> bytes:
    """The bytes of `path` (named `shown` in messages, a `what` such as "recipe"): a regular
    file, at most `limit` bytes, without a number of over MAX_INT_DIGITS digits."""
    with open_regular(path, shown, what) as fh:
        try:
            raw = fh.read() if limit is None else fh.read(limit + 1)
        except OSError as exc:
            raise UsageError(f"{shown}: cannot read {what}: {exc.strerror or exc}") from None
        if limit is not None and len(raw) > limit:
            size = os.fstat(fh.fileno()).st_size
            raise DataError(f"{shown}: {what} is {max(size, len(raw))} bytes, over the {limit}-byte limit")
    check_numbers(raw, shown)
    return raw


def check_numbers(raw: bytes, shown: str) -> None:
    """DataError naming the line of the first number with more than MAX_INT_DIGITS digits."""
    for match in _LONG_NUMBER.finditer(raw):
        digits = len(match.group()) - match.group().count(b"_")
        if digits > MAX_INT_DIGITS:
            line = raw.count(b"\n", 0, match.start()) + 1
            raise DataError(f"{shown}:{line}: a number of {digits} digits, over the {MAX_INT_DIGITS}-digit limit")


def shown_path(path: str | Path) -> str:
    """How a file given on the command line appears in reports: relative to the working
    directory when inside it, else its name alone (never an absolute local path)."""
    path = Path(path)
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.name


def recipe_root(recipe_file: str | Path) -> Path:
    """The directory a recipe's paths must stay in: the git work tree holding the recipe (its
    root: the nearest directory with a `.git`), else the recipe's own directory. A recipe is
    data someone else may have written; the paths it names must not reach the host (`/etc`,
    `~/.ssh`, `../..`), whose file names a review would list."""
    start = Path(recipe_file).resolve().parent
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def inside(path: Path, roots) -> bool:
    """Whether `path`, symlinks resolved, lies in one of `roots` (each resolved too)."""
    try:
        real = Path(path).resolve()
    except (OSError, RuntimeError):
        return False
    for root in roots:
        try:
            real.relative_to(Path(root).resolve())
            return True
        except (ValueError, OSError, RuntimeError):
            continue
    return False
