"""The CI files as shipped (issue 26): docs/github-actions-srcreview.yml and .pre-commit-hooks.yaml,
tried as a new user would, on a fresh git repository of recipes in every format srcreview reads.

Every recipe (srcreview TOML, a TOML recipe with a patch, a compose service, a launch script
with and without a suffix, a vLLM YAML config, a Dockerfile) states the nested-Triton defect at
the real vLLM 0.29.0, so each one alone fails the gate: a format that is not gated shows as a
recipe missing from the failures. The command lines are taken from the YAML files (parsed with
PyYAML), so the test fails when the files drift: the workflow's `run:` steps run under bash
with the runner's files (GITHUB_OUTPUT, GITHUB_STEP_SUMMARY), and the hook runs through
pre-commit itself, with the manifest's entry and file filters (as a local hook on the installed
srcreview: `language: python` would pip install it, tests/gate/test_precommit.py tries that).
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from srcreview.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "docs" / "github-actions-srcreview.yml"
MANIFEST = ROOT / ".pre-commit-hooks.yaml"
NESTED = ROOT / "examples" / "thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml"
PIN = "# srcreview: version=0.29.0 gpu='NVIDIA GeForce RTX 5090' compute_capability=12.0\n"
SPEC = '{"method": "mtp", "num_speculative_tokens": 3, "attention_backend": "TRITON_ATTN"}'
SERVE = f"vllm serve some/model --max-model-len 16384 --speculative-config '{SPEC}'\n"
SCRIPT = f"#!/bin/sh\n{PIN}export VLLM_USE_V2_MODEL_RUNNER=1\n{SERVE}"
COMPOSE = f"""{PIN}services:
  vllm:
    image: vllm/vllm-openai:v0.29.0
    environment:
      VLLM_USE_V2_MODEL_RUNNER: "1"
    command: ["some/model", "--max-model-len", "16384", "--speculative-config", {json.dumps(SPEC)}]
  cache:
    image: redis:7
"""
DOCKERFILE = (f"{PIN}FROM vllm/vllm-openai:v0.29.0\nENV VLLM_USE_V2_MODEL_RUNNER=1\n"
              f"CMD {json.dumps(['some/model', '--max-model-len', '16384', '--speculative-config', SPEC])}\n")
CONFIG = f"{PIN}model: some/model\nmax-model-len: 16384\nspeculative-config: '{SPEC}'\n"
# a vllm-project/recipes registry file (models/<org>/<model>.yaml): the site's command is base_args, base_env
REGISTRY = (f"{PIN}model:\n  model_id: some/model\n  base_args: {json.dumps(['--max-model-len', '16384', '--speculative-config', SPEC])}\n"
            "  base_env:\n    VLLM_USE_V2_MODEL_RUNNER: \"1\"\nvariants:\n  default:\n    precision: bf16\n")
# recipe file -> its format; each holds the defect (a compose file: in its vllm service)
RECIPES = {"recipes/nested.toml": "toml", "recipes/patched.toml": "toml with a patch",
           "recipes/team-b/docker-compose.yml": "compose", "recipes/serve.sh": "script",
           "recipes/launch": "script without a suffix", "recipes/vllm-config.yaml": "vLLM YAML config",
           "recipes/Dockerfile": "Dockerfile", "recipes/models/some/model.yaml": "recipes-registry YAML"}
PATCH = "recipes/patches/comment.diff"
NOT_RECIPES = ("README.md", "src/app.js")

pytestmark = pytest.mark.network


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@localhost", *args], cwd=cwd, check=True,
                   capture_output=True, env=dict(os.environ, GIT_COMMITTER_DATE="2026-11-29T12:00:00Z",
                                                 GIT_AUTHOR_DATE="2026-11-29T12:00:00Z"))


def _patch(tree_root: Path) -> str:
    """A patch that applies to the real 0.29.0 tree (a comment added to vllm/envs.py)."""
    before = (tree_root / "vllm" / "envs.py").read_text(encoding="utf-8")
    after = before + "# a comment the patch adds\n"
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        "a/vllm/envs.py", "b/vllm/envs.py"))


@pytest.fixture(scope="module")
def repo(tmp_path_factory, vllm_029):
    """A fresh git repository of recipes in every format, with its source cache restored (the
    real 0.29.0 entry of the user cache hard-linked in, as actions/cache would restore it)."""
    work = tmp_path_factory.mktemp("user-recipes")
    nested = NESTED.read_text(encoding="utf-8")
    texts = {"recipes/nested.toml": nested,
             "recipes/patched.toml": nested.replace('[runtime]\n', '[runtime]\npatches = ["patches/comment.diff"]\n'),
             "recipes/team-b/docker-compose.yml": COMPOSE, "recipes/serve.sh": SCRIPT, "recipes/launch": SCRIPT,
             "recipes/vllm-config.yaml": CONFIG, "recipes/Dockerfile": DOCKERFILE,
             "recipes/models/some/model.yaml": REGISTRY, PATCH: _patch(Path(vllm_029.root)), "README.md": f"Run `{SERVE.strip()}`.\n",
             "src/app.js": "console.log('no recipe')\n", ".gitignore": ".srcreview-cache/\n"}
    for name, text in texts.items():
        (work / name).parent.mkdir(parents=True, exist_ok=True)
        (work / name).write_text(text, encoding="utf-8")
    entry = Path(vllm_029.root).parent
    shutil.copytree(entry, work / ".srcreview-cache" / "registry" / entry.name, copy_function=os.link, symlinks=True)
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "recipes")
    return work


def _env(work: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SRCREVIEW_", "GITHUB_"))}
    env.pop("SOURCE_DATE_EPOCH", None)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["HF_HUB_OFFLINE"] = "1"
    return {**env, **extra}


def _workflow() -> dict:
    flow = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    flow["on"] = flow.pop(True, flow.get("on"))  # YAML 1.1 reads the key `on` as true
    return flow


def _step(flow: dict, name: str) -> dict:
    return next(s for s in flow["jobs"]["gate"]["steps"] if s.get("name") == name)


def _expand(text: str, values: dict[str, str]) -> str:
    """`${{ expr }}` as the runner substitutes them, from `values` (an unknown one fails the test)."""
    def one(match: re.Match) -> str:
        assert match.group(1) in values, f"the test does not know ${{{{ {match.group(1)} }}}}"
        return values[match.group(1)]

    return re.sub(r"\$\{\{\s*(.*?)\s*\}\}", one, text)


def _github_glob(pattern: str, path: str) -> bool:
    """GitHub's filter pattern: `**` any characters, `*` any but `/`, `?` one character."""
    regex = "".join(".*" if part == "**" else "[^/]*" if part == "*" else "." if part == "?" else re.escape(part)
                    for part in re.split(r"(\*\*|\*|\?)", pattern))
    return re.fullmatch(regex, path) is not None


