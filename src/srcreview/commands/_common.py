"""Options every command that reads vLLM source shares: --rev, --source, --provider.

`add_source_args(parser)` declares them; `tree_from_args(args, recipe)` resolves the rev
(the recipe's pin when --rev is absent) and obtains the tree, drawing download progress on
stderr.
"""

from __future__ import annotations

from pathlib import Path

from srcreview.errors import UsageError

PROVIDER_CHOICES = ("auto", "local", "registry", "github", "git")


def add_source_args(parser, *, rev_required: bool = False) -> None:
    """Add --rev, --source and --provider to a subcommand's parser."""
    parser.add_argument("--rev", required=rev_required,
                        help="vLLM release (0.29.0) or commit (98dff2a)"
                        + ("" if rev_required else "; default: the recipe's pin"))
    parser.add_argument("--source", metavar="PATH",
                        help="local vLLM git checkout, unpacked sdist directory or sdist archive")
    parser.add_argument("--provider", default="auto", choices=PROVIDER_CHOICES,
                        help="where to obtain the source: auto (cheapest that works: --source, cache, "
                             "registry sdist, GitHub tarball, git) or one of them")


def rev_from_args(args, recipe=None) -> str:
    """The rev to review: --rev, else the recipe's pinned revision or version."""
    if getattr(args, "rev", None):
        return args.rev
    runtime = getattr(recipe, "runtime", None)
    pinned = getattr(runtime, "revision", None) or getattr(runtime, "version", None)
    if pinned:
        return str(pinned)
    raise UsageError("--rev is required" + (" (the recipe pins no vLLM revision)" if recipe is not None else ""))


def tree_from_args(args, recipe=None, *, progress: bool = True, verify: bool = False):
    """The SourceTree the arguments (and the recipe's pin) ask for."""
    from srcreview.progress import progress_reporter
    from srcreview.revision import resolve_rev
    from srcreview.source.obtain import open_source

    revision = resolve_rev(rev_from_args(args, recipe))
    source = getattr(args, "source", None)
    with progress_reporter(progress) as report:
        return open_source(revision, source=Path(source) if source else None,
                           provider=getattr(args, "provider", "auto") or "auto", progress=report, verify=verify)
