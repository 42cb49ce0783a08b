"""Every name of vLLM the tool's code relies on, defined once (CodeQL's framework layer: a check
names vLLM's concepts, never spells vLLM's classes, paths or fields itself).

Each name says what it is in vLLM and why srcreview needs it. When vLLM renames one, this is the
one place to change (the rules/ TOML files are data and name what they check themselves);
tests/vllm/test_vllm_literals.py holds every module outside srcreview/vllm/ to importing from here.
A leaf: it imports nothing from the project, so any layer may read it (tests/test_layering.py).
"""

from __future__ import annotations

# ----------------------------------------------------------------------------- distribution

PACKAGE = "vllm"  # the import package (and the command, `vllm serve`) whose modules the analysis reads
DISTRIBUTION = "vllm"  # the project on the package index, whose sdists carry the source of a release
PACKAGE_DIR = f"{PACKAGE}/"  # where its modules sit in a source tree: the files indexed and searched
VERSION_FILE = f"{PACKAGE}/_version.py"  # written into an sdist: the version and commit it was built from
EGG_INFO_METADATA = f"{PACKAGE}.egg-info/PKG-INFO"  # setuptools' copy of an sdist's core metadata

# ----------------------------------------------------------------------------- classes

ROOT_CONFIG = "VllmConfig"  # the root config object: every sub-config is one of its fields
ENGINE_CLASS = "EngineArgs"  # the engine arguments a recipe's keys are (flags become its fields)
FRONTEND_CLASS = "FrontendArgs"  # the API server's own arguments: flags that are not engine settings
SPECULATIVE_CLASS = "SpeculativeConfig"  # the speculative-decoding config: its fields may configure the draft
MODEL_CONFIG = "ModelConfig"  # the config class whose hf_config is the model's config
BACKEND_ENUM = "AttentionBackendEnum"  # the registry Enum naming each attention backend's class

# ----------------------------------------------------------------------------- functions and methods

BUILDER = "create_engine_config"  # EngineArgs' method that builds VllmConfig from the arguments
ENGINE_PARSER = f"{ENGINE_CLASS}.add_cli_args"  # registers the engine's command-line flags
PARSERS = (ENGINE_PARSER, "AsyncEngineArgs.add_cli_args")  # every parser of engine flags
SERVE_PARSER = "make_arg_parser"  # builds the `vllm serve` parser (frontend flags, then the engine's)
SERVE_MARK = "model_tag"  # the serve parser's positional: tells it from other make_arg_parser functions
# the method of vLLM's argument parser that rewrites argv before argparse (-O3, -cc.x=v, --x_y,
# --model, --config FILE): its forms are read from its statements (vllm.argv_forms)
ARGV_PARSER = "FlexibleArgumentParser.parse_args"
# the function that turns a config field's annotation into argparse keywords (`type=`, `nargs=`)
# for the `**get_kwargs(Config)[name]` registrations: its per-name `type=` choices are read
KWARGS_BUILDER = "_compute_kwargs"
CLI_PACKAGE = f"{PACKAGE_DIR}entrypoints/cli/"  # the `vllm` command's modules: a flag they look for in
# sys.argv before any parser runs (`--omni`) hands the whole command to another program
CONFIG_FLAG = "--config"  # `vllm serve --config FILE`: a YAML file of flags the parser pulls in
RUNNER_SELECTOR = f"{ROOT_CONFIG}.use_v2_model_runner"  # decides which model runner (v1, v2) runs
# the usage context `vllm serve` builds the engine's config with (the builder's parameter)
SERVE_USAGE_CONTEXT = (f"{PACKAGE}.usage.usage_lib.UsageContext", "OPENAI_API_SERVER")
USAGE_CONTEXT_PARAM = "usage_context"
CAPABILITY_CALLS = ("get_device_capability", "has_device_capability", "is_device_capability",
                    "is_device_capability_family",  # the platform's device-capability questions
                    "get_device_name", "get_device_total_memory",  # and the device's name and memory
                    "device_count")  # and how many devices the engine sees
# functions that copy a config dataclass with some fields changed (modelled as `Derived`)
REPLACE_FUNCTIONS = ("dataclasses.replace", "copy.replace", f"{PACKAGE}.config.utils.replace")
# the hooks that run again when a copy of the root config changes REINIT_FIELDS: each
# architecture's `verify_and_update_config(vllm_config)`
REINIT_HOOK = "verify_and_update_config"
FIELD_COPY = "get_field"  # vllm.config.utils.get_field(Cls, "name"): an EngineArgs field with Cls's default
MODEL_LOADER = "model_loader.get_model"  # builds a model with the current config: the draft's sink
LOADER_CONFIG_ARGUMENT = "vllm_config"  # the loader's parameter that receives the config it builds under
# attention backend selection (vllm.backends, vllm.selection): the selector the target's attention
# layers call, the accessor of the config it runs under, the classmethod the platform asks of a
# backend (it returns the reasons it refuses), the platform's selector method
ATTN_SELECTOR = "selector.get_attn_backend"
CURRENT_CONFIG = "get_current_vllm_config"
BACKEND_VALIDATE = "validate_configuration"
PLATFORM_SELECTOR = "get_attn_backend_cls"
ENV_TABLE = "environment_variables"  # vllm.envs: name -> lambda read by the module's __getattr__

