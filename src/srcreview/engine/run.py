"""The review engine: run the rules over one recipe at one revision and build the Review.

For each rule whose `when` holds for the recipe, the rule's check runs once (or once per
engine setting for `for_each = "setting"`); its outcome maps through the rule's verdict to a
finding, and through its knob effects to the knob table. A rule whose anchor symbols are
missing at the revision is listed in `stale_rules`, never refuted. When the analysis cannot
answer, the outcome is undecided and the finding at most plausible, with the reason tagged.
"""

from __future__ import annotations

import re
from typing import Any, Literal, cast

from srcreview import __version__
from srcreview.checks import ANALYSIS_ERRORS, CheckContext, CheckResult, check_kind
from srcreview.core.errors import DataError, SourceUnavailable
from srcreview.core.tags import Tag
from srcreview.core.templates import fill
from srcreview.engine.startup import REFUSING_STATUSES
from srcreview.model.findings import (
    Anchor,
    Finding,
    Hop,
    Knob,
    KnobStatus,
    RecipeRef,
    Review,
    RevisionInfo,
    RunnerInfo,
    Scope,
    StaleRule,
    ToolInfo,
    fingerprint,
)
from srcreview.model.recipe.shell_values import SHELL_TAG, is_unknown, unknown_in
from srcreview.rules.loader import Condition, Rule, load_rules
from srcreview.vllm.anchors import (
    DRAFT_KEYS,
    ENGINE_CLASS,
    ROOT_CONFIG,
    SPECULATION_KEYS,
    SPECULATIVE,
    SPECULATIVE_CLASS,
    TARGET_KEYS,
)

KNOB_PRECEDENCE = {"accepted": 1, "applied": 2, "undecided": 3, "overridden": 4, "ignored": 5, "invalid-value": 6,
                   "unknown-knob": 7}
MAX_EVIDENCE = 40


def review(recipe, tree, *, rules: tuple[Rule, ...] | None = None, index=None, cache_dir=None,
           source_label: str = "") -> Review:
    """The review of `recipe` at the revision of `tree` (a SourceTree)."""
    return run_rules(recipe, tree, rules=rules, index=index, cache_dir=cache_dir, source_label=source_label)[0]


