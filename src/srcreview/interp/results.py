"""What the call graph and the queries answer: frozen, sortable, JSON-able dataclasses, and how
a walk's events (srcreview.interp.events) become them, anchored on the source."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from srcreview.core.tags import SiteKind
from srcreview.model.findings import Anchor


@dataclass(frozen=True)
class Hop:
    """One function on a path, and the call that led to it."""

    symbol: str
    path: str
    start_line: int
    end_line: int
    anchor: Anchor
    call_line: int | None = None
    call_anchor: Anchor | None = None
    via: str = "call"  # "entry" | "call" | "init" | "property" | "super" | "dispatch"


@dataclass(frozen=True)
class Assumption:
    """A branch condition the evaluator could not decide from the bindings: both sides followed."""

    text: str
    function: str
    anchor: Anchor
    reason: str = ""
    taken: bool | None = None  # the side assumed on this path; None when both sides were followed


@dataclass(frozen=True)
class Site:
    """A place in the source the analysis could not see through (or a call it could not resolve)."""

    kind: SiteKind  # also the tag a result that rests on it carries
    text: str
    function: str
    anchor: Anchor


@dataclass(frozen=True)
class Trace:
    entry: str
    sink: str | None
    bindings: tuple[tuple[str, object], ...]
    paths: tuple[tuple[Hop, ...], ...]
    functions: tuple[str, ...]
    reachable: tuple[str, ...]
    assumptions: tuple[Assumption, ...] = ()
    unresolved: tuple[Site, ...] = ()
    dynamic: tuple[Site, ...] = ()
    found_sink: bool = False
    contexts: tuple[tuple[str, str | None], ...] = ()  # (function, class of self) for each inspected function
    edges: tuple[tuple[str, str, int, str], ...] = ()  # (caller, callee, call line, via) explored
    depth: int = 0  # how many call levels were explored


@dataclass(frozen=True)
class Read:
    field: str  # "SpeculativeConfig.kv_cache_dtype"
    function: str
    kind: str  # "direct" | "alias" | "getattr-literal" | "getattr-table"
    anchor: Anchor
    text: str
    line: int


@dataclass(frozen=True)
class FieldReads:
    field: str
    reads: tuple[Read, ...]
    dynamic: tuple[Site, ...]
    functions: tuple[str, ...]
    exists: bool = True  # False when the class or field is absent at this revision (a stale rule)




@dataclass(frozen=True)
class RunnerDecision:
    value: str | None  # "v1" | "v2" | None
    reason: str
    evidence: tuple[Anchor, ...] = ()
    assumptions: tuple[Assumption, ...] = ()


@dataclass(frozen=True)
class Outcome:
    value: object = None
    decided: bool = False
    raises: tuple[Site, ...] = ()
    assumptions: tuple[Assumption, ...] = ()
    returns: tuple[Anchor, ...] = field(default=())
    certain_raises: tuple[Site, ...] = ()  # raises reached on a path that assumes no undecided condition
    branches: tuple[tuple[int, bool | None], ...] = ()  # (test line, value under the bindings; None: undecided)
    platform: bool = False  # a platform predicate (is_cuda()...) was answered from hardware.platform


# -- from a walk's events ----------------------------------------------------------------------


def frame_anchor(index, frame, line: int, end: int, role: str) -> Anchor:
    """An anchor on lines of the function a frame walked."""
    return index.anchor(frame.symbol.path, line, end, frame.symbol.qualname, role)


def assumptions_of(index, frame):
    """The undecided conditions of a walk, and each env var it read as unset."""
    for c in frame.assumptions:
        yield Assumption(c.text, frame.symbol.qualname, frame_anchor(index, frame, c.line, c.end_line, "assumption"),
                         c.reason)
    for name, (line, end) in sorted(frame.env_reads.items()):
        yield Assumption(f"env {name} unset", frame.symbol.qualname,
                         frame_anchor(index, frame, line, end, "assumption"),
                         "env-unset: not set by the recipe, taken as unset")


def unresolved_of(index, frame):
    """The calls of a walk that could not be followed (in the tree or out of it)."""
    for c in frame.calls:
        if c.status in ("unresolved", "external"):
            kind: SiteKind = "unresolved-call" if c.status == "unresolved" else "external-call"
            yield Site(kind, f"{c.text}: {c.reason}" if c.reason else c.text, frame.symbol.qualname,
                       frame_anchor(index, frame, c.line, c.end_line, kind))


def dynamic_of(index, frame):
    """The dynamic accesses of a walk (getattr with a run-time name, **kwargs, __dict__)."""
    for d in frame.dynamic:
        yield Site(d.kind, d.text, frame.symbol.qualname, frame_anchor(index, frame, d.line, d.end_line, d.kind))


def unique(items) -> tuple:
    """Sites or assumptions without repeats, in anchor order."""
    seen: dict[Any, Any] = {}
    for item in items:
        seen.setdefault(item, None)
    return tuple(sorted(seen, key=lambda s: (s.anchor.path, s.anchor.start_line, s.text)))
