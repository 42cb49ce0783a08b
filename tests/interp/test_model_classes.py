"""What start-up asks of a model's class (fixtures/vllm_snippets/startup_model_classes): class
lookups through the MRO, with torch's `nn.Module` stubbed (srcreview.vllm.stubs), a runtime
protocol, `inspect.signature`, `__mro__`, a class decorator's attribute, the registry built at
import; and a returned call that raises on one path only, which leaves the raise open."""

from __future__ import annotations

import typing

import pytest
from recipe_support import construction_raises, marked_line

from srcreview.vllm import stubs
from srcreview.vllm.runtime import ENTRY_POINTS_KEY

TREE, MODELS = "startup_model_classes", "vllm/config/models.py"
REGISTRY = "vllm/model_executor/models/registry.py"


def marked(path: str, label: str) -> int:
    return marked_line(TREE, path, label)


def raises(settings: dict, *, plugins: bool = False) -> dict[tuple[str, int], str]:
    # without plugins: the runtime profile's answer that no out-of-tree code runs
    return construction_raises(TREE, settings if plugins else {**settings, ENTRY_POINTS_KEY: ()})


def test_a_generating_class_starts():
    # getattr through nn.Module (absent there, says the stub), a runtime protocol's method,
    # `positions` in forward's signature, SupportsPP in __mro__, `arch in models.keys()`:
    # every check refuted; and the `try` around the class's import raises nothing the walk
    # models, so its handler's `return None` is no value the caller sees ("not-inspected")
    assert raises({"pipeline": 2}) == {}


@pytest.mark.parametrize(("settings", "label"), [
    ({"architecture": "DenseForEmbedding"}, "no-generate"),  # no compute_logits: not HasLogits
    ({"architecture": "DenseForEmbedding", "runner": "none", "pipeline": 2}, "no-pp"),  # no SupportsPP in its MRO
    ({"runner": "pooling"}, "no-pool"),  # is_pooling_model absent: the getattr default
])
def test_what_the_class_lacks_is_refused_for_certain(settings, label):
    assert raises(settings).get((MODELS, marked(MODELS, label))) == "certain"


def test_a_decorated_class_is_not_decided_by_its_body():
    # @pooling_kind("cls") sets pooling_kind on the class: the walk leaves the check open
    # rather than take the default "last"
    found = raises({"architecture": "DenseForEmbedding", "runner": "pooling"})
    assert (MODELS, marked(MODELS, "no-pool")) not in found
    assert found.get((MODELS, marked(MODELS, "pool-kind"))) == "open"


def test_with_plugins_the_registry_is_not_its_import_time_value():
    assert raises({"pipeline": 2}, plugins=True) != {}


def test_a_returned_call_that_raises_on_one_path_leaves_the_raise_open():
    found = raises({"architecture": "Unknown"})
    assert found.get((REGISTRY, marked(REGISTRY, "unsupported"))) == "certain"
    # the architecture is known: `checked` returns `self.info(arch)`, never `_unsupported`
    assert (REGISTRY, marked(REGISTRY, "unsupported")) not in raises({})


def test_the_stdlib_stubs_hold_for_the_running_python():
    for name, cls in (("builtins.object", object), ("typing.Protocol", typing.Protocol),
                      ("typing.Generic", typing.Generic)):
        public = {n for n in dir(cls) if not n.startswith("_")}
        assert public == set(stubs.PUBLIC_NAMES[name]), name
    names = stubs.external_names("torch.nn.Module")
    assert names is not None and "forward" in names and "is_pooling_model" not in names
    assert stubs.external_names("somewhere.Else") is None


def test_a_generator_that_delegates_to_a_table_is_walked_item_by_item():
    # runner "auto": `for suffix, runner in iter_suffixes()` (`yield from _SUFFIXES`) picks
    # "pooling" for the embedding class, which pools: its kind check is the open one
    found = raises({"architecture": "DenseForEmbedding", "runner": "auto"})
    assert (MODELS, marked(MODELS, "no-generate")) not in found
    assert found.get((MODELS, marked(MODELS, "pool-kind"))) == "open"
    assert raises({"runner": "auto", "pipeline": 2}) == {}