def run_rules(recipe, tree, *, rules: tuple[Rule, ...] | None = None, index=None, cache_dir=None,
              source_label: str = "") -> tuple[Review, frozenset[str]]:
    """The review, and the ids of the rules whose `when` held (for the example harness)."""
    from srcreview.index import Index
    from srcreview.interp.domain import install
    from srcreview.vllm.domain import VLLM
    from srcreview.vllm.profile import runtime_profile

    install(VLLM)  # the interpreter's framework model, before the first walk
    index = index if index is not None else Index(tree, cache_dir=cache_dir)
    rules = load_rules() if rules is None else rules
    recipe = recipe.model_copy(update={"hardware": recipe.hardware.with_known_capability()})
    profile = runtime_profile(tree, recipe)
    bindings = _bindings(index, recipe, profile)
    analyzer, incomplete = _prepared(index, recipe, bindings)
    runner, more = _runner(index, recipe, bindings)
    incomplete += more
    incomplete += [f"{recipe.source_file}:{item.line}: {item.reason}" for item in recipe.open if item.incomplete]
    ctx = CheckContext(index=index, tree=tree, recipe=recipe, bindings=bindings, runner=runner, analyzer=analyzer)
    ctx.template_values = _Values(ctx)
    knobs = _base_knobs(recipe, ctx)
    findings: list[Finding] = []
    stale: dict[str, set[str]] = {}
    applied: set[str] = set()
    for rule in rules:
        matched, downgrade = _applies(rule, ctx)
        if not matched:
            continue
        applied.add(rule.id)
        subjects = _subjects(rule, ctx)
        for subject in subjects:
            result, problem = _run_check(rule, ctx, subject)
            if problem:
                incomplete.append(problem)
            if result.outcome == "stale" or result.missing:
                stale.setdefault(rule.id, set()).update(result.missing)
                continue
            finding = _finding(rule, ctx, subject, result, downgrade)
            if finding is not None:
                findings.append(finding)
            _apply_knobs(rule, ctx, subject, result, downgrade, knobs)
    from srcreview.vllm.env_knobs import env_knobs
    from srcreview.vllm.startup_knobs import open_raise_rows, rejected_rows, rewrite_rows

    knobs.update(((k.key, k.scope), k) for k in env_knobs(index, recipe, bindings))
    # what start-up does with a value decides over what a rule found: a hook's store, a raise
    # that may refuse it
    for row in rewrite_rows(ctx, analyzer.construction) + open_raise_rows(ctx, analyzer.construction) \
            + rejected_rows(ctx, analyzer.construction):
        for scope in [sc for sc in _SCOPES if (row.key, sc) in knobs] or ["engine"]:
            old = knobs.get((row.key, scope))
            if old is None or KNOB_PRECEDENCE[row.status] > KNOB_PRECEDENCE[old.status]:
                knobs[(row.key, scope)] = row.model_copy(update={"scope": scope,
                                                                 "value": old.value if old else row.value})
    from srcreview.source.gaps import split_stale

    stale, unevaluable = split_stale(tree, stale)  # what a gutted or unreadable tree hides is not stale
    incomplete.extend(unevaluable)
    findings.sort(key=lambda f: f.sort_key())
    missing_tests = sorted({t for f in findings for t in f.missing_tests})
    revision = tree.revision
    pin = recipe.runtime.revision or recipe.runtime.version
    if pin is None:
        matches = None
    elif recipe.runtime.revision:
        matches = revision.matches_commit(pin)
    else:
        matches = revision.version == pin
    from srcreview.engine.startup import startup_verdict

    ordered_knobs = tuple(sorted(_open_refusals(_one_answer(_certain_refusals(knobs, findings, rules)), findings,
                                                rules).values(), key=_knob_order))
    made = Review(
        tool=ToolInfo(version=__version__),
        recipe=RecipeRef(path=recipe.path, file=recipe.file or None, name=recipe.name,
                         part="variant" if recipe.format == "recipes-registry" else None,
                         model=recipe.info.model, gpu=recipe.hardware.gpu,
                         compute_capability=recipe.hardware.compute_capability),
        revision=RevisionInfo(sha=revision.sha, version=revision.version, recipe_pin=pin,
                              matches_recipe_pin=matches,
                              source=source_label or getattr(tree, "provider", ""),
                              release_from=revision.pin.origin if revision.pin is not None else None,
                              identity_unverified=revision.identity_unverified),
        runner=runner,
        profile=profile,
        knobs=ordered_knobs,
        findings=tuple(findings),
        stale_rules=tuple(StaleRule(rule=r, missing=tuple(sorted(m))) for r, m in sorted(stale.items())),
        missing_tests=tuple(missing_tests),
        incomplete=tuple(sorted(set(incomplete))),
        models=_models(recipe, analyzer),
        startup=startup_verdict(rules, findings, ordered_knobs, incomplete),
    )
    from srcreview.evidence.plan import plan

    return made.model_copy(update={"startup_evidence": plan(index, made)}), frozenset(applied)


def _reason(text: str | None) -> str | None:
    """A model's unknown reason without the "model config of X: " it starts with (shown beside X)."""
    if text and text.startswith("model config of ") and ": " in text:
        return text.split(": ", 1)[1]
    return text


def _class_line(facts) -> str | None:
    classes = getattr(facts, "config_class", None)
    if classes is None:
        return None
    return classes.label() if not classes.unknown else f"not read ({classes.unknown})"


def _models(recipe, analyzer) -> tuple:
    """The models the recipe names, the configs bound for them, and the keys the analysis read."""
    from srcreview.hfconfig.binding import model_refs
    from srcreview.model.findings import ModelFile, ModelInfo, StatedValue

    roles: dict[str, list[Any]] = {}  # "target" / "draft"
    for ref, _, role in model_refs(recipe):
        roles.setdefault(ref, []).append(role)
    reads = analyzer.runtime.model_reads
    out = []
    for facts in recipe.models:
        out.append(ModelInfo(
            ref=facts.ref or "", roles=tuple(roles.get(facts.ref or "", ())), source=facts.source,
            revision=facts.revision, commit=facts.commit,
            files=tuple(ModelFile(path=f.path, sha256=f.sha256, commit=f.commit) for f in facts.files),
            stated=tuple(StatedValue(key=o.key, value=o.value, line=o.line, replaces=o.replaces)
                         for o in facts.overrides),
            unknown=_reason(facts.unknown_reason),
            read=tuple(sorted(key for ref, key in reads if ref == facts.ref)),
            config_class=_class_line(facts),
            class_decided=tuple(sorted(t for ref, t in analyzer.runtime.class_reads if ref == facts.ref)) or None))
    return tuple(out)


