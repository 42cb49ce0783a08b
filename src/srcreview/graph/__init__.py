"""Call graph and recipe-conditioned reachability over an Index.

Public API (everything else in the package is internal):

    from srcreview.graph import trace, field_reads, resolve_dispatch, model_runner, evaluate_function

    bindings = recipe.bindings   # {"speculative_config.method": "mtp", "env.VLLM_USE_V2_MODEL_RUNNER": "1",
                                 #  "hardware.compute_capability": (12, 0), "attention_backend": "TRITON_ATTN"}

    trace(index, "MTPSpeculator.load_draft_model", bindings, sink="get_model") -> Trace
        Walks the call graph from the entry with the recipe bound. At a branch the evaluator
        can decide, only the feasible side is followed; otherwise both, and the condition is
        recorded as an Assumption. Trace fields:
          paths        tuple of paths; a path is a tuple of Hop (entry first, sink last);
                       without a sink, the paths to every leaf reached (bounded by max_depth)
          functions    qualnames of every function inspected on the feasible paths (for an
                       absence claim: "none of these reads the field")
          reachable    every function reached from the entry (superset of functions)
          assumptions  undecided branch conditions (Assumption: text, anchor, function)
          unresolved   calls on the paths that could not be resolved (Site)
          dynamic      dynamic-access sites in the inspected functions (Site, kind in
                       "dynamic-getattr", "kwargs-forward", "dunder-dict", "unresolved-call",
                       "runtime-branch")
          found_sink   whether the sink was reached on some feasible path
        Hop: symbol (absolute qualname), path, start_line, end_line (the function), call_line
        (line of the call in the previous hop, None for the entry), anchor and call_anchor
        (srcreview.findings.Anchor), via ("call" | "init" | "property" | "super" | "dispatch").

    field_reads(index, trace_or_qualnames, "SpeculativeConfig.kv_cache_dtype") -> FieldReads
        reads   tuple of Read(field, function, kind, anchor, text, line); kind is "direct"
                (x.f with x typed as the class), "alias" (x came from an assignment),
                "getattr-literal" (getattr(x, "f")), "getattr-table" (getattr(x, name) with
                name drawn from a module-level constant table)
        dynamic tuple of Site: dynamic access that may touch the class (unknown-name getattr,
                **kwargs forwarding of it, __dict__/vars()); empty means "proved absent"
                together with no unresolved calls in trace.unresolved.

    resolve_dispatch(index, "init_speculator", bindings) -> Dispatch
        chosen      the candidate classes/functions a call of the dispatcher can return under
                    the bindings (Candidate: symbol, anchor, assumptions)
        candidates  every candidate the dispatcher names, decided or not
        assumptions conditions that stayed undecided

    model_runner(index, bindings) -> RunnerDecision
        value ("v1" | "v2" | None), evidence (Anchors), reason (one line), assumptions —
        from VllmConfig.use_v2_model_runner under the bindings.

    evaluate_function(index, "TritonAttentionBackend.supports_compute_capability", bindings,
                      args={"capability": (12, 0)}) -> Outcome
        the return value of a function under bindings: value (a Python value or None when
        undecided), decided (bool), raises (Sites of reachable raise statements),
        assumptions. Used for capability gates and boolean config properties.

    render_trace(trace, fmt="text" | "dot" | "json") -> str   (used by `srcreview graph`)

Bindings map dotted recipe keys to values: `speculative_config.method` is matched where the
code reads `<VllmConfig>.speculative_config.method` or `self.method` inside SpeculativeConfig;
`env.X` where it reads `envs.X` or os.environ.get("X") / os.getenv("X"); and
`hardware.compute_capability` where it calls current_platform.get_device_capability() or
has_device_capability(...).
"""

from srcreview.graph.model import (
    Assumption,
    Candidate,
    Dispatch,
    FieldReads,
    Hop,
    Outcome,
    Read,
    RunnerDecision,
    Site,
    Trace,
)
from srcreview.graph.api import evaluate_function, field_reads, model_runner, resolve_dispatch, trace
from srcreview.graph.render import render_trace

__all__ = [
    "Assumption", "Candidate", "Dispatch", "FieldReads", "Hop", "Outcome", "Read", "RunnerDecision",
    "Site", "Trace", "evaluate_function", "field_reads", "model_runner", "render_trace",
    "resolve_dispatch", "trace",
]
