"""inherits: the config the sink receives keeps the target's value of a field.

The check follows the feasible path from the entry to the sink, takes the config argument
of the sink call and looks at every assignment to it before the call on the feasible side
of each branch (conditions evaluated with the recipe bound; an unset nested key has its
declared default). `inherited`: nothing on the feasible path replaces the container that
carries the field; `overridden`: a replacement of it is certain; otherwise `undecided`.
"""

from __future__ import annotations

from typing import Any

from srcreview.checks import CheckContext, CheckResult, short
from srcreview.checks._common import (
    EntryParams,
    combine,
    entries_text,
    field_anchor,
    path_hops,
    trace_start,
    traced,
)
from srcreview.checks._knobs import resolve_key
from srcreview.findings import Hop
from srcreview.index import ir
from srcreview.index.ir import dotted, iter_calls, iter_exprs, iter_statements

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
    index = ctx.index
    start = trace_start(ctx, params, params.field, params.sink)
    if isinstance(start, CheckResult):
        return start
    cls, declared, sink, entries = start.cls, start.declared, start.sink, start.entries

    outcomes, evidence, hops, tags, assumptions, reasons, symbols = [], [], [], set(), set(), [], []
    for entry in entries.entries:
        t = traced(ctx, entry, sink.qualname, params.max_depth)
        evidence += entry.evidence
        hops += entry.hops
        if not t.found_sink or not t.paths:
            outcomes.append("undecided")
            tags.add("unresolved-call")
            reasons.append(f"{params.sink} is not reached from {short(entry.symbol.qualname)}")
            continue
        path = t.paths[0]
        path_evidence, path_hop_list = path_hops(path)
        evidence += path_evidence
        hops += path_hop_list
        if entry is entries.entries[0]:  # the fingerprint names the path of the candidate the recipe selects
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
    combined = combine(entries, outcomes)
    outcome = combined.outcome
    hops += combined.hops
    tags.update(combined.tags)
    assumptions.update(combined.assumptions)
    if combined.reason:
        reasons.append(combined.reason)
    evidence.append(field_anchor(ctx, declared, f"declares {params.field}", cls))
    details = {"field": params.field, "container": params.container, "sink": params.sink,
               "entries": entries_text(entries)}
    return CheckResult(outcome, evidence=_dedupe(evidence), trace=tuple(hops), tags=tuple(sorted(tags)),
                       assumptions=tuple(sorted(assumptions)), details=details,
                       symbols=(params.field, *dict.fromkeys(symbols)), reason="; ".join(reasons))


def _flow(ctx, params, caller, call_line):
    """Follow the sink's config argument backwards through the caller's body."""
    facts = caller.facts
    path = caller.symbol.path
    sink_name = params.sink.split(".")[-1]
    call = next((c for c in iter_calls(facts.body) if c.line <= (call_line or 0) <= c.end_line
                 and (dotted(c.func) or "").split(".")[-1] == sink_name), None)
    if call is None:
        return "undecided", [], [], f"the call of {params.sink} is not found in {short(caller.qualname)}", ("unresolved-call",)
    arg = call.keyword(params.argument)
    if arg is None:
        positional = [p.name for p in facts.params if p.kind == "positional"]
        arg = call.args[0] if call.args and positional[:1] == [params.argument] else None
    name = dotted(arg) if arg is not None else None
    if name is None or "." in name:
        return "undecided", [], [], f"the {params.argument} passed to {params.sink} is not a local name", ("runtime-branch",)
    evidence = [ctx.anchor(path, call.line, call.end_line, sink_name, f"passes {name} to {params.sink}")]
    hops = [Hop(kind="call", text=f"{short(caller.qualname)} passes {name} to {params.sink}", anchor=evidence[0])]
    outcome, why, tags = _backward(ctx, params, caller, name, call.line, evidence, hops, depth=0)
    return outcome, evidence, hops, why, tags


MAX_CALL_DEPTH = 3


