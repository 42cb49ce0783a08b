"""Model-aware review (issue 12): the model's own config decides the draft path, from the source.

The tree is `fixtures/vllm_snippets/model_configs` (written here, vLLM-shaped): the V2 runner
builds a Gemma4, multi-module MTP or MTP speculator depending on the draft's Hugging Face config,
which `SpeculativeConfig.hf_config_override` rewrites first. The configs are those of
tests/hub_support.py (shaped like the real ones), bound as a review binds them
(srcreview.hfconfig.binding, a local directory written in the test, or the recipe's [model] table).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hub_support import (
    GEMMA4_ASSISTANT,
    GEMMA4_TARGET,
    MULTI_LAYER_MTP,
    QWEN35_MTP,
    dumps,
    write_model,
)
from recipe_support import fixture_tree

from srcreview.core.errors import DataError
from srcreview.engine.run import review
from srcreview.hfconfig.binding import with_model_configs
from srcreview.interp.interpreter import analyzer
from srcreview.model.recipe import parse_recipe
from srcreview.source.overlays import materialize
from srcreview.vllm import drafting

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "vllm_snippets"
SPEC = """
[engine.speculative_config]
method = "mtp"
num_speculative_tokens = 3
attention_backend = "TRITON_ATTN"
"""
HARDWARE = """
[hardware]
gpu = "NVIDIA GeForce RTX 5090"
compute_capability = "12.0"
"""
ENV = """
[env]
VLLM_USE_V2_MODEL_RUNNER = "1"
"""


@pytest.fixture(scope="module")
def tree():
    return fixture_tree("model_configs")


def _recipe(text: str, base: Path, mode: str = "hub"):
    return with_model_configs(parse_recipe(text, "recipe.toml"), base_dir=base, mode=mode)


def _text(model: str, *, draft: str | None = None, extra: str = "") -> str:
    spec = SPEC + (f'model = "{draft}"\n' if draft else "")
    return f'[recipe]\nname = "case"\nmodel = "{model}"\n{extra}\n{HARDWARE}{spec}{ENV}'


def _knobs(result) -> dict:
    return {f"{k.key}@{k.scope}": k.status for k in result.knobs}


def _verdicts(result) -> dict:
    return {f.rule: f.classification for f in result.findings}


def _speculators(tree, recipe) -> list[str]:
    from srcreview.engine.run import _bindings
    from srcreview.index import Index

    index = Index(tree)
    an = analyzer(index, _bindings(index, recipe))
    an.prepare()
    return [c.cls.rsplit(".", 1)[-1] for c in drafting.component(an, "v2").candidates]


CASES = [
    # (name, target config, draft config, the speculator the V2 runner builds, nested backend)
    ("a Qwen3.5 MTP checkpoint: the MTP speculator", QWEN35_MTP, None, ["MTPSpeculator"], "applied"),
    ("three MTP layers for three tokens: one module per step", MULTI_LAYER_MTP, None, ["MultiModuleMTPSpeculator"],
     "applied"),
    ("a Gemma4 assistant draft: the Gemma4 speculator keeps the target's backend", GEMMA4_TARGET, GEMMA4_ASSISTANT,
     ["Gemma4Speculator"], "ignored"),
]


@pytest.mark.parametrize("name,target,draft,built,status", CASES, ids=[c[0] for c in CASES])
def test_the_models_config_decides_the_speculator(tree, tmp_path, name, target, draft, built, status):
    write_model(tmp_path / "target", {"config.json": target})
    if draft is not None:
        write_model(tmp_path / "draft", {"config.json": draft})
    recipe = _recipe(_text("./target", draft="./draft" if draft else None), tmp_path)

    assert _speculators(tree, recipe) == built
    result = review(recipe, tree)
    assert _knobs(result)["speculative_config.attention_backend@draft"] == status
    verdict = {"applied": "refuted", "ignored": "confirmed"}[status]
    assert _verdicts(result)["spec-draft-attention-backend-ignored"] == verdict
    finding = next(f for f in result.findings if f.rule == "spec-draft-attention-backend-ignored")
    assert built[0] in " ".join(a.symbol for a in finding.evidence)
    assert not finding.assumptions
    target_info = next(m for m in result.models if "target" in m.roles)
    assert target_info.source == "local" and target_info.unknown is None
    assert "model_type" in next(m for m in result.models if m.ref == ("./draft" if draft else "./target")).read


def test_without_a_model_config_the_speculator_stays_open(tree, tmp_path):
    recipe = _recipe(_text("./missing"), tmp_path)
    result = review(recipe, tree)

    assert _knobs(result)["speculative_config.attention_backend@draft"] == "undecided"
    finding = next(f for f in result.findings if f.rule == "spec-draft-attention-backend-ignored")
    assert finding.classification == "plausible" and "model-config-unknown" in finding.tags
    (model,) = result.models
    assert model.unknown is not None and model.source == "none"
    assert set(_speculators(tree, recipe)) == {"Gemma4Speculator", "MultiModuleMTPSpeculator", "MTPSpeculator"}


def test_values_the_recipe_states_decide_without_a_config_file(tree, tmp_path):
    stated = '[draft_model]\nmodel_type = "gemma4_assistant"\narchitectures = ["Gemma4AssistantForCausalLM"]\n'
    text = _text("./missing-target", draft="./missing-draft") + stated
    recipe = _recipe(text, tmp_path)
    result = review(recipe, tree)

    assert _knobs(result)["speculative_config.attention_backend@draft"] == "ignored"
    draft = next(m for m in result.models if m.ref == "./missing-draft")
    assert draft.source == "recipe" and draft.unknown is not None  # config.json itself was not read
    assert [(v.key, v.line) for v in draft.stated] == [("model_type", text.splitlines().index('model_type = "gemma4_assistant"') + 1),
                                                      ("architectures", text.splitlines().index(
                                                          'architectures = ["Gemma4AssistantForCausalLM"]') + 1)]


def test_model_configs_off_reads_nothing(tree, tmp_path):
    write_model(tmp_path / "target", {"config.json": QWEN35_MTP})
    recipe = _recipe(_text("./target"), tmp_path, mode="off")
    (facts,) = recipe.models
    assert not facts.known and "--model-config off" in facts.unknown_reason
    assert _knobs(review(recipe, tree))["speculative_config.attention_backend@draft"] == "undecided"


def test_defaults_applied_through_setattr_are_seen_and_a_missing_one_still_raises(tree, tmp_path):
    """The level-defaults table is applied by a nested function with setattr (one value a
    function): missing those stores would make the `is None` raise look certain."""
    write_model(tmp_path / "target", {"config.json": QWEN35_MTP})
    fine = review(_recipe(_text("./target"), tmp_path), tree)
    assert _verdicts(fine).get("startup-rejected") != "confirmed"  # the stores are seen: the raise is not certain

    level0 = review(_recipe(_text("./target").replace("[env]", "[engine]\noptimization_level = 0\n[env]"), tmp_path), tree)
    rejected = next(f for f in level0.findings if f.rule == "startup-rejected")
    assert rejected.classification == "confirmed"
    source = (materialize(FIXTURES / "model_configs") / "vllm/config/vllm.py").read_text().splitlines()
    line = next(n for n, text in enumerate(source, 1) if "# mark: level-raise" in text)
    assert any(a.path == "vllm/config/vllm.py" and a.start_line == line for a in rejected.evidence)


def test_the_model_table_keeps_lines_and_refuses_what_is_not_json():
    text = '[recipe]\nname = "x"\nmodel = "org/m"\n[model]\nmodel_type = "qwen3_5"\n[model.text_config]\nmtp_num_hidden_layers = 1\n'
    recipe = parse_recipe(text, "r.toml")
    assert [(o.key, o.value, o.line) for o in recipe.model_overrides.items] == [
        ("model_type", "qwen3_5", 5), ("text_config.mtp_num_hidden_layers", 1, 7)]
    with pytest.raises(DataError, match=r"r.toml:5: \[model\] when: .*not a JSON"):
        parse_recipe('[recipe]\nname = "x"\nmodel = "org/m"\n[model]\nwhen = 2026-01-01\n', "r.toml")
    with pytest.raises(DataError, match=r"r.toml:1: \[draft_model\] must be a table"):
        parse_recipe('draft_model = 3\n[recipe]\nname = "x"\nmodel = "org/m"\n', "r.toml")


def test_an_unresolvable_hub_host_is_said_at_once(tmp_path):
    """A Hub that cannot be reached makes the config unknown in well under huggingface_hub's
    ~20 s of retries; the review goes on."""
    import os
    import subprocess
    import sys
    import time

    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_"))}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_ENDPOINT="https://hub.invalid")
    code = ("import json; from srcreview.hfconfig import parse_model_ref, obtain_model_config; "
            "print(json.dumps(obtain_model_config(parse_model_ref('org/model')).to_json()))")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - started
    facts = json.loads(done.stdout)
    assert facts["unknown_reason"].endswith("the Hub endpoint's host does not resolve and config.json is not in the "
                                            "huggingface_hub cache")
    assert elapsed < 15, elapsed


def test_a_hub_model_is_bound_with_its_commit_in_every_format(vllm_029, tmp_path):
    """`check` reads a Hub id through huggingface_hub (a Hub on 127.0.0.1 via HF_ENDPOINT); the
    review records the commit and digest, and at 0.29.0 the V2 MTP draft ignores the nested
    backend and applies an explicit draft KV dtype."""
    from conftest import srcreview_process
    from hub_support import hub_env, serve_hub

    recipe = tmp_path / "recipe.toml"
    recipe.write_text(_text("org/qwen35").replace('attention_backend = "TRITON_ATTN"',
                                                  'attention_backend = "TRITON_ATTN"\nkv_cache_dtype = "fp8"'))
    with serve_hub() as hub:
        repo = hub.publish("org/qwen35", {"config.json": QWEN35_MTP})
        env = hub_env(tmp_path / "hf", hub.endpoint, COLUMNS="200")  # the srcreview cache holding 0.29.0 is kept
        outputs = {}
        for fmt in ("json", "text", "markdown", "sarif"):
            process = srcreview_process("check", str(recipe), "--rev", "0.29.0", "--format", fmt, env=env,
                                        cwd=tmp_path)
            out, err = process.communicate(timeout=600)
            assert process.returncode == 1, err
            outputs[fmt] = out
    (review_json,) = json.loads(outputs["json"])["reviews"]
    (model,) = review_json["models"]
    assert (model["ref"], model["source"], model["commit"]) == ("org/qwen35", "hub", repo.commit)
    assert model["files"][0]["sha256"] == __import__("hashlib").sha256(dumps(QWEN35_MTP)).hexdigest()
    knobs = {f"{k['key']}@{k['scope']}": k["status"] for k in review_json["knobs"]}
    assert knobs["speculative_config.attention_backend@draft"] == "ignored"
    assert knobs["speculative_config.kv_cache_dtype@draft"] == "applied"
    summary = f"model org/qwen35 (target): config.json from the Hugging Face Hub at commit {repo.commit[:12]}"
    assert summary in outputs["text"] and summary in outputs["markdown"]
    sarif_models = json.loads(outputs["sarif"])["runs"][0]["properties"]["models"]
    assert sarif_models[0]["commit"] == repo.commit


REAL_CASES = [
    # (release, target config, draft config, nested backend on the V2 runner)
    ("0.30.0", QWEN35_MTP, None, "applied"),
    ("0.33.0", QWEN35_MTP, None, "applied"),
    ("0.30.0", GEMMA4_TARGET, GEMMA4_ASSISTANT, "ignored"),
]


@pytest.mark.releases
@pytest.mark.parametrize("version,target,draft,status", REAL_CASES,
                         ids=[f"{c[0]}-{c[1]['model_type']}-{(c[2] or {}).get('model_type', 'mtp')}" for c in REAL_CASES])
def test_real_releases_decide_the_draft_backend_from_the_model(vllm_release, tmp_path, version, target, draft, status):
    """From reading each release: 0.30.0 and 0.33.0 build the standard (or multi-module) MTP
    speculator for a Qwen3.5 checkpoint, whose loader applies the nested backend; 0.30.0 builds
    the Gemma4 speculator for a `gemma4_assistant` draft (rewritten to `gemma4_mtp`), which
    keeps the target's."""
    from real_reviews import index_for

    tree = vllm_release(version)
    write_model(tmp_path / "target", {"config.json": target})
    if draft is not None:
        write_model(tmp_path / "draft", {"config.json": draft})
    recipe = _recipe(_text("./target", draft="./draft" if draft else None), tmp_path)
    result = review(recipe, tree, index=index_for(tree))
    assert _knobs(result)["speculative_config.attention_backend@draft"] == status
    finding = next(f for f in result.findings if f.rule == "spec-draft-attention-backend-ignored")
    assert finding.classification == {"applied": "refuted", "ignored": "confirmed"}[status]
    if draft is not None:
        assert "Gemma4Speculator" in " ".join(a.symbol for a in finding.evidence)
    assert "startup-rejected" not in _verdicts(result)
