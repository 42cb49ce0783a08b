"""`srcreview bisect RECIPE --rule RULE [--knob KEY] --from A --to B`: where does a verdict change?

Bisects the releases in pins/ from A to B (oldest first) for the first release where the
verdict changes, reviewing the recipe at each tested release with the same engine as
`check`. The verdict is the classification of RULE's finding (with --knob, of its finding
for that recipe key), or, with --knob alone, the knob row's status (KEY or KEY@SCOPE, scope
target | draft | engine). Prints which releases were tested, every boundary found, and the
evidence on both sides of it.

Bisection assumes each verdict holds over one contiguous run of releases; the output says
so when the tested verdicts contradict that, and --all tests every release to be sure.

Other histories: `--revs A,B,C,...` bisects an explicit ordered list of releases or commits
(oldest first) instead of pins/; with `--source PATH` to a git checkout, commits are read
from it as committed (e.g. `--revs $(git rev-list --reverse --first-parent A^..B | paste -sd, -)`).

Exit codes: 0 answered, 2 a tested review was incomplete, 64 usage, 65 invalid recipe or rules.
"""

from __future__ import annotations

import argparse
import sys

EPILOG = """\
examples:
  srcreview bisect examples/thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml \\
      --rule spec-draft-attention-backend-ignored --from 0.25.0 --to 0.30.0
  srcreview bisect recipe.toml --knob speculative_config.attention_backend@draft --from 0.25.0 --to 0.30.0
  srcreview bisect recipe.toml --rule spec-draft-attention-backend-ignored --source ~/src/vllm \\
      --revs "$(git -C ~/src/vllm rev-list --reverse --first-parent 1a2b3c4^..5d6e7f8 | paste -sd, -)"
"""

SCOPES = ("target", "draft", "engine")


def add_parser(sub) -> None:
    from srcreview.cli.commands._multirev import add_multi_source_args, add_output_args

    p = sub.add_parser("bisect", help="the first vLLM release where a rule's verdict or a knob's status changes",
                       description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("recipe", metavar="RECIPE", help="recipe TOML file")
    p.add_argument("--rule", metavar="RULE", help="the rule whose finding classification is bisected")
    p.add_argument("--knob", metavar="KEY[@SCOPE]",
                   help="with --rule: its finding for this recipe key; alone: this knob row's status")
    p.add_argument("--from", dest="start", metavar="A", help="oldest release in pins/ (e.g. 0.25.0)")
    p.add_argument("--to", dest="end", metavar="B", help="newest release in pins/ (e.g. 0.30.0)")
    p.add_argument("--revs", metavar="A,B,...",
                   help="instead of --from/--to: an explicit ordered list of releases or commits, oldest first")
    p.add_argument("--all", action="store_true", dest="exhaustive",
                   help="test every revision instead of bisecting (sees changes that revert inside the range)")
    add_multi_source_args(p)
    add_output_args(p)
    p.set_defaults(run=run)


def revisions_from_args(args) -> list[str]:
    """The ordered revisions to bisect: pins/ between --from and --to, or --revs."""
    from srcreview.cli.commands._multirev import parse_rev_list
    from srcreview.core.errors import UsageError
    from srcreview.model.revision import VERSION, releases_between, validate_rev

    if args.revs:
        if args.start or args.end:
            raise UsageError("--revs cannot be combined with --from/--to")
        revs = parse_rev_list(args.revs)
    else:
        if not (args.start and args.end):
            raise UsageError("give --from A --to B (releases in pins/) or --revs A,B,...")
        start, end = validate_rev(args.start), validate_rev(args.end)
        for option, rev in (("--from", start), ("--to", end)):
            if not VERSION.fullmatch(rev):
                raise UsageError(f"{option}: {rev!r} is not a release version; to bisect commits use --revs")
        from srcreview.model.revision import parse_version, resolve_rev

        for rev in (start, end):
            resolve_rev(rev)  # a release unknown to pins/ is a usage error naming the known ones
        if parse_version(start) > parse_version(end):
            raise UsageError(f"--from {start} is newer than --to {end}")
        revs = [p.version for p in releases_between(start, end)]
    if len(revs) < 2:
        raise UsageError(f"need at least two revisions to bisect, got {len(revs)}")
    return revs


def parse_knob(text: str | None) -> tuple[str | None, str | None]:
    from srcreview.core.errors import UsageError

    if not text:
        return None, None
    key, _, scope = text.partition("@")
    if scope and scope not in SCOPES:
        raise UsageError(f"--knob: scope {scope!r} is not one of {', '.join(SCOPES)}")
    if not key:
        raise UsageError("--knob: empty key")
    return key, scope or None


def run(args) -> int:
    from srcreview.cli.commands._multirev import (
        RevisionReviewer,
        color_from_args,
        load_recipe_arg,
        load_rules_arg,
        progress_display,
    )
    from srcreview.core.errors import EXIT_INCOMPLETE, EXIT_OK, UsageError
    from srcreview.history.bisect import Question, bisect, summarize
    from srcreview.report import bisection as report

    if not (args.rule or args.knob):
        raise UsageError("give --rule RULE (optionally with --knob KEY) or --knob KEY[@SCOPE]")
    key, scope = parse_knob(args.knob)
    revs = revisions_from_args(args)
    rules = load_rules_arg(args)
    if args.rule and args.rule not in {r.id for r in rules}:
        raise UsageError(f"--rule: unknown rule {args.rule!r} (see `srcreview rules list`)")
    recipe = load_recipe_arg(args.recipe, args)
    question = Question(rule=args.rule, knob=key, scope=scope)
    expected = len(revs) if args.exhaustive else min(len(revs), 2 + max(1, (len(revs) - 1).bit_length()))
    with progress_display(total=expected) as (step, download):
        reviewer = RevisionReviewer(recipe, rules, source=args.source, provider=args.provider,
                                    on_step=step, download=download)
        result = bisect(revs, lambda rev: question.verdict(reviewer.review(rev)), exhaustive=args.exhaustive)
    outcome = summarize(question, result, reviewer.review, recipe=recipe.path)
    if args.format == "json":
        sys.stdout.write(report.render_json(outcome))
    else:
        sys.stdout.write(report.render_text(outcome, verbose=args.verbose, color=color_from_args(args)))
    return EXIT_INCOMPLETE if outcome.incomplete else EXIT_OK
