"""`srcreview explain FINDING [--review SAVED.json | RECIPE [--rev REV]]`: why a finding says what it says.

FINDING is a finding id (e.g. spec-draft-attention-backend-ignored), its fingerprint (or a
unique prefix of 6+ hex digits) or a rule id with one finding. The finding comes from a
saved `srcreview check --format json` output (--review; --recipe PATH picks the recipe's
review when the output holds several), or from a fresh review of RECIPE at --rev (default:
the recipe's pin).

Prints the whole trace hop by hop with the anchored source lines (syntax-highlighted, read
from the exact revision of the review), the other evidence, the assumptions made on branches
the recipe does not decide, and why the classification is what it is: the rule's mapping from
check outcomes to classifications, its tags, and the rule's doc.

Exit codes: 0 explained, 2 source unavailable, 64 usage (unknown finding), 65 invalid review
JSON, recipe or rules.
"""

from __future__ import annotations

import argparse
import sys

EPILOG = """\
examples:
  srcreview check recipe.toml --rev 0.29.0 --format json > review.json
  srcreview explain spec-draft-attention-backend-ignored --review review.json
  srcreview check recipes/ --format json > reviews.json
  srcreview explain 8d46919d59eee406 --review reviews.json --recipe recipes/mtp3-nested-triton.toml
  srcreview explain 2120ffea59846dcc examples/thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml --rev 0.29.0
"""


def add_parser(sub) -> None:
    from srcreview.cli.commands._common import (
        add_model_config_arg,
        add_patch_args,
        add_source_args,
    )

    p = sub.add_parser("explain", help="a finding's trace hop by hop with source excerpts, and why it is classified so",
                       description=__doc__, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("finding", metavar="FINDING", help="finding id, fingerprint (or 6+ digit prefix), or rule id")
    p.add_argument("recipe", nargs="?", metavar="RECIPE", help="recipe TOML to review afresh (instead of --review)")
    p.add_argument("--review", metavar="JSON", help="a saved `srcreview check --format json` output")
    p.add_argument("--recipe", metavar="PATH", dest="recipe_path",
                   help="with --review: the recipe whose finding to explain (its path as the review shows it)")
    add_source_args(p)
    add_model_config_arg(p)
    add_patch_args(p)
    p.add_argument("--rules", metavar="DIR", help="rule directory (default: the rules shipped with srcreview)")
    p.add_argument("--context", type=int, default=2, metavar="N",
                   help="source lines shown around each anchor (default: 2)")
    p.add_argument("--no-source", action="store_true",
                   help="do not obtain the source: anchors without excerpts (works offline on a saved review)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output on stdout (default: text)")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="text: colors (default: auto)")
    p.set_defaults(run=run)


def run(args) -> int:
    from srcreview.audit.explain import explain, find_finding, load_saved_reviews
    from srcreview.cli.commands._gate_args import shown_path
    from srcreview.cli.commands._multirev import (
        color_from_args,
        load_recipe_arg,
        load_rules_arg,
    )
    from srcreview.core.errors import EXIT_OK, UsageError
    from srcreview.report import explain as report

    if bool(args.review) == bool(args.recipe):
        raise UsageError("give either --review SAVED.json or a RECIPE to review afresh")
    if args.context < 0:
        raise UsageError("--context: must be 0 or more")
    rules = load_rules_arg(args)
    tree = None
    if args.review:
        if args.rev:
            raise UsageError("--rev applies to a fresh review of RECIPE; a saved review has its own revision")
        reviews = load_saved_reviews(args.review, shown_path(args.review))
        review, finding = find_finding(reviews, args.finding, args.recipe_path)
        if not args.no_source:
            tree = _tree_of(args, review, _saved_layers(args, review))
    else:
        if args.recipe_path:
            raise UsageError("--recipe picks a review of a saved --review file; a fresh review is of RECIPE")
        recipe = load_recipe_arg(args.recipe, args)
        review, tree = _fresh_review(args, recipe, rules)
        review, finding = find_finding([review], args.finding)
        if args.no_source:
            tree = None
    rule = next((r for r in rules if r.id == finding.rule), None)
    explanation = explain(review, finding, rule, tree, context=args.context)
    if args.format == "json":
        sys.stdout.write(report.render_json(explanation))
    else:
        sys.stdout.write(report.render_text(explanation, color=color_from_args(args)))
    return EXIT_OK


def _tree_of(args, review, layers=()):
    """The source of a saved review's revision (a release by its version, else its commit)."""
    from srcreview.cli.commands._common import tree_from_args

    info = review.revision
    rev = info.version if info.version and _pin_matches(info) else info.sha
    return tree_from_args(argparse.Namespace(rev=rev, source=args.source, provider=args.provider),
                          progress=sys.stderr.isatty(), layers=layers)


def _saved_layers(args, review) -> list:
    """The layers a saved review was made with, given again by --patch/--overlay (checked by sha256):
    its anchors' lines are those of the patched source."""
    from srcreview.cli.commands._common import layers_from_args
    from srcreview.core.errors import UsageError

    layers = layers_from_args(args)
    wanted = [p.sha256 for p in review.patches]
    if [layer.sha256 for layer in layers] != wanted:
        named = ", ".join(p.file for p in review.patches) or "none"
        raise UsageError(f"the review was made with the layers {named}: give the same --patch/--overlay, in order "
                         "(or --no-source)")
    return layers


def _pin_matches(info) -> bool:
    from srcreview.core.errors import UsageError
    from srcreview.model.revision import resolve_rev

    try:
        return resolve_rev(info.version).matches_commit(info.sha)
    except UsageError:
        return False


def _fresh_review(args, recipe, rules):
    from srcreview.cli.commands._common import layers_from_args, tree_from_args
    from srcreview.engine.patched import mark_patched
    from srcreview.engine.run import review
    from srcreview.index import Index
    from srcreview.index.cache import default_cache_dir
    from srcreview.vllm.flags import at_revision

    tree = tree_from_args(args, recipe, progress=sys.stderr.isatty(),
                          layers=layers_from_args(args, recipe, args.recipe))
    index = Index(tree, cache_dir=default_cache_dir())
    return mark_patched(review(at_revision(recipe, index), tree, rules=rules, index=index), tree), tree
