"""Command-line flags mapped by the real EngineArgs of vLLM 0.29.0 and 0.33.0, and the compose
file that must review exactly like the TOML recipe it restates (issue 15's done-when case).
0.33.0 is a `releases` test (`pytest -m releases`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from srcreview.index import Index
from srcreview.model.recipe import read_recipes
from srcreview.vllm.flags import at_revision

ROOT = Path(__file__).resolve().parent.parent.parent
NESTED = ROOT / "examples" / "thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml"
pytestmark = pytest.mark.network

SCRIPT = """\
#!/bin/sh
vllm serve Qwen/Qwen3-8B -tp 2 --max-model-len 16384 --gpu-memory-utilization 0.9 \\
  --enforce-eager --no-enable-prefix-caching --kv-cache-dtype=fp8 \\
  --speculative-config '{"method": "mtp", "num_speculative_tokens": 3}' \\
  --speculative-config.attention_backend TRITON_ATTN \\
  --cudagraph-capture-sizes 1 2 4 --host 0.0.0.0 --port 8000 --max-modle-len 5
"""


@pytest.mark.parametrize("version", ["0.29.0", pytest.param("0.33.0", marks=pytest.mark.releases)])
def test_flags_map_through_the_revisions_engine_args(vllm_release, version, tmp_path):
    index = Index(vllm_release(version), cache_dir=tmp_path / "facts")
    (recipe,) = read_recipes(SCRIPT, "serve.sh")
    mapped = at_revision(recipe, index)
    got = {s.key: (s.value, s.line, s.written_as) for s in mapped.settings}
    assert got["tensor_parallel_size"] == (2, 2, "-tp")
    assert got["max_model_len"] == (16384, 2, "--max-model-len")
    assert got["gpu_memory_utilization"] == (0.9, 2, "--gpu-memory-utilization")
    assert got["enforce_eager"] == (True, 3, "--enforce-eager")
    assert got["enable_prefix_caching"] == (False, 3, "--no-enable-prefix-caching")
    assert got["kv_cache_dtype"] == ("fp8", 3, "--kv-cache-dtype")
    # the dotted argument replaces the JSON of line 4: vLLM's parse_args appends the dotted keys as one
    # `--speculative-config <json>` after the command line and argparse keeps the last (changed on
    # purpose in issue 24: they were merged before)
    assert "speculative_config.method" not in got and "speculative_config.num_speculative_tokens" not in got
    assert got["speculative_config.attention_backend"] == ("TRITON_ATTN", 5, "--speculative-config.attention_backend")
    assert [(n.what, n.line) for n in mapped.notes] == [("--speculative-config", 4)]
    assert got["cudagraph_capture_sizes"] == ([1, 2, 4], 6, "--cudagraph-capture-sizes")
    assert got["max_modle_len"] == (5, 6, "--max-modle-len")  # not registered: the unknown-knob rule's case
    assert [(o.flag, o.value) for o in mapped.server_options] == [("--host", "0.0.0.0"), ("--port", "8000")]
    assert mapped.info.model == "Qwen/Qwen3-8B" and mapped.flags == ()


def test_unknown_flag_is_an_unknown_knob_with_did_you_mean_on_its_line(vllm_029, tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "serve.sh").write_text("#!/bin/sh\n# srcreview: version=0.29.0\n"
                                       "vllm serve m \\\n  --max-model-len 8192 \\\n  --max-modle-len 5\n")
    result = cli("check", "serve.sh", "--format", "json", "--fail-on", "none")
    assert result.code == 0, result.err
    (review,) = json.loads(result.out)["reviews"]
    knobs = {k["key"]: (k["status"], k["recipe_line"]) for k in review["knobs"]}
    # max_model_len: ModelConfig checks it against the model's length, unknown here (issue 23)
    assert knobs == {"max_model_len": ("undecided", 4), "max_modle_len": ("unknown-knob", 5),
                     "attention_backend": ("undecided", None)}  # unset: the platform's choice, open
    finding = next(f for f in review["findings"] if f["rule"] == "engine-key-exists")
    assert finding["recipe_line"] == 5 and "did you mean max_model_len?" in finding["message"]
    assert finding["trace"][0]["text"] == "--max-modle-len = 5"


def _compose(tmp_path: Path) -> Path:
    """The nested-Triton MTP recipe as a compose service on the 0.29.0 image (no srcreview TOML)."""
    path = tmp_path / "docker-compose.yml"
    path.write_text(
        "# srcreview: gpu='NVIDIA GeForce RTX 5090' compute_capability=12.0\n"                 # 1
        "services:\n"                                                                          # 2
        "  thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton:\n"                             # 3
        "    image: vllm/vllm-openai:v0.29.0\n"                                                # 4
        "    environment:\n"                                                                   # 5
        "      VLLM_USE_V2_MODEL_RUNNER: \"1\"\n"                                              # 6
        "    command:\n"                                                                       # 7
        "      - bottlecapai/ThinkingCap-Qwen3.8-27B-NVFP4A4-AWQ\n"                            # 8
        "      - --max-model-len=16384\n"                                                      # 9
        "      - --max-num-seqs=1\n"                                                           # 10
        "      - --kv-cache-dtype=auto\n"                                                      # 11
        "      - --speculative-config\n"                                                       # 12
        "      - '{\"method\": \"mtp\", \"num_speculative_tokens\": 3, \"attention_backend\": \"TRITON_ATTN\"}'\n"
        "  redis:\n"                                                                           # 14
        "    image: redis:7\n")                                                                # 15
    return path


def _meaning(review: dict) -> dict:
    """What must not depend on the recipe's format: knob statuses and values, and every finding."""
    knobs = [(k["key"], k["scope"], k["status"], k["value"], k["evidence"], k["tags"]) for k in review["knobs"]]
    findings = [(f["rule"], f["classification"], f["severity"], f["knobs"], f["message"], f["fingerprint"],
                 f["evidence"], f["tags"], [h for h in f["trace"] if h["kind"] != "recipe"])
                for f in review["findings"]]
    return {"knobs": knobs, "findings": findings, "runner": review["runner"], "revision": review["revision"]["sha"],
            "stale": review["stale_rules"], "incomplete": review["incomplete"]}


