"""capability-gate: a gating function evaluated for the recipe's GPU, settings and env.

`mode = "returns"`: the function's return value under the bindings is the gate (True admits,
unless `admit = false`). `mode = "raises"`: the gate is the raise statements guarded by a
condition mentioning one of `gate_words` (e.g. a capability check); no such raise reachable
admits, one reached on a decided path rejects. Undecided evaluation stays `undecided`. The
gating lines (if-statements mentioning `gate_words`) and each caller's call of the gate are
the evidence.
"""

from __future__ import annotations

from srcreview.checks import (
    ANALYSIS_ERRORS,
    CheckContext,
    CheckResult,
    Params,
    short,
    stale,
)
from srcreview.checks._backend import backend_class
from srcreview.checks._common import dedupe, find_one
from srcreview.core.records import Field
from srcreview.core.templates import fill
from srcreview.index import ir
from srcreview.index.ir import dotted, iter_calls, iter_statements
from srcreview.model.findings import Hop
from srcreview.vllm.anchors import CUDA
from srcreview.vllm.runtime import PLATFORM_KEY

OUTCOMES = ("admits", "rejects", "undecided")
UNDECIDED_OUTCOMES = ("undecided",)


class Params(Params):  # noqa: F811
    function: str | None = None  # the gate, by qualified-name suffix; or a backend method:
    enum: str | None = None
    member: str | None = None
    method: str | None = None
    mode: str = "returns"
    args: dict[str, str] = Field(default_factory=dict)  # parameter -> template of its value
    admit: bool = True
    callers: tuple[str, ...] = ()  # functions that must call the gate (the path into it)
    gate_words: tuple[str, ...] = ("capability",)


def run(ctx: CheckContext, params: Params, subject=None) -> CheckResult:
    index = ctx.index
    values = ctx.template_values
    evidence, hops = [], []
    if params.enum:
        info, anchor, missing, reason = backend_class(ctx, params.enum, fill(params.member or "", values))
        if missing:
            return stale(missing)
        if info is None:
            return CheckResult("undecided", reason=reason, tags=("unresolved-type",))
        if anchor is not None:
            evidence.append(anchor)
            hops.append(Hop(kind="field", text=anchor.role, anchor=anchor))
        gate = info.methods.get(params.method or "")
        if gate is None:
            return stale([f"{info.symbol.local}.{params.method}"])
    else:
        gate, found = find_one(index, params.function or "")
        if not found:
            return stale([params.function or "function"])
        if gate is None:
            return CheckResult("undecided", tags=("ambiguous-symbol",),
                               reason=f"{params.function} names several functions")
    name = short(gate.qualname)
    for caller in params.callers:
        callers = index.find(caller, kind="function")
        if not callers:
            return stale([caller])
        sites = []
        for c in callers:
            fn = index.function(c.qualname)
            for call in iter_calls(fn.facts.body if fn else ()):
                if (dotted(call.func) or "").split(".")[-1] == gate.qualname.split(".")[-1]:
                    sites.append(ctx.anchor(c.path, call.line, call.end_line, gate.qualname.split(".")[-1],
                                            f"{short(c.qualname)} calls the gate {name}"))
        if not sites:
            return CheckResult("undecided", tags=("unresolved-call",),
                               reason=f"{caller} does not call {name}: the gate may not be on the path")
        evidence += sites
        hops += [Hop(kind="call", text=a.role, anchor=a) for a in sites]
    args = {k: _typed(fill(v, values)) for k, v in params.args.items()}
    gate_anchor = ctx.symbol_anchor(gate, f"the gate {name}")
    evidence.append(gate_anchor)
    hops.append(Hop(kind="call", text=f"evaluate {name}({', '.join(f'{k}={v!r}' for k, v in sorted(args.items()))})",
                    anchor=gate_anchor))
    fn = index.function(gate.qualname)
    gating = _gating_lines(ctx, fn, params.gate_words) if fn is not None else []
    evidence += gating
    try:
        result, undecided, more, branches, platform = _verdict(index, gate, ctx, args, params)
    except ANALYSIS_ERRORS as exc:
        result, undecided, more, branches, platform = "undecided", set(), [], {}, False
        hops.append(Hop(kind="note", text=f"the evaluator is unavailable: {type(exc).__name__}"))
    for anchor in gating:
        seen = branches.get(anchor.start_line)
        if seen:
            shown = "/".join(sorted("undecided" if v is None else str(bool(v)) for v in seen))
            evidence[evidence.index(anchor)] = anchor.model_copy(update={"role": f"{anchor.role} -> {shown} under the recipe"})
    evidence += more
    details = {"gate": name, "args": ", ".join(f"{k}={v}" for k, v in sorted(args.items())),
               "capability": values.get("hardware.compute_capability")}
    tags: set[str] = set()
    if result == "undecided":
        tags.add("runtime-branch")
    elif platform and ctx.bindings.get(PLATFORM_KEY) == CUDA:
        hops.append(Hop(kind="note", text="the platform is CUDA: the recipe names an NVIDIA GPU"))
    hops.append(Hop(kind="note", text=f"{name} under the recipe: {result}"))
    reason = "" if result != "undecided" else f"{name} cannot be decided under the recipe"
    return CheckResult(result, evidence=dedupe(evidence, by_role=True), trace=tuple(hops), tags=tuple(sorted(tags)),
                       details=details, symbols=(name,), reason=reason,
                       open=tuple(sorted(undecided)) or ((reason,) if reason else ()))


