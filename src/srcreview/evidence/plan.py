"""The start-up evidence plan of a review: for each knob row, the logger calls of the pinned tree
that would show at start-up what the review predicts, and what a run must set to print them.

The calls are located in the tree by the format strings and functions srcreview.vllm.anchors
names (srcreview.vllm.log_calls finds their file and line at this revision). What the plan says
of each line follows from vLLM's code: the backend lines name no model, a draft whose selection
equals the target's reuses the cached one and prints nothing, a once line prints on the first
rank only, the V1 runner marks the draft's load and V2 only by position, and only the loader's
structure print (VLLM_LOG_MODEL_INSPECTION=1) names each model's attention implementation.
"""

from __future__ import annotations

from typing import Any

from srcreview.index import ir
from srcreview.model.findings import EvidenceLine, EvidenceRow, Knob, Review, StartupEvidence
from srcreview.vllm import log_calls
from srcreview.vllm.anchors import (
    BACKEND_FORCED_LOG,
    BACKEND_SELECTED_LOG,
    CUDAGRAPH_CAPTURE_LOG,
    CUDAGRAPH_DONE_LOG,
    CUDAGRAPH_MODE_FIELD,
    CUDAGRAPH_WORDS,
    DRAFTER_LOAD_LOG,
    INSPECTION_ENV,
    KV_DTYPE_LOG,
    LOG_LEVEL_ENV,
    LOG_METHODS,
    LOG_SCOPES,
    LOGGER_NAME,
    MODEL_LOADED_LOG,
    MODEL_STRUCTURE_LOG,
    PLATFORM_MODULES,
    ROOT_CONFIG,
    RUNNER_SELECTOR,
    RUNNERS,
    SPECULATIVE,
    TARGET_KEYS,
)

INSPECTION = f"{INSPECTION_ENV}=1"
DEBUG = f"{LOG_LEVEL_ENV}=DEBUG"
STARTUP_RULE = "startup-rejected"  # the rule whose confirmed finding predicts a refused start-up

BACKEND_KEY, KV_KEY = TARGET_KEYS  # the knobs a start-up log shows per model
INFO = LOG_METHODS["info"]


def _line(index, call: log_calls.LogCall, phase: Any, shows: str, tells_draft: bool) -> EvidenceLine:
    ranks = LOG_SCOPES.get(call.scope, "every process") if call.once else "every process"
    return EvidenceLine(path=call.path, line=call.line, file=call.file, level=call.level, once=call.once,
                        ranks=ranks, format=call.format, phase=phase, shows=shows, tells_draft=tells_draft,
                        call=f"{LOGGER_NAME}.{call.method}" if call.method else "",
                        url=index.anchor(call.path, call.line, call.end_line).url)


def _platform_calls(index, review: Review, fmt: str) -> tuple[log_calls.LogCall, ...]:
    """The calls of `fmt` in the platform module the runtime profile runs (every platform's when open)."""
    platform = review.profile.platform if review.profile is not None else None
    module = PLATFORM_MODULES.get(platform or "")
    if module is None:
        return log_calls.calls_with_format(index, fmt)
    path = module.replace(".", "/") + ".py"
    return log_calls.calls_with_format(index, fmt, prefix=path)  # the one platform module the profile runs


def _runner_calls(index, runner: str) -> tuple[log_calls.LogCall, ...]:
    module, cls, _attr, method = RUNNERS[runner]
    return log_calls.calls_of_function(index, f"{module}.{cls}.{method}")


def _value(knob: Knob | None) -> str | None:
    """The value a start-up log shows if vLLM starts: an `applied` knob's, or one undecided only
    because vLLM may refuse to start with it (`startup-open`): a log that shows it started shows it."""
    if knob is None or knob.value is None:
        return None
    if knob.status == "applied" or (knob.status == "undecided" and "startup-open" in knob.tags):
        return str(knob.value)
    return None


def _docstring(stmt) -> bool:
    return isinstance(stmt, ir.ExprStmt) and isinstance(stmt.value, ir.Constant) and isinstance(stmt.value.value, str)


