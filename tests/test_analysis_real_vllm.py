"""The analysis core on the real vLLM source, fetched by the project's own registry provider.

0.29.0 (98dff2a) is the release of the case srcreview exists for: the V2 MTP draft loader
applies speculative_config.kv_cache_dtype and never reads speculative_config.attention_backend.
The same questions, unchanged, are then asked of every other pinned release from 0.25 on.
"""

from __future__ import annotations

import pytest

from srcreview.interp import field_reads, model_runner, resolve_dispatch, trace
from srcreview.index import Index
from srcreview.revision import load_pins, parse_version

pytestmark = pytest.mark.network

SHA = "98dff2a81d747d1dba01a47f939f48c3526d4206"
BLOB = f"https://github.com/vllm-project/vllm/blob/{SHA}"
MTP = {"speculative_config.method": "mtp", "speculative_config.num_speculative_tokens": 3,
       "hardware.compute_capability": (12, 0)}
EAGLE_UTILS = "vllm/v1/worker/gpu/spec_decode/eagle/utils.py"


@pytest.fixture(scope="module")
def index(vllm_029):
    return Index(vllm_029)


def source_line(tree, path: str, line: int) -> str:
    return tree.read_text(path).splitlines()[line - 1]


def test_v2_speculator_dispatch_selects_mtp(index):
    result = resolve_dispatch(index, "init_speculator", MTP)
    assert result.function == "vllm.v1.worker.gpu.spec_decode.init_speculator"
    assert [c.symbol for c in result.chosen] == ["vllm.v1.worker.gpu.spec_decode.mtp.speculator.MTPSpeculator"]
    assert result.chosen[0].anchor.url.startswith(f"{BLOB}/vllm/v1/worker/gpu/spec_decode/mtp/speculator.py#L12-")
    # the candidates whose selection depends on the draft model's architecture stay open, named
    assert [c.symbol.rsplit(".", 1)[1] for c in result.alternatives] == ["Gemma4Speculator", "MultiModuleMTPSpeculator"]
    assumed = {a.text: a for a in result.chosen[0].assumptions}
    assert set(assumed) == {"speculative_config.use_gemma4_mtp()", "speculative_config.use_multi_module_mtp()"}
    assert all(a.taken is False for a in assumed.values())
    assert "draft_model_config" in assumed["speculative_config.use_gemma4_mtp()"].reason
    for a in assumed.values():
        assert a.anchor.path == "vllm/v1/worker/gpu/spec_decode/__init__.py"
        assert a.text in source_line(index.tree, a.anchor.path, a.anchor.start_line)
    assert len(result.candidates) == 8


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
    assert path[2].call_anchor.url == f"{BLOB}/{EAGLE_UTILS}#L51-L53"
    assert "load_eagle_model(" in source_line(index.tree, path[0].path, 20)
    assert "get_model(" in source_line(index.tree, EAGLE_UTILS, 51)
    assert t.functions == ("vllm.v1.worker.gpu.spec_decode.eagle.utils.load_eagle_model",
                           "vllm.v1.worker.gpu.spec_decode.mtp.speculator.MTPSpeculator.load_draft_model")

    dtype = field_reads(index, t, "SpeculativeConfig.kv_cache_dtype")
    assert [(r.anchor.path, r.line, r.kind) for r in dtype.reads] == [(EAGLE_UTILS, 42, "alias"), (EAGLE_UTILS, 47, "alias")]
    for r in dtype.reads:
        assert "speculative_config.kv_cache_dtype" in source_line(index.tree, EAGLE_UTILS, r.line)
    assert dtype.dynamic == ()

    backend = field_reads(index, t, "SpeculativeConfig.attention_backend")
    assert backend.exists and backend.reads == () and backend.dynamic == ()
    assert t.dynamic == ()


