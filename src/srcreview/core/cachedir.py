"""Which directories srcreview made: a marker file in each directory it creates in its cache.

`SRCREVIEW_CACHE` may point anywhere, `~/.cache` or `$HOME` included. `srcreview cache
clean` must never remove what it did not write, so every directory srcreview creates in its
cache gets a marker, and clean removes only what lies in a marked directory (the root, or the
top-level directory holding it). A directory that existed before srcreview used it is never
marked, the default location (`~/.cache/srcreview`, `$XDG_CACHE_HOME/srcreview`) included:
`XDG_CACHE_HOME=~` names `~/srcreview`, which may be the user's own directory. (A cache
written before markers existed is kept whole by clean; remove it by hand.)
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

MARKER = ".srcreview-cache"  # empty: it weighs nothing in the cache's bounds and sizes


def make_dirs(path: Path) -> None:
    """`path.mkdir(parents=True, exist_ok=True)`, writing the marker in each directory this call
    creates (one that existed, or that another run created meanwhile, is left as it was)."""
    path = Path(path)
    missing = []
    probe = path
    while not probe.exists() and probe != probe.parent:
        missing.append(probe)
        probe = probe.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder)
        except FileExistsError:
            continue
        with contextlib.suppress(OSError):
            (folder / MARKER).touch()
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True)  # raises the OSError that explains why


def is_marked(folder: Path) -> bool:
    """Whether `folder` is a real directory (not a symlink) that srcreview created."""
    folder = Path(folder)
    try:
        return not folder.is_symlink() and folder.is_dir() and (folder / MARKER).is_file() \
            and not (folder / MARKER).is_symlink()
    except OSError:
        return False
