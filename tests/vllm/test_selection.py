"""The platform's automatic backend choice over a tiny priority list, one case each
(srcreview.vllm.selection, srcreview.vllm.backends.admission).

The tree is the backend_selection fixture with its platform's priority function replaced by
the one of the case; the candidates' admission is the fixture's own (FlashAttention refuses an
FP8 cache on SM120, Triton admits it). The model is a Llama-shaped config the recipe states.
"""

from __future__ import annotations

import shutil

import pytest
from recipe_support import build_recipe, fixture_tree, module_index

from srcreview.index import Index
from srcreview.vllm.backends import admission
from srcreview.vllm.models import model_bindings
from srcreview.vllm.runtime import config_bindings
from srcreview.vllm.selection import selection

LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "head_dim": 128}
PLATFORM = "vllm/platforms/cuda.py"


@pytest.fixture(scope="module")
def fixture_index():
    return Index(fixture_tree("backend_selection"))


def with_priorities(tmp_path, body: str):
    """The fixture tree with `_get_backend_priorities(use_mla, device_capability)` returning `body`."""
    shutil.copytree(fixture_tree("backend_selection").root, tmp_path, dirs_exist_ok=True)
    source = (tmp_path / PLATFORM).read_text()
    start, end = source.index("def _get_backend_priorities"), source.index("class CudaPlatform")
    priorities = f"def _get_backend_priorities(use_mla, device_capability):\n{body}\n\n\n"
    return module_index(tmp_path, {PLATFORM: source[:start] + priorities + source[end:]})


def bindings(index, kv: str = "auto", capability: str = "12.0") -> dict:
    recipe = build_recipe({"kv_cache_dtype": kv}, model="org/model", model_config=LLAMA, capability=capability)
    return config_bindings(index, {**recipe.bindings, **model_bindings(recipe)}, gpu=recipe.hardware.gpu)


def chosen(index, **recipe) -> tuple:
    picked = selection(index, bindings(index, **recipe))
    return picked.verdict, picked.selected


def test_the_one_candidate_that_admits_is_selected(tmp_path):
    index = with_priorities(tmp_path, "    return [AttentionBackendEnum.TRITON_ATTN]")
    assert chosen(index) == ("selects", "TRITON_ATTN")


def test_the_first_candidate_that_admits_is_selected(tmp_path):
    index = with_priorities(tmp_path, "    return [AttentionBackendEnum.FLASH_ATTN, AttentionBackendEnum.TRITON_ATTN]")
    assert chosen(index) == ("selects", "FLASH_ATTN")


def test_a_candidate_that_refuses_passes_the_choice_on(tmp_path):
    index = with_priorities(tmp_path, "    return [AttentionBackendEnum.FLASH_ATTN, AttentionBackendEnum.TRITON_ATTN]")
    assert chosen(index, kv="fp8") == ("selects", "TRITON_ATTN")


def test_an_empty_list_admits_none(tmp_path):
    index = with_priorities(tmp_path, "    return []")
    assert chosen(index) == ("none-admitted", None)


@pytest.mark.parametrize("capability, backend", [("12.0", "FLASHINFER"), ("9.0", "TRITON_ATTN")])
def test_the_list_follows_the_recipe_gpu(tmp_path, capability, backend):
    index = with_priorities(tmp_path, "    if device_capability.major == 12:\n"
                                      "        return [AttentionBackendEnum.FLASHINFER]\n"
                                      "    return [AttentionBackendEnum.TRITON_ATTN]")
    assert chosen(index, capability=capability) == ("selects", backend)


def test_a_conditional_item_counts_when_its_condition_holds(tmp_path):
    index = with_priorities(tmp_path, "    return [*([AttentionBackendEnum.FLASH_ATTN] if not use_mla else []),\n"
                                      "            AttentionBackendEnum.TRITON_ATTN]")
    assert chosen(index) == ("selects", "FLASH_ATTN")


def test_the_candidates_are_asked_in_the_lists_order(tmp_path):
    index = with_priorities(tmp_path, "    return [AttentionBackendEnum.FLASH_ATTN, AttentionBackendEnum.TRITON_ATTN]")
    asked = selection(index, bindings(index, kv="fp8")).admissions
    assert [(a.backend, a.verdict) for a in asked] == [("FLASH_ATTN", "refuses"), ("TRITON_ATTN", "admits")]


@pytest.mark.parametrize("member, kv, verdict", [
    ("FLASH_ATTN", "fp8", "refuses"), ("FLASH_ATTN", "auto", "admits"), ("TRITON_ATTN", "fp8", "admits")])
def test_admission_of_one_backend(fixture_index, member, kv, verdict):
    assert admission(fixture_index, bindings(fixture_index, kv=kv), member).verdict == verdict