def anchor_names(recipe, rules: tuple[Rule, ...]) -> list[str]:
    """The symbols the checks of the rules that may apply to `recipe` start from (entries,
    dispatchers, sinks, classes of fields, what a kind names itself: `anchors(params)`), in the
    order the review meets them (VllmConfig first, those of rules tied to a model runner last):
    what is worth parsing ahead. A hint only: conditions on the runner and on declared defaults
    are taken as holding, and nothing here decides a verdict."""
    def may_apply(rule: Rule) -> bool:
        for key, cond in rule.when.items():
            cond = cast(Condition, cond)  # the loader makes every `when` value a Condition
            if key == "runner" or cond.differs_from is not None:
                continue
            if not _holds(cond, _when_value(_RecipeOnly(recipe), key), None):
                return False
        return True

    names: dict[str, int] = {ROOT_CONFIG: 0}  # the bindings and the runner read it before any rule
    for rule in rules:
        if not may_apply(rule):
            continue
        params = rule.check.params
        found = [params.get(k) for k in ("entry", "dispatch", "sink", "function", "enum", "parser")]
        found += [params[k].rpartition(".")[0] for k in ("field",) if isinstance(params.get(k), str)]
        found += [c for c in params.get("callers", ()) if isinstance(c, str)]
        kind = check_kind(rule.check.kind)
        if hasattr(kind, "anchors"):  # a kind that starts from fixed symbols (draft-config: the runners)
            found += kind.anchors(kind.Params.model_validate(params))
        for name in found:
            # the engine starts with EngineArgs (bindings), then VllmConfig (bindings, runner)
            if isinstance(name, str) and name and "{" not in name and name.split(".")[0] != ENGINE_CLASS:
                names.setdefault(name, 0 if name.startswith(f"{ROOT_CONFIG}.") else 2 if rule.requires_runner else 1)
    return sorted(names, key=lambda n: names[n])


class _RecipeOnly:
    """What `_when_value` reads, without an analysis: the runner is unknown."""

    def __init__(self, recipe):
        self.recipe = recipe
        self.runner = RunnerInfo()


# ---------------------------------------------------------------------------------------------
# runner, values, conditions


def _bindings(index, recipe, profile=None) -> dict:
    """The recipe's bindings in VllmConfig terms (srcreview.vllm.runtime.config_bindings), with the
    runtime profile's platform and packages; the recipe's own keys alone when the revision's
    engine-args builder cannot be read."""
    from srcreview.vllm.models import model_bindings
    from srcreview.vllm.profile import profile_bindings
    from srcreview.vllm.runtime import config_bindings

    bound = {**recipe.bindings, **model_bindings(recipe), **(profile_bindings(profile) if profile else {})}
    unknown = {k: _shell_decides(recipe, recipe.setting(k)) for k in bound if recipe.setting(k) is not None}
    unknown.update({k: u.reason for k, v in bound.items() if is_unknown(v) and (u := unknown_in(v)) is not None})
    for item in recipe.open:  # an env variable whose value another decides (compose's `- NAME`): not unset
        unknown.update({k: item.reason for k in item.may_set if k.startswith("env.") and k not in bound})
    unknown = {k: reason for k, reason in unknown.items() if reason}
    decided = {k: v for k, v in bound.items() if k not in unknown}
    try:
        out = config_bindings(index, decided, gpu=recipe.hardware.gpu)
    except (*ANALYSIS_ERRORS, DataError, SourceUnavailable):
        out = decided
    return {**out, **_unknown_bindings(index, unknown)}


def _unknown_bindings(index, unknown: dict[str, str]) -> dict:
    """Values the shell decides (key -> why), bound as the interpreter's unknown at the key and
    at the config path the engine puts it on: set (not the default), but never a constant."""
    if not unknown:
        return {}
    from srcreview.interp.values import Unknown
    from srcreview.vllm.runtime import key_paths

    try:
        paths = key_paths(index)
    except (*ANALYSIS_ERRORS, DataError, SourceUnavailable):
        paths = {}
    out = {}
    for key, reason in unknown.items():
        out[key] = Unknown(reason)
        where = paths.get(key)
        if where is not None:
            out[where.path] = out[key]
    return out


def _prepared(index, recipe, bindings):
    """The recipe's analyzer with the engine's config construction walked (its post-init hooks:
    what they store, whether they raise); a review never fails because that walk cannot run."""
    from srcreview.interp.interpreter import analyzer

    an = analyzer(index, bindings)
    try:
        an.prepare()
    except (*ANALYSIS_ERRORS, DataError) as exc:
        return an, [f"config construction: the analysis could not walk it ({type(exc).__name__})"]
    except SourceUnavailable as exc:
        return an, [f"config construction: {exc}"]
    return an, []


