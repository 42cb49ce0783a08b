"""The model configs a review binds: one per model the recipe names, obtained before the analysis.

vLLM receives the target model as `model` (`[recipe] model` or an engine `model` key) and the
draft as `speculative_config.model`; an MTP draft without one is the target's own checkpoint
(the analysis follows that from the source). Each reference is read the way
srcreview.hfconfig reads it (a local directory directly, a Hub id through huggingface_hub),
and the recipe's `[model]` / `[draft_model]` values are laid over it. Nothing here fails a
review: a model whose config cannot be had says why once, and its branches stay open.

`mode`: "hub" (default: huggingface_hub decides, honouring HF_HUB_OFFLINE), "cache" (the
huggingface_hub cache only, no request) or "off" (no model config is read; only what the
recipe states).
"""

from __future__ import annotations

from pathlib import Path

from srcreview.core.errors import DataError
from srcreview.hfconfig import (
    apply_overrides,
    obtain_model_config,
    parse_model_ref,
    unknown_facts,
)
from srcreview.vllm.anchors import DRAFT_MODEL_KEY, DRAFT_REVISION_KEY

MODES = ("hub", "cache", "off")


def model_refs(recipe) -> list[tuple[str, str | None, str]]:
    """(reference, revision, role) of each model the recipe names, target first."""
    refs = []
    target = recipe.value("model", recipe.info.model)
    if isinstance(target, str) and target:
        refs.append((target, _text(recipe.value("revision")), "target"))
    draft = recipe.value(DRAFT_MODEL_KEY)
    if isinstance(draft, str) and draft and draft != target:
        refs.append((draft, _text(recipe.value(DRAFT_REVISION_KEY)), "draft"))
    return refs


def with_model_configs(recipe, *, base_dir: str | Path | None = None, mode: str = "hub"):
    """`recipe` with `models` filled: the config of each model it names (see the module doc)."""
    facts = []
    for text, revision, role in model_refs(recipe):
        overrides = recipe.model_overrides if role == "target" else recipe.draft_model_overrides
        facts.append(apply_overrides(_obtain(text, revision, base_dir, mode), overrides))
    return recipe.model_copy(update={"models": tuple(facts)})


def _obtain(text: str, revision: str | None, base_dir, mode: str):
    try:
        ref = parse_model_ref(text, revision=revision, base_dir=base_dir)
    except DataError as exc:
        return unknown_facts(str(exc), ref=text)
    if mode == "off":
        return unknown_facts("model configs are not read (--model-config off)", ref=text, kind=ref.kind,
                             revision=ref.revision)
    return obtain_model_config(ref, offline=True if mode == "cache" else None)


def _text(value) -> str | None:
    return value if isinstance(value, str) and value else None
