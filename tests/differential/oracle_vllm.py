"""Ask real vLLM whether recipes start: the differential oracle of issue 23.

Run with the python of an oracle venv (``tests/differential/oracle_env.py``), never imported by
srcreview or by its normal tests:

    ORACLE_PY tests/differential/oracle_vllm.py CASES.json OUT.json [--timeout S] [--only ID-PART]

CASES.json is a list of cases (see ``generate.py``). For each case a process is forked from
a parent that has already imported vLLM with the platform patched (below); the child writes
the model's config.json into a temporary directory that becomes ``model``, sets the case's
environment, builds ``EngineArgs(**engine).create_engine_config(usage_context=
UsageContext.OPENAI_API_SERVER)`` (the usage context ``vllm serve`` passes, which picks the
engine's batch defaults) and then asks the
attention selector for the target's backend, as the model runner would. It reports
``{id, outcome, exception, message, frame, stage, backend, seconds}`` where outcome is
``starts``, ``rejected`` (vLLM raised while building the config or selecting the backend)
or ``environment`` (a refusal this CPU-only machine or its stubs cause; narrow, counted apart;
a timeout is one, with the reason).

What is patched, and only that (the validation under test is never touched):

1. vLLM's compiled extension modules (every ``vllm.*`` module whose file is a shared
   object: ``_C``, ``_moe_C``, ``_C_stable_libtorch``, the flash-attention and FlashMLA
   extensions, ...) are replaced by empty stub modules, and the op namespaces they would
   register (``torch.ops._C``, ``torch.ops._moe_C``, ...) by stubs whose every op exists and
   returns a stub: only import-time kernel probes call them before the model is loaded.
2. Triton's NVIDIA driver reports itself active (there is no GPU for it to find), as on a
   GPU host; its AMD driver inactive.
3. vLLM's CUDA platform class (``vllm.platforms.cuda.CudaPlatform``) is the current platform
   (``vllm.platforms._current_platform``), with ``get_device_capability``,
   ``get_device_name``, ``get_device_total_memory`` and ``device_count`` mocked with
   ``unittest.mock.patch.object`` as vLLM's own tests do
   (tests/v1/attention/test_cuda_backend_probe_errors.py,
   tests/kernels/attention/test_attention_selector.py), and ``torch.cuda``'s
   ``get_device_capability``/``get_device_name``/``device_count`` answering the same.
4. The model-class inspection that vLLM runs in a subprocess
   (``vllm.model_executor.models.registry._run_in_subprocess``) runs in-process: the case is
   already in its own forked process.
5. Engine arguments the oracle adds to every case: ``model`` (the temporary directory),
   ``skip_tokenizer_init=True`` (no tokenizer files), ``load_format="dummy"`` (no weights);
   HF_HUB_OFFLINE=1, TRANSFORMERS_OFFLINE=1, VLLM_CACHE_ROOT in a temporary directory.

Out of reach, so never claimed: what start-up does after the config and the backend choice
(worker processes, weights, the KV-cache sizing against GPU memory, torch.compile and
cudagraph capture, kernels).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import multiprocessing
import os
import sys
import tempfile
import time
import traceback
import types
from unittest import mock

GPU_MEMORY = {  # bytes, by device name (what the patched platform reports)
    "Tesla T4": 16 * 2**30,
    "NVIDIA A100-SXM4-80GB": 80 * 2**30,
    "NVIDIA RTX A6000": 48 * 2**30,
    "NVIDIA L40S": 48 * 2**30,
    "NVIDIA H100 80GB HBM3": 80 * 2**30,
    "NVIDIA B200": 180 * 2**30,
    "NVIDIA GeForce RTX 5090": 32 * 2**30,
}
DEVICE_COUNT = 8  # GPUs the patched platform reports (a tensor/pipeline-parallel recipe fits)

PATCHES: list[str] = []  # what was patched, reported with every result
STUB_CALLS: list[str] = []  # stub ops called (a case whose outcome may rest on a stub says so)
FINDER = None


# --- 1. compiled extensions ---------------------------------------------------------------

class _StubOp:
    """An op of a stubbed namespace: callable, every attribute exists."""

    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        STUB_CALLS.append(self._name)
        return None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StubOp(f"{self._name}.{name}")

    def __repr__(self):
        return f"<stub op {self._name}>"


class _StubNamespace(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _StubOp(f"{self.__name__}.{name}")


class _StubLoader(importlib.abc.Loader):
    def create_module(self, spec):
        return _StubNamespace(spec.name)

    def exec_module(self, module):
        module.__file__ = "<stubbed compiled extension>"


class _ExtensionStubFinder(importlib.abc.MetaPathFinder):
    """Every vllm.* module that is a shared object becomes an empty stub module."""

    def __init__(self):
        self.stubbed: list[str] = []

    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith("vllm.") or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
            return None
        self.stubbed.append(fullname)
        return importlib.util.spec_from_loader(fullname, _StubLoader())


STUB_NAMESPACES = ("_C", "_C_cache_ops", "_C_custom_ar", "_moe_C", "_rocm_C", "_vllm_fa2_C", "_vllm_fa3_C",
                   "_flashmla_C", "_flashmla_extension_C", "_qutlass_C", "_C_stable_libtorch")


def _stub_op_namespaces():
    import torch

    for name in STUB_NAMESPACES:
        torch.ops.__dict__[name] = _StubNamespace(f"torch.ops.{name}")
    PATCHES.append("torch.ops." + "/".join(STUB_NAMESPACES) + ": stub op namespaces (every op exists, returns None)")

    # the fake (meta) kernels vLLM registers at import for ops of those namespaces: the ops
    # were never defined (their library is a stub), so the registration is skipped
    real = torch.library.register_fake

    def register_fake(op, *args, **kwargs):
        name = op if isinstance(op, str) else getattr(op, "_qualified_op_name", getattr(op, "__name__", ""))
        if isinstance(name, str) and name.split("::", 1)[0] in STUB_NAMESPACES:
            fn = kwargs.get("func") or (args[0] if args and callable(args[0]) else None)
            return fn if fn is not None else (lambda f: f)
        return real(op, *args, **kwargs)

    torch.library.register_fake = register_fake
    PATCHES.append("torch.library.register_fake: a no-op for ops of those namespaces")


# --- 2. Triton ------------------------------------------------------------------------------

def _triton_driver_active():
    try:
        from triton.backends import backends
    except ImportError:
        PATCHES.append("triton: not installed (no driver to patch)")
        return
    for name, backend in backends.items():
        if name == "cpu" or backend.driver is None:
            continue
        active = name == "nvidia"
        backend.driver.is_active = staticmethod(lambda active=active: active)
    PATCHES.append("triton.backends.backends['nvidia'].driver.is_active -> True (others False)")


# --- 3. the CUDA platform -------------------------------------------------------------------

def _install_platform(capability, name):
    import torch
    import vllm.platforms as platforms
    from vllm.platforms import cuda
    from vllm.platforms.interface import DeviceCapability

    cls = cuda.CudaPlatform
    cap = DeviceCapability(major=capability[0], minor=capability[1])
    memory = GPU_MEMORY.get(name, 32 * 2**30)
    patchers = [
        mock.patch.object(cls, "get_device_capability", return_value=cap),
        mock.patch.object(cls, "get_device_name", return_value=name),
        mock.patch.object(cls, "get_device_total_memory", return_value=memory),
        mock.patch.object(cls, "device_count", return_value=DEVICE_COUNT),
        mock.patch.object(torch.cuda, "get_device_capability", lambda *_a, **_k: tuple(capability)),
        mock.patch.object(torch.cuda, "get_device_name", lambda *_a, **_k: name),
        mock.patch.object(torch.cuda, "device_count", lambda *_a, **_k: DEVICE_COUNT),
    ]
    for p in patchers:
        p.start()
    platforms._current_platform = cls()
    PATCHES.append(f"vllm.platforms._current_platform = {cls.__module__}.{cls.__name__}() "
                   "(get_device_capability, get_device_name, get_device_total_memory, device_count "
                   "mocked with mock.patch.object; torch.cuda.get_device_capability/get_device_name/"
                   f"device_count alike; {DEVICE_COUNT} devices)")
    return cls


# --- 4. model inspection in-process ---------------------------------------------------------

def _inspect_in_process():
    from vllm.model_executor.models import registry

    registry._run_in_subprocess = lambda fn: fn()
    PATCHES.append("vllm.model_executor.models.registry._run_in_subprocess(fn) -> fn() (in the forked case process)")


# --- the case -------------------------------------------------------------------------------

def _last_vllm_frame(tb) -> str | None:
    frame = None
    for fs in traceback.extract_tb(tb):
        fn = fs.filename.replace(os.sep, "/")
        if "/vllm/" in fn and "/site-packages/" in fn:
            frame = f"vllm/{fn.split('/vllm/', 1)[1]}:{fs.lineno}"
    return frame


ENVIRONMENT_MARKERS = (
    # refusals this CPU-only machine or the stubs cause, never a recipe's fault
    "<stub op", "stubbed compiled extension", "Torch not compiled with CUDA enabled",
    "Found no NVIDIA driver", "libcuda", "nvmlInit", "NVML", "CUDA driver", "cudaGetDevice",
    "No CUDA GPUs are available", "NoneType' object is not callable",
)


def _classify(exc: BaseException, tb_text: str) -> str:
    text = f"{type(exc).__name__}: {exc}"
    for marker in ENVIRONMENT_MARKERS:
        if marker in text:
            return "environment"
    # an error raised inside a stub's caller because a stub returned None
    if isinstance(exc, (AttributeError, TypeError)) and "<stub op" in tb_text:
        return "environment"
    return "rejected"


def _select_backend(vllm_config):
    """The target's attention backend, as the model runner's attention layers ask for it."""

    from vllm.config import set_current_vllm_config
    from vllm.v1.attention import selector

    kwargs = _selector_kwargs(vllm_config)
    if hasattr(selector, "_cached_get_attn_backend"):
        selector._cached_get_attn_backend.cache_clear()
    with set_current_vllm_config(vllm_config):
        backend = selector.get_attn_backend(**kwargs)
    return backend.get_name()


def _selector_kwargs(vllm_config) -> dict:
    """What the model's attention layers pass the selector."""
    import inspect

    from vllm.v1.attention import selector

    mc = vllm_config.model_config
    cc = vllm_config.cache_config
    kwargs = dict(head_size=mc.get_head_size(), dtype=mc.dtype, kv_cache_dtype=cc.cache_dtype,
                  block_size=cc.block_size, use_mla=mc.use_mla)
    params = inspect.signature(selector.get_attn_backend).parameters
    kwargs = {k: v for k, v in kwargs.items() if k in params}
    if "use_sparse" in params:
        kwargs["use_sparse"] = bool(getattr(mc, "is_deepseek_mla", False) and
                                    hasattr(mc.hf_text_config, "index_topk"))
    return kwargs


