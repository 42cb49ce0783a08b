"""The library's front door: review recipes in a Workspace. The CLI, the benchmarks and the tests
call this; the CLI only builds the Workspace from its arguments and renders what comes back.

A Workspace says where each recipe's vLLM source comes from (the rev it is reviewed at, the
layers laid over it, how its tree is opened) and where parsed facts are cached. Reviewing many
recipes shares what they can: recipes pinned to the same revision with the same layers share the
tree and its index, and a forked worker parses ahead on the second core.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Workspace:
    """Where reviews come from (srcreview.cli.commands._common.workspace builds one from options)."""

    rev: Callable[[Any], str]  # recipe -> the rev it is reviewed at
    layers: Callable[[Any, Any], list]  # (recipe, its file or None) -> the patches and overlays over its tree
    open_tree: Callable[[Any, list], Any]  # (recipe, layers) -> its SourceTree, layers applied
    cache_dir: Path | None = None  # the parsed-facts cache (None: none)


def review_recipes(workspace: Workspace, recipes: Sequence, rules, files: Sequence | None = None) -> list[tuple]:
    """(review, source tree) of each recipe; recipes pinned to the same revision (with the same
    patches) share the tree and its index. `files`: the recipes' files, which their `[runtime]
    patches` are relative to."""
    from srcreview.engine.patched import mark_patched
    from srcreview.engine.run import anchor_names, review
    from srcreview.index import Index
    from srcreview.index.prefetch import start
    from srcreview.vllm.flags import at_revision

    planned = []  # (tree key, layers) of each recipe
    for n, recipe in enumerate(recipes):
        layers = workspace.layers(recipe, files[n] if files else None)
        planned.append(((workspace.rev(recipe), tuple(layer.sha256 for layer in layers)), layers))
    trees: dict[tuple, tuple[Any, Any]] = {}
    cache_dir = workspace.cache_dir  # handed through: the facts cache root
    reviews = []
    for n, (recipe, (key, layers)) in enumerate(zip(recipes, planned)):
        if key not in trees:
            tree = workspace.open_tree(recipe, layers)
            trees[key] = (tree, Index(tree, cache_dir=cache_dir))
        tree, index = trees[key]
        recipe = at_revision(recipe, index)  # command-line flags, as this revision defines them
        # the second core runs the same review with the rules in reverse order: it parses what
        # the review meets last while the review parses what it meets first
        ahead = start(index, anchor_names(recipe, rules),
                      partial(review, recipe, tree, rules=tuple(reversed(rules)), index=index))
        try:
            reviews.append((mark_patched(review(recipe, tree, rules=rules, index=index), tree), tree))
        finally:
            if ahead is not None:
                ahead.stop()
        # memory: no recipe's walks and no raw text after its review (what was found in the text
        # is kept, and on disk: a later recipe reads the files again only for a new question),
        # and no index after its tree's last recipe
        index.forget_analyses()
        index.forget_text()
        # its raw-text answers are known now: a next recipe here starts a worker only for anchors
        # not cached yet, and reads no tree for it
        index.reviewed_before = True
        if key not in [k for k, _ in planned[n + 1:]]:
            del trees[key]
    return reviews
