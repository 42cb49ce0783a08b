"""What the generic interpreter asks of the framework it interprets, as one installed object.

The interpreter knows Python; what a framework's code means beyond Python (which class is the
root config, what a platform call answers, a field's engine default, a config built by the
engine before any question is asked) is that framework's model, written above the interpreter
(`srcreview.vllm.domain`) and installed once, the way pytype installs its overlays and mypy its
plugins. The interpreter never imports it: the dependency points down, from the model to here.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Protocol


class Domain(Protocol):
    """The framework model the Analyzer consults (srcreview.vllm.domain.VLLM implements it)."""

    root_config: str  # the class whose instance is the whole config (`VllmConfig`)
    builder: str  # the engine-arguments method that builds it (`create_engine_config`)
    capability_calls: Collection[str]  # platform methods that answer from the recipe's GPU
    platform_predicates: Mapping[str, Any]  # `current_platform.is_cuda()` and its kind
    model_config: str  # the config class that holds the model's own config
    hf_config: str  # its attribute that is the model's config
    undecided: object  # a field default that is not static

    runtime: Callable[..., Any]  # (index, bindings) -> the per-recipe runtime model
    builder_locals: Callable[..., Mapping[str, str]]  # (index, qualname) -> local -> config path
    self_written: Callable[..., Collection[str]]  # (index, class) -> fields its methods assign
    static_default: Callable[..., Any]  # (index, class info, field) -> default or `undecided`
    factory_class: Callable[..., str | None]  # (field) -> the class its default factory builds
    model_hf_config: Callable[..., Any]  # (resolver, ModelConfig object) -> its hf_config value
    construct: Callable[..., Any]  # (analyzer) -> the walked config construction
    hooks: Callable[..., list]  # (index, class) -> its post-init hooks, in the order they run


_installed: list[Domain] = []


def install(domain: Domain) -> None:
    """Make `domain` the model every Analyzer consults (installing the same one again is a no-op)."""
    if _installed and _installed[0] is not domain:
        raise RuntimeError("another framework model is installed already")
    if not _installed:
        _installed.append(domain)


def current() -> Domain:
    """The installed framework model; an Analyzer cannot run without one."""
    if not _installed:
        raise RuntimeError("no framework model installed: import srcreview.vllm.domain before analysing")
    return _installed[0]