IMPL_REFUSALS = (ValueError, NotImplementedError)  # what an attention impl raises for what it does not support


def _build_impl(vllm_config, backend_name: str):
    """The selected backend's attention implementation, as the model's attention layers build it
    (`backend.get_impl_cls()(...)` with the model's heads, head size and KV-cache dtype), so that
    constructor gates (TritonAttentionImpl refuses an FP8 KV cache below SM89) are in reach. MLA
    implementations take the model's latent dimensions as well: not built (None)."""
    import inspect

    from vllm.config import set_current_vllm_config
    from vllm.v1.attention import selector

    mc, cc, pc = vllm_config.model_config, vllm_config.cache_config, vllm_config.parallel_config
    if mc.use_mla:
        return None
    head_size = mc.get_head_size()
    values = dict(num_heads=mc.get_num_attention_heads(pc), head_size=head_size, scale=head_size ** -0.5,
                  num_kv_heads=mc.get_num_kv_heads(pc), alibi_slopes=None, sliding_window=None,
                  kv_cache_dtype=cc.cache_dtype, logits_soft_cap=None, attn_type="decoder",
                  kv_sharing_target_layer_name=None)
    with set_current_vllm_config(vllm_config):
        impl_cls = selector.get_attn_backend(**_selector_kwargs(vllm_config)).get_impl_cls()
        params = inspect.signature(impl_cls.__init__).parameters
        impl_cls(**{k: v for k, v in values.items() if k in params})
    return impl_cls.__name__


