"""Start-up at real vLLM 0.29.0 (issue 23): what its config construction does with a recipe,
decided from the pinned source. Each case is a class the issue names; anchors are located in the
tree by the text they must point at, never by a line number written here."""

from __future__ import annotations

import json

import pytest
from real_reviews import BF16, review_of, review_text

pytestmark = pytest.mark.network

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 1024,
         "intermediate_size": 2816, "num_attention_heads": 16, "num_key_value_heads": 4, "num_hidden_layers": 2,
         "max_position_embeddings": 4096, "vocab_size": 32000, "rms_norm_eps": 1e-5, "torch_dtype": "bfloat16",
         "rope_theta": 10000.0}
GPU = '[hardware]\ngpu = "NVIDIA GeForce RTX 5090"\ncompute_capability = "12.0"\n'


def _review(tree, tmp_path, engine: str, env: str = "", spec: str = "", gpu: str = GPU):
    """A recipe for a small llama-like model given as a local config.json (the model's config at hand)."""
    from real_reviews import index_for

    from srcreview.engine.run import review
    from srcreview.hfconfig.binding import with_model_configs
    from srcreview.model.recipe import parse_recipe

    (tmp_path / "model").mkdir(exist_ok=True)
    (tmp_path / "model" / "config.json").write_text(json.dumps(LLAMA))
    text = (f'[recipe]\nname = "case"\nmodel = "./model"\n{gpu}[engine]\nskip_tokenizer_init = true\n'
            f'load_format = "dummy"\n{engine}\n{spec}' + (f"[env]\n{env}\n" if env else ""))
    recipe = with_model_configs(parse_recipe(text, "case.toml"), base_dir=tmp_path)
    return review(recipe, tree, index=index_for(tree), source_label="registry")


def _finding(review, rule):
    return next((f for f in review.findings if f.rule == rule), None)


def _knob(review, key, scope="engine"):
    return next((k for k in review.knobs if k.key == key and k.scope == scope), None)


def _line_of(tree, path: str, text: str, after: int = 0) -> int:
    lines = tree.read_text(path).splitlines()
    return next(n for n, line in enumerate(lines, 1) if n > after and text in line)


def test_a_check_on_a_value_the_engine_passes_rejects(vllm_029, tmp_path):
    """SchedulerConfig.__post_init__ gets max_model_len from the builder (an init-only argument):
    with chunked prefill off, fewer batched tokens than the model length is refused."""
    refused = _review(vllm_029, tmp_path, "max_model_len = 2048\nenable_chunked_prefill = false\n"
                                          "max_num_batched_tokens = 2047")
    finding = _finding(refused, "startup-rejected")
    assert finding is not None and finding.classification == "confirmed"
    message = _line_of(vllm_029, "vllm/config/scheduler.py", "smaller than max_model_len")
    assert any(a.path == "vllm/config/scheduler.py" and a.start_line <= message <= a.end_line
               for a in finding.evidence)
    assert refused.startup.verdict == "rejected"
    fits = _review(vllm_029, tmp_path, "max_model_len = 2048\nenable_chunked_prefill = false\n"
                                       "max_num_batched_tokens = 2048")
    kept = _finding(fits, "startup-rejected")
    assert kept is None or kept.classification != "confirmed"


@pytest.mark.parametrize("value", ["-1", '"-1"', '"4096"', "4096.0"])
def test_a_sentinel_or_a_coerced_value_is_not_a_refusal(vllm_029, tmp_path, value):
    """-1 is the model's own length (ModelConfig.__post_init__ replaces it before any check);
    pydantic's lax mode turns "4096" and 4096.0 into 4096."""
    review = _review(vllm_029, tmp_path, f"max_model_len = {value}")
    finding = _finding(review, "startup-rejected")
    assert finding is None or finding.classification != "confirmed"
    assert _knob(review, "max_model_len").status != "invalid-value"
    if value == "-1":
        knob = _knob(review, "max_model_len")
        store = _line_of(vllm_029, "vllm/config/model.py", "self.max_model_len = self.get_and_verify_max_len(")
        assert knob.status == "undecided" and [(a.path, a.start_line) for a in knob.evidence] == [
            ("vllm/config/model.py", store)]


