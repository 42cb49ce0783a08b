"""The runtime profile (issue 24): the release's official container on the recipe's GPU, read
from the real 0.29.0 tree's requirement files, answers import-time probes; VLLM_* env vars are
knob rows decided by that revision's vllm/envs.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from real_reviews import review_text

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "thinkingcap-awq-vllm029-5090-16k-mtp3-triton-bf16.toml"

pytestmark = pytest.mark.network


def _variant(env: dict[str, str], runtime: str = "") -> str:
    """The bf16 example without its [env] table, with `env` instead and `runtime` lines added."""
    text = EXAMPLE.read_text(encoding="utf-8").split("[env]")[0]
    if runtime:
        text = text.replace('engine = "vllm"\n', f'engine = "vllm"\n{runtime}\n', 1)
    return text + "[env]\n" + "".join(f'{k} = "{v}"\n' for k, v in env.items())


def test_profile_reads_the_release_requirements(vllm_029):
    from srcreview.model.recipe import load_recipe
    from srcreview.vllm.profile import runtime_profile

    profile = runtime_profile(vllm_029, load_recipe(EXAMPLE))
    assert profile.platform == "cuda" and profile.requirements[0] == "requirements/cuda.txt"
    by_name = {p.name: p for p in profile.packages}
    torch = by_name["torch"]
    path, line = torch.source.rsplit(":", 1)
    assert vllm_029.read_text(path).splitlines()[int(line) - 1].startswith("torch==")
    assert by_name["triton"].installed and "torch" in by_name["triton"].source
    assert "platform cuda" in profile.summary()


def test_with_no_gpu_named_the_official_container_fixes_the_platform(vllm_029, tmp_path):
    """The release's docker/Dockerfile builds its official image for CUDA: with no GPU named the
    platform (and so HAS_TRITON) is decided, the capability stays open; another image, or a tree
    without that Dockerfile, leaves the platform open."""
    from srcreview.model.recipe import read_recipes
    from srcreview.source.base import DirectoryTree
    from srcreview.vllm.profile import runtime_profile

    (plain,) = read_recipes("#!/bin/sh\nvllm serve m --max-model-len 4096\n", "serve.sh")
    profile = runtime_profile(vllm_029, plain)
    assert (profile.platform, profile.gpu, profile.compute_capability) == ("cuda", None, None)
    line = int(profile.platform_from.split("(line ")[1].split(":")[0])
    assert vllm_029.read_text("docker/Dockerfile").splitlines()[line - 1].startswith("ARG CUDA_VERSION=")
    assert profile.platform_from.startswith("no GPU named; the release's official container is built by")
    pinned = "[recipe]\nname = \"r\"\nmodel = \"m\"\n[runtime]\nversion = \"0.29.0\"\nimage = \"{}\"\n"
    from srcreview.model.recipe import load_recipe

    for image, platform in (("vllm/vllm-openai:v0.29.0", "cuda"), ("docker.io/vllm/vllm-openai@sha256:" + "a" * 64,
                                                                   "cuda"), ("rocm/vllm:latest", None)):
        (tmp_path / "r.toml").write_text(pinned.format(image))
        assert runtime_profile(vllm_029, load_recipe(tmp_path / "r.toml")).platform == platform, image
    (tmp_path / "tree" / "vllm").mkdir(parents=True)
    (tmp_path / "tree" / "vllm" / "__init__.py").write_text("")
    bare = DirectoryTree(tmp_path / "tree", vllm_029.revision, provider="fixture")
    assert runtime_profile(bare, plain).platform is None


def test_has_triton_is_decided_under_the_profile(vllm_029):
    """Without VLLM_USE_V2_MODEL_RUNNER the runner no longer stops at HAS_TRITON; the anchor of
    the probe names it, and the reason says it rests on the profile."""
    result = review_text(vllm_029, _variant({}), "nov2.toml")
    assert "HAS_TRITON is bound more than once" not in result.runner.reason
    assert "rests on the runtime profile (platform cuda, the release's packages, no plugins): HAS_TRITON" \
        in result.runner.reason
    assert result.runner.value == "v2"  # as with VLLM_USE_V2_MODEL_RUNNER=1: nothing it supports is missing
    probe = [a for a in result.runner.evidence if "runtime profile" in a.role]
    assert probe and probe[0].path == "vllm/triton_utils/importing.py"
    assert "HAS_TRITON" in vllm_029.read_text(probe[0].path).splitlines()[probe[0].start_line - 1]
    assert result.profile is not None and result.profile.platform == "cuda"


def test_a_package_the_recipe_removes_reopens_the_probe(vllm_029):
    """Triton absent alone leaves `find_spec("pytorch-triton-xpu")` open, so HAS_TRITON is open;
    with that one absent too HAS_TRITON is False and vLLM falls back to the V1 runner."""
    result = review_text(vllm_029, _variant({}, "packages = { triton = false }"), "notriton.toml")
    assert result.runner.value is None and "HAS_TRITON is bound more than once" in result.runner.reason
    assert any(not p.installed and p.name == "triton" for p in result.profile.packages)
    result = review_text(vllm_029, _variant({}, 'packages = { triton = false, "pytorch-triton-xpu" = false }'),
                         "notriton2.toml")
    assert result.runner.value == "v1"
    assert "not HAS_TRITON -> True" in result.runner.reason
    assert any(not p.installed and p.name == "triton" for p in result.profile.packages)


def test_env_vars_are_knob_rows(vllm_029):
    result = review_text(vllm_029, _variant({"VLLM_USE_V2_MODEL_RUNNER": "1", "VLLM_ATTENTION_BACKEND": "FLASHINFER",
                                             "VLLM_COMPILE_CACHE_SAVE_FORMAT": "nope", "CUDA_VISIBLE_DEVICES": "0"}),
                         "env.toml")
    rows = {k.key: k for k in result.knobs if k.key.startswith("env.")}
    assert set(rows) == {"env.VLLM_USE_V2_MODEL_RUNNER", "env.VLLM_ATTENTION_BACKEND",
                         "env.VLLM_COMPILE_CACHE_SAVE_FORMAT"}
    assert rows["env.VLLM_USE_V2_MODEL_RUNNER"].status == "accepted"
    assert "parsed as True" in rows["env.VLLM_USE_V2_MODEL_RUNNER"].note
    assert rows["env.VLLM_ATTENTION_BACKEND"].status == "unknown-knob"
    assert rows["env.VLLM_COMPILE_CACHE_SAVE_FORMAT"].status == "invalid-value"
    for row in rows.values():
        for anchor in row.evidence:
            assert anchor.path == "vllm/envs.py"
            lines = vllm_029.read_text(anchor.path).splitlines()[anchor.start_line - 1:anchor.end_line]
            assert any((anchor.symbol.split(".")[-1] or "Unknown vLLM environment variable") in line for line in lines)


def test_gpu_flag_and_platform_table(vllm_029, cli, tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text(_variant({}, 'platform = "rocm"'), encoding="utf-8")
    result = cli("check", str(recipe), "--rev", "0.29.0", "--model-config", "off", "--format", "concise")
    assert "platform rocm (the recipe's [runtime] platform)" in result.out
    recipe.write_text(_variant({}), encoding="utf-8")
    result = cli("check", str(recipe), "--rev", "0.29.0", "--model-config", "off", "--format", "concise",
                 "--gpu", "Some Accelerator")
    assert "runtime profile: platform open (Some Accelerator: vendor not recognised)" in result.out
    recipe.write_text(_variant({}, 'platform = "nvidia"'), encoding="utf-8")
    result = cli("check", str(recipe), "--rev", "0.29.0")
    assert result.code == 65 and "is not a platform" in result.err


def test_a_variable_named_outside_envs_is_not_unknown(vllm_029):
    """A VLLM_ name envs.py lacks but another file names (read through os.environ) stays undecided."""
    from real_reviews import index_for

    name = "VLLM_USE_V2_MODEL_RUNNER"  # defined in envs.py; find one that is not, named elsewhere
    index = index_for(vllm_029)
    envs = index.module("vllm.envs")
    table = {k.value for k in envs.constants["environment_variables"].expr.keys if hasattr(k, "value")}
    import re

    candidates = sorted({m for path in index.grep("\"VLLM_") if path != envs.path
                         for m in re.findall(r'"(VLLM_[A-Z0-9_]+)"', vllm_029.read_text(path))} - table)
    assert name in table and candidates
    result = review_text(vllm_029, _variant({candidates[0]: "1"}), "elsewhere.toml")
    (row,) = [k for k in result.knobs if k.key == f"env.{candidates[0]}"]
    assert row.status == "undecided" and "what reads it is not modelled" in row.note
