"""Recipes and source trees built one way for every test, so a new test calls these instead of
writing its own copy.

`build_recipe` makes the `Recipe` the TOML reader would give for `[engine]` settings (one line
each, in key order, from line 1) and `[env]` variables; `fixture_tree` is a source tree over a
fixture directory (its overlay materialized) at the fixed fixture commit; `module_index` writes
a few modules given as text (the one-line interpreter cases) and indexes them. Recipes read from
text or files go through the real reader (`parse_recipe`, `load_recipe`) in the tests
themselves: there the text is what is tested.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from conftest import DEMO_RECIPE  # noqa: F401 - the demo recipe every CLI test runs, one path
from fixture_repos import FIXTURES

from srcreview.engine.examples import FIXTURE_SHA
from srcreview.hfconfig.facts import ModelFacts
from srcreview.index import Index
from srcreview.model.recipe import EnvVar, Hardware, Recipe, RecipeInfo, Setting
from srcreview.model.revision import Revision
from srcreview.source.base import DirectoryTree
from srcreview.source.overlays import materialize

RTX_5090 = "NVIDIA GeForce RTX 5090"


def setting_rows(settings: dict) -> tuple[Setting, ...]:
    """`[engine]` rows: one per key, in key order, on lines 1, 2, ...; written as the key."""
    return tuple(Setting(key=k, value=v, line=n, written_as=k) for n, (k, v) in enumerate(sorted(settings.items()), 1))


def build_recipe(settings: dict | None = None, *, env: dict | None = None, env_line: int = 50,
                 name: str = "case", model: str | None = None, model_config: dict | None = None,
                 path: str = "recipe.toml", gpu: str = RTX_5090, capability: str | None = "12.0") -> Recipe:
    """A recipe of these settings and environment variables (the first on `env_line`), on this
    GPU; `model_config` is the `config.json` of `model` as the recipe states it."""
    rows = setting_rows(settings or {})
    envs = tuple(EnvVar(name=k, value=v, line=env_line + n) for n, (k, v) in enumerate(sorted((env or {}).items())))
    models = (ModelFacts(source="recipe", ref=model, documents={"config.json": model_config}),) if model_config else ()
    return Recipe(path=path, info=RecipeInfo(name=name, model=model), settings=rows, env=envs, models=models,
                  hardware=Hardware(gpu=gpu, compute_capability=capability))


def fixture_tree(fixture: str | Path, *, sha: str = FIXTURE_SHA) -> DirectoryTree:
    """The source tree of fixtures/vllm_snippets/<fixture> (or of a directory), overlay applied."""
    root = FIXTURES / fixture if isinstance(fixture, str) else fixture
    return DirectoryTree(materialize(root), Revision(requested="fixture", sha=sha), provider="fixture")


def module_index(root: Path, files: dict[str, str], *, sha: str = FIXTURE_SHA) -> Index:
    """The Index of `files` (path -> source, dedented) written under `root`; every directory on
    the way is a package (an empty `__init__.py` unless given)."""
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"))
        for package in target.relative_to(root).parents:
            if package != Path(".") and not (root / package / "__init__.py").exists():
                (root / package / "__init__.py").write_text("")
    return Index(DirectoryTree(root, Revision(requested="fixture", sha=sha), provider="fixture"))



def compose_text(service: str) -> str:
    """A compose file with one vLLM service (the nested-Triton MTP recipe as a command list)."""
    return f"""\
# srcreview: gpu='NVIDIA GeForce RTX 5090' compute_capability=12.0
services:
  {service}:
    image: vllm/vllm-openai:v0.29.0
    environment:
      VLLM_USE_V2_MODEL_RUNNER: "1"
    command:
      - some/model
      - --kv-cache-dtype=fp8_per_token_head
      - --speculative-config
      - '{{"method": "mtp", "num_speculative_tokens": 3, "attention_backend": "TRITON_ATTN"}}'
"""


def marked_line(tree: str, path: str, label: str) -> int:
    """The line of a fixture tree's file that ends with `# mark: label`."""
    lines = (FIXTURES / tree / path).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.rstrip().endswith(f"# mark: {label}"))


def construction_raises(tree: str, settings: dict) -> dict[tuple[str, int], str]:
    """(file, line) of every raise the construction walk of a fixture tree reaches under
    `settings` (config paths and runtime keys) -> "certain" or "open"."""
    from srcreview.interp.interpreter import analyzer
    from srcreview.vllm.construction import open_site
    from srcreview.vllm.runtime import config_bindings

    index = Index(fixture_tree(tree))
    built = analyzer(index, config_bindings(index, settings)).prepare()
    assert built.built
    found = {}
    for rejection in built.rejections:
        found[open_site(rejection)[:2]] = "certain"
    for rejection in built.open_raises:
        found.setdefault(open_site(rejection)[:2], "open")
    return found