def test_a_value_a_hook_overwrites_is_overridden(vllm_029, tmp_path):
    """enforce_eager: VllmConfig.__post_init__ sets the cudagraph mode to NONE."""
    review = _review(vllm_029, tmp_path, 'max_model_len = 2048\nenforce_eager = true\n'
                                         '[engine.compilation_config]\ncudagraph_mode = "FULL"\n')
    knob = _knob(review, "compilation_config.cudagraph_mode")
    assert knob.status == "overridden" and knob.effective == "CUDAGraphMode.NONE"
    eager = _line_of(vllm_029, "vllm/config/vllm.py", "disable cudagraph when enforce eager execution")
    store = _line_of(vllm_029, "vllm/config/vllm.py", "cudagraph_mode = CUDAGraphMode.NONE", after=eager)
    assert [(a.path, a.start_line) for a in knob.evidence] == [("vllm/config/vllm.py", store)]
    assert _finding(review, "startup-rejected") is None or \
        _finding(review, "startup-rejected").classification != "confirmed"


def test_a_value_a_nested_config_refuses_is_invalid(vllm_029, tmp_path):
    """cpu_offload_gb goes as it is to UVAOffloadConfig, whose Field(ge=0) refuses -1."""
    review = _review(vllm_029, tmp_path, "max_model_len = 2048\ncpu_offload_gb = -1")
    knob = _knob(review, "cpu_offload_gb")
    assert knob.status == "invalid-value"
    field = _line_of(vllm_029, "vllm/config/offload.py", "cpu_offload_gb: float")
    assert any(a.path == "vllm/config/offload.py" and a.start_line == field for a in knob.evidence)
    assert review.startup.verdict == "rejected"
    fine = _review(vllm_029, tmp_path, "max_model_len = 2048\ncpu_offload_gb = 0")
    assert _knob(fine, "cpu_offload_gb").status != "invalid-value"


def test_a_callee_that_raises_by_several_raises_names_each(vllm_029):
    """The V2 runner with n-gram speculation on a GPU whose platform is not known (so neither
    is Triton): `_validate_v2_model_runner` raises on every path, but whether it is "requires
    Triton" is open: both raises are named."""
    text = ('[recipe]\nname = "ng"\nmodel = "Qwen/Qwen3-8B"\n[hardware]\ngpu = "Some Accelerator"\n'
            '[engine]\nmax_model_len = 8192\n'
            '[engine.speculative_config]\nmethod = "ngram"\nnum_speculative_tokens = 3\nprompt_lookup_max = 4\n'
            '[env]\nVLLM_USE_V2_MODEL_RUNNER = "1"\n')
    finding = _finding(review_text(vllm_029, text, "ng.toml"), "startup-rejected")
    assert finding is not None and finding.classification == "confirmed"
    triton = _line_of(vllm_029, "vllm/config/vllm.py", 'raise ValueError("Model Runner V2 requires Triton.")')
    lines = {a.start_line for a in finding.evidence if a.path == "vllm/config/vllm.py"}
    assert triton in lines and any(line > triton for line in lines)
    triton_anchor = next(a for a in finding.evidence if a.start_line == triton)
    assert "if not HAS_TRITON" in triton_anchor.role and "one of" in finding.message


def test_an_open_raise_leaves_the_knobs_it_reads_undecided(vllm_029):
    """The model's config unknown: ModelConfig checks max_model_len against it, so the row is
    undecided with that raise as its evidence, and start-up is undecided (first line, gate)."""
    review = review_of(vllm_029, BF16)
    knob = _knob(review, "max_model_len")
    assert knob.status == "undecided" and "startup-open" in knob.tags and knob.note.startswith("start-up: ")
    (anchor,) = knob.evidence
    assert "raise ValueError(" in vllm_029.read_text(anchor.path).splitlines()[anchor.start_line - 1]
    assert review.startup.verdict == "undecided"
    assert _finding(review, "startup-rejected").classification == "plausible"
    from srcreview.report.terminal import render

    first = render(review).splitlines()[2]
    assert first.startswith("start-up: undecided")


