"""vllm-project/recipes model YAML as recipes: one per variant (`file.yaml#variant`, with
`@key` for a hardware override), composed in the site's order, each word on its YAML line.

The fixtures in fixtures/recipes_registry/ are written for these tests; expected lines are
found in the fixture's own text, never typed in.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from srcreview.core.errors import DataError, UsageError
from srcreview.model.recipe import detect, load_recipes, read_recipes
from srcreview.model.recipe.files import is_recipe_file, recipe_files, selected_recipes

REGISTRY = Path(__file__).resolve().parents[2] / "fixtures" / "recipes_registry"
LAYERED = REGISTRY / "layered.yaml"


def line_of(text: str, needle: str, after: str = "") -> int:
    """The 1-based line of the first `needle` at or after the first line holding `after`."""
    lines = text.splitlines()
    start = next(n for n, line in enumerate(lines) if after in line) if after else 0
    return next(n for n, line in enumerate(lines) if n >= start and needle in line) + 1


def argv(recipe) -> list[str]:
    """The words after the model, as the recipe holds them (flag, then its values)."""
    words = []
    for flag in recipe.flags:
        words.append(flag.flag)
        words.extend(str(v) for v in flag.following)
    return words


def by_path(recipes) -> dict:
    return {r.path.partition("#")[2]: r for r in recipes}


def test_every_variant_is_one_recipe_named_by_the_file_and_the_variant():
    recipes = by_path(load_recipes(LAYERED, "layered.yaml"))
    assert set(recipes) == {"default", "fp8"}
    assert {r.format for r in recipes.values()} == {"recipes-registry"}
    assert recipes["default"].info.model == "example/layered-7b"
    assert recipes["fp8"].info.model == "example/layered-7b-fp8"  # the variant's model_id
    assert all(r.source_file == "layered.yaml" for r in recipes.values())


def test_the_command_is_composed_in_the_sites_order_the_last_of_a_flag_winning():
    text = LAYERED.read_text()
    fp8 = by_path(load_recipes(LAYERED, "layered.yaml"))["fp8"]
    # base_args, the variant's extra_args, the TP size, strategy_overrides, then the default features;
    # --max-model-len of base_args is replaced by the variant's, in the variant's place
    assert argv(fp8) == ["--trust-remote-code", "--max-model-len", "16384", "--kv-cache-dtype", "fp8",
                         "--tensor-parallel-size", "1", "--enable-prefix-caching",
                         "--enable-auto-tool-choice", "--tool-call-parser", "hermes",
                         "--reasoning-parser", "deepseek_r1"]
    lines = {f.flag: f.line for f in fp8.flags}
    assert lines["--max-model-len"] == line_of(text, '"--max-model-len"', after="fp8:")
    assert lines["--trust-remote-code"] == line_of(text, '"--trust-remote-code"')
    assert lines["--tensor-parallel-size"] == line_of(text, "tp: 1")  # the variant's tp beats the strategy's
    assert lines["--enable-prefix-caching"] == line_of(text, '"--enable-prefix-caching"')
    # the column is the argument's own first character, inside its quotes
    column = {f.flag: f.column for f in fp8.flags}["--trust-remote-code"]
    assert text.splitlines()[lines["--trust-remote-code"] - 1][column - 1:].startswith("--trust-remote-code")


def test_opt_in_features_stay_off_and_the_strategy_tp_applies_without_a_variant_tp():
    text = LAYERED.read_text()
    default = by_path(load_recipes(LAYERED, "layered.yaml"))["default"]
    words = argv(default)
    assert "--speculative-config" not in words  # spec_decoding is opt-in
    assert words[words.index("--tensor-parallel-size") + 1] == "2"
    assert {f.flag: f.line for f in default.flags}["--tensor-parallel-size"] == line_of(text, "tp: 2")
    assert words[:3] == ["--max-model-len", "32768", "--trust-remote-code"]


def test_env_is_base_env_then_the_variants_extra_env():
    text = LAYERED.read_text()
    recipes = by_path(load_recipes(LAYERED, "layered.yaml"))
    assert [(e.name, e.value, e.line) for e in recipes["default"].env] == [
        ("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "1", line_of(text, "VLLM_ALLOW_LONG_MAX_MODEL_LEN"))]
    assert [(e.name, e.value, e.line) for e in recipes["fp8"].env] == [
        ("VLLM_ALLOW_LONG_MAX_MODEL_LEN", "0", line_of(text, "VLLM_ALLOW_LONG_MAX_MODEL_LEN", after="extra_env"))]


def test_a_hardware_override_adds_its_layers_as_variant_at_key():
    text = LAYERED.read_text()
    recipes = by_path(load_recipes(LAYERED, "layered.yaml", hardware_override="blackwell"))
    assert set(recipes) == {"default", "fp8", "default@blackwell", "fp8@blackwell"}
    fp8 = recipes["fp8@blackwell"]
    words = argv(fp8)
    # the recipe's blackwell block, then the variant's (its --kv-cache-dtype wins, in its place)
    assert words.index("--max-num-seqs") < words.index("--kv-cache-dtype")
    assert words[words.index("--kv-cache-dtype") + 1] == "fp8_e4m3"
    assert words[words.index("--max-num-seqs") + 1] == "256"
    # a feature's generation block replaces its args
    assert words[words.index("--reasoning-parser") + 1] == "qwen3"
    assert {f.flag: f.line for f in fp8.flags}["--reasoning-parser"] == line_of(text, '"--reasoning-parser"',
                                                                                after="blackwell:")
    assert ("VLLM_ATTENTION_BACKEND", "FLASHINFER") in [(e.name, e.value) for e in fp8.env]
    # the variant without the override is unchanged
    assert argv(recipes["fp8"]) == argv(by_path(load_recipes(LAYERED, "layered.yaml"))["fp8"])
    # the override names the hardware, so the runtime profile does not assume the default container's
    assert (fp8.hardware.gpu, recipes["fp8"].hardware.gpu) == ("NVIDIA blackwell", None)
    assert "hardware override 'blackwell'" in fp8.hardware.gpu_from
    amd = by_path(load_recipes(LAYERED, "layered.yaml", hardware_override="amd"))["fp8@amd"]
    assert amd.hardware.gpu == "amd"  # no vendor srcreview maps to a platform: the profile leaves it open


def test_an_exact_gpu_key_applies_the_variants_block_right_after_its_extra_args():
    recipes = by_path(load_recipes(LAYERED, "layered.yaml", hardware_override="h100"))
    words = argv(recipes["fp8@h100"])
    assert words.index("--gpu-memory-utilization") == words.index("--kv-cache-dtype") + 2
    assert words.index("--gpu-memory-utilization") < words.index("--tensor-parallel-size")
    assert argv(recipes["default@h100"]) == argv(recipes["default"])  # only fp8 has an h100 block


def test_all_adds_every_key_the_file_has_and_an_unknown_key_is_a_usage_error_naming_them():
    recipes = by_path(load_recipes(LAYERED, "layered.yaml", hardware_override="all"))
    keys = {p.partition("@")[2] for p in recipes if "@" in p}
    assert keys == {"amd", "blackwell", "h100", "hopper"}
    with pytest.raises(UsageError) as raised:
        load_recipes(LAYERED, "layered.yaml", hardware_override="mi300x")
    assert raised.value.exit_code == 64
    assert "'mi300x'" in raised.value.message and "amd, blackwell, h100, hopper" in raised.value.message


def test_a_tp_the_file_does_not_state_is_an_open_row_on_the_variant():
    text = (REGISTRY / "tp_from_gpus.yaml").read_text()
    (recipe,) = load_recipes(REGISTRY / "tp_from_gpus.yaml", "tp_from_gpus.yaml")
    assert "--tensor-parallel-size" not in argv(recipe)
    (item,) = recipe.open
    assert item.what == "--tensor-parallel-size" and not item.incomplete
    assert item.line == line_of(text, "vram_minimum_gb") and "GPU count" in item.reason


def test_a_model_served_by_another_package_is_an_incomplete_recipe():
    text = (REGISTRY / "omni.yaml").read_text()
    (recipe,) = load_recipes(REGISTRY / "omni.yaml", "omni.yaml")
    assert recipe.flags == ()
    (item,) = recipe.open
    assert item.incomplete and item.line == line_of(text, "omni:") and "vllm-omni" in item.reason


def test_a_strategy_whose_own_file_adds_arguments_is_an_incomplete_recipe():
    (recipe,) = load_recipes(REGISTRY / "tep.yaml", "tep.yaml")
    (item,) = recipe.open
    assert item.incomplete and "single_node_tep" in item.what and "strategies/single_node_tep.yaml" in item.reason


def test_a_malformed_registry_file_is_invalid_naming_its_line():
    text = (REGISTRY / "malformed.yaml").read_text()
    with pytest.raises(DataError) as raised:
        load_recipes(REGISTRY / "malformed.yaml", "malformed.yaml")
    assert raised.value.message == f"malformed.yaml:{line_of(text, '- default')}: variants must be a mapping"
    with pytest.raises(DataError, match="names the model_id"):
        read_recipes("model:\n  base_args: []\nvariants:\n  default: {}\n", "m.yaml")


def test_detection_keeps_vllm_configs_and_compose_files_their_own():
    config = "model: some/model\nvariants: 2\nmax_model_len: 1024\n"  # `model:` a name: vLLM's --config
    assert detect(config, "c.yaml", "c.yaml")[0] == "vllm-yaml"
    compose = ("services:\n  llm:\n    image: vllm/vllm-openai:v0.29.0\n    command: [m]\n"
               "model:\n  model_id: x\nvariants:\n  default: {}\n")
    assert detect(compose, "compose.yml", "compose.yml")[0] == "compose"
    assert detect(LAYERED.read_text(), "layered.yaml", "layered.yaml")[0] == "recipes-registry"


def test_directories_find_registry_files_a_broken_one_included(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copytree(REGISTRY, tmp_path / "models")
    (tmp_path / "models" / "unparsable.yaml").write_text("model:\n  model_id: [\nvariants:\n")
    found = {shown for _, shown in recipe_files(["models"])}
    assert {"models/layered.yaml", "models/malformed.yaml", "models/unparsable.yaml"} <= found
    assert is_recipe_file(tmp_path / "models" / "unparsable.yaml")


def test_file_hash_name_selects_one_recipe_and_at_key_implies_the_override(tmp_path, monkeypatch):
    monkeypatch.chdir(REGISTRY)
    (only,) = selected_recipes(["layered.yaml#fp8"])
    assert only[0].path == "layered.yaml#fp8"
    (amd,) = selected_recipes(["layered.yaml#fp8@amd"])
    assert amd[0].path == "layered.yaml#fp8@amd" and "fp9" in argv(amd[0])
    with pytest.raises(UsageError, match=r"holds no recipe 'int4' \(it holds: default, fp8\)"):
        selected_recipes(["layered.yaml#int4"])
    config = tmp_path / "config.yaml"
    config.write_text("model: some/model\nmax_model_len: 1024\n")
    with pytest.raises(UsageError, match="applies to recipes-registry model files"):
        selected_recipes([str(config)], hardware_override="amd")


MODES = """\
model:
  model_id: "example/spec"
  base_args: []
