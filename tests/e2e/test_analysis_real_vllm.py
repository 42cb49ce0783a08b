"""The analysis core on the real vLLM source, fetched by the project's own registry provider.

0.29.0 (98dff2a) is the release of the case srcreview exists for: the V2 MTP draft loader
applies speculative_config.kv_cache_dtype and hands get_model the target's attention config;
the V1 proposer applies the nested backend; the n-gram proposer loads no draft model; the V2
runner refuses draft_model. Every other release is asked the same questions in
test_releases_matrix.py (marker `releases`).
"""

from __future__ import annotations

import pytest

from srcreview.index import Index
from srcreview.interp import field_reads, model_runner, trace
from srcreview.interp.interpreter import Analyzer
from srcreview.vllm import drafting
from srcreview.vllm.runtime import config_bindings

pytestmark = pytest.mark.network

SHA = "98dff2a81d747d1dba01a47f939f48c3526d4206"
BLOB = f"https://github.com/vllm-project/vllm/blob/{SHA}"
MTP = {"speculative_config.method": "mtp", "speculative_config.num_speculative_tokens": 3,
       "hardware.compute_capability": (12, 0)}
EAGLE_UTILS = "vllm/v1/worker/gpu/spec_decode/eagle/utils.py"
SINK = "model_loader.get_model"


@pytest.fixture(scope="module")
def index(vllm_029):
    return Index(vllm_029)


def analysis(index, **settings):
    """A fresh analyzer for a recipe's settings, its config construction walked."""
    an = Analyzer(index, config_bindings(index, {**MTP, **settings}, gpu="NVIDIA GeForce RTX 5090"))
    an.prepare()
    return an


def source_line(tree, path: str, line: int) -> str:
    return tree.read_text(path).splitlines()[line - 1]


def test_v2_runner_builds_the_mtp_speculators_the_model_may_select(index):
    an = analysis(index, **{"env.VLLM_USE_V2_MODEL_RUNNER": "1"})
    component = drafting.component(an, "v2")
    assert component.open == () and component.missing == ()
    names = [c.cls.rsplit(".", 1)[1] for c in component.candidates]
    assert names == ["Gemma4Speculator", "MultiModuleMTPSpeculator", "MTPSpeculator"]
    mtp = component.candidates[-1]
    # built through init_speculator's returns: the anchor is the return, the conditions say why
    assert mtp.site.path == "vllm/v1/worker/gpu/spec_decode/__init__.py"
    assert "MTPSpeculator(" in source_line(index.tree, mtp.site.path, mtp.site.start_line)
    open_conditions = {a.text: a.taken for a in mtp.conditions}
    assert open_conditions["speculative_config.use_gemma4_mtp()"] is False
    assert open_conditions["speculative_config.use_multi_module_mtp()"] is False


def test_the_mtp_loader_hands_get_model_the_targets_attention_config(index):
    an = analysis(index, **{"env.VLLM_USE_V2_MODEL_RUNNER": "1", "speculative_config.attention_backend": "TRITON_ATTN"})
    cls = "vllm.v1.worker.gpu.spec_decode.mtp.speculator.MTPSpeculator"
    loading = drafting.draft_loading(an, "v2", cls, SINK)
    assert loading.loads is True
    value = drafting.draft_value(an, loading, "vllm_config", ("attention_config", "backend"), "attention_backend")
    assert value.source == "target"
    assert value.sink_call.url == f"{BLOB}/{EAGLE_UTILS}#L51-L53"
    assert "get_model(" in source_line(index.tree, EAGLE_UTILS, 51)
    kv = drafting.draft_value(an, loading, "vllm_config", ("cache_config", "cache_dtype"), "kv_cache_dtype")
    assert kv.source == "target"  # the nested kv dtype is unset: its declared default None skips the replace


def test_an_explicit_draft_kv_dtype_reaches_the_mtp_draft(index):
    an = analysis(index, **{"env.VLLM_USE_V2_MODEL_RUNNER": "1", "speculative_config.kv_cache_dtype": "fp8"})
    cls = "vllm.v1.worker.gpu.spec_decode.mtp.speculator.MTPSpeculator"
    loading = drafting.draft_loading(an, "v2", cls, SINK)
    kv = drafting.draft_value(an, loading, "vllm_config", ("cache_config", "cache_dtype"), "kv_cache_dtype")
    assert (kv.source, kv.value.value) == ("nested", "fp8")


