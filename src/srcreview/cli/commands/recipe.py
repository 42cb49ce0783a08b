"""`srcreview recipe show FILE`: the recipe(s) of a file as srcreview understood them.

Shows the format chosen for the file, the model, the pinned engine and its line, the
hardware, every engine setting with the line (and column) it was written on, the env and
the `vllm serve` options that are not engine settings. Command-line flags are mapped to
engine keys by the revision's own argument definitions: with `--rev` or a pin in the file
the source of that revision is obtained (as for `check`); `--raw` shows the flags as written.
"""

from __future__ import annotations

import argparse
import sys

from srcreview.core.errors import EXIT_OK


def add_parser(sub) -> None:
    from srcreview.cli.commands._common import add_hardware_override_arg, add_source_args

    p = sub.add_parser("recipe", help="show a recipe as srcreview understood it, with the line of each setting",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("show",))
    p.add_argument("file", metavar="FILE", help="a recipe in any format srcreview reads (FILE#NAME: one recipe "
                                               "of it, a compose service or a recipes-registry variant)")
    add_source_args(p)
    add_hardware_override_arg(p)
    p.add_argument("--raw", action="store_true", help="do not map command-line flags (no source needed)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output on stdout (default: text)")
    p.set_defaults(run=run)


def run(args) -> int:
    from srcreview.model.recipe.files import selected_recipes
    from srcreview.report import recipe as report

    out = []
    for recipe, _ in selected_recipes([args.file], args.hardware_override):
        label = None
        if recipe.flags and not args.raw and (args.rev or recipe.runtime.revision or recipe.runtime.version):
            recipe, label = _mapped(args, recipe)
        out.append(report.render_json(recipe) if args.format == "json" else report.render_text(recipe, label))
    sys.stdout.write("".join(out) if args.format == "json" else "\n".join(out))
    return EXIT_OK


def _mapped(args, recipe):
    from srcreview.cli.commands._common import tree_from_args
    from srcreview.index import Index
    from srcreview.index.cache import default_cache_dir
    from srcreview.vllm.flags import at_revision

    tree = tree_from_args(args, recipe, progress=sys.stderr.isatty())
    return at_revision(recipe, Index(tree, cache_dir=default_cache_dir())), tree.revision.label()
