"""`srcreview audit REVIEW.json|REGISTRY.json`: do a review's anchors, or a source registry's vLLM entries, hold?

A review (operator-workflow/v1): every line-anchored GitHub URL is read at its own revision;
the anchored lines must contain what the entry's `purpose` names (identifiers, flags, known
concepts). Each anchor is `ok`, `drifted` (with the corrected range; a range past the end of
the file is drifted) or `unverifiable`.

A source registry (anvil-serving.benchmark-source-registry/v1): each vLLM entry is
`unpinned` (no full commit), `other-revision` (not the pin of --recipe), `whole-file` (no
line range), or its range is checked like a review anchor against the entry's
hardware_runtime_relevance text, or what --review says of the same URL. Other entries are
`not-vllm`.

Exit 1 when any anchor drifted (or a registry entry is unpinned, at another revision or
drifted), 2 when a revision's source could not be obtained, 65 when the file is neither (not
a JSON object, srcreview's own check JSON, or a review without a line-anchored URL), else 0.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from srcreview.core.errors import EXIT_GATE_FAILED, EXIT_INCOMPLETE, EXIT_OK, UsageError
from srcreview.core.userfile import read_user_file


def add_parser(sub) -> None:
    from srcreview.cli.commands._common import PROVIDER_CHOICES

    p = sub.add_parser("audit",
                       help="check a hand-written review's line anchors, or a source registry's vLLM entries, "
                            "against the source",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("review", metavar="FILE", help="independent-review JSON (operator-workflow/v1) or source registry "
                                                 "(anvil-serving.benchmark-source-registry/v1)")
    p.add_argument("--recipe", metavar="RECIPE",
                   help="registry: the recipe whose pinned revision every vLLM entry must be at")
    p.add_argument("--review", dest="claims", metavar="REVIEW.json",
                   help="registry: a review citing the same URLs; each entry is checked against what it says there")
    p.add_argument("--source", metavar="PATH",
                   help="local vLLM git checkout, unpacked sdist directory or sdist archive")
    p.add_argument("--provider", default="auto", choices=PROVIDER_CHOICES,
                   help="where to obtain the source of each revision (default: auto)")
    p.add_argument("--format", default="text", choices=["text", "json"], help="output format (default: text)")
    p.add_argument("--no-progress", action="store_true", help="do not report downloads on stderr")
    p.set_defaults(run=run)


def run(args) -> int:
    from srcreview.audit.reviews import (
        MAX_REVIEW_BYTES,
        audit_review,
        check_review_document,
        load_review,
    )
    from srcreview.report.registry import is_registry

    path = Path(args.review)
    shown = path.name if path.is_absolute() else str(path)
    raw = read_user_file(path, shown, "review", MAX_REVIEW_BYTES)
    doc = load_review(raw, shown)
    _check_source_args(args)
    sources = _Sources(args)
    if is_registry(doc):
        return _run_registry(args, doc, shown, sources)
    check_review_document(doc, shown)
    if args.recipe or args.claims:
        raise UsageError("--recipe and --review apply to a source registry; this file is a review")
    report = audit_review(doc, shown, sources.tree_for, sources.index_for)
    text = render_json(report, sources.incomplete) if args.format == "json" else None
    if text is not None:
        sys.stdout.write(text)
    else:
        render_text(report, sources.incomplete)
    if report.drifted:
        return EXIT_GATE_FAILED
    return EXIT_INCOMPLETE if sources.incomplete else EXIT_OK


def _run_registry(args, doc, shown: str, sources) -> int:
    from srcreview.audit.registries import audit_registry, review_claims
    from srcreview.audit.reviews import load_review
    from srcreview.report import registry_audit as render

    pin = None
    if args.recipe:
        from srcreview.cli.commands._common import rev_from_args
        from srcreview.cli.commands._multirev import load_recipe_arg
        from srcreview.model.revision import resolve_rev

        recipe = load_recipe_arg(args.recipe, args)
        pin = resolve_rev(rev_from_args(argparse.Namespace(rev=None), recipe))
    claims = None
    if args.claims:
        claims_path = Path(args.claims)
        claims_shown = claims_path.name if claims_path.is_absolute() else str(claims_path)
        claims = review_claims(load_review(read_user_file(claims_path, claims_shown, "review"), claims_shown))
    report = audit_registry(doc, shown, sources.tree_for, sources.index_for, pin=pin, claims=claims)
    sys.stdout.write(render.render_json(report, sources.incomplete) if args.format == "json"
                     else render.render_text(report, sources.incomplete))
    if report.failed:
        return EXIT_GATE_FAILED
    return EXIT_INCOMPLETE if sources.incomplete else EXIT_OK


def _check_source_args(args) -> None:
    """Command-line mistakes are usage errors up front, not a verdict on every anchor."""
    if args.source and not Path(args.source).exists():
        raise UsageError(f"--source {Path(args.source).name}: no such file or directory")
    if args.provider == "local" and not args.source:
        raise UsageError("--provider local needs --source PATH")
    if args.source and args.provider not in ("auto", "local"):
        raise UsageError(f"--source cannot be combined with --provider {args.provider}")


class _Sources:
    """Obtains one tree (and one Index) per revision named in the review; remembers failures."""

    def __init__(self, args):
        self.args = args
        self.incomplete: dict[str, str] = {}

    def tree_for(self, rev: str):
        from srcreview.cli.progress import progress_reporter
        from srcreview.core.errors import SourceUnavailable
        from srcreview.model.revision import resolve_rev
        from srcreview.source.obtain import open_source

        revision = resolve_rev(rev)
        source = Path(self.args.source) if self.args.source else None
        try:
            with progress_reporter(not self.args.no_progress) as report:
                return open_source(revision, source=source, provider=self.args.provider, progress=report)
        except SourceUnavailable as exc:
            self.incomplete[rev] = exc.message
            raise

    @staticmethod
    def index_for(tree):
        from srcreview.index import Index
        from srcreview.index.cache import default_cache_dir

        return Index(tree, cache_dir=default_cache_dir())


def render_json(report, incomplete: dict[str, str]) -> str:
    import json

    data = {
        "review": report.review,
        "summary": report.summary(),
        "incomplete": [{"rev": rev, "reason": reason} for rev, reason in sorted(incomplete.items())],
        "entries": [e.model_dump(mode="json") for e in report.entries],
    }
    return json.dumps(data, indent=2) + "\n"  # ASCII: no control or bidi character reaches a terminal


_STYLE = {"ok": "green", "drifted": "bold red", "unverifiable": "yellow"}


def render_text(report, incomplete: dict[str, str], file=None) -> None:
    from rich.console import Console
    from rich.markup import escape as escape_markup
    from rich.table import Table

    from srcreview.core.textsafe import oneline

    def escape(text: str) -> str:
        """Text from the review is shown, never obeyed: no rich markup, no terminal control."""
        return escape_markup(oneline(text))

    console = Console(file=file or sys.stdout, highlight=False, emoji=False)
    table = Table(title=f"anchors of {escape(report.review)}", show_lines=True, expand=True)
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("anchor and purpose", overflow="fold", ratio=1)
    table.add_column("verdict", overflow="fold", ratio=1)
    for number, entry in enumerate(report.entries, start=1):
        where = f"{entry.path}:{entry.start_line}-{entry.end_line}" if entry.path else entry.url
        anchor = f"{escape(where)}\n[dim]{escape(entry.purpose or '(no purpose)')}[/]"
        verdict = escape(entry.reason)
        if entry.corrected is not None:
            verdict += (f"\n[bold]→ {escape(entry.corrected.path)}:{entry.corrected.start_line}-"
                        f"{entry.corrected.end_line}[/]")
        for note in entry.notes:
            verdict += f"\n· {escape(note)}"
        table.add_row(str(number), f"[{_STYLE[entry.status]}]{entry.status}[/]", anchor, verdict)
    console.print(table)
    for number, entry in enumerate(report.entries, start=1):
        if entry.corrected is not None:
            console.print(f"#{number} corrected: {escape(entry.corrected.url)}", soft_wrap=True)
    for rev, reason in sorted(incomplete.items()):
        console.print(f"[yellow]source of {escape(rev)} unavailable:[/] {escape(reason)}", soft_wrap=True)
    counts = report.summary()
    console.print(f"{len(report.entries)} anchors: {counts['ok']} ok, {counts['drifted']} drifted, "
                  f"{counts['unverifiable']} unverifiable")