SP = "max_model_len = 2048\ntensor_parallel_size = 2\n[engine.compilation_config.pass_config]\nenable_sp = true\n"


def test_a_raise_on_a_value_a_hook_may_rewrite_is_not_certain(vllm_029, tmp_path):
    """Sequence parallelism with TP 2 on the V2 runner: the V2 gate refuses it, but
    VllmConfig.__post_init__ turns it off first where the GPU has no threshold for the model's
    hidden size. With the GPU's capability open, the refusal rests on that: an open question."""
    review = _review(vllm_029, tmp_path, SP, env='VLLM_USE_V2_MODEL_RUNNER = "1"', gpu='[hardware]\ngpu = "NVIDIA GPU"\n')
    finding = _finding(review, "startup-rejected")
    assert finding is not None and finding.classification == "plausible"
    knob = _knob(review, "compilation_config.pass_config.enable_sp")
    assert knob.status == "undecided" and "sets compilation_config.pass_config.enable_sp to False" in knob.note


def test_a_value_a_hook_turns_off_under_the_recipe_is_overridden(vllm_029, tmp_path):
    """On compute capability 12.0 the threshold table of sequence_parallelism.py has no entry:
    the hook turns SP off, so the recipe's `enable_sp = true` is not what the engine runs with."""
    review = _review(vllm_029, tmp_path, SP, env='VLLM_USE_V2_MODEL_RUNNER = "1"')
    knob = _knob(review, "compilation_config.pass_config.enable_sp")
    assert (knob.status, knob.effective) == ("overridden", "False")
    assert knob.evidence[0].path == "vllm/config/vllm.py"
    lines = vllm_029.read_text("vllm/config/vllm.py").splitlines()
    store = knob.evidence[0].start_line
    assert "pass_config.enable_sp = False" in lines[store - 1]
    assert any("hidden_size too small" in line for line in lines[store - 8:store])  # not the TP == 1 store


def test_top_level_keys_the_draft_model_config_copies_have_draft_rows(vllm_029):
    """SpeculativeConfig builds the draft's ModelConfig with the target's dtype and
    trust_remote_code: each key has a draft row, undecided with the reason where the loader
    takes the draft's model config apart from the VllmConfig it is handed."""
    text = ('[recipe]\nname = "e3"\nmodel = "meta-llama/Llama-3.1-8B-Instruct"\n' + GPU
            + '[engine]\ndtype = "bfloat16"\ntrust_remote_code = true\n'
              '[engine.speculative_config]\nmethod = "eagle3"\nmodel = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"\n'
              'num_speculative_tokens = 3\n[env]\nVLLM_USE_V2_MODEL_RUNNER = "1"\n')
    review = review_text(vllm_029, text, "e3.toml")
    for key in ("dtype", "trust_remote_code"):
        row = _knob(review, key, "draft")
        assert row is not None and row.status in ("applied", "undecided", "ignored"), key
        assert row.status != "undecided" or row.note, key


NGRAM = ('[recipe]\nname = "ng"\nmodel = "Qwen/Qwen3-8B"\n[hardware]\ngpu = "NVIDIA H100"\n[engine]\n'
         'max_model_len = 4096\n[engine.speculative_config]\nmethod = "ngram"\nnum_speculative_tokens = 3\n')


def test_a_refused_field_leaves_the_other_rows_undecided_not_accepted(vllm_029):
    """pydantic stops at the refused draft kv_cache_dtype, so ModelConfig's check of max_model_len
    against the (unknown) model is not reached: the row is undecided, never `accepted`, and the
    unreached raise makes no start-up question of its own."""
    plain = review_text(vllm_029, NGRAM, "ng.toml")
    refused = review_text(vllm_029, NGRAM + 'kv_cache_dtype = "fp9"\n', "ng.toml")
    assert _knob(plain, "max_model_len").status == "undecided"
    assert _knob(refused, "speculative_config.kv_cache_dtype", "draft").status == "invalid-value"
    knob = _knob(refused, "max_model_len")
    assert knob.status == "undecided" and "once the refused field is fixed" in knob.note
    assert refused.startup.verdict == "rejected"
    assert not [f for f in refused.findings if f.rule == "startup-rejected" and f.classification == "confirmed"]


