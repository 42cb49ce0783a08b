"""What one walk of a function records: the raw material of traces, reads and outcomes.

A Frame appends these while it interprets a body; the call graph and the queries turn them
into anchored results (srcreview.interp.results). Lines are the source lines of the node.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class CallEvent:
    line: int
    end_line: int
    text: str
    target: object  # FuncRef | Ref | ClassRef | None
    via: str  # "call" | "init" | "property" | "super"
    status: str  # "static" | "unresolved" | "external" | "builtin"
    reason: str = ""
    args: tuple = field(default=(), compare=False)  # positional values, then keyword values
    kwargs: tuple = field(default=(), compare=False)  # ((name, value), ...)

    def argument(self, name: str, position: int | None = None):
        """The value passed as keyword `name` (or at `position`), if the call passed one."""
        found = next((v for k, v in self.kwargs if k == name), None)
        if found is None and position is not None:
            positional = self.args[: len(self.args) - len(self.kwargs)]
            if position < len(positional):
                found = positional[position]
        return found


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
    kind: Literal["dynamic-getattr", "kwargs-forward", "dunder-dict"]
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
    in_loop: bool = False  # inside a loop body that may not run, or a try that may catch it
    # for a call that raises: where the raise is, callee first ((qualname, path, line, end_line), ...)
    chain: tuple = ()

    @property
    def certain(self) -> bool:
        """Reached on the path the recipe decides: no undecided condition, nothing skipping it."""
        return not self.conditions and not self.in_loop


@dataclass(frozen=True)
class StoreEvent:
    """`x.attr = value`: where (the receiver, its config path when it has one), under which
    undecided conditions of this walk."""

    line: int
    end_line: int
    text: str
    receiver: object
    attr: str
    value: object
    conditions: tuple[Condition, ...]
    path: tuple[str, ...] | None = None
    in_loop: bool = False
