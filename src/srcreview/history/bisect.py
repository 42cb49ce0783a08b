"""Bisection over an ordered list of revisions: where does a verdict change?

Pure: the caller supplies the revisions (oldest first) and a verdict callback (a review at
that revision reduced to a comparable value, e.g. a rule's classification). Each revision is
judged at most once. Bisection assumes each verdict holds over one contiguous run of
revisions; it finds the first change, then keeps bisecting the rest of the range for later
changes, so a range that goes confirmed -> plausible -> refuted reports both boundaries.

What it cannot see, it says: with equal verdicts at both ends, a change reverted inside the
range is invisible unless every revision is tested (`exhaustive`); and when the tested
verdicts show a value coming back after another one, the result is flagged not monotonic.

`Question` is the verdict `srcreview bisect` asks of each Review (a rule's classification,
optionally for one recipe key, or a knob row's status); `summarize` turns a bisection into
the report with both sides' findings, knob rows and the anchors found on one side only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from srcreview.model.findings import Anchor, Finding, Knob, Review, RevisionInfo

T = TypeVar("T")


@dataclass(frozen=True)
class Boundary:
    """Adjacent revisions (indexes into the list) whose verdicts differ."""

    before: int
    after: int
    verdict_before: Hashable
    verdict_after: Hashable


@dataclass(frozen=True)
class BisectResult(Generic[T]):
    revisions: tuple[T, ...]
    verdicts: dict[int, Hashable] = field(default_factory=dict)  # index -> verdict, for tested ones
    order: tuple[int, ...] = ()  # indexes in the order they were tested
    changes: tuple[Boundary, ...] = ()
    exhaustive: bool = False

    @property
    def tested(self) -> tuple[int, ...]:
        return tuple(sorted(self.verdicts))

    @property
    def untested(self) -> tuple[int, ...]:
        return tuple(i for i in range(len(self.revisions)) if i not in self.verdicts)

    @property
    def first_change(self) -> Boundary | None:
        return self.changes[0] if self.changes else None

    @property
    def monotonic(self) -> bool:
        """False when a verdict comes back after a different one among the tested revisions."""
        runs = [self.verdicts[i] for i in self.tested]
        seen: list[Hashable] = []
        for value in runs:
            if seen and seen[-1] == value:
                continue
            if value in seen:
                return False
            seen.append(value)
        return True

    def notes(self) -> tuple[str, ...]:
        """What the result cannot vouch for, in words."""
        notes = []
        if not self.monotonic:
            notes.append("the tested verdicts are not monotonic (a verdict comes back after another one): "
                         "bisection assumes one contiguous run per verdict, so the boundaries reported are "
                         "one consistent reading of the tested revisions, not necessarily every change")
        if len(self.changes) > 1:
            notes.append(f"the verdict changes {len(self.changes)} times in the range")
        if not self.exhaustive and self.untested:
            if not self.changes:
                notes.append("the verdict is the same at both ends; a change reverted inside the range "
                             "would not be seen without testing every revision")
            else:
                notes.append("untested revisions are assumed to share the verdict of their tested neighbours")
        return tuple(notes)


def bisect(revisions: Sequence[T], verdict: Callable[[T], Hashable], *, exhaustive: bool = False) -> BisectResult[T]:
    """Find every boundary where `verdict` changes over `revisions` (oldest first)."""
    revisions = tuple(revisions)
    if not revisions:
        raise ValueError("no revisions to bisect")
    verdicts: dict[int, Hashable] = {}
    order: list[int] = []

    def judge(i: int) -> Hashable:
        if i not in verdicts:
            verdicts[i] = verdict(revisions[i])
            order.append(i)
        return verdicts[i]

    last = len(revisions) - 1
    if exhaustive:
        for i in range(len(revisions)):
            judge(i)
    else:
        judge(0)
        judge(last)
        lo = 0
        while True:
            current = judge(lo)
            later = [i for i, v in verdicts.items() if i > lo and v != current]
            if not later:
                break
            hi = min(later)
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if judge(mid) == current:
                    lo = mid
                else:
                    hi = mid
            lo = hi
    changes = _boundaries(verdicts)
    return BisectResult(revisions=revisions, verdicts=dict(verdicts), order=tuple(order), changes=changes,
                        exhaustive=exhaustive or len(verdicts) == len(revisions))


def _boundaries(verdicts: dict[int, Hashable]) -> tuple[Boundary, ...]:
    """Changes between consecutive tested revisions (bisection makes them adjacent in the list)."""
    tested = sorted(verdicts)
    return tuple(Boundary(a, b, verdicts[a], verdicts[b]) for a, b in pairwise(tested)
                 if verdicts[a] != verdicts[b])


# ---------------------------------------------------------------------------------------------
# the question `srcreview bisect` asks of each review, and the report of its answer


class Question(BaseModel):
    """What is compared across revisions: a rule's classification (optionally for one recipe
    key), or a knob row's status (KEY, optionally at one scope)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    rule: str | None = None
    knob: str | None = None
    scope: str | None = None

    def describe(self) -> str:
        where = f"{self.knob}@{self.scope}" if self.scope else (self.knob or "")
        if self.rule:
            return f"classification of {self.rule}" + (f" for {where}" if where else "")
        return f"status of knob {where}"

    def findings(self, review: Review) -> tuple[Finding, ...]:
        if not self.rule:
            return ()
        return tuple(f for f in review.findings
                     if f.rule == self.rule and (self.knob is None or self.knob in f.knobs))

    def knobs(self, review: Review) -> tuple[Knob, ...]:
        key = self.knob
        if key is None:
            return ()
        return tuple(k for k in review.knobs if k.key == key and (self.scope is None or k.scope == self.scope))

    def verdict(self, review: Review) -> str:
        """The review reduced to one comparable string."""
        if self.rule:
            if any(s.rule == self.rule for s in review.stale_rules):
                return "stale"
            found = self.findings(review)
            if not found:
                return "no finding"
            if len(found) == 1:
                return found[0].classification
            return "; ".join(sorted(f"{f.id}: {f.classification}" for f in found))
        rows = self.knobs(review)
        if not rows:
            return "no row"
        if len(rows) == 1:
            return rows[0].status
        return "; ".join(sorted(f"{k.scope}: {k.status}" for k in rows))


