"""The abstract interpreter over an Index: call graph, recipe-conditioned reachability, queries.

Layout, one concept per module:

    values.py       the abstract value lattice and its joins
    events.py       what one walk of a function records
    interpreter.py  Frame (the statement and expression walk) and the Analyzer driving walks
    resolver.py     names, imports, module/class/instance/super attributes, MRO, annotations
    builtins.py     Python's own behaviour: truth, comparison, operators, builtins over constants
    runtime.py      the vLLM runtime model: env, platform, capability, config paths, and the
                    EngineArgs -> VllmConfig bindings
    callgraph.py    trace: the networkx exploration from an entry
    queries.py      field_reads, model_runner, evaluate_function
    construction.py the config's post-init hooks walked once per recipe: stores, start-up raises,
                    and each recipe value checked as the config class holding it is built
    declarations.py    what a field's declaration admits (pydantic's lax validation of one value)
    drafting.py     the speculative component a runner builds, whether it loads a draft model,
                    and the config the draft model is built with
    models.py       the model's own config: what a ModelConfig's hf_config holds
    results.py      their frozen results
    render.py       a Trace as text, DOT or JSON (`srcreview graph`)

Public API (everything else in the package is internal):

    from srcreview.interp import trace, field_reads, model_runner, evaluate_function

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
          unresolved   calls in the inspected functions that could not be followed (Site, kind
                       "unresolved-call", or "external-call" for a receiver typed outside the tree)
          dynamic      dynamic-access sites in the inspected functions (Site, kind in
                       "dynamic-getattr", "kwargs-forward", "dunder-dict", "unresolved-call",
                       "runtime-branch")
          found_sink   whether the sink was reached on some feasible path
          contexts     (function, class of self) of each inspected function
          edges        (caller, callee, call line, via) of every call explored
          depth        call levels explored. With a sink, exploration stops at the first level
                       where the sink is reached (shortest feasible paths); imports are resolved
                       lazily, so modules off the way are not parsed.
        Hop: symbol (absolute qualname), path, start_line, end_line (the function), call_line
        (line of the call in the previous hop, None for the entry), anchor and call_anchor
        (srcreview.model.findings.Anchor), via ("entry" | "call" | "init" | "property" | "super").
        Assumption: text, function, anchor, reason, taken (the side assumed, None if both).
        An env var the recipe does not set is read as unset, and says so: an Assumption
        "env NAME unset" with reason "env-unset" at the line that reads it.
        The entry may name an inherited method (MTPProposer.load_model): it is walked with
        self of that class, so self.x() dispatches along that class's MRO.

    field_reads(index, trace_or_qualnames, "SpeculativeConfig.kv_cache_dtype", bindings=None,
                helpers=True) -> FieldReads
        reads   tuple of Read(field, function, kind, anchor, text, line); kind is "direct"
                (x.f with x typed as the class), "alias" (x came from an assignment),
                "getattr-literal" (getattr(x, "f")), "getattr-table" (getattr(x, name) with
                name drawn from a module-level constant table; names drawn from an env var the
                recipe does not set are "dynamic-getattr", whatever "unset" would give)
        dynamic tuple of Site: access that may touch the field without naming it statically:
                "dynamic-getattr" (getattr with a run-time name), "kwargs-forward", "dunder-dict"
                (__dict__ / vars()), "unresolved-call" (an unresolved or out-of-tree call that
                receives the class or a config holding it), "untyped-read" (`.field` on a value
                of unknown type). Empty dynamic and no read = proved absent on those functions.
        functions the functions inspected; exists False when Class.field is absent (stale rule).
        By default (helpers=True) resolved callees that receive the config (off the trace's
        own hops, two calls deep; constructors are not followed) are inspected too and their
        reads included: the V1 proposer applies the nested backend in such a helper.

    drafting.component(analyzer, "v2") -> Component
        the classes the runner's __init__ may store as its speculative component under the
        recipe (through returns of in-tree functions such as init_speculator, and if/elif
        chains such as the V1 drafter), each with the undecided conditions it needs
    drafting.draft_loading(analyzer, runner, cls, sink) -> Loading
        whether the runner's load method loads a draft model through that class (loads is
        True / False / None), and the trace from its entry to the model loader
    drafting.draft_value(analyzer, loading, "vllm_config", ("attention_config", "backend"), key)
        -> DraftValue: where the draft's value at that config path comes from ("nested",
        "target", "fixed", "undecided"; `possible` when a re-run hook may rewrite it)

    model_runner(index, bindings) -> RunnerDecision
        value ("v1" | "v2" | None), evidence (Anchors), reason (one line), assumptions —
        from VllmConfig.use_v2_model_runner under the bindings.

    evaluate_function(index, "TritonAttentionBackend.supports_compute_capability", bindings,
                      args={"capability": (12, 0)}) -> Outcome
        the return value of a function under bindings: value (a Python value or None when
        undecided), decided (True only when every feasible path returns that value and none
        raises), raises (Sites of reachable raise statements), assumptions, returns (anchors).
        classmethods see the class they are named through (Triton...supports_kv_cache_dtype
        uses Triton's supported_kv_cache_dtypes). Used for capability gates and config properties.
        Also: certain_raises (raises reached with no undecided condition on the path, outside
        loops that may not run), branches ((test line, True/False/None) for the function's own
        if-tests) and platform (whether current_platform.is_cuda()... was answered from
        `hardware.platform`: the claim then assumes that platform).

    config_bindings(index, recipe.bindings, gpu=recipe.hardware.gpu) -> dict
        the bindings plus each top-level engine key at the VllmConfig path the revision's
        EngineArgs.create_engine_config puts it (`kv_cache_dtype` -> `cache_config.cache_dtype`,
        `attention_backend` -> `attention_config.backend`; through a normaliser only when the
        evaluator decides its result), and `hardware.platform` ("cuda" for an NVIDIA GPU), which
        decides current_platform.is_cuda() / is_rocm() / ... . key_paths(index) is the table.

The recipe's values are taken as final: a post-init hook that rewrites a value the recipe
sets is not modelled (fields the recipe leaves unset read as what the engine passes, and the
hooks' stores to them are; see construction.py).

    render_trace(trace, fmt="text" | "dot" | "json") -> str   (used by `srcreview graph`)

Bindings map dotted recipe keys to values: `speculative_config.method` is matched where the
code reads `<VllmConfig>.speculative_config.method` or `self.method` inside SpeculativeConfig;
`env.X` where it reads `envs.X` or os.environ.get("X") / os.getenv("X"); and
`hardware.compute_capability` where it calls current_platform.get_device_capability() or
has_device_capability(...).
"""

from srcreview.interp.callgraph import trace
from srcreview.interp.queries import evaluate_function, field_reads, model_runner
from srcreview.interp.render import render_trace
from srcreview.interp.results import (
    Assumption,
    FieldReads,
    Hop,
    Outcome,
    Read,
    RunnerDecision,
    Site,
    Trace,
)

__all__ = [
    "Assumption", "FieldReads", "Hop", "Outcome", "Read", "RunnerDecision",
    "Site", "Trace", "evaluate_function", "field_reads", "model_runner", "render_trace",
    "trace",
]