def test_compose_service_reviews_like_the_toml_recipe_anchored_on_compose_lines(vllm_029, tmp_path, cli,
                                                                                monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(NESTED, tmp_path / "nested.toml")
    compose = _compose(tmp_path)
    toml_run = cli("check", "nested.toml", "--format", "json")
    compose_run = cli("check", compose.name, "--format", "json", "--sarif", "out.sarif")  # no --rev: the image pins
    assert (toml_run.code, compose_run.code) == (1, 1), compose_run.err
    (toml_review,), (compose_review,) = json.loads(toml_run.out)["reviews"], json.loads(compose_run.out)["reviews"]
    assert compose_review["recipe"]["path"] == "docker-compose.yml#thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton"
    assert compose_review["revision"]["recipe_pin"] == "0.29.0" and compose_review["revision"]["release_from"] == "pins"
    assert _meaning(compose_review) == _meaning(toml_review)
    lines = {k["key"]: k["recipe_line"] for k in compose_review["knobs"]}
    assert lines == {"attention_backend": None, "kv_cache_dtype": 11, "max_model_len": 9, "max_num_seqs": 10, "speculative_config.method": 12,
                     "speculative_config.num_speculative_tokens": 12, "speculative_config.attention_backend": 12,
                     "env.VLLM_USE_V2_MODEL_RUNNER": 6}  # issue 24: env vars are knob rows, on the compose line
    ignored = next(f for f in compose_review["findings"] if f["rule"] == "spec-draft-attention-backend-ignored")
    assert ignored["classification"] == "confirmed" and ignored["recipe_line"] == 12
    sarif = json.loads((tmp_path / "out.sarif").read_text())
    result = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "spec-draft-attention-backend-ignored")
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "docker-compose.yml" and location["region"]["startLine"] == 12


def test_entries_of_mapping_fields_and_keys_nested_two_levels_are_decided(vllm_029, tmp_path, cli, monkeypatch):
    """`limit_mm_per_prompt` and `media_io_kwargs` are mappings: a key below them is an entry, its
    value checked against the item type; `compilation_config.pass_config.x` is a field of
    PassConfig, two levels down, and a name PassConfig lacks is an unknown knob."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "serve.sh").write_text(
        "#!/bin/sh\n# srcreview: version=0.29.0\nvllm serve m --limit-mm-per-prompt '{\"image\": 2}' \\\n"
        "  --media-io-kwargs '{\"video\": {\"fps\": 2}}' \\\n"
        "  --compilation-config '{\"pass_config\": {\"fuse_nothing_at_all\": true}}'\n")
    result = cli("check", "serve.sh", "--format", "json", "--fail-on", "none", "--model-config", "off")
    rows = {k["key"]: k["status"] for k in json.loads(result.out)["reviews"][0]["knobs"]}
    assert rows["limit_mm_per_prompt.image"] == "accepted" and rows["media_io_kwargs.video.fps"] == "accepted"
    assert rows["compilation_config.pass_config.fuse_nothing_at_all"] == "unknown-knob"
