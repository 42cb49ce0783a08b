"""`srcreview check RECIPE --rev REV`: review a recipe against the pinned vLLM source."""

from __future__ import annotations

import argparse
import sys

from srcreview.errors import EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser("check", help="review recipe(s) against the pinned vLLM source",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("recipes", nargs="+", metavar="RECIPE", help="recipe TOML file(s)")
    p.add_argument("--rev", help="vLLM release (0.29.0) or commit (98dff2a); default: the recipe's pin")
    p.add_argument("--source", metavar="PATH", help="local vLLM git checkout, unpacked sdist directory or sdist archive")
    p.add_argument("--provider", default="auto",
                   choices=["auto", "local", "registry", "github", "git"], help="where to obtain the source (default: auto)")
    p.set_defaults(run=run)


def run(args) -> int:
    from srcreview.recipe import load_recipe

    for path in args.recipes:
        recipe = load_recipe(path)
        print(f"{recipe.path}: {recipe.name}: {len(recipe.settings)} engine settings", file=sys.stdout)
    return EXIT_OK
