"""`--format text`: findings grouped as problems, open questions and facts; the gate line last."""

from __future__ import annotations

import datetime as dt
import json
import re

import pytest
from gate_support import DATA, NESTED_SPEC, copy_recipes, make_review

from srcreview.gate.baseline import parse_baseline
from srcreview.gate.policy import evaluate
from srcreview.gate.waivers import load_waivers
from srcreview.report import terminal


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


# --- concise, links only with -v, the terminal's width (issue 13.4) ---------------------------

LONG = "vllm/v1/worker/gpu/spec_decode/eagle/a_rather_long_module_name_for_the_width_test.py"


def _with_evidence(review):
    from gate_support import anchor

    evidence = (anchor(LONG, 36, 114, "load_eagle_model", "inspected: no read of the field"),
                anchor("vllm/config/speculative.py", 10, 12, "SpeculativeConfig", "declares the field"))
    knobs = tuple(k.model_copy(update={"evidence": evidence, "note": "inherited from the target through the "
                                                                     "shared VllmConfig"}) for k in review.knobs)
    findings = tuple(f.model_copy(update={"evidence": evidence * 3}) for f in review.findings)
    return review.model_copy(update={"knobs": knobs, "findings": findings})


@pytest.mark.parametrize("width", [60, 80, 120])
def test_text_fits_the_width_without_breaking_a_path(nested, width):
    review = _with_evidence(nested)
    text = terminal.render([review], gate=evaluate([review]), width=width)
    paths = {LONG, "vllm/config/speculative.py"}
    for line in text.splitlines():
        words = line.split()
        if len(line) > width:  # only a line that holds one word longer than the rest of the line
            assert any(w.startswith(("vllm/", "recipes/", "gate:")) or len(w) > width // 2 for w in words), line
        for word in words:
            if word.startswith("vllm/"):
                assert word.split(":")[0] in paths, f"a path broken inside: {word!r}"
    assert "https://" not in text, "links only with --verbose"
    verbose = terminal.render([review], gate=evaluate([review]), width=width, verbose=True)
    assert review.findings[0].evidence[0].url in verbose and "trace:" in verbose


def test_the_evidence_column_is_shown_only_when_it_fits(nested):
    review = _with_evidence(nested)
    wide = terminal.render([review], width=200)
    narrow = terminal.render([review], width=90)
    assert any(line.split()[:1] == ["key"] and "evidence" in line for line in wide.splitlines())
    assert not any(line.split()[:1] == ["key"] and "evidence" in line for line in narrow.splitlines())
    for text in (wide, narrow):
        assert "inherited from the target through the shared VllmConfig" in " ".join(text.split())


def test_concise_is_one_line_per_finding_then_the_gate(nested):
    from srcreview.report import concise

    gate = evaluate([nested])
    lines = concise.render([nested], gate=gate).splitlines()
    assert len(lines) == len(nested.findings) + 1 and lines[-1].startswith("gate: failed (")
    pattern = re.compile(r"^recipes/nested\.toml:(\d+):1: (high|medium|low|info) (confirmed|plausible|refuted) "
                         r"(problem|open-question|fact) ([a-z0-9-]+) - (.+?)( \[.*\])?$")
    kinds = []
    for line, finding in zip(lines, sorted(nested.findings, key=lambda f: -("fact", "open-question",
                                                                            "problem").index(f.kind)), strict=False):
        match = pattern.match(line)
        assert match, line
        assert (int(match[1]), match[5], match[6]) == (nested.line_of(finding), finding.rule, finding.claim)
        kinds.append(match[4])
    assert kinds == ["problem", "open-question", "fact"]
    assert lines[0].endswith(" [fails the gate]") and "https://" not in "\n".join(lines)


def test_cli_concise_and_the_terminal_width(cli, monkeypatch, tmp_path):
    from conftest import DEMO_RECIPE, FIXTURE_REV, fixture_source

    fixture_source(tmp_path / "tree")
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo.toml").write_text(DEMO_RECIPE.read_text())
    base = ("check", "demo.toml", "--source", "tree", "--rev", FIXTURE_REV)
    concise = cli(*base, "--format", "concise")
    assert concise.code == 1, concise.err
    body = concise.out.splitlines()
    # issue 23: the start-up verdict first; issue 24: the runtime profile; then one line a finding
    assert body[0].startswith("demo.toml: start-up: ") and body[1].startswith("demo.toml: runtime profile: ")
    assert all(re.match(r"^demo\.toml:\d+:1: ", line) for line in body[2:-1]) and body[-1].startswith("gate: failed")
    for columns in ("70", "150"):
        monkeypatch.setenv("COLUMNS", columns)
        text = cli(*base).out
        too_long = [line for line in text.splitlines() if len(line) > int(columns)]
        assert all(line.startswith(("demo.toml: ", "gate: ")) for line in too_long), too_long  # one-line headers
    assert "https://" not in text and "https://" in cli(*base, "-v").out
