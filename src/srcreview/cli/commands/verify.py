"""`srcreview verify REVIEW.json STARTUP.log`: read a vLLM start-up log against a review.

REVIEW.json is a saved `srcreview check --format json` output (--recipe picks one review of
several); it carries the start-up evidence plan. The log must be of the review's revision: its
`[file.py:line]` prefixes are checked against the logger calls of that pinned tree (obtained as
`check` obtains it), and a log of another release is refused with the lines that differ. Each
knob of the plan is then consistent, contradicted (the log line beside the review's claim) or
not shown (with the reason); a failed start-up is matched to the predicted startup-rejected.

Exit codes: 0 consistent, 1 contradicted, 2 insufficient evidence (a claimed row not shown; or
the source unavailable), 64 usage, 65 invalid review or log (a log of another revision, binary,
a line over 64 KiB, over 256 MiB or 2,000,000 lines).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

EPILOG = """\
examples:
  srcreview check recipe.toml --rev 0.29.0 --format json > review.json
  VLLM_LOG_MODEL_INSPECTION=1 vllm serve ... 2>&1 | tee startup.log
  srcreview verify review.json startup.log
"""


def add_parser(sub) -> None:
    from srcreview.report.verification import FORMATS

    p = sub.add_parser("verify", help="read a vLLM start-up log against a review's start-up evidence plan",
                       description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("review", metavar="REVIEW.json", help="a saved `srcreview check --format json` output")
    p.add_argument("log", metavar="STARTUP.log", help="the log of the start-up (stdout and stderr of vllm serve)")
    p.add_argument("--recipe", metavar="PATH", help="the recipe whose review to use when REVIEW.json holds several")
    p.add_argument("--source", metavar="PATH", help="a local vLLM checkout or sdist of the review's revision")
    p.add_argument("--provider", default="auto", choices=("auto", "registry", "github", "git", "local"),
                   help="where the source comes from (default: auto)")
    p.add_argument("--format", choices=tuple(FORMATS), default="text", help="output on stdout (default: text)")
    p.set_defaults(run=run)


def pick_review(reviews, recipe: str | None, shown: str):
    from srcreview.core.errors import DataError, UsageError

    if recipe is not None:
        reviews = [r for r in reviews if r.recipe.path == recipe]
        if not reviews:
            raise UsageError(f"{shown} has no review of {recipe}")
    if len(reviews) != 1:
        raise UsageError(f"{shown} holds {len(reviews)} reviews: name one with --recipe PATH")
    review = reviews[0]
    if review.startup_evidence is None:
        raise DataError(f"{shown}: the review of {review.recipe.path} has no startup_evidence block (made by an "
                        "older srcreview: run check again)")
    return review


def verify_log(review, log: str, args):
    """The Verification of one log against one review, at the review's revision."""
    from srcreview.cli.commands._common import tree_from_args
    from srcreview.cli.commands._gate_args import shown_path
    from srcreview.core.errors import UsageError
    from srcreview.evidence.logfile import read_log
    from srcreview.evidence.verify import verify
    from srcreview.index import Index
    from srcreview.index.cache import default_cache_dir

    path = Path(log)
    if not path.is_file():
        raise UsageError(f"{log}: not a regular file")
    lines = read_log(path, shown_path(log))
    info = review.revision
    rev = info.version if info.version else info.sha
    tree = tree_from_args(argparse.Namespace(rev=rev, source=getattr(args, "source", None),
                                             provider=getattr(args, "provider", "auto")),
                          progress=sys.stderr.isatty())
    return verify(Index(tree, cache_dir=default_cache_dir()), review, lines, shown_path(log))


def run(args) -> int:
    from srcreview.audit.explain import load_saved_reviews
    from srcreview.cli.commands._gate_args import shown_path
    from srcreview.report.verification import FORMATS

    shown = shown_path(args.review)
    review = pick_review(load_saved_reviews(Path(args.review), shown), args.recipe, shown)
    result = verify_log(review, args.log, args)
    sys.stdout.write(FORMATS[args.format](result))
    if result.exit_code == 65:
        sys.stderr.write(f"srcreview: {result.log}: not a log of vLLM {review.revision.version or ''} "
                         f"({review.revision.sha[:12]}): {len(result.mismatches)} of its records are not that "
                         f"tree's logger calls\n")
    return result.exit_code
