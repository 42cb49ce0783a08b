"""field-applied: a config field is read on the recipe-feasible paths from an entry to a sink.

`applied` needs one read on a feasible path; `not-applied` needs every function inspected on
the feasible paths, none reading the field, no dynamic access or unresolved call that could
read it, and no function that mentions the field reachable without being inspected. With
`max_depth = 0` only the entry itself is read: a read there proves `applied`, nothing proves
the absence. Anything else is `undecided`, with the reason tagged.
"""

from __future__ import annotations

from typing import TypedDict

from srcreview.checks import CheckContext, CheckResult, short
from srcreview.checks._common import (
    EntryParams,
    dedupe,
    field_anchor,
    path_hops,
    site_anchor,
    trace_start,
    traced,
)
from srcreview.index.facts import MODULE_CODE
from srcreview.model.findings import Anchor, Hop
from srcreview.vllm.anchors import PACKAGE_DIR

OUTCOMES = ("applied", "not-applied", "undecided")
UNDECIDED_OUTCOMES = ("undecided",)
MAX_ELSEWHERE = 6


class Details(TypedDict, total=False):
    """The values this kind's claims may name ({key} in a rule's text)."""

    field: str
    default: str | None
    entries: str


class Params(EntryParams):
    field: str
    sink: str | None = None
    max_depth: int = 12
    show_declaration: bool = False


def run(ctx: CheckContext, params: Params, subject=None) -> CheckResult:
    from srcreview.interp import field_reads

    start = trace_start(ctx, params, params.field, params.sink)
    if isinstance(start, CheckResult):
        return start
    cls, attr, declared, sink, entry = start.cls, start.attr, start.declared, start.sink, start.entry
    declaration = field_anchor(ctx, declared, f"declares {params.field} (default {declared.default})", cls)
    details: Details = {"field": params.field, "default": declared.default, "entries": short(entry.symbol.qualname)}
    evidence, hops = list(entry.evidence), list(entry.hops)
    if params.show_declaration:
        evidence.append(declaration)
    field = f"{cls.symbol.qualname}.{attr}"
    if params.max_depth == 0:  # the entry alone: a read there proves `applied`, nothing proves the absence
        reads = field_reads(ctx.index, [entry.symbol.qualname], field, bindings=ctx.bindings)
        return _result(ctx, params, reads.reads, evidence, hops, details, declaration, entry,
                       undecided=("not-traced", f"no read of {params.field} in the entry itself (the rule does not "
                                  "trace further)"))
    t = traced(ctx, entry, sink.qualname if sink is not None else None, params.max_depth)
    path = t.paths[0] if t.paths else ()
    path_evidence, path_hop_list = path_hops(path, sink_kind=bool(params.sink))
    evidence += path_evidence
    hops += path_hop_list
    symbols = [short(h.symbol) for h in path] or [short(entry.symbol.qualname)]
    if params.sink and not t.found_sink:
        return _undecided(evidence, hops, details, symbols, declaration, "unresolved-call",
                          f"{params.sink} is not reached from {short(entry.symbol.qualname)}")
    reads = field_reads(ctx.index, t, field)
    if reads.reads:
        return _result(ctx, params, reads.reads, evidence, hops, details, declaration, entry, symbols=symbols)
    dynamic = list(reads.dynamic) + list(t.dynamic) + [s for s in t.unresolved if _may_receive_config(s.text)]
    if dynamic:
        for site in dynamic:
            anchor = site_anchor(site)
            evidence.append(anchor)
            hops.append(Hop(kind="note", text=f"{site.kind}: {site.text}", anchor=anchor))
        return _undecided(evidence, hops, details, symbols, declaration, sorted({s.kind for s in dynamic}),
                          "dynamic access, or an unresolved call that receives a config object, on the path")
    seen = set(t.functions) | set(t.reachable)
    elsewhere = mentions(ctx, attr)
    on_path = sorted(q for q, _ in elsewhere if q in seen and q not in t.functions)
    if on_path:
        return _undecided(evidence, hops, details, symbols, declaration, "unresolved-call",
                          f"{', '.join(short(q) for q in on_path)} mention {attr} and are reachable")
    for qualname in t.functions:
        info = ctx.index.function(qualname)
        if info is not None:
            evidence.append(ctx.anchor(info.symbol.path, info.symbol.start_line, info.symbol.end_line,
                                       short(qualname), f"inspected: no read of {params.field}"))
    hops.append(Hop(kind="note", text=f"inspected {len(t.functions)} function(s): "
                    + ", ".join(short(q) for q in t.functions) + f"; none reads {params.field}"))
    evidence += [a for q, a in elsewhere if q not in seen][:MAX_ELSEWHERE]
    if not params.show_declaration:
        evidence.append(declaration)
    return CheckResult("not-applied", evidence=dedupe(evidence), trace=tuple(hops), details=details,
                       symbols=(params.field, *dict.fromkeys(symbols)))