def _subjects(rule: Rule, ctx: CheckContext) -> list:
    """What a rule runs on: once (None), or once per setting of the recipe (`for_each`):
    every setting, or the speculative settings that may reach the draft model (every key
    under speculative_config but the method and depth, every top-level key that
    speculative_config can also set, and every one the draft's ModelConfig copies)."""
    recipe = ctx.recipe
    if rule.for_each is None:
        return [None]
    if rule.for_each == "setting":
        return list(recipe.settings)
    if rule.for_each == "nested-setting":
        return [s for s in recipe.settings if s.key.startswith(f"{SPECULATIVE}.")
                and s.key.split(".", 1)[1] not in SPECULATION_KEYS and "." not in s.key.split(".", 1)[1]]
    # "draft-setting": top-level settings the draft may take: speculative_config has the same key,
    # or the draft's own ModelConfig is built with the target's value of it
    twins = _nested_fields(ctx) | _inherited_keys(ctx)
    return [s for s in recipe.settings if "." not in s.key and s.key in twins]


def _inherited_keys(ctx: CheckContext) -> frozenset[str]:
    """Top-level keys that land on a target ModelConfig field the draft's ModelConfig copies."""
    from srcreview.vllm.anchors import MODEL_CONFIG_FIELD
    from srcreview.vllm.drafting import inherited_model_fields
    from srcreview.vllm.runtime import key_paths

    def compute():
        try:
            fields = inherited_model_fields(ctx.index)
            paths = key_paths(ctx.index)
        except (*ANALYSIS_ERRORS, DataError, SourceUnavailable):
            return frozenset()
        return frozenset(key for key, where in paths.items()
                         if where.path.split(".")[0] == MODEL_CONFIG_FIELD and where.path.split(".")[-1] in fields
                         and where.path.count(".") == 1)

    return ctx.tree_memoized("inherited-keys", compute)


def _nested_fields(ctx: CheckContext) -> frozenset[str]:
    from srcreview.checks._common import class_info

    def compute():
        try:
            info = class_info(ctx, SPECULATIVE_CLASS)
        except (*ANALYSIS_ERRORS, DataError, SourceUnavailable):
            return frozenset()
        return frozenset(f.name for f in info.fields) if info is not None else frozenset()

    return ctx.tree_memoized("nested-fields", compute)


def _runner(index, recipe, bindings) -> tuple[RunnerInfo, list[str]]:
    """The model runner under the recipe; only speculative-decoding verdicts depend on it."""
    from srcreview.interp import model_runner

    if not recipe.uses_speculative_decoding:
        return RunnerInfo(reason="not evaluated: the recipe does not use speculative decoding"), []

    try:
        decision = model_runner(index, bindings)
    except ANALYSIS_ERRORS as exc:
        return RunnerInfo(reason=f"analysis unavailable: {type(exc).__name__}"), [
            "model runner: the analysis core could not evaluate VllmConfig.use_v2_model_runner"]
    except SourceUnavailable as exc:
        return RunnerInfo(reason=str(exc)), [f"model runner: {exc}"]
    except DataError as exc:  # e.g. VllmConfig absent or ambiguous at this revision
        return RunnerInfo(reason=f"undecided: {exc}"), []
    reason = decision.reason
    if decision.assumptions:
        reason += " (assuming: " + "; ".join(sorted({a.text for a in decision.assumptions})) + ")"
    roles = {"runner-selection": "decides the model runner", "decided": "branch decided under the recipe",
             "returns": "return taken under the recipe"}
    evidence = tuple(a.model_copy(update={"role": f"model runner selection: {roles.get(a.role, a.role)}"})
                     for a in decision.evidence)
    return RunnerInfo(value=cast(Literal["v1", "v2"] | None, decision.value),
                      status="resolved" if decision.value else "undecided",
                      evidence=evidence, reason=reason), []


class _Values(dict):
    """Template values: recipe settings by dotted key, env.X, hardware.*, recipe.name, runner;
    an unset engine key reads as its declared default at the revision."""

    def __init__(self, ctx: CheckContext):
        recipe = ctx.recipe
        super().__init__({s.key: s.value for s in recipe.settings})
        self.update({f"env.{e.name}": e.value for e in recipe.env})
        self["hardware.compute_capability"] = recipe.hardware.compute_capability
        self["hardware.gpu"] = recipe.hardware.gpu
        self["recipe.name"] = recipe.name
        self["runner"] = ctx.runner.value or "undecided"
        self._ctx = ctx

    def get(self, key, default=None):
        if key in self:
            return self[key]
        if re.fullmatch(r"[a-z_]+(\.[a-z_]+)?", key or ""):
            value = default_of(self._ctx, key)
            if value is not None:
                return value
        return default


def default_of(ctx: CheckContext, key: str) -> Any:
    """The declared default of an engine key at the revision (None when unknown or not literal,
    or when a module it is declared in cannot be read)."""
    try:
        return _declared_default(ctx, key)
    except SourceUnavailable:
        return None


