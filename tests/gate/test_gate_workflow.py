"""The documented GitHub Actions workflow: its shape, and that its srcreview command parses.

Running its steps against real vLLM is done in test_gate_real_vllm.py.
"""

from __future__ import annotations

import re

from gate_support import gate_command, gate_step, workflow


def test_workflow_caches_runs_uploads_and_summarises():
    flow = workflow()
    steps = flow["jobs"]["gate"]["steps"]
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    assert "actions/cache" in uses and "github/codeql-action/upload-sarif" in uses
    cache = steps[uses.index("actions/cache")]
    assert cache["with"]["path"] == "${{ env.SRCREVIEW_CACHE }}" and "SRCREVIEW_CACHE" in flow["env"]
    gate = gate_step(flow)
    assert uses.index("actions/cache") < steps.index(gate) < uses.index("github/codeql-action/upload-sarif")
    args = gate_command(gate)
    sarif_file = args[args.index("--sarif") + 1]
    upload = steps[uses.index("github/codeql-action/upload-sarif")]
    assert upload["with"]["sarif_file"] == sarif_file and "always()" in upload["if"]
    markdown_file = args[args.index("--markdown") + 1]
    assert re.search(rf"cat {re.escape(markdown_file)} >> \"\$GITHUB_STEP_SUMMARY\"", gate["run"])
    assert "SOURCE_DATE_EPOCH" in gate["run"], "reports carry the commit date, deterministically"
    assert flow["permissions"]["security-events"] == "write"
    decision = steps[-1]
    assert "steps.gate.outputs.exit-code" in decision["run"] and 'exit "$code"' in decision["run"]


def test_workflow_command_parses_with_the_check_command():
    from srcreview.cli.main import build_parser

    parser = build_parser()
    check = parser._subparsers._group_actions[0].choices["check"]
    assert "--fail-on" in check._option_string_actions
    args = gate_command(gate_step(workflow()))
    flow = workflow()
    values = {"$RECIPES": "recipes/a.toml", "$FAIL_ON": flow["env"]["FAIL_ON"], "$format": "github"}
    parsed = parser.parse_args([values.get(a, a) for a in args])
    assert str(parsed.fail_on) == flow["env"]["FAIL_ON"] and parsed.sarif and parsed.markdown and parsed.json_file
