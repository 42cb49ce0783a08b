"""Every example of every rule, run against fixtures/vllm_snippets/ (one generic harness).

The same harness backs `srcreview rules test`: a rule's examples are its tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from srcreview.engine.examples import run_example
from srcreview.rules.loader import load_rules

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "vllm_snippets"
CASES = [(rule, example) for rule in load_rules() for example in rule.examples]


@pytest.mark.parametrize("rule, example", CASES, ids=[f"{r.id}:{e.name}" for r, e in CASES])
def test_rule_example(rule, example):
    assert run_example(rule, example, FIXTURES) == []


def test_every_check_kind_has_examples_with_every_classification_it_can_reach():
    """Each check kind is exercised; each rule has an example of its main verdict."""
    from srcreview.checks import KINDS

    used = {rule.check.kind for rule, _ in CASES}
    assert used == set(KINDS)
    for rule in load_rules():
        expected = {e.expect for e in rule.examples}
        assert expected - {"skipped", "stale", "none"} or "none" in expected, rule.id
