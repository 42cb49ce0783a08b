"""`srcreview graph` end to end, on a git repository of a pattern tree made in the test."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from srcreview.cli.main import main

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "vllm_snippets"


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """The mro_overrides tree committed to a fresh git repository; returns (path, commit)."""
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "vllm-src"
    shutil.copytree(FIXTURES / "mro_overrides", path)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "fixture"]):
        subprocess.run(cmd, cwd=path, check=True, env=env)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, check=True, env=env,
                         capture_output=True, text=True).stdout.strip()
    return path, sha


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_tree_with_anchors(repo, capsys):
    path, sha = repo
    code, out, _ = run(capsys, "graph", "--rev", sha, "--source", str(path),
                       "--from", "MTPProposer.load_model", "--to", "get_model")
    assert code == 0
    assert "MTPProposer.load_draft_model  vllm/spec/mtp.py:6-7 (called at line 11, call)" in out
    assert f"https://github.com/vllm-project/vllm/blob/{sha}/vllm/spec/base.py#L11" in out
    assert str(path) not in out


def test_json_and_dot(repo, capsys):
    path, sha = repo
    code, out, _ = run(capsys, "graph", "--rev", sha, "--source", str(path), "--from", "MTPProposer.load_model",
                       "--to", "get_model", "--format", "json", "--reads", "SpeculativeConfig.attention_backend")
    assert code == 0
    data = json.loads(out)
    assert [h["symbol"] for h in data["paths"][0]] == [
        "vllm.spec.base.BaseProposer.load_model", "vllm.spec.mtp.MTPProposer.load_draft_model", "vllm.loader.get_model"]
    assert data["field_reads"]["reads"] == [] and data["field_reads"]["exists"] is True
    code, out, _ = run(capsys, "graph", "--rev", sha, "--source", str(path), "--from", "MTPProposer.load_model",
                       "--to", "get_model", "--format", "dot")
    assert code == 0 and out.startswith("digraph trace {")
    assert '"vllm.spec.mtp.MTPProposer.load_draft_model" -> "vllm.loader.get_model" [label="L7 call"];' in out


def test_errors_are_one_line_with_their_exit_code(repo, capsys):
    path, sha = repo
    code, _, err = run(capsys, "graph", "--rev", sha, "--source", str(path), "--from", "Nope.nothing")
    assert code == 64 and err.strip().endswith("--from Nope.nothing: no such function at " + sha[:9])
    code, out, err = run(capsys, "graph", "--rev", sha, "--source", str(path), "--from", "MTPProposer.load_model",
                         "--to", "NoSuch")
    assert (code, out) == (64, "") and err.strip().endswith("--to NoSuch: no such function at " + sha[:9])
    code, _, err = run(capsys, "graph", "--rev", sha, "--source", str(path), "--from", "MTPProposer.load_model",
                       "--reads", "nodot")
    assert code == 64 and "--reads 'nodot': expected Class.field" in err
    code, _, err = run(capsys, "graph", "--rev", sha, "--source", str(path), "--from", "x", "--set", "novalue")
    assert code == 64 and "KEY=VALUE" in err


def test_an_ambiguous_symbol_lists_every_candidate_or_says_how_many_more(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "tree"
    (root / "vllm").mkdir(parents=True)
    (root / "vllm" / "_version.py").write_text("__version__ = version = '0.0.0'\n"
                                               "__commit_id__ = commit_id = 'g1234567ab'\n")
    (root / "vllm" / "loaders.py").write_text("".join(f"class L{i}:\n    def load(self):\n        return {i}\n\n"
                                                      for i in range(7)))
    code, _, err = run(capsys, "graph", "--rev", "1234567ab", "--source", str(root), "--from", "load")
    assert code == 64 and "--from 'load' is ambiguous" in err
    assert "vllm.loaders.L0.load, " in err and err.strip().endswith(" and 2 more")


def test_graph_of_any_python_tree_lists_resolved_edges_and_unresolved_calls(tmp_path, capsys):
    """`--tree DIR`: no revision, no vLLM; every edge the graph resolved and every call site it
    could not, with the tree's own paths, so precision and soundness can be measured."""
    import json

    from srcreview.cli.main import main

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "b.py").write_text("def helper(x):\n    return x + 1\n")
    (pkg / "a.py").write_text(
        "from pkg.b import helper\n\n\nclass Base:\n    def run(self):\n        return self.step()\n\n"
        "    def step(self):\n        return helper(1)\n\n\ndef main(obj):\n    Base().run()\n"
        "    return obj.unknown_method()\n")
    assert main(["graph", "--tree", str(tmp_path), "--from", "main", "--depth", "3", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert sorted(tuple(e) for e in data["edges"]) == [
        ("pkg.a.Base.run", "pkg.a.Base.step", 6, "call"), ("pkg.a.Base.step", "pkg.b.helper", 9, "call"),
        ("pkg.a.main", "pkg.a.Base.run", 13, "call")]
    [unresolved] = data["unresolved"]
    assert unresolved["anchor"]["url"] == "pkg/a.py#L14" and "unknown_method" in unresolved["text"]
    assert main(["graph", "--tree", str(tmp_path), "--rev", "0.29.0", "--from", "main"]) == 64
    assert main(["graph", "--from", "main"]) == 64
