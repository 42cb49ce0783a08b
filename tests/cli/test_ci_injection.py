"""Untrusted text cannot act in CI: no workflow command in a log, nothing live in a PR comment
or a SARIF message (issue 14, "Injection into CI logs, PR comments and SARIF").

Each test runs the real CLI on a recipe (and a baseline) carrying hostile values, against the
`rules_spec_decode` fixture tree given as an unpacked sdist, and checks what a GitHub Actions
runner, GitHub's Markdown renderer or a SARIF viewer would do with the output.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import FIXTURE_REV

REV = FIXTURE_REV
COMMANDS = "\n::error file=README.md,line=1::Gate passed\n::stop-commands::x\n  \t::warning::indented"
LINKS = ("@octocat [click](https://evil.example/x) <img src=x onerror=alert(1)> https://evil.example/y "
         "www.evil.example mail@evil.example #12 `tick`` ##[error]old syntax")
RECIPE = f'''[recipe]
name = {json.dumps("demo" + COMMANDS)}
model = {json.dumps(LINKS)}

[hardware]
gpu = "NVIDIA GeForce RTX 5090"
compute_capability = "12.0"

[engine]
kv_cache_dtype = "fp8_per_token_head"

[engine.speculative_config]
method = "mtp"
num_speculative_tokens = 3
attention_backend = {json.dumps("TRITON_ATTN" + COMMANDS + " " + LINKS)}

[env]
VLLM_USE_V2_MODEL_RUNNER = "1"
'''
BASELINE_FINGERPRINT = "ab`c`` </code><img src=x onerror=alert(1)> \x1b]0;owned\x07 @octocat"


@pytest.fixture
def workdir(offline_workdir):
    tmp_path = offline_workdir
    (tmp_path / "recipes" / "demo.toml").write_text(RECIPE)
    (tmp_path / "recipes" / "::error file=a::named.toml").write_text(RECIPE)
    baseline = {"schema_version": 1, "reviews": [{"recipe": {"path": "recipes/demo.toml", "name": "demo"},
                                                  "findings": [{"fingerprint": BASELINE_FINGERPRINT,
                                                                "rule": "@octocat <b>x</b>",
                                                                "classification": "confirmed",
                                                                "severity": "high"}]}]}
    (tmp_path / "baseline.json").write_text(json.dumps(baseline))
    return tmp_path


def _check(cli, *args):
    result = cli("check", "recipes", "--source", "tree", "--rev", REV, *args)
    assert result.code in (0, 1), result.err
    return result.out


def _runner_commands(text: str) -> list[str]:
    """The lines a GitHub Actions runner would take as workflow commands (it splits lines at
    \\n and \\r, trims leading blanks, and also reads `##[` anywhere in a line)."""
    return [line for line in re.split(r"\r\n|\r|\n", text) if line.lstrip().startswith("::") or "##[" in line]


@pytest.mark.parametrize("fmt", ["text", "markdown", "json", "sarif", "review"])
def test_no_line_of_any_format_is_a_workflow_command(workdir, cli, fmt):
    out = _check(cli, "--format", fmt, "--verbose") if fmt == "text" else _check(cli, "--format", fmt)
    assert _runner_commands(out) == []
    assert "\x1b" not in out and "\x07" not in out


def test_text_shows_newlines_in_values_escaped(workdir, cli, monkeypatch):
    out = _check(cli, "--format", "text")
    assert "demo\\n::error file=README.md,line=1::Gate passed\\n::stop-commands::x\\n" in out
    assert "::warning::indented" in out and _runner_commands(out) == []
    monkeypatch.chdir(workdir / "recipes")
    named = cli("check", "::error file=a::named.toml", "--source", "../tree", "--rev", REV)
    assert named.code in (0, 1), named.err
    assert named.out.startswith("\\x3a:error file=a::named.toml: demo\\n"), "a file name cannot start a command"
    assert _runner_commands(named.out) == []


def test_errors_on_stderr_are_one_line_and_no_command(workdir, cli):
    (workdir / "recipes" / "demo.toml").write_text(RECIPE.replace("[hardware]", "[hardware]\nbogus = 1"))
    result = cli("check", "recipes/demo.toml", "--rev", REV)
    assert result.code == 65 and len(result.err.splitlines()) == 1 and _runner_commands(result.err) == []


def _html(markdown_text: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").enable("strikethrough").render(markdown_text)


def test_markdown_renders_every_untrusted_string_inert(workdir, cli):
    out = _check(cli, "--format", "markdown", "--baseline", "baseline.json")
    html = _html(out)
    outside_code = re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    assert "<img" not in html and "<b>" not in html
    for live in ("@octocat", "evil.example", "#12"):
        assert live in html and live not in outside_code, f"{live} is linked outside a code span"
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert hrefs and all(h.startswith("https://github.com/vllm-project/vllm/blob/") for h in hrefs)
    fixed = next(line for line in out.splitlines() if line.startswith("- fixed:"))
    assert "\\x1b]0;owned\\x07" in fixed, "escape sequences from a baseline are shown, not sent"
    code = re.findall(r"<code>(.*?)</code>", _html(fixed), flags=re.S)
    assert any("ab`c`` &lt;/code&gt;&lt;img" in c for c in code), "the backticks stay inside one code span"


def test_sarif_messages_carry_no_live_link_or_html(workdir, cli):
    log = json.loads(_check(cli, "--format", "sarif"))
    texts = []
    for result in log["runs"][0]["results"]:
        texts.append(result["message"]["text"])
        texts += [loc["message"]["text"] for loc in result.get("relatedLocations", ()) if "message" in loc]
        for flow in result.get("codeFlows", ()):
            texts += [step["location"]["message"]["text"] for thread in flow["threadFlows"]
                      for step in thread["locations"]]
    joined = "\n".join(texts)
    assert "[click]" in joined.replace("\\[", "[").replace("\\]", "]"), "the hostile value reached a message"
    for text in texts:
        links = re.findall(r"(?<!\\)\[((?:[^\]\\]|\\.)*)\]\(([^)]*)\)", text)
        assert all(target.isdigit() for _, target in links), text
        assert not re.search(r"<[A-Za-z/!?]", text), text
