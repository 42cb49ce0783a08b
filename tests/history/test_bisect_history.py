"""`srcreview bisect` over a git history built in the test, whose commits change a rule's
outcome at a known commit (the draft loader starts applying the nested attention backend).

Each tested commit is reviewed by the real engine through the git provider (`--source` to the
repository, `--revs` in order); the boundary, the verdicts and the evidence are asserted.
"""

from __future__ import annotations

import json

import pytest
from history_support import KNOB, LOADER, RECIPE, RULE, build_history

STEPS = ["base", "note", "note", "applied", "note", "note", "note"]
BOUNDARY = STEPS.index("applied")


@pytest.fixture
def history(make_git_repo, cache_dir):
    repo = make_git_repo("vllm")
    return repo, build_history(repo, STEPS)


def bisect_json(cli, repo, commits, *extra):
    result = cli("bisect", str(RECIPE), "--source", str(repo.path), "--revs", ",".join(commits),
                 "--format", "json", *extra)
    assert result.code == 0, result.err
    return json.loads(result.out)


def _line_of(repo, commit, text):
    content = repo.git("show", f"{commit}:{LOADER}").splitlines()
    return [n for n, line in enumerate(content, 1) if text in line]


def test_bisect_finds_the_commit_where_the_rule_flips(cli, history):
    repo, commits = history
    data = bisect_json(cli, repo, commits, "--rule", RULE)
    first = data["first_change"]
    assert first["after"]["rev"] == commits[BOUNDARY]
    assert first["before"]["rev"] == commits[BOUNDARY - 1]
    assert (first["before"]["verdict"], first["after"]["verdict"]) == ("confirmed", "refuted")
    assert [c["after"]["rev"] for c in data["changes"]] == [commits[BOUNDARY]]
    assert data["monotonic"] is True and data["exhaustive"] is False
    tested = [r["rev"] for r in data["revisions"] if r["tested"]]
    assert len(tested) < len(commits), "bisection, not a linear scan"
    assert set(data["test_order"]) == {r["label"] for r in data["revisions"] if r["tested"]}
    # every tested verdict agrees with the side of the boundary it is on
    for n, row in enumerate(data["revisions"]):
        if row["tested"]:
            assert row["verdict"] == ("confirmed" if n < BOUNDARY else "refuted")
    # the evidence on the new side: the loader's reads of the field, at the lines that read it
    reads = {(a["path"], a["start_line"]) for a in first["only_after"] if "reads" in a["role"]}
    expected = {(LOADER, n) for n in _line_of(repo, commits[BOUNDARY], "speculative_config.attention_backend")}
    assert reads and reads <= expected
    assert all(commits[BOUNDARY] in a["url"] for a in first["only_after"])
    assert [f["classification"] for f in first["before"]["findings"]] == ["confirmed"]
    assert [f["classification"] for f in first["after"]["findings"]] == ["refuted"]


def test_bisect_on_the_knob_status(cli, history):
    repo, commits = history
    data = bisect_json(cli, repo, commits, "--knob", f"{KNOB}@draft")
    first = data["first_change"]
    assert first["after"]["rev"] == commits[BOUNDARY]
    assert (first["before"]["verdict"], first["after"]["verdict"]) == ("ignored", "applied")
    assert [k["status"] for k in first["after"]["knobs"]] == ["applied"]
    # with --rule and --knob: the rule's finding for that key
    both = bisect_json(cli, repo, commits, "--rule", RULE, "--knob", KNOB)
    assert both["first_change"]["after"]["rev"] == commits[BOUNDARY]


def test_text_output_names_the_boundary_and_the_tested_commits(cli, history):
    repo, commits = history
    result = cli("bisect", str(RECIPE), "--source", str(repo.path), "--revs", ",".join(commits), "--rule", RULE)
    assert result.code == 0, result.err
    old, new = commits[BOUNDARY - 1][:12], commits[BOUNDARY][:12]
    assert f"First change at {new}: confirmed at {old} -> refuted" in result.out
    assert "untested" in result.out and "tested in this order:" in result.out
    assert result.err == ""  # no progress drawn when stderr is not a terminal


def test_a_reverted_change_is_reported_honestly(cli, make_git_repo, cache_dir):
    repo = make_git_repo("vllm")
    commits = build_history(repo, ["base", "note", "applied", "note", "reverted", "note"])
    quick = bisect_json(cli, repo, commits, "--rule", RULE)
    assert quick["first_change"] is None
    assert any("same at both ends" in note for note in quick["notes"])
    full = bisect_json(cli, repo, commits, "--rule", RULE, "--all")
    assert [(c["before"]["verdict"], c["after"]["rev"]) for c in full["changes"]] == [
        ("confirmed", commits[2]), ("refuted", commits[4])]
    assert full["monotonic"] is False and full["exhaustive"] is True
    assert any("not monotonic" in note for note in full["notes"])


@pytest.mark.parametrize("args, message", [
    ((), "give --rule"),
    (("--rule", "no-such-rule", "--revs", "0.25.0,0.26.0"), "unknown rule"),
    (("--rule", RULE, "--revs", "0.25.0"), "at least two"),
    (("--rule", RULE, "--revs", "0.25.0,0.25.0"), "listed twice"),
    (("--rule", RULE, "--revs", "0.25.0,9.9.9"), "release 9.9.9 is neither in pins/ nor on the package index"),
    (("--rule", RULE, "--revs", "0.25.0,0.26.0", "--from", "0.25.0"), "cannot be combined"),
    (("--rule", RULE, "--from", "0.25.0"), "--from A --to B"),
    (("--rule", RULE, "--from", "0.30.0", "--to", "0.25.0"), "newer than"),
    (("--rule", RULE, "--from", "0.25.0", "--to", "9.9.9"), "not in pins/"),
    (("--rule", RULE, "--from", "abcdef1", "--to", "0.30.0"), "not a release version"),
    (("--knob", "x@nowhere", "--revs", "0.25.0,0.26.0"), "scope"),
])
def test_usage_errors_exit_64_before_any_source_is_fetched(cli, cache_dir, args, message, http_server, monkeypatch):
    monkeypatch.setenv("PIP_INDEX_URL", http_server.serve_index({"vllm-0.25.0.tar.gz": b"not fetched"}))
    result = cli("bisect", str(RECIPE), *args)
    assert result.code == 64, result.err
    assert message in result.err
    assert not (cache_dir / "registry").exists()


def test_progress_is_drawn_on_stderr_only_when_it_is_a_terminal(history, tmp_path):
    """Run the real CLI with stderr on a pseudo-terminal: progress there, stdout unchanged."""
    import os
    import pty
    import subprocess
    import sys
    import threading

    repo, commits = history
    args = [sys.executable, "-m", "srcreview", "bisect", str(RECIPE), "--rule", RULE, "--source", str(repo.path),
            "--revs", ",".join(commits), "--format", "json"]
    plain = subprocess.run(args, capture_output=True, env=os.environ.copy())
    assert plain.returncode == 0 and plain.stderr == b""
    main, side = pty.openpty()
    drawn = bytearray()

    def drain():  # read while the command runs, so a full terminal buffer never blocks it
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:
                return
            if not chunk:
                return
            drawn.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        on_tty = subprocess.run(args, stdout=subprocess.PIPE, stderr=side, env=dict(os.environ, COLUMNS="100"),
                                timeout=120)
    finally:
        os.close(side)
        reader.join(timeout=10)
        os.close(main)
    assert on_tty.returncode == 0
    assert on_tty.stdout == plain.stdout
    assert b"revisions analysed" in drawn
