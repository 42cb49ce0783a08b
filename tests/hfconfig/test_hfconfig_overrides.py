"""The recipe's own model values (`[model]`): parsed with their lines, laid over obtained facts."""

from __future__ import annotations

import json
import sys

import pytest
from hub_support import GEMMA4_ASSISTANT, QWEN35_MTP, write_model

from srcreview.core.errors import EXIT_DATA, DataError
from srcreview.hfconfig import (
    MODEL_CONFIG_UNKNOWN,
    ModelOverrides,
    apply_overrides,
    obtain_model_config,
    parse_model_overrides,
    parse_model_ref,
    unknown_facts,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RECIPE = """\
[recipe]
name = "qwen-mtp"
model = "./qwen"

[model]
model_type = "qwen3_5"
architectures = ["Qwen3_5MTP"]
num_nextn_predict_layers = 2

[model.text_config]
model_type = "qwen3_5_moe_text"
mtp_num_hidden_layers = 2
"""
LINES = {"model_type": 6, "architectures": 7, "num_nextn_predict_layers": 8, "text_config": 10,
         "text_config.model_type": 11}  # text_config.mtp_num_hidden_layers left out: its table's line


def _overrides() -> ModelOverrides:
    return parse_model_overrides(tomllib.loads(RECIPE)["model"], LINES, table_line=5, where="recipe.toml")


def test_a_model_table_becomes_dotted_overrides_with_their_lines():
    assert [(o.key, o.value, o.line) for o in _overrides().items] == [
        ("model_type", "qwen3_5", 6), ("architectures", ["Qwen3_5MTP"], 7), ("num_nextn_predict_layers", 2, 8),
        ("text_config.model_type", "qwen3_5_moe_text", 11), ("text_config.mtp_num_hidden_layers", 2, 10)]
    assert _overrides().get("num_nextn_predict_layers").line == 8 and _overrides().get("absent") is None


def test_overrides_replace_obtained_values_and_keep_the_files_as_read(tmp_path):
    write_model(tmp_path / "qwen", {"config.json": QWEN35_MTP})
    obtained = obtain_model_config(parse_model_ref("./qwen", base_dir=tmp_path))
    merged = apply_overrides(obtained, _overrides())

    assert merged.source == "local+recipe" and merged.known and merged.files == obtained.files
    assert merged.get("text_config.model_type") == "qwen3_5_moe_text" and merged.get("num_nextn_predict_layers") == 2
    assert merged.get("text_config.hidden_size") == 5120  # untouched siblings stay
    assert merged.origin("text_config.model_type") == "recipe line 11" and merged.origin("model_type") == "recipe line 6"
    assert merged.origin("text_config.hidden_size") == "config.json"
    assert [(o.key, o.replaced, o.replaces) for o in merged.overrides][:3] == [
        ("model_type", True, "qwen3_5"), ("architectures", True, ["Qwen3_5ForConditionalGeneration"]),
        ("num_nextn_predict_layers", True, 1)]
    assert obtained.get("text_config.model_type") == "qwen3_5_text"  # a pure function: the input is unchanged
    assert json.dumps(merged.to_json()) == json.dumps(apply_overrides(obtained, _overrides()).to_json())


def test_over_an_unknown_config_only_the_stated_keys_are_decided():
    unknown = unknown_facts("model config of org/private: the repository does not exist (HTTP 401)", ref="org/private",
                            kind="hub")
    merged = apply_overrides(unknown, _overrides())
    assert (merged.source, merged.known, merged.tags) == ("recipe", False, (MODEL_CONFIG_UNKNOWN,))
    assert merged.unknown_reason == unknown.unknown_reason
    assert merged.decided("model_type") and merged.get("model_type") == "qwen3_5"
    assert not merged.decided("text_config.hidden_size") and merged.origin("text_config.hidden_size") is None
    assert all(not o.replaced for o in merged.overrides)


def test_a_draft_model_takes_overrides_the_same_way(tmp_path):
    write_model(tmp_path / "assistant", {"config.json": GEMMA4_ASSISTANT})
    draft = obtain_model_config(parse_model_ref("assistant", base_dir=tmp_path))
    table = tomllib.loads('[text_config]\nnum_kv_shared_layers = 2\nlayer_types = ["sliding_attention"]\n')
    merged = apply_overrides(draft, parse_model_overrides(table, {"text_config": 1}, name="draft_model"))
    assert merged.get("model_type") == "gemma4_assistant" and merged.get("text_config.num_kv_shared_layers") == 2
    assert merged.get("text_config.layer_types") == ["sliding_attention"] and merged.origin("text_config.layer_types") == "recipe line 1"


def test_a_nested_key_under_a_null_or_scalar_value_makes_a_table(tmp_path):
    write_model(tmp_path / "m", {"config.json": {"model_type": "x", "text_config": None, "rope_scaling": 2}})
    facts = obtain_model_config(parse_model_ref("./m", base_dir=tmp_path))
    table = {"text_config": {"model_type": "y"}, "rope_scaling": {"type": "yarn"}}
    merged = apply_overrides(facts, parse_model_overrides(table, {}))
    assert merged.get("text_config") == {"model_type": "y"} and merged.get("rope_scaling") == {"type": "yarn"}
    assert [(o.key, o.replaced) for o in merged.overrides] == [("text_config.model_type", False), ("rope_scaling.type", False)]


def test_no_overrides_leaves_the_facts_as_they_are():
    facts = unknown_facts("none")
    assert apply_overrides(facts, ModelOverrides()) is facts and not ModelOverrides()


@pytest.mark.parametrize("toml, lines, message", [
    ('"a.b" = 1', {"a.b": 4}, "recipe.toml:4: [model] key 'a.b' is not a config key"),
    ("text_config = {}", {"text_config": 5}, "recipe.toml:5: [model.text_config] is empty"),
    ("released = 2024-01-01", {"released": 6}, "recipe.toml:6: [model] released: a date is not a JSON value"),
    ("rope_theta = nan", {}, "recipe.toml:2: [model] rope_theta: nan is not a JSON number"),
    ("scales = [1.0, inf]", {"scales": 3}, "recipe.toml:3: [model] scales: inf is not a JSON number"),
    ("a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q = 1", {"a": 7}, "recipe.toml:7: [model] nested deeper than 16 levels"),
])
def test_values_a_config_cannot_hold_are_invalid_recipe_data(toml, lines, message):
    with pytest.raises(DataError) as caught:
        parse_model_overrides(tomllib.loads(toml), lines, table_line=2, where="recipe.toml")
    assert caught.value.exit_code == EXIT_DATA and str(caught.value).startswith(message)