def _run_step(flow: dict, name: str, work: Path, tmp: Path, **env: str) -> tuple[subprocess.CompletedProcess, dict]:
    """One `run:` step as the runner runs it (bash -e -o pipefail), with the workflow's env;
    returns the process and what the step wrote to GITHUB_OUTPUT."""
    values = {"github.workspace": str(work), "secrets.SRCREVIEW_CACHE_KEY": env.pop("SECRET", ""),
              "runner.os": "Linux"}
    step_env = {k: _expand(str(v), values) for k, v in flow["env"].items()}
    outputs, summary = tmp / f"{name}.out", tmp / "summary.md"
    outputs.write_text("")
    full = _env(work, **{**step_env, **env}, RUNNER_OS="Linux", GITHUB_OUTPUT=str(outputs),
                GITHUB_STEP_SUMMARY=str(summary))
    script = _expand(_step(flow, name)["run"], values)
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=work, env=full,
                          capture_output=True, text=True, timeout=900)
    written = dict(line.split("=", 1) for line in outputs.read_text().splitlines() if "=" in line)
    return proc, written


def test_the_workflow_triggers_on_every_recipe_format_and_pins_its_actions():
    flow = _workflow()
    for event in ("pull_request", "push"):
        patterns = flow["on"][event]["paths"]
        for name in (*RECIPES, PATCH, "recipes/srcreview.toml", "recipes/team-b/.env"):
            assert any(_github_glob(p, name) for p in patterns), f"{event}: a change to {name} is not gated"
        assert not any(_github_glob(p, n) for p in patterns for n in NOT_RECIPES)
    assert flow["permissions"] == {"contents": "read", "security-events": "write", "actions": "read"}
    text = WORKFLOW.read_text(encoding="utf-8")
    for step in flow["jobs"]["gate"]["steps"]:
        if "uses" in step:
            action, _, ref = step["uses"].partition("@")
            assert re.fullmatch(r"[0-9a-f]{40}", ref), f"{action} is pinned by {ref!r}, not a commit"
            assert re.search(rf"{re.escape(step['uses'])} # v\d+\.\d+\.\d+\n", text), "the tag goes in a comment"
    cache = next(s for s in flow["jobs"]["gate"]["steps"] if s.get("uses", "").startswith("actions/cache@"))
    assert cache["with"]["key"] == "${{ steps.pins.outputs.key }}" and "hashFiles" not in str(cache["with"])
    assert flow["env"]["SRCREVIEW_CACHE_KEY"] == "${{ secrets.SRCREVIEW_CACHE_KEY }}"


