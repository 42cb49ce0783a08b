"""field-applied: a config field is read on the recipe-feasible paths from an entry to a sink.

`applied` needs one read on a feasible path; `not-applied` needs every function inspected on
the feasible paths, none reading the field, and no dynamic access or unresolved call that
could read it. Anything else is `undecided`, with the reason tagged.
"""

from __future__ import annotations

from srcreview.checks import CheckContext, CheckResult, short, stale
from srcreview.checks._common import EntryParams, class_info, field_anchor, find_one, resolve_entries, split_field
from srcreview.findings import Hop

OUTCOMES = ("applied", "not-applied", "undecided")
UNDECIDED_OUTCOMES = ("undecided",)


class Params(EntryParams):
    field: str
    sink: str | None = None
    max_depth: int = 12
    show_declaration: bool = False


def run(ctx: CheckContext, params: Params, subject=None) -> CheckResult:
    from srcreview.graph import field_reads, trace

    index = ctx.index
    cls_name, attr = split_field(params.field)
    cls = class_info(ctx, cls_name)
    declared = cls.field(attr) if cls is not None else None
    missing = [params.field] if declared is None else []
    sink, found = find_one(index, params.sink) if params.sink else (None, [])
    if params.sink and not found:
        missing.append(params.sink)
    entries = resolve_entries(ctx, params)
    missing += list(entries.missing)
    if missing:
        return stale(missing)
    if not entries.entries:
        return CheckResult("undecided", tags=entries.tags, reason=entries.undecided)
    if params.sink and sink is None:
        return CheckResult("undecided", tags=("ambiguous-symbol",), reason=f"{params.sink} names several functions")
    sink_name = sink.qualname if sink is not None else None

    declaration = field_anchor(ctx, declared, f"declares {params.field} (default {declared.default})")
    details = {"field": params.field, "default": declared.default, "entries": ", ".join(
        short(e.symbol.qualname) for e in entries.entries)}
    outcomes, evidence, hops, tags, assumptions, reasons, symbols = [], [], [], set(), set(), [], []
    if params.show_declaration:
        evidence.append(declaration)
    for entry in entries.entries:
        key = f"trace:{entry.symbol.qualname}:{sink_name}:{params.max_depth}"
        t = ctx.memoized(key, lambda e=entry: trace(index, e.symbol.qualname, ctx.bindings, sink=sink_name,
                                                    max_depth=params.max_depth))
        reads = field_reads(index, t, params.field)
        evidence += entry.evidence
        hops += entry.hops
        assumptions.update(entry.assumptions)
        assumptions.update(a.text for a in t.assumptions)
        path = t.paths[0] if t.paths else ()
        for hop in path[1:]:
            anchor = hop.call_anchor or hop.anchor
            evidence.append(anchor.model_copy(update={"symbol": short(hop.symbol).split(".")[-1],
                                                      "role": f"calls {short(hop.symbol)}"}))
            hops.append(Hop(kind="sink" if params.sink and hop is path[-1] else "call",
                            text=f"-> {short(hop.symbol)}", anchor=anchor))
        symbols += [short(h.symbol) for h in path] or [short(entry.symbol.qualname)]
        if params.sink and not t.found_sink:
            outcomes.append("undecided")
            tags.add("unresolved-call")
            reasons.append(f"{params.sink} is not reached from {short(entry.symbol.qualname)}")
            continue
        if reads.reads:
            outcomes.append("applied")
            for read in reads.reads:
                evidence.append(read.anchor.model_copy(update={"symbol": params.field,
                                                                "role": f"reads {params.field} ({read.kind})"}))
                hops.append(Hop(kind="read", text=f"reads {params.field}: {read.text}", anchor=read.anchor))
            continue
        dynamic = list(reads.dynamic) + list(t.dynamic) + list(t.unresolved)
        if dynamic:
            outcomes.append("undecided")
            for site in dynamic:
                tags.add(site.kind)
                evidence.append(site.anchor.model_copy(update={"role": f"{site.kind}: {site.text}"}))
                hops.append(Hop(kind="note", text=f"{site.kind}: {site.text}", anchor=site.anchor))
            reasons.append("dynamic access or unresolved calls on the path")
            continue
        outcomes.append("not-applied")
        for qualname in t.functions:
            info = index.function(qualname)
            if info is None:
                continue
            evidence.append(ctx.anchor(info.symbol.path, info.symbol.start_line, info.symbol.end_line,
                                       short(qualname), f"inspected: no read of {params.field}"))
        hops.append(Hop(kind="note", text=f"inspected {len(t.functions)} function(s): "
                        + ", ".join(short(q) for q in t.functions) + f"; none reads {params.field}"))
    outcome = outcomes[0] if len(set(outcomes)) == 1 else "undecided"
    if len(set(outcomes)) > 1:
        tags.add("runtime-branch")
        reasons.append("the feasible entries disagree: " + ", ".join(
            f"{short(e.symbol.qualname)}={o}" for e, o in zip(entries.entries, outcomes)))
    if outcome != "applied" and not params.show_declaration:
        evidence.append(declaration)
    return CheckResult(outcome, evidence=_dedupe(evidence), trace=tuple(hops), tags=tuple(sorted(tags)),
                       assumptions=tuple(sorted(assumptions)), details=details,
                       symbols=(params.field, *dict.fromkeys(symbols)), reason="; ".join(reasons))


def _dedupe(anchors):
    seen, out = set(), []
    for a in anchors:
        key = (a.path, a.start_line, a.end_line, a.symbol)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return tuple(out)