def _run_case(case: dict, out_path: str) -> None:
    started = time.monotonic()
    result = {"id": case["id"], "outcome": None, "exception": None, "message": None, "frame": None,
              "stage": None, "backend": None}
    stage = "setup"
    try:
        work = tempfile.mkdtemp(prefix="oracle-")
        model = os.path.join(work, "model")
        os.makedirs(model)
        with open(os.path.join(model, "config.json"), "w") as f:
            json.dump(case["model_config"], f)
        engine = json.loads(json.dumps(case["engine"]))
        if case.get("draft_config"):
            draft = os.path.join(work, "draft")
            os.makedirs(draft)
            with open(os.path.join(draft, "config.json"), "w") as f:
                json.dump(case["draft_config"], f)
            spec = engine.get("speculative_config")
            if isinstance(spec, dict) and spec.get("model") == "@draft":
                spec["model"] = draft
        for key, value in case.get("env", {}).items():
            os.environ[key] = value
        import vllm.envs as envs

        if hasattr(envs, "disable_envs_cache"):
            envs.disable_envs_cache()
        from vllm.engine.arg_utils import EngineArgs

        stage = "engine-args"
        args = EngineArgs(model=model, skip_tokenizer_init=True, load_format="dummy", **engine)
        stage = "create_engine_config"
        from vllm.usage.usage_lib import UsageContext

        config = args.create_engine_config(usage_context=UsageContext.OPENAI_API_SERVER)
        stage = "attention-backend"
        result["backend"] = _select_backend(config)
        stage = "attention-impl"
        try:
            result["impl"] = _build_impl(config, result["backend"])
        except IMPL_REFUSALS:
            raise  # the implementation refuses what the recipe asks of it
        except Exception as exc:  # noqa: BLE001 - building it on this CPU-only machine is out of reach
            result["impl"] = None
            result["impl_unbuilt"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        result["outcome"] = "starts"
    except BaseException as exc:  # noqa: BLE001 - every refusal is the answer
        tb_text = traceback.format_exc()
        result["outcome"] = _classify(exc, tb_text)
        result["exception"] = type(exc).__name__
        result["message"] = str(exc)[:2000]
        result["frame"] = _last_vllm_frame(exc.__traceback__)
        result["traceback_tail"] = tb_text[-3000:]
    result["stage"] = stage
    result["stub_calls"] = sorted(set(STUB_CALLS))
    result["stubbed_modules"] = sorted(set(FINDER.stubbed)) if FINDER else []
    result["seconds"] = round(time.monotonic() - started, 2)
    with open(out_path, "w") as f:
        json.dump(result, f)


def _prepare(capability, name):
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("VLLM_CACHE_ROOT", tempfile.mkdtemp(prefix="oracle-vllm-cache-"))
    os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    global FINDER
    finder = FINDER = _ExtensionStubFinder()
    sys.meta_path.insert(0, finder)
    _stub_op_namespaces()
    _triton_driver_active()
    _install_platform(capability, name)
    _inspect_in_process()
    import vllm.engine.arg_utils  # noqa: F401 - import what every case needs once, before forking

    STUB_CALLS.clear()

    PATCHES.insert(0, "compiled extension modules stubbed: " + ", ".join(sorted(set(finder.stubbed))))
    return finder


def _prepared_worker(conn, capability, name):
    """A process with the platform patched for one GPU; forks one child per case."""
    try:
        _prepare(capability, name)
        conn.send({"ready": True, "patches": PATCHES})
    except BaseException as exc:  # noqa: BLE001
        conn.send({"ready": False, "error": f"{type(exc).__name__}: {exc}", "traceback": traceback.format_exc()})
        return
    ctx = multiprocessing.get_context("fork")
    while True:
        msg = conn.recv()
        if msg is None:
            return
        case, out_path, timeout = msg
        p = ctx.Process(target=_run_case, args=(case, out_path))
        t0 = time.monotonic()
        p.start()
        p.join(timeout)
        if p.is_alive():
            p.kill()
            p.join()
            res = {"id": case["id"], "outcome": "environment", "exception": "Timeout",
                   "message": f"no answer within {timeout} s (killed)", "frame": None, "stage": None}
        elif not os.path.exists(out_path):
            res = {"id": case["id"], "outcome": "environment", "exception": "Crash",
                   "message": f"the case process died with exit code {p.exitcode}", "frame": None, "stage": None}
        else:
            with open(out_path) as f:
                res = json.load(f)
        res.setdefault("seconds", round(time.monotonic() - t0, 2))
        conn.send(res)


def run(cases: list[dict], timeout: float = 120.0, log=None) -> dict:
    """Every case's outcome, grouped by GPU: one prepared process per GPU, one fork per case."""
    ctx = multiprocessing.get_context("spawn")
    results: list[dict] = []
    patches_by_gpu: dict[str, list[str]] = {}
    tmp = tempfile.mkdtemp(prefix="oracle-results-")
    groups: dict[tuple, list[dict]] = {}
    for case in cases:
        groups.setdefault((tuple(case["gpu"]["capability"]), case["gpu"]["name"]), []).append(case)
    for (cap, name), group in groups.items():
        parent, child = ctx.Pipe()
        worker = ctx.Process(target=_prepared_worker, args=(child, cap, name))
        worker.start()
        hello = parent.recv()
        if not hello.get("ready"):
            worker.join()
            raise RuntimeError(f"could not prepare vLLM for {name} {cap}: {hello['error']}\n{hello['traceback']}")
        patches_by_gpu[f"{cap[0]}.{cap[1]} {name}"] = hello["patches"]
        for case in group:
            out_path = os.path.join(tmp, f"{len(results)}.json")
            parent.send((case, out_path, timeout))
            res = parent.recv()
            results.append(res)
            if log:
                log(f"[{len(results)}/{len(cases)}] {res['id']}: {res['outcome']} "
                    f"{res.get('exception') or ''} {res.get('backend') or ''} ({res['seconds']} s)")
        parent.send(None)
        worker.join()
    import vllm

    return {"vllm": vllm.__version__, "patches": patches_by_gpu, "results": results}


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("out")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--only", help="run only cases whose id contains this")
    ns = ap.parse_args(argv)
    with open(ns.cases) as f:
        cases = json.load(f)
    if ns.only:
        cases = [c for c in cases if ns.only in c["id"]]
    t0 = time.monotonic()
    report = run(cases, timeout=ns.timeout, log=lambda m: print(m, file=sys.stderr, flush=True))
    report["wall_seconds"] = round(time.monotonic() - t0, 1)
    with open(ns.out, "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