def test_the_cache_key_follows_the_pins_and_the_version_not_the_recipe_edits(repo, tmp_path):
    flow = _workflow()
    proc, first = _run_step(flow, "Key the cache on the pinned releases", repo, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert re.fullmatch(r"srcreview-Linux-[0-9a-f]{16}", first["key"])
    assert "vllm 0.29.0 " in proc.stdout and proc.stdout.startswith("srcreview ")
    work = tmp_path / "edited"
    shutil.copytree(repo, work, symlinks=True, ignore=shutil.ignore_patterns(".srcreview-cache"))
    (work / "recipes" / "nested.toml").write_text(NESTED.read_text().replace("max_num_seqs = 1", "max_num_seqs = 2"))
    proc, edited = _run_step(flow, "Key the cache on the pinned releases", work, tmp_path)
    assert edited["key"] == first["key"], "a recipe edit that keeps its pin keeps the cache entry"
    (work / "recipes" / "serve.sh").write_text(SCRIPT.replace("version=0.29.0", "version=0.30.0"))
    proc, bumped = _run_step(flow, "Key the cache on the pinned releases", work, tmp_path)
    assert bumped["key"] != first["key"], "a pin bump is a new cache entry"


def _gated(doc: dict) -> dict[str, list[str]]:
    """recipe file -> the rules that fail the gate on it."""
    found: dict[str, list[str]] = {}
    for review in doc["reviews"]:
        file = review["recipe"].get("file") or review["recipe"]["path"]
        failing = set(review["gate"]["failing"])
        found.setdefault(file, []).extend(f["rule"] for f in review["findings"] if f["fingerprint"] in failing)
    return found


@pytest.mark.parametrize("annotate", ["sarif", "annotations"])
def test_the_workflow_gates_every_format(repo, tmp_path, annotate):
    flow = _workflow()
    work = tmp_path / "repo"
    shutil.copytree(repo, work, symlinks=True, copy_function=os.link)
    proc, out = _run_step(flow, "Review the recipes (the gate)", work, tmp_path, ANNOTATE=annotate)
    assert proc.returncode == 0 and out["exit-code"] == "1", proc.stderr
    doc = json.loads((work / "srcreview.json").read_text())
    gated = _gated(doc)
    assert sorted(gated) == sorted(RECIPES), "every recipe of every format is reviewed"
    for name, rules in gated.items():
        assert "spec-draft-attention-backend-ignored" in rules, f"{RECIPES[name]} ({name}) is not gated"
    sarif = json.loads((work / "srcreview.sarif").read_text())
    errors = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
              for r in sarif["runs"][0]["results"] if r["level"] == "error"}
    assert errors == set(RECIPES)
    assert (tmp_path / "summary.md").read_text().startswith("## srcreview: gate failed (exit 1)")
    if annotate == "sarif":  # concise lines an editor opens, and no workflow command
        for name in RECIPES:
            assert re.search(rf"^{re.escape(name)}:\d+:1: .*spec-draft-attention-backend-ignored", proc.stdout, re.M)
        assert not re.search(r"^\s*::", proc.stdout, re.M)
    else:
        commands = re.findall(r"^::(error|warning|notice) file=([^,]+),line=(\d+),col=1,title=srcreview ([^:]+)::",
                              proc.stdout, re.M)
        assert {f for c, f, _, rule in commands if c == "error" and rule == "spec-draft-attention-backend-ignored"} \
            == set(RECIPES)
    decision = _step(flow, "Gate decision")["run"].replace("${{ steps.gate.outputs.exit-code }}", out["exit-code"])
    done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", decision], cwd=work,
                          env=_env(work, FAIL_ON=flow["env"]["FAIL_ON"]), capture_output=True, text=True)
    assert done.returncode == 1 and "::error::srcreview: gate failed" in done.stdout


