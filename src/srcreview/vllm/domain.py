"""vLLM as the interpreter's framework model: what vLLM's code means beyond Python, installed once.

The generic interpreter (srcreview.interp) asks its installed Domain (srcreview.interp.domain)
which class is the root config, what a platform call answers, what a field's engine default is
and how the engine builds its config; this module answers with vLLM's runtime model and installs
`VLLM`. Whatever starts an analysis of vLLM's source installs it first
(`srcreview.interp.domain.install(VLLM)`: the engine, the commands that walk the source).
"""

from __future__ import annotations

from srcreview.vllm import construction, model_registry, models, stubs
from srcreview.vllm import runtime as vllm_runtime


class VllmDomain:
    """The vLLM runtime model behind srcreview.interp.domain.Domain."""

    root_config = vllm_runtime.ROOT_CONFIG
    builder = vllm_runtime.BUILDER
    capability_calls = vllm_runtime.CAPABILITY_CALLS
    platform_predicates = vllm_runtime.PLATFORM_PREDICATES
    probe_calls = vllm_runtime.PROBE_CALLS
    model_config = models.MODEL_CONFIG
    hf_config = models.HF_CONFIG
    undecided = vllm_runtime.UNDECIDED

    @staticmethod
    def runtime(index, bindings: dict) -> vllm_runtime.Runtime:
        return vllm_runtime.Runtime(index, bindings)

    builder_locals = staticmethod(vllm_runtime.builder_locals)
    self_written = staticmethod(vllm_runtime.self_written)
    entry_fields = staticmethod(vllm_runtime.builder_tracked_fields)
    builder_flow = staticmethod(vllm_runtime.builder_flow)
    static_default = staticmethod(vllm_runtime.static_default)
    factory_class = staticmethod(vllm_runtime.factory_class)
    model_hf_config = staticmethod(models.hf_config)
    external_calls = models.CONFIG_DICT_CALLS
    external_call = staticmethod(models.external_call)
    hooks = staticmethod(construction.hooks)
    hook_entries = staticmethod(construction.hook_entries)
    passed_argument = staticmethod(construction.passed_argument)

    entry_arguments = staticmethod(vllm_runtime.entry_arguments)
    external_names = staticmethod(stubs.external_names)

    @staticmethod
    def summary_statement(qualname: str, params: tuple[str, ...]) -> str | None:
        return model_registry.SUMMARIES.get(qualname) if params == ("self", "model_arch") else None

    @staticmethod
    def construct(analyzer) -> construction.Construction:
        """The engine's config construction walked once for `analyzer`; while it is walked, a
        question asked of the analyzer sees no construction (a build in progress is not one)."""
        analyzer.construction = construction.Construction(False)
        return construction.build(analyzer)


VLLM = VllmDomain()