def _verdict(index, gate, ctx, args, params):
    """The gate's verdict from the safe evaluator (srcreview.interp.evaluate_function), the
    conditions it left undecided, the decisive anchors and the value of each branch it saw."""
    from srcreview.interp import evaluate_function

    outcome = evaluate_function(index, gate.qualname, ctx.bindings, args=args)
    texts = {a.text for a in outcome.assumptions}
    branches: dict[int, set] = {}
    for line, value in outcome.branches:
        branches.setdefault(line, set()).add(value)
    if params.mode == "returns":
        evidence = [r.model_copy(update={"symbol": "return",
                                         "role": f"a return of {short(gate.qualname)} reachable under the recipe"})
                    for r in outcome.returns]
        if outcome.decided and isinstance(outcome.value, bool):
            return ("admits" if outcome.value == params.admit else "rejects"), (), evidence, branches, outcome.platform
        return "undecided", texts, evidence, branches, outcome.platform
    fn = index.function(gate.qualname)
    blocks = _blocks(fn, params.gate_words)

    def gated(sites):
        return [s for s in sites if any(lo <= s.anchor.start_line <= hi for lo, hi in blocks)]

    if not gated(outcome.raises):
        return "admits", (), [], branches, outcome.platform
    certain = gated(outcome.certain_raises)
    if certain:
        return "rejects", (), [s.anchor.model_copy(update={"symbol": "raise",
                                                            "role": "guarded raise reached under the recipe"})
                               for s in certain], branches, outcome.platform
    return "undecided", texts, [], branches, outcome.platform


def _typed(text: str):
    return None if text == "unset" else text


def _blocks(fn, words):
    """Line ranges of if-statements whose test mentions one of `words`."""
    if fn is None:
        return []
    return [(s.line, s.end_line) for s in iter_statements(fn.facts.body)
            if isinstance(s, ir.If) and any(w in s.text for w in words)]


def _gating_lines(ctx, fn, words):
    out = []
    for stmt in iter_statements(fn.facts.body):
        if isinstance(stmt, ir.If) and any(w in stmt.text for w in words):
            test = stmt.test
            out.append(ctx.anchor(fn.symbol.path, test.line, test.end_line, _word(stmt.text, words),
                                  f"the branch that decides the gate: if {' '.join(stmt.text.split())}"))
        if isinstance(stmt, ir.Return) and stmt.value is not None:
            text = ctx.tree.read_text(fn.symbol.path).splitlines()[stmt.line - 1:stmt.end_line]
            if any(w in line for line in text for w in words):
                out.append(ctx.anchor(fn.symbol.path, stmt.line, stmt.end_line, _word("\n".join(text), words),
                                      "gating return: " + " ".join(" ".join(text).split())[:160]))
    return out


def _word(text, words):
    import re

    for w in words:
        m = re.search(rf"[A-Za-z_]*{re.escape(w)}[A-Za-z_]*", text)
        if m:
            return m.group(0)
    return words[0]
