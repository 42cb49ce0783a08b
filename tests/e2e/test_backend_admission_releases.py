"""Attention backend admission at real releases (marker `releases`).

For FlashInfer, FlexAttention, FlashAttention, Triton and TritonMLA on compute capabilities
8.0, 8.9, 9.0, 10.0 and 12.0, at 0.25.0, 0.29.0, 0.30.0 and 0.33.0, the rules
backend-supports-kv-cache-dtype and attention-backend-admitted run on a recipe naming the
backend with a quantized KV dtype. Expectations were written from each release's source:

- FlashInfer `nvfp4`: its `supports_kv_cache_dtype` override admits nvfp4 only on the SM100
  family and only if `supports_trtllm_attention` (the installed FlashInfer) agrees: refused off
  SM100, open on 10.0. At 0.33.0 the override first admits `nvfp4` on the FA2 families (80,
  90, 120: 8.0, 8.9, 9.0, 12.0).
- FlashAttention `fp8`: `flash_attn_supports_kv_cache_dtype` (0.29+) or the class's own test
  (0.25) wants FA3 on SM90 (or FA4 on SM100 from 0.29): refused on 8.0, 8.9 and 12.0 whatever
  the installed version; open where the version decides (9.0; 10.0 from 0.29; 10.0 is refused
  at 0.25, which has no FA4 branch).
- FlexAttention lists no FP8 dtype and has no override: refused everywhere.
- Triton and TritonMLA list `fp8` with no override: admitted everywhere (Triton's FP8
  capability gate is in its Impl, another rule).

Whole admission: a refusal by the KV test is a refusal of the backend (the platform raises for
an explicitly selected backend that `validate_configuration` refuses, at every release); with
no decided refusal it rests on the model's head size, dtype and MLA-ness, so it stays open.

    .venv/bin/pytest -m releases tests/e2e/test_backend_admission_releases.py
"""

from __future__ import annotations

import pytest
from recipe_support import build_recipe

from srcreview.engine.run import review
from srcreview.model.recipe import Recipe
from srcreview.rules.loader import load_rules

pytestmark = [pytest.mark.network, pytest.mark.releases]

RELEASES = ("0.25.0", "0.29.0", "0.30.0", "0.33.0")
CAPABILITIES = ("8.0", "8.9", "9.0", "10.0", "12.0")
BACKENDS = {"FLASHINFER": "nvfp4", "FLEX_ATTENTION": "fp8", "FLASH_ATTN": "fp8", "TRITON_ATTN": "fp8",
            "TRITON_MLA": "fp8"}
RULES = ("backend-supports-kv-cache-dtype", "attention-backend-admitted")


def expected_kv(version: str, backend: str, capability: str, cubin: bool = False) -> str:
    """confirmed (refused), refuted (admitted) or plausible (open), read from the release's source.
    `cubin`: the release's requirements/cuda.txt installs flashinfer-cubin, so under the runtime
    profile (issue 24) `has_flashinfer_cubin()` is true, the NVIDIA artifactory is not asked, and
    TRTLLM attention on SM100 admits nvfp4; without it that stays a network question."""
    if backend in ("TRITON_ATTN", "TRITON_MLA"):
        return "refuted"
    if backend == "FLEX_ATTENTION":
        return "confirmed"
    if backend == "FLASHINFER":
        if capability == "10.0":
            return "refuted" if cubin else "plausible"
        return "refuted" if version == "0.33.0" else "confirmed"
    # FLASH_ATTN
    if capability == "9.0" or (capability == "10.0" and version != "0.25.0"):
        return "plausible"
    return "confirmed"


def _recipe(backend: str, kv: str, capability: str) -> Recipe:
    return build_recipe({"attention_backend": backend, "kv_cache_dtype": kv}, name="admission",
                        path="examples/admission.toml", gpu="NVIDIA GPU", capability=capability)


@pytest.fixture(scope="module")
def rules():
    return tuple(r for r in load_rules() if r.id in RULES)


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("capability", CAPABILITIES)
@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_admission_at_release(vllm_release, rules, version, capability, backend):
    from real_reviews import index_for

    tree = vllm_release(version)
    result = review(_recipe(backend, BACKENDS[backend], capability), tree, rules=rules, index=index_for(tree))
    assert not result.incomplete and not result.stale_rules
    found = {f.rule: f for f in result.findings}
    kv = found["backend-supports-kv-cache-dtype"]
    whole = found["attention-backend-admitted"]
    cubin = any(line.startswith("flashinfer-cubin") for line in tree.read_text("requirements/cuda.txt").splitlines())
    want = expected_kv(version, backend, capability, cubin)
    assert kv.classification == want, kv.message
    knobs = {(k.key, k.scope): k.status for k in result.knobs}
    if want == "confirmed":
        # refused by the KV test: the backend is refused, the platform raises, the anchors say where
        assert whole.classification == "confirmed", whole.message
        assert "start-up fails" in whole.message
        assert knobs[("kv_cache_dtype", "target")] == "invalid-value"
        assert knobs[("attention_backend", "target")] == "invalid-value"
        roles = [a.role for a in kv.evidence]
        assert any(r.startswith("`supports_kv_cache_dtype` decided true under the recipe") for r in roles)
        assert any(a.path == "vllm/platforms/cuda.py" and a.symbol == "raise" for a in whole.evidence)
        source = tree.read_text(kv.evidence[0].path).splitlines()
        assert "supports_kv_cache_dtype" in source[kv.evidence[0].start_line - 1]
    else:
        # nothing the recipe decides refuses it: the head size, dtype and MLA-ness stay open
        assert whole.classification == "plausible", whole.message
        assert "model-config-unknown" in whole.tags
        assert knobs[("attention_backend", "target")] != "invalid-value"
    if want == "plausible":
        assert kv.assumptions and "supports_kv_cache_dtype" in kv.message


@pytest.mark.parametrize("version", RELEASES)
def test_flashinfer_refusal_is_anchored_on_the_override(vllm_release, rules, version):
    """The issue's example: FlashInfer lists nvfp4 but its override narrows it (12.0)."""
    from real_reviews import index_for

    tree = vllm_release(version)
    result = review(_recipe("FLASHINFER", "nvfp4", "12.0"), tree, rules=rules, index=index_for(tree))
    kv = next(f for f in result.findings if f.rule == "backend-supports-kv-cache-dtype")
    override = [a for a in kv.evidence if a.path == "vllm/v1/attention/backends/flashinfer.py" and a.symbol == "return"]
    assert override, kv.evidence
    if version == "0.33.0":
        assert kv.classification == "refuted" and "returns True" in override[0].role
    else:
        assert kv.classification == "confirmed" and "returns False" in override[0].role
        text = "\n".join(tree.read_text(override[0].path).splitlines()[override[0].start_line - 1:override[0].end_line])
        assert "is_device_capability_family(100)" in text
