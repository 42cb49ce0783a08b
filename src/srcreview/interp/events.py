"""What one walk of a function records: the raw material of traces, reads and outcomes.

A Frame appends these while it interprets a body; the call graph and the queries turn them
into anchored results (srcreview.interp.results). Lines are the source lines of the node.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class CallEvent:
    line: int
    end_line: int
    text: str
    target: object  # FuncRef | Ref | ClassRef | None
    via: str  # "call" | "init" | "property" | "super"
    status: str  # "static" | "unresolved" | "external" | "builtin"
    reason: str = ""
    args: tuple = field(default=(), compare=False)


@dataclass(frozen=True)
class ReadEvent:
    line: int
    end_line: int
    text: str
    receiver: object
    attr: str
    kind: str  # "direct" | "alias" | "getattr-literal" | "getattr-table"


@dataclass(frozen=True)
class DynamicEvent:
    kind: str  # "dynamic-getattr" | "kwargs-forward" | "dunder-dict"
    line: int
    end_line: int
    text: str
    receiver: object = field(default=None, compare=False)


@dataclass(frozen=True)
class Condition:
    """A branch condition the walk could not decide, and the side taken on the current path."""

    text: str
    line: int
    end_line: int
    reason: str
    taken: bool | None = None


@dataclass(frozen=True)
class Decision:
    """A branch condition the walk decided from the bindings."""

    text: str
    line: int
    end_line: int
    value: bool


@dataclass(frozen=True)
class ReturnEvent:
    line: int
    end_line: int
    value: object
    conditions: tuple[Condition, ...]


@dataclass(frozen=True)
class RaiseEvent:
    line: int
    end_line: int
    text: str
    conditions: tuple[Condition, ...]
    in_loop: bool = False  # inside a loop body that may not run: reached only if it runs
