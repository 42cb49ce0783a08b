"""The classes of confident wrong verdicts (issue 10), one case each, on a tree written here.

`fixtures/vllm_snippets/spec_runners` mimics both model runners and several speculative
methods (see its README). Each case reviews a recipe with every shipped rule and states the
knob statuses and findings the source decides; anything else must stay open (plausible /
undecided), never confirmed or refuted.
"""

from __future__ import annotations

import pytest
from recipe_support import FIXTURES, build_recipe, fixture_tree

from srcreview.engine.run import review

V1 = {"VLLM_USE_V2_MODEL_RUNNER": "0"}
V2 = {"VLLM_USE_V2_MODEL_RUNNER": "1"}
NESTED = {"speculative_config.attention_backend": "TRITON_ATTN"}
# the fixture's selector leaves the admission of TRITON_ATTN open for these recipes:
# a backend row that an open start-up question names is undecided, never applied; where it
# flows is what the propagation verdicts below decide
OPEN_ADMISSION = "undecided"


def _review(settings: dict, env: dict, fixture: str = "spec_runners"):
    return review(build_recipe(settings, env=env), fixture_tree(fixture))


def _spec(method: str, **more) -> dict:
    return {"speculative_config.method": method, "speculative_config.num_speculative_tokens": 3, **more}


def _knobs(result) -> dict:
    return {f"{k.key}@{k.scope}": k.status for k in result.knobs}


def _verdicts(result) -> dict:
    return {f.rule: f.classification for f in result.findings}


CASES = [
    # (name, settings, env, runner, knob expectations, finding expectations (None: no finding))
    ("v1 ngram loads no draft model", _spec("ngram", **NESTED), V1, "v1",
     {"speculative_config.attention_backend@draft": "ignored"},
     {"spec-draft-attention-backend-ignored": None, "spec-attention-backend-reaches-draft": None}),
    ("v1 ngram with a top-level backend", _spec("ngram", attention_backend="TRITON_ATTN"), V1, "v1",
     {"attention_backend@draft": "ignored", "attention_backend@target": OPEN_ADMISSION},
     {"spec-attention-backend-reaches-draft": None}),
    ("v1 suffix loads no draft model", _spec("suffix", **NESTED), V1, "v1",
     {"speculative_config.attention_backend@draft": "ignored"},
     {"spec-draft-attention-backend-ignored": None}),
    ("v1 eagle applies the nested backend", _spec("eagle", **NESTED), V1, "v1",
     {"speculative_config.attention_backend@draft": "applied"},
     {"spec-draft-attention-backend-ignored": "refuted"}),
    ("v1 eagle does not inherit the top-level backend", _spec("eagle", attention_backend="TRITON_ATTN"), V1, "v1",
     {"attention_backend@draft": "ignored", "attention_backend@target": OPEN_ADMISSION},
     {"spec-attention-backend-reaches-draft": "refuted"}),
    ("v1 draft_model loads its model through the base proposer", _spec("draft_model", **NESTED), V1, "v1",
     {"speculative_config.attention_backend@draft": "applied"},
     {"spec-draft-attention-backend-ignored": "refuted"}),
    ("v1 mtp: the Gemma4 proposer depends on the model", _spec("mtp", **NESTED), V1, "v1",
     {"speculative_config.attention_backend@draft": "undecided"},
     {"spec-draft-attention-backend-ignored": "plausible"}),
    ("v2 eagle applies the nested backend through the override table", _spec("eagle", **NESTED), V2, "v2",
     {"speculative_config.attention_backend@draft": "applied"},
     {"spec-draft-attention-backend-ignored": "refuted"}),
    ("v2 eagle inherits the top-level backend", _spec("eagle", attention_backend="TRITON_ATTN"), V2, "v2",
     {"attention_backend@draft": OPEN_ADMISSION},
     {"spec-attention-backend-reaches-draft": "confirmed"}),
    ("v2 ngram speculator has no draft model", _spec("ngram", **NESTED), V2, "v2",
     {"speculative_config.attention_backend@draft": "ignored"},
     {"spec-draft-attention-backend-ignored": None}),
    ("v2 dflash keeps the target cache config (IfExp in replace)", _spec("dflash", kv_cache_dtype="fp8"), V2, "v2",
     {"kv_cache_dtype@draft": "applied"},
     {"spec-draft-kv-cache-dtype-inherits": "confirmed"}),
    ("v2 dflash applies an explicit draft kv dtype",
     _spec("dflash", kv_cache_dtype="fp8", **{"speculative_config.kv_cache_dtype": "fp8_e5m2"}), V2, "v2",
     {"speculative_config.kv_cache_dtype@draft": "applied", "kv_cache_dtype@draft": "ignored"},
     {"spec-draft-kv-cache-dtype-applied": "confirmed"}),
    ("v2 mtp: the Gemma4 speculator depends on the model", _spec("mtp", **NESTED), V2, "v2",
     {"speculative_config.attention_backend@draft": "undecided"},
     {"spec-draft-attention-backend-ignored": "plausible"}),
]


@pytest.mark.parametrize("name, settings, env, runner, knobs, verdicts", CASES, ids=[c[0] for c in CASES])
def test_class(name, settings, env, runner, knobs, verdicts):
    result = _review(settings, env)
    assert result.runner.value == runner, result.runner.reason
    rows = _knobs(result)
    for where, status in knobs.items():
        assert rows.get(where) == status, (where, rows)
    found = _verdicts(result)
    for rule, classification in verdicts.items():
        assert found.get(rule) == classification, (rule, found, [f.message for f in result.findings if f.rule == rule])
    assert not result.stale_rules, result.stale_rules
    assert not result.incomplete, result.incomplete


def test_declared_defaults_decide_the_runner():
    """`use_v2_model_runner` tests hisparse_config and watermark_config first: their declared
    default is None, so the env var decides."""
    assert _review(_spec("eagle"), V1).runner.value == "v1"
    assert _review(_spec("eagle"), V2).runner.value == "v2"


def test_a_start_up_rejection_fails_the_review():
    result = _review(_spec("draft_model", **NESTED), V2)
    rejected = [f for f in result.findings if f.rule == "startup-rejected"]
    assert [f.classification for f in rejected] == ["confirmed"]
    lines = (FIXTURES / "spec_runners" / "vllm/config/vllm.py").read_text().splitlines()
    call, raised = rejected[0].evidence[:2]
    assert (call.path, raised.path) == ("vllm/config/vllm.py", "vllm/config/vllm.py")
    assert "self._validate_v2_model_runner()" in lines[call.start_line - 1]  # __post_init__ calls it
    assert "raise ValueError" in lines[raised.start_line - 1]  # and it raises on every path


def test_no_rejection_on_the_runner_that_accepts_the_method():
    result = _review(_spec("draft_model", **NESTED), V1)
    assert not [f for f in result.findings if f.rule == "startup-rejected"]


def test_two_questions_about_one_fact_agree():
    """field-applied and inherits used to disagree on a getattr table; now one fact answers both."""
    nested = _review(_spec("eagle", **NESTED), V2)
    top = _review(_spec("eagle", attention_backend="TRITON_ATTN"), V2)
    assert _verdicts(nested)["spec-draft-attention-backend-ignored"] == "refuted"
    assert _verdicts(top)["spec-attention-backend-reaches-draft"] == "confirmed"


def test_decided_findings_rest_on_nothing_open():
    for _, settings, env, *_ in CASES:
        for finding in _review(settings, env).findings:
            if finding.classification in ("confirmed", "refuted"):
                assert not finding.assumptions, (finding.rule, finding.assumptions)
