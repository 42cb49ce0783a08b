"""README.md and docs/ci.md show the nested-triton recipe's outputs at 0.29.0 as the tool prints
them now: each block between `<!-- generated: check ... -->` and `<!-- end generated -->` is the
output of that `srcreview check` command (text at 100 columns).

Regenerate with `SRCREVIEW_UPDATE_REPORTS=1 .venv/bin/pytest tests/report/test_docs_outputs.py`.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NESTED = "examples/thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml"
DOCS = (ROOT / "README.md", ROOT / "docs" / "ci.md")
BLOCK = re.compile(r"(<!-- generated: check (?P<args>[^>]*?) -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S)

pytestmark = pytest.mark.network


def _output(cli, monkeypatch, args: str) -> str:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("SOURCE_DATE_EPOCH", raising=False)
    argv = [NESTED if a == "NESTED" else a for a in shlex.split(args)]
    result = cli("check", *argv, "--color", "never") if "--format" not in argv else cli("check", *argv)
    assert result.code == 1, result.err
    fence = "markdown" if "markdown" in argv else "text"
    return f"```{fence}\n{result.out}```\n"


def test_documented_outputs_are_current(vllm_029, cli, monkeypatch):
    stale = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        blocks = list(BLOCK.finditer(text))
        assert blocks, f"{doc.name} has no generated output"
        fresh = BLOCK.sub(lambda m: m.group(1) + _output(cli, monkeypatch, m.group("args")) + m.group(4), text)
        if fresh != text:
            if os.environ.get("SRCREVIEW_UPDATE_REPORTS"):
                doc.write_text(fresh, encoding="utf-8")
            else:
                stale.append(doc.name)
    assert stale == [], f"stale outputs in {stale}: SRCREVIEW_UPDATE_REPORTS=1 pytest tests/report/test_docs_outputs.py"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for line in ("gate: failed (1 problem at or above confirmed:high;", "fails the gate", "Problems: ", "Facts: "):
        assert line in readme
