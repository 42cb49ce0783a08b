"""vLLM's model registry as the walk sees it: the architectures' classes and what they support.

`ModelConfig.__post_init__` asks `ModelRegistry` whether the model's architecture generates,
pools, is multimodal or hybrid: `_ModelInfo.from_model_cls(cls)` on the architecture's class,
which vLLM computes in a fresh interpreter (`_run_in_subprocess`) and keeps in a cache file keyed
by the hash of the class's module. The walk computes it in place, from the class's own source
(srcreview.interp's class lookups, with the stubs of torch's `nn.Module`), summarizing
`_ModelRegistry._try_inspect_model_cls(arch)` by what each registered entry's inspection
computes, `_ModelInfo.from_model_cls(entry.load_model_cls())` (None for an architecture not
registered): a lazy entry's subprocess imports the model's module and calls that function, a
cache hit holds what it returned (the cache is keyed by the hash of the module's source), an
imported entry computed it when it was registered. That the module imports and its files read,
in a fresh interpreter, rests on the runtime profile (the release's packages, installed as its
requirements say), like every import the walk follows; a failure there is vLLM's "failed to be
inspected" (the handler returning None), which the walk does not reach from this summary.
The summary is walked with a depth budget of its own (srcreview.interp's Analyzer.body_of).

`ModelRegistry` itself is the instance its module builds at import, from `_VLLM_MODELS`, while
nothing can have registered another class: the tree registers only in the function that applies
the recipe's `model_class_overrides` (which the recipe leaves empty), and the profile runs no
plugins.
"""

from __future__ import annotations

import re

REGISTRY_MODULE = "vllm.model_executor.models.registry"
REGISTRY = "ModelRegistry"
REGISTERS = "register_model"
# the one function of the tree that registers, and the recipe's key it registers from
OVERRIDES_FUNCTION = "_maybe_register_model_class_overrides"
OVERRIDES_KEY = "model_config.model_class_overrides"

# function -> the one statement the walk takes its body to be
SUMMARIES = {
    f"{REGISTRY_MODULE}._ModelRegistry._try_inspect_model_cls":
        "return _ModelInfo.from_model_cls(self.models[model_arch].load_model_cls()) "
        "if model_arch in self.models else None",
}


def builds_at_import(index, bindings: dict, module: str, name: str, without_plugins) -> bool:
    """Whether the walk may take `module.name` as the instance its module builds at import:
    only `ModelRegistry`, where the recipe sets no `model_class_overrides`, every registration
    the tree makes sits in the function that applies them, and no plugin runs
    (`without_plugins()`, asked last: it counts as a platform answer)."""
    if (module, name) != (REGISTRY_MODULE, REGISTRY) or bindings.get(OVERRIDES_KEY):
        return False
    memo = index.memo.setdefault("registers_only_overrides", {})
    if module not in memo:
        memo[module] = _registers_only_overrides(index)
    return memo[module] and without_plugins()


def _registers_only_overrides(index) -> bool:
    """Whether every `.register_model(` call of the tree sits in the function that applies
    the recipe's `model_class_overrides`."""
    call = re.compile(rf"\.{REGISTERS}\(".encode())
    for path in index.grep(f".{REGISTERS}("):
        facts = index.module(path)
        text = index.raw_text(path)
        for match in call.finditer(text):
            line = text.count(b"\n", 0, match.start()) + 1
            holders = [f for f in facts.functions.values() if f.start_line <= line <= f.end_line]
            if not holders or max(holders, key=lambda f: f.start_line).name != OVERRIDES_FUNCTION:
                return False
    return True
