"""The bisection logic (srcreview.history.bisect), pure: verdict sequences in, boundaries and notes out."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from srcreview.history.bisect import Question, bisect
from srcreview.model.findings import (
    Finding,
    Knob,
    RecipeRef,
    Review,
    RevisionInfo,
    StaleRule,
    ToolInfo,
)


def run(values: str, **kw):
    calls = []

    def verdict(i):
        calls.append(i)
        return values[i]

    result = bisect(range(len(values)), verdict, **kw)
    return result, calls


def true_changes(values: str) -> list[int]:
    return [i for i in range(1, len(values)) if values[i] != values[i - 1]]


@pytest.mark.parametrize("n", range(2, 40))
def test_a_single_change_is_found_exactly_with_few_tests(n):
    for boundary in range(1, n):
        values = "c" * boundary + "r" * (n - boundary)
        result, calls = run(values)
        assert [(b.before, b.after) for b in result.changes] == [(boundary - 1, boundary)]
        assert result.first_change.verdict_before == "c" and result.first_change.verdict_after == "r"
        assert len(calls) == len(set(calls)), "a revision is judged at most once"
        assert len(calls) <= 2 + (n - 1).bit_length()
        assert result.monotonic
        assert list(result.order) == calls


@given(st.lists(st.sampled_from("abcd"), min_size=1, max_size=30))
def test_every_change_is_found_when_each_verdict_is_one_contiguous_run(raw):
    # regroup so each value occurs in one contiguous run (the bisection's assumption)
    order = list(dict.fromkeys(raw))
    values = "".join(sorted(raw, key=order.index))
    result, _ = run(values)
    assert [b.after for b in result.changes] == true_changes(values)
    assert result.monotonic


@given(st.lists(st.sampled_from("ab"), min_size=1, max_size=25))
def test_any_sequence_gives_adjacent_boundaries_consistent_with_what_was_tested(raw):
    values = "".join(raw)
    result, _ = run(values)
    for b in result.changes:
        assert b.after == b.before + 1
        assert values[b.before] == b.verdict_before and values[b.after] == b.verdict_after
    assert all(values[i] == v for i, v in result.verdicts.items())


def test_exhaustive_sees_a_reverted_change_and_says_it_is_not_monotonic():
    values = "ccrrcc"
    quick, calls = run(values)
    assert quick.changes == () and calls == [0, 5]
    assert any("same at both ends" in note for note in quick.notes())
    full, calls = run(values, exhaustive=True)
    assert sorted(calls) == list(range(6))
    assert [(b.before, b.after) for b in full.changes] == [(1, 2), (3, 4)]
    assert not full.monotonic
    assert any("not monotonic" in note for note in full.notes())


def test_a_verdict_coming_back_among_tested_revisions_is_flagged():
    # c, then r, then c again, then p: following the first boundaries tests the c that comes back
    result, _ = run("crrcp")
    assert [(b.verdict_before, b.verdict_after, b.after) for b in result.changes] == [
        ("c", "r", 1), ("r", "c", 3), ("c", "p", 4)]
    assert not result.monotonic
    assert any("not monotonic" in note for note in result.notes())


def test_several_changes_are_all_reported_in_order():
    values = "aaabbbbccd"
    result, _ = run(values)
    assert [(b.verdict_before, b.verdict_after, b.after) for b in result.changes] == [
        ("a", "b", 3), ("b", "c", 7), ("c", "d", 9)]
    assert any("changes 3 times" in note for note in result.notes())


def test_no_revisions_is_an_error_and_one_revision_has_no_change():
    with pytest.raises(ValueError):
        bisect([], lambda r: r)
    result, calls = run("a")
    assert result.changes == () and calls == [0]


# ------------------------------------------------------------------------------ the question

def _review(findings=(), knobs=(), stale=()):
    return Review(tool=ToolInfo(version="0"), recipe=RecipeRef(path="r.toml", name="r"),
                  revision=RevisionInfo(sha="a" * 40), findings=tuple(findings), knobs=tuple(knobs),
                  stale_rules=tuple(StaleRule(rule=r, missing=("X",)) for r in stale))


def _finding(rule, key, classification):
    return Finding(id=f"{rule}:{key}", rule=rule, classification=classification, severity="high", knobs=(key,),
                   claim="c", message="m", fingerprint=f"{rule}{key}"[:16])


def test_the_question_reduces_a_review_to_one_verdict():
    review = _review(findings=[_finding("r1", "a", "confirmed"), _finding("r1", "b", "refuted")],
                     knobs=[Knob(key="a", scope="draft", status="ignored"),
                            Knob(key="a", scope="target", status="applied")])
    assert Question(rule="r1", knob="a").verdict(review) == "confirmed"
    assert Question(rule="r1").verdict(review) == "r1:a: confirmed; r1:b: refuted"
    assert Question(rule="r2").verdict(review) == "no finding"
    assert Question(rule="r2").verdict(_review(stale=["r2"])) == "stale"
    assert Question(knob="a", scope="draft").verdict(review) == "ignored"
    assert Question(knob="a").verdict(review) == "draft: ignored; target: applied"
    assert Question(knob="zz").verdict(review) == "no row"
