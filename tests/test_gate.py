"""The fail-on policy and the gate's exit codes, on reviews of small recipes."""

from __future__ import annotations

import argparse

import pytest
from gate_support import DATA, NESTED_SPEC, copy_recipes, make_review

from srcreview.cli.commands._gate_args import add_gate_args, run_gate
from srcreview.cli.main import _Parser
from srcreview.core.dates import review_date, today
from srcreview.core.errors import (
    EXIT_GATE_FAILED,
    EXIT_INCOMPLETE,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
)
from srcreview.gate.policy import evaluate, parse_fail_on


@pytest.fixture
def nested(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    copy_recipes(tmp_path, "nested.toml", "toplevel.toml")
    return make_review(DATA / "nested.toml", "recipes/nested.toml", NESTED_SPEC)


def _fingerprints(nested, classification):
    return {f.fingerprint for f in nested.findings if f.classification == classification}


@pytest.mark.parametrize("text, expected", [
    ("confirmed:high", "confirmed:high"),
    ("CONFIRMED:High", "confirmed:high"),
    ("plausible", "plausible:info"),
    ("plausible:medium, confirmed:low", "confirmed:low,plausible:medium"),
    ("any:low", "any:low"),
    ("none", "none"),
])
def test_fail_on_syntax(text, expected):
    assert str(parse_fail_on(text)) == expected


@pytest.mark.parametrize("text", ["", "high", "confirmed:critical", "refuted:high", "none,confirmed", "confirmed:",
                                  "confirmed:high:x", "confirmed;high", "confirmed:high,"])
def test_malformed_fail_on_is_a_usage_error(text):
    with pytest.raises(UsageError) as err:
        parse_fail_on(text)
    assert err.value.exit_code == EXIT_USAGE
    assert "\n" not in err.value.message


def test_default_gate_fails_on_confirmed_high_only(nested):
    result = evaluate([nested])
    assert result.exit_code == EXIT_GATE_FAILED and result.decision == "failed"
    assert {f.fingerprint for _, f in result.failing} == _fingerprints(nested, "confirmed")
    gate = result.reviews[0].gate
    assert gate.status == "failed" and gate.fail_on == "confirmed:high"
    assert set(gate.failing) == _fingerprints(nested, "confirmed")


@pytest.mark.parametrize("policy, failing_classes", [
    ("confirmed:high", {"confirmed"}),
    ("plausible:medium", {"confirmed", "plausible"}),
    ("plausible:high", {"confirmed"}),
    ("any:high", {"confirmed"}),
    ("any:info", {"confirmed", "plausible"}),
    ("none", set()),
])
def test_policy_selects_kind_and_least_severity(nested, policy, failing_classes):
    """The shared rules' problem is a confirmed claim: the refuted high finding is a fact and never fails."""
    assert {f.kind for f in nested.findings} == {"problem", "open-question", "fact"}
    result = evaluate([nested], policy)
    assert {f.classification for _, f in result.failing} == failing_classes
    assert result.exit_code == (EXIT_GATE_FAILED if failing_classes else EXIT_OK)


def _desired_property_review(classification: str):
    """A rule whose claim is a desired property (problem = "refuted"): refuted is its problem."""
    spec = [("draft-inherits-backend", "attention_backend", classification, "high", {"problem": "refuted"})]
    return make_review(DATA / "toplevel.toml", "recipes/toplevel.toml", spec)


@pytest.mark.parametrize("classification, kind, code", [
    ("refuted", "problem", EXIT_GATE_FAILED), ("confirmed", "fact", EXIT_OK), ("plausible", "open-question", EXIT_OK)])
def test_each_rule_says_which_classification_is_a_problem(nested, classification, kind, code):
    review = _desired_property_review(classification)
    finding = review.findings[0]
    assert (finding.problem, finding.kind) == ("refuted", kind)
    result = evaluate([review])  # the default confirmed:high keeps meaning "a confirmed problem, high"
    assert result.exit_code == code
    assert evaluate([review], "any:info").exit_code == (EXIT_OK if kind == "fact" else EXIT_GATE_FAILED), \
        "facts never fail the gate, whatever the policy"


def test_informational_rule_findings_are_facts_or_open_questions(nested):
    for classification, kind in (("confirmed", "fact"), ("refuted", "fact"), ("plausible", "open-question")):
        spec = [("runner-selected", "attention_backend", classification, "high", {"problem": "none"})]
        review = make_review(DATA / "toplevel.toml", "recipes/toplevel.toml", spec)
        assert review.findings[0].kind == kind
        assert evaluate([review]).exit_code == EXIT_OK


def test_kind_always_follows_classification_and_problem():
    from srcreview.model.findings import Finding

    data = {"id": "r", "rule": "r", "classification": "refuted", "severity": "high", "claim": "c", "message": "m",
            "fingerprint": "0123456789abcdef", "problem": "refuted", "kind": "fact"}
    assert Finding.model_validate(data).kind == "problem", "a saved file cannot relabel a finding"
    assert Finding.model_validate({k: v for k, v in data.items() if k not in ("problem", "kind")}).kind == "fact", \
        "a review saved before rules declared their problem reads as problem = confirmed"


def test_gate_summary_counts_every_finding_once(nested):
    result = evaluate([nested])
    assert result.summary() == "1 problem at or above confirmed:high; 1 open question; 1 fact"
    assert evaluate([nested], "none").summary() == "--fail-on none; 1 problem; 1 open question; 1 fact"
    assert evaluate([nested], "plausible:medium").summary() == \
        "2 findings at or above plausible:medium; 0 open questions; 1 fact"
    broken = make_review(DATA / "toplevel.toml", "recipes/toplevel.toml", incomplete=["source unavailable: offline"])
    assert evaluate([nested, broken]).summary().endswith("; 1 review could not complete")


def test_bf16_like_recipe_without_confirmed_findings_passes():
    spec = [s for s in NESTED_SPEC if s[2] != "confirmed"]
    review = make_review(DATA / "toplevel.toml", "recipes/toplevel.toml",
                         [(r, "attention_backend" if k.endswith("attention_backend") else k, c, s, kw)
                          for r, k, c, s, kw in spec])
    result = evaluate([review])
    assert result.exit_code == EXIT_OK and result.failing == ()
    assert result.reviews[0].gate.status == "passed"


def test_incomplete_review_never_passes(nested):
    broken = make_review(DATA / "toplevel.toml", "recipes/toplevel.toml", incomplete=["source unavailable: offline"])
    assert evaluate([broken], "none").exit_code == EXIT_INCOMPLETE
    mixed = evaluate([nested, broken])
    assert mixed.exit_code == EXIT_INCOMPLETE and mixed.decision == "incomplete"
    assert mixed.failing, "failures of the complete review are still reported"
    statuses = {r.recipe.path: r.gate.status for r in mixed.reviews}
    assert statuses == {"recipes/nested.toml": "failed", "recipes/toplevel.toml": "incomplete"}
    assert evaluate([], "none").exit_code == EXIT_INCOMPLETE


def test_several_recipes_one_result(nested):
    other = make_review(DATA / "toplevel.toml", "recipes/toplevel.toml")
    result = evaluate([other, nested])
    assert [r.recipe.path for r in result.reviews] == ["recipes/toplevel.toml", "recipes/nested.toml"], \
        "reviews keep the order the recipes were given"
    assert result.exit_code == EXIT_GATE_FAILED
    assert {p for p, _ in result.failing} == {"recipes/nested.toml"}


def test_annotate_is_idempotent_and_keeps_every_finding(nested):
    result = evaluate([nested])
    again = result.annotate(result.annotate([nested]))
    assert again == result.reviews
    assert len(again[0].findings) == len(nested.findings)


def _parser():
    parser = _Parser(prog="srcreview check")
    parser.add_argument("recipes", nargs="*")
    add_gate_args(parser)
    return parser


def test_gate_args_defaults_and_usage_errors(capsys):
    args = _parser().parse_args([])
    assert str(args.fail_on) == "confirmed:high" and args.baseline is None and args.date is None
    for bad in (["--fail-on", "confirmed:urgent"], ["--date", "29/11/2026"]):
        with pytest.raises(SystemExit) as exit_:
            _parser().parse_args(bad)
        assert exit_.value.code == EXIT_USAGE
    assert "confirmed:urgent" in capsys.readouterr().err


def test_run_gate_writes_sarif_and_markdown(tmp_path, nested, monkeypatch):
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    sarif, md = tmp_path / "out.sarif", tmp_path / "summary.md"
    args = _parser().parse_args(["--fail-on", "plausible:medium", "--sarif", str(sarif), "--markdown", str(md),
                                 "--date", "2026-11-29"])
    run = run_gate(args, [nested])
    assert run.result.exit_code == EXIT_GATE_FAILED and run.date == "2026-11-29"
    assert '"version": "2.1.0"' in sarif.read_text()
    assert "plausible:medium" in md.read_text() and "2026-11-29" in md.read_text()
    bad = _parser().parse_args(["--sarif", str(tmp_path / "missing-dir" / "x.sarif")])
    with pytest.raises(UsageError):
        run_gate(bad, [nested])


def test_review_date_from_option_or_source_date_epoch():
    assert review_date("2026-11-29", {}) == "2026-11-29"
    assert review_date(None, {"SOURCE_DATE_EPOCH": "1795910400"}) == "2026-11-29"
    assert review_date("2026-01-02", {"SOURCE_DATE_EPOCH": "1795910400"}) == "2026-01-02"
    assert review_date(None, {}) is None and review_date(None, {"SOURCE_DATE_EPOCH": ""}) is None
    for env in ({"SOURCE_DATE_EPOCH": "yesterday"}, {"SOURCE_DATE_EPOCH": "-5"}, {"SOURCE_DATE_EPOCH": "9" * 30}):
        with pytest.raises(UsageError):
            review_date(None, env)
    with pytest.raises(UsageError):
        review_date("2026-02-30", {})
    assert today("2026-11-29").isoformat() == "2026-11-29"


def test_namespace_without_gate_options_uses_defaults(nested):
    run = run_gate(argparse.Namespace(recipes=[]), [nested])
    assert str(run.result.fail_on) == "confirmed:high" and run.result.exit_code == EXIT_GATE_FAILED


def test_a_crash_is_an_incomplete_review_not_a_gate_failure(cli, tmp_path, monkeypatch, cache_dir):
    """An unexpected exception inside a command exits 2, never 1 (which would read as 'gate failed').
    (An empty cache: no stored review answers instead of the analysis.)"""
    import srcreview.api as api

    def explode(*args, **kwargs):
        raise RuntimeError("analysis bug")

    monkeypatch.setattr(api, "review_recipes", explode)
    recipe = copy_recipes(tmp_path, "nested.toml") / "nested.toml"
    result = cli("check", str(recipe), "--rev", "0.29.0")
    assert result.code == EXIT_INCOMPLETE and "internal error" in result.err
