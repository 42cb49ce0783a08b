"""Recipes as people write them (issue 24), reviewed against the real vLLM 0.29.0 source.

fixtures/recipe_forms/ holds one folder per form (the revision's parser forms, values the
shell decides, `--model`, `--config FILE`), each in every format it occurs in. Where a folder
has a `recipe.toml`, every other format must give its knob table; a value the shell decides
never makes a confirmed finding. 0.33.0 is a `releases` test.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from srcreview.index import Index
from srcreview.model.recipe import load_recipes, read_recipes
from srcreview.vllm.argv_forms import parser_forms
from srcreview.vllm.flags import at_revision

ROOT = Path(__file__).resolve().parents[2]
FORMS = ROOT / "fixtures" / "recipe_forms"
pytestmark = pytest.mark.network



def _taken(row) -> bool:
    """A key the engine takes: accepted, or undecided only because a start-up check reads it under a
    condition the recipe does not decide (here: the installed torch's version, issue 23)."""
    return row["status"] == "accepted" or (row["status"] == "undecided" and row["note"].startswith("start-up: "))

def _check(cli, path: str, *extra: str):
    result = cli("check", path, "--format", "json", "--fail-on", "none", *extra)
    assert result.code in (0, 2), result.err
    (review,) = json.loads(result.out)["reviews"]
    return result.code, review


def _table(review) -> dict:
    return {(k["key"], k["scope"]): k["status"] for k in review["knobs"]}


@pytest.fixture
def forms(tmp_path, monkeypatch, vllm_029):
    """fixtures/recipe_forms copied to the working directory (recipe paths are shown relative)."""
    shutil.copytree(FORMS, tmp_path / "forms")
    monkeypatch.chdir(tmp_path / "forms")
    return tmp_path / "forms"


@pytest.mark.parametrize("version", ["0.29.0", pytest.param("0.33.0", marks=pytest.mark.releases)])
def test_the_parsers_forms_are_read_from_the_pinned_parse_args(vllm_release, version, tmp_path):
    forms = parser_forms(Index(vllm_release(version), cache_dir=tmp_path / "facts"))
    assert forms.found and forms.where.startswith("vllm/utils/argparse_utils.py:")
    assert forms.optimization_flag == "--optimization-level" and forms.optimization_levels == {"0", "1", "2", "3"}
    assert forms.dotted and forms.dotted_json and forms.dotted_human_int and forms.list_suffix == "+"
    assert forms.underscores and forms.missing == ()


@pytest.mark.parametrize("version", ["0.29.0", pytest.param("0.33.0", marks=pytest.mark.releases)])
def test_short_dotted_and_underscored_flags_map_as_the_parser_rewrites_them(vllm_release, version, tmp_path):
    index = Index(vllm_release(version), cache_dir=tmp_path / "facts")
    text = ("vllm serve m -O3 -cc.pass_config.fuse_rope_kvcache=True -cc.custom_ops+=+silu_mul,-rms_norm \\\n"
            "  -cc.mode 3 --max_model_len 4096 -cc.max_cudagraph_capture_size=1k -cc.custom_ops+ none\n")
    (recipe,) = read_recipes(text, "serve.sh")
    mapped = at_revision(recipe, index)
    got = {s.key: (s.value, s.line, s.written_as) for s in mapped.settings}
    assert got["optimization_level"] == ("3", 1, "--optimization-level")
    # json.loads("True") fails, human_readable_int too: the text, as parse_args leaves it
    assert got["compilation_config.pass_config.fuse_rope_kvcache"] == ("True", 1, "-cc.pass_config.fuse_rope_kvcache")
    assert got["compilation_config.custom_ops"][0] == ["+silu_mul", "-rms_norm", "none"]  # `+` lists concatenate
    assert got["compilation_config.mode"] == (3, 2, "-cc.mode")
    assert got["compilation_config.max_cudagraph_capture_size"][0] == 1000  # 1k, vLLM's human-readable int
    assert got["max_model_len"] == (4096, 2, "--max-model-len")
    assert mapped.notes == () and mapped.open == ()


@pytest.mark.parametrize("version", ["0.29.0", pytest.param("0.33.0", marks=pytest.mark.releases)])
def test_a_json_flag_and_dotted_arguments_to_another_written_key_keep_the_last(vllm_release, version, tmp_path):
    index = Index(vllm_release(version), cache_dir=tmp_path / "facts")
    text = ("vllm serve m --compilation-config '{\"mode\": 3}' -cc.mode=0 \\\n"
            "  --compilation-config.max_cudagraph_capture_size=8\n")
    (recipe,) = read_recipes(text, "serve.sh")
    mapped = at_revision(recipe, index)
    # parse_args appends `-cc {"mode": 0}` then `--compilation-config {"max_...": 8}`; argparse keeps the last
    assert {s.key: s.value for s in mapped.settings} == {"compilation_config.max_cudagraph_capture_size": 8}
    assert [(n.what, n.line) for n in mapped.notes] == [("--compilation-config", 1), ("-cc", 1)]


@pytest.mark.parametrize("folder", ["short_dotted", "model_option", "config_file", "parser_types", "env_vars"])
def test_every_format_of_a_form_reviews_like_its_toml_recipe(forms, cli, folder):
    _, reference = _check(cli, f"{folder}/recipe.toml")
    expected = _table(reference)
    assert ("model", "engine") not in expected and reference["recipe"]["model"] == "m"
    others = sorted(p.name for p in (forms / folder).iterdir()
                    if p.is_file() and p.name not in ("recipe.toml", "serve.env", "escape.sh", "missing.sh", "mixed.sh"))
    assert len(others) >= 3
    for name in others:
        code, review = _check(cli, f"{folder}/{name}")
        assert code == 0, (name, review["incomplete"])
        assert _table(review) == expected, name
        assert review["recipe"]["model"] == "m", name
        assert not [f for f in review["findings"] if f["classification"] == "confirmed"], name


def test_short_and_dotted_forms_make_no_engine_key_exists_problem(forms, cli):
    for name in ("serve.sh", "Dockerfile", "compose.yml", "config.yaml"):
        _, review = _check(cli, f"short_dotted/{name}")
        keys = {k["key"]: k for k in review["knobs"]}
        assert keys["optimization_level"]["status"] == "accepted", name  # -O3: not an unknown "O3"
        assert "O3" not in keys and "cc.pass_config.fuse_rope_kvcache" not in keys, name
        assert _taken(keys["compilation_config.use_inductor_graph_partition"]), name
        assert not [f for f in review["findings"] if f["rule"] == "engine-key-exists"
                    and f["classification"] == "confirmed"], name


def test_mixing_cc_and_compilation_config_keeps_only_the_last_written_key(forms, cli, vllm_029):
    _, review = _check(cli, "short_dotted/mixed.sh")
    keys = {k["key"]: k for k in review["knobs"]}
    assert "compilation_config.pass_config.fuse_rope_kvcache" not in keys
    assert _taken(keys["compilation_config.use_inductor_graph_partition"])
    replaced = keys["--compilation-config"]
    assert replaced["status"] == "ignored" and replaced["recipe_line"] == 5
    assert "argparse keeps the last value" in replaced["note"]
    (anchor,) = replaced["evidence"]
    assert anchor["path"] == "vllm/utils/argparse_utils.py" and anchor["symbol"] == "parse_args"
    assert anchor["url"].endswith(f"#L{anchor['start_line']}-L{anchor['end_line']}")
    source = vllm_029.read(anchor["path"])
    lines = (source.decode() if isinstance(source, bytes) else source).splitlines()
    assert lines[anchor["start_line"] - 1].strip().startswith("def parse_args(")  # the lines it describes


def test_values_the_shell_decides_are_undecided_never_confirmed(forms, cli):
    for name, certain, unknown in (
            ("serve.sh", {"data_parallel_rpc_port": 8001},
             {"max_model_len", "kv_cache_dtype", "max_num_seqs", "max_num_batched_tokens"}),
            ("Dockerfile", {"data_parallel_rpc_port": 8001}, {"kv_cache_dtype"}),
            ("compose.yml", {"kv_cache_dtype": "fp8"}, {"data_parallel_rpc_port", "max_model_len"})):
        _, review = _check(cli, f"shell_values/{name}")
        assert not [f for f in review["findings"] if f["classification"] == "confirmed"], name
        knobs = {k["key"]: k for k in review["knobs"]}
        for key, value in certain.items():
            assert knobs[key]["value"] == value and knobs[key]["status"] in ("accepted", "applied"), (name, key)
        for key in unknown:
            assert knobs[key]["status"] == "undecided" and "shell-value" in knobs[key]["tags"], (name, key)
            assert "decides" in knobs[key]["note"] or "compose substitutes" in knobs[key]["note"], (name, key)
        plausible = {f["knobs"][0] for f in review["findings"] if f["rule"] == "engine-value-admitted"}
        assert plausible == unknown, name


def test_default_of_a_shell_variable_is_said_not_assumed(forms, cli):
    _, review = _check(cli, "shell_values/serve.sh")
    row = next(k for k in review["knobs"] if k["key"] == "max_model_len")
    assert row["value"] == "${MAX_LEN:-4096}" and "'4096' when the variable is unset" in row["note"]


def test_a_config_file_that_cannot_be_read_makes_the_review_incomplete(forms, cli):
    for name, words in (("escape.sh", "is refused: it leaves the recipe's directory tree"),
                        ("missing.sh", "cannot be read: no such config file")):
        code, review = _check(cli, f"config_file/{name}")
        assert code == 2, name
        assert any(words in text for text in review["incomplete"]), (name, review["incomplete"])
        row = next(k for k in review["knobs"] if k["key"].startswith("--config "))
        assert row["status"] == "undecided" and words in row["note"] and row["recipe_line"] == 3


def test_config_file_flags_come_before_the_command_line_and_name_their_file(forms, vllm_029, tmp_path):
    (recipe,) = load_recipes("config_file/launch.sh")
    assert recipe.files == ("configs/serve.yaml",)
    mapped = at_revision(recipe, Index(vllm_029, cache_dir=tmp_path / "facts"))
    got = {s.key: (s.value, s.line, s.written_as) for s in mapped.settings}
    assert got["max_model_len"] == (8192, 3, "--max-model-len")  # the command line wins over the file's 4096
    assert got["kv_cache_dtype"] == ("fp8", 3, "--kv-cache-dtype (configs/serve.yaml:2)")
    assert got["enable_prefix_caching"] == (False, 3, "--enable-prefix-caching (configs/serve.yaml:4)")
    assert [(o.flag, o.value) for o in mapped.server_options] == [("--config", "configs/serve.yaml")]


FORMS_BLOCK = re.compile(r"(<!-- generated: recipe-forms check (?P<path>\S+) -->\n)(?P<body>.*?)(<!-- end generated -->)",
                         re.S)


def test_readme_shows_each_form_as_the_tool_prints_it(vllm_029, cli, monkeypatch):
    """README.md "Recipes you already have": each block is `srcreview check PATH` now (text, 100
    columns). Regenerate with `SRCREVIEW_UPDATE_REPORTS=1 pytest tests/e2e/test_recipe_forms_real_vllm.py`."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)

    def output(match) -> str:
        path = match.group("path")
        result = cli("check", path, "--color", "never", "--fail-on", "none")
        assert result.code in (0, 2), result.err
        shown = f"$ srcreview check {path}\n{result.out}" + (f"(exit {result.code})\n" if result.code else "")
        return match.group(1) + f"```text\n{shown}```\n" + match.group(4)

    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    assert len(FORMS_BLOCK.findall(text)) == 4
    fresh = FORMS_BLOCK.sub(output, text)
    if fresh != text and os.environ.get("SRCREVIEW_UPDATE_REPORTS"):
        readme.write_text(fresh, encoding="utf-8")
        text = fresh
    assert fresh == text, "stale recipe-forms outputs: SRCREVIEW_UPDATE_REPORTS=1 pytest tests/e2e/test_recipe_forms_real_vllm.py"


def test_words_the_shell_may_split_leave_the_flags_before_them_open(forms, cli, tmp_path):
    _, review = _check(cli, "shell_values/extra_args.sh")
    knobs = {k["key"]: k for k in review["knobs"]}
    assert knobs["$EXTRA_ARGS"]["status"] == "undecided" and knobs["$EXTRA_ARGS"]["recipe_line"] == 4
    for key in ("max_model_len", "kv_cache_dtype"):
        assert knobs[key]["status"] == "undecided" and "$EXTRA_ARGS (line 4) may set it again" in knobs[key]["note"]
    assert not [f for f in review["findings"] if f["classification"] == "confirmed"]
    # the same command without the words the shell adds: fp9 is refused, for certain
    (forms / "shell_values" / "plain.sh").write_text("#!/bin/sh\n# srcreview: version=0.29.0\n"
                                                     "vllm serve m --max-model-len 4096 --kv-cache-dtype fp9\n")
    _, plain = _check(cli, "shell_values/plain.sh")
    assert [(f["rule"], f["classification"]) for f in plain["findings"] if f["classification"] == "confirmed"] == [
        ("engine-value-admitted", "confirmed")]
