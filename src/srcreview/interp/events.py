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

    @property
    def as_taken(self) -> str:
        """The condition as the current path has it: `not (x)` on the side where `x` is false."""
        return self.text if self.taken is not False else f"not ({self.text})"


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
    # for a call that raises: where the raises are, callee first ((qualname, path, line, end_line,
    # text), ...); a callee that raises on every path by different raises lists each
    chain: tuple = ()
    # what its undecided conditions read: config paths (("scheduler_config", "max_num_seqs")) and
    # bare names (("max_model_len",), a parameter); what a knob's row rests on (Frame.cond_reads)
    reads: tuple[tuple[str, ...], ...] = field(default=(), compare=False)
    # what the decided tests of the ifs around it read (the same kinds of reads): the values that
    # steer the path into it, whose rows a certain raise refuses (startup_knobs.rejected_rows)
    guard_reads: tuple[tuple[str, ...], ...] = field(default=(), compare=False)

    @property
    def certain(self) -> bool:
        """Reached on the path the recipe decides: no undecided condition, nothing skipping it."""
        return not self.conditions and not self.in_loop


def raises_on_every_path(symbol, raises: list[RaiseEvent]) -> RaiseEvent:
    """The raise a call of `symbol` stands for when its walk returns on no path: its raises are
    the alternatives. One raise (or one text) is that raise; several name each, with the
    undecided conditions that choose between them, so that no single raise is claimed certain
    when only "one of them" is."""
    alternatives = list(dict.fromkeys(raises))
    chain: tuple = ()
    texts = []
    for event in alternatives:
        when = " and ".join(c.as_taken for c in event.conditions)
        text = f"{event.text} (if {when})" if when and len(alternatives) > 1 else event.text
        texts.append(text)
        chain += ((symbol.qualname, symbol.path, event.line, event.end_line, text),) + event.chain
    same = len({e.text for e in alternatives}) == 1  # whichever path, the same exception
    text = alternatives[0].text if same else "one of " + "; ".join(dict.fromkeys(texts))
    first = alternatives[0]
    reads = tuple(dict.fromkeys(r for e in alternatives for r in e.reads))
    guard_reads = tuple(dict.fromkeys(r for e in alternatives for r in e.guard_reads))
    return RaiseEvent(first.line, first.end_line, text, (), False, chain, reads, guard_reads)


MAY_RAISE_LIMIT = 24  # possible raises a call hands to its caller: enough to name them, bounded


def may_raise(symbol, raises: list[RaiseEvent]) -> tuple[RaiseEvent, ...]:
    """The raises a call of `symbol` may reach when its walk also returns on some path: each
    stays a possible raise of the caller (an effects walk must not lose a raise because it sits
    one call down), named through the callee."""
    out = []
    for event in list(dict.fromkeys(raises))[:MAY_RAISE_LIMIT]:
        conditions = event.conditions or (Condition(f"{symbol.local}() returns on another path", event.line,
                                                    event.end_line, "the callee also returns"),)
        out.append(RaiseEvent(event.line, event.end_line, event.text, conditions, event.in_loop,
                              ((symbol.qualname, symbol.path, event.line, event.end_line, event.text),) + event.chain,
                              event.reads))
    return tuple(out)


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