def _prints_for(index, call: log_calls.LogCall, value: str) -> bool | None:
    """Whether the branches over `call` let it print for this value of the function's first
    value parameter: each test a call of a one-return helper over str methods and comparisons
    (CacheConfig's validator); None when a test is anything else."""
    info = index.function(call.function)
    if info is None:
        return None
    params = [p.name for p in info.facts.params if p.name not in ("self", "cls")]
    if not params:
        return None
    module = info.module.module

    def helper(name: str, scope: str):
        symbol = index.resolve_name(module, name, scope)
        function = index.function(symbol.qualname) if symbol is not None else None
        body = [s for s in function.facts.body if not _docstring(s)] if function is not None else []
        if len(body) != 1 or not isinstance(body[0], ir.Return) or body[0].value is None:
            return None
        own = [p.name for p in function.facts.params] if function is not None else []
        return (own[0], body[0].value) if own else None

    def evaluate(expr, name: str, depth: int = 0):
        if depth > 4:
            return None
        if isinstance(expr, ir.BoolOp):
            parts = [evaluate(v, name, depth) for v in expr.values]
            if None in parts:
                return None
            return any(parts) if expr.op == "or" else all(parts)
        if isinstance(expr, ir.Not):
            inner = evaluate(expr.operand, name, depth)
            return None if inner is None else not inner
        if isinstance(expr, ir.Compare) and len(expr.ops) == 1 and isinstance(expr.left, ir.Name) \
                and expr.left.id == name and isinstance(expr.comparators[0], ir.Constant):
            other = expr.comparators[0].value
            return {"==": value == other, "!=": value != other}.get(expr.ops[0])
        if isinstance(expr, ir.Call) and isinstance(expr.func, ir.Attr) and isinstance(expr.func.value, ir.Name) \
                and expr.func.value.id == name and expr.func.attr in ("startswith", "endswith") \
                and len(expr.args) == 1 and isinstance(expr.args[0], ir.Constant) \
                and isinstance(expr.args[0].value, str):
            return getattr(value, expr.func.attr)(expr.args[0].value)
        if isinstance(expr, ir.Call) and len(expr.args) == 1 and isinstance(expr.args[0], ir.Name) \
                and expr.args[0].id == name and ir.dotted(expr.func):
            found = helper(ir.dotted(expr.func) or "", info.facts.qualname)
            if found is None:
                return None
            return evaluate(found[1], found[0], depth + 1)
        return None

    def walk(body, guards) -> bool | None:
        for stmt in body:
            if isinstance(stmt, ir.If):
                taken = evaluate(stmt.test, params[0])
                if stmt.line <= call.line <= stmt.end_line:
                    inside_body = any(s.line <= call.line <= s.end_line for s in stmt.body)
                    if taken is None:
                        return None
                    if inside_body:
                        return taken and walk(stmt.body, guards) is not False
                    return (not taken) and walk(stmt.orelse, guards) is not False
            elif stmt.line <= call.line <= stmt.end_line:
                return True
        return True

    return walk(info.facts.body, ())


