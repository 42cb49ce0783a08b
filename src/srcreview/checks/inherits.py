"""inherits: the config the sink receives keeps the target's value of a field.

The check follows the feasible path from the entry to the sink, takes the config argument
of the sink call and looks at every assignment to it before the call on the feasible side
of each branch (conditions evaluated with the recipe bound; an unset nested key has its
declared default). `inherited`: nothing on the feasible path replaces the container that
carries the field; `overridden`: a replacement of it is certain; otherwise `undecided`.
"""

from __future__ import annotations

from srcreview.checks import CheckContext, CheckResult, short, stale
from srcreview.checks._common import EntryParams, site_anchor, class_info, field_anchor, find_one, resolve_entries, split_field
from srcreview.checks._ir import UNDECIDED, call_kwarg, call_name, dotted, evaluate, iter_calls
from srcreview.checks._knobs import resolve_key
from srcreview.findings import Hop

OUTCOMES = ("inherited", "overridden", "undecided")
UNDECIDED_OUTCOMES = ("undecided",)
_SET = object()


class Params(EntryParams):
    sink: str
    argument: str  # the sink's keyword (or parameter) that receives the config
    container: str  # the field of that config that carries `field` (e.g. attention_config)
    field: str  # "AttentionConfig.backend": for messages and the declaration anchor
    engine_class: str = "EngineArgs"
    container_class: str = "VllmConfig"
    max_depth: int = 12


def run(ctx: CheckContext, params: Params, subject=None) -> CheckResult:
    from srcreview.graph import trace

    index = ctx.index
    cls_name, attr = split_field(params.field)
    cls = class_info(ctx, cls_name)
    declared = cls.field(attr) if cls is not None else None
    missing = [params.field] if declared is None else []
    sink, found = find_one(index, params.sink)
    if not found:
        missing.append(params.sink)
    entries = resolve_entries(ctx, params)
    missing += list(entries.missing)
    if missing:
        return stale(missing)
    if not entries.entries:
        return CheckResult("undecided", tags=entries.tags, reason=entries.undecided)
    if sink is None:
        return CheckResult("undecided", tags=("ambiguous-symbol",), reason=f"{params.sink} names several functions")

    outcomes, evidence, hops, tags, assumptions, reasons, symbols = [], [], [], set(), set(), [], []
    for entry in entries.entries:
        key = f"trace:{entry.symbol.qualname}:{sink.qualname}:{params.max_depth}"
        t = ctx.memoized(key, lambda e=entry: trace(index, e.symbol.qualname, ctx.bindings, sink=sink.qualname,
                                                    max_depth=params.max_depth))
        evidence += entry.evidence
        hops += entry.hops
        assumptions.update(entry.assumptions)
        if not t.found_sink or not t.paths:
            outcomes.append("undecided")
            tags.add("unresolved-call")
            reasons.append(f"{params.sink} is not reached from {short(entry.symbol.qualname)}")
            continue
        path = t.paths[0]
        for hop in path[1:]:
            anchor = (hop.call_anchor or hop.anchor).model_copy(update={
                "symbol": short(hop.symbol).split(".")[-1], "role": f"calls {short(hop.symbol)}"})
            evidence.append(anchor)
            hops.append(Hop(kind="sink" if hop is path[-1] else "call", text=f"-> {short(hop.symbol)}", anchor=anchor))
        symbols += [short(h.symbol) for h in path]
        caller = index.function(path[-2].symbol) if len(path) >= 2 else None
        if caller is None:
            outcomes.append("undecided")
            reasons.append("the function calling the sink is not indexed")
            continue
        outcome, ev, hp, why, tg = _flow(ctx, params, caller, path[-1].call_line)
        outcomes.append(outcome)
        evidence += ev
        hops += hp
        tags.update(tg)
        if why:
            reasons.append(why)
    outcome = outcomes[0] if len(set(outcomes)) == 1 else "undecided"
    if len(set(outcomes)) > 1:
        tags.add("runtime-branch")
        reasons.append("the feasible entries disagree")
    evidence.append(field_anchor(ctx, declared, f"declares {params.field}", cls))
    details = {"field": params.field, "container": params.container, "sink": params.sink,
               "entries": ", ".join(short(e.symbol.qualname) for e in entries.entries)}
    return CheckResult(outcome, evidence=_dedupe(evidence), trace=tuple(hops), tags=tuple(sorted(tags)),
                       assumptions=tuple(sorted(assumptions)), details=details,
                       symbols=(params.field, *dict.fromkeys(symbols)), reason="; ".join(reasons))