def _hook_config(work: Path) -> dict:
    """The manifest's hook as a local hook (language: system, on the installed srcreview)."""
    [hook] = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    local = {k: v for k, v in hook.items() if k not in ("language", "minimum_pre_commit_version", "description")}
    return {"repos": [{"repo": "local", "hooks": [{**local, "language": "system"}]}]}


def test_the_hook_runs_on_a_change_of_every_format_and_fails_the_commit(repo, tmp_path):
    pytest.importorskip("pre_commit")
    work = tmp_path / "repo"
    shutil.copytree(repo, work, symlinks=True, copy_function=os.link)
    (work / ".pre-commit-config.yaml").write_text(yaml.safe_dump(_hook_config(work)))
    _git(work, "add", "-A")
    env = _env(work, PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"), PRE_COMMIT_COLOR="never",
               SRCREVIEW_CACHE=str(work / ".srcreview-cache"), SRCREVIEW_CACHE_KEY="test-secret")

    def pre_commit(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pre_commit", "run", *args], cwd=work, env=env,
                              capture_output=True, text=True, timeout=900)

    everything = pre_commit("--all-files")
    out = everything.stdout + everything.stderr
    assert everything.returncode == 1 and "exit code: 1" in out, out
    for name in RECIPES:  # concise: `file:line:col:` a terminal or editor opens, one line per finding
        assert re.search(rf"^{re.escape(name)}:\d+:1: (service vllm: |variant default: )?high confirmed problem spec-draft-attention-backend-ignored",
                         out, re.M), name
    assert len(out.splitlines()) < 120, "the hook prints a line per finding, not the whole text report"
    for name in (*RECIPES, PATCH):
        one = pre_commit("--files", name)
        assert one.returncode == 1 and "Failed" in one.stdout, f"a change to {name} does not run the hook"
    for name in NOT_RECIPES:
        skipped = pre_commit("--files", name)
        assert skipped.returncode == 0 and "Skipped" in skipped.stdout, skipped.stdout
    assert fnmatch.fnmatch(_hook_config(work)["repos"][0]["hooks"][0]["entry"], "srcreview check *--format concise*")


def _command_lines(script: str) -> list[str]:
    """Every `srcreview ...` command of a shell script or entry, up to the shell's own syntax
    (a redirection, a pipe, the end of a `$( )`), with continuation lines joined."""
    joined = script.replace("\\\n", " ")
    lines = []
    for line in joined.splitlines():
        line = re.sub(r"(^|\s)#.*", "", line)  # a shell comment
        for match in re.finditer(r"(?<![\w./-])srcreview\s[^|;)>]*", line):
            lines.append(re.sub(r"\s+\d+$", "", match.group(0).strip()))  # `2>`: a redirection
    return lines


def _parses(line: str, values: dict[str, str]) -> None:
    """`line` as bash would pass it (the workflow's variables expanded), parsed by srcreview's own
    argparse: a usage error (exit 64) fails the test with the command and the error."""
    words = shlex.split(re.sub(r'"?\$\{?(\w+)\}?"?', lambda m: shlex.quote(values[m.group(1)]), line))
    assert words[0] == "srcreview"
    try:
        args = build_parser().parse_args(words[1:])
    except SystemExit as exc:
        pytest.fail(f"{line!r} is not a srcreview command line (exit {exc.code})")
    assert callable(args.run), line


def test_every_shipped_srcreview_command_line_parses():
    flow = _workflow()
    values = {k: str(v) for k, v in flow["env"].items()}
    shipped = {step["name"]: _command_lines(step["run"]) for step in flow["jobs"]["gate"]["steps"] if "run" in step}
    assert [len(shipped[s]) for s in ("Key the cache on the pinned releases", "Review the recipes (the gate)")] == [1, 1]
    for fmt in ("concise", "github"):  # the gate step's two formats
        for lines in shipped.values():
            for line in lines:
                _parses(line, {**values, "format": fmt})
    [hook] = yaml.safe_load(MANIFEST.read_text(encoding="utf-8"))
    _parses(hook["entry"], {})
    docs = (ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    documented = [line for block in re.findall(r"\n((?:    .*\n)+)", docs) for line in _command_lines(block)]
    documented += [line.strip() for line in re.findall(r"#\s*entry:\s*(srcreview[^#\n]*)", docs)]
    assert len(documented) >= 4, documented
    for line in documented:
        _parses(line, {})
    with pytest.raises(pytest.fail.Exception):  # the check itself refuses what argparse refuses
        _parses("srcreview check recipes/ --format nosuch", {})
