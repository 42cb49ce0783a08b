"""Config-class facts read from a transformers-shaped tree written here (never transformers' code)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest

from srcreview.hfconfig.config_classes import config_class, decide, decide_stated
from srcreview.interp.values import Const, HfConfig, Unknown

BASE = '''
from typing import ClassVar

class Mixin:
    def convert(self, **kwargs):
        self.rope = kwargs.pop("rope_scaling", None) or {}

class Base(Mixin):
    attribute_map: ClassVar[dict] = {}
    model_type: ClassVar[str] = ""
    is_encoder_decoder: bool = False
    return_dict: bool = True

    def __post_init__(self, **kwargs):
        self.convert(**kwargs)
        spec = kwargs.pop("per_layer", None)
        if spec is not None:
            mutate(self, spec)
        for key, value in kwargs.items():
            setattr(self, key, value)

    @property
    def num_labels(self):
        return 2

    @property
    def is_split(self):
        """Whether per-layer values were applied."""
        return hasattr(self, "_split_spec")

    @property
    def has_extra(self):
        return hasattr(self, "extra")

    def update(self, d):
        for k, v in d.items():
            setattr(self, k, v)

    def get_text_config(self, decoder=None, encoder=None):
        both = decoder == encoder
        decoder_possible_text_config_names = ("decoder", "text_config")
        encoder_possible_text_config_names = ("text_encoder",)
        possible_text_config_names = encoder_possible_text_config_names + decoder_possible_text_config_names
        found = [n for n in possible_text_config_names if hasattr(self, n) and getattr(self, n) is not None]
        if found:
            config_to_return = getattr(self, found[0])
        else:
            config_to_return = self
        return config_to_return
'''
TOY = '''
from ...configuration_utils import Base

class ToyConfig(Base):
    model_type = "toy"
    hidden_size: int = 64
    max_position_embeddings: int = 2048
    head_dim: int | None = None
    ratio: float = interval(0.0, 1.0)(default=0.5)

    def __post_init__(self, **kwargs):
        if self.head_dim is None:
            self.head_dim = self.hidden_size // 8
        self.extra = 1
        super().__post_init__(**kwargs)
'''
MAPPING = '''
from collections import OrderedDict
CONFIG_MAPPING_NAMES = OrderedDict([("toy", "ToyConfig")])
SPECIAL_MODEL_TYPE_TO_MODULE_NAME = OrderedDict([])
'''
FILES = {"transformers/configuration_utils.py": BASE, "transformers/models/toy/configuration_toy.py": TOY,
         "transformers/models/auto/auto_mappings.py": MAPPING,
         "transformers/models/auto/configuration_auto.py": "CONFIG_MAPPING_NAMES.update({'toy2': 'ToyConfig'})\n"}


def test_facts_decide_defaults_absence_and_stores():
    facts = config_class(FILES, "9.9.9", "toy")
    assert facts.unknown is None and facts.name == "ToyConfig"
    assert [m.split(" ")[0] for m in facts.mro] == ["ToyConfig", "Base", "Mixin"]
    assert decide(facts, "max_position_embeddings", False) == (
        "value", 2048, "the default of max_position_embeddings in ToyConfig of transformers 9.9.9 "
        "(ToyConfig (transformers/models/toy/configuration_toy.py:7))")
    assert decide(facts, "is_encoder_decoder", False)[:2] == ("value", False)
    assert decide(facts, "quantization_config", False)[0] == "absent"
    kind, _, why = decide(facts, "head_dim", False)  # None default, stored when None
    assert kind == "open" and "configuration_toy.py:13" in why
    assert decide_stated(facts, "head_dim", 32, frozenset({"head_dim"}))[0] == "value"  # guarded: not fired
    assert decide(facts, "extra", False)[0] == "open"
    assert decide(facts, "ratio", False)[0] == "open"  # not a literal default
    assert decide(facts, "num_labels", False)[0] == "open"  # a property
    # a property that only tests for a name is that name's presence: `_split_spec` is stored
    # only through `mutate(self, spec)`, which runs when config.json states per_layer
    assert decide(facts, "is_split", False)[:2] == ("value", False)
    assert decide(facts, "is_split", False, frozenset({"per_layer"}))[0] == "open"
    assert decide(facts, "has_extra", False)[0] == "open"  # `extra` is stored by __post_init__
    assert decide(facts, "rope", False)[0] == "open"  # stored by a mixin method __post_init__ calls
    assert decide_stated(facts, "rope_scaling", {}, frozenset({"rope_scaling"}))[0] == "open"  # popped
    # `mutate(self, spec)` runs only when config.json states per_layer: then nothing is absent
    assert decide(facts, "quantization_config", False, frozenset({"per_layer"}))[0] == "open"
    assert facts.text_config_names == ("decoder", "text_config", "text_encoder")
    assert config_class(FILES, "9.9.9", "toy2").name == "ToyConfig"  # the literal update is read
    assert config_class(FILES, "9.9.9", "nope").unknown


def test_facts_open_when_a_base_is_not_read():
    files = dict(FILES)
    files["transformers/configuration_utils.py"] = BASE.replace("class Base(Mixin):", "class Base(Elsewhere):")
    assert "Elsewhere" in (config_class(files, "9.9.9", "toy").unknown or "")


def test_hfconfig_reads_through_the_facts():
    facts = config_class(FILES, "9.9.9", "toy")
    config = HfConfig(overrides=(("model_type", Const("toy")),), source="config.json", classes=facts)
    assert config.attribute("max_position_embeddings") == Const(2048)
    assert config.has("quantization_config") is False
    assert config.has("head_dim") is None
    assert isinstance(config.attribute("head_dim"), Unknown)
    assert config.method("get_text_config", (), ()) is config
    stated = HfConfig(overrides=(("text_config", Const(1)),), source="config.json", classes=facts)
    assert stated.method("get_text_config", (), ()) is None
    loader = HfConfig(overrides=(), source="config.json", classes=facts, loader={"quantization_config": "vLLM"})
    assert loader.has("quantization_config") is None
    # stored by the loader only when config.json states it or the model has a file: open unless
    # that file is known to be absent
    gated = {"quantization_config": ("file", "hf_quant_config.json", "vLLM, when the file is there")}
    assert HfConfig(overrides=(), source="config.json", classes=facts, loader=gated).has("quantization_config") is None
    assert HfConfig(overrides=(), source="config.json", classes=facts, loader=gated,
                    absent=frozenset({"hf_quant_config.json"})).has("quantization_config") is False
    either = {"quantization_config": ("file", ("hf_quant_config.json", "params.json"), "vLLM, either file")}
    assert HfConfig(overrides=(), source="config.json", classes=facts, loader=either,
                    absent=frozenset({"hf_quant_config.json"})).has("quantization_config") is None
    assert HfConfig(overrides=(), source="config.json", classes=facts, loader=either,
                    absent=frozenset({"hf_quant_config.json", "params.json"})).has("quantization_config") is False
    plain = HfConfig(overrides=(), source="config.json", hint=" (no version)")
    assert plain.attribute("x") == Unknown("model-config-unknown: x is not stated in config.json; the config "
                                           "class may set it (no version)")


def _wheel(bomb: bool = False) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for path, text in FILES.items():
            zf.writestr(path, text)
        zf.writestr("transformers/modeling_big.py", "x = 1\n")  # not kept
        if bomb:  # a kept name that expands to 3 MB from a few kilobytes
            zf.writestr("transformers/models/bomb/configuration_bomb.py", "#" * 3_000_000)
    return buf.getvalue()


@pytest.mark.parametrize("tamper", [False, True, "bomb"])
def test_wheel_from_the_configured_index(http_server, monkeypatch, tmp_path, tamper):
    from conftest import Route

    from srcreview.core.errors import SourceUnavailable
    from srcreview.source.cache import Cache
    from srcreview.source.transformers_wheel import config_files

    data = _wheel(bomb=tamper == "bomb")
    name = "transformers-9.9.9-py3-none-any.whl"
    http_server.routes[f"/files/{name}"] = Route(data)
    digest = hashlib.sha256(b"other" if tamper is True else data).hexdigest()
    page = {"meta": {"api-version": "1.1"}, "name": "transformers", "versions": [],
            "files": [{"filename": name, "url": f"../../files/{name}", "hashes": {"sha256": digest},
                       "size": len(data)}]}
    http_server.routes["/simple/transformers/"] = Route(json.dumps(page).encode(),
                                                        content_type="application/vnd.pypi.simple.v1+json")
    monkeypatch.setenv("PIP_INDEX_URL", http_server.url("/simple"))
    cache = Cache(tmp_path / "cache")
    if tamper:
        with pytest.raises(SourceUnavailable, match="does not match" if tamper is True else "over the 2000000-byte"):
            config_files("9.9.9", cache)
        return
    files = config_files("9.9.9", cache)
    assert sorted(files) == sorted(FILES)
    assert config_class(files, "9.9.9", "toy").name == "ToyConfig"
    assert config_files("9.9.9", cache) == files  # the second time from the cache
    assert http_server.hits[f"/files/{name}"] == 1


def test_a_sub_config_built_from_the_stated_object_keeps_it():
    files = dict(FILES)
    files["transformers/models/toy/configuration_toy.py"] = TOY.replace(
        "        self.extra = 1\n", "        self.extra = 1\n        if self.text_config is None:\n"
        "            self.text_config = ToyConfig()\n        elif isinstance(self.text_config, dict):\n"
        "            self.text_config = ToyConfig(**self.text_config)\n").replace(
        "    head_dim: int | None = None\n", "    head_dim: int | None = None\n    text_config: dict | None = None\n")
    facts = config_class(files, "9.9.9", "toy")
    assert decide_stated(facts, "text_config", None, nested=True)[0] == "value"
    assert decide_stated(facts, "text_config", None)[0] == "open"  # null: replaced by ToyConfig()
    assert decide(facts, "text_config", False)[0] == "open"
    nested = HfConfig(overrides=(("a", Const(1)),), source="config.json")
    config = HfConfig(overrides=(("text_config", nested),), source="config.json", classes=facts)
    assert config.attribute("text_config") == nested


def test_the_facts_of_a_recipes_model_are_kept_in_the_cache(http_server, monkeypatch, tmp_path):
    from conftest import Route

    from srcreview.hfconfig.binding import with_model_configs
    from srcreview.model.recipe import parse_recipe
    from srcreview.source.cache import Cache
    from srcreview.source.transformers_wheel import with_config_classes

    data = _wheel()
    name = "transformers-9.9.9-py3-none-any.whl"
    http_server.routes[f"/files/{name}"] = Route(data)
    page = {"meta": {"api-version": "1.1"}, "name": "transformers", "versions": [],
            "files": [{"filename": name, "url": f"../../files/{name}",
                       "hashes": {"sha256": hashlib.sha256(data).hexdigest()}, "size": len(data)}]}
    http_server.routes["/simple/transformers/"] = Route(json.dumps(page).encode(),
                                                        content_type="application/vnd.pypi.simple.v1+json")
    monkeypatch.setenv("PIP_INDEX_URL", http_server.url("/simple"))
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text(json.dumps({"model_type": "toy", "hidden_size": 32}))
    text = '[recipe]\nname = "r"\nmodel = "./model"\n[runtime]\npackages = { transformers = "9.9.9" }\n'
    recipe = with_model_configs(parse_recipe(text, "r.toml"), base_dir=tmp_path)
    cache = Cache(tmp_path / "cache")
    first = with_config_classes(recipe, cache)
    assert first.models[0].config_class.name == "ToyConfig"
    http_server.routes.clear()  # the index is gone: the facts come from the cache
    again = with_config_classes(recipe, cache)
    assert again.models[0].config_class == first.models[0].config_class
    other = with_config_classes(parse_recipe(text.replace("9.9.9", "9.9.8"), "r.toml").model_copy(
        update={"models": recipe.models}), cache)
    assert "could not be read" in (other.models[0].config_class.unknown or "")  # not on the index: open
    plain = with_model_configs(parse_recipe('[recipe]\nname = "r"\nmodel = "./model"\n', "r.toml"), base_dir=tmp_path)
    assert with_config_classes(plain, cache).models[0].config_class is None


HELPERS = BASE.replace("class Mixin:", '''def remap(layer_types=None, config=None):
    if config is not None and getattr(config, "layer_types", None) is not None:
        config.layer_types = list(config.layer_types)


class Mixin:''').replace('''        for key, value in kwargs.items():
            setattr(self, key, value)
''', '''        for key, sdef in self.sub_defaults.items():
            sub, kwargs = sdef.create(key, **kwargs)
            setattr(self, key, sub)
        remap(config=self)
        for key, value in kwargs.items():
            setattr(self, key, value)
''').replace('''    model_type: ClassVar[str] = ""''', '''    model_type: ClassVar[str] = ""
    sub_defaults: ClassVar[dict] = {}''')


def test_helpers_handed_self_and_class_tables():
    files = dict(FILES)
    files["transformers/configuration_utils.py"] = HELPERS
    facts = config_class(files, "9.9.9", "toy")
    assert [s.where.split(" ")[0] for s in facts.stores["layer_types"]] == ["Base.remap"]  # walked, as self
    assert not [d for d in facts.dynamic if d.gate is None]  # the table is empty: its loop never runs
    assert decide(facts, "quantization_config", False)[0] == "absent"
    files["transformers/models/toy/configuration_toy.py"] = TOY.replace(
        '    model_type = "toy"\n', '    model_type = "toy"\n    sub_defaults = {"text_config": 1}\n')
    facts = config_class(files, "9.9.9", "toy")
    assert decide(facts, "text_config", False)[0] == "open"  # set by the table's loop
    # the loop rebinds **kwargs from another call: keys may be added (set) or taken
    assert decide(facts, "quantization_config", False)[0] == "open"
    assert decide_stated(facts, "other", 1, frozenset({"other"}))[0] == "open"


def test_a_gate_holds_only_for_a_local_bound_once_and_a_key_the_class_does_not_add():
    files = dict(FILES)
    files["transformers/models/toy/configuration_toy.py"] = TOY.replace(
        "        self.extra = 1\n", '''        self.extra = 1
        layers = kwargs.pop("layers", None)
        if layers is None:
            layers = [1]
        if layers is not None:
            self.mlp_kinds = layers
        kwargs.setdefault("per_layer", {0: 1})
''')
    facts = config_class(files, "9.9.9", "toy")
    assert decide(facts, "mlp_kinds", False)[0] == "open"  # `layers` is rebound: not a gate
    assert facts.added == {"per_layer": "ToyConfig.__post_init__ (transformers/models/toy/configuration_toy.py:20)"}
    assert decide(facts, "quantization_config", False)[0] == "open"  # the gated mutate(self) now runs


READER = '''

    @classmethod
    def get_config_dict(cls, name, **kwargs):
        config_dict, kwargs = cls._get_config_dict(name, **kwargs)
        if config_dict is None:
            return {}, kwargs
        if "other_file" in config_dict:
            config_dict, kwargs = cls._get_config_dict(name, _file=config_dict["other_file"], **kwargs)
        return config_dict, kwargs

    @classmethod
    def _get_config_dict(cls, name, **kwargs):
        gguf_file = kwargs.get("gguf_file")
        if gguf_file:
            config_dict = read_gguf(name)
        else:
            config_dict = cls._dict_from_json_file(name)
        if "model_type" not in config_dict and looks_like_vision(config_dict):
            config_dict["model_type"] = "vision"
        if "model_type" in kwargs:
            config_dict["model_type"] = kwargs["model_type"]
        return config_dict, kwargs
'''




def _with_reader(reader: str) -> dict:
    """FILES with `reader`'s methods added to the base class (indented as its methods)."""
    files = dict(FILES)
    files["transformers/configuration_utils.py"] = BASE.replace(
        "class Base(Mixin):\n", "class Base(Mixin):\n" + reader.strip("\n") + "\n\n", 1)
    return files


def test_how_get_config_dict_makes_the_dict_is_read_from_its_source():
    facts = config_class(_with_reader(READER), "9.9.9", "toy")
    # each store with the tests it is under; the key that names another file; the key whose
    # absence hands the dict to a function not read here
    assert facts.dict_stores == (
        ("model_type", (("absent", "model_type"), ("other", "looks_like_vision(config_dict)"))),
        ("model_type", (("kwarg", "model_type"),)))
    assert facts.dict_redirects == ("other_file",)
    assert facts.dict_requires == ("model_type",)


@pytest.mark.parametrize("change", [
    ("config_dict = cls._dict_from_json_file(name)", "config_dict = load_somehow(name)"),  # not config.json
    ('config_dict["model_type"] = "vision"', 'config_dict.update(model_type="vision")'),  # a mutating call
    ("looks_like_vision(config_dict)", "True) and rewrite(config_dict"),  # handed on unguarded
    ('config_dict["model_type"] = kwargs["model_type"]', 'config_dict[kwargs["key"]] = 1'),  # a key not literal
])
def test_a_get_config_dict_not_read_as_such_decides_nothing(change):
    facts = config_class(_with_reader(READER.replace(*change)), "9.9.9", "toy")
    assert facts.dict_stores is None