def _declared_default(ctx: CheckContext, key: str) -> Any:
    from srcreview.checks._knobs import resolve_key
    from srcreview.index import UNKNOWN
    from srcreview.index.facts import FieldFact

    try:
        decl = resolve_key(ctx, key, ENGINE_CLASS, ROOT_CONFIG)
    except ANALYSIS_ERRORS:
        return None
    if decl.status != "exists":
        return None
    field = cast(FieldFact, decl.field)  # set for an existing key
    if field.value is UNKNOWN and field.default and re.fullmatch(r"[A-Za-z_]\w*\.[A-Za-z_]\w*", field.default):
        # `kv_cache_dtype: CacheDType = CacheConfig.cache_dtype`: the default is another field's
        from srcreview.checks._common import owner_of

        cls_name, name = field.default.split(".")
        owner = owner_of(ctx, decl.owner, field)
        symbol = ctx.index.resolve_name(owner.symbol.module, cls_name) if owner is not None else None
        other = ctx.index.class_info(symbol.qualname) if symbol is not None and symbol.kind == "class" else None
        field = other.field(name) if other is not None else None
        if field is None:
            return None
    return None if field.value is UNKNOWN else field.value


def _when_value(ctx: CheckContext | _RecipeOnly, key: str) -> Any:
    recipe = ctx.recipe
    if key == "runner":
        return ctx.runner.value
    if key == "speculative":
        return recipe.uses_speculative_decoding
    if key == "recipe.name":
        return recipe.name
    if key == "hardware.compute_capability":
        return recipe.hardware.compute_capability
    if key == "hardware.gpu":
        return recipe.hardware.gpu
    if key.startswith("env."):
        return next((e.value for e in recipe.env if e.name == key[4:]), None)
    return recipe.value(key)


def _holds(cond: Condition, value: Any, ctx: CheckContext | None) -> bool:
    """Whether `value` meets `cond` (`ctx`, the review's, only for a differs_from condition)."""
    def same(a, b):
        return a.lower() == b.lower() if isinstance(a, str) and isinstance(b, str) else a == b

    if cond.set is not None and (value is not None) != cond.set:
        return False
    if cond.equals is not None and not same(value, cond.equals):
        return False
    if cond.not_equals is not None and same(value, cond.not_equals):
        return False
    if cond.in_ is not None and not any(same(value, v) for v in cond.in_):
        return False
    if cond.not_in is not None and any(same(value, v) for v in cond.not_in):
        return False
    if cond.matches is not None and (value is None or not re.search(cond.matches, str(value))):
        return False
    if cond.not_matches is not None and value is not None and re.search(cond.not_matches, str(value)):
        return False
    if cond.startswith is not None and (not isinstance(value, str) or not value.startswith(cond.startswith)):
        return False
    if cond.differs_from is not None:
        review_ctx = cast(CheckContext, ctx)  # given wherever a differs_from condition is held
        other = review_ctx.recipe.value(cond.differs_from)
        if other is None:
            other = default_of(review_ctx, cond.differs_from)
        if value is None or other is None or same(value, other):
            return False
    return True


def _applies(rule: Rule, ctx: CheckContext) -> tuple[bool, bool]:
    """(whether the rule applies, whether it applies only if an undecided runner is assumed)."""
    downgrade = False
    wanted_runner = rule.requires_runner
    for key, cond in rule.when.items():
        if key == "runner" and ctx.runner.value is None:
            downgrade = True
            continue
        if not _holds(cast(Condition, cond), _when_value(ctx, key), ctx):  # a Condition once loaded
            return False, False
    if wanted_runner:
        if ctx.runner.value is None:
            downgrade = True
        elif ctx.runner.value != wanted_runner:
            return False, False
    return True, downgrade


# ---------------------------------------------------------------------------------------------
# checks, findings, knobs


def _shell_decides(recipe, setting) -> str:
    """Why the shell decides the value of `setting` (it holds an UnknownValue, or words the shell
    may split into flags come after it), or ""."""
    found = unknown_in(getattr(setting, "value", None))
    if found is not None:
        return found.reason
    key = getattr(setting, "key", None)
    for item in recipe.open:
        if key in item.may_set:
            return f"{item.what} (line {item.line}) may set it again: the shell decides those words"
    return ""


