"""Reviews of the example recipes at real vLLM 0.29.0, computed once per test session.

Shared by tests/e2e/test_check_real_vllm.py and tests/report/test_reports.py (the tree comes from the
`vllm_029` fixture, obtained by the project's own registry provider).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
NESTED = "examples/thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml"
BF16 = "examples/thinkingcap-awq-vllm029-5090-16k-mtp3-triton-bf16.toml"
FP8 = "examples/thinkingcap-awq-vllm029-5090-16k-mtp3-triton-fp8.toml"
RECIPES = (NESTED, BF16, FP8)

_INDEXES: dict[int, object] = {}


def index_for(tree):
    from srcreview.index import Index

    key = id(tree)
    if key not in _INDEXES:
        from srcreview.index.cache import default_cache_dir

        _INDEXES[key] = Index(tree, cache_dir=default_cache_dir())
    return _INDEXES[key]


def review_text(tree, text: str, shown: str):
    """The review of a recipe given as TOML text (for variants built in a test)."""
    from srcreview.engine.run import review
    from srcreview.model.recipe import parse_recipe

    return review(parse_recipe(text, shown), tree, index=index_for(tree), source_label="registry")


@cache
def _cached(tree_id: int, path: str):
    from srcreview.engine.run import review
    from srcreview.hfconfig.binding import with_model_configs
    from srcreview.model.recipe import load_recipe

    tree = _TREES[tree_id]
    recipe = with_model_configs(load_recipe(ROOT / path, display_path=path), base_dir=(ROOT / path).parent)
    return review(recipe, tree, index=index_for(tree), source_label="registry")


_TREES: dict[int, object] = {}


def review_of(tree, path: str):
    _TREES[id(tree)] = tree
    return _cached(id(tree), path)


REPORTS = ROOT / "reports"
COMBINED = "thinkingcap-awq-vllm029-5090-16k-mtp3"


def generate_reports(tree) -> dict[str, str]:
    """reports/ as `srcreview check RECIPE --format json|review` writes it: one JSON and one
    independent review per recipe, and the review of the three together (gate applied,
    default policy, no date)."""
    from srcreview.gate.policy import evaluate
    from srcreview.report import json as report_json
    from srcreview.report import review as report_review
    from srcreview.rules.loader import load_rules

    rules = load_rules()
    reviews = [review_of(tree, path) for path in RECIPES]
    gated = list(evaluate(reviews).reviews)
    files = {}
    for review in reviews:
        gate = evaluate([review])
        name = review.recipe.name
        files[f"{name}.json"] = report_json.render([review], gate=gate)
        files[f"{name}.review.json"] = report_review.render(gate.reviews[0], rules=rules)
    files[f"{COMBINED}.review.json"] = report_review.render(gated, rules=rules)
    return files
