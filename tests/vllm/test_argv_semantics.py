"""What the revision's own parser does with a command-line word, read from a fixture tree shaped
like vLLM's (fixtures/vllm_snippets/serve_parser_kwargs): per-name `type=` functions run by the
safe evaluator, list flags, argparse's abbreviations, and a flag that hands the command elsewhere."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from srcreview.core.errors import DataError
from srcreview.index import Index
from srcreview.model.recipe import read_recipes
from srcreview.model.recipe.shell_values import UnknownValue
from srcreview.model.revision import Revision
from srcreview.source.base import DirectoryTree
from srcreview.vllm.argv_forms import diverting_flags, parser_forms
from srcreview.vllm.flags import at_revision, flag_table

TREE = Path(__file__).resolve().parents[2] / "fixtures" / "vllm_snippets" / "serve_parser_kwargs"


def _index(root: Path = TREE) -> Index:
    return Index(DirectoryTree(root, Revision(requested="fixture", sha="1234567ab" + "0" * 31), provider="fixture"))


def _mapped(command: str, root: Path = TREE):
    (recipe,) = read_recipes(f"#!/bin/sh\nvllm serve m {command}\n", "serve.sh")
    return at_revision(recipe, _index(root))


def test_per_name_type_functions_are_read_from_compute_kwargs():
    table = flag_table(_index())
    assert table["--max-model-len"].parser_type == "vllm.utils.argparse_utils.human_readable_int_or_auto"
    assert table["--max-num-batched-tokens"].parser_type == "vllm.utils.argparse_utils.human_readable_int"
    assert table["--tensor-parallel-size"].parser_type is None  # int: typed as the annotation says
    assert table["--logits-processors"].many and not table["--tensor-parallel-size"].many


@pytest.mark.parametrize(("word", "value"), [("auto", -1), ("AUTO", -1), ("-1", -1), ("4096", 4096)])
def test_the_parsers_own_function_types_the_word(word, value):
    (setting,) = _mapped(f"--max-model-len {word}").settings
    assert setting.key == "max_model_len" and setting.value == value and type(setting.value) is int


@pytest.mark.parametrize(("word", "value"), [("1k", 1000), ("1K", 1024), ("8192", 8192)])
def test_a_suffix_read_with_a_regular_expression_is_typed(word, value):
    (setting,) = _mapped(f"--max-num-batched-tokens {word}").settings
    assert setting.value == value


def test_a_word_the_evaluator_cannot_type_is_unknown_not_a_string():
    # int("abc") raises inside human_readable_int: argparse would refuse it, but the evaluator
    # does not follow a builtin's exception, so the value is left unknown and no check refuses it
    (setting,) = _mapped("--max-num-batched-tokens abc").settings
    assert isinstance(setting.value, UnknownValue) and "human_readable_int()" in setting.value.reason


def test_a_list_field_with_a_union_item_takes_every_word_as_text():
    (setting,) = _mapped("--logits-processors pkg.mod:Proc other:Two").settings
    assert (setting.key, setting.value) == ("logits_processors", ["pkg.mod:Proc", "other:Two"])


def test_a_unique_prefix_is_the_option_argparse_takes():
    mapped = _mapped("--tensor-parallel 4 --no-enable-prefix")
    got = {s.key: (s.value, s.written_as) for s in mapped.settings}
    assert got == {"tensor_parallel_size": (4, "--tensor-parallel (abbreviates --tensor-parallel-size)"),
                   "enable_prefix_caching": (False, "--no-enable-prefix (abbreviates --no-enable-prefix-caching)")}
    assert parser_forms(_index()).abbreviations is True


def test_an_ambiguous_prefix_is_open_and_sets_nothing():
    mapped = _mapped("--enable-log --max-model-len 8")
    assert {s.key for s in mapped.settings} == {"max_model_len"}
    (item,) = mapped.open
    assert item.what == "--enable-log" and "--enable-log-outputs, --enable-log-requests" in item.reason
    assert "ambiguous" in item.reason


def test_abbreviations_are_not_assumed_where_the_tree_passes_allow_abbrev(tmp_path):
    root = tmp_path / "tree"
    shutil.copytree(TREE, root)
    (root / "vllm" / "entrypoints" / "cli" / "serve.py").write_text(
        "from vllm.utils.argparse_utils import FlexibleArgumentParser\n\n\n"
        "def make_parser():\n    return FlexibleArgumentParser(allow_abbrev=False)\n")
    mapped = _mapped("--tensor-parallel 4", root)
    assert mapped.settings == ()
    (item,) = mapped.open
    assert item.what == "--tensor-parallel" and "not settled" in item.reason
    assert parser_forms(_index(root)).abbreviations is None


def test_a_flag_the_entry_point_hands_elsewhere_makes_the_review_incomplete():
    assert diverting_flags(_index()) == {"--omni": "vllm/entrypoints/cli/main.py:8"}
    mapped = _mapped("--omni --max-model-len 8")
    (item,) = mapped.open
    assert item.what == "--omni" and item.incomplete and "vllm/entrypoints/cli/main.py:8" in item.reason
    assert {s.key for s in mapped.settings} == {"max_model_len"}


@pytest.mark.parametrize("model", ["{model_id: org/x}", "[a, b]"])
def test_a_yaml_model_that_is_not_a_name_is_a_data_error(model):
    (recipe,) = read_recipes(f"model: {model}\nmax-model-len: 8\n", "config.yaml")
    with pytest.raises(DataError, match="names the served model: it must be a model id or path"):
        at_revision(recipe, _index())


def test_an_escaped_space_is_an_extra_word_named_on_its_line():
    text = "#!/bin/sh\nvllm serve m \\\n  --max-model-len 8 \\ \n  --tensor-parallel-size 2\n"
    (recipe,) = read_recipes(text, "serve.sh")
    with pytest.raises(DataError, match=r"serve.sh:3: unexpected word ' '.*a backslash followed by a space"):
        at_revision(recipe, _index())
