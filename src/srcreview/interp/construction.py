"""What runs while the engine builds its config: the configs' post-init hooks and validators.

vLLM turns its arguments into a VllmConfig (`EngineArgs.create_engine_config`), and each
config validates itself as it is built (`__post_init__`, pydantic `model_validator`s of mode
"after"). What they store and whether they raise decide what the rest of the engine sees, so
the interpreter walks them once per recipe, before any question: the speculative config's
hooks (when the recipe uses one), then VllmConfig's. It is an effects walk: calls on config
objects run although their value is not needed, the config fields they store land on the
runtime's heap (a store under an undecided condition makes the field unknown; the recipe's own
values are taken as final), and their raises are kept. A raise reached on the path the recipe
decides, nothing catching it, means the engine refuses the recipe at start-up.

The values the walk starts from are the recipe's, and for what it leaves unset, what the
engine passes (srcreview.interp.resolver: EngineArgs defaults, the root `VllmConfig(...)`
arguments, declared defaults of fields the engine does not pass). Nothing here runs when the
tree has no EngineArgs (pattern fixtures).
"""

from __future__ import annotations

from dataclasses import dataclass

from srcreview.interp.events import RaiseEvent
from srcreview.interp.runtime import ROOT_CONFIG
from srcreview.interp.values import Obj

SPECULATIVE = "speculative_config"
AFTER_VALIDATORS = ("model_validator",)


@dataclass(frozen=True)
class Rejection:
    """A raise reached while the engine builds its config, on the path the recipe decides."""

    function: str  # qualname of the function walked (the hook), where the raise or the raising call is
    raise_event: RaiseEvent
    path: str  # file of that function


@dataclass(frozen=True)
class Construction:
    built: bool  # whether the hooks were walked (a tree with EngineArgs and VllmConfig)
    rejections: tuple[Rejection, ...] = ()
    hooks: tuple[str, ...] = ()  # qualnames of the post-init hooks and validators walked


def build(an) -> Construction:
    """Walk the config's post-init hooks and validators for `an` (an Analyzer) once; see the
    module doc."""
    index = an.index
    runtime = an.runtime
    root_cls = _root_class(index)
    if root_cls is None or runtime.engine_class() is None:
        return Construction(False)
    root = Obj(cls=root_cls, path=(), nonnull=True, origin="self")
    entries = []
    if SPECULATIVE in runtime.prefix_keys:
        spec = an.resolver.attribute(root, SPECULATIVE)
        spec_cls = an.resolver.canonical(spec.cls) if isinstance(spec, Obj) and isinstance(spec.cls, str) else None
        if spec_cls is not None:
            entries += [(q, spec) for q in hooks(index, spec_cls)]
            runtime.walked.add(spec_cls)
    entries += [(q, root) for q in hooks(index, root_cls)]
    runtime.walked.add(root_cls)
    frames = an.construct(entries)
    rejections = []
    for (qualname, _), walked in zip(entries, frames):
        for event in walked.raises:
            if event.certain:
                rejections.append(Rejection(qualname, event, walked.symbol.path))
    return Construction(True, tuple(rejections), tuple(q for q, _ in entries))


def _root_class(index) -> str | None:
    """The qualname of VllmConfig at this revision (None when absent or ambiguous)."""
    from srcreview.errors import DataError

    try:
        info = index.class_info(ROOT_CONFIG)
    except DataError:
        return None
    return info.qualname if info is not None else None


def hooks(index, cls: str) -> list[str]:
    """The methods that run when an instance of `cls` is built: `__post_init__`, then the
    pydantic validators of mode "after" (in the order the class declares them)."""
    info = index._class_info_abs(cls)
    if info is None:
        return []
    out = []
    if "__post_init__" in info.methods:
        out.append(info.methods["__post_init__"].qualname)
    for name, symbol in info.methods.items():
        fn = index.function(symbol.qualname)
        if fn is None:
            continue
        if any(d.split("(")[0].split(".")[-1] in AFTER_VALIDATORS and "after" in d for d in fn.facts.decorators):
            out.append(symbol.qualname)
    return out