class Side(BaseModel):
    """One revision of a boundary: its verdict and the evidence behind it."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    rev: str
    label: str
    revision: RevisionInfo
    verdict: str
    findings: tuple[Finding, ...] = ()
    knobs: tuple[Knob, ...] = ()
    incomplete: tuple[str, ...] = ()


class Change(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    before: Side
    after: Side
    only_before: tuple[Anchor, ...] = Field(default=(), description="anchors at the old side only (path, symbol, role)")
    only_after: tuple[Anchor, ...] = Field(default=(),
                                           description="anchors at the new side only: what made the difference")


class Tested(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    rev: str
    label: str
    tested: bool
    verdict: str | None = None
    incomplete: bool = False


class BisectReport(BaseModel):
    """The answer of `srcreview bisect` (the `--format json` contract)."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    recipe: str
    question: Question
    asked: str
    revisions: tuple[Tested, ...]
    test_order: tuple[str, ...]
    first_change: Change | None = None
    changes: tuple[Change, ...] = ()
    monotonic: bool
    exhaustive: bool
    notes: tuple[str, ...] = ()
    incomplete: bool = False


def summarize(question: Question, result: BisectResult, review_of: Callable[[str], Review], *,
              recipe: str) -> BisectReport:
    """The report of a bisection whose verdicts came from `question.verdict(review_of(rev))`.

    `review_of` must return the already computed reviews of tested revisions (it is called
    only for those)."""
    revs = result.revisions

    def side(i: int) -> Side:
        review = review_of(revs[i])
        return Side(rev=str(revs[i]), label=_label(review.revision), revision=review.revision,
                    verdict=str(result.verdicts[i]),
                    findings=question.findings(review), knobs=question.knobs(review), incomplete=review.incomplete)

    changes = []
    for boundary in result.changes:
        a, b = side(boundary.before), side(boundary.after)
        ev_a = [x for f in a.findings for x in f.evidence] + [x for k in a.knobs for x in k.evidence]
        ev_b = [x for f in b.findings for x in f.evidence] + [x for k in b.knobs for x in k.evidence]
        changes.append(Change(before=a, after=b, only_before=_only_unique(ev_a, ev_b),
                              only_after=_only_unique(ev_b, ev_a)))
    rows = []
    any_incomplete = False
    for i, rev in enumerate(revs):
        tested = i in result.verdicts
        review = review_of(rev) if tested else None
        incomplete = bool(review and review.incomplete)
        any_incomplete |= incomplete
        label = _label(review.revision) if review else _short(str(rev))
        rows.append(Tested(rev=str(rev), label=label, tested=tested,
                           verdict=str(result.verdicts[i]) if tested else None, incomplete=incomplete))
    notes = list(result.notes())
    if any_incomplete:
        notes.append("some tested reviews are incomplete: their verdicts may be plausible only for that reason")
    return BisectReport(recipe=recipe, question=question, asked=question.describe(), revisions=tuple(rows),
                        test_order=tuple(_label(review_of(revs[i]).revision) for i in result.order),
                        first_change=changes[0] if changes else None, changes=tuple(changes),
                        monotonic=result.monotonic, exhaustive=result.exhaustive, notes=tuple(notes),
                        incomplete=any_incomplete)


def _label(info: RevisionInfo) -> str:
    return f"{info.version} ({info.sha[:9]})" if info.version else info.sha[:12]


def _short(rev: str) -> str:
    from srcreview.model.revision import VERSION

    return rev if VERSION.fullmatch(rev) else rev[:12]


def _only_unique(ours: list[Anchor], theirs: list[Anchor]) -> tuple[Anchor, ...]:
    from srcreview.history.compare import anchor_key

    other = {anchor_key(a) for a in theirs}
    seen = set()
    out = []
    for a in ours:
        if anchor_key(a) not in other and a.url + a.role not in seen:
            seen.add(a.url + a.role)
            out.append(a)
    return tuple(out)
