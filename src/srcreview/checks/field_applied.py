"""field-applied: a config field is read on the recipe-feasible paths from an entry to a sink.

`applied` needs one read on a feasible path; `not-applied` needs every function inspected on
the feasible paths, none reading the field, and no dynamic access or unresolved call that
could read it. Anything else is `undecided`, with the reason tagged.
"""

from __future__ import annotations

from srcreview.checks import CheckContext, CheckResult, short, stale
from srcreview.checks._common import (
    EntryParams,
    class_info,
    field_anchor,
    find_one,
    resolve_entries,
    site_anchor,
    split_field,
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

    declaration = field_anchor(ctx, declared, f"declares {params.field} (default {declared.default})", cls)
    details = {"field": params.field, "default": declared.default, "entries": ", ".join(
        short(e.symbol.qualname) for e in entries.entries)}
    outcomes, evidence, hops, tags, assumptions, reasons, symbols = [], [], [], set(), set(), [], []
    if params.show_declaration:
        evidence.append(declaration)
    if params.max_depth == 0:  # the entry alone: a read there proves `applied`, nothing proves the absence
        return _local(ctx, params, cls, attr, entries, declaration, details)
    for entry in entries.entries:
        key = f"trace:{entry.symbol.qualname}:{sink_name}:{params.max_depth}"
        t = ctx.memoized(key, lambda e=entry: trace(index, e.symbol.qualname, ctx.bindings, sink=sink_name,
                                                    max_depth=params.max_depth))
        reads = field_reads(index, t, f"{cls.symbol.qualname}.{attr}")
        evidence += entry.evidence
        hops += entry.hops
        assumptions.update(entry.assumptions)
        if t.assumptions:
            hops.append(Hop(kind="note", text="branches undecided under the recipe: both sides followed"))
        path = t.paths[0] if t.paths else ()
        for hop in path[1:]:
            anchor = (hop.call_anchor or hop.anchor).model_copy(update={
                "symbol": short(hop.symbol).split(".")[-1], "role": f"calls {short(hop.symbol)}"})
            evidence.append(anchor)
            hops.append(Hop(kind="sink" if params.sink and hop is path[-1] else "call",
                            text=f"-> {short(hop.symbol)}", anchor=anchor))
        symbols += [short(h.symbol) for h in path] or [short(entry.symbol.qualname)]
        if params.sink and not t.found_sink:
            outcomes.append("undecided")
            tags.add("unresolved-call")
            reasons.append(f"{params.sink} is not reached from {short(entry.symbol.qualname)}")
            continue
        retyped = [r for r in (_retype(ctx, site, cls, attr) for site in reads.dynamic) if r is not None]
        if reads.reads or retyped:
            outcomes.append("applied")
            for site, anchor, why in retyped:
                evidence.append(anchor)
                hops.append(Hop(kind="read", text=f"reads {params.field}: {site.text} ({why})", anchor=anchor))
            for read in reads.reads:
                evidence.append(read.anchor.model_copy(update={"symbol": params.field,
                                                                "role": f"reads {params.field} ({read.kind})"}))
                hops.append(Hop(kind="read", text=f"reads {params.field}: {read.text}", anchor=read.anchor))
            continue
        dynamic = list(reads.dynamic) + list(t.dynamic)
        blind = [site for site in t.unresolved if _may_receive_config(site.text)]
        dynamic += blind
        own = _dynamic_config_access(ctx, t.functions)
        if dynamic or own:
            outcomes.append("undecided")
            for site in dynamic:
                tags.add(site.kind)
                anchor = site_anchor(site)
                evidence.append(anchor)
                hops.append(Hop(kind="note", text=f"{site.kind}: {site.text}", anchor=anchor))
            for kind, anchor in own:
                tags.add(kind)
                evidence.append(anchor)
                hops.append(Hop(kind="note", text=anchor.role, anchor=anchor))
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


MAX_ELSEWHERE = 6


def _local(ctx, params, cls, attr, entries, declaration, details) -> CheckResult:
    from srcreview.graph import field_reads

    evidence, hops, outcomes = [], [], []
    for entry in entries.entries:
        evidence += entry.evidence
        hops += entry.hops
        reads = field_reads(ctx.index, [entry.symbol.qualname], f"{cls.symbol.qualname}.{attr}")
        found = [(r.anchor.model_copy(update={"symbol": params.field, "role": f"reads {params.field} ({r.kind})"}),
                  r.text) for r in reads.reads]
        found += [(anchor, site.text) for site, anchor, _ in
                  (x for x in (_retype(ctx, d, cls, attr) for d in reads.dynamic) if x is not None)]
        for anchor, text in found:
            evidence.append(anchor)
            hops.append(Hop(kind="read", text=f"reads {params.field}: {text}", anchor=anchor))
        outcomes.append("applied" if found else "undecided")
    outcome = "applied" if set(outcomes) == {"applied"} else "undecided"
    if params.show_declaration or outcome != "applied":
        evidence.append(declaration)
    return CheckResult(outcome, evidence=_dedupe(evidence), trace=tuple(hops), details=details,
                       symbols=(params.field, *(short(e.symbol.qualname) for e in entries.entries)),
                       tags=() if outcome == "applied" else ("not-traced",),
                       reason="" if outcome == "applied" else f"no read of {params.field} in the entry itself "
                       "(the rule does not trace further)")


def _retype(ctx: CheckContext, site, cls, attr: str):
    """Type an `untyped-read` the call graph left open: `a.attr` where `a = x.<field of the
    container config typed as cls>` and `x` is a parameter annotated with the container class
    or the result of a call whose declared return type is the container class."""
    from srcreview.checks._ir import call_name, dotted, walk_statements

    if site.kind != "untyped-read" or not site.text.endswith(f".{attr}"):
        return None
    receiver = site.text[: -len(attr) - 1]
    if "." in receiver:
        head, _, container_attr = receiver.rpartition(".")
        chain = [(head, container_attr)]
    else:
        chain = []
    fn = ctx.index.function(site.function)
    if fn is None:
        return None
    assigned = {}
    for stmt in walk_statements(fn.facts.body):
        if stmt[0] == "assign" and len(stmt[3]) == 1 and stmt[3][0][0] == "name":
            assigned.setdefault(stmt[3][0][3], []).append(stmt[4])
    if not chain:
        values = assigned.get(receiver, [])
        if len(values) != 1 or values[0][0] != "attr":
            return None
        head, container_attr = dotted(values[0][3]), values[0][4]
        if head is None:
            return None
        chain = [(head, container_attr)]
    head, container_attr = chain[0]
    holder = ctx.index.class_info("VllmConfig")
    if holder is None:
        return None
    holder_field = holder.field(container_attr)
    from srcreview.checks._common import strip_optional

    if holder_field is None or strip_optional(holder_field.annotation) != cls.symbol.local:
        return None
    param = next((p for p in fn.facts.params if p.name == head), None)
    typed = param is not None and strip_optional(param.annotation) == holder.symbol.local
    why = f"{head}: {holder.symbol.local} parameter"
    if not typed:
        values = assigned.get(head, [])
        if len(values) != 1 or values[0][0] != "call":
            return None
        callee = (call_name(values[0]) or "").rsplit(".", 1)[-1]
        module = fn.module.module
        target = ctx.index.resolve_name(module, callee, scope=fn.facts.qualname)
        info = ctx.index.function(target.qualname) if target is not None else None
        if info is None or strip_optional(info.facts.returns) != holder.symbol.local:
            return None
        why = f"{head} = {callee}() -> {holder.symbol.local}"
    anchor = site.anchor.model_copy(update={"symbol": f"{cls.symbol.local}.{attr}",
                                            "role": f"reads {cls.symbol.local}.{attr} ({why})"})
    return site, anchor, why


def _dynamic_config_access(ctx: CheckContext, qualnames) -> list[tuple[str, object]]:
    """A second look, independent of the call graph, for access by computed name to a config
    object in the inspected functions: `getattr(cfg, name)` with a non-literal name,
    `vars(cfg)`, `cfg.__dict__`. A receiver counts as a config when its name, or what it was
    assigned from, says so (config, cfg): conservative on purpose."""
    import re

    from srcreview.checks._ir import call_name, dotted, iter_exprs, walk_statements

    found = []
    for qualname in qualnames:
        info = ctx.index.function(qualname)
        if info is None:
            continue
        origin = {}
        for stmt in walk_statements(info.facts.body):
            if stmt[0] == "assign" and len(stmt[3]) == 1 and stmt[3][0][0] == "name":
                origin[stmt[3][0][3]] = dotted(stmt[4]) or ""

        def config_like(expr) -> bool:
            name = dotted(expr) or ""
            text = f"{name} {origin.get(name.split('.')[0], '')}"
            return bool(re.search(r"config|cfg", text, re.IGNORECASE))

        for expr in iter_exprs(info.facts.body):
            if expr[0] == "call":
                callee = call_name(expr) or ""
                args = expr[4]
                if callee == "getattr" and len(args) >= 2 and args[1][0] != "const" and config_like(args[0]):
                    found.append(("dynamic-getattr", ctx.anchor(info.symbol.path, expr[1], expr[2], "getattr",
                                  f"dynamic-getattr: getattr({dotted(args[0])}, <computed name>) in {short(qualname)}")))
                elif callee == "vars" and args and config_like(args[0]):
                    found.append(("dunder-dict", ctx.anchor(info.symbol.path, expr[1], expr[2], "vars",
                                  f"dunder-dict: vars({dotted(args[0])}) in {short(qualname)}")))
            elif expr[0] == "attr" and expr[4] == "__dict__" and config_like(expr[3]):
                found.append(("dunder-dict", ctx.anchor(info.symbol.path, expr[1], expr[2], "__dict__",
                              f"dunder-dict: {dotted(expr[3])}.__dict__ in {short(qualname)}")))
    return found


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
        for path in ctx.index.grep(attr, prefix="vllm/"):
            text = ctx.tree.read_text(path)
            lines = text.splitlines()
            try:
                module = ast.parse(text)
            except SyntaxError:
                continue
            dotted_module = path[:-3].replace("/", ".").removesuffix(".__init__")
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
