"""Reviewing one recipe at several revisions, for `diff` and `bisect`: sources, engine, progress.

Each revision's source comes from `open_source` (the same providers and cache as `check`) and
is reviewed by check's own loop (`srcreview.api.review_recipes`: the same engine, facts cache and
parse-ahead worker); only the Review is kept, so trees and indexes of earlier revisions are freed
as the run moves on. Progress (sources to fetch, revisions analysed) is reported through a
callback; `progress_display` draws it with rich on stderr, only when stderr is a terminal (for
`check` with several --rev too, counting reviews).
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from srcreview.core.errors import UsageError

if TYPE_CHECKING:
    from srcreview.model.findings import Review

# (event, label): event is "fetch" (obtaining the source of label) or "analyse" or "done"
StepCallback = Callable[[str, str], None]


def add_multi_source_args(parser) -> None:
    """--source, --provider and --rules (the revisions come from each command's own options)."""
    from srcreview.cli.commands._common import PROVIDER_CHOICES

    parser.add_argument("--source", metavar="PATH",
                        help="local vLLM git checkout (every revision is read from it as committed), "
                             "unpacked sdist directory or sdist archive")
    parser.add_argument("--provider", default="auto", choices=PROVIDER_CHOICES,
                        help="where to obtain each revision's source (default: auto, as for check)")
    parser.add_argument("--rules", metavar="DIR", help="rule directory (default: the rules shipped with srcreview)")
    from srcreview.cli.commands._common import add_model_config_arg

    add_model_config_arg(parser)


def load_rules_arg(args):
    """The rules of --rules DIR (errors name its files as given), else the shipped rules."""
    import re

    from srcreview.core.errors import DataError, UsageError
    from srcreview.core.userfile import shown_path
    from srcreview.rules.loader import load_rules

    if not getattr(args, "rules", None):
        return load_rules()
    directory = Path(args.rules)
    if not directory.is_dir():
        raise UsageError(f"--rules {shown_path(directory)}: " + ("not a directory" if directory.exists()
                                                                 else "no such directory"))
    try:
        return load_rules(directory)
    except (DataError, UsageError) as exc:  # the loader names a rule file `rules/NAME.toml`, wherever it is
        shown = shown_path(directory).rstrip("/")
        raise type(exc)(re.sub(r"(?<![\w./-])rules/(?=[^/\s:]+\.toml)", lambda _: f"{shown}/", exc.message)) from None


class RevisionReviewer:
    """Reviews of one recipe by rev, each obtained and analysed once (check's engine and caches)."""

    def __init__(self, recipe, rules, *, source: str | None = None, provider: str = "auto",
                 on_step: StepCallback | None = None, download=None):
        self.recipe = recipe
        self.rules = rules
        self.source = Path(source) if source else None
        self.provider = provider or "auto"
        self.on_step = on_step or (lambda event, label: None)
        self.download = download
        self._reviews: dict[tuple[str, tuple[str, ...]], Review] = {}  # (revision, layer digests) -> review

    def review(self, rev: str, layers=()):
        """The Review of the recipe at `rev` (a release version or commit), with `layers`
        (patches, overlays: `srcreview.source.patched`) applied over its source: check's own
        engine loop (srcreview.api.review_recipes), its tree and index freed once it is done."""
        from srcreview import api
        from srcreview.cli.commands._common import resolve_release
        from srcreview.index.cache import default_cache_dir
        from srcreview.source.obtain import open_source
        from srcreview.source.patched import apply_layers

        key = (rev, tuple(layer.sha256 for layer in layers))
        if key not in self._reviews:
            revision = resolve_release(rev, self.download, local=self.source is not None)
            label = revision.label()

            def open_tree(_rev, _recipe, layers):
                return apply_layers(open_source(revision, source=self.source, provider=self.provider,
                                                progress=self.download), layers)

            workspace = api.Workspace(rev=lambda recipe: rev, layers=lambda recipe, recipe_file: list(layers),
                                      open_tree=open_tree, cache_dir=default_cache_dir())
            [(self._reviews[key], _tree)] = api.review_recipes(
                workspace, [self.recipe], self.rules,
                on_step=lambda event, shown: self.on_step(event, label + (" (patched)" if layers else "")))
        return self._reviews[key]


def parse_rev_list(text: str) -> list[str]:
    """`A,B,C` -> ["A", "B", "C"], each a valid rev (a release or a commit), no repeats."""
    from srcreview.cli.commands._common import check_revs

    revs = [part.strip() for part in text.split(",") if part.strip()]
    check_revs(revs, "--revs")
    if len(set(revs)) != len(revs):
        raise UsageError("--revs: a revision is listed twice")
    return revs


class _Steps:
    """The drawing side of the callbacks: one bar for revisions, one per download."""

    def __init__(self, bar, total: int | None, unit: str = "revisions"):
        self.bar = bar
        self.total = total
        self.unit = unit
        self.done = 0
        self.task = bar.add_task(unit, total=total, detail=self._detail())
        self.downloads: dict[str, int] = {}

    def _detail(self) -> str:
        return f"{self.done}/{self.total} {self.unit} analysed" if self.total else f"{self.done} {self.unit} analysed"

    def step(self, event: str, label: str) -> None:
        if event == "done":
            self.done += 1
            if self.total is not None and self.done > self.total:
                self.total = self.done
            self.bar.update(self.task, description=self.unit, completed=self.done, total=self.total,
                            detail=self._detail())
            return
        verb = "obtaining source of" if event == "fetch" else "analysing"
        self.bar.update(self.task, description=f"{verb} vLLM {label}", detail=self._detail())

    def download(self, label: str, done: int, total: int | None) -> None:
        if label.startswith("extracting "):  # the download's bar says so, instead of staying at 100 %
            archive = label.removeprefix("extracting ")
            if archive not in self.downloads:
                self.downloads[archive] = self.bar.add_task(label, total=None, detail="")
            self.bar.update(self.downloads[archive], description=label, total=None, detail=f"{done} files")
            return
        size = f"{done / 1e6:.1f}" + (f"/{total / 1e6:.1f} MB" if total else " MB")
        if label not in self.downloads:
            self.downloads[label] = self.bar.add_task(f"fetching {label}", total=total, detail=size)
        self.bar.update(self.downloads[label], completed=done, total=total, detail=size)


@contextlib.contextmanager
def progress_display(total: int | None, enabled: bool | None = None,
                     unit: str = "revisions") -> Iterator[tuple[StepCallback | None, object]]:
    """(step callback, download callback) drawing on stderr, counting `unit` done; (None, None)
    when it is not a terminal."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield None, None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[detail]}"),
               TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        steps = _Steps(bar, total, unit)
        yield steps.step, steps.download


def add_output_args(parser, formats=("text", "json")) -> None:
    parser.add_argument("--format", choices=formats, default="text", help="output on stdout (default: text)")
    parser.add_argument("-v", "--verbose", action="store_true", help="text: every anchor of both sides")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="text: colors (default: auto)")


def color_from_args(args) -> bool:
    import os

    if args.color == "always":
        return True
    if args.color == "never" or os.environ.get("NO_COLOR"):
        return False
    return sys.stdout.isatty()


def load_recipe_arg(path: str, args=None):
    """The recipe at `path`, with the configs of its models read as `--model-config` says."""
    from srcreview.cli.commands._common import with_models
    from srcreview.cli.commands._gate_args import shown_path
    from srcreview.model.recipe import load_recipe

    return with_models(load_recipe(path, display_path=shown_path(path)), path, args)
