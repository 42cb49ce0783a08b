"""diff and bisect across real vLLM releases (0.25.0 to 0.30.0) for the nested-triton recipe.

The sources come from the project's registry provider through the user cache (downloaded
once, reused by later runs). No verdict is typed in here: every answer of `diff` and
`bisect` is checked against single `srcreview check` runs at the releases concerned.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srcreview.history.bisect import Question
from srcreview.model.findings import Review
from srcreview.model.revision import releases_between

pytestmark = [pytest.mark.network, pytest.mark.releases]

ROOT = Path(__file__).resolve().parents[2]
NESTED = str(ROOT / "examples" / "thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml")
RULE = "spec-draft-attention-backend-ignored"
KNOB = "speculative_config.attention_backend"


@pytest.fixture(scope="module")
def checks():
    """`srcreview check --format json` at a release, run once per release in this module."""
    from srcreview.cli.main import main

    done: dict[str, Review] = {}

    def check(version: str, capsys) -> Review:
        if version not in done:
            code = main(["check", NESTED, "--rev", version, "--format", "json", "--fail-on", "none"])
            out = capsys.readouterr().out
            assert code == 0, out[-500:]
            done[version] = Review.model_validate(json.loads(out)["reviews"][0])
        return done[version]

    return check


def test_diff_025_029_agrees_with_check_at_both_releases(cli, checks, capsys):
    result = cli("diff", NESTED, "--rev", "0.25.0", "--rev", "0.29.0", "--format", "json")
    assert result.code in (0, 1), result.err
    diff = json.loads(result.out)
    before, after = checks("0.25.0", capsys), checks("0.29.0", capsys)
    assert (diff["before"]["version"], diff["after"]["version"]) == ("0.25.0", "0.29.0")
    for side, review in (("before", before), ("after", after)):
        knobs = {(k["key"], k["scope"]): k[side]["status"] for k in diff["knobs"] if k[side]}
        assert knobs == {(k.key, k.scope): k.status for k in review.knobs}
        findings = {f[side]["fingerprint"]: f[side]["classification"] for f in diff["findings"] if f[side]}
        assert findings == {f.fingerprint: f.classification for f in review.findings}
    expected = ({(k.key, k.scope, k.status, str(k.value)) for k in before.knobs}
                != {(k.key, k.scope, k.status, str(k.value)) for k in after.knobs}
                or {(f.id, f.classification, f.severity, f.fingerprint, f.tags, f.assumptions, f.missing_tests)
                    for f in before.findings}
                != {(f.id, f.classification, f.severity, f.fingerprint, f.tags, f.assumptions, f.missing_tests)
                    for f in after.findings}
                or before.runner.value != after.runner.value
                or {s.rule for s in before.stale_rules} != {s.rule for s in after.stale_rules})
    assert diff["changed"] is expected
    assert result.code == (1 if diff["changed"] else 0)


@pytest.mark.parametrize("question", [["--rule", RULE], ["--knob", f"{KNOB}@draft"]], ids=["rule", "knob"])
def test_bisect_025_030_agrees_with_check_at_the_boundary(cli, checks, capsys, question):
    result = cli("bisect", NESTED, *question, "--from", "0.25.0", "--to", "0.30.0", "--format", "json")
    assert result.code == 0, result.err
    data = json.loads(result.out)
    releases = [p.version for p in releases_between("0.25.0", "0.30.0")]
    assert [r["rev"] for r in data["revisions"]] == releases and len(releases) >= 4
    ask = Question(rule=RULE) if question[0] == "--rule" else Question(knob=KNOB, scope="draft")
    # every tested release's verdict is what a single check run says
    for row in data["revisions"]:
        if row["tested"] and row["rev"] in (releases[0], releases[-1]):
            assert row["verdict"] == ask.verdict(checks(row["rev"], capsys))
    first = data["first_change"]
    ends = (ask.verdict(checks(releases[0], capsys)), ask.verdict(checks(releases[-1], capsys)))
    if first is None:
        assert ends[0] == ends[1]
        return
    a, b = first["before"]["rev"], first["after"]["rev"]
    assert releases.index(b) == releases.index(a) + 1
    va, vb = ask.verdict(checks(a, capsys)), ask.verdict(checks(b, capsys))
    assert (first["before"]["verdict"], first["after"]["verdict"]) == (va, vb) and va != vb
    assert va == ends[0]
    # the evidence on each side is the evidence of that release's check
    fa = {x["fingerprint"] for x in first["before"]["findings"]}
    assert fa == {f.fingerprint for f in ask.findings(checks(a, capsys))}
    for anchor in first["only_after"]:
        assert checks(b, capsys).revision.sha in anchor["url"]