def test_v1_proposer_applies_the_nested_backend(index):
    an = analysis(index, **{"env.VLLM_USE_V2_MODEL_RUNNER": "0", "speculative_config.method": "eagle",
                            "speculative_config.attention_backend": "TRITON_ATTN"})
    [candidate] = drafting.component(an, "v1").candidates
    assert candidate.cls.rsplit(".", 1)[1] == "EagleProposer"
    loading = drafting.draft_loading(an, "v1", candidate.cls, SINK)
    value = drafting.draft_value(an, loading, "vllm_config", ("attention_config", "backend"), "attention_backend")
    assert value.source == "nested"
    assert [h.symbol.rsplit(".", 1)[1] for h in value.hops] == ["load_model", "_get_model", "get_model"]


def test_the_v1_ngram_proposer_loads_no_draft_model(index):
    an = analysis(index, **{"env.VLLM_USE_V2_MODEL_RUNNER": "0", "speculative_config.method": "ngram"})
    [candidate] = drafting.component(an, "v1").candidates
    assert candidate.cls.rsplit(".", 1)[1] == "NgramProposer"
    assert drafting.draft_loading(an, "v1", candidate.cls, SINK).loads is False


@pytest.mark.parametrize("method, rejected", [("draft_model", False), ("ngram", True), ("mtp", False)])
def test_the_v2_runner_refuses_methods_it_does_not_support(index, method, rejected):
    """ngram is refused for certain; draft_model only if SpeculativeConfig keeps the method, which
    it renames by the draft's config (its architectures), unknown here: the refusal stays open."""
    an = analysis(index, **{"env.VLLM_USE_V2_MODEL_RUNNER": "1", "speculative_config.method": method,
                            "speculative_config.model": "org/draft"})
    rejections = [r for r in an.construction.rejections if r.path == "vllm/config/vllm.py"]
    assert bool(rejections) is rejected
    if method == "draft_model":
        held = [r for r in an.construction.open_raises if r.path == "vllm/config/vllm.py"
                and "_validate_v2_model_runner()" in source_line(index.tree, r.path, r.raise_event.line)]
        assert held and any("speculative_config.method keeps the recipe's value" in c.text
                            for c in held[0].raise_event.conditions)
    if rejected:
        event = rejections[0].raise_event
        assert "_validate_v2_model_runner()" in source_line(index.tree, "vllm/config/vllm.py", event.line)
        qualname, path, line, _, _ = event.chain[0]
        assert qualname.endswith("VllmConfig._validate_v2_model_runner")
        assert "raise ValueError" in source_line(index.tree, path, line)


def test_mtp_draft_loader_path_and_field_reads(index):
    t = trace(index, "MTPSpeculator.load_draft_model", MTP, sink="get_model")
    assert t.found_sink
    [path] = t.paths
    assert [(h.symbol, h.path, h.start_line, h.end_line, h.call_line) for h in path] == [
        ("vllm.v1.worker.gpu.spec_decode.mtp.speculator.MTPSpeculator.load_draft_model",
         "vllm/v1/worker/gpu/spec_decode/mtp/speculator.py", 15, 35, None),
        ("vllm.v1.worker.gpu.spec_decode.eagle.utils.load_eagle_model", EAGLE_UTILS, 36, 114, 20),
        ("vllm.model_executor.model_loader.get_model", "vllm/model_executor/model_loader/__init__.py", 127, 139, 51),
    ]
    assert path[1].call_anchor.url == f"{BLOB}/vllm/v1/worker/gpu/spec_decode/mtp/speculator.py#L20"
    dtype = field_reads(index, t, "SpeculativeConfig.kv_cache_dtype")
    # the test of the override reads it; its body is not taken under the recipe (the nested key is unset)
    assert [(r.anchor.path, r.line, r.kind) for r in dtype.reads] == [(EAGLE_UTILS, 42, "alias")]
    assert "speculative_config.kv_cache_dtype" in source_line(index.tree, EAGLE_UTILS, 42)
    backend = field_reads(index, t, "SpeculativeConfig.attention_backend")
    assert backend.exists and backend.reads == () and backend.dynamic == ()


@pytest.mark.parametrize("env, expected", [("1", "v2"), ("0", "v1")])
def test_runner_follows_the_env_variable(index, env, expected):
    decision = model_runner(index, {**MTP, "env.VLLM_USE_V2_MODEL_RUNNER": env})
    assert decision.value == expected
    assert decision.evidence[0].url == f"{BLOB}/vllm/config/vllm.py#L645-L677"
    assert f"{BLOB}/vllm/config/vllm.py#L648" in [a.url for a in decision.evidence]


def test_runner_without_the_env_variable_says_what_it_depends_on(index):
    decision = model_runner(index, MTP)
    assert decision.value is None
    assert "VLLM_USE_V2_MODEL_RUNNER" in decision.reason
    for a in decision.assumptions:
        assert a.anchor.path == "vllm/config/vllm.py" and 645 <= a.anchor.start_line <= 677