# ----------------------------------------------------------------------------- modules

# `python -m <module>` entry points that run the OpenAI-compatible server (older launch scripts)
SERVER_MODULES = (f"{PACKAGE}.entrypoints.openai.api_server",)
CLI_MODULE = f"{PACKAGE}.entrypoints.cli.main"  # `python -m vllm.entrypoints.cli.main serve`
# the model runners: runner -> (module, runner class, attribute holding its speculative
# component, the method that loads the models). Which class the attribute holds, and whether
# the load method loads a draft model through it, is derived from the source (vllm.drafting).
RUNNERS = {
    "v1": (f"{PACKAGE}.v1.worker.gpu_model_runner", "GPUModelRunner", "drafter", "load_model"),
    "v2": (f"{PACKAGE}.v1.worker.gpu.model_runner", "GPUModelRunner", "speculator", "load_model"),
}
PLATFORM_MODULES = {"cuda": f"{PACKAGE}.platforms.cuda"}  # the platform's selector, per platform module

# ----------------------------------------------------------------------------- config fields and key paths

SPECULATIVE = "speculative_config"  # VllmConfig's field holding the SpeculativeConfig; the recipe's table
MODEL_CONFIG_FIELD = "model_config"  # VllmConfig's field holding the target's ModelConfig
TARGET_MODEL_CONFIG = "target_model_config"  # SpeculativeConfig's field holding the target's ModelConfig
# fields of the root config whose change in a copy runs its post-init hooks again (the draft's
# model config: per-architecture hooks may rewrite the backend and KV dtype of the copy)
REINIT_FIELDS = (MODEL_CONFIG_FIELD,)
CACHE_DTYPE = ("cache_config", "cache_dtype")  # where VllmConfig holds the KV-cache dtype
SELECTOR_KV_DTYPE = "kv_cache_dtype"  # the selector's parameter the target's attention layers fill with it
HF_CONFIG = "hf_config"  # ModelConfig's field holding the model's config (config.json)
CONFIG_LOADER = "vllm/transformers_utils/config.py"  # get_config: hands config.json to transformers
CONFIG_REGISTRY = "_CONFIG_REGISTRY"  # there: model types vLLM builds its own config class for
# transformers' reading of a model's config.json, as vLLM calls it (transformers 5 renamed
# PretrainedConfig, keeping the old name): answered from srcreview.hfconfig's facts (models.external_call)
CONFIG_DICT_CALLS = frozenset(f"{module}.{cls}.get_config_dict" for module in ("transformers", "transformers."
                              "configuration_utils") for cls in ("PreTrainedConfig", "PretrainedConfig"))
FILE_TEST = "file_or_path_exists"  # there: whether the model (directory or Hub repo) has a file
DRAFT_MODEL_CONFIG = "draft_model_config"  # SpeculativeConfig's ModelConfig of the draft model
# config objects the engine builds once and hands to two places: EngineArgs.create_engine_config
# passes its model and parallel configs to the speculative config as the target's
# (`create_speculative_config(target_model_config=model_config, target_parallel_config=...)`,
# 0.25-0.33), so a read through the speculative config reads the root config's field
ALIASES = {
    (SPECULATIVE, "target_model_config"): (MODEL_CONFIG_FIELD,),
    (SPECULATIVE, "target_parallel_config"): ("parallel_config",),
}
# what the model's attention layers pass the selector, as vLLM's ModelConfig derives it from the
# model's config: the selector's parameter -> the ModelConfig member (a method when it ends in
# "()"), walked on the bound config; any other parameter stays open
LAYER_FACTS = {"head_size": "get_head_size()", "dtype": "dtype", "use_mla": "use_mla"}
# the engine keys that configure the target's attention; under SPECULATIVE, the draft's
TARGET_KEYS = ("attention_backend", "kv_cache_dtype")
DRAFT_KEYS = tuple(f"{SPECULATIVE}.{key}" for key in TARGET_KEYS)
# keys of SPECULATIVE that choose speculation (which method, how many tokens, which draft model),
# not the draft's config
SPECULATION_KEYS = ("method", "num_speculative_tokens", "model")
DRAFT_MODEL_KEY = f"{SPECULATIVE}.model"  # the draft model the recipe names (a Hub id or a directory)
DRAFT_REVISION_KEY = f"{SPECULATIVE}.revision"  # the Hub revision of that draft model
# engine arguments every vLLM config file is likely to use (a YAML mapping with none of them is
# someone else's), as the Python fields spell them; a file may write them with dashes too
COMMON_ARGS = ("model", "max_model_len", "tensor_parallel_size", "gpu_memory_utilization", "kv_cache_dtype",
               SPECULATIVE, "served_model_name", "dtype", "quantization", "max_num_seqs", "attention_backend",
               "enable_prefix_caching", "trust_remote_code", "port", "host", "max_num_batched_tokens")

