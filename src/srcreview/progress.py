"""Progress on stderr for the CLI: a rich bar on a terminal, one line per download otherwise.

Library code reports through plain callbacks `(label, done, total)`; this module is the only
place that draws them, and only the CLI creates it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

from srcreview.source.base import Progress


@contextlib.contextmanager
def progress_reporter(enabled: bool = True) -> Iterator[Progress | None]:
    """A callback for the duration of the block (None when disabled)."""
    if not enabled:
        yield None
        return
    if not sys.stderr.isatty():
        yield _PlainReporter()
        return
    from rich.console import Console
    from rich.progress import (BarColumn, DownloadColumn, Progress as RichProgress, TextColumn,
                               TimeRemainingColumn, TransferSpeedColumn)

    console = Console(stderr=True)
    columns = (TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
               TimeRemainingColumn())
    with RichProgress(*columns, console=console, transient=True) as bar:
        tasks: dict[str, int] = {}

        def report(label: str, done: int, total: int | None) -> None:
            if label.startswith("extracting "):
                return
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=total)
            bar.update(tasks[label], completed=done, total=total)

        yield report


class _PlainReporter:
    """Without a terminal: say once what is being downloaded, so logs show where time went."""

    def __init__(self):
        self._seen: set[str] = set()

    def __call__(self, label: str, done: int, total: int | None) -> None:
        if label in self._seen or label.startswith("extracting "):
            return
        self._seen.add(label)
        size = f" ({total / 1e6:.1f} MB)" if total else ""
        print(f"srcreview: downloading {label}{size}", file=sys.stderr, flush=True)