def _backward(ctx, params, info, name, before, evidence, hops, depth):
    """Where the config `name` holds at line `before` of function `info` comes from: follow its
    assignments back (replace() of another config, an alias, or the return value of an in-tree
    call) to a parameter or an attribute of self, noting every container replaced on the way."""
    facts = info.facts
    path = info.symbol.path
    lookup = _lookup(ctx, params, _aliases(facts.body))
    assigns = []  # (stmt, target, value, conditional), in source order

    def walk(body, conditional):
        for stmt in body:
            if stmt.line >= before:
                return
            if isinstance(stmt, ir.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ir.Name):
                assigns.append((stmt, stmt.targets[0].id, stmt.value, conditional))
            elif isinstance(stmt, ir.If):
                test = evaluate(stmt.test, lookup)
                shown = "undecided" if test is UNDECIDED else bool(test)
                text = " ".join(stmt.text.split())
                if _assigns_in(stmt):
                    anchor = ctx.anchor(path, stmt.test.line, stmt.test.end_line, _last_attr(stmt.test) or "if",
                                        f"branch: {text} -> {shown} under the recipe")
                    evidence.append(anchor)
                    hops.append(Hop(kind="branch", text=f"if {text}: {shown}", anchor=anchor))
                if test is UNDECIDED:
                    walk(stmt.body, True)
                    walk(stmt.orelse, True)
                elif test:
                    walk(stmt.body, conditional)
                else:
                    walk(stmt.orelse, conditional)
            elif isinstance(stmt, (ir.With, ir.Try, ir.For, ir.While)):
                walk(stmt.body, conditional or isinstance(stmt, (ir.For, ir.While)))

    walk(facts.body, False)
    aliases = _aliases(facts.body)
    keeps: list[str] = []  # origins the kept field values are read from
    current = name
    while True:
        prior = [a for a in assigns if a[1] == current and a[0].line < before]
        if not prior:
            break
        stmt, _target, value, conditional = prior[-1]
        before = stmt.line
        callee = (dotted(value.func) or "") if isinstance(value, ir.Call) else ""
        if callee.split(".")[-1] == "replace" and value.args and dotted(value.args[0]):
            source = dotted(value.args[0])
            keys = {k.name for k in value.keywords if k.name}
            role = f"{current} = replace({source}, {', '.join(sorted(keys)) or 'nothing'})"
            evidence.append(ctx.anchor(path, stmt.line, stmt.end_line, "replace", role))
            hops.append(Hop(kind="note", text=role + (" (under an undecided branch)" if conditional else ""),
                            anchor=evidence[-1]))
            kept = _keeps_field(params, value, aliases)
            if params.container in keys and kept is not None:
                # replace(cfg.attention_config, backend=<the target's own attention_config.backend>):
                # a new container, the same value of the field, if it is read from the config the chain ends at
                if kept != source:
                    keeps.append(kept)
                hops.append(Hop(kind="note", text=f"{params.container} is rebuilt with {params.field} = "
                                f"{kept}.{params.container}.{params.field.rsplit('.', 1)[-1]}: the value is kept",
                                anchor=evidence[-1]))
                current = source
                continue
            if params.container in keys:
                if conditional:
                    return "undecided", f"{params.container} is replaced under an undecided branch", ("runtime-branch",)
                return "overridden", "", ()
            if conditional and source != current:
                return "undecided", f"{current} may come from {source} or not", ("runtime-branch",)
            current = source
            continue
        if conditional:
            return "undecided", f"{current} is reassigned under an undecided branch", ("runtime-branch",)
        alias = dotted(value)
        if alias is not None:
            evidence.append(ctx.anchor(path, stmt.line, stmt.end_line, alias.split(".")[-1], f"{current} = {alias}"))
            hops.append(Hop(kind="note", text=f"{current} = {alias}", anchor=evidence[-1]))
            current = alias
            continue
        if isinstance(value, ir.Call) and depth < MAX_CALL_DEPTH:
            target = _resolve_call(ctx, info, callee)
            returned = _returned_name(target) if target is not None else None
            if returned is not None:
                ret_stmt, ret_name = returned
                anchor = ctx.anchor(path, stmt.line, stmt.end_line, callee.split(".")[-1],
                                    f"{current} = {callee}(): followed into {short(target.qualname)}")
                evidence.append(anchor)
                hops.append(Hop(kind="call", text=f"{current} = {callee}() -> {short(target.qualname)} returns {ret_name}",
                                anchor=anchor))
                return _backward(ctx, params, target, ret_name, ret_stmt.line, evidence, hops, depth + 1)
        evidence.append(ctx.anchor(path, stmt.line, stmt.end_line, current,
                                   f"assigns {current} from an unresolved expression"))
        return "undecided", f"{current} is assigned from something the analysis does not follow", ("unresolved-call",)
    if current in {p.name for p in facts.params} or current.startswith("self."):
        origin = f"parameter {current}" if "." not in current else current
        if any(k != current for k in keeps):
            return "undecided", (f"{params.container} is rebuilt with {params.field} read from "
                                 f"{', '.join(sorted(set(keeps)))}, not from {current}"), ("runtime-branch",)
        hops.append(Hop(kind="note", text=f"the config comes from {origin} of {short(info.qualname)} with "
                        f"{params.container} unchanged: {params.field} is inherited"))
        return "inherited", "", ()
    return "undecided", f"{current} is not traced back to a parameter or to self", ("runtime-branch",)


