"""What the generic interpreter asks of the framework it interprets, as one installed object.

The interpreter knows Python; what a framework's code means beyond Python (which class is the
root config, what a platform call answers, a field's engine default, a config built by the
engine before any question is asked) is that framework's model, written above the interpreter
(`srcreview.vllm.domain`) and installed once, the way pytype installs its overlays and mypy its
plugins. The interpreter never imports it: the dependency points down, from the model to here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Protocol


class Domain(Protocol):
    """The framework model the Analyzer consults (srcreview.vllm.domain.VLLM implements it)."""

    @property
    def root_config(self) -> str:
        """The class whose instance is the whole config (`VllmConfig`)."""

    @property
    def builder(self) -> str:
        """The engine-arguments method that builds it (`create_engine_config`)."""

    @property
    def capability_calls(self) -> Collection[str]:
        """Platform methods answered from the recipe's GPU."""

    @property
    def platform_predicates(self) -> Mapping[str, Any]:
        """`current_platform.is_cuda()` and the platform each names."""

    @property
    def probe_calls(self) -> Collection[str]:
        """Out-of-tree calls probing what is installed (`find_spec`): the runtime answers them."""

    @property
    def model_config(self) -> str:
        """The config class that holds the model's own config."""

    @property
    def hf_config(self) -> str:
        """Its attribute that is the model's config."""

    @property
    def undecided(self) -> object:
        """What `static_default` returns for a default that is not static."""

    def external_names(self, qualname: str) -> frozenset[str] | None:
        """The public names an out-of-tree class (`torch.nn.Module`) has in its namespace, as
        its stub lists them; None when none describes it (srcreview.vllm.stubs)."""

    def entry_arguments(self, index: Any, qualname: str) -> Mapping[str, Any]:
        """Values the framework's own caller passes a function for parameters a walk of it
        leaves unbound (the usage context `vllm serve` hands the engine's builder)."""

    def summary_statement(self, qualname: str, params: tuple[str, ...]) -> str | None:
        """The one statement the walk takes a function's body to be (in its parameters), where
        the framework model summarizes it; None for a function walked as written."""

    def runtime(self, index: Any, bindings: dict) -> Any:
        """The per-recipe runtime model: bindings, env, platform, the config heap."""

    def builder_locals(self, index: Any, qualname: str) -> Mapping[str, str]:
        """Locals of a config builder that hold a config, by the config path they hold."""

    def entry_fields(self, index: Any, qualname: str) -> Collection[str]:
        """The fields of `self` that, in a walk of `qualname`, hold their declared (or bound)
        value at entry and are stored by nothing but that function's own statements: the walk
        tracks them store by store (empty for most functions)."""

    @property
    def external_calls(self) -> Collection[str]:
        """The names of the calls outside the tree `external_call` may answer."""

    def external_call(self, analyzer: Any, name: str, args: list, kwargs: list, forwards: bool) -> Any:
        """What a call outside the tree returns when the framework model knows it from what the
        review holds (transformers' reading of a model config srcreview read); None otherwise."""

    def builder_flow(self, index: Any, qualname: str) -> Any:
        """For the function entry_fields tracks fields of: those fields (`tracked`) and, per
        method name it calls on `self`, the fields that call may store (`stores`); else None."""

    def self_written(self, index: Any, cls: str) -> Collection[str]:
        """The fields of `cls` its own methods assign."""

    def static_default(self, index: Any, info: Any, field: Any) -> Any:
        """A field's declared default, or `undecided`."""

    def factory_class(self, field: Any) -> str | None:
        """The class a field's default factory builds."""

    def model_hf_config(self, resolver: Any, obj: Any) -> Any:
        """The value of a model config object's `hf_config`."""

    def construct(self, analyzer: Any) -> Any:
        """The engine's config construction, walked once for `analyzer`."""

    def hooks(self, index: Any, cls: str) -> list[str]:
        """The post-init hooks of `cls`, in the order they run."""

    def passed_argument(self, analyzer: Any, cls: str, name: str) -> Any:
        """What the engine's builder passes for field `name` when it builds `cls`, when the
        walk decides it (None otherwise)."""

    def hook_entries(self, analyzer: Any, cls: str, obj: Any) -> list[tuple]:
        """The walks building `cls` at `obj` runs: `(hook, obj[, arguments])`, the arguments a
        mapping or an object whose `resolve()` gives one when the walk reaches the hook."""


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
