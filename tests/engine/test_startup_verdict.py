"""The review's start-up verdict (srcreview.engine.startup) from the rules' `stops_startup`,
the findings and the knob rows."""

from __future__ import annotations

from srcreview.engine.startup import startup_verdict
from srcreview.model.findings import Finding, Knob
from srcreview.rules.loader import load_rules

RULES = load_rules()


def _finding(rule: str, classification: str, problem: str = "confirmed") -> Finding:
    return Finding(id=rule, rule=rule, classification=classification, severity="high", problem=problem,
                   claim=f"{rule} claims", message="m", fingerprint=f"{abs(hash((rule, classification))):016x}"[:16])


def test_the_rules_that_stop_startup_are_refusals():
    stopping = {r.id for r in RULES if r.stops_startup}
    assert "startup-rejected" in stopping and "engine-value-admitted" in stopping
    assert "spec-draft-attention-backend-ignored" not in stopping  # a problem, but vLLM starts


def test_a_confirmed_refusal_rejects():
    verdict = startup_verdict(RULES, [_finding("startup-rejected", "confirmed")], (), ())
    assert verdict.verdict == "rejected" and verdict.reasons == ("startup-rejected: startup-rejected claims",)
    assert verdict.line().startswith("start-up: rejected")


def test_a_refused_value_rejects_and_an_open_question_leaves_it_open():
    knob = Knob(key="max_num_seqs", value=-1, status="invalid-value")
    assert startup_verdict(RULES, [], (knob,), ()).verdict == "rejected"
    open_question = _finding("startup-rejected", "plausible")
    assert open_question.kind == "open-question"
    verdict = startup_verdict(RULES, [open_question], (), ())
    assert verdict.verdict == "undecided" and verdict.reasons == ("startup-rejected open",)


def test_an_undecided_knob_or_an_incomplete_review_is_undecided():
    knob = Knob(key="max_model_len", value=4096, status="undecided")
    assert startup_verdict(RULES, [], (knob,), ()).reasons == ("max_model_len (engine) undecided",)
    assert startup_verdict(RULES, [], (), ("config construction: x",)).verdict == "undecided"


def test_nothing_open_is_no_refusal_found_and_says_what_it_does_not_cover():
    rows = (Knob(key="enforce_eager", value=True, status="overridden"),
            Knob(key="max_num_seqs", value=8, status="accepted"))
    problem_that_starts = _finding("spec-draft-attention-backend-ignored", "confirmed")
    verdict = startup_verdict(RULES, [problem_that_starts], rows, ())
    assert verdict.verdict == "no-refusal-found" and "not walked" in verdict.line()
