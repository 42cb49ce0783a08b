"""`srcreview diff RECIPE --rev A --rev B`: what changes for a recipe between two vLLM revisions.

Reviews the recipe at both revisions with the same engine as `check`, then prints the knob
table and the findings side by side and, for each change (a setting ignored at A and applied
at B, a finding whose classification moved), both sides' evidence and the anchors found on
one side only: the lines that made the difference.

The old revision is upstream as released; the new one is the engine that runs: upstream plus
the recipe's `[runtime] patches` and any --patch/--overlay. So `--rev R --rev R --patch P`
shows what patch P changes in the recipe's verdicts at R.

Exit codes: 0 no change, 1 something changed, 2 a review is incomplete (source unavailable,
analysis could not finish), 64 usage, 65 invalid recipe or rules.
"""

from __future__ import annotations

import argparse
import sys

EPILOG = """\
examples:
  srcreview diff examples/thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml --rev 0.25.0 --rev 0.30.0
  srcreview diff recipe.toml --rev 1a2b3c4 --rev 5d6e7f8 --source ~/src/vllm --format json
  srcreview diff recipe.toml --rev 0.29.0 --rev 0.29.0 --patch patches/nested-backend.diff
"""


def add_parser(sub) -> None:
    from srcreview.cli.commands._common import add_patch_args
    from srcreview.cli.commands._multirev import add_multi_source_args, add_output_args

    p = sub.add_parser("diff", help="what changes for a recipe between two vLLM revisions",
                       description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("recipe", metavar="RECIPE", help="recipe TOML file")
    p.add_argument("--rev", action="append", required=True, metavar="REV",
                   help="vLLM release (0.29.0) or commit; give it twice: the old revision, then the new one")
    add_multi_source_args(p)
    add_patch_args(p, side=" of the new (second) revision")
    add_output_args(p)
    p.set_defaults(run=run)


def run(args) -> int:
    from srcreview.cli.commands._common import check_revs, layers_from_args
    from srcreview.cli.commands._multirev import (
        RevisionReviewer,
        color_from_args,
        load_recipe_arg,
        load_rules_arg,
        progress_display,
    )
    from srcreview.core.errors import (
        EXIT_GATE_FAILED,
        EXIT_INCOMPLETE,
        EXIT_OK,
        UsageError,
    )
    from srcreview.history.compare import compare_reviews
    from srcreview.report import diff as report

    if len(args.rev) != 2:
        raise UsageError(f"--rev: give exactly two revisions (the old one, then the new one), got {len(args.rev)}")
    check_revs(args.rev)  # every usage error before any source is fetched
    rules = load_rules_arg(args)
    recipe = load_recipe_arg(args.recipe, args)
    layers = layers_from_args(args, recipe, args.recipe)
    if args.rev[0] == args.rev[1] and not layers:
        raise UsageError("--rev: the same revision twice compares nothing; add --patch/--overlay (or "
                         "[runtime] patches in the recipe) to see what they change")
    with progress_display(total=2) as (step, download):
        reviewer = RevisionReviewer(recipe, rules, source=args.source, provider=args.provider,
                                    on_step=step, download=download)
        before, after = reviewer.review(args.rev[0]), reviewer.review(args.rev[1], layers)
    diff = compare_reviews(before, after)
    if args.format == "json":
        sys.stdout.write(report.render_json(diff))
    else:
        sys.stdout.write(report.render_text(diff, verbose=args.verbose, color=color_from_args(args)))
    if diff.incomplete:
        return EXIT_INCOMPLETE
    return EXIT_GATE_FAILED if diff.changed else EXIT_OK
