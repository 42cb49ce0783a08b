"""vllm-project/recipes model YAML reviewed by `srcreview check` against the real vLLM 0.29.0
source: each variant (and `@key` hardware override) is a review anchored on the YAML's lines,
and the README's registry block is the tool's output now."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAYERED = "fixtures/recipes_registry/layered.yaml"
pytestmark = pytest.mark.network

REGISTRY_BLOCK = re.compile(r"(<!-- generated: registry check (?P<args>[^>]*?) -->\n)(?P<body>.*?)"
                            r"(<!-- end generated -->)", re.S)


def test_check_reviews_every_variant_and_the_hardware_override_on_the_yaml_lines(vllm_029, cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = cli("check", LAYERED, "--hardware-override", "amd", "--rev", "0.29.0", "--model-config", "off",
                 "--format", "json")
    assert result.code == 1, result.err  # the amd layer's kv_cache_dtype fp9 fails the gate
    reviews = {r["recipe"]["path"].partition("#")[2]: r for r in json.loads(result.out)["reviews"]}
    assert set(reviews) == {"default", "fp8", "default@amd", "fp8@amd"}
    assert {r["recipe"]["part"] for r in reviews.values()} == {"variant"}
    lines = (ROOT / LAYERED).read_text().splitlines()
    amd = lines.index("  amd:")  # the recipe-level amd block: its --kv-cache-dtype is the flag that sets fp9
    flag_line = next(n for n, line in enumerate(lines, 1) if n > amd and '"--kv-cache-dtype"' in line)
    for name, review in reviews.items():
        confirmed = [(f["rule"], f["recipe_line"]) for f in review["findings"]
                     if f["classification"] == "confirmed" and f["severity"] == "high"]
        assert confirmed == ([("engine-value-admitted", flag_line)] if name.endswith("@amd") else []), name
    knobs = {k["key"]: k for k in reviews["fp8"]["knobs"]}
    assert knobs["kv_cache_dtype"]["value"] == "fp8" and knobs["kv_cache_dtype"]["status"] == "applied"
    # selecting one variant reviews it alone, and passes
    one = cli("check", f"{LAYERED}#fp8", "--rev", "0.29.0", "--model-config", "off", "--format", "json")
    assert one.code == 0, one.err
    assert [r["recipe"]["path"] for r in json.loads(one.out)["reviews"]] == [f"{LAYERED}#fp8"]
    missing = cli("check", LAYERED, "--hardware-override", "gb300", "--rev", "0.29.0")
    assert missing.code == 64 and "the file has: amd, blackwell, h100, hopper" in missing.err


def test_readme_shows_a_registry_file_as_the_tool_prints_it(vllm_029, cli, monkeypatch):
    """README.md "Recipes you already have": the registry block is `srcreview check ARGS` now.
    Regenerate with `SRCREVIEW_UPDATE_REPORTS=1 pytest tests/e2e/test_recipes_registry_real_vllm.py`."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)

    def output(match) -> str:
        args = match.group("args").split()
        result = cli("check", *args, "--color", "never")
        assert result.code in (0, 1, 2), result.err
        shown = f"$ srcreview check {' '.join(args)}\n{result.out}" + (f"(exit {result.code})\n" if result.code else "")
        return match.group(1) + f"```text\n{shown}```\n" + match.group(4)

    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    assert len(REGISTRY_BLOCK.findall(text)) == 1
    fresh = REGISTRY_BLOCK.sub(output, text)
    if fresh != text and os.environ.get("SRCREVIEW_UPDATE_REPORTS"):
        readme.write_text(fresh, encoding="utf-8")
        text = fresh
    assert fresh == text, "stale registry output: SRCREVIEW_UPDATE_REPORTS=1 pytest tests/e2e/test_recipes_registry_real_vllm.py"
