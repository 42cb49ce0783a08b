"""reports/ is what the tool writes for the example recipes at 0.29.0; the review format's schema.

Regenerate with `SRCREVIEW_UPDATE_REPORTS=1 pytest tests/report/test_reports.py`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from real_reviews import NESTED, REPORTS, generate_reports, review_of

SEED = Path(__file__).parent.parent / "data" / "independent-review-thinkingcap-98dff2a.json"


@pytest.mark.network
def test_reports_are_current(vllm_029):
    files = generate_reports(vllm_029)
    if os.environ.get("SRCREVIEW_UPDATE_REPORTS"):
        REPORTS.mkdir(exist_ok=True)
        for old in REPORTS.glob("*.json"):
            old.unlink()
        for name, text in files.items():
            (REPORTS / name).write_text(text, encoding="utf-8")
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in REPORTS.glob("*.json")}
    assert sorted(on_disk) == sorted(files), "reports/ is stale: SRCREVIEW_UPDATE_REPORTS=1 pytest tests/report/test_reports.py"
    for name, text in files.items():
        assert on_disk[name] == text, f"reports/{name} differs from what the tool generates"
    for text in files.values():
        assert "/root" not in text and "/tmp/" not in text and "/home/" not in text


@pytest.mark.network
def test_review_format_validates_against_the_published_schema(vllm_029):
    import jsonschema

    from srcreview.report.review import SCHEMA

    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    for name, text in generate_reports(vllm_029).items():
        if name.endswith(".review.json"):
            jsonschema.validate(json.loads(text), SCHEMA)
    doc = json.loads(generate_reports(vllm_029)["thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.review.json"])
    runtime = doc["artifacts"]["pinned_runtime"]
    assert runtime["vllm_version"] == "0.29.0" and runtime["vllm_revision"] == vllm_029.revision.sha
    urls = {u["url"]: u["purpose"] for u in runtime["source_urls"]}
    assert any("eagle/utils.py#L51-L53" in url for url in urls)  # where the draft is built
    summary = doc["artifacts"]["findings_summary"]
    assert summary[0]["severity"] == "high" and summary[0]["classification"] == "confirmed"
    probes = {p["axis"]: p["classification"] for p in doc["artifacts"]["breakage_probes"]}
    # the target's backend is left to the platform: which one it selects depends on the model's
    # config, which is not known offline, so whether the Triton label drifts stays open
    assert probes["state drift across config and runtime seams"] == "plausible"
    assert doc["recommendation"].startswith("Do not run")


def test_the_hand_written_seed_validates_too():
    import jsonschema

    from srcreview.report.review import SCHEMA

    jsonschema.validate(json.loads(SEED.read_text()), SCHEMA)


def test_schema_command_prints_the_schema():
    from srcreview.report.review import SCHEMA

    out = subprocess.run([sys.executable, "-m", "srcreview", "schema", "review"], capture_output=True, text=True)
    assert out.returncode == 0 and json.loads(out.stdout) == SCHEMA
    out = subprocess.run([sys.executable, "-m", "srcreview", "schema", "json"], capture_output=True, text=True)
    schema = json.loads(out.stdout)
    assert set(schema["required"]) == {"reviews"} and "findings" in schema["$defs"]["Review"]["properties"]


@pytest.mark.network
def test_terminal_output_knob_table_first_then_findings_by_classification(vllm_029):
    from srcreview.report import terminal

    text = terminal.render(review_of(vllm_029, NESTED))
    assert text.index("Knobs") < text.index("Problems:") < text.index("Facts:")
    assert "speculative_config.attention_backend" in text and "ignored" in text
    assert "trace:" not in text
    verbose = terminal.render(review_of(vllm_029, NESTED), verbose=True)
    assert "trace:" in verbose and "[recipe]" in verbose and "[sink]" in verbose


@pytest.mark.network
def test_report_anchors_point_at_what_they_name(vllm_029):
    """Every anchor written in reports/*.json names something on the lines it points at."""
    import re

    checked = 0
    for path in sorted(REPORTS.glob("*.json")):
        if path.name.endswith(".review.json"):
            continue
        (data,) = json.loads(path.read_text(encoding="utf-8"))["reviews"]
        anchors = [a for f in data["findings"] for a in f["evidence"]] + [a for k in data["knobs"] for a in k["evidence"]]
        for a in anchors:
            lines = vllm_029.read_text(a["path"]).splitlines()[a["start_line"] - 1:a["end_line"]]
            name = a["symbol"].split(".")[-1]
            assert any(re.search(rf"\b{re.escape(name)}\b", line) for line in lines), (path.name, a)
            checked += 1
    assert checked > 50
