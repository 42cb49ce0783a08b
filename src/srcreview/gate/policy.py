"""The CI gate: which findings fail a run, and the exit code.

API (library; never prints or exits):

    policy = parse_fail_on("confirmed:high")          # UsageError (64) if malformed
    result = evaluate(reviews, policy, baseline=load_baseline(path), waivers=load_waivers(...),
                      known_rules={...}, today=dates.today(date), allow_stale=False)
    result.exit_code       # 0 passed, 1 failed, 2 incomplete
    result.reviews         # the reviews annotated: Finding.waiver, Finding.baseline, Review.gate
    result.failing / .waived / .new / .worse / .unchanged / .fixed   # (recipe path, finding) pairs
    result.stale                                      # (recipe path, rule id): stale rules that failed it

`--fail-on` syntax: comma-separated `CLASSIFICATION[:SEVERITY]` terms, or `none`. Only
problems and open questions can fail the gate, never facts (Finding.kind: each rule says
which classification of its claim is a problem). CLASSIFICATION is the least that fails:
`confirmed` (problems: the source decided the rule's problem), `plausible` (problems and open
questions) or `any` (the same as plausible: facts never fail). SEVERITY is the least severity
that fails: `high`, `medium`, `low` or `info` (the default when omitted). A finding fails the
gate when any term matches it, it is not waived and, with a baseline, it is new or worse.
Examples: `confirmed:high` (default: a confirmed problem of severity high), `plausible:medium`,
`confirmed:medium,plausible:high`, `any:low`, `none` (never fails on findings; an incomplete
review still exits 2).

A review that could not complete (Review.incomplete) makes the run exit 2 even when other
findings failed the gate: the gate never passes, or claims a decision, on a partial review.

A rule that is stale at the revision (its anchors are gone: vLLM moved on, the rule no longer
applies as written) decided nothing, so it fails the gate (exit 1, listed in ReviewGate.stale)
whatever `--fail-on` says, unless the run accepts stale rules explicitly (`allow_stale`,
`--allow-stale`): a gate must not pass because its rules stopped looking.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from srcreview.core.errors import EXIT_DATA, EXIT_GATE_FAILED, EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE, UsageError
from srcreview.gate import baseline as _baseline
from srcreview.gate.waivers import Waiver, check_waivers
from srcreview.model.findings import (
    KIND_ORDER,
    SEVERITY_ORDER,
    BaselineEntry,
    Finding,
    Review,
    ReviewGate,
    kind_of,
)
from srcreview.vllm.anchors import VERSION_FILE

DEFAULT_FAIL_ON = "confirmed:high"

# Worst first, for one exit code over several runs (a matrix of recipes x revisions): a mistake
# in srcreview's inputs is never a gate decision (65, then 64), a review that could not complete
# outranks a failed gate (as `evaluate` ranks them over many reviews), and a pass is the least.
EXIT_RANK = (EXIT_DATA, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_GATE_FAILED, EXIT_OK)


def worst_exit(codes: Iterable[int]) -> int:
    """The worst of `codes` by EXIT_RANK (a code outside it ranks first: it is not a pass); 0 for none."""
    codes = set(codes)
    unknown = sorted(codes - set(EXIT_RANK))
    if unknown:
        return unknown[0]
    return next((code for code in EXIT_RANK if code in codes), EXIT_OK)


_LEAST_KIND = {"confirmed": "problem", "plausible": "open-question", "any": "open-question"}


@dataclass(frozen=True)
class FailTerm:
    classification: str
    severity: str

    def matches(self, finding: Finding) -> bool:
        return (KIND_ORDER[finding.kind] >= KIND_ORDER[_LEAST_KIND[self.classification]]
                and SEVERITY_ORDER[finding.severity] >= SEVERITY_ORDER[self.severity])

    def __str__(self) -> str:
        return f"{self.classification}:{self.severity}"


@dataclass(frozen=True)
class FailOn:
    """A parsed --fail-on policy; no terms means `none`."""

    terms: tuple[FailTerm, ...]

    def matches(self, finding: Finding) -> bool:
        return any(term.matches(finding) for term in self.terms)

    def __str__(self) -> str:
        return ",".join(str(t) for t in self.terms) or "none"


def parse_fail_on(text: str) -> FailOn:
    """Parse `--fail-on`; UsageError with the accepted syntax if malformed."""
    syntax = ("expected CLASSIFICATION[:SEVERITY][,...] with CLASSIFICATION in confirmed, plausible, any "
              "and SEVERITY in high, medium, low, info; or none")
    if not isinstance(text, str) or not text.strip():
        raise UsageError(f"--fail-on: empty policy; {syntax}")
    parts = [p.strip().lower() for p in text.split(",")]
    if parts == ["none"]:
        return FailOn(terms=())
    terms = []
    for part in parts:
        classification, colon, severity = part.partition(":")
        severity = severity if colon else "info"
        if classification not in _LEAST_KIND or severity not in SEVERITY_ORDER:
            raise UsageError(f"--fail-on: {part[:40]!r} is not a policy term; {syntax}")
        terms.append(FailTerm(classification, severity))
    return FailOn(terms=tuple(sorted(set(terms), key=str)))


Pair = tuple[str, Finding]


@dataclass(frozen=True)
class GateResult:
    """The decision over all reviews of a run, with the findings that led to it."""

    fail_on: FailOn
    reviews: tuple[Review, ...]
    exit_code: int
    failing: tuple[Pair, ...] = ()
    waived: tuple[Pair, ...] = ()
    new: tuple[Pair, ...] = ()
    worse: tuple[Pair, ...] = ()
    improved: tuple[Pair, ...] = ()
    unchanged: tuple[Pair, ...] = ()
    fixed: tuple[tuple[str, BaselineEntry], ...] = ()
    incomplete: tuple[tuple[str, str], ...] = ()
    stale: tuple[tuple[str, str], ...] = ()  # (recipe path, rule id) of stale rules that failed the gate
    outgrown: tuple[tuple[str, Finding, Waiver, tuple[str, str]], ...] = ()  # (path, finding, waiver, (then, now))
    baseline: str | None = None
    allow_stale: bool = False

    @property
    def decision(self) -> str:
        return {EXIT_OK: "passed", EXIT_GATE_FAILED: "failed"}.get(self.exit_code, "incomplete")

    def counts(self) -> dict[str, int]:
        """Every finding once: failing, else waived, else by kind (problems, open questions, facts)."""
        failing = {(p, f.fingerprint) for p, f in self.failing}
        waived = {(p, f.fingerprint) for p, f in self.waived}
        counts = dict.fromkeys(("failing", "waived", "problem", "open-question", "fact"), 0)
        for review in self.reviews:
            for finding in review.findings:
                key = (review.recipe.path, finding.fingerprint)
                counts["failing" if key in failing else "waived" if key in waived else finding.kind] += 1
        return counts

    def summary(self) -> str:
        """The gate's counts in words: `1 problem at or above confirmed:high; 1 stale rule; 1 waived;
        2 open questions; 3 facts` (a stale rule fails the gate whatever --fail-on says)."""
        counts = self.counts()
        kinds = {f.kind for _, f in self.failing}
        noun = "problem" if kinds <= {"problem"} else "open question" if kinds == {"open-question"} else "finding"
        parts = [f"{_count(counts['failing'], noun)} at or above {self.fail_on}" if self.fail_on.terms
                 else "--fail-on none"]
        if self.stale:
            parts.append(_count(len(self.stale), "stale rule"))
        elif self.allow_stale and any(r.stale_rules for r in self.reviews):
            accepted = sum(len(r.stale_rules) for r in self.reviews)
            parts.append(f"{_count(accepted, 'stale rule')} accepted by --allow-stale")
        if counts["waived"]:
            parts.append(f"{counts['waived']} waived")
        if self.outgrown:
            _, finding, waiver, (written_for, now) = self.outgrown[0]
            parts.append(f"{_count(len(self.outgrown), 'waiver')} outgrown (waiver {waiver.fingerprint} at "
                         f"{waiver.source} was written for a {written_for} finding, it is {now} "
                         "now: not waived" + (", and others" if len(self.outgrown) > 1 else "") + ")")
        if counts["problem"]:
            parts.append(_count(counts["problem"], "other problem" if self.fail_on.terms else "problem"))
        parts += [_count(counts["open-question"], "open question"), _count(counts["fact"], "fact")]
        if self.baseline is not None:
            parts.append(f"baseline: {len(self.new)} new, {len(self.worse)} worse, "
                         f"{len(self.unchanged) + len(self.improved)} unchanged, {len(self.fixed)} fixed")
        unverified = sum(1 for r in self.reviews if r.revision.identity_unverified)
        if unverified:  # the gate decides on a tree whose release one file of it names: say so
            parts.append(f"source identity unverified ({_count(unverified, 'review')}: only {VERSION_FILE} "
                         "names the release)")
        incomplete = len({path for path, _ in self.incomplete})
        if incomplete:
            parts.append(f"{_count(incomplete, 'review')} could not complete")
        verdicts = [r.startup.verdict for r in self.reviews if r.startup is not None]
        if verdicts:  # the start-up verdict (srcreview.engine.startup), as the first lines say it
            words = {"rejected": "rejected", "undecided": "undecided", "no-refusal-found": "no refusal found"}
            if len(verdicts) == 1:
                parts.append(f"start-up {words[verdicts[0]]}")
            else:
                parts.append("start-up: " + ", ".join(f"{verdicts.count(v)} {word}" for v, word in words.items()
                                                      if v in verdicts))
        return "; ".join(parts)

    def annotate(self, reviews: Iterable[Review]) -> tuple[Review, ...]:
        """The same reviews with this gate's waiver, baseline and decision notes (idempotent)."""
        decided = {r.recipe.path: r for r in self.reviews}
        return tuple(decided.get(r.recipe.path, r) if r.gate is None else r for r in reviews)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _outgrown(finding: Finding, waiver: Waiver, before: BaselineEntry | None) -> tuple[str, str] | None:
    """(what the waiver was written for, what the finding is now) when the finding grew past
    it, as the baseline's `worse` judges: more of a problem (fact -> open question ->
    problem), or as much of one at a higher severity; None while the waiver holds. What the
    waiver does not record (`classification`, `severity`) is taken from the baseline."""
    classification = waiver.classification or (before.classification if before is not None else None)
    severity = waiver.severity or (before.severity if before is not None else None)
    kind = KIND_ORDER[kind_of(classification, finding.problem)] if classification is not None else None
    if kind is not None and KIND_ORDER[finding.kind] > kind:
        return classification or "", finding.classification
    if severity is not None and (kind is None or KIND_ORDER[finding.kind] == kind) \
            and SEVERITY_ORDER[finding.severity] > SEVERITY_ORDER[severity]:
        return (f"{severity} {classification}" if classification else severity), \
            f"{finding.severity} {finding.classification}"
    return None


def evaluate(reviews: Sequence[Review], fail_on: FailOn | str = DEFAULT_FAIL_ON, *,
             baseline: _baseline.Baseline | None = None, waivers: Sequence[Waiver] | None = None,
             known_rules: Iterable[str] | None = None, today: _dt.date | None = None,
             allow_stale: bool = False) -> GateResult:
    """Decide the gate over all reviews; DataError (65) for an expired, unmatched or unknown-rule waiver.

    Stale rules fail the gate unless `allow_stale`."""
    policy = parse_fail_on(fail_on) if isinstance(fail_on, str) else fail_on
    waivers = tuple(waivers or ())
    if waivers:
        check_waivers(waivers, reviews, today or _dt.datetime.now(_dt.timezone.utc).date(), known_rules)
    by_recipe: dict[tuple[str, str], Waiver] = {}
    for waiver in waivers:
        for path in waiver.recipes:
            by_recipe.setdefault((path, waiver.fingerprint), waiver)

    buckets: dict[str, list] = {k: [] for k in ("failing", "waived", "new", "worse", "improved", "unchanged",
                                                 "fixed", "incomplete", "stale")}
    annotated = []
    outgrown: list = []
    for review in reviews:  # in the order given (the JSON lists them so); renderers sort by path
        previous = baseline.entries_for(review, len(reviews)) if baseline is not None else None
        findings, failing = [], []
        for finding in sorted(review.findings, key=lambda f: (f.sort_key(), f.fingerprint)):
            waiver = by_recipe.get((review.recipe.path, finding.fingerprint))
            before = previous.get(finding.fingerprint) if previous is not None else None
            status = _baseline.status(finding, before) if previous is not None else None
            if waiver is not None:
                grown = _outgrown(finding, waiver, before)
                if grown is not None:
                    outgrown.append((review.recipe.path, finding, waiver, grown))
                    waiver = None  # written for less of a problem than it is now
            finding = finding.model_copy(update={"waiver": waiver.note() if waiver else None, "baseline": status})
            pair = (review.recipe.path, finding)
            if waiver is not None:
                buckets["waived"].append(pair)
            if status is not None:
                buckets[status].append(pair)
            if policy.matches(finding) and waiver is None and status in (None, "new", "worse"):
                failing.append(finding.fingerprint)
                buckets["failing"].append(pair)
            findings.append(finding)
        # an incomplete review may lack findings that are not fixed at all: list none as fixed
        fixed = _baseline.fixed(review.findings, previous) if previous is not None and not review.incomplete else ()
        buckets["fixed"].extend((review.recipe.path, entry) for entry in fixed)
        buckets["incomplete"].extend((review.recipe.path, reason) for reason in review.incomplete)
        stale = () if allow_stale else tuple(sorted({s.rule for s in review.stale_rules}))
        buckets["stale"].extend((review.recipe.path, rule) for rule in stale)
        state: Literal["passed", "failed", "incomplete"] = (
            "incomplete" if review.incomplete else "failed" if failing or stale else "passed")
        gate = ReviewGate(status=state, fail_on=str(policy), failing=tuple(failing),
                          baseline=baseline.source if baseline is not None else None, fixed=tuple(fixed),
                          stale=stale)
        annotated.append(review.model_copy(update={"findings": tuple(findings), "gate": gate}))

    exit_code = EXIT_INCOMPLETE if buckets["incomplete"] or not reviews else \
        EXIT_GATE_FAILED if buckets["failing"] or buckets["stale"] else EXIT_OK
    return GateResult(fail_on=policy, reviews=tuple(annotated), exit_code=exit_code,
                      baseline=baseline.source if baseline is not None else None, allow_stale=allow_stale,
                      outgrown=tuple(outgrown), **{k: tuple(v) for k, v in buckets.items()})
