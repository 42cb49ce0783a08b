"""field-applied: a config field is read on the recipe-feasible paths from an entry to a sink.

`applied` needs one read on a feasible path; `not-applied` needs every function inspected on
the feasible paths, none reading the field, and no dynamic access or unresolved call that
could read it. Anything else is `undecided`, with the reason tagged.
"""

from __future__ import annotations

from srcreview.checks import CheckContext, CheckResult, short
from srcreview.checks._common import (
    EntryParams,
    combine,
    entries_text,
    field_anchor,
    path_hops,
    site_anchor,
    trace_start,
    traced,
)
from srcreview.findings import Hop

OUTCOMES = ("applied", "not-applied", "undecided")
UNDECIDED_OUTCOMES = ("undecided",)


class Params(EntryParams):
    field: str
    sink: str | None = None
    max_depth: int = 12
    show_declaration: bool = False


def run(ctx: CheckContext, params: Params, subject=None) -> CheckResult:
    from srcreview.interp import field_reads

    index = ctx.index
    start = trace_start(ctx, params, params.field, params.sink)
    if isinstance(start, CheckResult):
        return start
    cls, attr, declared, sink, entries = start.cls, start.attr, start.declared, start.sink, start.entries
    sink_name = sink.qualname if sink is not None else None

    declaration = field_anchor(ctx, declared, f"declares {params.field} (default {declared.default})", cls)
    details = {"field": params.field, "default": declared.default, "entries": entries_text(entries)}
    outcomes, evidence, hops, tags, assumptions, reasons, symbols = [], [], [], set(), set(), [], []
    if params.show_declaration:
        evidence.append(declaration)
    if params.max_depth == 0:  # the entry alone: a read there proves `applied`, nothing proves the absence
        return _local(ctx, params, cls, attr, entries, declaration, details)
    for entry in entries.entries:
        t = traced(ctx, entry, sink_name, params.max_depth)
        reads = field_reads(index, t, f"{cls.symbol.qualname}.{attr}")
        evidence += entry.evidence
        hops += entry.hops
        if t.assumptions:
            hops.append(Hop(kind="note", text="branches undecided under the recipe: both sides followed"))
        path = t.paths[0] if t.paths else ()
        path_evidence, path_hop_list = path_hops(path, sink_kind=bool(params.sink))
        evidence += path_evidence
        hops += path_hop_list
        if entry is entries.entries[0]:  # the fingerprint names the path of the candidate the recipe selects
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
        dynamic = list(reads.dynamic) + list(t.dynamic)
        blind = [site for site in t.unresolved if _may_receive_config(site.text)]
        dynamic += blind
        if dynamic:
            outcomes.append("undecided")
            for site in dynamic:
                tags.add(site.kind)
                anchor = site_anchor(site)
                evidence.append(anchor)
                hops.append(Hop(kind="note", text=f"{site.kind}: {site.text}", anchor=anchor))
            reasons.append("dynamic access, or an unresolved call that receives a config object, on the path")
            continue
        seen = set(t.functions) | set(t.reachable)
        elsewhere = _mentions(ctx, attr)
        on_path = sorted(q for q, _ in elsewhere if q in seen and q not in t.functions)
        if on_path:
            outcomes.append("undecided")
            tags.add("unresolved-call")
            reasons.append(f"{', '.join(short(q) for q in on_path)} mention {attr} and are reachable")
            continue
        for site in t.unresolved:
            hops.append(Hop(kind="note", text=f"{site.kind} {site.text}: receives no config object",
                            anchor=site_anchor(site)))
        outcomes.append("not-applied")
        for qualname in t.functions:
            info = index.function(qualname)
            if info is None:
                continue
            evidence.append(ctx.anchor(info.symbol.path, info.symbol.start_line, info.symbol.end_line,
                                       short(qualname), f"inspected: no read of {params.field}"))
        hops.append(Hop(kind="note", text=f"inspected {len(t.functions)} function(s): "
                        + ", ".join(short(q) for q in t.functions) + f"; none reads {params.field}"))
        others = [a for q, a in elsewhere if q not in seen][:MAX_ELSEWHERE]
        evidence.extend(others)
        if elsewhere:
            hops.append(Hop(kind="note", text=f"{len(elsewhere)} function(s) in the tree mention .{attr}; none is on the "
                            f"feasible path: " + ", ".join(short(q) for q, _ in elsewhere[:MAX_ELSEWHERE])
                            + (" ..." if len(elsewhere) > MAX_ELSEWHERE else "")))
    combined = combine(entries, outcomes)
    outcome = combined.outcome
    hops += combined.hops
    tags.update(combined.tags)
    assumptions.update(combined.assumptions)
    if combined.reason:
        reasons.append(combined.reason)
    if outcome != "applied" and not params.show_declaration:
        evidence.append(declaration)
    return CheckResult(outcome, evidence=_dedupe(evidence), trace=tuple(hops), tags=tuple(sorted(tags)),
                       assumptions=tuple(sorted(assumptions)), details=details,
                       symbols=(params.field, *dict.fromkeys(symbols)), reason="; ".join(reasons))


