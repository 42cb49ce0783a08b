"""Deterministic recipes for the differential oracle (issue 23).

Each case is one recipe: engine arguments, environment, the model's config.json (written by
hand here, never downloaded), an optional draft model's config.json, and the GPU (compute
capability and name) the platform is patched to report. The same case is given to real vLLM
(``oracle_vllm.py``, as ``EngineArgs(**engine).create_engine_config()``) and to srcreview (as
a TOML recipe whose ``model`` is a local directory holding that config.json).

    python tests/differential/generate.py > cases.json      # prints the cases as JSON

Classes (``cls``): wrong-type, bounds, cross-field, v2-gate, backend, max-model-len,
hook-overwrite, coercion, control. The list is the same on every run; a case whose key does
not exist at a release is still asked (vLLM's TypeError and srcreview's unknown key are
compared like any other refusal).
"""

from __future__ import annotations

import json
import sys

# --- model configs (small, hand-written; shapes of public architectures) -----------------

LLAMA = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 512,
    "intermediate_size": 1024,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 64,
    "num_hidden_layers": 2,
    "max_position_embeddings": 4096,
    "vocab_size": 32000,
    "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0,
    "hidden_act": "silu",
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "bos_token_id": 1,
    "eos_token_id": 2,
}

QWEN3 = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "num_hidden_layers": 2,
    "max_position_embeddings": 40960,
    "vocab_size": 151936,
    "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0,
    "hidden_act": "silu",
    "attention_bias": False,
    "tie_word_embeddings": True,
    "sliding_window": None,
    "use_sliding_window": False,
    "torch_dtype": "bfloat16",
    "bos_token_id": 151643,
    "eos_token_id": 151645,
}

DEEPSEEK_MLA = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "model_type": "deepseek_v3",
    "hidden_size": 1024,
    "intermediate_size": 2048,
    "moe_intermediate_size": 256,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "num_hidden_layers": 2,
    "first_k_dense_replace": 1,
    "n_routed_experts": 8,
    "n_shared_experts": 1,
    "num_experts_per_tok": 2,
    "n_group": 1,
    "topk_group": 1,
    "routed_scaling_factor": 1.0,
    "norm_topk_prob": True,
    "scoring_func": "sigmoid",
    "topk_method": "noaux_tc",
    "kv_lora_rank": 512,
    "q_lora_rank": 384,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "v_head_dim": 128,
    "num_nextn_predict_layers": 1,
    "max_position_embeddings": 16384,
    "vocab_size": 32000,
    "rms_norm_eps": 1e-06,
    "rope_theta": 10000.0,
    "hidden_act": "silu",
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "bos_token_id": 0,
    "eos_token_id": 1,
}

# an EAGLE-3 draft for the llama-like target (the shape of public EAGLE-3 heads)
EAGLE3_LLAMA_DRAFT = {
    "architectures": ["LlamaForCausalLMEagle3"],
    "model_type": "llama",
    "hidden_size": 512,
    "intermediate_size": 1024,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 64,
    "num_hidden_layers": 1,
    "max_position_embeddings": 4096,
    "vocab_size": 32000,
    "draft_vocab_size": 32000,
    "rms_norm_eps": 1e-05,
    "rope_theta": 10000.0,
    "hidden_act": "silu",
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
}

MODELS = {"llama": LLAMA, "qwen3": QWEN3, "deepseek_mla": DEEPSEEK_MLA}
DRAFTS = {"eagle3_llama": EAGLE3_LLAMA_DRAFT}

# --- GPUs: compute capability and the name the platform reports ---------------------------

GPUS = {
    (7, 5): "Tesla T4",
    (8, 0): "NVIDIA A100-SXM4-80GB",
    (8, 6): "NVIDIA RTX A6000",
    (8, 9): "NVIDIA L40S",
    (9, 0): "NVIDIA H100 80GB HBM3",
    (10, 0): "NVIDIA B200",
    (12, 0): "NVIDIA GeForce RTX 5090",
}
DEFAULT_CAP = (12, 0)


