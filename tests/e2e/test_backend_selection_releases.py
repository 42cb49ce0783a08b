"""Automatic attention backend selection at real releases (marker `releases`).

With attention_backend unset, at 0.29.0, 0.30.0 and 0.33.0 on compute capabilities 8.0, 9.0,
10.0 and 12.0, with and without the model's config, the rule attention-backend-auto-selected
fills the knob row of the target's backend. Expectations were written from each release's
`_get_backend_priorities` (vllm/platforms/cuda.py), which `get_valid_backends` iterates:

- non-MLA, causal: on SM10x FLASHINFER, FLASH_ATTN, TRITON_ATTN, FLEX_ATTENTION, TURBOQUANT;
  elsewhere FLASH_ATTN, FLASHINFER, TRITON_ATTN, FLEX_ATTENTION, TURBOQUANT. From 0.30.0 a
  multimodal prefix LM puts TRITON_FLASHINFER first on SM10x and TRITON_FLASH_ATTN first on
  SM90 (`*([...] if use_mm_prefix else [])`): present only if the model's layers say so.
- MLA: another list per capability (TRITON_MLA first on SM120); whether the model is MLA is
  what its config says through ModelConfig.use_mla, which the walk does not settle at these
  releases (`hf_text_config` is built by a call the construction walk does not follow).

Every candidate's admission then rests on the model's head size and dtype (ModelConfig
derives them through `model_arch_config` and `_get_and_verify_dtype`, not followed either), so
the selection stays open with the candidates named in priority order, TRITON_ATTN among them
(TURBOQUANT, last, is refused: its supported_kv_cache_dtypes list no bfloat16 cache):
the Triton label of a recipe that leaves the backend unset is an open question, never
confirmed.

    .venv/bin/pytest -m releases tests/e2e/test_backend_selection_releases.py
"""

from __future__ import annotations

import pytest
from recipe_support import build_recipe

from srcreview.engine.run import review
from srcreview.model.recipe import Recipe
from srcreview.rules.loader import load_rules

pytestmark = [pytest.mark.network, pytest.mark.releases]

RELEASES = ("0.29.0", "0.30.0", "0.33.0")
CAPABILITIES = ("8.0", "9.0", "10.0", "12.0")
LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
         "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128, "torch_dtype": "bfloat16"}
RULES = ("attention-backend-auto-selected", "recipe-identity-drift")


def expected_order(version: str, capability: str) -> list[str]:
    """The non-MLA candidates in priority order, read from the release's source."""
    first, second = ("FLASHINFER", "FLASH_ATTN") if capability == "10.0" else ("FLASH_ATTN", "FLASHINFER")
    order = [first, second, "TRITON_ATTN", "FLEX_ATTENTION"]  # TURBOQUANT lists only turboquant KV dtypes
    if version != "0.29.0" and capability == "10.0":
        order.insert(0, "TRITON_FLASHINFER")
    if version != "0.29.0" and capability == "9.0":
        order.insert(0, "TRITON_FLASH_ATTN")
    return order


def _recipe(capability: str, model: dict | None) -> Recipe:
    return build_recipe({"kv_cache_dtype": "bfloat16"}, name="selection-triton", model="org/model",
                        model_config=model, path="examples/selection.toml", gpu="NVIDIA GPU",
                        capability=capability)


@pytest.fixture(scope="module")
def rules():
    return tuple(r for r in load_rules() if r.id in RULES)


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("capability", CAPABILITIES)
@pytest.mark.parametrize("model", [None, LLAMA], ids=["no-model-config", "llama-config"])
def test_unset_backend_at_release(vllm_release, rules, version, capability, model):
    from real_reviews import index_for

    tree = vllm_release(version)
    result = review(_recipe(capability, model), tree, rules=rules, index=index_for(tree))
    assert not result.incomplete and not result.stale_rules
    knob = next(k for k in result.knobs if (k.key, k.scope) == ("attention_backend", "target"))
    assert knob.status == "undecided" and knob.effective.startswith("one of ")
    possible = knob.effective.removeprefix("one of ").split(", ")
    order = expected_order(version, capability)
    # the non-MLA list, in its order (MLA candidates and "none" come from the other list)
    assert [p for p in possible if p in order] == order, possible
    drift = next(f for f in result.findings if f.rule == "recipe-identity-drift")
    assert drift.classification == "plausible" and "TRITON_ATTN" in drift.message
    assert not any(f.rule == "attention-backend-auto-selected" for f in result.findings)  # open: no claim
    # anchored on the priority lists the release returns, and on the loop that asks each candidate
    returns = [a for a in drift.evidence if a.path == "vllm/platforms/cuda.py" and a.symbol == "return"]
    assert len(returns) >= 2
    for a in returns:
        assert tree.read_text(a.path).splitlines()[a.start_line - 1].strip().startswith("return")
    loop = next(a for a in drift.evidence if "in priority order" in a.role)
    assert "validate_configuration" in "\n".join(tree.read_text(loop.path).splitlines()[loop.start_line:loop.start_line + 6])
    if model is None:
        assert any("the model's config is not bound" in o for o in drift.assumptions)
    else:
        # the model's config is bound: the walk tries vLLM's own derivation and says why it stays open
        assert any("ModelConfig.get_head_size() is not decided on the model's config" in o for o in drift.assumptions)