MAX_ELSEWHERE = 6


def _local(ctx, params, cls, attr, entries, declaration, details) -> CheckResult:
    from srcreview.interp import field_reads

    evidence, hops, outcomes = [], [], []
    for entry in entries.entries:
        evidence += entry.evidence
        hops += entry.hops
        reads = field_reads(ctx.index, [entry.symbol.qualname], f"{cls.symbol.qualname}.{attr}")
        found = [(r.anchor.model_copy(update={"symbol": params.field, "role": f"reads {params.field} ({r.kind})"}),
                  r.text) for r in reads.reads]
        for anchor, text in found:
            evidence.append(anchor)
            hops.append(Hop(kind="read", text=f"reads {params.field}: {text}", anchor=anchor))
        outcomes.append("applied" if found else "undecided")
    outcome = "applied" if set(outcomes) == {"applied"} else "undecided"
    if params.show_declaration or outcome != "applied":
        evidence.append(declaration)
    return CheckResult(outcome, evidence=_dedupe(evidence), trace=tuple(hops), details=details,
                       symbols=(params.field, short(entries.entries[0].symbol.qualname)),
                       tags=() if outcome == "applied" else ("not-traced",),
                       reason="" if outcome == "applied" else f"no read of {params.field} in the entry itself "
                       "(the rule does not trace further)")


def _may_receive_config(call_text: str) -> bool:
    """Whether an unresolved call could be handed a config object (by the names it passes)."""
    import re

    call = call_text.split("): ", 1)[0]  # the call as written; the rest is the analysis' explanation
    return bool(re.search(r"config|cfg", call, re.IGNORECASE))


def _mentions(ctx: CheckContext, attr: str) -> list[tuple[str, object]]:
    """Every function in vllm/ whose text mentions `.attr` (or the string "attr"): a raw, cheap
    superset of the readers of the field, with an anchor on the first mention."""
    import ast
    import re

    def compute():
        pattern = re.compile(rf"\.{re.escape(attr)}\b|[\"']{re.escape(attr)}[\"']")
        found = []
        # the files with a mention (a byte-level superset of the text-level matches; remembered per revision)
        for path in ctx.index.grep_re(pattern.pattern, prefix="vllm/", literal=attr):
            text = ctx.tree.read_text(path)
            lines = text.splitlines()
            dotted_module = path[:-3].replace("/", ".").removesuffix(".__init__")
            try:
                module = ast.parse(text)
            except (SyntaxError, ValueError):  # context only, but never silently dropped
                hit = next((n for n, line in enumerate(lines, 1) if pattern.search(line)), None)
                if hit is not None:
                    found.append((dotted_module, ctx.anchor(path, hit, hit, attr,
                                                            f"{path} mentions .{attr} but does not parse")))
                continue
            stack = [(module, "")]
            while stack:
                node, prefix = stack.pop()
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        name = f"{prefix}{child.name}"
                        if not isinstance(child, ast.ClassDef):
                            hit = next((n for n in range(child.lineno, (child.end_lineno or child.lineno) + 1)
                                        if pattern.search(lines[n - 1])), None)
                            if hit is not None and not _nested_hit(child, hit):
                                found.append((f"{dotted_module}.{name}", ctx.anchor(
                                    path, hit, hit, attr, f"{name} mentions .{attr}: not on the feasible path")))
                        stack.append((child, f"{name}." if isinstance(child, ast.ClassDef) else f"{name}.<locals>."))
        return sorted(found, key=lambda item: item[0])

    return ctx.memoized(f"mentions:{attr}", compute)


def _nested_hit(func, line: int) -> bool:
    import ast

    return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n is not func
               and n.lineno <= line <= (n.end_lineno or n.lineno) for n in ast.walk(func))


def _dedupe(anchors):
    seen, out = set(), []
    for a in anchors:
        key = (a.path, a.start_line, a.end_line, a.symbol)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return tuple(out)
