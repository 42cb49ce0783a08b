"""Automatic attention backend selection on a fixture tree (issue 11).

`fixtures/vllm_snippets/backend_selection` (vLLM-shaped, written for srcreview): the CUDA
platform walks a priority list by capability and MLA-ness and takes the first backend whose
`validate_configuration` admits the recipe; its ModelConfig derives the head size and
MLA-ness from the model's config. The model's config is given as a recipe's [model] table
states it (srcreview.hfconfig.ModelFacts).
"""

from __future__ import annotations

import json

import pytest
from recipe_support import build_recipe, fixture_tree

from srcreview.engine.run import review
from srcreview.report import markdown

LLAMA = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "head_dim": 128}
DEEPSEEK = {"model_type": "deepseek_v3", "kv_lora_rank": 512, "qk_rope_head_dim": 64}
HEAD_80 = {"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32, "head_dim": None}


@pytest.fixture(scope="module")
def tree():
    return fixture_tree("backend_selection")


def _review(tree, *, model=None, capability="12.0", name="mtp3-triton", **settings):
    recipe = build_recipe(settings, name=name, model="org/model", model_config=model, path="r.toml",
                          gpu="NVIDIA GPU", capability=capability)
    return review(recipe, tree)


def _row(result):
    return next((k for k in result.knobs if (k.key, k.scope) == ("attention_backend", "target")), None)


def _finding(result, rule):
    return next((f for f in result.findings if f.rule == rule), None)


CASES = [
    # (name, model, capability, kv dtype, the backend selected, refused before it)
    ("head_dim 128: FlashAttention, first on the list", LLAMA, "12.0", "auto", "FLASH_ATTN", "none"),
    ("SM100 puts FlashInfer first", LLAMA, "10.0", "auto", "FLASHINFER", "none"),
    ("an FP8 cache: FlashAttention refuses it on SM120, FlashInfer admits it", LLAMA, "12.0", "fp8", "FLASHINFER",
     "FLASH_ATTN"),
    ("head size 80 (hidden_size // heads) with FP8: Triton", HEAD_80, "12.0", "fp8", "TRITON_ATTN",
     "FLASH_ATTN, FLASHINFER"),
    ("an MLA model (deepseek_v3): TritonMLA", DEEPSEEK, "12.0", "auto", "TRITON_MLA", "none"),
]


@pytest.mark.parametrize("name,model,capability,kv,selected,refused", CASES, ids=[c[0] for c in CASES])
def test_the_platform_selects_the_first_admitted_candidate(tree, name, model, capability, kv, selected, refused):
    result = _review(tree, model=model, capability=capability, kv_cache_dtype=kv)
    assert not result.incomplete
    row = _row(result)
    assert row.status == "applied" and row.effective == selected and row.value is None
    fact = _finding(result, "attention-backend-auto-selected")
    assert fact.classification == "refuted" and fact.kind == "fact" and not fact.assumptions
    assert f"selects {selected}" in fact.message and f"refused before it: {refused})" in fact.message
    roles = [a.role for a in fact.evidence]
    assert any("in priority order" in r for r in roles)
    assert any(r.startswith("the priority list returned under the recipe") for r in roles)
    assert any(r.startswith("head_size = ") and "ModelConfig.get_head_size()" in r for r in roles)
    drift = _finding(result, "recipe-identity-drift")
    assert drift.classification == ("refuted" if selected == "TRITON_ATTN" else "confirmed")
    assert selected in drift.message
    data = json.loads(result.model_dump_json())
    assert next(k for k in data["knobs"] if k["key"] == "attention_backend")["effective"] == selected
    assert all("effective" not in k for k in data["knobs"] if k["key"] != "attention_backend")
    assert f"| `attention_backend` | target | `unset` → {selected} |" in markdown.render([result]).replace("\\_", "_")


def test_a_named_gpu_decides_the_capability_the_recipe_leaves_out(tree):
    # "NVIDIA B200" and no compute_capability: SM100, where FlashInfer is first (as with 10.0 stated)
    recipe = build_recipe({}, name="mtp3-triton", model="org/model", model_config=LLAMA, path="r.toml",
                          gpu="NVIDIA B200", capability=None)
    result = review(recipe, tree)
    assert (_row(result).status, _row(result).effective) == ("applied", "FLASHINFER")
    assert result.profile.compute_capability == "10.0"
    assert "NVIDIA's published compute capability of B200" in result.profile.summary()
    unnamed = review(build_recipe({}, name="mtp3-triton", model="org/model", model_config=LLAMA, path="r.toml",
                                  gpu="NVIDIA GPU", capability=None), tree)
    assert _row(unnamed).status == "undecided"


def test_no_candidate_admits_the_recipe_start_up_fails(tree):
    result = _review(tree, model=DEEPSEEK, kv_cache_dtype="nvfp4")
    finding = _finding(result, "attention-backend-auto-selected")
    assert finding.classification == "confirmed" and finding.kind == "problem"
    assert "every one refuses the recipe (TRITON_MLA)" in finding.message
    assert _finding(result, "recipe-identity-drift").classification == "confirmed"


def test_without_the_models_config_the_candidates_are_named(tree):
    result = _review(tree, kv_cache_dtype="auto")
    row = _row(result)
    assert row.status == "undecided" and row.effective.startswith("one of TRITON_MLA")
    assert "FLASH_ATTN" in row.effective and "model-config-unknown" in row.tags
    assert _finding(result, "attention-backend-auto-selected") is None  # open: no claim either way
    drift = _finding(result, "recipe-identity-drift")
    assert drift.classification == "plausible"
    assert any("the model's config is not bound" in a for a in drift.assumptions)


def test_an_unstated_key_keeps_the_head_size_open(tree):
    """config.json without head_dim: the config class may set it, so the head size is not
    taken from hidden_size // num_attention_heads (fail closed)."""
    model = {k: v for k, v in HEAD_80.items() if k != "head_dim"}
    result = _review(tree, model=model, kv_cache_dtype="fp8")
    assert _row(result).status == "undecided" and _row(result).effective == "one of FLASHINFER, TRITON_ATTN"
    drift = _finding(result, "recipe-identity-drift")
    assert drift.classification == "plausible"
    assert any("ModelConfig.get_head_size() is not decided" in a for a in drift.assumptions)


def test_a_named_backend_is_what_runs(tree):
    result = _review(tree, model=LLAMA, attention_backend="FLASH_ATTN")
    assert _finding(result, "attention-backend-auto-selected") is None
    assert _row(result).effective is None
    drift = _finding(result, "recipe-identity-drift")
    assert drift.classification == "confirmed" and "FLASH_ATTN, the backend the recipe names" in drift.message
