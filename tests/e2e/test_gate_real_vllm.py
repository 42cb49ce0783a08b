"""The gate on real vLLM 0.29.0 (issue 5, Done when), through the real `srcreview check` CLI.

The three example recipes: the nested-triton one fails the default gate, bf16 and fp8 pass;
the SARIF validates against the official schema and its primary locations are the recipe
lines that set the knobs; two runs give byte-identical JSON, SARIF and Markdown without any
absolute path; the documented GitHub Actions gate step runs as written.

The source comes from the `vllm_029` fixture, which caches the registry sdist in the user
cache, so `check` (provider auto, at each recipe's pin) finds it there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from gate_support import gate_command, gate_step, sarif_errors, sarif_validator, workflow

from srcreview.model.recipe import load_recipe

ROOT = Path(__file__).resolve().parents[2]
NESTED = "examples/thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml"
BF16 = "examples/thinkingcap-awq-vllm029-5090-16k-mtp3-triton-bf16.toml"
FP8 = "examples/thinkingcap-awq-vllm029-5090-16k-mtp3-triton-fp8.toml"
SHA = "98dff2a81d747d1dba01a47f939f48c3526d4206"
COMPOSE_BF16 = """\
# srcreview: gpu='NVIDIA GeForce RTX 5090' compute_capability=12.0
services:
  bf16:
    image: vllm/vllm-openai:v0.29.0
    environment:
      VLLM_USE_V2_MODEL_RUNNER: "1"
    command:
      - bottlecapai/ThinkingCap-Qwen3.8-27B-NVFP4A4-AWQ
      - --max-model-len=16384
      - --max-num-seqs=1
      - --attention-backend=TRITON_ATTN
      - --kv-cache-dtype=bfloat16
      - --speculative-config
      - '{"method": "mtp", "num_speculative_tokens": 3}'
  cache:
    image: redis:7