def _run_check(rule: Rule, ctx: CheckContext, subject) -> tuple[CheckResult, str]:
    kind = check_kind(rule.check.kind)
    params = kind.Params.model_validate(rule.check.params)
    if subject is not None and not getattr(kind, "VALUE_BLIND", False):
        # a value the shell decides is no value to check: only a kind that never reads it may run
        reason = _shell_decides(ctx.recipe, subject)
        if reason:
            return CheckResult(kind.UNDECIDED_OUTCOMES[0], tags=(SHELL_TAG,), reason=reason,
                               open=(f"{subject.key}: {reason}",)), ""
    try:
        return kind.run(ctx, params, subject), ""
    except ANALYSIS_ERRORS as exc:
        reason = f"analysis unavailable ({type(exc).__name__})"
        return CheckResult(kind.UNDECIDED_OUTCOMES[0], tags=("analysis-unavailable",), reason=reason), \
            f"{rule.id}: {reason}"
    except SourceUnavailable as exc:
        tag: Tag = getattr(exc, "tag", "source-unavailable")  # unparsable-source: a module the check needs
        return CheckResult(kind.UNDECIDED_OUTCOMES[0], tags=(tag,), reason=str(exc)), \
            f"{rule.id}: {exc}"
    except DataError as exc:  # the index refuses an ambiguous symbol: undecided, never a guess
        return CheckResult(kind.UNDECIDED_OUTCOMES[0], tags=("ambiguous-symbol",), reason=str(exc)), ""
    except Exception as exc:  # noqa: BLE001 - a defect in the analysis must not pass as a verdict
        reason = f"analysis failed ({type(exc).__name__})"
        return CheckResult(kind.UNDECIDED_OUTCOMES[0], tags=("analysis-error",), reason=reason), \
            f"{rule.id}: {reason}"


def _values(ctx: CheckContext, subject, result: CheckResult) -> dict:
    values = _Merged(ctx.template_values)
    if subject is not None:
        values.update({"key": subject.key, "value": subject.value, "recipe_key": subject.written_as})
    values.update(result.details)
    values["reason"] = result.reason
    values["outcome"] = result.outcome
    values["missing_tests"] = "; ".join(result.missing_tests)
    values["open"] = "; ".join(result.open)
    return values


class _Merged(dict):
    def __init__(self, base: dict[str, Any]):
        super().__init__()
        self._base = base

    def get(self, key, default=None):
        if key in self:
            return self[key]
        return self._base.get(key, default)


def _finding(rule: Rule, ctx: CheckContext, subject, result: CheckResult, downgrade: bool) -> Finding | None:
    settled = _settled(rule, result) if not downgrade else None
    classification = rule.verdict[settled or result.outcome]
    if classification == "none":
        return None
    tags = set(result.tags)
    rests_on = list(_open(rule, result, downgrade)) if settled is None else []
    if downgrade:
        tags.add("runner-undecided")
    if rests_on and classification in ("confirmed", "refuted"):
        classification = "plausible"  # what the source did not decide: never a promise
    if classification == "plausible" and not tags:
        tags.add("undecided")
    values = _values(ctx, subject, result)
    keys = _finding_keys(rule, ctx, subject, values, result.refusing if classification == "confirmed" else ())
    primary = keys[0] if keys else ""
    setting = ctx.recipe.setting(primary) if primary else None
    recipe_hops = []
    for key in keys:
        s = ctx.recipe.setting(key)
        if s is not None:
            recipe_hops.append(Hop(kind="recipe", text=f"{s.written_as} = {s.value!r}", recipe_line=s.line))
        else:
            recipe_hops.append(Hop(kind="recipe", text=f"{key} unset (default {values.get(key)!r})"))
    template = rule.message[classification] if classification in rule.message else rule.claim
    message = fill(template, values)
    if classification == "plausible" and result.reason and "{reason}" not in template:
        message += f" Open: {result.reason}."
    suffix = f":{subject.key}" if subject is not None else ""
    return Finding(
        id=f"{rule.id}{suffix}",
        rule=rule.id,
        classification=classification,
        severity=rule.severity,
        problem=rule.problem,
        knobs=tuple(keys),
        claim=fill(rule.claim, values),
        message=message,
        evidence=tuple(result.evidence[:MAX_EVIDENCE]),
        tags=tuple(sorted(tags)),
        fingerprint=fingerprint(rule.id, primary, result.symbols),
        recipe_line=setting.line if setting is not None else None,
        trace=tuple(recipe_hops) + result.trace,
        assumptions=tuple(sorted(set(rests_on))),
        missing_tests=result.missing_tests,
        outcome=result.outcome,
    )


def _knob_status(effect, result: CheckResult, rests_on, downgrade: bool) -> KnobStatus | Literal["none"]:
    """A knob row's status: the one every outcome an open question leaves possible gives, else
    the outcome's own, undecided when it rests on something open."""
    if result.possible and not downgrade:
        statuses = {effect.status.get(o, "none") for o in result.possible}
        if len(statuses) == 1:
            return statuses.pop()
    status = effect.status.get(result.outcome, "none")
    return "undecided" if rests_on and status in ("applied", "ignored") else status