def _attention_rows(index, review: Review, knobs: dict, spec: bool) -> list[EvidenceRow]:
    forced = _platform_calls(index, review, BACKEND_FORCED_LOG)
    selected = _platform_calls(index, review, BACKEND_SELECTED_LOG)
    structure = log_calls.calls_with_format(index, MODEL_STRUCTURE_LOG)
    target_knob = knobs.get((BACKEND_KEY, "target"))
    target = _value(target_knob)
    lines = [_line(index, c, "target load", "the backend attention_backend names, validated for the target's "
                   "layers (no model name)", False) for c in forced]
    lines += [_line(index, c, "target load", "the backend the platform selected by priority, and the candidates "
                    "(no model name)", False) for c in selected]
    lines += [_line(index, c, "target load", "each attention layer's implementation (backend=...): the first "
                    "structure printed is the target's", True) for c in structure]
    rows = [EvidenceRow(
        knob=BACKEND_KEY, scope="target", claim=target,
        claim_from=(f"attention_backend = {target} ({target_knob.status})" if target and target_knob else
                    "attention_backend is unset: the review leaves the platform's selection open"
                    if target_knob is None or target_knob.value is None else
                    f"attention_backend = {target_knob.value} ({target_knob.status})"),
        provable="yes", run_with=(), lines=tuple(lines),
        reason="the first backend line of the target's load names its backend, on the first rank "
               f"({BACKEND_SELECTED_LOG!r} prints once per process)")]
    if not spec:
        return rows
    drafted = knobs.get((BACKEND_KEY, "draft"))
    nested = knobs.get((f"{SPECULATIVE}.attention_backend", "draft"))
    not_claimed = None
    if nested is not None and nested.status == "ignored":  # noqa: SIM114 - the two cases claim differently
        claim, cache_reuse = target, target is not None
        claim_from = (f"{SPECULATIVE}.attention_backend = {nested.value} is ignored: the draft uses the target's "
                      f"backend ({target or 'the platform selection'})")
        not_claimed = str(nested.value)
    elif nested is not None and nested.status == "applied":
        claim, cache_reuse = str(nested.value), False
        claim_from = f"{SPECULATIVE}.attention_backend = {nested.value} (applied)"
    elif drafted is not None and _value(drafted):
        claim = _value(drafted)
        cache_reuse = claim == target
        claim_from = f"attention_backend (draft) = {claim} ({drafted.note or drafted.status})"
    else:
        claim, cache_reuse = None, False
        claim_from = "the review leaves the draft's backend open"
    v1_marker = [c for c in log_calls.calls_with_format(index, DRAFTER_LOAD_LOG)
                 if c.path == RUNNERS["v1"][0].replace(".", "/") + ".py" and review.runner.value != "v2"]
    draft_lines = [_line(index, c, "draft load", "the draft model's attention implementations (backend=...): "
                         "the structure printed in the draft's load phase", True) for c in structure]
    draft_lines += [_line(index, c, "draft load", "a backend named for the draft; printed only when the draft's "
                          "selection differs from the target's (a cached selection prints nothing)", False)
                    for c in forced + selected]
    draft_lines += [_line(index, c, "draft load", "the V1 runner starts the draft's load", True) for c in v1_marker]
    phase = ("V1 marks the draft's phase with " + repr(DRAFTER_LOAD_LOG) + "; V2 only by position (the second "
             "model structure of the runner's load)")
    rows.append(EvidenceRow(
        knob=BACKEND_KEY, scope="draft", claim=claim, claim_from=claim_from, not_claimed=not_claimed,
        cache_reuse=cache_reuse, provable="with-settings", run_with=(INSPECTION,), lines=tuple(draft_lines),
        reason="the backend lines carry no model name, and a draft whose selection equals the target's reuses "
               "the cached result and prints nothing: only the draft's model structure "
               f"({INSPECTION}) names its backend; {phase}"))
    return rows


def _kv_rows(index, knobs: dict, spec: bool) -> list[EvidenceRow]:
    calls = log_calls.calls_with_format(index, KV_DTYPE_LOG)
    target_knob = knobs.get((KV_KEY, "target"))
    target = _value(target_knob)
    prints = None if target is None or not calls else [p for p in (_prints_for(index, c, target) for c in calls)]
    silent = prints is not None and all(p is False for p in prints)
    lines = tuple(_line(index, c, "engine", "the KV-cache dtype the engine config holds (quantized dtypes only; "
                        "no model name)", False) for c in calls)
    rows = [EvidenceRow(
        knob=KV_KEY, scope="target", claim=target,
        claim_from=f"kv_cache_dtype = {target_knob.value} ({target_knob.status})" if target_knob is not None
        else "kv_cache_dtype is unset",
        provable="no" if silent or not calls else "yes", lines=lines,
        reason=(f"the KV dtype line is silent for {target}: its validator prints only quantized dtypes, so no "
                "log line shows it" if silent else
                "the validator prints the dtype when the engine config is built (the API server's process)"
                if calls else "no logger call of the tree prints the KV-cache dtype"))]
    if spec:
        draft_knob = knobs.get((KV_KEY, "draft")) or knobs.get((f"{SPECULATIVE}.kv_cache_dtype", "draft"))
        rows.append(EvidenceRow(
            knob=KV_KEY, scope="draft", claim=_value(draft_knob),
            claim_from=(f"kv_cache_dtype (draft) = {draft_knob.value} ({draft_knob.note or draft_knob.status})"
                        if draft_knob is not None else "the review has no draft KV dtype row"),
            provable="no", lines=lines,
            reason="no logger call prints the draft's KV-cache dtype: the dtype line names no model and prints "
                   "when a config is validated, not when the draft's cache is laid out"))
    return rows


def _runner_row(index, review: Review) -> EvidenceRow:
    lines = []
    for name in sorted(RUNNERS):
        calls = [c for c in _runner_calls(index, name) if c.format is not None and c.level == INFO]
        for call in calls[:1] + [c for c in calls[1:] if (c.format or "").startswith(MODEL_LOADED_LOG)]:
            lines.append(_line(index, call, "target load", f"the {name.upper()} runner's load method ran "
                                   "(its file and line name the runner)", False))
    for call in log_calls.calls_of_function(index, RUNNER_SELECTOR):
        lines.append(_line(index, call, "engine", "the V2 runner was refused: the engine falls back to V1", False))
    claim = review.runner.value if review.runner.status == "resolved" else None
    return EvidenceRow(knob="model_runner", scope="engine", claim=claim,
                       claim_from=(f"{RUNNER_SELECTOR} under the recipe" if claim
                                   else "the review leaves the runner open"),
                       provable="yes", lines=tuple(lines),
                       reason="the runner's load method prints from its own module: the log's file:line names the "
                              "runner that ran; a fallback to V1 prints a warning")


