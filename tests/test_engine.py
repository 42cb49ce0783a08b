"""The engine on fixture trees: knob table, when/verdict mapping, stale rules, fingerprints, determinism."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from srcreview.engine.run import FIXTURE_SHA, review
from srcreview.model.findings import RunnerInfo
from srcreview.model.recipe import parse_recipe
from srcreview.model.revision import Revision
from srcreview.source.base import DirectoryTree

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "vllm_snippets"

RECIPE = (Path(__file__).resolve().parent / "data" / "demo-mtp3-nested-triton.toml").read_text()


def _tree(name="rules_spec_decode", root=None):
    return DirectoryTree(root or FIXTURES / name, Revision(requested="fixture", sha=FIXTURE_SHA), provider="fixture")


def _review(text=RECIPE, tree=None):
    return review(parse_recipe(text, "recipes/demo.toml"), tree or _tree())


def _knobs(result):
    return {(k.key, k.scope): k.status for k in result.knobs}


def test_knob_table_scopes_and_statuses():
    result = _review()
    knobs = _knobs(result)
    assert knobs[("speculative_config.attention_backend", "draft")] == "ignored"
    assert knobs[("kv_cache_dtype", "target")] == "applied"
    assert knobs[("kv_cache_dtype", "draft")] == "applied"  # inherited
    assert knobs[("max_num_seqs", "engine")] == "accepted"
    assert knobs[("speculative_config.method", "engine")] == "accepted"
    draft_kv = next(k for k in result.knobs if k.key == "kv_cache_dtype" and k.scope == "draft")
    assert draft_kv.value == "fp8_per_token_head" and "inherited" in draft_kv.note
    assert result.runner.value == "v2" and result.runner.status == "resolved"


def test_findings_of_the_nested_recipe():
    result = _review()
    by_rule = {f.rule: f for f in result.findings}
    ignored = by_rule["spec-draft-attention-backend-ignored"]
    assert (ignored.classification, ignored.severity) == ("confirmed", "high")
    assert ignored.knobs == ("speculative_config.attention_backend",) and ignored.recipe_line == 15
    symbols = {a.symbol for a in ignored.evidence}
    assert {"load_eagle_model", "MTPSpeculator.load_draft_model"} <= symbols
    assert ignored.trace[0].kind == "recipe" and ignored.trace[0].recipe_line == 15
    # this tree's selector hands the platform no config it can follow: which backend runs is open
    drift = by_rule["recipe-identity-drift"]
    assert drift.classification == "plausible" and "could not be followed" in " ".join(drift.assumptions)
    coverage = by_rule["spec-kv-cache-dtype-test-coverage"]
    assert coverage.classification == "plausible" and coverage.missing_tests
    assert set(coverage.missing_tests) <= set(result.missing_tests)
    # findings are sorted: confirmed first, then by severity
    order = [f.sort_key() for f in result.findings]
    assert order == sorted(order)


def test_unknown_knob_and_invalid_value():
    text = RECIPE.replace('kv_cache_dtype = "fp8_per_token_head"', 'kv_cache_dtyp = "fp8"\nattention_backend = "TRITON"')
    result = _review(text)
    knobs = _knobs(result)
    assert knobs[("kv_cache_dtyp", "engine")] == "unknown-knob"
    assert knobs[("attention_backend", "target")] == "invalid-value"
    typo = next(f for f in result.findings if f.rule == "engine-key-exists")
    assert "did you mean kv_cache_dtype" in typo.message and typo.classification == "confirmed"


def test_stale_rules_are_reported_never_refuted():
    result = _review(tree=_tree("rules_stale"))
    stale = {s.rule for s in result.stale_rules}
    assert {"spec-draft-attention-backend-ignored", "engine-key-exists"} <= stale
    assert not [f for f in result.findings if f.classification in ("confirmed", "refuted")]
    assert all(s.missing for s in result.stale_rules)


def test_output_is_deterministic_and_has_no_local_paths():
    from srcreview.report import json as report_json
    from srcreview.report import review as report_review
    from srcreview.report import terminal

    first, second = _review(), _review()
    assert report_json.render(first) == report_json.render(second)
    for text in (report_json.render(first), report_review.render(first), terminal.render(first, verbose=True)):
        assert str(FIXTURES) not in text and "/tmp/" not in text and str(Path.home()) not in text


def test_fingerprints_survive_code_motion(tmp_path):
    moved = tmp_path / "tree"
    shutil.copytree(FIXTURES / "rules_spec_decode", moved)
    utils = moved / "vllm/v1/worker/gpu/spec_decode/eagle/utils.py"
    utils.write_text("# moved\n\n\n" + utils.read_text())
    before, after = _review(), _review(tree=_tree(root=moved))
    fp = lambda r: {f.rule: f.fingerprint for f in r.findings}  # noqa: E731
    assert fp(before) == fp(after)
    lines = lambda r: {a.start_line for f in r.findings for a in f.evidence if a.path.endswith("eagle/utils.py")}  # noqa: E731
    assert lines(before) != lines(after)


def test_json_contract_field_names():
    run = json.loads(__import__("srcreview.report.json", fromlist=["render"]).render(_review()))
    assert run["schema_version"] == 1 and len(run["reviews"]) == 1
    data = run["reviews"][0]
    assert {"tool", "recipe", "revision", "runner", "knobs", "findings", "stale_rules", "missing_tests"} <= set(data)
    assert {"sha", "version", "recipe_pin", "matches_recipe_pin"} <= set(data["revision"])
    assert {"value", "status", "evidence"} <= set(data["runner"])
    knob = data["knobs"][0]
    assert {"key", "value", "scope", "recipe_line", "status", "evidence", "tags"} <= set(knob)
    finding = data["findings"][0]
    assert {"id", "rule", "classification", "severity", "problem", "kind", "knobs", "claim", "message", "evidence",
            "tags", "fingerprint"} <= set(finding)
    anchor = finding["evidence"][0]
    assert set(anchor) == {"url", "path", "start_line", "end_line", "symbol", "role"}
    assert anchor["url"].startswith(f"https://github.com/vllm-project/vllm/blob/{FIXTURE_SHA}/")


def test_undecided_runner_downgrades_runner_dependent_verdicts():
    """A rule that needs the V2 runner, with the runner undecided, is at most plausible."""
    from srcreview.checks import CheckContext, CheckResult
    from srcreview.engine.run import _applies, _finding
    from srcreview.rules.loader import load_rules

    rule = next(r for r in load_rules() if r.id == "spec-draft-attention-backend-ignored")
    rule = rule.model_copy(update={"requires_runner": "v2"})  # a rule written for one runner
    recipe = parse_recipe(RECIPE, "recipes/demo.toml")
    ctx = CheckContext(index=None, tree=_tree(), recipe=recipe, bindings=dict(recipe.bindings),
                       runner=RunnerInfo(value=None, status="undecided"))
    ctx.template_values = {}
    matched, downgrade = _applies(rule, ctx)
    assert matched and downgrade
    finding = _finding(rule, ctx, None, CheckResult("target", symbols=("x",)), downgrade)
    assert finding.classification == "plausible" and "runner-undecided" in finding.tags
    ctx.runner = RunnerInfo(value="v1", status="resolved")
    assert _applies(rule, ctx) == (False, False)


@pytest.mark.parametrize("when, value, holds", [
    ({"set": True}, None, False), ({"set": False}, None, True), ({"equals": "triton_attn"}, "TRITON_ATTN", True),
    ({"not_equals": "TRITON_ATTN"}, None, True), ({"in": ["a", "b"]}, "b", True), ({"not_in": ["auto"]}, "fp8", True),
    ({"matches": "(?i)triton"}, "x-Triton-y", True), ({"startswith": "fp8"}, "bfloat16", False),
])
def test_when_conditions(when, value, holds):
    from srcreview.engine.run import _holds
    from srcreview.rules.loader import Condition

    assert _holds(Condition.model_validate(when), value, None) is holds


def test_inherited_draft_row_shows_the_declared_default_through_a_field_reference():
    """EngineArgs.kv_cache_dtype defaults to `CacheConfig.cache_dtype`: the draft inherits "auto"."""
    result = _review(RECIPE.replace('kv_cache_dtype = "fp8_per_token_head"\n', ""))
    draft = next(k for k in result.knobs if k.key == "kv_cache_dtype" and k.scope == "draft")
    assert (draft.value, draft.status, draft.recipe_line) == ("auto", "applied", None)
    assert not any(k.key == "kv_cache_dtype" and k.scope == "target" for k in result.knobs)


# -- dispatch alternatives: every feasible candidate is checked ---------------------------------

def _alternatives():
    from srcreview.source.overlays import materialize

    return _tree(root=materialize(FIXTURES / "rules_spec_decode_alternatives"))


def test_every_feasible_dispatch_candidate_is_checked_and_agreement_confirms():
    by_rule = {f.rule: f for f in _review(tree=_alternatives()).findings}
    ignored = by_rule["spec-draft-attention-backend-ignored"]
    assert ignored.classification == "confirmed" and ignored.outcome == "target"
    symbols = {a.symbol for a in ignored.evidence}
    assert {"MTPSpeculator", "SharedKVSpeculator", "load_eagle_model"} <= symbols
    assert any("every class the v2 runner may build gives target" in h.text for h in ignored.trace)
    # the result holds whichever class runs: the dispatch conditions are not what it rests on
    assert ignored.assumptions == ()
    assert "SharedKVSpeculator" in ignored.message


def test_disagreeing_dispatch_candidates_are_plausible_and_named():
    text = RECIPE.replace('attention_backend = "TRITON_ATTN"', 'kv_cache_dtype = "bfloat16"')
    result = review(parse_recipe(text, "recipes/demo.toml"), _alternatives())
    applied = next(f for f in result.findings if f.rule == "spec-draft-kv-cache-dtype-applied")
    assert applied.classification == "plausible" and "runtime-branch" in applied.tags
    assert applied.outcome == "undecided"
    assert "MTPSpeculator (" in applied.message and ") -> nested" in applied.message
    assert "SharedKVSpeculator (" in applied.message and ") -> target" in applied.message
    assert _knobs(result)[("speculative_config.kv_cache_dtype", "draft")] == "undecided"
    # the same recipe on the base tree (one candidate) is confirmed
    base = review(parse_recipe(text, "recipes/demo.toml"), _tree())
    assert next(f for f in base.findings if f.rule == "spec-draft-kv-cache-dtype-applied").classification == "confirmed"


def test_a_container_rebuilt_with_the_targets_own_value_still_inherits():
    text = RECIPE.replace('attention_backend = "TRITON_ATTN"\n', "").replace(
        "max_num_seqs = 1", 'max_num_seqs = 1\nattention_backend = "TRITON_ATTN"')
    result = review(parse_recipe(text, "recipes/demo.toml"), _alternatives())
    reaches = next(f for f in result.findings if f.rule == "spec-attention-backend-reaches-draft")
    assert reaches.classification == "confirmed" and reaches.outcome == "target"


def test_top_level_keys_are_bound_at_their_config_paths():
    from srcreview.index import Index
    from srcreview.vllm.runtime import config_bindings, key_paths

    index = Index(_tree())
    paths = key_paths(index)
    assert paths["kv_cache_dtype"].path == "cache_config.cache_dtype"
    assert paths["attention_backend"].path == "attention_config.backend"
    bound = config_bindings(index, {"attention_backend": "TRITON_ATTN", "kv_cache_dtype": "fp8"},
                            gpu="NVIDIA GeForce RTX 5090")
    assert bound["attention_config.backend"] == "TRITON_ATTN" and bound["cache_config.cache_dtype"] == "fp8"
    assert bound["hardware.platform"] == "cuda"
    assert "hardware.platform" not in config_bindings(index, {}, gpu="some accelerator")


def test_findings_carry_the_check_outcome_and_explain_uses_it():
    from srcreview.audit.explain import explain
    from srcreview.rules.loader import load_rules

    result = _review()
    rules = {r.id: r for r in load_rules()}
    for finding in result.findings:
        rule = rules[finding.rule]
        assert rule.verdict[finding.outcome] == finding.classification  # no runner downgrade, none settled
        reason = explain(result, finding, rule).rule
        assert reason.outcomes == (finding.outcome,) and reason.downgraded is False
    # a saved review from before the field existed still explains (inferred from the verdict)
    old = result.findings[0].model_copy(update={"outcome": ""})
    assert explain(result, old, rules[old.rule]).rule.outcomes
