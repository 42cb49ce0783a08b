"""draft-config: where the draft model's value of a setting comes from, on the recipe's runner.

One fact answers every draft-side question about a setting: the value at its config path
(`attention_backend` -> `attention_config.backend`) of the config the draft model is built
with. The check takes each class the runner may build as its speculative component
(srcreview.vllm.drafting: derived from the runner's own code), asks whether it loads a draft
model, and if it does, follows the config its loader passes to the model loader, with the
arguments each call passes. Outcomes:

- `nested`: the draft's value is `speculative_config.<setting>` (the nested key applies);
- `target`: it is the target's own value (the top-level setting reaches the draft);
- `fixed`: it is a constant or another field: neither the nested nor the top-level setting;
- `no-draft-model`: the component loads no draft model (n-gram, suffix, ...);
- `undecided`: the runner, a component, a loader or the value is open; the candidates the
  recipe leaves open disagree; or the copy re-runs post-init hooks that depend on the model.

Decided only when every candidate the recipe leaves open gives the same outcome.
"""

from __future__ import annotations

from srcreview.checks import CheckContext, CheckResult, Params, short, stale
from srcreview.checks._common import declared_field, dedupe
from srcreview.model.findings import Anchor, Hop
from srcreview.vllm.anchors import (
    BUILDER,
    DRAFT_MODEL_CONFIG,
    ENGINE_CLASS,
    HF_CONFIG,
    LOADER_CONFIG_ARGUMENT,
    MODEL_LOADER,
    ROOT_CONFIG,
    RUNNERS,
    SPECULATIVE,
    SPECULATIVE_CLASS,
)
from srcreview.vllm.models import MODEL_CONFIG_UNKNOWN

OUTCOMES = ("nested", "target", "fixed", "no-draft-model", "undecided")
UNDECIDED_OUTCOMES = ("undecided",)
MODEL_WORDS = (DRAFT_MODEL_CONFIG, HF_CONFIG, "architectures", "model_type", "num_nextn_predict_layers")


class Params(Params):  # noqa: F811
    # the top-level engine key ("attention_backend"; its nested twin is speculative_config.<setting>),
    # or "*": the key of the setting the rule runs on (`for_each`), either form
    setting: str
    # the declaration the rule is about ("SpeculativeConfig.attention_backend" for a rule on the
    # nested key): the rule is stale at a revision that does not declare it
    field: str | None = None
    sink: str = MODEL_LOADER
    argument: str = LOADER_CONFIG_ARGUMENT


def anchors(params: Params) -> list[str]:
    """What the check starts from, in the order it meets them (a parse-ahead hint): the runner
    classes (their __init__ builds the speculative component), then the model loader."""
    return [f"{module}.{cls}" for module, cls, _, _ in RUNNERS.values()] + [params.sink]