def _result(ctx, params, reads, evidence, hops, details, declaration, entry, undecided=None, symbols=()):
    for read in reads:
        anchor = read.anchor.model_copy(update={"symbol": params.field, "role": f"reads {params.field} ({read.kind})"})
        evidence.append(anchor)
        hops.append(Hop(kind="read", text=f"reads {params.field}: {read.text}", anchor=anchor))
    symbols = symbols or [short(entry.symbol.qualname)]
    if reads:
        return CheckResult("applied", evidence=dedupe(evidence), trace=tuple(hops), details=details,
                           symbols=(params.field, *dict.fromkeys(symbols)))
    tag, reason = undecided
    return _undecided(evidence, hops, details, symbols, declaration, tag, reason)


def _undecided(evidence, hops, details, symbols, declaration, tags, reason) -> CheckResult:
    tags = (tags,) if isinstance(tags, str) else tuple(tags)
    return CheckResult("undecided", evidence=dedupe([*evidence, declaration]), trace=tuple(hops), details=details,
                       symbols=(details["field"], *dict.fromkeys(symbols)), tags=tags, reason=reason, open=(reason,))


def _may_receive_config(call_text: str) -> bool:
    """Whether an unresolved call could be handed a config object (by the names it passes)."""
    import re

    call = call_text.split("): ", 1)[0]  # the call as written; the rest is the analysis' explanation
    return bool(re.search(r"config|cfg", call, re.IGNORECASE))


def mentions(ctx: CheckContext, attr: str) -> list[tuple[str, Anchor]]:
    """Every function in vllm/ whose text mentions `.attr` (or the string "attr"): a raw, cheap
    superset of the readers of the field, with an anchor on the first mention. Files are found
    by a byte-level search; functions by the line ranges of the index's facts."""
    import re

    def compute():
        pattern = re.compile(rf"\.{re.escape(attr)}\b|[\"']{re.escape(attr)}[\"']")
        found = []
        for path in ctx.index.grep_re(pattern.pattern, prefix=PACKAGE_DIR, literal=attr):
            lines = ctx.tree.read_text(path).splitlines()
            hits = [n for n, line in enumerate(lines, 1) if pattern.search(line)]
            module = ctx.index.module(path, allow_unparsable=True)
            dotted = path[:-3].replace("/", ".").removesuffix(".__init__")
            if module.parse_error:  # context only, but never silently dropped
                found += [(dotted,
                           ctx.anchor(path, hits[0], hits[0], attr, f"{path} mentions .{attr} but does not parse"))]
                continue
            innermost: dict[str, int] = {}
            for n in hits:
                holders = [f for f in module.functions.values()
                           if f.start_line <= n <= f.end_line and f.name != MODULE_CODE]
                if holders:
                    fn = min(holders, key=lambda f: f.end_line - f.start_line)
                    innermost.setdefault(fn.qualname, n)
            for qualname, n in sorted(innermost.items()):
                role = f"{qualname} mentions .{attr}: not on the feasible path"
                found.append((f"{dotted}.{qualname}", ctx.anchor(path, n, n, attr, role)))
        return sorted(found, key=lambda item: item[0])

    return ctx.memoized(f"mentions:{attr}", compute)
