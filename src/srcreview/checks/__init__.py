"""Check kinds: the vocabulary of rules. One module per kind, each a closed set of outcomes.

A check module defines `OUTCOMES` (what it can conclude), `UNDECIDED_OUTCOMES` (those that
may never become confirmed/refuted), `Params` (a record of its rule parameters,
srcreview.core.records) and `run(ctx, params, subject) -> CheckResult`. Checks ask the analysis core (srcreview.index,
srcreview.interp) and never print; when the analysis cannot answer, they return an undecided
outcome with the reason tagged, never a guess. A kind that starts from symbols no parameter
names may define `anchors(params) -> list[str]` (a parse-ahead hint, srcreview.engine.run.anchor_names).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from srcreview.core.records import Record, RecordError
from srcreview.core.tags import Tag
from srcreview.model.findings import Anchor, Hop, RunnerInfo

if TYPE_CHECKING:  # for the annotations only: a check reaches them through its context
    from srcreview.index import Index
    from srcreview.interp.interpreter import Analyzer
    from srcreview.model.recipe.model import Recipe
    from srcreview.source.base import SourceTree

KINDS = {
    "knob-exists": "knob_exists",
    "value-admitted": "value_admitted",
    "field-applied": "field_applied",
    "draft-config": "draft_config",
    "startup": "startup",
    "capability-gate": "capability_gate",
    "backend-admission": "backend_admission",
    "backend-selection": "backend_selection",
    "test-coverage": "test_coverage",
    "flag-exists": "flag_exists",
}


# every outcome a check kind can conclude (each module's OUTCOMES), and `stale` (an anchor symbol
# is absent at the revision: the rule is out of date); a test holds this set to the modules'
Outcome = Literal[
    "exists", "missing", "admitted", "not-admitted", "applied", "not-applied", "nested", "target", "fixed",
    "no-draft-model", "rejected", "none-found", "admits", "rejects", "refuses", "selects", "selects-other",
    "none-admitted", "covered", "uncovered", "registered", "not-registered", "not-applicable", "undecided",
    "stale",
]


class Params(Record):
    """Base of each kind's parameter record: strict, so a typo in a rule file is an error."""


def check_kind(kind: str):
    """The module implementing `kind`; ValueError (shown against the rule file) if unknown."""
    if kind not in KINDS:
        raise ValueError(f"check.kind: unknown check kind {kind!r} (known: {', '.join(sorted(KINDS))})")
    module = importlib.import_module(f"srcreview.checks.{KINDS[kind]}")
    if not hasattr(module, "validate_params"):
        vars(module)["validate_params"] = lambda params, _m=module: _validate(_m, params)
    return module


def _validate(module, params: dict) -> Any:
    try:
        return module.Params.model_validate(params)
    except RecordError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        if err["type"] == "extra_forbidden":
            raise ValueError(f"check.{where}: unknown parameter for this check kind") from None
        if err["type"] == "missing":
            raise ValueError(f"check.{where}: missing required parameter") from None
        raise ValueError(f"check.{where}: {err['msg']}") from None


@dataclass(frozen=True)
class CheckResult:
    """What a check concluded, and everything a finding needs to prove it."""

    outcome: Outcome
    evidence: tuple[Anchor, ...] = ()
    trace: tuple[Hop, ...] = ()
    tags: tuple[Tag, ...] = ()
    # what the outcome rests on that the source did not decide under the recipe: a result that
    # carries any is never confirmed or refuted (srcreview.engine.run maps it to plausible)
    open: tuple[str, ...] = ()
    # for an undecided outcome: the decided outcomes it may be; when the rule maps them all
    # alike (a verdict and a knob status), the open question does not change the answer
    possible: tuple[str, ...] = ()
    # the values the rule's claim may name ({class}, {reason}, ...): each kind's TypedDict
    details: Mapping[str, object] = field(default_factory=dict)
    symbols: tuple[str, ...] = ()  # what the claim is about, for the fingerprint
    missing: tuple[str, ...] = ()  # anchor symbols absent at this revision: the rule is stale
    missing_tests: tuple[str, ...] = ()
    reason: str = ""
    # the recipe keys whose values a refusal it proves reads: with the rule's own keys, the
    # finding names them, and a confirmed refusal that stops start-up makes their rows
    # `invalid-value` (srcreview.engine.run)
    refusing: tuple[str, ...] = ()


@dataclass
class CheckContext:
    """What a check may look at: the revision's index, the recipe's bindings, the runner."""

    index: Index
    tree: SourceTree
    recipe: Recipe
    bindings: dict[str, Any]
    runner: RunnerInfo
    analyzer: Analyzer | None = None  # the recipe's, its config construction walked
    template_values: dict[str, Any] = field(default_factory=dict)
    memo: dict[str, Any] = field(default_factory=dict)

    def anchor(self, path: str, start: int, end: int, symbol: str = "", role: str = "") -> Anchor:
        return Anchor(url=self.tree.url(path, start, end), path=path, start_line=start, end_line=end,
                      symbol=symbol, role=role)

    def symbol_anchor(self, symbol, role: str) -> Anchor:
        return self.anchor(symbol.path, symbol.start_line, symbol.end_line, short(symbol.qualname), role)

    def memoized(self, key: str, compute):
        if key not in self.memo:
            self.memo[key] = compute()
        return self.memo[key]

    def tree_memoized(self, key: str, compute):
        """`memoized`, for an answer that reads the tree alone (its index, anchors into it;
        nothing of the recipe): kept on the Index for every review of the tree (Index.memo),
        unless the reuse is off (srcreview.index.cache.reuse_enabled) or the review's tree is
        not the index's."""
        from srcreview.index.cache import reuse_enabled

        if self.tree is not self.index.tree or not reuse_enabled():
            return self.memoized(key, compute)
        memo = self.index.memo.setdefault("checks", {})
        if key not in memo:
            memo[key] = compute()
        return memo[key]


def short(qualname: str) -> str:
    """`vllm.x.y.MTPSpeculator.load_draft_model` -> `MTPSpeculator.load_draft_model` (class.method)."""
    parts = qualname.split(".")
    for i, part in enumerate(parts):
        if part[:1].isupper():
            return ".".join(parts[i:])
    return parts[-1]


def stale(missing: list[str] | tuple[str, ...], reason: str = "") -> CheckResult:
    return CheckResult(outcome="stale", missing=tuple(sorted(set(missing))), reason=reason)


ANALYSIS_ERRORS = (RecursionError,)  # an analysis deeper than the interpreter's stack
