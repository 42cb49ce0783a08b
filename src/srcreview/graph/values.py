"""Abstract values of the safe evaluator: what an expression may be, never computed by eval."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Const:
    """A value known exactly (strings, numbers, None, tuples, enum members, capabilities)."""

    value: object


@dataclass(frozen=True)
class EnumMember:
    """`AttentionBackendEnum.TRITON_ATTN`: equal to itself and to its name (vLLM parses backends by name)."""

    enum: str
    name: str

    def matches(self, other) -> bool | None:
        if isinstance(other, EnumMember):
            return self.enum.split(".")[-1] == other.enum.split(".")[-1] and self.name == other.name
        if isinstance(other, str):
            return self.name == other or self.name == other.upper()
        if other is None:
            return False
        return None


@dataclass(frozen=True)
class Obj:
    """An instance: its class when known (absolute or as-written dotted name), and its config path.

    `path` is the dotted position under VllmConfig (("speculative_config", "method")) when the
    object was reached from a config root; bindings are looked up by it. `owner`/`attr` say
    which class attribute it was read from, so a call on it resolves to that method.
    """

    cls: str | None = None
    path: tuple[str, ...] | None = None
    nonnull: bool = False
    alias: bool = False
    owner: str | None = None
    attr: str | None = None
    receiver: "Obj | None" = field(default=None, compare=False, hash=False)
    origin: str = ""

    def key(self) -> str:
        return ".".join(self.path) if self.path is not None else ""


@dataclass(frozen=True)
class ClassRef:
    qualname: str


@dataclass(frozen=True)
class FuncRef:
    qualname: str
    bound: "Obj | ClassRef | None" = field(default=None, compare=False, hash=False)
    via: str = "call"


@dataclass(frozen=True)
class Ref:
    """A name statically bound by an import to an in-tree dotted name, resolved (parsed) only when needed."""

    dotted: str


@dataclass(frozen=True)
class ModuleRef:
    name: str


@dataclass(frozen=True)
class External:
    """Something outside the tree (torch, os, typing...): its dotted name as imported."""

    name: str


@dataclass(frozen=True)
class Builtin:
    name: str


@dataclass(frozen=True)
class BoundBuiltin:
    """A method of a known value (`"x".startswith`, `capability.to_int`), computed for constants only."""

    name: str
    receiver: object


@dataclass(frozen=True)
class Super:
    cls: str  # the class whose method called super()
    self_obj: Obj | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class OneOf:
    """A loop variable drawn from a constant table: one of `values` (from `source`)."""

    values: tuple
    source: str


@dataclass(frozen=True)
class ListVal:
    """A local list being built: at least `min_len` items, maybe more."""

    min_len: int = 0
    maybe_more: bool = False


@dataclass(frozen=True)
class LazyCall:
    """The result of a call, computed only if a condition needs it."""

    target: object  # FuncRef | Ref | ClassRef
    args: tuple = ()
    kwargs: tuple = ()
    text: str = ""


@dataclass(frozen=True)
class Unknown:
    reason: str = "unknown"


@dataclass(frozen=True)
class Union:
    options: tuple


NONE = Const(None)
UNKNOWN_VALUE = Unknown()