def _speculation_row(index, review: Review, knobs: dict) -> EvidenceRow:
    method = knobs.get((f"{SPECULATIVE}.method", "engine"))
    loaded = [c for name in sorted(RUNNERS) for c in _runner_calls(index, name)
              if c.format is not None and c.format.startswith(MODEL_LOADED_LOG)]
    lines = [_line(index, c, "draft load", "the V1 runner loads a draft model", True)
             for c in log_calls.calls_with_format(index, DRAFTER_LOAD_LOG)
             if c.path == RUNNERS["v1"][0].replace(".", "/") + ".py" and review.runner.value != "v2"]
    lines += [_line(index, c, "draft load", "a second model structure in the runner's load: a draft model is loaded "
                    "(its class is the method's model)", True)
              for c in log_calls.calls_with_format(index, MODEL_STRUCTURE_LOG)]
    lines += [_line(index, c, "target load", "the runner's load ends (target and draft)", False) for c in loaded]
    return EvidenceRow(knob="speculative_method", scope="engine",
                       claim=str(method.value) if method is not None and method.value is not None else None,
                       claim_from=f"{SPECULATIVE}.method = {method.value}" if method is not None else "",
                       provable="with-settings", run_with=(INSPECTION,), lines=tuple(lines),
                       reason="no line names the method: the log shows that a draft model is loaded (V1's marker, "
                              f"or a second model structure under {INSPECTION}), not which method chose it")


def _cudagraph_row(index, knobs: dict) -> EvidenceRow:
    knob = knobs.get((CUDAGRAPH_MODE_FIELD, "engine"))
    config = index.class_info(ROOT_CONFIG)
    overrides = []
    if config is not None:
        for call in log_calls.calls_in_module(index, config.symbol.path):
            if call.format is not None and any(w in call.format for w in CUDAGRAPH_WORDS) \
                    and call.function.startswith(config.facts.qualname + "."):
                overrides.append(_line(index, call, "engine", "the engine changes the cudagraph mode or its sizes",
                                       False))
    capture = [_line(index, c, "cudagraph capture", "the mode of each captured graph (V2)", False)
               for c in log_calls.calls_with_format(index, CUDAGRAPH_CAPTURE_LOG)]
    done = [_line(index, c, "cudagraph capture", "graphs were captured", False)
            for c in log_calls.calls_with_format(index, CUDAGRAPH_DONE_LOG)]
    claim = str(knob.value) if knob is not None and knob.value is not None and knob.status in (
        "accepted", "applied") else None
    return EvidenceRow(knob="cudagraph_mode", scope="engine", claim=claim,
                       claim_from=f"{CUDAGRAPH_MODE_FIELD} = {knob.value}" if knob is not None
                       else f"{CUDAGRAPH_MODE_FIELD} is unset: the review makes no claim",
                       provable="with-settings", run_with=(DEBUG,), lines=tuple(overrides + capture + done),
                       reason=f"the mode of each captured graph prints at DEBUG ({DEBUG}, V2 runner); an override "
                              "prints a warning when the engine config is built")


def plan(index, review: Review) -> StartupEvidence:
    """The plan for one review at its revision (the Index of that tree)."""
    knobs = {(k.key, k.scope): k for k in review.knobs}
    spec = (f"{SPECULATIVE}.method", "engine") in knobs
    rows = _attention_rows(index, review, knobs, spec) + _kv_rows(index, knobs, spec)
    rows.append(_runner_row(index, review))
    if spec:
        rows.append(_speculation_row(index, review, knobs))
    rows.append(_cudagraph_row(index, knobs))
    settings = sorted({s for r in rows if r.provable != "no" for s in r.run_with})
    rejection = tuple(a for f in review.findings if f.rule == STARTUP_RULE and f.classification == "confirmed"
                      for a in f.evidence)
    return StartupEvidence(revision=review.revision.sha, rows=tuple(rows), run_with=tuple(settings),
                           rejection=rejection)
