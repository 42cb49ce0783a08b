"""`srcreview check RECIPES --rev A --rev B [-j N]`: every recipe at every revision as JSON Lines.

Offline, on a git history built here from the history fixture (two commits whose verdicts differ,
read with --source); each cell is held to what `check RECIPE --rev REV --format json` prints for
it, computed in the same test. The real-vLLM runs reuse 0.29.0 (listed twice); the one with two
releases is marked `releases`.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import DEMO_RECIPE
from history_support import RECIPE, build_history


@pytest.fixture
def matrix(make_git_repo, cache_dir, tmp_path, monkeypatch):
    """(repo path, [base, applied] commits): two recipes in the working directory, b.toml given first."""
    repo = make_git_repo("vllm")
    commits = build_history(repo, ["base", "applied"])
    shutil.copy(RECIPE, tmp_path / "b.toml")
    shutil.copy(DEMO_RECIPE, tmp_path / "a.toml")
    monkeypatch.chdir(tmp_path)
    return str(repo.path), commits


def _lines(text: str) -> list[dict]:
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


def test_every_cell_is_the_single_check_in_recipe_then_rev_order(cli, matrix):
    source, (base, applied) = matrix
    result = cli("check", "b.toml", "a.toml", "--source", source, "--rev", applied, "--rev", base, "-j", "1")
    *cells, summary = _lines(result.out)
    assert [(c["recipe"], c["rev"]) for c in cells] == [("a.toml", applied), ("a.toml", base),
                                                         ("b.toml", applied), ("b.toml", base)]
    codes = []
    for cell in cells:
        single = cli("check", cell["recipe"], "--source", source, "--rev", cell["rev"], "--format", "json")
        assert cell["report"] == json.loads(single.out)
        assert cell["exit_code"] == single.code == cell["report"]["gate"]["exit_code"]
        codes.append(single.code)
    assert set(codes) == {0, 1}, "the history's two commits decide the nested recipe differently"
    counts = {str(code): codes.count(code) for code in sorted(set(codes))}
    assert summary == {"matrix": {"recipes": 2, "revs": [applied, base], "cells": 4, "exit_codes": counts,
                                  "worst_exit": 1}}
    assert result.code == 1
    assert "peak RSS" in result.err


@pytest.mark.parametrize("revs", [("base", "applied"), ("base", "base")],
                         ids=["a process per revision", "one revision's recipes shared by two processes"])
def test_one_process_and_two_give_the_same_bytes(cli, matrix, revs):
    source, (base, applied) = matrix
    given = [{"base": base, "applied": applied}[name] for name in revs]
    args = ("check", "b.toml", "a.toml", "--source", source, "--rev", given[0], "--rev", given[1])
    one, two = cli(*args, "-j", "1"), cli(*args, "--jobs", "2")
    assert one.code == two.code and one.code in (0, 1), two.err
    assert one.out == two.out
    assert len(one.out.splitlines()) == 5
    assert "with 2 processes" in two.err and "with 1 process " in one.err


def test_a_revision_listed_twice_gives_the_same_cells_twice(cli, matrix):
    source, (base, _applied) = matrix
    result = cli("check", "b.toml", "--source", source, "--rev", base, "--rev", base, "-j", "2")
    first, second, summary = result.out.splitlines()
    assert first == second
    assert json.loads(summary)["matrix"]["cells"] == 2


def test_a_revision_that_cannot_be_read_is_an_incomplete_cell_and_the_worst_exit(cli, matrix):
    source, (base, _applied) = matrix
    absent = "0123456789abcdef0123456789abcdef01234567"  # no commit of the history
    result = cli("check", "b.toml", "a.toml", "--source", source, "--rev", base, "--rev", absent, "-j", "2")
    *cells, summary = _lines(result.out)
    missing = [c for c in cells if c["rev"] == absent]
    assert [c["recipe"] for c in missing] == ["a.toml", "b.toml"]
    single = cli("check", "b.toml", "--source", source, "--rev", absent, "--format", "json")
    assert single.out == "" and single.code == 2
    for cell in missing:
        assert (cell["exit_code"], cell["report"]) == (2, None)
        assert cell["error"] in single.err
    assert all(c["report"] is not None for c in cells if c["rev"] == base)
    assert summary["matrix"]["exit_codes"]["2"] == 2 and 1 in {c["exit_code"] for c in cells}
    assert summary["matrix"]["worst_exit"] == result.code == 2  # incomplete outranks a failed gate


@pytest.mark.parametrize("extra", [("--format", "text"), ("--format", "sarif"), ("--format", "markdown"),
                                   ("--sarif", "out.sarif"), ("--markdown", "out.md"), ("--json", "out.json")])
def test_outputs_that_cannot_stream_are_usage_errors(cli, matrix, extra):
    source, (base, applied) = matrix
    result = cli("check", "b.toml", "--source", source, "--rev", base, "--rev", applied, *extra)
    assert result.code == 64
    assert result.out == ""
    assert "--format json" in result.err
    assert not [name for name in ("out.sarif", "out.md", "out.json") if Path(name).exists()]


def test_bad_jobs_and_a_malformed_rev_are_usage_errors_before_any_review(cli, matrix):
    source, (base, _applied) = matrix
    assert cli("check", "b.toml", "--source", source, "--rev", base, "--rev", base, "-j", "0").code == 64
    bad = cli("check", "b.toml", "--source", source, "--rev", base, "--rev", "not-a-rev")
    assert bad.code == 64 and bad.out == ""


def test_one_rev_keeps_the_single_check_output(cli, matrix):
    source, (base, _applied) = matrix
    one = cli("check", "b.toml", "--source", source, "--rev", base, "--format", "json")
    assert "schema_version" in json.loads(one.out) and "matrix" not in one.out
    text = cli("check", "b.toml", "--source", source, "--rev", base)
    assert text.code == one.code and not text.out.startswith("{")


EXAMPLES = ("examples/thinkingcap-awq-vllm029-5090-16k-mtp3-triton-fp8.toml",
            "examples/thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml")


def _at_root(monkeypatch):
    monkeypatch.chdir(Path(__file__).resolve().parents[2])


def test_real_vllm_two_examples_at_029_twice_in_two_processes(cli, vllm_029, monkeypatch):
    _at_root(monkeypatch)
    result = cli("check", *EXAMPLES, "--rev", "0.29.0", "--rev", "0.29.0", "-j", "2")
    *cells, summary = _lines(result.out)
    assert [c["recipe"] for c in cells] == sorted(EXAMPLES * 2)
    singles = {path: cli("check", path, "--rev", "0.29.0", "--format", "json") for path in EXAMPLES}
    for cell in cells:
        assert cell["report"] == json.loads(singles[cell["recipe"]].out)
        assert cell["exit_code"] == singles[cell["recipe"]].code
    assert summary["matrix"]["cells"] == 4
    assert result.code == max(s.code for s in singles.values())  # 0 and 1 here: no error cell


@pytest.mark.releases
def test_real_vllm_two_examples_at_two_releases(cli, vllm_release, monkeypatch):
    vllm_release("0.29.0")
    vllm_release("0.33.0")
    _at_root(monkeypatch)
    result = cli("check", *EXAMPLES, "--rev", "0.33.0", "--rev", "0.29.0", "-j", "2")
    *cells, summary = _lines(result.out)
    assert [(c["recipe"], c["rev"]) for c in cells] == [(path, rev) for path in sorted(EXAMPLES)
                                                        for rev in ("0.33.0", "0.29.0")]
    for cell in cells:
        single = cli("check", cell["recipe"], "--rev", cell["rev"], "--format", "json")
        assert cell["report"] == json.loads(single.out) and cell["exit_code"] == single.code
    assert summary["matrix"]["revs"] == ["0.33.0", "0.29.0"]


def test_the_library_yields_the_cells_in_order_and_every_process_reports_its_steps(matrix):
    import io

    from rich.console import Console

    from srcreview import api
    from srcreview.cli.commands._multirev import _Steps
    from srcreview.cli.progress import live_bar
    from srcreview.model.recipe import load_recipe
    from srcreview.model.revision import resolve_rev
    from srcreview.rules.loader import load_rules
    from srcreview.source.obtain import open_source

    source, (base, applied) = matrix
    workspace = api.Workspace(rev=lambda recipe: "never asked", layers=lambda recipe, recipe_file: [],
                              open_tree=lambda rev, recipe, layers: open_source(resolve_rev(rev), source=Path(source)))
    recipes = [load_recipe(Path(name), display_path=name) for name in ("a.toml", "b.toml")]
    events = []
    cells = list(api.iter_reviews(workspace, recipes, [base, applied, base], load_rules(), jobs=2,
                                  on_step=lambda event, label: events.append((event, label))))
    assert [(c.recipe, c.rev) for c in cells] == [(i, j) for i in range(2) for j in range(3)]
    assert all(c.error is None and c.review.recipe.path == recipes[c.recipe].path for c in cells)
    assert [c.review.revision.sha for c in cells[:3]] == [base, applied, base]
    assert sorted(label for event, label in events if event == "fetch") == sorted([base, applied])
    done = [label for event, label in events if event == "done"]
    assert sorted(done) == sorted([base, base, applied, applied])  # a rev listed twice is reviewed once

    with live_bar(Console(file=io.StringIO(), force_terminal=True)) as bar:  # what progress_display draws on
        steps = _Steps(bar, len(done), "reviews")
        for event, label in events:
            steps.step(event, label)
        [task] = bar.tasks
        assert (task.completed, task.total, task.fields["detail"]) == (4, 4, "4/4 reviews analysed")


def test_a_patch_that_applies_at_one_revision_only_is_invalid_data_there_and_the_worst_exit(cli, matrix):
    import difflib

    from history_support import BASE, LOADER

    source, (base, applied) = matrix
    text = (Path(source) / LOADER).read_text()  # the work tree is at the last commit: applied
    line = "    if speculative_config.attention_backend is not None:\n"  # a line the base commit lacks
    assert line in text and line not in (BASE / LOADER).read_text()
    patched = text.replace(line, "    if speculative_config.attention_backend:\n", 1)
    Path("only-applied.diff").write_text("".join(difflib.unified_diff(
        text.splitlines(keepends=True), patched.splitlines(keepends=True), f"a/{LOADER}", f"b/{LOADER}")))
    result = cli("check", "b.toml", "--source", source, "--rev", base, "--rev", applied,
                 "--patch", "only-applied.diff", "-j", "2")
    (at_base, at_applied), summary = _lines(result.out)[:2], _lines(result.out)[-1]
    single = cli("check", "b.toml", "--source", source, "--rev", base, "--patch", "only-applied.diff")
    assert single.code == 65 and at_base["exit_code"] == 65 and at_base["report"] is None
    assert at_base["error"] in single.err
    assert at_applied["exit_code"] in (0, 1) and at_applied["report"]["reviews"][0]["patches"]
    assert summary["matrix"]["worst_exit"] == result.code == 65  # invalid data outranks any gate decision


def test_a_full_stderr_loses_the_run_s_notes_never_its_decision(matrix):
    """`2>/dev/full`: the matrix's closing note on stderr cannot be written; stdout and the exit
    code are the run's (fixed: the failed note ended the run as an internal error, exit 2)."""
    import subprocess
    import sys

    source, (base, applied) = matrix
    command = [sys.executable, "-m", "srcreview", "check", "b.toml", "a.toml", "--source", source,
               "--rev", applied, "--rev", base, "-j", "1"]
    seen = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert "peak RSS" in seen.stderr and seen.returncode == 1
    with open("/dev/full", "w") as full:
        lost = subprocess.run(command, stdout=subprocess.PIPE, stderr=full, text=True, timeout=300)
    assert (lost.returncode, lost.stdout) == (seen.returncode, seen.stdout)