def _settled(rule: Rule, result: CheckResult) -> str | None:
    """For an undecided result whose possible outcomes the rule maps to one classification: one
    of them (the open question does not change the answer); else None."""
    if not result.possible or result.outcome not in check_kind(rule.check.kind).UNDECIDED_OUTCOMES:
        return None
    if len({rule.verdict[o] for o in result.possible}) == 1:
        return result.possible[0]
    return None


def _open(rule: Rule, result: CheckResult, downgrade: bool) -> tuple[str, ...]:
    """What a result rests on that the source did not decide under the recipe: the check's
    own open questions (an undecided outcome always has one), and the runner when the rule
    needs one and the recipe leaves it open."""
    out = list(result.open)
    if result.outcome in check_kind(rule.check.kind).UNDECIDED_OUTCOMES and not out:
        out.append(result.reason or "undecided")
    if downgrade:
        out.append(f"the model runner is undecided; the rule applies on the {rule.requires_runner or 'selected'} "
                   "runner")
    return tuple(out)


def _finding_keys(rule: Rule, ctx: CheckContext, subject, values, refusing=()) -> list[str]:
    """The keys a finding is about: the subject's, else the rule's own (its knob rows, else the
    recipe keys of its `when`), then those whose values the refusal it proves reads."""
    if subject is not None:
        return [subject.key, *refusing]
    keys = [fill(e.key, values) for e in rule.knobs]
    if not keys:
        keys = [k for k in rule.when if ctx.recipe.setting(k) is not None]
    return list(dict.fromkeys([*keys, *refusing]))


def _base_knobs(recipe, ctx: CheckContext | None = None) -> dict[tuple[str, str], Knob]:
    rows: dict[tuple[str, str], Knob] = {}
    for s in recipe.settings:
        scope: Scope
        if s.key in DRAFT_KEYS:
            scope = "draft"
        elif s.key in TARGET_KEYS:
            scope = "target"
        else:
            scope = "engine"
        found = unknown_in(s.value)
        if found is not None:  # never accepted: vLLM starts with whatever the shell gives it
            rows[(s.key, scope)] = Knob(key=s.key, value=str(s.value) if found is s.value else s.value, scope=scope,
                                        recipe_line=s.line, status="undecided", tags=(SHELL_TAG,), note=found.reason)
            continue
        rows[(s.key, scope)] = Knob(key=s.key, value=s.value, scope=scope, recipe_line=s.line, status="accepted")
    for item in recipe.open:  # what the recipe says that cannot be read as a setting: open, said out loud
        rows[(item.what, "engine")] = Knob(key=item.what, scope="engine", recipe_line=item.line, status="undecided",
                                           tags=("recipe-open",), note=item.reason)
        for (key, row_scope), row in list(rows.items()):
            if key in item.may_set and row.status == "accepted":
                rows[(key, row_scope)] = row.model_copy(update={
                    "status": "undecided", "tags": tuple(sorted({*row.tags, SHELL_TAG})),
                    "note": f"{item.what} (line {item.line}) may set it again: the shell decides those words"})
    for item in recipe.notes:  # what the parser drops: the recipe's words say it, vLLM does not use it
        evidence = ()
        if item.source and ctx is not None:
            path, _, lines = item.source.rpartition(":")
            start, _, end = lines.partition("-")
            from srcreview.vllm.anchors import ARGV_PARSER

            evidence = (ctx.anchor(path, int(start), int(end or start), ARGV_PARSER.rsplit(".", 1)[-1],
                                   "rewrites the command line before argparse reads it"),)
        rows.setdefault((item.what, "engine"), Knob(key=item.what, scope="engine", recipe_line=item.line,
                                                    status="ignored", tags=("parser-form",), note=item.reason,
                                                    evidence=evidence))
    return rows


