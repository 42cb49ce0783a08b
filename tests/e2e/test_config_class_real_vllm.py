"""The model's config class at real vLLM 0.29.0 (issue 23.3): a recipe that gives the transformers
version has names config.json does not state read from the config class's facts. The class is one
written here, transformers-shaped (never transformers' code), mapped to the model's `llama` type:
what becomes decided is what that class's source says, and nothing else."""

from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.network

BASE = '''
from typing import ClassVar

class PreTrainedConfig:
    attribute_map: ClassVar[dict] = {}
    is_encoder_decoder: bool = False

    def __post_init__(self, **kwargs):
        for key, value in kwargs.items():
            setattr(self, key, value)

    def get_text_config(self, decoder=None, encoder=None):
        decoder_possible_text_config_names = ("decoder", "generator", "text_config")
        encoder_possible_text_config_names = ("text_encoder",)
        possible_text_config_names = encoder_possible_text_config_names + decoder_possible_text_config_names
        valid = [n for n in possible_text_config_names if hasattr(self, n) and getattr(self, n) is not None]
        if len(valid) == 1:
            config_to_return = getattr(self, valid[0])
        else:
            config_to_return = self
        return config_to_return
'''
LLAMA_CLASS = '''
from ...configuration_utils import PreTrainedConfig

class LlamaConfig(PreTrainedConfig):
    model_type = "llama"
    hidden_size: int = 4096
    num_attention_heads: int = 32
    num_key_value_heads: int | None = None
    max_position_embeddings: int = 2048
    head_dim: int | None = None

    def __post_init__(self, **kwargs):
        if self.head_dim is None:
            self.head_dim = self.hidden_size // self.num_attention_heads
        super().__post_init__(**kwargs)
'''
FILES = {"transformers/configuration_utils.py": BASE,
         "transformers/models/llama/configuration_llama.py": LLAMA_CLASS,
         "transformers/models/auto/configuration_auto.py": 'CONFIG_MAPPING_NAMES = {"llama": "LlamaConfig"}\n'}
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 512,
         "intermediate_size": 1024, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 64,
         "num_hidden_layers": 2, "max_position_embeddings": 4096, "vocab_size": 32000, "rms_norm_eps": 1e-5,
         "rope_theta": 10000.0, "torch_dtype": "bfloat16"}


def _review(tree, tmp_path, version: str | None, files: dict | None = None):
    from real_reviews import index_for

    from srcreview.engine.run import review
    from srcreview.hfconfig.binding import with_model_configs
    from srcreview.hfconfig.config_classes import config_class
    from srcreview.model.recipe import parse_recipe

    (tmp_path / "model").mkdir(exist_ok=True)
    (tmp_path / "model" / "config.json").write_text(json.dumps(LLAMA))
    runtime = f'[runtime]\npackages = {{ transformers = "{version}" }}\n' if version else ""
    text = ('[recipe]\nname = "case"\nmodel = "./model"\n' + runtime +
            '[hardware]\ngpu = "NVIDIA A100-SXM4-80GB"\ncompute_capability = "8.0"\n'
            '[engine]\nskip_tokenizer_init = true\nload_format = "dummy"\nmax_model_len = 2048\n')
    recipe = with_model_configs(parse_recipe(text, "case.toml"), base_dir=tmp_path)
    if version:  # what srcreview.source.transformers_wheel attaches, from the files written here
        recipe = recipe.model_copy(update={"models": tuple(
            m.model_copy(update={"config_class": config_class(files or FILES, version, "llama")})
            for m in recipe.models)})
    return review(recipe, tree, index=index_for(tree), source_label="registry")


def _open_raises(review) -> int:
    finding = next(f for f in review.findings if f.rule == "startup-rejected")
    return int(re.search(r"(\d+) raise\(s\) may be reached", finding.message).group(1))


def test_the_config_class_decides_what_its_source_says(vllm_029, tmp_path):
    without = _review(vllm_029, tmp_path, None)
    given = _review(vllm_029, tmp_path, "9.9.9")
    model = given.models[0]
    assert model.config_class == "LlamaConfig of transformers 9.9.9"
    decided = set(model.class_decided or ())
    # (`getattr(hf_config, "method", ...)` of the sequence-classification adapter is no longer
    # read: the model registry decides the architecture converts to nothing, so its hook is not
    # reached)
    assert "get_text_config(): the config itself" in decided and "method: absent" not in decided
    assert "model_max_length: absent" in decided
    assert not any(d.startswith(("head_dim", "max_position_embeddings")) for d in decided)  # stated
    # get_hf_text_config's raise (a text config without num_attention_heads) is refuted: the
    # config is its own text config; without the class it stays open
    assert _open_raises(given) < _open_raises(without)
    text = json.dumps(without.model_dump(mode="json"))
    assert 'transformers = \\"X.Y.Z\\"' in text  # the open reason says how to give the version
    assert without.models[0].config_class is None and without.models[0].class_decided is None


READER = '''
    @classmethod
    def get_config_dict(cls, name, **kwargs):
        config_dict, kwargs = cls._get_config_dict(name, **kwargs)
        if "configuration_files" in config_dict:
            config_dict, kwargs = cls._get_config_dict(name, _configuration_file="x.json", **kwargs)
        return config_dict, kwargs

    @classmethod
    def _get_config_dict(cls, name, **kwargs):
        config_dict = cls._dict_from_json_file(name)
        if "model_type" in kwargs:
            config_dict["model_type"] = kwargs["model_type"]
        return config_dict, kwargs
'''


def test_the_config_dict_its_source_reads_decides_the_speculators_lookup(vllm_029, tmp_path):
    """vLLM's builder asks `PretrainedConfig.get_config_dict(model)` whether the model is a
    speculators checkpoint before it builds the config: with a base class whose reading is
    config.json as read, the answer (no `speculators_config`) leaves the recipe's speculative
    config as it is (none), and the checks on a speculative config are refuted."""
    files = dict(FILES)
    files["transformers/configuration_utils.py"] = BASE.replace(
        "class PreTrainedConfig:\n", "class PreTrainedConfig:\n" + READER.strip("\n") + "\n\n", 1)
    plain = _review(vllm_029, tmp_path, "9.9.9")
    read = _review(vllm_029, tmp_path, "9.9.9", files)
    assert _open_raises(read) < _open_raises(plain)
    text = " ".join(json.dumps(r.model_dump(mode="json")) for r in (read,))
    assert "speculative_config is not set by the recipe" not in text