def test_a_misspelt_nested_key_has_one_row(vllm_029):
    review = review_text(vllm_029, NGRAM + "prompt_lookup_mxa = 4\n", "ng.toml")
    rows = [(k.scope, k.status) for k in review.knobs if k.key == "speculative_config.prompt_lookup_mxa"]
    assert rows == [("engine", "unknown-knob")]


def _construction(tree, tmp_path, engine: str, drop: str = ""):
    """The engine's config construction walked for a llama-like recipe (as a review walks it),
    with the binding `drop` (a bindings key) left out."""
    from real_reviews import index_for

    from srcreview.engine.run import _bindings, _prepared
    from srcreview.hfconfig.binding import with_model_configs
    from srcreview.interp.domain import install
    from srcreview.model.recipe import parse_recipe
    from srcreview.vllm.domain import VLLM
    from srcreview.vllm.profile import runtime_profile

    install(VLLM)
    (tmp_path / "model").mkdir(exist_ok=True)
    (tmp_path / "model" / "config.json").write_text(json.dumps(LLAMA))
    text = (f'[recipe]\nname = "case"\nmodel = "./model"\n{GPU}[engine]\nskip_tokenizer_init = true\n'
            f'load_format = "dummy"\n{engine}\n')
    recipe = with_model_configs(parse_recipe(text, "case.toml"), base_dir=tmp_path)
    recipe = recipe.model_copy(update={"hardware": recipe.hardware.with_known_capability()})
    index = index_for(tree)
    bindings = _bindings(index, recipe, runtime_profile(tree, recipe))
    bindings.pop(drop, None)
    an, incomplete = _prepared(index, recipe, bindings)
    assert not incomplete
    return an.construction


def _sites(construction, which: str) -> set[tuple[str, int]]:
    from srcreview.vllm.construction import open_site

    return {open_site(r)[:2] for r in getattr(construction, which)}


DP_LOCAL = ("vllm/config/parallel.py", "must be <= data_parallel_size")
DP_EXTERNAL = ("vllm/config/parallel.py", "data_parallel_external_lb can only be set when")
OP_SYNTAX = ("vllm/config/compilation.py", "for custom op")
OP_MODES = ("vllm/config/compilation.py", "custom_ops can contain only one base mode")
OP_CONFLICT = ("vllm/config/compilation.py", "custom_ops cannot both enable and disable")


def _raise_line(tree, path: str, text: str) -> int:
    """The line of the `raise` whose message holds `text`."""
    message = _line_of(tree, path, text)
    lines = tree.read_text(path).splitlines()
    return next(n for n in range(message, 0, -1) if lines[n - 1].strip().startswith("raise"))


def test_checks_on_what_the_engine_computes_are_refuted_for_a_plain_recipe(vllm_029, tmp_path):
    """The data-parallel locals the builder computes (`data_parallel_size_local`, the external
    balancer flag) and the `+rotary_embedding` the compilation config appends under undecided
    pass flags decide ParallelConfig's and CompilationConfig's checks: none is open."""
    built = _construction(vllm_029, tmp_path, "max_model_len = 2048")
    reached = _sites(built, "open_raises") | _sites(built, "rejections")
    for path, text in (DP_LOCAL, DP_EXTERNAL, OP_SYNTAX, OP_MODES, OP_CONFLICT):
        assert (path, _raise_line(vllm_029, path, text)) not in reached, text


def test_a_check_on_what_the_engine_fills_in_from_the_gpu_stays_open_naming_the_filler(vllm_029, tmp_path):
    built = _construction(vllm_029, tmp_path, "max_model_len = 2048")
    scheduler = [r for r in built.open_raises if r.function.endswith("SchedulerConfig.__post_init__")]
    assert scheduler
    reasons = " ".join(c.reason for r in scheduler for c in r.raise_event.conditions)
    assert "_set_default_max_num_seqs_and_batched_tokens_args()" in reasons
    assert "get_device_total_memory" in reasons


