"""The rule examples' harness (Fixit's one generic harness): each `[[examples]]` entry of a rule
runs the engine over its fixture, and what the rule concluded is held against what the example
expects. `srcreview rules test` and tests/rules/test_rules_examples.py both run it.
"""

from __future__ import annotations

from srcreview.core.errors import DataError
from srcreview.engine.run import run_rules
from srcreview.rules.loader import Rule

FIXTURE_SHA = "0" * 40


def example_recipe(rule: Rule, example):
    """The recipe an example describes: its settings, env and hardware, one line each."""
    from srcreview.model.recipe import EnvVar, Hardware, Recipe, RecipeInfo, Setting

    settings = tuple(Setting(key=k, value=v, line=n, written_as=k)
                     for n, (k, v) in enumerate(sorted(example.settings.items()), start=1))
    env = tuple(EnvVar(name=k, value=v, line=100 + n) for n, (k, v) in enumerate(sorted(example.env.items())))
    models = ()
    if example.model is not None:  # the target model's config, as a recipe's [model] table states it
        from srcreview.hfconfig.facts import ModelFacts

        models = (ModelFacts(source="recipe", ref=EXAMPLE_MODEL, documents={"config.json": dict(example.model)}),)
    return Recipe(path=f"examples/{rule.id}.toml", info=RecipeInfo(name=example.recipe_name,
                                                                    model=EXAMPLE_MODEL if models else None),
                  hardware=Hardware(**example.hardware), settings=settings, env=env, models=models)


EXAMPLE_MODEL = "example/model"


def run_example(rule: Rule, example, fixtures_root) -> list[str]:
    """Problems with one example (empty when the rule concludes what the example expects)."""
    from pathlib import Path

    from srcreview.model.revision import Revision
    from srcreview.source.base import DirectoryTree
    from srcreview.source.overlays import materialize

    root = Path(fixtures_root) / example.fixture
    if not root.is_dir():
        return [f"fixture {example.fixture!r} does not exist"]
    try:
        root = materialize(root)  # a variant written as an overlay of a base fixture
    except DataError as exc:
        return [exc.message]
    tree = DirectoryTree(root, Revision(requested="fixture", sha=FIXTURE_SHA), provider="fixture")
    result, applied = run_rules(example_recipe(rule, example), tree, rules=(rule,))
    problems = []
    observed = sorted({f.classification for f in result.findings if f.rule == rule.id})
    is_stale = any(s.rule == rule.id for s in result.stale_rules)
    if example.expect == "skipped":
        if rule.id in applied:
            problems.append(f"expected the rule not to apply, but it ran ({observed or 'no finding'})")
    elif example.expect == "stale":
        if not is_stale:
            problems.append(f"expected stale, got {observed or 'no finding'}")
    elif is_stale:
        problems.append(f"expected {example.expect}, but the rule is stale: "
                        + ", ".join(m for s in result.stale_rules for m in s.missing))
    elif rule.id not in applied:
        problems.append(f"expected {example.expect}, but the rule did not apply")
    elif example.expect == "none":
        if observed:
            problems.append(f"expected no finding, got {observed}")
    elif example.expect not in observed or (rule.for_each is None and len(observed) != 1):
        reasons = "; ".join(f.message for f in result.findings if f.rule == rule.id)
        problems.append(f"expected {example.expect}, got {observed or 'no finding'}"
                        + (f" ({reasons})" if reasons else ""))
    rows = {f"{k.key}@{k.scope}": k.status for k in result.knobs}
    for where, status in sorted(example.knob.items()):
        if rows.get(where) != status:
            problems.append(f"knob {where}: expected {status}, got {rows.get(where, 'no row')}")
    if result.incomplete:
        problems.append("incomplete: " + "; ".join(result.incomplete))
    return problems
