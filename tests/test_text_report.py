"""`--format text`: findings grouped as problems, open questions and facts; the gate line last."""

from __future__ import annotations

import datetime as dt
import json

import pytest
from gate_support import DATA, NESTED_SPEC, copy_recipes, make_review

from srcreview.baseline import parse_baseline
from srcreview.gate import evaluate
from srcreview.report import terminal
from srcreview.waivers import load_waivers


@pytest.fixture
def nested(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    copy_recipes(tmp_path, "nested.toml", "toplevel.toml")
    return make_review(DATA / "nested.toml", "recipes/nested.toml", NESTED_SPEC)


def _block(text: str, fingerprint: str) -> str:
    """The lines of one finding: from its head line to its fingerprint line."""
    lines = text.splitlines()
    end = next(i for i, line in enumerate(lines) if line.strip() == f"fingerprint: {fingerprint}")
    start = max(i for i in range(end) if line_is_head(lines[i]))
    return "\n".join(lines[start:end + 1])


def line_is_head(line: str) -> bool:
    return line.startswith("  [") and not line.startswith("   ")


def test_groups_by_meaning_each_with_classification_and_claim(nested):
    text = terminal.render([nested], gate=evaluate([nested]), width=100)
    assert text.index("Problems: 1") < text.index("Open questions: 1") < text.index("Facts: 1")
    for finding in nested.findings:
        block = _block(text, finding.fingerprint)
        assert block.splitlines()[0].startswith(f"  [{finding.severity}] {finding.classification}  {finding.rule}")
        assert f"claim: {finding.claim}" in block
    problem = next(f for f in nested.findings if f.kind == "problem")
    assert "fails the gate" in _block(text, problem.fingerprint).splitlines()[0]
    assert sum("fails the gate" in line for line in text.splitlines()) == 1


def test_the_last_line_states_the_gate_decision_and_counts(nested):
    text = terminal.render([nested], gate=evaluate([nested]), width=100)
    assert text.splitlines()[-1] == "gate: failed (1 problem at or above confirmed:high; 1 open question; 1 fact)"
    passed = terminal.render([nested], gate=evaluate([nested], "none"), width=100)
    assert passed.splitlines()[-1] == "gate: passed (--fail-on none; 1 problem; 1 open question; 1 fact)"
    assert "gate:" not in terminal.render([nested], width=100), "no gate, no gate line"


def test_waived_and_baseline_status_are_shown_per_finding(nested, tmp_path):
    problem = next(f for f in nested.findings if f.kind == "problem")
    (tmp_path / "recipes" / "srcreview.toml").write_text(
        f'[[waivers]]\nfingerprint = "{problem.fingerprint}"\nreason = "measured fine in run 41"\n'
        'expires = 2027-01-31\n', encoding="utf-8")
    waivers = load_waivers([(tmp_path / "recipes" / "nested.toml", "recipes/nested.toml")])
    baseline = parse_baseline(json.loads(nested.model_copy(update={"findings": nested.findings[1:]})
                                         .model_dump_json()), "previous.json")
    gate = evaluate([nested], waivers=waivers, baseline=baseline, today=dt.date(2026, 11, 29))
    text = terminal.render([nested], gate=gate, width=100)
    block = _block(text, problem.fingerprint)
    assert "waived until 2027-01-31: measured fine in run 41 (recipes/srcreview.toml:1)" in block
    assert "baseline: new" in block and "fails the gate" not in block
    for finding in nested.findings[1:]:
        assert "baseline: unchanged" in _block(text, finding.fingerprint)
    assert text.splitlines()[-1] == ("gate: passed (0 problems at or above confirmed:high; 1 waived; "
                                     "1 open question; 1 fact; baseline: 1 new, 0 worse, 2 unchanged, 0 fixed)")
    assert gate.exit_code == 0
