"""Call graph, reachability and field reads on one hand-written tree per pattern.

Expected lines come from `# mark: label` comments in the fixture files, so each expectation
sits beside the code it describes and is computed independently of the analysis.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from srcreview.core.errors import DataError
from srcreview.index import Index
from srcreview.interp import field_reads, model_runner, render_trace, trace
from srcreview.interp.interpreter import Analyzer
from srcreview.model.revision import Revision
from srcreview.source.base import DirectoryTree
from srcreview.vllm import drafting

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures" / "vllm_snippets"
SHA = "1234567890abcdef1234567890abcdef12345678"
URL = f"https://github.com/vllm-project/vllm/blob/{SHA}"


def index_of(name: str) -> Index:
    return Index(DirectoryTree(FIXTURES / name, Revision(requested="fixture", sha=SHA)))


def mark(name: str, path: str, label: str) -> int:
    lines = (FIXTURES / name / path).read_text().splitlines()
    found = [n for n, line in enumerate(lines, 1) if line.rstrip().endswith(f"# mark: {label}")]
    assert len(found) == 1, (path, label, found)
    return found[0]


def hops(t):
    return [[(h.symbol, h.call_line, h.via) for h in path] for path in t.paths]


def test_aliasing_reads_and_sink_through_an_aliased_import():
    name, path = "aliasing", "vllm/spec/loader.py"
    index = index_of(name)
    t = trace(index, "Drafter.load", {}, sink="get_model")
    assert t.found_sink
    assert hops(t) == [[("vllm.spec.loader.Drafter.load", None, "entry"),
                        ("vllm.loader.get_model", mark(name, path, "call-sink"), "call")]]
    sink_hop = t.paths[0][1]
    assert sink_hop.anchor.url == f"{URL}/vllm/loader.py#L4-L5"
    assert sink_hop.call_anchor.url == f"{URL}/{path}#L{mark(name, path, 'call-sink')}"
    assert t.functions == ("vllm.spec.loader.Drafter.load",)

    dtype = field_reads(index, t, "SpeculativeConfig.kv_cache_dtype")
    assert [(r.kind, r.line, r.text) for r in dtype.reads] == [
        ("alias", mark(name, path, "read-alias"), "cfg.kv_cache_dtype")]
    assert dtype.reads[0].anchor.url == f"{URL}/{path}#L{mark(name, path, 'read-alias')}"
    method = field_reads(index, t, "SpeculativeConfig.method")
    assert [(r.kind, r.line) for r in method.reads] == [("direct", mark(name, path, "read-direct"))]
    backend = field_reads(index, t, "SpeculativeConfig.attention_backend")
    assert backend.reads == () and backend.dynamic == () and backend.exists
    assert not field_reads(index, t, "SpeculativeConfig.no_such_field").exists


def test_relative_imports_and_imports_inside_functions_resolve():
    name, path = "relative_imports", "vllm/spec/entry.py"
    t = trace(index_of(name), "run", {}, max_depth=1)
    assert sorted((h[1][0], h[1][1]) for h in hops(t)) == sorted([
        ("vllm.spec.helpers.prepare", mark(name, path, "call-prep")),
        ("vllm.spec.helpers.finish", mark(name, path, "call-finish")),
        ("vllm.spec.late.late_step", mark(name, path, "call-late")),
        ("vllm.loader.get_model", mark(name, path, "call-sink")),
    ])
    assert t.unresolved == ()


def test_mro_overrides_and_super():
    name = "mro_overrides"
    base = "vllm/spec/base.py"
    t = trace(index_of(name), "MTPProposer.load_model", {}, sink="get_model")
    # load_model is inherited: self.load_draft_model() dispatches on the receiver's class
    assert hops(t) == [[("vllm.spec.base.BaseProposer.load_model", None, "entry"),
                        ("vllm.spec.mtp.MTPProposer.load_draft_model", mark(name, base, "call-virtual"), "call"),
                        ("vllm.loader.get_model", mark(name, "vllm/spec/mtp.py", "call-sink"), "call")]]
    tree = trace(index_of(name), "MTPProposer.load_model", {}, max_depth=2)
    assert [("vllm.spec.base.BaseProposer.load_model", None, "entry"),
            ("vllm.spec.base.DraftProposer.post_load", mark(name, base, "call-post"), "call"),
            ("vllm.spec.base.BaseProposer.post_load", mark(name, base, "call-super"), "super")] in hops(tree)


def test_property_and_env_table_decide_the_runner():
    name, path = "properties", "vllm/config/vllm.py"
    index = index_of(name)
    v2 = model_runner(index, {"env.VLLM_USE_V2_MODEL_RUNNER": "1"})
    assert v2.value == "v2"
    assert f"{URL}/{path}#L{mark(name, path, 'return-env')}" in [a.url for a in v2.evidence]
    assert model_runner(index, {"env.VLLM_USE_V2_MODEL_RUNNER": "0"}).value == "v1"
    # env unset: the unsupported-features gate decides from the recipe
    unset = model_runner(index, {"speculative_config.method": "mtp"})
    assert unset.value == "v2" and "VLLM_USE_V2_MODEL_RUNNER" in unset.reason
    gated = model_runner(index, {"speculative_config.method": "draft_model"})
    assert gated.value == "v1"
    assert f"{URL}/{path}#L{mark(name, path, 'return-unsupported')}" in [a.url for a in gated.evidence]
    # nothing bound: undecided, and it says on what
    open_ = model_runner(index, {})
    assert open_.value is None
    assert sorted((a.anchor.start_line, a.text) for a in open_.assumptions) == [
        (mark(name, path, "env-read"), "env VLLM_USE_V2_MODEL_RUNNER unset"),
        (mark(name, path, "unsupported-branch"), "self._unsupported_features()"),
    ]

    worker = "vllm/worker.py"
    t = trace(index, "make_runner", {"env.VLLM_USE_V2_MODEL_RUNNER": "1"}, max_depth=1)
    assert sorted(h[1][:3] for h in hops(t)) == sorted([
        ("vllm.config.vllm.VllmConfig.use_v2_model_runner", mark(name, worker, "runner-branch"), "property"),
        ("vllm.worker.build_v2", mark(name, worker, "call-v2"), "call"),
    ])
    both = trace(index, "make_runner", {}, max_depth=1)
    assert {h[1][0] for h in hops(both)} >= {"vllm.worker.build_v1", "vllm.worker.build_v2"}
    assert [(a.anchor.path, a.anchor.start_line, a.text) for a in both.assumptions] == [
        (path, mark(name, path, "env-read"), "env VLLM_USE_V2_MODEL_RUNNER unset"),
        (path, mark(name, path, "unsupported-branch"), "self._unsupported_features()"),
        (worker, mark(name, worker, "runner-branch"), "env VLLM_USE_V2_MODEL_RUNNER unset"),
        (worker, mark(name, worker, "runner-branch"), "vllm_config.use_v2_model_runner")]


def test_dispatch_on_a_config_value():
    name, path = "config_dispatch", "vllm/spec/__init__.py"
    index = index_of(name)

    def returned(method):
        classes, opaque = drafting.returned_classes(Analyzer(index, {"speculative_config.method": method}),
                                                    "init_speculator")
        assert opaque == []
        return classes

    mtp = returned("mtp")
    assert [c.cls for c in mtp] == ["vllm.spec.special.SpecialSpeculator", "vllm.spec.mtp.MTPSpeculator"]
    special, plain = mtp
    # MTP is returned when the model-dependent branch is not taken; the anchor is its return
    assert [(a.text, a.taken, a.anchor.start_line) for a in plain.conditions] == [
        ("spec.is_special_mtp()", False, mark(name, path, "branch-special"))]
    assert "MTPSpeculator(" in (FIXTURES / name / path).read_text().splitlines()[plain.site.start_line - 1]
    assert "draft_hf_config" in special.conditions[0].reason
    eagle = returned("eagle")
    assert [c.cls for c in eagle] == ["vllm.spec.eagle.EagleSpeculator"] and eagle[0].conditions == ()
    assert returned("draft_model") == []  # only the raise is reached


def test_getattr_over_a_constant_table():
    name, path = "getattr_table", "vllm/spec/overrides.py"
    index = index_of(name)
    dtype = field_reads(index, ["apply_overrides"], "SpeculativeConfig.kv_cache_dtype")
    assert [(r.kind, r.line) for r in dtype.reads] == [("getattr-table", mark(name, path, "getattr-table"))]
    assert dtype.dynamic == ()
    counts = field_reads(index, ["apply_overrides"], "SpeculativeConfig.num_speculative_tokens")
    assert [(r.kind, r.line) for r in counts.reads] == [
        ("getattr-literal", mark(name, path, "getattr-literal")), ("getattr-table", mark(name, path, "getattr-comp"))]
    backend = field_reads(index, ["apply_overrides"], "SpeculativeConfig.attention_backend")
    assert backend.reads == () and backend.dynamic == ()


@pytest.mark.parametrize("function, kind, label", [
    ("read_named", "dynamic-getattr", "dynamic-getattr"),
    ("forward", "kwargs-forward", "kwargs-forward"),
    ("dump", "dunder-dict", "dunder"),
    ("hand_off", "unresolved-call", "unresolved"),
])
def test_unresolvable_dynamic_access_is_reported(function, kind, label):
    name, path = "dynamic_access", "vllm/spec/dynamic.py"
    result = field_reads(index_of(name), [function], "SpeculativeConfig.attention_backend")
    assert result.reads == ()
    assert [(d.kind, d.anchor.start_line) for d in result.dynamic] == [(kind, mark(name, path, label))]


def test_a_typed_read_of_another_field_is_not_dynamic():
    name, path = "dynamic_access", "vllm/spec/dynamic.py"
    index = index_of(name)
    result = field_reads(index, ["untouched"], "SpeculativeConfig.attention_backend")
    assert result.reads == () and result.dynamic == ()
    dtype = field_reads(index, ["untouched"], "SpeculativeConfig.kv_cache_dtype")
    assert [(r.kind, r.line) for r in dtype.reads] == [("direct", mark(name, path, "typed-read"))]


def test_a_helper_two_calls_deep():
    name = "helper_two_deep"
    index = index_of(name)
    t = trace(index, "load_draft", {}, sink="get_model")
    assert hops(t) == [[("vllm.spec.drafter.load_draft", None, "entry"),
                        ("vllm.loader.get_model", mark(name, "vllm/spec/drafter.py", "call-sink"), "call")]]
    on_path = field_reads(index, t, "SpeculativeConfig.attention_backend", helpers=False)
    assert on_path.reads == () and on_path.functions == ("vllm.spec.drafter.load_draft",)
    deep = field_reads(index, t, "SpeculativeConfig.attention_backend")  # helpers are followed by default
    assert [(r.function, r.kind, r.line) for r in deep.reads] == [
        ("vllm.spec.util._apply_backend", "alias", mark(name, "vllm/spec/util.py", "read-backend"))]
    assert deep.functions == ("vllm.spec.drafter.load_draft", "vllm.spec.util.prepare_draft_config",
                              "vllm.spec.util._apply_backend")


def test_unknown_entry_is_a_data_error():
    with pytest.raises(DataError, match="no such function"):
        trace(index_of("aliasing"), "Nope.nothing", {})


@pytest.mark.parametrize("fmt", ["text", "dot", "json"])
def test_rendering_is_deterministic_and_carries_anchors(fmt):
    first = render_trace(trace(index_of("mro_overrides"), "MTPProposer.load_model", {}, sink="get_model"), fmt)
    second = render_trace(trace(index_of("mro_overrides"), "MTPProposer.load_model", {}, sink="get_model"), fmt)
    assert first == second
    assert f"{URL}/vllm/spec/mtp.py#L" in first
    assert "/tmp" not in first and str(FIXTURES) not in first


def test_classmethods_see_the_class_they_are_called_through():
    from srcreview.interp import evaluate_function

    name, path = "mro_overrides", "vllm/spec/backends.py"
    index = index_of(name)
    inherited = evaluate_function(index, "TritonBackend.supports_kv_cache_dtype", {}, {"kv_cache_dtype": "fp8_per_token_head"})
    assert (inherited.value, inherited.decided) == (True, True)
    assert [a.start_line for a in inherited.returns] == [mark(name, path, "member-check")]
    base = evaluate_function(index, "Backend.supports_kv_cache_dtype", {}, {"kv_cache_dtype": "fp8_per_token_head"})
    assert (base.value, base.decided) == (False, True)
    assert index.class_info("TritonBackend").constants["supported_kv_cache_dtypes"] == ["auto", "fp8", "fp8_per_token_head"]


@pytest.mark.parametrize("capability, value, raises", [((8, 0), True, False), ((7, 5), False, False)])
def test_capability_gate_evaluated_for_the_recipe_gpu(capability, value, raises):
    from srcreview.interp import evaluate_function

    outcome = evaluate_function(index_of("mro_overrides"), "Backend.supports_compute_capability",
                                {"hardware.compute_capability": capability}, {"capability": capability})
    assert (outcome.value, outcome.decided, bool(outcome.raises)) == (value, True, raises)


def test_capability_gate_that_raises_on_new_architectures():
    from srcreview.interp import evaluate_function

    name, path = "mro_overrides", "vllm/spec/backends.py"
    index = index_of(name)
    sm120 = evaluate_function(index, "TritonBackend.supports_compute_capability", {}, {"capability": (12, 0)})
    assert sm120.decided is False and sm120.returns == ()
    assert [s.anchor.start_line for s in sm120.raises] == [mark(name, path, "raise-new-arch")]
    sm90 = evaluate_function(index, "TritonBackend.supports_compute_capability", {}, {"capability": (9, 0)})
    assert (sm90.value, sm90.decided, sm90.raises) == (True, True, ())
    unknown = evaluate_function(index, "TritonBackend.supports_compute_capability", {})
    assert unknown.decided is False and len(unknown.raises) == 1 and len(unknown.assumptions) == 1


def test_constructor_calls_lead_to_init_on_the_feasible_branch_only():
    name, path = "config_dispatch", "vllm/spec/__init__.py"
    t = trace(index_of(name), "init_speculator", {"speculative_config.method": "eagle"}, max_depth=1)
    assert sorted(h[1] for h in hops(t)) == [
        ("vllm.spec.eagle.EagleSpeculator.__init__", mark(name, path, "return-eagle"), "init")]
    assert t.assumptions == ()
    open_ = trace(index_of(name), "init_speculator", {}, max_depth=1)
    assert sorted(h[1][0] for h in hops(open_) if len(h) > 1 and h[1][2] == "init") == [
        "vllm.spec.eagle.EagleSpeculator.__init__", "vllm.spec.mtp.MTPSpeculator.__init__",
        "vllm.spec.special.SpecialSpeculator.__init__"]
    assert [a.anchor.start_line for a in open_.assumptions] == [
        mark(name, path, "branch-eagle"), mark(name, path, "branch-special"), mark(name, path, "branch-mtp")]


@pytest.mark.parametrize("function, label, kind", [
    ("closure", "closure-read", "untyped-read"),  # a free variable of the closure: type unknown there
    ("by_key", "lambda-read", "untyped-read"),
    ("by_match", "match-read", None),
])
def test_reads_in_closures_lambdas_and_match_cases_are_never_missed(function, label, kind):
    name, path = "dynamic_access", "vllm/spec/dynamic.py"
    result = field_reads(index_of(name), [function], "SpeculativeConfig.attention_backend")
    if kind is None:
        assert [(r.kind, r.line) for r in result.reads] == [("direct", mark(name, path, label))]
    else:
        assert result.reads == ()
        assert [(d.kind, d.anchor.start_line) for d in result.dynamic] == [(kind, mark(name, path, label))]


def test_values_typed_by_a_declared_return_type():
    name, path = "aliasing", "vllm/spec/loader.py"
    index = index_of(name)
    typed = field_reads(index, ["current_backend"], "SpeculativeConfig.attention_backend")
    assert [(r.kind, r.line) for r in typed.reads] == [("alias", mark(name, path, "read-through-return-type"))]
    assert typed.dynamic == ()
    untyped = field_reads(index, ["opaque_backend"], "SpeculativeConfig.attention_backend")
    assert untyped.reads == ()
    assert [(d.kind, d.anchor.start_line) for d in untyped.dynamic] == [("untyped-read", mark(name, path, "read-untyped"))]


def test_none_placeholders_do_not_hide_the_assigned_type_nor_a_call():
    name, path = "mro_overrides", "vllm/spec/runner.py"
    t = trace(index_of(name), "Runner.load", {}, sink="get_model")
    assert hops(t) == [[("vllm.spec.runner.Runner.load", None, "entry"),
                        ("vllm.spec.base.BaseProposer.load_model", mark(name, path, "call-placeholder-typed"), "call"),
                        ("vllm.spec.mtp.MTPProposer.load_draft_model", mark(name, "vllm/spec/base.py", "call-virtual"), "call"),
                        ("vllm.loader.get_model", mark(name, "vllm/spec/mtp.py", "call-sink"), "call")]]
    assert [(u.kind, u.anchor.start_line) for u in t.unresolved] == [("unresolved-call", mark(name, path, "call-on-none"))]


def test_a_call_into_an_abstract_method_is_reported_as_virtual():
    name = "mro_overrides"
    t = trace(index_of(name), "BaseProposer.load_model", {}, max_depth=1)
    virtual = [u for u in t.unresolved if u.kind == "virtual-call"]
    assert [(u.function, u.anchor.start_line) for u in virtual] == [
        ("vllm.spec.base.BaseProposer.load_model", mark(name, "vllm/spec/base.py", "call-virtual"))]


def test_isinstance_narrows_the_receiver():
    name, path = "mro_overrides", "vllm/spec/runner.py"
    t = trace(index_of(name), "Runner.maybe_load", {}, max_depth=1)
    assert [h[1] for h in hops(t) if len(h) > 1] == [
        ("vllm.spec.base.BaseProposer.load_model", mark(name, path, "call-narrowed"), "call")]


def test_falling_off_the_end_returns_none():
    from srcreview.interp import evaluate_function

    index = index_of("mro_overrides")
    open_ = evaluate_function(index, "maybe_true", {})
    assert open_.decided is False and len(open_.returns) == 2
    assert evaluate_function(index, "maybe_true", {}, {"flag": 1}).value is True
    closed = evaluate_function(index, "maybe_true", {}, {"flag": 0})
    assert (closed.value, closed.decided) == (None, True)


def test_platform_and_capability_family_are_recipe_bindings():
    """current_platform.is_cuda() and is_device_capability_family() are answered by the core
    evaluator from `hardware.platform` / `hardware.compute_capability`, nothing else."""
    from srcreview.interp import evaluate_function

    index = Index(DirectoryTree(FIXTURES / "rules_spec_decode", Revision(requested="fixture", sha=SHA)))
    path = "vllm/v1/attention/backends/triton_attn.py"
    gate = "TritonAttentionImpl.__init__"
    old = evaluate_function(index, gate, {"hardware.compute_capability": (8, 0), "hardware.platform": "cuda"},
                            {"kv_cache_dtype": "fp8"})
    assert old.platform and [s.anchor.path for s in old.certain_raises] == [path]
    assert "FP8" in old.certain_raises[0].text
    new = evaluate_function(index, gate, {"hardware.compute_capability": (12, 0), "hardware.platform": "cuda"},
                            {"kv_cache_dtype": "fp8"})
    assert not any("FP8" in s.text for s in new.raises)
    vendor_unknown = evaluate_function(index, gate, {"hardware.compute_capability": (8, 0)}, {"kv_cache_dtype": "fp8"})
    assert not vendor_unknown.platform and not any("FP8" in s.text for s in vendor_unknown.certain_raises)
    family = {cap: evaluate_function(index, "flash_attn_supports_kv_cache_dtype",
                                     {"hardware.compute_capability": cap, "hardware.platform": "cuda"},
                                     {"kv_cache_dtype": "fp8"}) for cap in ((12, 0), (9, 0))}
    assert (family[(12, 0)].value, family[(12, 0)].decided) == (False, True)  # 12.x is in neither FP8 family
    assert family[(9, 0)].decided is False  # 9.x: depends on the flash-attn version, known only at run time
