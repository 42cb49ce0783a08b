"""Files the user names on the command line (recipes, baselines, reviews): read whole, bounded.

One place decides what a missing or unreadable file is (a usage error, exit 64) and what an
oversized one is (invalid data, exit 65), so every command answers the same way.
"""

from __future__ import annotations

from pathlib import Path

from srcreview.errors import DataError, UsageError


def read_user_file(path: str | Path, shown: str, what: str, limit: int | None = None) -> bytes:
    """The bytes of `path` (named `shown` in messages, a `what` such as "recipe")."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"{shown}: no such {what} file") from None
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read {what}: {exc.strerror or exc}") from None
    if limit is not None and len(raw) > limit:
        raise DataError(f"{shown}: {what} is {len(raw)} bytes, over the {limit}-byte limit")
    return raw


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
