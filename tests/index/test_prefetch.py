"""Parse ahead and the raw-text prefilter: fewer modules parsed, never a different review.

The prefilter of `find` may only drop files that cannot define the suffix; the parse-ahead
worker only fills the facts cache, so a review with it is the review without it, byte for byte.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from recipe_support import DEMO_RECIPE, fixture_tree

from srcreview.engine.run import anchor_names, review
from srcreview.index import Index
from srcreview.index.cache import FactsCache
from srcreview.index.prefetch import start
from srcreview.model.recipe import load_recipe
from srcreview.report import json as report_json
from srcreview.rules.loader import load_rules
from srcreview.source.base import DirectoryTree

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "vllm_snippets"
RECIPE = DEMO_RECIPE
SHA = "1234567890abcdef1234567890abcdef12345678"


def _tree(root: Path) -> DirectoryTree:
    return fixture_tree(root, sha=SHA)


def _write(root: Path, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def test_find_parses_only_files_that_can_define_the_suffix(tmp_path):
    _write(tmp_path, {
        "vllm/model_loader/__init__.py": "def get_model(cfg):\n    return cfg\n",
        # a local variable named like the qualifier owns nothing, a method of another class is not it
        "vllm/worker/runner.py": ("class Runner:\n    def get_model(self):\n        model_loader = 1\n"
                                  "        return model_loader\n"),
        # `VllmConfig = None` under TYPE_CHECKING is a constant, never the class
        "vllm/platforms/cuda.py": "if False:\n    VllmConfig = None\n",
        "vllm/config/vllm.py": "class VllmConfig:\n    x: int = 1\n",
    })
    index = Index(_tree(tmp_path))
    found = index.find("model_loader.get_model", kind="function")
    assert [s.qualname for s in found] == ["vllm.model_loader.get_model"]
    assert index.parsed == ["vllm/model_loader/__init__.py"]
    assert [s.qualname for s in index.find("VllmConfig", kind="class")] == ["vllm.config.vllm.VllmConfig"]
    assert "vllm/platforms/cuda.py" not in index.parsed
    # a constant is still found by an assignment
    assert [s.kind for s in index.find("VllmConfig", kind="constant")] == ["constant"]
    assert index.candidate_files("Runner.get_model", kind="function") == ["vllm/worker/runner.py"]


def test_grep_answers_are_remembered_per_revision_listing(tmp_path):
    root = tmp_path / "tree"
    _write(root, {"vllm/a.py": "x = 'mtp'\n", "tests/test_a.py": "def test_mtp():\n    assert 'mtp'\n",
                  "tests/test_b.py": "def test_other():\n    pass\n"})
    first = Index(_tree(root), cache_dir=tmp_path / "cache")
    assert first.grep_re(r"(?<![A-Za-z0-9_])mtp(?![A-Za-z0-9_])", prefix="tests/", literal="mtp") == ["tests/test_a.py"]
    again = Index(_tree(root), cache_dir=tmp_path / "cache")
    assert again.grep_re(r"(?<![A-Za-z0-9_])mtp(?![A-Za-z0-9_])", prefix="tests/", literal="mtp") == ["tests/test_a.py"]
    assert again.reviewed_before
    assert again._raw == {}  # remembered: no file was read
    assert again.grep("mtp", prefix="tests/") == ["tests/test_a.py"]  # not asked before: computed
    assert set(again._raw) == {"tests/test_a.py", "tests/test_b.py"}
    # a changed file changes the listing key: nothing stale is served
    (root / "tests" / "test_b.py").write_text("def test_mtp_too():\n    assert 'mtp'\n")
    changed = Index(_tree(root), cache_dir=tmp_path / "cache")
    assert changed.grep("mtp", prefix="tests/") == ["tests/test_a.py", "tests/test_b.py"]


def test_anchor_names_follow_the_review_order():
    names = anchor_names(load_recipe(RECIPE), load_rules())
    assert names[0] == "VllmConfig"
    assert not any(n.startswith("EngineArgs") for n in names)  # the review starts there itself
    # the draft rules name no symbol: they start from the runners' classes, then the model loader
    v1, v2 = "vllm.v1.worker.gpu_model_runner.GPUModelRunner", "vllm.v1.worker.gpu.model_runner.GPUModelRunner"
    assert names.index(v1) < names.index(v2) < names.index("model_loader.get_model")
    assert names.index("VllmConfig.use_v2_model_runner") < names.index(v1)  # the runner is decided first


def test_the_worker_caches_what_its_walk_parses_and_the_review_reads_it_back(tmp_path):
    index = Index(_tree(FIXTURES / "rules_spec_decode"), cache_dir=tmp_path)
    ahead = start(index, ["init_speculator"], lambda: index.find("model_loader.get_model"), min_tree_modules=0)
    if ahead is None:
        pytest.skip("parse ahead needs two cores and fork (Linux)")
    ahead.join(120)
    ahead.stop()
    cache = FactsCache(tmp_path)
    paths = index.candidate_files("model_loader.get_model", kind="function")
    assert paths and all(cache.has(index.tree.blob_id(p)) for p in paths)
    assert [s.qualname for s in index.find("model_loader.get_model")]  # read back from the cache:
    assert index.parsed == []  # this process parsed nothing


def test_a_review_with_parse_ahead_is_the_review_without(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(FIXTURES / "rules_spec_decode", root)
    recipe, rules = load_recipe(RECIPE), load_rules()

    plain = Index(_tree(root), cache_dir=tmp_path / "plain")
    expected = report_json.render([review(recipe, plain.tree, rules=rules, index=plain)])

    index = Index(_tree(root), cache_dir=tmp_path / "ahead")
    backwards = tuple(reversed(rules))
    ahead = start(index, anchor_names(recipe, rules), lambda: review(recipe, index.tree, rules=backwards, index=index),
                  min_tree_modules=0)
    if ahead is None:
        pytest.skip("parse ahead needs two cores and fork (Linux)")
    try:
        got = report_json.render([review(recipe, index.tree, rules=rules, index=index)])
    finally:
        ahead.stop()
    assert got == expected
    assert index.on_miss is None
    assert not list((tmp_path / "ahead").rglob(".tmp-*"))  # stopped, never mid-write
    # a second review at the revision needs no worker
    again = Index(_tree(root), cache_dir=tmp_path / "ahead")
    assert start(again, anchor_names(recipe, rules), lambda: None, min_tree_modules=0) is None