def test_a_local_data_parallel_size_above_the_total_is_refused(vllm_029, tmp_path):
    built = _construction(vllm_029, tmp_path, "max_model_len = 2048\ndata_parallel_size = 2\n"
                                              "data_parallel_size_local = 4")
    path, text = DP_LOCAL
    assert (path, _raise_line(vllm_029, path, text)) in _sites(built, "rejections")


def test_the_model_directory_listed_decides_what_start_up_asks_the_filesystem(vllm_029, tmp_path):
    """`get_config` detects the config format from the files the model has: with the local
    directory's listing bound (config.json only), "Could not detect config format" is refuted;
    without it, it stays open."""
    from srcreview.interp.paths import KNOWN_DIRECTORIES

    detect = ("vllm/transformers_utils/config.py",
              _line_of(vllm_029, "vllm/transformers_utils/config.py", '"Could not detect config format for no config'))
    listed = _sites(_construction(vllm_029, tmp_path, "max_model_len = 2048"), "open_raises")
    unlisted = _sites(_construction(vllm_029, tmp_path, "max_model_len = 2048", drop=KNOWN_DIRECTORIES),
                      "open_raises")
    raise_line = next(line for path, line in unlisted if path == detect[0] and line <= detect[1] <= line + 2)
    assert (detect[0], raise_line) in unlisted and (detect[0], raise_line) not in listed
    assert listed < unlisted


def test_a_value_a_hook_derives_a_field_from_is_read_by_the_raises_reading_that_field(vllm_029, tmp_path):
    """`self.runner_type = self._get_runner_type(architectures, self.runner, ...)`: the checks on
    `runner_type` (a pooling runner for a model the registry may not call a pooling one) read the
    recipe's `runner`, so its row is undecided on such a check, not accepted."""
    review = _review(vllm_029, tmp_path, 'max_model_len = 2048\nrunner = "pooling"')
    knob = _knob(review, "runner")
    assert knob.status == "undecided" and "startup-open" in knob.tags
    assert "runner_type" in knob.note


@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_capture_size_the_minimum_caps_below_one_is_refused(vllm_029, tmp_path, value):
    """`min(max_num_tokens, max_cudagraph_capture_size) >= 1` is asserted while VllmConfig is
    built: whatever the engine fills in for the tokens, the minimum is at most the recipe's value."""
    refused = _review(vllm_029, tmp_path, f"max_model_len = 2048\nmax_cudagraph_capture_size = {value}")
    assert refused.startup.verdict == "rejected"
    finding = _finding(refused, "startup-rejected")
    message = _line_of(vllm_029, "vllm/config/vllm.py", "Maximum cudagraph size should be greater")
    assert any(a.path == "vllm/config/vllm.py" and a.start_line <= message <= a.end_line for a in finding.evidence)
    assert _knob(refused, "max_cudagraph_capture_size").status == "invalid-value"
    # a size the minimum may keep at or above one is not refused by that assert
    kept = _review(vllm_029, tmp_path, "max_model_len = 2048\nmax_cudagraph_capture_size = 8")
    assert _knob(kept, "max_cudagraph_capture_size").status != "invalid-value"


def test_a_block_size_no_backend_supports_refuses_the_recipe_and_its_value(vllm_029, tmp_path):
    """With no backend named, every candidate's validate_configuration refuses block_size = 7
    (each kernel needs a multiple of 16, FlashAttention's as `MultipleOf(16)`): the platform
    raises, and the block size is the value refused."""
    refused = _review(vllm_029, tmp_path, "max_model_len = 2048\nblock_size = 7")
    assert refused.startup.verdict == "rejected"
    finding = _finding(refused, "attention-backend-auto-selected")
    assert finding is not None and finding.classification == "confirmed" and "block_size" in finding.knobs
    assert _knob(refused, "block_size").status == "invalid-value"
    # a size the kernels take is not refused by the selection
    kept = _review(vllm_029, tmp_path, "max_model_len = 2048\nblock_size = 32")
    selected = _finding(kept, "attention-backend-auto-selected")
    assert selected is None or selected.classification != "confirmed"
    assert _knob(kept, "block_size").status != "invalid-value"