def _case(cls, slug, engine=None, env=None, model="llama", draft=None, cap=DEFAULT_CAP, note=""):
    return {
        "id": f"{cls}/{slug}",
        "cls": cls,
        "engine": dict(engine or {}),
        "env": dict(env or {}),
        "model": model,
        "model_config": MODELS[model],
        "draft": draft,
        "draft_config": DRAFTS[draft] if draft else None,
        "gpu": {"capability": list(cap), "name": GPUS[cap]},
        "note": note,
    }


def _slug(value) -> str:
    text = json.dumps(value, sort_keys=True).replace('"', "'")
    out = "".join(c if c.isalnum() or c in ".-'[],:" else "_" for c in text)
    return out.strip("_")[:40] or "empty"


def wrong_types():
    base = {"max_model_len": 2048}
    values = [
        ("max_num_seqs", "many"), ("max_num_seqs", 8.5), ("max_num_seqs", [8]),
        ("max_model_len", [2048]), ("max_model_len", 2048.5), ("max_model_len", True),
        ("gpu_memory_utilization", "high"), ("gpu_memory_utilization", [0.9]),
        ("tensor_parallel_size", 1.5), ("tensor_parallel_size", "one"),
        ("block_size", "sixteen"), ("block_size", 16.5),
        ("enforce_eager", "yes"), ("enforce_eager", 2), ("enable_prefix_caching", "maybe"),
        ("kv_cache_dtype", 8), ("dtype", 16), ("seed", "x"), ("max_num_batched_tokens", "lots"),
        ("max_num_batched_tokens", 4096.5), ("max_logprobs", "all"), ("swap_space", "big"),
        ("enable_chunked_prefill", "no"), ("disable_log_stats", "off"), ("trust_remote_code", "sure"),
        ("quantization", 4), ("attention_backend", 3), ("max_seq_len_to_capture", "x"),
        ("cpu_offload_gb", "none"), ("num_gpu_blocks_override", "all"),
    ]
    for key, value in values:
        engine = dict(base)
        engine[key] = value
        yield _case("wrong-type", f"{key}={_slug(value)}", engine)


def bounds():
    base = {"max_model_len": 2048}
    values = [
        ("max_num_seqs", 0), ("max_num_seqs", -1), ("max_num_seqs", 1), ("max_num_seqs", 1024),
        ("max_num_batched_tokens", 0), ("max_num_batched_tokens", -5), ("max_num_batched_tokens", 1),
        ("max_num_batched_tokens", 2048),
        ("gpu_memory_utilization", 0.0), ("gpu_memory_utilization", -0.1), ("gpu_memory_utilization", 1.0),
        ("gpu_memory_utilization", 1.01), ("gpu_memory_utilization", 2), ("gpu_memory_utilization", 0.05),
        ("tensor_parallel_size", 0), ("tensor_parallel_size", -1),
        ("pipeline_parallel_size", 0), ("data_parallel_size", 0),
        ("block_size", 0), ("block_size", 7), ("block_size", 1), ("block_size", 8), ("block_size", 16),
        ("block_size", 32), ("block_size", 128), ("block_size", 1024),
        ("max_logprobs", -2), ("max_logprobs", -1), ("max_logprobs", 0),
        ("swap_space", -1), ("cpu_offload_gb", -1),
        ("max_num_partial_prefills", 0), ("max_long_partial_prefills", 0),
        ("long_prefill_token_threshold", -1), ("max_model_len", 0), ("max_model_len", 1),
        ("seed", -1), ("stream_interval", 0), ("num_gpu_blocks_override", 0),
        ("max_num_scheduled_tokens", -1), ("max_cudagraph_capture_size", 0),
        ("max_cudagraph_capture_size", -1),
    ]
    for key, value in values:
        engine = dict(base)
        engine[key] = value
        yield _case("bounds", f"{key}={_slug(value)}", engine)
    for n in (0, -1, 1, 3):
        yield _case("bounds", f"num_speculative_tokens={n}",
                    {"max_model_len": 2048, "speculative_config": {"method": "ngram", "num_speculative_tokens": n,
                                                                   "prompt_lookup_max": 4}},
                    env={"VLLM_USE_V2_MODEL_RUNNER": "0"})


