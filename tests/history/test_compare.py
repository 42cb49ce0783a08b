"""Diffing two reviews (srcreview.history.compare) and `srcreview diff` on a git history built here.

The reviews come from the real engine on the history fixture before and after the draft
loader starts applying speculative_config.attention_backend; the expected lines are found in
the fixture files, not typed in.
"""

from __future__ import annotations

import json

import pytest
from history_support import BASE, HISTORY, KNOB, LOADER, RECIPE, RULE, build_history

from srcreview.engine.run import review
from srcreview.history.compare import compare_reviews
from srcreview.model.recipe import load_recipe
from srcreview.model.revision import Revision
from srcreview.source.base import DirectoryTree


@pytest.fixture(scope="module")
def two_reviews(tmp_path_factory):
    import shutil

    applied = tmp_path_factory.mktemp("applied")
    shutil.copytree(BASE, applied, dirs_exist_ok=True)
    shutil.copytree(HISTORY / "applied", applied, dirs_exist_ok=True)
    recipe = load_recipe(RECIPE, "recipe.toml")
    before = review(recipe, DirectoryTree(BASE, Revision(requested="a", sha="a" * 40)))
    after = review(recipe, DirectoryTree(applied, Revision(requested="b", sha="b" * 40)))
    return before, after


def _lines(path, text):
    return {n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line}


def test_the_knob_that_starts_being_applied_is_a_change_with_the_lines_that_made_it(two_reviews):
    before, after = two_reviews
    diff = compare_reviews(before, after)
    changed = {(k.key, k.scope): k for k in diff.knobs if k.change != "unchanged"}
    assert set(changed) == {(KNOB, "draft")}
    row = changed[(KNOB, "draft")]
    assert (row.status_before, row.status_after) == ("ignored", "applied")
    reads = _lines(HISTORY / "applied" / LOADER, "speculative_config.attention_backend")
    assert {(a.path, a.start_line) for a in row.only_after} == {(LOADER, n) for n in reads}
    assert all(a.role.startswith("reads SpeculativeConfig.attention_backend") for a in row.only_after)
    assert all(a.url.split("/blob/")[1].startswith("b" * 40) for a in row.only_after)
    unchanged = [k for k in diff.knobs if k.change == "unchanged"]
    assert {k.key for k in unchanged} >= {"kv_cache_dtype", "speculative_config.method"}


def test_findings_are_paired_and_the_classification_change_is_named(two_reviews):
    before, after = two_reviews
    diff = compare_reviews(before, after)
    by_rule = {f.rule: f for f in diff.findings}
    flip = by_rule[RULE]
    assert (flip.class_before, flip.class_after, flip.change) == ("confirmed", "refuted", "changed")
    assert "classification" in flip.what
    assert flip.before.fingerprint == flip.after.fingerprint
    assert all(f.change == "unchanged" for r, f in by_rule.items() if r != RULE)
    assert diff.changed and not diff.incomplete
    assert compare_reviews(before, before).changed is False


def test_a_finding_whose_symbols_moved_is_still_one_finding(two_reviews):
    before, after = two_reviews
    moved = [f.model_copy(update={"fingerprint": "f" * 16}) if f.rule == RULE else f for f in after.findings]
    diff = compare_reviews(before, after.model_copy(update={"findings": tuple(moved)}))
    flip = [f for f in diff.findings if f.rule == RULE]
    assert len(flip) == 1 and set(flip[0].what) >= {"classification", "fingerprint"}
    gone = after.model_copy(update={"findings": tuple(f for f in after.findings if f.rule != RULE)})
    vanished = [f for f in compare_reviews(before, gone).findings if f.rule == RULE]
    assert [(f.change, f.class_after) for f in vanished] == [("disappeared", "no finding")]


@pytest.fixture
def history(make_git_repo, cache_dir):
    repo = make_git_repo("vllm")
    return repo, build_history(repo, ["base", "note", "applied"])


def test_diff_cli_json_and_exit_codes(cli, history):
    repo, (base, note, applied) = history
    result = cli("diff", str(RECIPE), "--rev", base, "--rev", applied, "--source", str(repo.path), "--format", "json")
    assert result.code == 1, result.err
    data = json.loads(result.out)
    assert data["changed"] is True and data["incomplete"] is False
    assert (data["before"]["sha"], data["after"]["sha"]) == (base, applied)
    flips = [f for f in data["findings"] if f["change"] != "unchanged"]
    assert [(f["rule"], f["before"]["classification"], f["after"]["classification"]) for f in flips] == [
        (RULE, "confirmed", "refuted")]
    same = cli("diff", str(RECIPE), "--rev", base, "--rev", note, "--source", str(repo.path))
    assert same.code == 0, same.err
    assert "No change between" in same.out


def test_diff_cli_text_shows_both_sides(cli, history):
    repo, (base, _note, applied) = history
    result = cli("diff", str(RECIPE), "--rev", base, "--rev", applied, "--source", str(repo.path))
    assert result.code == 1
    out = result.out
    assert f"knob {KNOB} (draft): ignored -> applied" in out
    assert f"finding {RULE}: confirmed -> refuted" in out
    assert f"+ only at {applied[:9]}: " in out and f"- only at {base[:9]}: " in out
    assert str(repo.path) not in out


@pytest.mark.parametrize("args, message", [
    (("--rev", "0.29.0"), "exactly two"),
    (("--rev", "0.29.0", "--rev", "0.30.0", "--rev", "0.28.0"), "exactly two"),
    (("--rev", "0.29.0", "--rev=-x"), "starts with '-'"),
    (("--rev", "0.29.0", "--rev", "9.9.9"), "release 9.9.9 is neither in pins/ nor on the package index"),
])
def test_diff_usage_errors(cli, cache_dir, args, message, http_server, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", http_server.serve_index({"vllm-0.29.0.tar.gz": b"not fetched"}))
    result = cli("diff", str(RECIPE), *args)
    assert result.code == 64 and message in result.err
    assert not (cache_dir / "registry").exists(), "no source is fetched before the arguments are checked"