features:
  spec_decoding:
    default_mode: mtp
    modes:
      mtp:
        args: ["--speculative-config", '{"method":"mtp","num_speculative_tokens":1}']
      dflash:
        variants: [dflash]
        args: ["--speculative-config", '{"method":"dflash"}']
        hardware: {hopper: unsupported}
opt_in_features: [spec_decoding]
variants:
  default: {}
  dflash:
    default_modes: {spec_decoding: dflash}
strategy_overrides:
  single_node_tp: {tp: {default: 1, hopper: 2}}
compatible_strategies: [single_node_tp]
hardware_overrides:
  hopper: {}
"""


def test_a_variants_default_mode_turns_an_opt_in_feature_on_where_the_mode_is_allowed():
    recipes = by_path(read_recipes(MODES, "spec.yaml", hardware_override="hopper"))
    assert "--speculative-config" not in argv(recipes["default"])  # opt-in, and no variant asks for it
    dflash = argv(recipes["dflash"])
    assert dflash[dflash.index("--speculative-config") + 1] == '{"method":"dflash"}'
    # on hopper the dflash mode is unsupported: the feature's first allowed mode runs instead
    hopper = argv(recipes["dflash@hopper"])
    assert '"mtp"' in hopper[hopper.index("--speculative-config") + 1]
    # a hardware-keyed tp: the key's entry, else `default`
    assert hopper[hopper.index("--tensor-parallel-size") + 1] == "2"
    assert dflash[dflash.index("--tensor-parallel-size") + 1] == "1"
    line = MODES.splitlines().index("  single_node_tp: {tp: {default: 1, hopper: 2}}") + 1
    assert {f.flag: f.line for f in recipes["dflash"].flags}["--tensor-parallel-size"] == line


def test_an_item_the_site_prints_as_written_is_split_as_the_shell_splits_it():
    # resolveCommand prints a flag's value shell-quoted and every other item as written:
    # "--max-model-len auto" reaches vLLM as two words, "a name with spaces" as one
    path = REGISTRY / "printed.yaml"
    text = path.read_text()
    recipe = by_path(load_recipes(path, "printed.yaml"))["default"]
    assert argv(recipe) == ["--max-model-len", "auto", "--served-model-name", "a name with spaces",
                            "--trust-remote-code", "--tensor-parallel-size", "1"]
    flag = next(f for f in recipe.flags if f.flag == "--max-model-len")
    row = text.splitlines()[flag.line - 1]
    assert row[flag.column - 1:].startswith("--max-model-len auto")