"""


pytestmark = pytest.mark.network


@pytest.fixture(scope="module")
def workdir(tmp_path_factory, vllm_029):
    """A git repository holding the three example recipes at their project paths."""
    work = tmp_path_factory.mktemp("recipes-repo")
    (work / "examples").mkdir()
    for name in (NESTED, BF16, FP8):
        (work / name).write_bytes((ROOT / name).read_bytes())
    env = dict(os.environ, GIT_AUTHOR_DATE="2026-11-29T12:00:00Z", GIT_COMMITTER_DATE="2026-11-29T12:00:00Z")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "recipes"]):
        subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True)
    return work


def _env() -> dict:
    env = dict(os.environ)
    env.pop("SOURCE_DATE_EPOCH", None)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def srcreview(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "srcreview", *args], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=900)


@pytest.mark.parametrize("recipe, code", [(NESTED, 1), (BF16, 0), (FP8, 0)])
def test_default_gate_per_recipe(workdir, recipe, code):
    proc = srcreview("check", recipe, "--rev", "0.29.0", "--format", "json", cwd=workdir)
    assert proc.stdout and "Traceback" not in proc.stderr, proc.stderr
    review = json.loads(proc.stdout)["reviews"][0]
    confirmed_high = [(f["rule"], f["knobs"]) for f in review["findings"]
                      if f["classification"] == "confirmed" and f["severity"] == "high"]
    assert (proc.returncode, review["gate"]["status"]) == (code, "failed" if code else "passed"), confirmed_high
    assert bool(confirmed_high) == (code == 1)
    if code:
        assert ("spec-draft-attention-backend-ignored", ["speculative_config.attention_backend"]) in confirmed_high


@pytest.fixture(scope="module")
def combined(workdir):
    """Two identical combined runs over the three recipes: (exit code, json, sarif, markdown) each."""
    runs = []
    for i in range(2):
        out = workdir / f"run{i}"
        out.mkdir()
        proc = srcreview("check", NESTED, BF16, FP8, "--rev", "0.29.0", "--format", "json", "--date", "2026-11-29",
                         "--sarif", f"run{i}/out.sarif", "--markdown", f"run{i}/out.md", cwd=workdir)
        runs.append((proc.returncode, proc.stdout, (out / "out.sarif").read_text(), (out / "out.md").read_text(),
                     proc.stderr))
    return runs


def test_combined_run_fails_and_sarif_anchors_recipe_lines(workdir, combined):
    code, _, sarif_text, markdown_text, stderr = combined[0]
    assert code == 1, stderr
    log = json.loads(sarif_text)
    assert sarif_errors(sarif_validator(), log) == []
    run = log["runs"][0]
    assert {p["revisionId"] for p in run["versionControlProvenance"]} == {SHA}
    recipes = {name: load_recipe(workdir / name, name) for name in (NESTED, BF16, FP8)}
    for result in run["results"]:
        primary = result["locations"][0]["physicalLocation"]
        uri = primary["artifactLocation"]["uri"]
        assert uri in recipes
        knob_lines = {s.line for s in recipes[uri].settings if s.key in result["properties"]["knobs"]}
        if knob_lines:
            assert primary["region"]["startLine"] in knob_lines, result["ruleId"]
    failing = [r for r in run["results"] if r["level"] == "error" and r["properties"]["classification"] == "confirmed"]
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in failing} == {NESTED}
    ignored = next(r for r in failing if "speculative_config.attention_backend" in r["properties"]["knobs"])
    assert ignored["locations"][0]["physicalLocation"]["region"]["startLine"] == \
        recipes[NESTED].setting("speculative_config.attention_backend").line
    symbols = {loc.get("message", {}).get("text", "") for loc in ignored["relatedLocations"]}
    assert any("load_eagle_model" in s for s in symbols) and any("load_draft_model" in s for s in symbols)
    assert "gate failed (exit 1)" in markdown_text


def test_two_runs_are_byte_identical_without_local_paths(workdir, combined):
    first, second = combined
    assert first[:4] == second[:4]
    for text in first[1:4]:
        for local in (str(workdir), str(ROOT), str(Path.home()), "/tmp/"):
            assert local not in text


@pytest.fixture(scope="module")
def ci_layout(tmp_path_factory, vllm_029):
    """The layout docs/ci.md documents: recipes/ holding the recipes and their srcreview.toml, and
    a compose file in a subdirectory (the bf16 recipe restated as a service beside another one).

    The waiver accepts the nested recipe's recipe-identity-drift finding, by the fingerprint a
    first review reports (so the gate still fails on the draft backend, with one waived).
    """
    work = tmp_path_factory.mktemp("ci-layout")
    (work / "recipes").mkdir()
    for name in (NESTED, BF16, FP8):
        (work / "recipes" / Path(name).name).write_bytes((ROOT / name).read_bytes())
    (work / "recipes" / "team-b").mkdir()
    (work / "recipes" / "team-b" / "docker-compose.yml").write_text(COMPOSE_BF16)
    first = json.loads(srcreview("check", "recipes/", "--format", "json", "--fail-on", "none", cwd=work).stdout)
    nested = next(r for r in first["reviews"] if r["recipe"]["path"].endswith(Path(NESTED).name))
    drift = next(f["fingerprint"] for f in nested["findings"] if f["rule"] == "recipe-identity-drift")
    (work / "recipes" / "srcreview.toml").write_text(
        f'[[waivers]]\nfingerprint = "{drift}"\nrule = "recipe-identity-drift"\n'
        f'reason = "the name records the draft backend"\nexpires = 2099-12-31\nrecipe = "{Path(NESTED).name}"\n')
    env = dict(os.environ, GIT_AUTHOR_DATE="2026-11-29T12:00:00Z", GIT_COMMITTER_DATE="2026-11-29T12:00:00Z")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", "recipes"]):
        subprocess.run(["git", *args], cwd=work, env=env, check=True, capture_output=True)
    return work, drift


def test_documented_workflow_runs_on_a_directory_with_a_waiver_file(ci_layout, tmp_path):
    """The workflow's gate and decision steps, as bash runs them on the runner, with its own RECIPES."""
    work, drift = ci_layout
    flow = workflow()
    step = gate_step(flow)
    assert gate_command(step)[:2] == ["check", "$RECIPES"] and flow["env"]["RECIPES"] == "recipes/"
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs"
    env = {**_env(), **{k: str(v) for k, v in flow["env"].items() if k != "SRCREVIEW_CACHE"},
           "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(outputs)}
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], cwd=work,
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    assert "exit-code=1" in outputs.read_text(), proc.stderr
    text = summary.read_text()
    assert text.startswith("## srcreview: gate failed (exit 1)") and "review date 2026-11-29" in text
    assert "1 problem at or above confirmed:high; 1 waived;" in text
    reviews = json.loads((work / "srcreview.json").read_text())["reviews"]
    assert sorted(r["recipe"]["path"] for r in reviews) == sorted(
        [f"recipes/{Path(n).name}" for n in (NESTED, BF16, FP8)] + ["recipes/team-b/docker-compose.yml#bf16"])
    by_path = {r["recipe"]["path"]: r for r in reviews}
    service, toml = by_path["recipes/team-b/docker-compose.yml#bf16"], by_path[f"recipes/{Path(BF16).name}"]
    assert service["gate"]["status"] == "passed"
    assert sorted((f["rule"], f["classification"]) for f in service["findings"]) == \
        sorted((f["rule"], f["classification"]) for f in toml["findings"])
    waived = [f for r in reviews for f in r["findings"] if f.get("waiver")]
    assert [f["fingerprint"] for f in waived] == [drift]
    log = json.loads((work / "srcreview.sarif").read_text())
    assert sarif_errors(sarif_validator(), log) == []
    assert [r["partialFingerprints"]["srcreviewFingerprint/v1"] for r in log["runs"][0]["results"]
            if r.get("suppressions")] == [drift]
    decision = flow["jobs"]["gate"]["steps"][-1]["run"].replace("${{ steps.gate.outputs.exit-code }}", "1")
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", decision], cwd=work, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 1 and "gate failed" in proc.stdout


def test_documented_pre_commit_hook_runs_on_the_same_layout(ci_layout, tmp_path):
    """The manifest's hook, run by pre-commit (as a local hook on the installed srcreview)."""
    pytest.importorskip("pre_commit")
    from gate.test_precommit import _hook, _pre_commit

    work, _ = ci_layout
    repo = tmp_path / "repo"
    shutil.copytree(work, repo, ignore=shutil.ignore_patterns("srcreview.json", "srcreview.sarif", "srcreview.md"))
    hook = {k: v for k, v in _hook().items() if k in ("id", "name", "entry", "pass_filenames", "files", "types",
                                                       "require_serial")}
    (repo / ".pre-commit-config.yaml").write_text(
        yaml.safe_dump({"repos": [{"repo": "local", "hooks": [{**hook, "language": "system"}]}]}))
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True, capture_output=True)
    env = dict(_env(), PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never")
    proc = _pre_commit("run", "--all-files", cwd=repo, env=env, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "exit code: 1" in out, out
    assert "gate: failed (1 problem at or above confirmed:high; 1 waived;" in out
    assert "srcreview.toml: " not in out and "Traceback" not in out
