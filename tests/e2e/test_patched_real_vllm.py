"""A patch of our own against the real vLLM 0.29.0: `load_eagle_model` applies the nested attention backend.

0.30.0 and later overlay `speculative_config.attention_backend` on the draft's VllmConfig
before `get_model`; 0.29.0 does not. The patch is generated here with difflib from the real
release source (obtained by the registry provider into the user cache), so no vLLM text is
committed: only the lines we add. The nested-Triton example recipe is then reviewed with and
without it through the CLI.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.network

EXAMPLES = Path(__file__).resolve().parent.parent.parent / "examples"
NESTED = EXAMPLES / "thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml"
LOADER = "vllm/v1/worker/gpu/spec_decode/eagle/utils.py"
KNOB = ("speculative_config.attention_backend", "draft")
OURS = [  # inserted before the draft is built, as the cache dtype is just above
    "    if speculative_config.attention_backend is not None:\n",
    "        vllm_config = replace(\n",
    "            vllm_config,\n",
    "            attention_config=replace(\n",
    "                vllm_config.attention_config,\n",
    "                backend=speculative_config.attention_backend,\n",
    "            ),\n",
    "        )\n",
]


def nested_backend_patch(tree) -> str:
    old = tree.read_text(LOADER).splitlines(keepends=True)
    at = next(n for n, line in enumerate(old) if line.strip() == 'with set_model_tag("eagle_head"):')
    new = old[:at] + OURS + old[at:]
    return "".join(difflib.unified_diff(old, new, f"a/{LOADER}", f"b/{LOADER}"))


@pytest.fixture(scope="module")
def reviews(vllm_029, tmp_path_factory):
    """The recipe's review as `check --format json` prints it, without and with the patch."""
    import contextlib
    import io

    from srcreview.cli.main import main

    work = tmp_path_factory.mktemp("patched-029")
    patch = work / "nested-backend.diff"
    patch.write_text(nested_backend_patch(vllm_029))
    out = {}
    for name, extra in (("plain", []), ("patched", ["--patch", str(patch)])):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = main(["check", str(NESTED), "--format", "json", "--fail-on", "none", *extra])
        assert code == 0
        out[name] = json.loads(printed.getvalue())["reviews"][0]
    return out, patch


def knob(review):
    return next(k for k in review["knobs"] if (k["key"], k["scope"]) == KNOB)


def test_without_the_patch_the_draft_backend_is_ignored(reviews):
    data, _ = reviews
    assert knob(data["plain"])["status"] == "ignored"
    assert data["plain"]["patches"] == []


def test_with_the_patch_load_eagle_model_applies_it_with_anchors_into_the_patch(reviews, vllm_029):
    import hashlib

    data, patch = reviews
    review = data["patched"]
    [layer] = review["patches"]
    assert layer["sha256"] == hashlib.sha256(patch.read_bytes()).hexdigest() and layer["touched"] == [LOADER]
    row = knob(review)
    assert row["status"] != "ignored"
    finding = next(f for f in review["findings"] if f["rule"] == "spec-draft-attention-backend-ignored")
    patch_lines = patch.read_text().splitlines()
    reads = [a for a in finding["evidence"] if a.get("origin", {}).get("kind") == "patched"
             and a["role"].startswith("reads SpeculativeConfig.attention_backend")]
    assert reads, finding["evidence"]
    for anchor in reads:
        shown = patch_lines[anchor["origin"]["start_line"] - 1:anchor["origin"]["end_line"]]
        assert shown and all(line.startswith("+") for line in shown) and "attention_backend" in "".join(shown)
        origin = anchor["origin"]
        assert anchor["url"] == f"{patch.name}#L{origin['start_line']}" + (
            f"-L{origin['end_line']}" if origin["end_line"] != origin["start_line"] else "")
    # every speculator whose loader is load_eagle_model now hands the draft the nested backend; the
    # status is `applied` once the engine can tell which speculator the model selects, else
    # `undecided` because Gemma4Speculator (which never calls load_eagle_model) still does not
    if row["status"] == "undecided":
        parts = finding["message"].split("the classes the v2 runner may build disagree: ", 1)[1].rstrip(".")
        outcomes = {part.split(" ", 1)[0]: part.rsplit(" -> ", 1)[1] for part in parts.split("; ")}
        assert outcomes["MTPSpeculator"] == "nested" and outcomes["Gemma4Speculator"] != "nested", outcomes
        assert "Gemma4Speculator (if self.is_last_pp_rank true and speculative_config.use_gemma4_mtp() true)" in parts
    else:
        assert row["status"] == "applied"
    # anchors on unchanged lines of the patched file point at upstream, at upstream's own lines
    from srcreview.source.patched import apply_layers, load_patch

    upstream_lines = vllm_029.read_text(LOADER).splitlines()
    patched_lines = apply_layers(vllm_029, [load_patch(patch, patch.name)]).read_text(LOADER).splitlines()
    on_loader = [a for f in review["findings"] for a in f["evidence"]
                 if a["path"] == LOADER and a.get("origin", {}).get("kind") == "upstream"]
    assert any(a["start_line"] != a["origin"]["start_line"] for a in on_loader)  # shifted by our insertion
    for anchor in on_loader:
        origin = anchor["origin"]
        assert anchor["url"].endswith(f"/{LOADER}#L{origin['start_line']}" + (
            f"-L{origin['end_line']}" if origin["end_line"] != origin["start_line"] else ""))
        assert upstream_lines[origin["start_line"] - 1] == patched_lines[anchor["start_line"] - 1]
        assert upstream_lines[origin["end_line"] - 1] == patched_lines[anchor["end_line"] - 1]


def test_with_the_models_config_the_patched_draft_backend_is_applied(vllm_029, tmp_path):
    """Issue 16's done-when, with issue 12: the recipe's model (served by a Hub on 127.0.0.1 as a
    Qwen3.5-style MTP checkpoint) makes the V2 runner build the MTP speculator, whose loader the
    patch changes: the nested backend is `applied`, read on the patch's own lines."""
    from conftest import srcreview_process
    from hub_support import QWEN35_MTP, hub_env, serve_hub

    patch = tmp_path / "nested-backend.diff"
    patch.write_text(nested_backend_patch(vllm_029))
    model = next(line.split('"')[1] for line in NESTED.read_text().splitlines() if line.startswith("model = "))
    with serve_hub() as hub:
        hub.publish(model, {"config.json": QWEN35_MTP})
        env = hub_env(tmp_path / "hf", hub.endpoint)
        statuses = {}
        for name, extra in (("plain", []), ("patched", ["--patch", str(patch)])):
            process = srcreview_process("check", str(NESTED), "--format", "json", "--fail-on", "none", *extra,
                                        env=env, cwd=tmp_path)
            out, err = process.communicate(timeout=600)
            assert process.returncode == 0, err
            review = json.loads(out)["reviews"][0]
            assert review["models"][0]["source"] == "hub"
            statuses[name] = knob(review)["status"]
    assert statuses == {"plain": "ignored", "patched": "applied"}