def _keeps_field(params, value, aliases) -> str | None:
    """For `replace(x, <container>=replace(y.<container>, <attr>=z.<container>.<attr>))`: z (the
    config whose value of the field the new container keeps), or None when the value may change."""
    attr = params.field.rsplit(".", 1)[-1]
    inner = value.keyword(params.container)
    if not isinstance(inner, ir.Call) or (dotted(inner.func) or "").split(".")[-1] != "replace" or not inner.args:
        return None
    base = _expand(dotted(inner.args[0]), aliases)
    if base is None or not base.endswith(f".{params.container}"):
        return None
    given = inner.keyword(attr)
    if any(k.name is None for k in inner.keywords):
        return None  # **kwargs may set the field
    if given is None:
        return base[: -len(params.container) - 1]
    source = _expand(dotted(given), aliases)
    suffix = f".{params.container}.{attr}"
    return source[: -len(suffix)] if source is not None and source.endswith(suffix) else None


def _expand(name: str | None, aliases: dict[str, str]) -> str | None:
    if name is None:
        return None
    head, _, rest = name.partition(".")
    if head in aliases:
        return aliases[head] + (f".{rest}" if rest else "")
    return name


def _assigns_in(stmt) -> bool:
    """Whether an if-statement's body assigns something (its decision matters for the flow)."""
    return any(isinstance(s, ir.Assign) for s in iter_statements(stmt.body)) or \
        any(isinstance(s, ir.Assign) for s in iter_statements(stmt.orelse))


def _resolve_call(ctx, info, callee: str):
    """The in-tree function a call names: `self.m` along the class's MRO, or a name in scope."""
    index = ctx.index
    if callee.startswith("self.") and callee.count(".") == 1 and info.facts.owner:
        owner = index.class_info(f"{info.module.module}.{info.facts.owner}")
        method = owner.methods.get(callee[5:]) if owner is not None else None
        return index.function(method.qualname) if method is not None else None
    if "." not in callee and callee:
        symbol = index.resolve_name(info.module.module, callee, scope=info.facts.qualname)
        return index.function(symbol.qualname) if symbol is not None and symbol.kind == "function" else None
    return None


def _returned_name(info):
    """(return statement, name) when the function returns one local name or self attribute."""
    returns = [s for s in iter_statements(info.facts.body) if isinstance(s, ir.Return) and s.value is not None]
    if len(returns) != 1 or dotted(returns[0].value) is None:
        return None
    return returns[0], dotted(returns[0].value)


def _aliases(body) -> dict[str, str]:
    """`spec = vllm_config.speculative_config` -> {"spec": "vllm_config.speculative_config"}."""
    out = {}
    for stmt in iter_statements(body):
        if isinstance(stmt, ir.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ir.Name):
            value = dotted(stmt.value)
            if value:
                out[stmt.targets[0].id] = value
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
    for node in iter_exprs(expr):
        if isinstance(node, ir.Attr):
            return node.attr
    return None


class _Undecided:
    def __repr__(self) -> str:
        return "UNDECIDED"


UNDECIDED: Any = _Undecided()


def evaluate(expr, lookup) -> Any:
    """Three-valued evaluation of a simple condition; `lookup(dotted) -> value | UNDECIDED`."""
    if isinstance(expr, ir.Constant):
        return expr.value
    if isinstance(expr, (ir.Name, ir.Attr)):
        name = dotted(expr)
        return lookup(name) if name else UNDECIDED
    if isinstance(expr, ir.Not):
        value = evaluate(expr.operand, lookup)
        return UNDECIDED if value is UNDECIDED else (not value)
    if isinstance(expr, ir.BoolOp):
        values = [evaluate(v, lookup) for v in expr.values]
        if expr.op == "and":
            if any(v is not UNDECIDED and not v for v in values):
                return False
            return UNDECIDED if any(v is UNDECIDED for v in values) else True
        if any(v is not UNDECIDED and v for v in values):
            return True
        return UNDECIDED if any(v is UNDECIDED for v in values) else False
    if isinstance(expr, ir.Compare) and len(expr.ops) == 1:
        left = evaluate(expr.left, lookup)
        right = evaluate(expr.comparators[0], lookup)
        if left is UNDECIDED or right is UNDECIDED:
            return UNDECIDED
        op = expr.ops[0]
        try:
            return {"==": lambda: left == right, "!=": lambda: left != right,
                    "is": lambda: left is right, "is not": lambda: left is not right,
                    "in": lambda: left in right, "not in": lambda: left not in right}[op]()
        except (KeyError, TypeError):
            return UNDECIDED
    return UNDECIDED


def _dedupe(anchors):
    seen, out = set(), []
    for a in anchors:
        key = (a.path, a.start_line, a.end_line, a.symbol, a.role)
        if key not in seen:
            seen.add(key)
            out.append(a)
    return tuple(out)
