"""`--format github` (workflow annotations), the SARIF level rule, and concise `file:line:col:`
lines (issue 26, "CI files as shipped").

The reviews are built from the small recipes in tests/data/gate/ (gate_support), or reviewed
by the real CLI on the fixture tree; the workflow commands are read back as a GitHub Actions
runner parses them (`runner_commands`), so escaping is checked by decoding, not by string shape.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import FIXTURE_REV
from gate_support import DATA, NESTED_SPEC, copy_recipes, make_review
from recipe_support import compose_text

from srcreview.gate.policy import evaluate
from srcreview.report import concise, github, sarif
from srcreview.report.terminal import gate_line

OPEN_HIGH = ("attention-backend-admitted", "attention_backend", "plausible", "high", {"symbols": ("select",)})
PROBLEM_MEDIUM = ("kv-dtype-dropped", "kv_cache_dtype", "confirmed", "medium", {"symbols": ("CacheConfig",)})


def runner_commands(text: str) -> list[tuple[str, dict[str, str], str]]:
    """(command, properties, message) of each line a runner takes as a workflow command, decoded
    as the runner decodes them (ActionCommand.TryParseV2: a trimmed line starting `::`, the
    command part up to the next `::`, properties split at `,` then the first `=`; `%0D`, `%0A`,
    `%25` in the message, and `%3A`, `%2C` too in properties)."""
    def data(value: str) -> str:
        return value.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")

    def prop(value: str) -> str:
        return data(value.replace("%3A", ":").replace("%2C", ","))

    found = []
    for line in re.split(r"\r\n|\r|\n", text):
        line = line.strip()
        if not line.startswith("::"):
            continue
        end = line.find("::", 2)
        assert end > 0, f"a line starting '::' that is no command: {line!r}"
        head, message = line[2:end], line[end + 2:]
        name, _, props = head.partition(" ")
        properties = dict(p.split("=", 1) for p in props.split(",") if p) if props else {}
        found.append((name, {k: prop(v) for k, v in properties.items()}, data(message)))
    return found


@pytest.fixture
def nested(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    copy_recipes(tmp_path, "nested.toml", "toplevel.toml")
    return make_review(DATA / "nested.toml", "recipes/nested.toml", (*NESTED_SPEC, OPEN_HIGH, PROBLEM_MEDIUM))


def _by_rule(commands):
    return {props["title"].removeprefix("srcreview "): (name, props, message) for name, props, message in commands}


def test_annotation_levels_follow_the_kind_and_the_gate(nested):
    """Problems failing the gate are errors; an open question is a warning, at high severity too,
    and even when a `plausible` term makes it fail; a problem below --fail-on a warning; facts out."""
    gate = evaluate([nested])
    out = github.render([nested], gate=gate)
    found = _by_rule(runner_commands(out))
    assert {rule: name for rule, (name, _, _) in found.items()} == {
        "spec-draft-attention-backend-ignored": "error", "attention-backend-admitted": "warning",
        "test-coverage-missing": "warning", "kv-dtype-dropped": "warning"}, "the refuted fact is left out"
    name, props, message = found["spec-draft-attention-backend-ignored"]
    line = nested.findings[0].recipe_line
    assert props == {"file": "recipes/nested.toml", "line": str(line), "col": "1",
                     "title": "srcreview spec-draft-attention-backend-ignored"}
    assert message.startswith("high confirmed problem: ") and "[fails the gate]" in message
    assert out.endswith(f"\n{gate_line(gate)}\n") and gate.decision == "failed"

    strict = github.render([nested], gate=evaluate([nested], "plausible:high"))
    name, _, message = _by_rule(runner_commands(strict))["attention-backend-admitted"]
    assert name == "warning" and "[fails the gate]" in message, "an undecided claim never reads as a defect"


def test_sarif_levels_follow_the_classification_and_the_gate(nested):
    def levels(gate):
        log = json.loads(sarif.render([nested], gate=gate))
        return {r["ruleId"]: r["level"] for r in log["runs"][0]["results"]}

    assert levels(evaluate([nested])) == {
        "spec-draft-attention-backend-ignored": "error", "kv-dtype-dropped": "warning",
        "attention-backend-admitted": "note", "test-coverage-missing": "note"}, \
        "an open question at high severity was a code-scanning warning"
    assert levels(evaluate([nested], "plausible:high"))["attention-backend-admitted"] == "warning"
    assert levels(evaluate([nested], "confirmed"))["kv-dtype-dropped"] == "error"
    assert levels(None) == {"spec-draft-attention-backend-ignored": "error", "kv-dtype-dropped": "error",
                            "attention-backend-admitted": "note", "test-coverage-missing": "note"}


@pytest.mark.parametrize("value", ["a%0Ab", "x\ny", "x\r\n::error::owned", "100%", "a:b,c=d::e", "##[error]x",
                                   "\x1b]0;t\x07", "line\u2028break"])
def test_commands_carry_any_text_intact_and_on_one_line(value):
    text = github.command("warning", f"claim {value}", file=f"recipes/{value}.toml", line=3, col=1,
                          title=f"srcreview {value}")
    assert "\n" not in text and "\r" not in text and "\u2028" not in text
    [(name, props, message)] = runner_commands(text)
    shown = value.replace("\x1b", "\\x1b").replace("\x07", "\\x07").replace("\u2028", "\\u2028") \
        .replace("##[", "#\\u0023[")
    assert name == "warning" and message == f"claim {shown}"
    assert props == {"file": f"recipes/{shown}.toml", "line": "3", "col": "1", "title": f"srcreview {shown}"}


COMPOSE = compose_text("vllm")


def test_a_compose_service_is_anchored_on_a_path_an_editor_opens(offline_workdir, cli):
    """concise and github name the compose file and line (`docker-compose.yml:11:1:`), the
    service in the message; never `docker-compose.yml#vllm:11`, which no editor opens."""
    (offline_workdir / "recipes" / "docker-compose.yml").write_text(COMPOSE)
    args = ("check", "recipes", "--source", "tree", "--rev", FIXTURE_REV, "--fail-on", "none")
    text = cli(*args, "--format", "concise")
    assert text.code == 0, text.err
    findings = [line for line in text.out.splitlines() if re.match(r"recipes/docker-compose\.yml:\d+:1: ", line)]
    assert findings and all(": service vllm: " in line for line in findings)
    assert "#vllm" not in text.out
    for line in findings:  # the line is the one the knob is written on
        number = int(line.split(":")[1])
        assert 1 <= number <= COMPOSE.count("\n")
    annotated = cli(*args, "--format", "github")
    assert annotated.code == 0, annotated.err
    commands = runner_commands(annotated.out)
    assert commands and {props["file"] for _, props, _ in commands} == {"recipes/docker-compose.yml"}
    assert all(message.startswith("service vllm: ") for _, _, message in commands)
    plain = [line for line in annotated.out.splitlines() if not line.startswith("::")]
    assert plain[-1].startswith("gate: passed") and all(not line.lstrip().startswith("::") for line in plain)


def test_concise_lines_are_file_line_col(nested):
    out = concise.render([nested], gate=evaluate([nested]))
    finding_lines = [line for line in out.splitlines() if re.match(r"recipes/nested\.toml:\d+:", line)]
    assert len(finding_lines) == len(nested.findings)
    assert all(re.match(r"recipes/nested\.toml:\d+:1: (high|medium|low|info) ", line) for line in finding_lines)