def run(ctx: CheckContext, params: Params, subject=None) -> CheckResult:
    from srcreview.vllm import drafting
    from srcreview.vllm.runtime import key_paths

    runner = ctx.runner.value
    absent = [f"{cls}.__init__ ({module})" for module, cls, _, _ in RUNNERS.values()
              if ctx.index._class_info_abs(f"{module}.{cls}") is None]
    if len(absent) == len(RUNNERS):
        return stale(absent)
    templated = params.setting == "*"
    setting = subject.key.removeprefix(f"{SPECULATIVE}.") if templated else params.setting
    where = key_paths(ctx.index).get(setting)
    if where is None and not templated:
        return stale([f"{ENGINE_CLASS}.{setting} -> {ROOT_CONFIG} ({BUILDER})"])
    if params.field and declared_field(ctx, params.field) is None:
        return stale([params.field])
    if runner is None:  # after the anchors: a rule is stale whatever the recipe
        return CheckResult("undecided", tags=("runner-undecided",), reason=f"the model runner is undecided: "
                           f"{ctx.runner.reason}", open=(f"which model runner runs: {ctx.runner.reason}",))
    path = tuple(where.path.split(".")) if where is not None else None
    an = ctx.analyzer
    component = ctx.memoized(f"component:{runner}", lambda: drafting.component(an, runner))
    if component.missing:
        return stale(list(component.missing))
    details = {"runner": runner, "setting": setting, "path": where.path if where is not None else ""}
    evidence: list[Anchor] = [component.anchor] if component.anchor else []
    if component.open:
        sites = component.open
        return CheckResult("undecided", evidence=tuple(evidence + [s.anchor for s in sites]), tags=("unresolved-call",),
                           details={**details, "entries": "an untyped component"}, reason=sites[0].text,
                           open=tuple(s.text for s in sites))
    if not component.candidates:
        return CheckResult("undecided", evidence=tuple(evidence), tags=("runtime-branch",), details=details,
                           reason=f"the {runner} runner stores no speculative component under the recipe",
                           open=(f"no {component.attribute} is built under the recipe",))
    outcomes, hops, tags, reasons, symbols, texts = [], [], set(), [], [], []
    possible: list[set[str]] = []  # per candidate: the outcomes it may have
    for candidate in component.candidates:
        name = short(candidate.cls)
        built = "builds" if not candidate.conditions else "may build"
        site = candidate.site.model_copy(update={"symbol": name.split(".")[-1],
                                                  "role": f"the {runner} runner {built} {name}"})
        evidence.append(site)
        hops.append(Hop(kind="branch", text=f"{component.attribute} = {name}", anchor=site))
        loading = ctx.memoized(f"loading:{runner}:{candidate.cls}:{params.sink}",
                               lambda c=candidate: drafting.draft_loading(an, runner, c.cls, params.sink))
        evidence += list(loading.guard)
        if loading.loads is False:
            outcomes.append("no-draft-model")
            possible.append({"no-draft-model"})
            texts.append(f"{name} loads no draft model")
            hops.append(Hop(kind="note", text=loading.reason, anchor=loading.guard[-1] if loading.guard else None))
            continue
        if loading.loads is None:
            outcomes.append("undecided")
            possible.append(set())
            reasons.append(loading.reason)
            tags.update(s.kind for s in loading.open)
            continue
        if path is None:  # no engine-level twin: where the draft takes it from is not traced
            outcomes.append("undecided")
            possible.append(set())
            reasons.append(f"{SPECULATIVE}.{setting} has no top-level twin whose config path could be followed")
            tags.add("not-traced")
            continue
        value = ctx.memoized(f"draft-value:{runner}:{candidate.cls}:{params.sink}:{params.argument}:{where.path}:{setting}",
                             lambda ld=loading: drafting.draft_value(an, ld, params.argument, path, setting))
        for hop in value.hops[1:]:
            anchor = (hop.call_anchor or hop.anchor).model_copy(update={
                "symbol": short(hop.symbol), "role": f"calls {short(hop.symbol)}"})
            evidence.append(anchor)
            hops.append(Hop(kind="call", text=f"-> {short(hop.symbol)}", anchor=anchor))
        if not symbols:
            symbols = [short(h.symbol) for h in value.hops]
        if value.source == "nested":  # the lines that make it the nested value
            for read in ctx.memoized(f"nested-reads:{runner}:{candidate.cls}:{setting}",
                                     lambda ld=loading: _nested_reads(ctx, ld.trace, setting)):
                evidence.append(read)
                hops.append(Hop(kind="read", text=read.role, anchor=read))
        if value.sink_call is not None:
            anchor = value.sink_call.model_copy(update={
                "symbol": params.sink.split(".")[-1],
                "role": f"passes the draft's {params.argument}: {where.path} = {value.text or 'undecided'}"})
            evidence.append(anchor)
            hops.append(Hop(kind="sink", text=f"-> {params.sink.split('.')[-1]}({params.argument}=...): "
                            f"{where.path} is {value.text or 'undecided'}", anchor=anchor))
        outcomes.append(value.source if len(value.possible) <= 1 else "undecided")
        possible.append(set(value.possible))
        texts.append(value.text or name)
        if len(value.possible) > 1:
            reasons.append(f"{name}: {value.reinit}")
            tags.add("model-config-unknown")
        elif value.source == "undecided":
            reasons.append(f"{name}: {value.reason}")
            tags.add("runtime-branch")
    details["entries"] = _entries(component)
    details["value"] = "; ".join(dict.fromkeys(texts))
    decided = len(set(outcomes)) == 1 and outcomes[0] != "undecided"
    if decided:
        if len(component.candidates) > 1:
            hops.append(Hop(kind="note", text=f"every class the {runner} runner may build gives {outcomes[0]}: "
                            + ", ".join(short(c.cls) for c in component.candidates)))
        return CheckResult(outcomes[0], evidence=dedupe(evidence), trace=tuple(hops), details=details,
                           symbols=(setting, *symbols))
    if len(set(outcomes)) > 1:
        parts = [f"{short(c.cls)} ({_when(c)}) -> {' or '.join(sorted(p)) if len(p) > 1 else o}"
                 for c, o, p in zip(component.candidates, outcomes, possible)]
        reasons.append(f"the classes the {runner} runner may build disagree: " + "; ".join(parts))
        tags.add("runtime-branch")
        if any(any(w in a.text for w in MODEL_WORDS) or MODEL_CONFIG_UNKNOWN in (a.reason or "")
               for c in component.candidates for a in c.conditions):
            tags.add(MODEL_CONFIG_UNKNOWN)
    reason = "; ".join(dict.fromkeys(reasons)) or "undecided"
    may_be = set().union(*possible) if possible and all(possible) else set()
    return CheckResult("undecided", possible=tuple(sorted(may_be)), evidence=dedupe(evidence), trace=tuple(hops),
                       details=details, symbols=(setting, *symbols), tags=tuple(sorted(tags)), reason=reason,
                       open=(reason,))


def _nested_reads(ctx: CheckContext, trace, setting: str) -> list[Anchor]:
    """The reads of speculative_config.<setting> on the loader's paths (and the helpers they
    hand the config to), anchored: where the draft's value is wired to the nested key."""
    from srcreview.checks._common import class_info
    from srcreview.interp import field_reads

    info = class_info(ctx, SPECULATIVE_CLASS)
    if info is None or trace is None:
        return []
    field = f"{info.symbol.local}.{setting}"
    found = field_reads(ctx.index, trace, f"{info.qualname}.{setting}")
    return [r.anchor.model_copy(update={"symbol": field, "role": f"reads {field} ({r.kind})"}) for r in found.reads]


def _when(candidate) -> str:
    conds = [f"{' '.join(a.text.split())} {'true' if a.taken else 'false'}" for a in candidate.conditions
             if a.taken is not None]
    return ("if " + " and ".join(conds)) if conds else "the recipe selects it"


def _entries(component) -> str:
    names = [short(c.cls) for c in component.candidates]
    if len(names) > 1:
        return f"each of {', '.join(names)}: every class the {component.runner} runner may build under the recipe"
    return ", ".join(names)
