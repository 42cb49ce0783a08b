"""The Markdown summary: gate decision, knob table, findings by meaning (problems, open questions, facts)."""

from __future__ import annotations

import pytest
from gate_support import DATA, NESTED_SPEC, copy_recipes, make_review

from srcreview.gate.policy import evaluate
from srcreview.model.recipe import load_recipe
from srcreview.report import markdown


@pytest.fixture
def nested(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    copy_recipes(tmp_path, "nested.toml", "toplevel.toml")
    return make_review(DATA / "nested.toml", "recipes/nested.toml", NESTED_SPEC,
                       knob_status={"speculative_config.attention_backend": "ignored"})


def _section(text: str, title: str) -> str:
    start = text.index(title)
    end = text.find("\n\n", start + len(title) + 2)
    return text[start:end if end >= 0 else None]


def _bullet(text: str, fingerprint: str) -> str:
    """The lines of the finding whose fingerprint is given (its bullet and the sub-bullets)."""
    lines = text.splitlines()
    end = next(i for i, line in enumerate(lines) if f"fingerprint `{fingerprint}`" in line)
    start = max(i for i in range(end + 1) if lines[i].startswith("- "))
    return "\n".join(lines[start:end + 1])


def test_decision_knob_table_and_findings(nested):
    result = evaluate([nested])
    text = markdown.render([nested], gate=result, date="2026-11-29")
    lines = text.splitlines()
    assert lines[0] == "## srcreview: gate failed (exit 1)"
    assert "`--fail-on confirmed:high`" in text and "review date 2026-11-29" in text
    assert "1 problem at or above confirmed:high; 1 open question; 1 fact" in text
    recipe = load_recipe(DATA / "nested.toml", "recipes/nested.toml")
    for setting in recipe.settings:
        row = next(line for line in lines if line.startswith(f"| `{setting.key}` |"))
        assert row.rstrip(" |").endswith(str(setting.line))
    assert "| **ignored** |" in next(line for line in lines if "`speculative_config.attention_backend`" in line)
    problems = _section(text, "**Problems (1)**")
    finding = next(f for f in nested.findings if f.classification == "confirmed")
    for anchor in finding.evidence:
        assert f"]({anchor.url})" in problems
    assert "**fails the gate**" in problems and finding.fingerprint in problems
    assert f"- **high** · confirmed · `{finding.rule}` · line {finding.recipe_line} · **fails the gate**" in problems
    assert f"  - claim: {markdown._text(finding.claim)}" in problems
    assert "fails the gate" not in _section(text, "**Open questions (1)**")
    assert "<details><summary>Facts (1)</summary>" in text
    assert text.index("**Problems") < text.index("**Open questions") < text.index("Facts (1)")
    assert "| recipe | vLLM | gate | problems | open questions | facts |" in lines


def test_passing_and_ungated(nested):
    result = evaluate([nested], "none")
    text = markdown.render([nested], gate=result)
    assert text.startswith("## srcreview: gate passed (exit 0)") and "fails the gate" not in text
    assert "review date" not in text
    plain = markdown.render([nested])
    assert plain.startswith("## srcreview review") and "fail-on" not in plain


def test_incomplete_is_shown(nested):
    broken = make_review(DATA / "toplevel.toml", "recipes/toplevel.toml", incomplete=["source unavailable: offline"])
    text = markdown.render([nested, broken], gate=evaluate([nested, broken]))
    assert text.startswith("## srcreview: gate incomplete (exit 2)")
    assert "> **Review incomplete:** source unavailable: offline" in text
    assert "| `recipes/toplevel.toml` | 0.29.0 (98dff2a81d74) | **incomplete** |" in text


def test_escaping_keeps_tables_and_html_intact(nested):
    review = nested.model_copy(update={"knobs": (nested.knobs[0].model_copy(update={"value": "a|b"}),)})
    finding = review.findings[0].model_copy(update={"message": "value <script> | *x*"})
    review = review.model_copy(update={"findings": (finding,)})
    text = markdown.render([review])
    assert "`a\\|b`" in text and "<script>" not in text and "\\<script\\> \\| \\*x\\*" in text


def test_deterministic_and_relative(nested, tmp_path):
    first = markdown.render([nested], gate=evaluate([nested]), date="2026-11-29")
    assert first == markdown.render([nested], gate=evaluate([nested]), date="2026-11-29")
    absolute = nested.model_copy(update={"recipe": nested.recipe.model_copy(
        update={"path": str(tmp_path / "recipes" / "nested.toml")})})
    text = markdown.render([absolute], gate=evaluate([absolute]))
    assert str(tmp_path) not in text and "`nested.toml`" in text


def test_stale_rules_and_missing_tests_are_listed(nested):
    from srcreview.model.findings import StaleRule

    review = nested.model_copy(update={"missing_tests": ("MTP with fp8 KV cache", "sm120 start-up"),
                                       "stale_rules": (StaleRule(rule="old-rule", missing=("Foo.bar",)),)})
    lines = markdown.render([review]).splitlines()
    assert "- stale rule `old-rule` at this revision: missing `Foo.bar`" in lines
    start = lines.index("- missing tests:")
    assert lines[start + 1:start + 3] == ["  - MTP with fp8 KV cache", "  - sm120 start-up"]


def test_links_are_deduplicated_and_capped(nested):
    from gate_support import anchor

    finding = next(f for f in nested.findings if f.classification == "confirmed")
    many = tuple(anchor("vllm/x.py", i, i + 1, f"sym{i}", "site") for i in range(1, 8))
    finding = finding.model_copy(update={"evidence": many + many[:2]})
    review = nested.model_copy(update={"findings": (finding,)})
    line = _bullet(markdown.render([review]), finding.fingerprint)
    assert line.count("](https://") == markdown.MAX_LINKS and f"+{len(many) - markdown.MAX_LINKS} more" in line
    assert line.count("[sym1]") == 1
