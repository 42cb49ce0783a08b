"""Directories as `check` inputs: recipes of every format found by content (srcreview TOML, a
`vllm serve` script, a compose file, a vLLM YAML config), waiver files and other files skipped."""

from __future__ import annotations

import os
import shutil

import pytest
from gate_support import DATA

from srcreview.core.errors import UsageError
from srcreview.model.recipe.files import is_recipe_file, recipe_files

COMPOSE = ("services:\n  llm:\n    image: vllm/vllm-openai:v0.29.0\n"
           "    command: [\"some/model\", \"--max-model-len\", \"1024\"]\n")
WAIVERS = '[[waivers]]\nfingerprint = "0123456789abcdef"\nreason = "accepted"\nexpires = 2027-01-31\n'


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """The documented CI layout plus what a real repository holds beside it."""
    monkeypatch.chdir(tmp_path)
    recipes = tmp_path / "recipes"
    (recipes / "team").mkdir(parents=True)
    shutil.copy(DATA / "nested.toml", recipes / "nested.toml")
    shutil.copy(DATA / "toplevel.toml", recipes / "team" / "toplevel.toml")
    (recipes / "srcreview.toml").write_text(WAIVERS)
    (recipes / "pyproject.toml").write_text('[project]\nname = "not-a-recipe"\n')
    (recipes / "notes.md").write_text("[recipe]\n")
    (recipes / "engine-only.toml").write_text('[engine]\nmax_model_len = 1024\n')
    (recipes / "broken.toml").write_text('[recipe]\nname = "broken"\n\n[engine]\nmax_model_len = \n')
    (recipes / "serve.sh").write_text("#!/bin/sh\nvllm serve some/model --max-model-len 1024\n")
    (recipes / "team" / "compose.yml").write_text(COMPOSE)
    (recipes / "team" / "config.yaml").write_text("model: some/model\nmax_model_len: 1024\n")
    (recipes / "README.md").write_text("Run `vllm serve some/model` to start.\n")  # mentions, does not launch
    (recipes / "other-compose.yml").write_text("services:\n  cache:\n    image: redis:7\n")  # no vLLM service
    (recipes / ".cache").mkdir()
    shutil.copy(DATA / "nested.toml", recipes / ".cache" / "copy.toml")
    os.mkfifo(recipes / "fifo.toml")  # never opened: a reader would block
    (recipes / "team" / "loop").symlink_to(recipes, target_is_directory=True)  # never entered
    return recipes


def test_a_directory_gives_its_recipes_by_content(layout):
    found = recipe_files(["recipes"])
    assert [shown for _, shown in found] == ["recipes/broken.toml", "recipes/engine-only.toml",
                                             "recipes/nested.toml", "recipes/serve.sh", "recipes/team/compose.yml",
                                             "recipes/team/config.yaml", "recipes/team/toplevel.toml"]
    assert all(path.is_file() for path, _ in found)


def test_waiver_files_and_other_toml_are_not_recipes(layout):
    assert not is_recipe_file(layout / "srcreview.toml")
    assert not is_recipe_file(layout / "pyproject.toml")
    assert not is_recipe_file(layout / "notes.md")
    assert is_recipe_file(layout / "broken.toml"), "a recipe that does not parse is still a recipe (exit 65)"
    sidecar_named_recipe = layout / "team" / "srcreview.toml"
    sidecar_named_recipe.write_text((DATA / "nested.toml").read_text())
    assert not is_recipe_file(sidecar_named_recipe), "srcreview.toml is the waiver file, whatever it holds"


def test_files_are_taken_as_given_and_each_recipe_once(layout):
    found = recipe_files(["recipes/nested.toml", "recipes", "./recipes/nested.toml", "elsewhere.toml"])
    shown = [s for _, s in found]
    assert shown[0] == "recipes/nested.toml" and shown.count("recipes/nested.toml") == 1
    assert shown[-1] == "elsewhere.toml", "a missing file is left to the loader (exit 64 there)"


def test_an_absolute_directory_is_shown_relative(layout, tmp_path):
    assert [s for _, s in recipe_files([str(layout)])][0] == "recipes/broken.toml"
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    shutil.copytree(DATA, outside / "serving")
    try:
        assert {s for _, s in recipe_files([str(outside / "serving")])} == {"serving/nested.toml",
                                                                          "serving/toplevel.toml"}
    finally:
        shutil.rmtree(outside)


def test_a_directory_without_recipes_is_a_usage_error(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "srcreview.toml").write_text(WAIVERS)
    with pytest.raises(UsageError, match=r"^empty: no recipe found in this directory"):
        recipe_files(["empty"])


def test_cli_on_a_directory_reports_the_broken_recipe_before_any_source(layout, cli):
    result = cli("check", "recipes", "--rev", "0.29.0")
    assert result.code == 65 and result.out == ""
    assert result.err.startswith("srcreview: error: recipes/broken.toml:5: malformed TOML")
    (layout / "empty").mkdir()
    empty = cli("check", "recipes/empty", "--rev", "0.29.0")
    assert empty.code == 64 and "recipes/empty: no recipe found" in empty.err
