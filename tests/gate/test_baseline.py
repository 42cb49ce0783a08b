"""--baseline: fail only on findings that are new or got worse; list new, fixed, unchanged."""

from __future__ import annotations

import json

import pytest
from gate_support import DATA, NESTED_SPEC, copy_recipes, make_review

from srcreview.core.errors import (
    EXIT_DATA,
    EXIT_GATE_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    DataError,
    UsageError,
)
from srcreview.gate.baseline import load_baseline
from srcreview.gate.policy import evaluate
from srcreview.report import markdown, sarif

RULE, KEY = "spec-draft-attention-backend-ignored", "speculative_config.attention_backend"


@pytest.fixture(autouse=True)
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    copy_recipes(tmp_path, "nested.toml", "toplevel.toml")


def _review(spec, path="recipes/nested.toml"):
    return make_review(DATA / "nested.toml", path, spec)


def _write(tmp_path, data, name="previous.json"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return path


def _spec(rule, key, classification, severity, **kw):
    return (rule, key, classification, severity, kw)


def test_unchanged_findings_do_not_fail_the_gate(tmp_path):
    review = _review(NESTED_SPEC)
    assert evaluate([review]).exit_code == EXIT_GATE_FAILED
    previous = load_baseline(_write(tmp_path, review.model_dump_json()), "previous.json")
    result = evaluate([review], baseline=previous)
    assert result.exit_code == EXIT_OK
    assert len(result.unchanged) == len(review.findings) and not result.new and not result.fixed
    assert {f.baseline for f in result.reviews[0].findings} == {"unchanged"}


def test_new_and_worse_fail_fixed_and_unchanged_are_listed(tmp_path):
    before = _review([
        _spec(RULE, KEY, "plausible", "high", symbols=("load_eagle_model",)),
        _spec("kv-dtype-inherited", "kv_cache_dtype", "confirmed", "high", symbols=("CacheConfig",)),
        _spec("gone-rule", "speculative_config.method", "confirmed", "high", symbols=("x",)),
    ])
    after = _review([
        _spec(RULE, KEY, "confirmed", "high", symbols=("load_eagle_model",)),                 # worse
        _spec("kv-dtype-inherited", "kv_cache_dtype", "confirmed", "high", symbols=("CacheConfig",)),  # unchanged
        _spec("new-rule", "speculative_config.num_speculative_tokens", "confirmed", "high", symbols=("y",)),  # new
    ])
    previous = load_baseline(_write(tmp_path, before.model_dump_json()))
    result = evaluate([after], baseline=previous)
    assert result.exit_code == EXIT_GATE_FAILED
    by_rule = {f.rule: f.baseline for f in result.reviews[0].findings}
    assert by_rule == {RULE: "worse", "kv-dtype-inherited": "unchanged", "new-rule": "new"}
    assert {f.rule for _, f in result.failing} == {RULE, "new-rule"}
    assert [e.rule for _, e in result.fixed] == ["gone-rule"]
    assert [e.rule for e in result.reviews[0].gate.fixed] == ["gone-rule"]

    text = markdown.render(result.reviews, gate=result)
    assert "new 1 · worse 1 · unchanged 1" in text and "fixed 1" in text
    assert "gone-rule" in text
    log = json.loads(sarif.render(result.reviews, gate=result))
    states = {r["ruleId"]: r["baselineState"] for r in log["runs"][0]["results"]}
    assert states == {RULE: "updated", "kv-dtype-inherited": "unchanged", "new-rule": "new"}
    assert log["runs"][0]["properties"]["gate"]["baseline"]["fixed"] == 1


def test_improved_finding_passes(tmp_path):
    before = _review([_spec(RULE, KEY, "confirmed", "high")])
    after = _review([_spec(RULE, KEY, "plausible", "high")])
    result = evaluate([after], "any:info", baseline=load_baseline(_write(tmp_path, before.model_dump_json())))
    assert result.exit_code == EXIT_OK and [f.baseline for _, f in result.improved] == ["improved"]


def test_fingerprints_not_lines_match(tmp_path):
    """Moving the knob to another recipe line keeps the finding unchanged."""
    review = _review(NESTED_SPEC)
    data = json.loads(review.model_dump_json())
    for finding in data["findings"]:
        finding["recipe_line"] = 1
        for anchor in finding["evidence"]:
            anchor["start_line"] += 40
    result = evaluate([review], baseline=load_baseline(_write(tmp_path, data)))
    assert result.exit_code == EXIT_OK and not result.new


def test_baseline_shapes_and_recipe_matching(tmp_path):
    nested = _review(NESTED_SPEC)
    other = make_review(DATA / "toplevel.toml", "recipes/toplevel.toml")
    gated = evaluate([nested, other])
    dumped = [json.loads(r.model_dump_json()) for r in gated.reviews]
    for shape in (dumped, {"reviews": dumped}):
        result = evaluate([nested, other], baseline=load_baseline(_write(tmp_path, shape)))
        assert result.exit_code == EXIT_OK and len(result.unchanged) == len(nested.findings)
    moved = _review(NESTED_SPEC, path="configs/nested.toml")
    result = evaluate([moved, other], baseline=load_baseline(_write(tmp_path, dumped)))
    assert result.exit_code == EXIT_OK, "matched by recipe name when the path changed"


def test_unknown_recipe_in_baseline_makes_everything_new(tmp_path):
    other = make_review(DATA / "toplevel.toml", "recipes/toplevel.toml")
    nested = _review(NESTED_SPEC)
    result = evaluate([nested, other], baseline=load_baseline(_write(tmp_path, [other.model_dump(mode="json")])))
    assert result.exit_code == EXIT_GATE_FAILED
    assert len(result.new) == len(nested.findings)


@pytest.mark.parametrize("content, where", [
    ("{not json", "previous.json:1"),
    ("[1, 2]", "review 0"),
    (json.dumps({"recipe": {"path": "r.toml"}, "findings": [{"fingerprint": "ab12cd34", "classification": "maybe"}]}),
     "findings[0].classification"),
    (json.dumps({"recipe": {"path": "r.toml"}, "findings": [{"classification": "confirmed"}]}),
     "findings[0].fingerprint"),
])
def test_malformed_baseline_is_invalid_data(tmp_path, content, where):
    path = _write(tmp_path, content)
    with pytest.raises(DataError) as err:
        load_baseline(path, "previous.json")
    assert err.value.exit_code == EXIT_DATA and where in err.value.message and "\n" not in err.value.message


def test_missing_baseline_is_a_usage_error(tmp_path):
    with pytest.raises(UsageError) as err:
        load_baseline(tmp_path / "nope.json", "nope.json")
    assert err.value.exit_code == EXIT_USAGE and "nope.json" in err.value.message


def test_baseline_path_is_never_shown_absolute(tmp_path):
    import argparse
    import os

    from srcreview.cli.commands._gate_args import run_gate

    review = _review(NESTED_SPEC)
    inside = _write(tmp_path, review.model_dump_json(), "prev.json")
    elsewhere = tmp_path / "ci-artifacts"
    elsewhere.mkdir()
    outside = _write(elsewhere, review.model_dump_json(), "main.json")
    copy_recipes(tmp_path / "work", "nested.toml")
    for given, shown, cwd in ((str(inside), "prev.json", tmp_path), (str(outside), "main.json", tmp_path / "work")):
        os.chdir(cwd)
        args = argparse.Namespace(recipes=[], baseline=given, fail_on=None, date=None, sarif=None, markdown=None)
        result = run_gate(args, [review]).result
        assert result.baseline == shown and result.reviews[0].gate.baseline == shown
        text = result.reviews[0].model_dump_json() + markdown.render([review], gate=result) + \
            sarif.render([review], gate=result)
        assert str(tmp_path) not in text


def test_incomplete_review_lists_nothing_as_fixed(tmp_path):
    before = _review(NESTED_SPEC)
    after = make_review(DATA / "nested.toml", "recipes/nested.toml", (), incomplete=["source unavailable"])
    result = evaluate([after], baseline=load_baseline(_write(tmp_path, before.model_dump_json())))
    assert result.exit_code == 2 and result.fixed == ()


def test_worse_and_improved_follow_the_rules_problem(tmp_path):
    """For a rule whose claim is a desired property, confirmed -> refuted is a fact becoming a problem."""
    desired = "draft-inherits-backend"
    fact = _review([_spec(desired, "kv_cache_dtype", "confirmed", "high", problem="refuted")])
    problem = _review([_spec(desired, "kv_cache_dtype", "refuted", "high", problem="refuted")])
    result = evaluate([problem], baseline=load_baseline(_write(tmp_path, fact.model_dump_json())))
    assert [f.baseline for f in result.reviews[0].findings] == ["worse"] and result.exit_code == EXIT_GATE_FAILED
    result = evaluate([fact], baseline=load_baseline(_write(tmp_path, problem.model_dump_json(), "p.json")))
    assert [f.baseline for f in result.reviews[0].findings] == ["improved"] and result.exit_code == EXIT_OK
