"""Small things of the command line: no abbreviated options, what a key typo is, the runner and
the source named in words (issue 13.7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import DEMO_RECIPE, FIXTURE_REV

HERE = Path(__file__).resolve().parent.parent
REV = FIXTURE_REV


@pytest.fixture
def workdir(offline_workdir):
    (offline_workdir / "demo.toml").write_text(DEMO_RECIPE.read_text())
    return offline_workdir


@pytest.mark.parametrize("args", [("check", "demo.toml", "--form", "json"), ("check", "demo.toml", "--fail", "none"),
                                  ("graph", "--rev", REV, "--from", "x", "--dep", "3"), ("audit", "r.json", "--form", "json")])
def test_an_abbreviated_option_is_a_usage_error(workdir, cli, args):
    result = cli(*args)
    assert result.code == 64 and "unrecognized arguments" in result.err and result.out == ""


def test_an_engine_key_the_source_does_not_know_is_a_finding_not_a_usage_error(workdir, cli):
    """README: a mistake in srcreview's own inputs is 64/65; an unknown engine key is decided by
    the pinned source (it may exist at another revision), so it is a problem finding: exit 1."""
    text = (workdir / "demo.toml").read_text().replace("max_num_seqs = 1", "max_num_seqz = 1")
    (workdir / "typo.toml").write_text(text)
    result = cli("check", "typo.toml", "--source", "tree", "--rev", REV, "--format", "concise")
    line = next(n for n, row in enumerate(text.splitlines(), 1) if row.startswith("max_num_seqz"))
    assert result.code == 1
    assert (f"typo.toml:{line}:1: high confirmed problem engine-key-exists - max_num_seqz is not an engine argument "
            "or config field at this revision [fails the gate]") in result.out.splitlines()
    readme = " ".join((HERE.parent / "README.md").read_text().split())
    assert "An engine key the pinned vLLM does not know" in readme and "fails the default gate (exit 1)" in readme


def test_the_text_names_the_source_and_the_runner_in_words(workdir, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    result = cli("check", "demo.toml", "--source", "tree", "--rev", REV)
    lines = result.out.splitlines()
    assert lines[1] == "vLLM 1234567ab, from the local source"
    assert lines[2].startswith("start-up: ")  # issue 23: the start-up verdict first
    assert any(line.startswith("runtime profile: ") for line in lines[3:6])  # issue 24: then the profile (wrapped)
    runner = next(n for n, line in enumerate(lines) if line.startswith("model runner:"))
    assert lines[runner] == "model runner: V2, as VllmConfig.use_v2_model_runner decides under the recipe (-v: why)"
    verbose = cli("check", "demo.toml", "--source", "tree", "--rev", REV, "-v").out.splitlines()
    runner = next(n for n, line in enumerate(verbose) if line.startswith("model runner:"))
    assert verbose[runner + 1].startswith("  why: ") and "use_v2_model_runner" in verbose[runner + 1]
