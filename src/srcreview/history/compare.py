"""What changed for one recipe between two reviews (two vLLM revisions): knob rows and findings.

Pure: takes two `Review`s (from the same engine `check` runs) and pairs their knob rows by
(key, scope) and their findings by fingerprint, then by id (rule and recipe key), so a finding
whose symbols moved is still one finding. Each change keeps both sides' rows and anchors, and
the anchors present on one side only: those are the lines that made the difference. Anchors
are compared by what they show (path, symbol, role), not by line, since lines move between
releases.
"""

from __future__ import annotations

from typing import Literal, cast

from pydantic import BaseModel, ConfigDict, computed_field

from srcreview.model.findings import (
    Anchor,
    Finding,
    Knob,
    PatchRecord,
    Review,
    RevisionInfo,
    RunnerInfo,
)

ChangeKind = Literal["unchanged", "changed", "appeared", "disappeared"]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def anchor_key(anchor: Anchor) -> tuple[str, str, str]:
    """What an anchor shows, independent of its line numbers and revision."""
    return (anchor.path, anchor.symbol, anchor.role)


def _only(ours: tuple[Anchor, ...], theirs: tuple[Anchor, ...]) -> tuple[Anchor, ...]:
    other = {anchor_key(a) for a in theirs}
    return tuple(a for a in ours if anchor_key(a) not in other)


class KnobChange(_Frozen):
    """One knob row (key, scope) at both revisions."""

    key: str
    scope: str
    change: ChangeKind
    before: Knob | None = None
    after: Knob | None = None
    only_before: tuple[Anchor, ...] = ()
    only_after: tuple[Anchor, ...] = ()

    @property
    def status_before(self) -> str:
        return self.before.status if self.before else "no row"

    @property
    def status_after(self) -> str:
        return self.after.status if self.after else "no row"


class FindingChange(_Frozen):
    """One finding at both revisions; `what` lists the aspects that differ."""

    rule: str
    id: str
    fingerprint: str
    change: ChangeKind
    what: tuple[str, ...] = ()
    before: Finding | None = None
    after: Finding | None = None
    only_before: tuple[Anchor, ...] = ()
    only_after: tuple[Anchor, ...] = ()

    @property
    def class_before(self) -> str:
        return self.before.classification if self.before else "no finding"

    @property
    def class_after(self) -> str:
        return self.after.classification if self.after else "no finding"


class RunnerChange(_Frozen):
    before: RunnerInfo
    after: RunnerInfo
    changed: bool


class ReviewDiff(_Frozen):
    """The difference between two reviews of the same recipe (the `diff --format json` contract)."""

    recipe: str
    before: RevisionInfo
    after: RevisionInfo
    runner: RunnerChange
    knobs: tuple[KnobChange, ...]
    findings: tuple[FindingChange, ...]
    stale_before: tuple[str, ...] = ()
    stale_after: tuple[str, ...] = ()
    incomplete_before: tuple[str, ...] = ()
    incomplete_after: tuple[str, ...] = ()
    patches_before: tuple[PatchRecord, ...] = ()  # layers over each side's source (srcreview.source.patched)
    patches_after: tuple[PatchRecord, ...] = ()

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form; mypy cannot type it
    @property
    def changed(self) -> bool:
        return (self.runner.changed or any(k.change != "unchanged" for k in self.knobs)
                or any(f.change != "unchanged" for f in self.findings)
                or self.stale_before != self.stale_after)

    @computed_field  # type: ignore[prop-decorator]  # pydantic's documented form; mypy cannot type it
    @property
    def incomplete(self) -> bool:
        return bool(self.incomplete_before or self.incomplete_after)


def compare_reviews(before: Review, after: Review) -> ReviewDiff:
    """Pair the knob rows and findings of two reviews of one recipe and say what changed."""
    return ReviewDiff(
        recipe=after.recipe.path,
        before=before.revision,
        after=after.revision,
        runner=RunnerChange(before=before.runner, after=after.runner,
                            changed=before.runner.value != after.runner.value),
        knobs=_knob_changes(before.knobs, after.knobs),
        findings=_finding_changes(before.findings, after.findings),
        stale_before=tuple(sorted(s.rule for s in before.stale_rules)),
        stale_after=tuple(sorted(s.rule for s in after.stale_rules)),
        incomplete_before=before.incomplete,
        incomplete_after=after.incomplete,
        patches_before=before.patches,
        patches_after=after.patches,
    )


def _knob_changes(before: tuple[Knob, ...], after: tuple[Knob, ...]) -> tuple[KnobChange, ...]:
    old = {(k.key, k.scope): k for k in before}
    new = {(k.key, k.scope): k for k in after}
    changes = []
    for key, scope in sorted(set(old) | set(new)):
        a, b = old.get((key, scope)), new.get((key, scope))
        kind: ChangeKind
        if a is None or b is None:
            kind = "appeared" if a is None else "disappeared"
        elif a.status != b.status or a.value != b.value:
            kind = "changed"
        else:
            kind = "unchanged"
        changes.append(KnobChange(key=key, scope=scope, change=kind, before=a, after=b,
                                  only_before=_only(a.evidence, b.evidence) if a and b else (),
                                  only_after=_only(b.evidence, a.evidence) if a and b else ()))
    return tuple(changes)


def _finding_changes(before: tuple[Finding, ...], after: tuple[Finding, ...]) -> tuple[FindingChange, ...]:
    pairs: list[tuple[Finding | None, Finding | None]] = []
    left = list(before)
    right = list(after)
    for match in (lambda f: f.fingerprint, lambda f: f.id):
        for a in list(left):
            b = next((f for f in right if match(f) == match(a)), None)
            if b is not None:
                pairs.append((a, b))
                left.remove(a)
                right.remove(b)
    pairs += [(a, None) for a in left] + [(None, b) for b in right]
    changes = [_finding_change(a, b) for a, b in pairs]
    return tuple(sorted(changes, key=lambda c: (c.rule, c.id, c.fingerprint)))


def _finding_change(a: Finding | None, b: Finding | None) -> FindingChange:
    some = cast(Finding, b or a)  # never both None
    if a is None or b is None:
        return FindingChange(rule=some.rule, id=some.id, fingerprint=some.fingerprint,
                             change="appeared" if a is None else "disappeared", before=a, after=b)
    what = []
    if a.classification != b.classification:
        what.append("classification")
    if a.severity != b.severity:
        what.append("severity")
    if a.fingerprint != b.fingerprint:
        what.append("fingerprint")
    if a.tags != b.tags:
        what.append("tags")
    if a.assumptions != b.assumptions:
        what.append("assumptions")
    if a.missing_tests != b.missing_tests:
        what.append("missing tests")
    return FindingChange(rule=b.rule, id=b.id, fingerprint=b.fingerprint,
                         change="changed" if what else "unchanged", what=tuple(what), before=a, after=b,
                         only_before=_only(a.evidence, b.evidence), only_after=_only(b.evidence, a.evidence))
