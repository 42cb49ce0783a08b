"""Benchmark: a review is linear in the number of recipe settings.

    python bench/bench_recipe.py

Reviews recipes of 250, 500, 1,000 and 2,000 (MAX_SETTINGS) engine settings with the shipped
rules over the `rules_spec_decode` fixture and prints seconds per run and the ratio of each
to the previous size: about 2.0 when doubling is linear (it was about 4 when the knob table
and `Recipe.setting` scanned every setting for each one).
"""

from __future__ import annotations

import time
from pathlib import Path

from srcreview.engine.run import review
from srcreview.model.recipe import MAX_SETTINGS, parse_recipe
from srcreview.model.revision import Revision
from srcreview.rules.loader import load_rules
from srcreview.source.base import DirectoryTree

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "vllm_snippets" / "rules_spec_decode"


def run(count: int, rules) -> float:
    text = '[recipe]\nname = "bench"\n[engine]\n' + "".join(f"unknown_knob_{i} = {i}\n" for i in range(count))
    recipe = parse_recipe(text, "bench.toml")
    tree = DirectoryTree(FIXTURE, Revision(requested="fixture", sha="0" * 40), provider="fixture")
    start = time.perf_counter()
    result = review(recipe, tree, rules=rules)
    elapsed = time.perf_counter() - start
    assert len(result.knobs) == count
    return elapsed


def main() -> None:
    rules = load_rules()
    run(50, rules)  # warm imports
    previous = None
    for count in (MAX_SETTINGS // 8, MAX_SETTINGS // 4, MAX_SETTINGS // 2, MAX_SETTINGS):
        seconds = min(run(count, rules) for _ in range(3))
        ratio = f"  x{seconds / previous:.2f} for x2 settings" if previous else ""
        print(f"{count:>6} settings: {seconds:7.3f} s{ratio}")
        previous = seconds


if __name__ == "__main__":
    main()
