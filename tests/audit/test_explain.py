"""`srcreview explain` on a finding from a saved `check --format json` or a fresh review.

The source is a git repository built here from the history fixture; the excerpts must be the
lines of the file at that commit (read back with git in the test), the reasons the rule's.
"""

from __future__ import annotations

import json

import pytest
from history_support import LOADER, RECIPE, RULE, build_history

from srcreview.rules.loader import load_rules


@pytest.fixture
def saved(cli, make_git_repo, cache_dir, tmp_path):
    repo = make_git_repo("vllm")
    (commit,) = build_history(repo, ["base"])
    result = cli("check", str(RECIPE), "--rev", commit, "--source", str(repo.path), "--format", "json",
                 "--fail-on", "none")
    assert result.code == 0, result.err
    path = tmp_path / "review.json"
    path.write_text(result.out)
    return repo, commit, path, json.loads(result.out)["reviews"][0]


def test_explain_a_saved_finding_shows_each_hop_with_its_source_lines(cli, saved):
    repo, commit, path, data = saved
    finding = next(f for f in data["findings"] if f["rule"] == RULE)
    result = cli("explain", finding["fingerprint"], "--review", str(path), "--source", str(repo.path))
    assert result.code == 0, result.err
    out = result.out
    assert out.startswith(f"{finding['id']}  confirmed problem  [high]")
    assert "which makes it a problem (it can fail the gate): a confirmed claim is this rule's problem" in out
    loader = repo.git("show", f"{commit}:{LOADER}").splitlines()
    sink = next(h for h in finding["trace"] if h["kind"] == "sink")["anchor"]
    assert sink["url"] in out
    shown = f"{sink['start_line']} {loader[sink['start_line'] - 1]}".strip()
    assert any(line.strip().lstrip("❱ ").startswith(shown) for line in out.splitlines()), shown
    for n, hop in enumerate(finding["trace"], 1):
        assert f"{n}. [{hop['kind']}] {hop['text']}" in out
    rule = next(r for r in load_rules() if r.id == RULE)
    assert rule.doc.why in out.replace("\n", " ")
    outcome = next(o for o, c in rule.verdict.items() if c == "confirmed")
    assert f"the check concluded {outcome}, which this rule maps to confirmed" in out
    assert str(repo.path) not in out and result.err == ""


def test_explain_json_carries_the_excerpts_read_at_the_revision(cli, saved):
    repo, commit, path, data = saved
    finding = next(f for f in data["findings"] if f["rule"] == RULE)
    result = cli("explain", finding["id"], "--review", str(path), "--source", str(repo.path), "--format", "json",
                 "--context", "0")
    assert result.code == 0, result.err
    explained = json.loads(result.out)
    assert explained["finding"]["fingerprint"] == finding["fingerprint"]
    assert explained["rule"]["outcomes"] and explained["rule"]["verdict"]
    steps = [s for s in explained["trace"] + explained["evidence"] if s["excerpt"]]
    assert steps
    for step in steps:
        ex = step["excerpt"]
        text = repo.git("show", f"{commit}:{ex['path']}").splitlines()
        assert ex["first_line"] == ex["start_line"]  # --context 0
        assert list(ex["lines"]) == text[ex["first_line"] - 1:ex["first_line"] - 1 + len(ex["lines"])]


def test_explain_by_prefix_or_rule_id_and_offline(cli, saved):
    _repo, _commit, path, data = saved
    finding = next(f for f in data["findings"] if f["rule"] == RULE)
    result = cli("explain", finding["fingerprint"][:8], "--review", str(path), "--no-source")
    assert result.code == 0, result.err
    assert finding["trace"][-1]["text"] in result.out
    assert "❱" not in result.out  # no source read, no excerpt


def test_explain_a_fresh_review(cli, make_git_repo, cache_dir):
    repo = make_git_repo("vllm")
    (_base, applied) = build_history(repo, ["base", "applied"])
    result = cli("explain", RULE, str(RECIPE), "--rev", applied, "--source", str(repo.path))
    assert result.code == 0, result.err
    assert result.out.startswith(f"{RULE}  refuted fact  [high]")
    assert "reads SpeculativeConfig.attention_backend" in result.out
    assert "[sink] -> get_model(vllm_config=...): attention_config.backend is speculative_config.attention_backend" \
        in result.out


@pytest.mark.parametrize("args, code, message", [
    (("nope", "--review", "REVIEW"), 64, "no finding 'nope'"),
    ((RULE,), 64, "either --review"),
    ((RULE, str(RECIPE), "--review", "REVIEW"), 64, "either --review"),
    ((RULE, "--review", "REVIEW", "--rev", "0.29.0"), 64, "--rev applies"),
    ((RULE, "--review", "MISSING"), 64, "no such review file"),
    ((RULE, "--review", "BROKEN"), 65, "not a"),
])
def test_explain_errors(cli, saved, tmp_path, args, code, message):
    _repo, _commit, path, _data = saved
    (tmp_path / "broken.json").write_text('{"tool": 1}')
    swap = {"REVIEW": str(path), "MISSING": str(tmp_path / "missing.json"), "BROKEN": str(tmp_path / "broken.json")}
    result = cli("explain", *[swap.get(a, a) for a in args], "--no-source")
    assert result.code == code, result.err
    assert message in result.err


def test_a_long_anchor_is_cut_and_says_so(tmp_path):
    from srcreview.audit.explain import excerpt
    from srcreview.model.findings import Anchor
    from srcreview.model.revision import Revision
    from srcreview.source.base import DirectoryTree

    (tmp_path / "m.py").write_text("".join(f"line{n}\n" for n in range(1, 101)))
    tree = DirectoryTree(tmp_path, Revision(requested="x", sha="c" * 40))

    def at(start, end):
        return Anchor(url="u", path="m.py", start_line=start, end_line=end)

    short = excerpt(tree, at(10, 12), context=2, max_lines=24)
    assert (short.first_line, short.lines[0], short.lines[-1], short.truncated) == (8, "line8", "line14", False)
    context_only = excerpt(tree, at(10, 30), context=2, max_lines=24)
    assert (context_only.lines[-1], context_only.truncated) == ("line31", False)
    long = excerpt(tree, at(10, 60), context=2, max_lines=24)
    assert (len(long.lines), long.truncated) == (24, True)
    edge = excerpt(tree, at(1, 1), context=3)
    assert edge.first_line == 1 and edge.lines == ("line1", "line2", "line3", "line4")
    from srcreview.core.errors import SourceUnavailable

    with pytest.raises(SourceUnavailable):
        excerpt(tree, at(101, 101))