def _flow(ctx, params, caller, call_line):
    """Follow the sink's config argument backwards through the caller's body."""
    facts = caller.facts
    path = caller.symbol.path
    sink_name = params.sink.split(".")[-1]
    call = next((c for c in iter_calls(facts.body) if c[1] <= (call_line or 0) <= c[2]
                 and (call_name(c) or "").split(".")[-1] == sink_name), None)
    if call is None:
        return "undecided", [], [], f"the call of {params.sink} is not found in {short(caller.qualname)}", ("unresolved-call",)
    arg = call_kwarg(call, params.argument)
    if arg is None:
        positional = [p.name for p in facts.params if p.kind == "positional"]
        arg = call[4][0] if call[4] and positional[:1] == [params.argument] else None
    name = dotted(arg) if arg is not None else None
    if name is None or "." in name:
        return "undecided", [], [], f"the {params.argument} passed to {params.sink} is not a local name", ("runtime-branch",)
    evidence = [ctx.anchor(path, call[1], call[2], sink_name, f"passes {name} to {params.sink}")]
    hops = [Hop(kind="call", text=f"{short(caller.qualname)} passes {name} to {params.sink}", anchor=evidence[0])]
    aliases = _aliases(facts.body)
    lookup = _lookup(ctx, params, aliases)
    assigns = []  # (stmt, target, source name or None, replaced keys, conditional), in source order

    def walk(body, conditional):
        for stmt in body:
            if stmt[1] >= call[1]:
                return
            kind = stmt[0]
            if kind == "assign" and len(stmt[3]) == 1 and stmt[3][0][0] == "name":
                value = stmt[4]
                if value[0] == "call" and (call_name(value) or "").split(".")[-1] == "replace" and value[4]:
                    assigns.append((stmt, stmt[3][0][3], dotted(value[4][0]), {k for k, _ in value[5] if k}, conditional))
                else:
                    assigns.append((stmt, stmt[3][0][3], None, set(), conditional))
            elif kind == "if":
                test = evaluate(stmt[3], lookup)
                shown = "undecided" if test is UNDECIDED else bool(test)
                anchor = ctx.anchor(path, stmt[3][1], stmt[3][2], _last_attr(stmt[3]) or "if",
                                    f"branch: {' '.join(stmt[6].split())} -> {shown} under the recipe")
                evidence.append(anchor)
                hops.append(Hop(kind="branch", text=f"if {' '.join(stmt[6].split())}: {shown}", anchor=anchor))
                if test is UNDECIDED:
                    walk(stmt[4], True)
                    walk(stmt[5], True)
                elif test:
                    walk(stmt[4], conditional)
                else:
                    walk(stmt[5], conditional)
            elif kind in ("with", "try", "for", "while"):
                inner = stmt[{"with": 4, "try": 3, "for": 5, "while": 4}[kind]]
                walk(inner, conditional or kind in ("for", "while"))

    walk(facts.body, False)
    current, before = name, call[1]
    while True:
        prior = [a for a in assigns if a[1] == current and a[0][1] < before]
        if not prior:
            break
        stmt, _target, source, keys, conditional = prior[-1]
        if source is None:
            evidence.append(ctx.anchor(path, stmt[1], stmt[2], current, f"assigns {current} from something other than a replace"))
            return "undecided", evidence, hops, f"{current} is assigned from something other than a replace", ("runtime-branch",)
        role = f"{current} = replace({source}, {', '.join(sorted(keys)) or 'nothing'})"
        evidence.append(ctx.anchor(path, stmt[1], stmt[2], "replace", role))
        hops.append(Hop(kind="note", text=role + (" (under an undecided branch)" if conditional else ""), anchor=evidence[-1]))
        if params.container in keys:
            if conditional:
                return "undecided", evidence, hops, f"{params.container} is replaced under an undecided branch", ("runtime-branch",)
            return "overridden", evidence, hops, "", ()
        if conditional and source != current:
            return "undecided", evidence, hops, f"{current} may come from {source} or not", ("runtime-branch",)
        current, before = source, stmt[1]
    params_names = {p.name for p in facts.params}
    if current not in params_names:
        return "undecided", evidence, hops, f"{current} is not traced back to a parameter of {short(caller.qualname)}", ("runtime-branch",)
    hops.append(Hop(kind="note", text=f"{params.sink} receives {name} with {params.container} of parameter {current} "
                    f"unchanged: {params.field} is inherited"))
    return "inherited", evidence, hops, "", ()


def _aliases(body) -> dict[str, str]:
    """`spec = vllm_config.speculative_config` -> {"spec": "vllm_config.speculative_config"}."""
    from srcreview.checks._ir import walk_statements

    out = {}
    for stmt in walk_statements(body):
        if stmt[0] == "assign" and len(stmt[3]) == 1 and stmt[3][0][0] == "name":
            value = dotted(stmt[4])
            if value:
                out[stmt[3][0][3]] = value
    return out


def _lookup(ctx, params, aliases):
    def lookup(name: str):
        head, _, rest = name.partition(".")
        if head in aliases:
            name = aliases[head] + (f".{rest}" if rest else "")
        parts = name.split(".")
        for i in range(len(parts)):
            key = ".".join(parts[i:])
            if key in ctx.bindings:
                return ctx.bindings[key]
            if any(k.startswith(key + ".") for k in ctx.bindings):
                return _SET
            if i > 0 and len(parts) - i <= 2:
                decl = resolve_key(ctx, key, params.engine_class, params.container_class)
                if decl.status == "exists" and decl.parent is not None:
                    value = decl.field.value
                    from srcreview.index import UNKNOWN

                    return UNDECIDED if value is UNKNOWN else value
        return UNDECIDED

    return lookup


def _last_attr(expr) -> str | None:
    for node in _walk(expr):
        if node[0] == "attr":
            return node[4]
    return None


def _walk(expr):
    from srcreview.checks._ir import iter_exprs

    return list(iter_exprs(expr))


def _dedupe(anchors):
    seen, out = set(), []
    for a in anchors:
        key = (a.path, a.start_line, a.end_line, a.symbol, a.role)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return tuple(out)
