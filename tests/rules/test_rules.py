"""Rule files: the shipped set is valid, errors point into the file, the docs are generated."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from srcreview.core.errors import DataError
from srcreview.core.templates import fill
from srcreview.rules.loader import load_rule_file, load_rules, parse_rule

ROOT = Path(__file__).resolve().parent.parent.parent

VALID = '''\
id = "demo-rule"
severity = "high"
claim = "{key} is a demo"
for_each = "setting"

[check]
kind = "knob-exists"

[verdict]
exists = "none"
missing = "confirmed"
undecided = "plausible"

[message]
confirmed = "missing {key}"
plausible = "open {key}"

[doc]
what = "w"
why = "y"
instead = "i"

[[examples]]
fixture = "rules_spec_decode"
settings = { "kv_cache_dtyp" = "fp8" }
expect = "confirmed"
'''


def _error(text: str, name: str = "demo-rule.toml") -> str:
    with pytest.raises(DataError) as info:
        parse_rule(text, f"rules/{name}")
    return str(info.value)


def test_shipped_rules_load_sorted_and_unique():
    rules = load_rules()
    ids = [r.id for r in rules]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert len(rules) >= 12
    assert all(r.doc.what and r.doc.why and r.doc.instead for r in rules)


def test_valid_rule_parses():
    rule = parse_rule(VALID, "rules/demo-rule.toml")
    assert rule.check.kind == "knob-exists" and rule.verdict["missing"] == "confirmed"


@pytest.mark.parametrize("old, new, expected", [
    ('kind = "knob-exists"', 'kind = "knob-exist"', "rules/demo-rule.toml:7: check.kind: unknown check kind 'knob-exist'"),
    ('kind = "knob-exists"', 'kind = "knob-exists"\nengine_clas = "X"', "rules/demo-rule.toml:8: check.engine_clas: unknown parameter"),
    ('missing = "confirmed"', 'missng = "confirmed"', "verdict: unknown outcome 'missng'"),
    ('undecided = "plausible"', 'undecided = "confirmed"', "an undecided outcome may only map to plausible or none"),
    ('severity = "high"', 'severity = "urgent"', "rules/demo-rule.toml:2: severity:"),
    ('expect = "confirmed"', 'expect = "maybe"', "rules/demo-rule.toml:26: examples.0.expect:"),
    ('[doc]\nwhat = "w"\n', '[doc]\n', "missing required key doc.what"),
    ('plausible = "open {key}"\n', '', "message: no template for 'plausible'"),
])
def test_errors_point_into_the_rule_file(old, new, expected):
    assert old in VALID
    assert expected in _error(VALID.replace(old, new, 1))


def test_id_must_match_file_name_and_toml_errors_have_lines():
    assert "must match the file name" in _error(VALID, "other.toml")
    assert _error(VALID + "\n[[examples]\n").startswith("rules/demo-rule.toml:28: malformed TOML")


def test_loading_a_directory_reports_the_bad_file(tmp_path):
    (tmp_path / "demo-rule.toml").write_text(VALID.replace('severity = "high"', 'severity = 3'))
    with pytest.raises(DataError, match=r"^rules/demo-rule.toml:2: severity"):
        load_rules(tmp_path)
    (tmp_path / "demo-rule.toml").write_text(VALID)
    assert [r.id for r in load_rules(tmp_path)] == ["demo-rule"]
    assert load_rule_file(tmp_path / "demo-rule.toml").path == "demo-rule.toml"


def test_fill_templates():
    assert fill("{a} and {b.c} and {missing}", {"a": 1, "b.c": ["x", "y"]}) == "1 and x, y and unset"


def test_docs_rules_md_is_generated_from_the_rule_files():
    from srcreview.rules.docs import render

    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == render(load_rules()), \
        "docs/rules.md is stale: run `srcreview rules --doc > docs/rules.md`"


def test_every_rule_doc_has_the_same_sections():
    from srcreview.rules.docs import render_rule

    for rule in load_rules():
        text = render_rule(rule)
        for section in ("## What it checks", "## Why it matters", "## What to do instead", "## Examples"):
            assert section in text, (rule.id, section)


def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "srcreview", *args], capture_output=True, text=True, cwd=cwd)


def test_cli_lists_shows_and_tests_rules():
    listed = _cli("rules")
    assert listed.returncode == 0
    assert "spec-draft-attention-backend-ignored" in listed.stdout
    shown = _cli("rules", "show", "recipe-identity-drift")
    assert shown.returncode == 0 and "What to do instead" in shown.stdout
    assert _cli("rules", "show", "no-such-rule").returncode == 64
    tested = _cli("rules", "test", "engine-key-exists")
    assert tested.returncode == 0, tested.stdout
    assert "4 passed, 0 failed" in tested.stdout


def test_cli_rejects_invalid_rules_with_65(tmp_path):
    (tmp_path / "demo-rule.toml").write_text(VALID.replace('kind = "knob-exists"', 'kind = "nope"'))
    result = _cli("rules", "--rules", str(tmp_path))
    assert result.returncode == 65
    assert "demo-rule.toml:7: check.kind: unknown check kind 'nope'" in result.stderr


def test_errors_under_a_rules_directory_name_its_files(tmp_path):
    """Not `rules/…` (the shipped rules' path): the file of the directory the user gave."""
    (tmp_path / "myrules").mkdir()
    (tmp_path / "myrules" / "demo-rule.toml").write_text(VALID.replace('kind = "knob-exists"', 'kind = "nope"'))
    for args in (("rules", "--rules", "myrules"), ("check", "x.toml", "--rules", "myrules/", "--rev", "0.29.0")):
        result = _cli(*args, cwd=tmp_path)
        assert result.returncode == 65, result.stderr
        assert result.stderr.startswith("srcreview: error: myrules/demo-rule.toml:7: check.kind: unknown check kind")
