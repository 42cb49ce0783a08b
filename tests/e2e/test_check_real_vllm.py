"""`srcreview check` on real vLLM 0.29.0: the verdicts of the hand-written review, with correct anchors.

The tree is the `vllm_029` fixture (the registry sdist, obtained by the project's own provider
and cached between runs); each recipe is reviewed once per session.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest
from real_reviews import BF16, FP8, NESTED, RECIPES, ROOT, review_of, review_text

pytestmark = pytest.mark.network

FLASH_FP8 = (ROOT / FP8).read_text().replace('attention_backend = "TRITON_ATTN"', 'attention_backend = "FLASH_ATTN"') \
    .replace('kv_cache_dtype = "fp8_per_token_head"', 'kv_cache_dtype = "fp8"') \
    .replace('name = "thinkingcap-awq-vllm029-5090-16k-mtp3-triton-fp8"', 'name = "flash-attn-fp8-sm120"')


def _knob(review, key, scope):
    return next(k for k in review.knobs if k.key == key and k.scope == scope)


def _findings(review, rule):
    return [f for f in review.findings if f.rule == rule]


def test_nested_backend_is_ignored_by_the_v2_mtp_loader(vllm_029):
    review = review_of(vllm_029, NESTED)
    assert review.runner.value == "v2"
    assert _knob(review, "speculative_config.attention_backend", "draft").status == "ignored"
    (finding,) = _findings(review, "spec-draft-attention-backend-ignored")
    assert (finding.classification, finding.severity) == ("confirmed", "high")
    symbols = {a.symbol for a in finding.evidence}
    assert "load_eagle_model" in symbols and "MTPSpeculator.load_draft_model" in symbols
    paths = {a.path for a in finding.evidence}
    assert "vllm/v1/worker/gpu/spec_decode/eagle/utils.py" in paths
    assert "vllm/v1/worker/gpu/spec_decode/mtp/speculator.py" in paths
    (drift,) = _findings(review, "recipe-identity-drift")
    # the target's backend is left to the platform's priority list; which candidate it admits first
    # depends on the model's config (not known offline), and TRITON_ATTN is one of them
    assert drift.classification == "plausible"
    assert "the platform selects on compute capability 12.0 the first backend its priority list admits" in drift.message
    assert "TRITON_ATTN" in drift.message and "FLASH_ATTN" in drift.message
    assert _knob(review, "attention_backend", "target").status == "undecided"
    # the Gemma4 speculator (chosen only for a Gemma4 MTP draft) copies the config with the draft's
    # model config: architecture hooks may rewrite its cache dtype, which the recipe leaves to "auto"
    assert _knob(review, "kv_cache_dtype", "draft").status == "undecided"


def test_every_speculator_the_dispatch_may_pick_is_checked(vllm_029):
    """At 0.29.0, init_speculator picks MTPSpeculator for method "mtp" only if the draft model is
    neither Gemma4 MTP nor multi-module MTP (undecidable from the recipe): all three are checked."""
    (finding,) = _findings(review_of(vllm_029, NESTED), "spec-draft-attention-backend-ignored")
    # Gemma4 keeps the target's backend unless its architecture hook rewrites it: either way not
    # the nested one, so every class the runner may build ignores it
    assert finding.classification == "confirmed" and finding.outcome == "undecided"
    symbols = {a.symbol for a in finding.evidence}
    assert {"MTPSpeculator", "Gemma4Speculator", "MultiModuleMTPSpeculator"} <= symbols
    assert "vllm/v1/worker/gpu/spec_decode/gemma4/speculator.py" in {a.path for a in finding.evidence}
    assert finding.assumptions == ()
    # an explicit draft KV dtype: load_eagle_model applies it, Gemma4Speculator never reads it
    text = (ROOT / NESTED).read_text().replace('attention_backend = "TRITON_ATTN"',
                                               'attention_backend = "TRITON_ATTN"\nkv_cache_dtype = "fp8"')
    (applied,) = _findings(review_text(vllm_029, text, "recipes/mixed.toml"), "spec-draft-kv-cache-dtype-applied")
    assert applied.classification == "plausible" and "runtime-branch" in applied.tags
    assert re.search(r"Gemma4Speculator \(if [^;]*\) -> fixed or target", applied.message)
    assert re.search(r"MTPSpeculator \(if [^;]*\) -> nested", applied.message)


# bfloat16: the Gemma4 speculator's copy re-runs architecture hooks, and one of them (DeepSeek
# V3.2's) rewrites a bfloat16 cache dtype to "auto"; no hook rewrites fp8_per_token_head
@pytest.mark.parametrize("recipe, kv", [(BF16, ("undecided", "plausible")), (FP8, ("applied", "confirmed"))])
def test_top_level_backend_reaches_target_and_draft(vllm_029, recipe, kv):
    review = review_of(vllm_029, recipe)
    # the model's config is not at hand, so whether the selector admits TRITON_ATTN for its
    # layers is open: both rows are undecided, naming that question (where the value flows is
    # decided: the reach finding below)
    for scope in ("target", "draft"):
        knob = _knob(review, "attention_backend", scope)
        assert knob.status == "undecided" and "attention-backend-admitted open:" in knob.note, scope
    assert _knob(review, "kv_cache_dtype", "draft").status == kv[0]
    (reach,) = _findings(review, "spec-attention-backend-reaches-draft")
    assert reach.classification == "confirmed"
    (inherits,) = _findings(review, "spec-draft-kv-cache-dtype-inherits")
    assert inherits.classification == kv[1]
    if kv[1] == "plausible":
        assert "verify_and_update_config" not in inherits.message and "DeepseekV32" in inherits.message
    assert not _findings(review, "recipe-identity-drift")
    assert not [f for f in review.findings if f.classification == "confirmed" and f.severity == "high"]


def test_fp8_recipe_is_plausible_with_the_missing_tests(vllm_029):
    review = review_of(vllm_029, FP8)
    (coverage,) = _findings(review, "spec-kv-cache-dtype-test-coverage")
    assert coverage.classification == "plausible" and "no-covering-test" in coverage.tags
    assert any("mtp" in t and "fp8_per_token_head" in t for t in coverage.missing_tests)
    assert review.missing_tests == tuple(sorted(coverage.missing_tests))
    for rule in ("triton-fp8-capability-gate", "backend-supports-kv-cache-dtype"):
        (finding,) = _findings(review, rule)
        assert finding.classification == "refuted", rule  # no confirmed incompatibility on sm120
    bf16 = review_of(vllm_029, BF16)
    assert not _findings(bf16, "spec-kv-cache-dtype-test-coverage")


def test_flash_attention_fp8_on_sm120_is_a_confirmed_incompatibility(vllm_029):
    review = review_text(vllm_029, FLASH_FP8, "recipes/flash-fp8.toml")
    (finding,) = _findings(review, "flash-attn-fp8-family-gate")
    assert (finding.classification, finding.severity) == ("confirmed", "high")
    gating = [a for a in finding.evidence if a.path == "vllm/v1/attention/backends/fa_utils.py"
              and a.role.startswith("gating return")]
    assert gating, finding.evidence
    source = vllm_029.read_text(gating[0].path).splitlines()[gating[0].start_line - 1:gating[0].end_line]
    assert "is_device_capability_family(90)" in "\n".join(source)
    assert "is_device_capability_family(100)" in "\n".join(source)
    callers = [a for a in finding.evidence if a.path == "vllm/v1/attention/backends/flash_attn.py"]
    assert callers and "supports_kv_cache_dtype" in callers[0].role


def test_typo_is_unknown_knob_and_value_outside_literal_is_invalid(vllm_029):
    text = (ROOT / BF16).read_text().replace("max_num_seqs = 1", "max_num_seq = 1") \
        .replace('kv_cache_dtype = "bfloat16"', 'kv_cache_dtype = "fp4"')
    review = review_text(vllm_029, text, "recipes/typo.toml")
    assert _knob(review, "max_num_seq", "engine").status == "unknown-knob"
    assert _knob(review, "kv_cache_dtype", "target").status == "invalid-value"
    typo = next(f for f in review.findings if f.id == "engine-key-exists:max_num_seq")
    assert typo.classification == "confirmed" and "max_num_seqs" in typo.message
    invalid = next(f for f in review.findings if f.id == "engine-value-admitted:kv_cache_dtype")
    assert invalid.classification == "confirmed" and "fp8_per_token_head" in invalid.message


def _all_anchors(review):
    anchors = list(review.runner.evidence)
    for knob in review.knobs:
        anchors += knob.evidence
    for finding in review.findings:
        anchors += finding.evidence
        anchors += [hop.anchor for hop in finding.trace if hop.anchor is not None]
    return anchors


@pytest.mark.parametrize("recipe", RECIPES + ("flash",))
def test_every_anchor_points_at_what_its_role_names(vllm_029, recipe):
    review = review_text(vllm_029, FLASH_FP8, "recipes/flash-fp8.toml") if recipe == "flash" else review_of(vllm_029, recipe)
    anchors = _all_anchors(review)
    assert anchors
    sha = vllm_029.revision.sha
    for a in anchors:
        assert a.url == f"https://github.com/vllm-project/vllm/blob/{sha}/{a.path}#L{a.start_line}" + (
            f"-L{a.end_line}" if a.end_line != a.start_line else ""), a
        assert 1 <= a.start_line <= a.end_line and a.role and a.symbol, a
        lines = vllm_029.read_text(a.path).splitlines()[a.start_line - 1:a.end_line]
        assert len(lines) == a.end_line - a.start_line + 1, a
        name = a.symbol.split(".")[-1]
        assert any(re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", line) for line in lines), a


def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "srcreview", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_gate_exit_codes_and_speed(vllm_029):
    review_of(vllm_029, NESTED)  # the source and facts are cached by now
    started = time.monotonic()
    nested = _cli("check", NESTED, "--rev", "0.29.0", "--format", "json")
    elapsed = time.monotonic() - started
    assert nested.returncode == 1, nested.stderr
    assert _cli("check", BF16, "--rev", "0.29.0", "--format", "json").returncode == 0
    assert elapsed < 60, f"check took {elapsed:.1f}s"
    combined = _cli("check", *RECIPES, "--rev", "0.29.0", "--format", "json")
    assert combined.returncode == 1
    import json

    assert [r["recipe"]["path"] for r in json.loads(combined.stdout)["reviews"]] == list(RECIPES)


def test_cli_usage_and_data_errors():
    assert _cli("check", "no-such-recipe.toml", "--rev", "0.29.0").returncode == 64
    assert _cli("check", NESTED, "--rev", "not-a-rev").returncode == 64
    assert _cli("check", NESTED, "--format", "yaml").returncode == 64


def test_cli_invalid_recipe_is_a_data_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[recipe]\nname = "x"\n[hardware]\ncompute_capability = "twelve"\n')
    result = _cli("check", "bad.toml", "--rev", "0.29.0", cwd=tmp_path)
    assert result.returncode == 65 and "bad.toml:4" in result.stderr


def test_cli_formats_review_and_verbose_text(vllm_029):
    import json

    review_of(vllm_029, NESTED)
    doc = _cli("check", NESTED, "--rev", "0.29.0", "--format", "review")
    assert doc.returncode == 1
    assert json.loads(doc.stdout)["schema_version"] == "operator-workflow/v1"
    text = _cli("check", NESTED, "--rev", "0.29.0", "--verbose", "--color", "never")
    assert text.returncode == 1
    assert text.stdout.index("Knobs") < text.stdout.index("Problems:")
    assert text.stdout.rstrip().splitlines()[-1].startswith("gate: failed (1 problem at or above confirmed:high; ")
    assert "trace:" in text.stdout and "[sink] -> get_model" in text.stdout