def _apply_knobs(rule: Rule, ctx: CheckContext, subject, result: CheckResult, downgrade: bool,
                 knobs: dict[tuple[str, str], Knob]) -> None:
    values = _values(ctx, subject, result)
    rests_on = _open(rule, result, downgrade)
    for effect in rule.knobs:
        status = _knob_status(effect, result, rests_on, downgrade)
        if status == "none":
            continue
        key = fill(effect.key, values)
        tags = tuple(sorted(set(result.tags) | ({"runner-undecided"} if downgrade else set())))
        # three lookups, not a scan of the table: one scan per setting made a review quadratic
        scopes: list[Scope] = [sc for sc in _SCOPES if (key, sc) in knobs] if effect.scope == "any" \
            else [effect.scope]
        setting = ctx.recipe.setting(key)
        for scope in scopes:
            old = knobs.get((key, scope))
            # an unset key whose effective value the rule derives shows unset, not its declared default
            value = fill(effect.value, values) if effect.value else (
                setting.value if setting else None if effect.effective else values.get(key))
            new = Knob(key=key, value=value, scope=scope, recipe_line=setting.line if setting else None,
                       status=status, evidence=_knob_evidence(result.evidence), tags=tags,
                       note=fill(effect.note, values) if effect.note else (
                           result.reason if status == "undecided" else ""),  # an open row says why
                       effective=fill(effect.effective, values) if effect.effective else None)
            if old is None or KNOB_PRECEDENCE[new.status] > KNOB_PRECEDENCE[old.status]:
                knobs[(key, scope)] = new if old is None else new.model_copy(
                    update={"value": old.value, "tags": tuple(sorted(set(old.tags) | set(tags)))})
            elif KNOB_PRECEDENCE[new.status] == KNOB_PRECEDENCE[old.status]:
                merged = tuple(sorted(set(old.evidence) | set(new.evidence), key=Anchor.sort_key))[:MAX_EVIDENCE]
                knobs[(key, scope)] = old.model_copy(update={"evidence": merged, "note": old.note or new.note,
                                                             "effective": old.effective or new.effective,
                                                             "tags": tuple(sorted(set(old.tags) | set(tags)))})


_SCOPES: tuple[Scope, ...] = ("engine", "target", "draft")
_KNOB_ROLE_ORDER = ("reads", "inspected", "passes", "replaces", "branch", "gating", "declares")


def _knob_evidence(evidence: tuple[Anchor, ...]) -> tuple[Anchor, ...]:
    """The anchors that decide a knob's status first (reads, inspected functions, the config
    handed on), then the path that led there; at most eight."""
    def rank(anchor: Anchor) -> int:
        return next((n for n, prefix in enumerate(_KNOB_ROLE_ORDER) if anchor.role.startswith(prefix)),
                    len(_KNOB_ROLE_ORDER))

    ordered = sorted(enumerate(evidence), key=lambda item: (rank(item[1]), item[0]))
    return tuple(a for _, a in ordered[:8])


def _one_answer(knobs: dict) -> dict:
    """One key, one answer: where vLLM refuses a key or its value (an `unknown-knob` or
    `invalid-value` row in one scope), the rows of that key in other scopes that say what the
    draft or target would do with it are dropped; vLLM never gets that far."""
    refused = {key for (key, _), k in knobs.items() if k.status in REFUSING_STATUSES}
    return {(key, scope): k for (key, scope), k in knobs.items()
            if key not in refused or k.status in REFUSING_STATUSES}


def _certain_refusals(knobs: dict, findings, rules) -> dict:
    """A recipe value that a confirmed refusal stopping start-up rests on (a backend every
    candidate refuses for its block size) is `invalid-value`, anchored where the refusal is:
    vLLM does not start with it, so no row of it says `accepted` or `applied`."""
    stopping = {rule.id for rule in rules if rule.stops_startup}
    out = dict(knobs)
    for finding in findings:
        if finding.rule not in stopping or finding.kind != "problem":
            continue
        for (key, scope), knob in knobs.items():
            # certain beats open (another raise that may be reached), not a value the shell decides
            if key in finding.knobs and knob.status in ("accepted", "applied", "undecided") \
                    and not {SHELL_TAG, "recipe-open"} & set(knob.tags):
                out[(key, scope)] = knob.model_copy(update={
                    "status": "invalid-value", "evidence": _knob_evidence(finding.evidence),
                    "note": f"start-up: {finding.rule}: {finding.claim}"})
    return out


def _open_refusals(knobs: dict, findings, rules) -> dict:
    """`accepted` and `applied` are promises: a knob that an open question of a rule stopping
    start-up names (a selector that may refuse the backend, a value that may be refused) is
    `undecided`, saying which question keeps it so."""
    stopping = {rule.id for rule in rules if rule.stops_startup}
    open_by_key: dict[str, str] = {}
    for finding in findings:
        if finding.rule in stopping and finding.kind == "open-question":
            for key in finding.knobs:
                open_by_key.setdefault(key, f"{finding.rule} open: {finding.claim}")
    out = {}
    for (key, scope), knob in knobs.items():
        if key in open_by_key and knob.status in ("accepted", "applied"):
            note = "; ".join(n for n in (knob.note, open_by_key[key]) if n)
            tags = knob.tags + (("startup-open",) if "startup-open" not in knob.tags else ())
            knob = knob.model_copy(update={"status": "undecided", "note": note, "tags": tags})
        out[(key, scope)] = knob
    return out


def _knob_order(k: Knob) -> tuple:
    scope = {"engine": 0, "target": 1, "draft": 2}[k.scope]
    return (k.key.startswith(f"{SPECULATIVE}."), k.key, scope)