def cross_field():
    def c(slug, engine, **kw):
        return _case("cross-field", slug, engine, **kw)

    # chunked prefill off: max_num_batched_tokens must hold max_model_len
    for mbt in (1024, 2047, 2048, 4096):
        yield c(f"no-chunked-prefill-mbt={mbt}-mml=2048",
                {"max_model_len": 2048, "enable_chunked_prefill": False, "max_num_batched_tokens": mbt})
    for mbt in (1024, 2048):
        yield c(f"chunked-prefill-mbt={mbt}-mml=2048",
                {"max_model_len": 2048, "enable_chunked_prefill": True, "max_num_batched_tokens": mbt})
    # max_num_batched_tokens vs max_num_seqs
    for mbt, seqs in ((64, 128), (128, 128), (256, 128), (16, 256)):
        yield c(f"mbt={mbt}-seqs={seqs}", {"max_model_len": 2048, "max_num_batched_tokens": mbt, "max_num_seqs": seqs})
    # long_prefill_token_threshold vs max_model_len
    for thr in (1024, 2048, 2049, 8192):
        yield c(f"long-prefill-threshold={thr}-mml=2048",
                {"max_model_len": 2048, "long_prefill_token_threshold": thr})
    # partial prefills
    yield c("partial-prefills=2-long=3", {"max_model_len": 2048, "max_num_partial_prefills": 2,
                                          "max_long_partial_prefills": 3})
    yield c("partial-prefills=2-long=1", {"max_model_len": 2048, "max_num_partial_prefills": 2,
                                          "max_long_partial_prefills": 1})
    # max_num_active_seqs (where the release has it) vs max_num_seqs
    for active, seqs in ((512, 256), (256, 256), (64, 256), (0, 256)):
        yield c(f"active-seqs={active}-seqs={seqs}",
                {"max_model_len": 2048, "max_num_seqs": seqs, "max_num_active_seqs": active})
    # max_num_scheduled_tokens vs max_num_batched_tokens
    for sched in (4096, 8192, 16384):
        yield c(f"scheduled-tokens={sched}-mbt=8192",
                {"max_model_len": 2048, "max_num_batched_tokens": 8192, "max_num_scheduled_tokens": sched})
    # prefix caching with a non-default hash
    yield c("prefix-caching-hash=sha256", {"max_model_len": 2048, "enable_prefix_caching": True,
                                          "prefix_caching_hash_algo": "sha256"})
    yield c("prefix-caching-hash=md5", {"max_model_len": 2048, "prefix_caching_hash_algo": "md5"})
    # kv cache dtype vs backend
    for be in ("FLASH_ATTN", "TRITON_ATTN", "FLASHINFER", "FLEX_ATTENTION"):
        for kv in ("fp8", "fp8_e5m2", "fp8_e4m3"):
            yield c(f"backend={be}-kv={kv}", {"max_model_len": 2048, "attention_backend": be, "kv_cache_dtype": kv})
    # data parallel / expert parallel on a dense model
    yield c("expert-parallel-dense", {"max_model_len": 2048, "enable_expert_parallel": True})
    yield c("dbo-without-ep", {"max_model_len": 2048, "enable_dbo": True})
    # speculative: ngram without lookup bounds, lookup min > max
    yield c("ngram-lookup-min>max", {"max_model_len": 2048, "speculative_config": {
        "method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 5, "prompt_lookup_max": 2}},
        env={"VLLM_USE_V2_MODEL_RUNNER": "0"})
    yield c("ngram-lookup-ok", {"max_model_len": 2048, "speculative_config": {
        "method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_min": 2, "prompt_lookup_max": 5}},
        env={"VLLM_USE_V2_MODEL_RUNNER": "0"})
    yield c("mtp-on-llama", {"max_model_len": 2048, "speculative_config": {"method": "mtp", "num_speculative_tokens": 1}})
    yield c("mtp-on-deepseek", {"max_model_len": 2048, "speculative_config": {"method": "mtp", "num_speculative_tokens": 1}},
            model="deepseek_mla")
    yield c("mtp-on-deepseek-k3", {"max_model_len": 2048, "speculative_config": {"method": "mtp", "num_speculative_tokens": 3}},
            model="deepseek_mla")
    yield c("sliding-window-override-prefix", {"max_model_len": 2048, "disable_sliding_window": True,
                                               "enable_prefix_caching": True}, model="qwen3")


def v2_gate():
    def c(slug, engine, env, **kw):
        return _case("v2-gate", slug, engine, env=env, **kw)

    for runner in ("1", "0", None):
        env = {} if runner is None else {"VLLM_USE_V2_MODEL_RUNNER": runner}
        tag = f"v2={runner or 'unset'}"
        yield c(f"{tag}-ngram", {"max_model_len": 2048, "speculative_config": {
            "method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}}, env)
        yield c(f"{tag}-eagle3", {"max_model_len": 2048, "speculative_config": {
            "method": "eagle3", "num_speculative_tokens": 3, "model": "@draft"}}, env, draft="eagle3_llama")
        yield c(f"{tag}-eagle3-pp2", {"max_model_len": 2048, "pipeline_parallel_size": 2, "speculative_config": {
            "method": "eagle3", "num_speculative_tokens": 3, "model": "@draft"}}, env, draft="eagle3_llama")
        yield c(f"{tag}-eagle3-tp2", {"max_model_len": 2048, "tensor_parallel_size": 2, "speculative_config": {
            "method": "eagle3", "num_speculative_tokens": 3, "model": "@draft"}}, env, draft="eagle3_llama")
        yield c(f"{tag}-draft-model", {"max_model_len": 2048, "speculative_config": {
            "method": "draft_model", "num_speculative_tokens": 3, "model": "@draft"}}, env, draft="eagle3_llama")
        yield c(f"{tag}-mtp-deepseek", {"max_model_len": 2048, "speculative_config": {
            "method": "mtp", "num_speculative_tokens": 1}}, env, model="deepseek_mla")
        yield c(f"{tag}-dbo", {"max_model_len": 2048, "enable_dbo": True}, env)
        yield c(f"{tag}-stock-torch-compile", {"max_model_len": 2048, "compilation_config": {"mode": 2}}, env)
        yield c(f"{tag}-logits-processors", {"max_model_len": 2048,
                                             "logits_processors": ["collections:OrderedDict"]}, env)
        yield c(f"{tag}-kv-sharing-fast-prefill", {"max_model_len": 2048, "kv_sharing_fast_prefill": True}, env)
        yield c(f"{tag}-pp2", {"max_model_len": 2048, "pipeline_parallel_size": 2}, env)
        yield c(f"{tag}-plain", {"max_model_len": 2048}, env)
        yield c(f"{tag}-enforce-eager", {"max_model_len": 2048, "enforce_eager": True}, env)
        yield c(f"{tag}-sp-tp2", {"max_model_len": 2048, "tensor_parallel_size": 2,
                                  "compilation_config": {"pass_config": {"enable_sp": True}}}, env)


BACKENDS_MHA = ("FLASH_ATTN", "FLASHINFER", "TRITON_ATTN", "FLEX_ATTENTION")
BACKENDS_MLA = ("TRITON_MLA", "FLASHMLA", "FLASHINFER_MLA", "CUTLASS_MLA", "FLASH_ATTN_MLA")


def backends():
    caps = ((7, 5), (8, 0), (8, 9), (9, 0), (10, 0), (12, 0))
    for cap in caps:
        tag = f"sm{cap[0]}{cap[1]}"
        for be in BACKENDS_MHA + BACKENDS_MLA:
            yield _case("backend", f"{tag}-llama-{be}", {"max_model_len": 2048, "attention_backend": be}, cap=cap)
        for be in BACKENDS_MLA + ("FLASH_ATTN", "TRITON_ATTN"):
            yield _case("backend", f"{tag}-deepseek-{be}", {"max_model_len": 2048, "attention_backend": be},
                        model="deepseek_mla", cap=cap)
        yield _case("backend", f"{tag}-llama-auto", {"max_model_len": 2048}, cap=cap)
        yield _case("backend", f"{tag}-deepseek-auto", {"max_model_len": 2048}, model="deepseek_mla", cap=cap)
        yield _case("backend", f"{tag}-qwen3-auto", {"max_model_len": 2048}, model="qwen3", cap=cap)
        yield _case("backend", f"{tag}-llama-auto-fp8kv", {"max_model_len": 2048, "kv_cache_dtype": "fp8"}, cap=cap)
        yield _case("backend", f"{tag}-llama-TRITON-fp8kv",
                    {"max_model_len": 2048, "attention_backend": "TRITON_ATTN", "kv_cache_dtype": "fp8"}, cap=cap)
    yield _case("backend", "sm120-llama-unknown-backend", {"max_model_len": 2048, "attention_backend": "NO_SUCH_ATTN"})
    yield _case("backend", "sm120-llama-lowercase-backend", {"max_model_len": 2048, "attention_backend": "triton_attn"})
    yield _case("backend", "sm120-llama-attention-config-backend",
                {"max_model_len": 2048, "attention_config": {"backend": "TRITON_ATTN"}})


def max_model_len():
    for model, mpe in (("llama", 4096), ("qwen3", 40960), ("deepseek_mla", 16384)):
        for value in (mpe // 2, mpe, mpe + 1, mpe * 2):
            yield _case("max-model-len", f"{model}-mml={value}", {"max_model_len": value}, model=model)
        yield _case("max-model-len", f"{model}-mml={mpe * 2}-allow-long", {"max_model_len": mpe * 2},
                    env={"VLLM_ALLOW_LONG_MAX_MODEL_LEN": "1"}, model=model)
        yield _case("max-model-len", f"{model}-mml-unset", {}, model=model)


def hook_overwrites():
    def c(slug, engine, **kw):
        return _case("hook-overwrite", slug, engine, **kw)

    for mode in ("FULL", "PIECEWISE", "FULL_AND_PIECEWISE", "NONE", "FULL_DECODE_ONLY"):
        yield c(f"enforce-eager-cudagraph={mode}", {"max_model_len": 2048, "enforce_eager": True,
                                                     "compilation_config": {"cudagraph_mode": mode}})
        yield c(f"cudagraph={mode}", {"max_model_len": 2048, "compilation_config": {"cudagraph_mode": mode}})
    yield c("cudagraph=BOGUS", {"max_model_len": 2048, "compilation_config": {"cudagraph_mode": "BOGUS"}})
    yield c("enforce-eager-capture-sizes", {"max_model_len": 2048, "enforce_eager": True,
                                            "compilation_config": {"cudagraph_capture_sizes": [1, 2, 4]}})
    yield c("capture-sizes-and-max", {"max_model_len": 2048, "max_cudagraph_capture_size": 2,
                                      "compilation_config": {"cudagraph_capture_sizes": [1, 2, 4]}})
    yield c("compilation-mode=0-cudagraph=FULL", {"max_model_len": 2048,
                                                  "compilation_config": {"mode": 0, "cudagraph_mode": "FULL"}})
    yield c("compilation-mode=3", {"max_model_len": 2048, "compilation_config": {"mode": 3}})
    yield c("compilation-mode=9", {"max_model_len": 2048, "compilation_config": {"mode": 9}})
    yield c("compilation-unknown-key", {"max_model_len": 2048, "compilation_config": {"no_such_key": 1}})
    yield c("async-scheduling-enforce-eager", {"max_model_len": 2048, "async_scheduling": True, "enforce_eager": True})
    yield c("async-scheduling-ngram", {"max_model_len": 2048, "async_scheduling": True, "speculative_config": {
        "method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4}},
        env={"VLLM_USE_V2_MODEL_RUNNER": "0"})
    yield c("prefix-caching-off-mamba-align", {"max_model_len": 2048, "enable_prefix_caching": False})


def coercions():
    def c(slug, engine, **kw):
        return _case("coercion", slug, engine, **kw)

    for value in (-1, "16384", "4096", "4k", "4K", "auto", "-1", 4096.0):
        yield c(f"max_model_len={_slug(value)}", {"max_model_len": value})
    for value in ("8", "0.9", "auto"):
        yield c(f"max_num_seqs={_slug(value)}", {"max_model_len": 2048, "max_num_seqs": value})
    for value in ("0.9", 1, "1"):
        yield c(f"gpu_memory_utilization={_slug(value)}", {"max_model_len": 2048, "gpu_memory_utilization": value})
    for value in ("half", "float16", "bfloat16", "float32", "auto", "float", "fp8", "int8"):
        yield c(f"dtype={value}", {"max_model_len": 2048, "dtype": value})
    for value in ("auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp16", "float16", "int8", "fp8_inc"):
        yield c(f"kv_cache_dtype={value}", {"max_model_len": 2048, "kv_cache_dtype": value})
    yield c("block_size='16'", {"max_model_len": 2048, "block_size": "16"})
    yield c("enforce_eager=1", {"max_model_len": 2048, "enforce_eager": 1})
    yield c("enforce_eager='true'", {"max_model_len": 2048, "enforce_eager": "true"})
    yield c("tensor_parallel_size='1'", {"max_model_len": 2048, "tensor_parallel_size": "1"})


def controls():
    for model in MODELS:
        for cap in ((8, 0), (9, 0), (12, 0)):
            tag = f"sm{cap[0]}{cap[1]}"
            yield _case("control", f"{model}-{tag}-mml=2048", {"max_model_len": 2048}, model=model, cap=cap)
            yield _case("control", f"{model}-{tag}-eager-seqs=4", {"max_model_len": 2048, "enforce_eager": True,
                                                                   "max_num_seqs": 4}, model=model, cap=cap)
    yield _case("control", "llama-prefix-caching", {"max_model_len": 2048, "enable_prefix_caching": True})
    yield _case("control", "llama-gmu=0.8-seqs=64", {"max_model_len": 2048, "gpu_memory_utilization": 0.8,
                                                    "max_num_seqs": 64})
    yield _case("control", "llama-tp2", {"max_model_len": 2048, "tensor_parallel_size": 2})
    yield _case("control", "llama-seed=0-dtype=bf16", {"max_model_len": 2048, "seed": 0, "dtype": "bfloat16"})
    yield _case("control", "llama-mbt=8192", {"max_model_len": 2048, "max_num_batched_tokens": 8192})
    yield _case("control", "llama-no-chunked-mbt=2048", {"max_model_len": 2048, "enable_chunked_prefill": False,
                                                         "max_num_batched_tokens": 2048})
    yield _case("control", "qwen3-mml=32768", {"max_model_len": 32768}, model="qwen3")
    yield _case("control", "deepseek-TRITON_MLA", {"max_model_len": 2048, "attention_backend": "TRITON_MLA"},
                model="deepseek_mla")
    yield _case("control", "llama-TRITON_ATTN-bf16kv", {"max_model_len": 2048, "attention_backend": "TRITON_ATTN",
                                                        "kv_cache_dtype": "bfloat16"})
    yield _case("control", "llama-eagle3-v1", {"max_model_len": 2048, "speculative_config": {
        "method": "eagle3", "num_speculative_tokens": 3, "model": "@draft"}},
        env={"VLLM_USE_V2_MODEL_RUNNER": "0"}, draft="eagle3_llama")


GENERATORS = (wrong_types, bounds, cross_field, v2_gate, backends, max_model_len, hook_overwrites, coercions, controls)


def cases() -> list[dict]:
    out = []
    seen = set()
    for gen in GENERATORS:
        for case in gen():
            if case["id"] in seen:
                raise AssertionError(f"duplicate case id {case['id']}")
            seen.add(case["id"])
            out.append(case)
    return out


if __name__ == "__main__":
    json.dump(cases(), sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