def test_v1_proposer_applies_the_nested_backend_in_a_helper(index):
    t = trace(index, "SpecDecodeBaseProposer.load_model", MTP, sink="get_model")
    assert [h.symbol.rsplit(".", 1)[1] for h in t.paths[0]] == ["load_model", "_get_model", "get_model"]
    backend = field_reads(index, t, "SpeculativeConfig.attention_backend")
    proposer = "vllm/v1/spec_decode/llm_base_proposer.py"
    assert [(r.function.rsplit(".", 1)[1], r.anchor.path, r.line) for r in backend.reads] == [
        ("_create_draft_vllm_config", proposer, 1311)]
    assert "backend=spec_cfg.attention_backend" in source_line(index.tree, proposer, 1311)
    # on the hops alone, nothing reads it: the helper is where it is applied
    assert field_reads(index, t, "SpeculativeConfig.attention_backend", helpers=False).reads == ()


@pytest.mark.parametrize("env, expected", [("1", "v2"), ("0", "v1")])
def test_runner_follows_the_env_variable(index, env, expected):
    decision = model_runner(index, {**MTP, "env.VLLM_USE_V2_MODEL_RUNNER": env})
    assert decision.value == expected
    assert decision.evidence[0].url == f"{BLOB}/vllm/config/vllm.py#L645-L677"
    assert f"{BLOB}/vllm/config/vllm.py#L648" in [a.url for a in decision.evidence]


def test_runner_without_the_env_variable_says_what_it_depends_on(index):
    decision = model_runner(index, MTP)
    assert decision.value is None
    texts = [a.text for a in decision.assumptions]
    assert "unsupported" in texts  # the unsupported-features gate stays open for this recipe
    assert "current_platform.is_rocm()" in decision.reason
    assert "VLLM_USE_V2_MODEL_RUNNER" in decision.reason
    for a in decision.assumptions:
        assert a.anchor.path == "vllm/config/vllm.py" and 645 <= a.anchor.start_line <= 677


# the releases whose code the expectations below describe (0.31.0 moved the draft overrides
# into SpeculativeConfig.apply_draft_overrides: its answers need their own expectations)
OTHER_RELEASES = [p.version for p in load_pins()
                  if parse_version("0.25.0") <= parse_version(p.version) <= parse_version("0.30.0")
                  and p.version != "0.29.0"]


@pytest.mark.releases
@pytest.mark.parametrize("version", OTHER_RELEASES)
def test_same_questions_on_other_releases(version):
    from srcreview.revision import resolve_rev
    from srcreview.source.cache import Cache, default_root
    from srcreview.source.obtain import open_source

    root, origin = default_root()
    tree = open_source(resolve_rev(version), provider="registry", cache=Cache(root, origin))
    index = Index(tree, cache_dir=root)  # facts shared between runs; the cache itself is tested elsewhere
    dispatch = resolve_dispatch(index, "init_speculator", MTP)
    assert [c.symbol.rsplit(".", 1)[1] for c in dispatch.chosen] == ["MTPSpeculator"]
    t = trace(index, "MTPSpeculator.load_draft_model", MTP, sink="get_model")
    dtype = field_reads(index, t, "SpeculativeConfig.kv_cache_dtype")
    backend = field_reads(index, t, "SpeculativeConfig.attention_backend")
    assert model_runner(index, {**MTP, "env.VLLM_USE_V2_MODEL_RUNNER": "1"}).value == "v2"
    model_runner(index, MTP)  # answers or says what it depends on; never crashes
    # the answers differ where the code differs
    if parse_version(version) < parse_version("0.26.0"):
        assert not dtype.exists  # SpeculativeConfig had no kv_cache_dtype yet
    else:
        assert dtype.exists and [r.anchor.path for r in dtype.reads] == [EAGLE_UTILS, EAGLE_UTILS]
    if parse_version(version) >= parse_version("0.30.0"):
        assert {r.anchor.path for r in backend.reads} == {EAGLE_UTILS}  # the loader applies it from 0.30.0
    else:
        assert backend.reads == () and backend.dynamic == ()