# ----------------------------------------------------------------------------- platforms

CUDA = "cuda"  # the platform of NVIDIA GPUs (`current_platform.is_cuda()`)
# import-time probes of what is installed, answered from the runtime profile (vllm.profile):
# `find_spec("triton")` is a spec when a distribution of that name is installed, and
# `entry_points(group=...)` finds what the release's own package declares (no plugins)
PROBE_CALLS = ("importlib.util.find_spec", "importlib.metadata.entry_points")
# platform -> (the class `current_platform` is an instance of on it, its variants that vLLM picks
# among at import): a method the class defines and no variant overrides is that method, walked
PLATFORM_CLASSES = {
    CUDA: ("vllm.platforms.cuda.CudaPlatformBase",
           ("vllm.platforms.cuda.NvmlCudaPlatform", "vllm.platforms.cuda.NonNvmlCudaPlatform")),
}
# platform predicate -> the platforms for which it is true (vllm/platforms/interface.py)
PLATFORM_PREDICATES = {
    "is_cuda": (CUDA,), "is_cuda_alike": (CUDA, "rocm"), "is_rocm": ("rocm",), "is_xpu": ("xpu",),
    "is_cpu": ("cpu",), "is_tpu": ("tpu",), "is_zen_cpu": (), "is_out_of_tree": (), "is_unspecified": (),
}

# ----------------------------------------------------------------------------- start-up logs

# vLLM's log records (vllm/logger.py): `LEVEL MM-DD HH:MM:SS [file.py:line] message`, the file the
# basename of the module (a path shortened under VLLM_LOGGING_LEVEL=DEBUG), every line of a
# multi-line message carrying the same prefix; a process other than the API server prefixes
# each line with `(NAME pid=N) ` (vllm/utils/system_utils.py `_add_prefix`)
LOGGER_NAME = "logger"  # the module-level logger every vLLM module binds (`logger = init_logger(__name__)`)
# the logger's methods and the level each prints at; `_once` ones print a message once per
# process, and only where their `scope` keyword lets them (default "local": the node's first rank)
LOG_METHODS = {"debug": "DEBUG", "info": "INFO", "warning": "WARNING", "error": "ERROR", "exception": "ERROR",
               "critical": "CRITICAL", "debug_once": "DEBUG", "info_once": "INFO", "warning_once": "WARNING"}
ONCE_SUFFIX = "_once"
LOG_SCOPE_KEYWORD = "scope"  # info_once(..., scope="global"|"local"|"process")
LOG_SCOPE_DEFAULT = "local"
LOG_SCOPES = {"local": "the first rank of each node", "global": "the first rank of all nodes",
              "process": "every process"}
LOG_LEVEL_ENV = "VLLM_LOGGING_LEVEL"  # DEBUG prints the debug lines (and shortened paths as the file)
INSPECTION_ENV = "VLLM_LOG_MODEL_INSPECTION"  # 1: the loader prints each model's structure
# the format strings a start-up's evidence keys on (located in the pinned tree by srcreview.vllm.log_calls;
# their line numbers are never tabled here)
BACKEND_FORCED_LOG = "Using %s backend."  # the platform selector, when a backend is named (not once; cached)
BACKEND_SELECTED_LOG = "Using %s attention backend out of potential backends: %s."  # selected by priority (once)
KV_DTYPE_LOG = "Using %s data type to store kv cache."  # CacheConfig's validator, quantized dtypes only
MODEL_STRUCTURE_LOG = "vLLM model structure:\n%s"  # the loader, each model, under INSPECTION_ENV
MODEL_STRUCTURE_FUNCTION = "log_model_inspection"  # the loader's function that prints it
DRAFTER_LOAD_LOG = "Loading drafter model..."  # the V1 runner, between the target's load and the draft's
MODEL_LOADED_LOG = "Model loading took %s GiB memory"  # the runner's load method, both models loaded
ENGINE_READY_LOG = "init engine (profile, create kv cache, warmup model) took"  # EngineCore is up
ENGINE_FAILED_LOG = "EngineCore failed to start."  # EngineCore's start-up raised
CUDAGRAPH_CAPTURE_LOG = "CG Capture: mode=%s, batch_desc=%s"  # the V2 runner's capture, per graph (DEBUG)
CUDAGRAPH_DONE_LOG = "Graph capturing finished in"  # either runner, after capture
CUDAGRAPH_MODE_FIELD = "compilation_config.cudagraph_mode"  # the recipe key of the mode
CUDAGRAPH_WORDS = ("cudagraph", "CUDAGraph", "CUDA graph", "Cudagraph")  # how config warnings name the mode
# Attention.extra_repr prints `backend=<impl class>`; each backend class names its impl
# (`get_impl_cls`) and its enum name (`get_name`)
STRUCTURE_BACKEND_KEY = "backend="
BACKEND_IMPL_METHOD = "get_impl_cls"
WORKER_PROCESS = "Worker"  # `(Worker_TP1 pid=…)`: a worker process, its rank after _TP/_PP/_DP
