"""What vLLM's config loader may store on the model's config beyond config.json
(srcreview.vllm.models), read from a loader written here: a store made only when config.json
states the name or the model has a file is gated on that file; any other store keeps the name
open."""

from __future__ import annotations

from recipe_support import module_index

from srcreview.vllm.models import _loader_facts

LOADER = '''
    _CONFIG_REGISTRY = {}


    def file_or_path_exists(model, name, revision):
        return False


    def get_hf_file_to_dict(name, model, revision):
        return {}


    def get_config(model, revision, config, config_dict):
        quantization_config = config_dict.get("quantization_config", None)
        if quantization_config is None and file_or_path_exists(model, "hf_quant_config.json", revision):
            quantization_config = get_hf_file_to_dict("hf_quant_config.json", model, revision)
        if quantization_config is not None:
            config.quantization_config = quantization_config
        sparsity = config_dict.get("sparsity_config")
        if sparsity is None:
            sparsity = {"kind": "dense"}
        if sparsity is not None:
            config.sparsity_config = sparsity
        config.loaded_from = model
        return config


    def get_other_config(config, config_dict):
        pruning = config_dict.get("pruning_config", None)
        if pruning is None and file_or_path_exists(config, "pruning.json", None):
            pruning = get_hf_file_to_dict("pruning.json", config, None)
        if pruning is not None:
            config.pruning_config = pruning
        config.update({"pruning_config": {}})  # named again in a table: may be set whatever the files
        return config
'''


def test_a_store_gated_on_a_model_file_names_that_file(tmp_path):
    own, names = _loader_facts(module_index(tmp_path, {"vllm/transformers_utils/config.py": LOADER}))
    assert own == frozenset()
    kind, gate, why = names["quantization_config"]
    # (a Mistral-format checkpoint's adapter may add it to the dict read: params.json must be absent too)
    assert (kind, gate) == ("file", ("hf_quant_config.json", "params.json")) and "config.py:" in why
    # assigned a value of its own when config.json does not state it: always stored
    assert isinstance(names["sparsity_config"], str)
    assert isinstance(names["loaded_from"], str)
    # a gated store whose name a table elsewhere in the loader names too stays open
    assert isinstance(names["pruning_config"], str)


ALIASES = '''
    FIELD_ALIASES = {"num_experts": ("num_experts", "n_routed_experts"), "num_heads": ("n_head",)}
    RENAMED = {"num_layers": ("n_layer",)}
'''


def test_a_table_only_looked_up_by_constant_keys_names_nothing_the_loader_sets(tmp_path):
    # FIELD_ALIASES is read as FIELD_ALIASES["..."] only: its keys are looked up, never iterated;
    # RENAMED is iterated elsewhere: each key may be a name something sets
    index = module_index(tmp_path, {
        "vllm/transformers_utils/config.py": ALIASES,
        "vllm/convertor.py": "from vllm.transformers_utils.config import FIELD_ALIASES, RENAMED\n\n\n"
                             "def experts(cfg):\n    return FIELD_ALIASES[\"num_experts\"]\n\n\n"
                             "def rename(cfg):\n    for key in RENAMED:\n        setattr(cfg, key, 0)\n",
    })
    _, names = _loader_facts(index)
    assert "num_experts" not in names and "num_heads" not in names
    assert isinstance(names["num_layers"], str)
