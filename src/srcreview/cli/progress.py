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

    with live_bar(Console(stderr=True)) as bar:
        yield _BarReporter(bar)


def live_bar(console):
    """A rich Progress with a size, speed and time column for downloads, left blank for the
    extraction that follows (a count of files is no download size)."""
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )
    from rich.progress import Progress as RichProgress
    from rich.text import Text

    def blank_when_extracting(column):
        class Column(column):  # type: ignore[valid-type,misc]  # a subclass of the column class given
            def render(self, task):
                return Text("") if task.fields.get("extracting") else super().render(task)
        return Column()

    columns = (TextColumn("{task.description}"), BarColumn(), blank_when_extracting(DownloadColumn),
               blank_when_extracting(TransferSpeedColumn), blank_when_extracting(TimeRemainingColumn))
    return RichProgress(*columns, console=console, transient=True)


class _BarReporter:
    """Draws downloads as bars; once extraction starts, the finished download bar gives way to
    one that says what is being extracted and how many files so far (never a bar stuck at 100 %)."""

    def __init__(self, bar):
        self.bar = bar
        self.tasks: dict[str, int] = {}

    def __call__(self, label: str, done: int, total: int | None) -> None:
        if label.startswith("extracting "):
            for name, task in self.tasks.items():
                if not name.startswith("extracting "):
                    self.bar.update(task, visible=False)
            if label not in self.tasks:
                self.tasks[label] = self.bar.add_task(label, total=None, extracting=True)
            self.bar.update(self.tasks[label], description=f"{label}: {done} files")
            return
        if label not in self.tasks:
            self.tasks[label] = self.bar.add_task(label, total=total)
        self.bar.update(self.tasks[label], completed=done, total=total)


class _PlainReporter:
    """Without a terminal: say once what is being downloaded and extracted, so logs show where
    time went."""

    def __init__(self):
        self._seen: set[str] = set()

    def __call__(self, label: str, done: int, total: int | None) -> None:
        if label in self._seen:
            return
        self._seen.add(label)
        if label.startswith("extracting "):
            print(f"srcreview: {label}", file=sys.stderr, flush=True)
            return
        size = f" ({total / 1e6:.1f} MB)" if total else ""
        print(f"srcreview: downloading {label}{size}", file=sys.stderr, flush=True)
