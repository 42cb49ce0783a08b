"""Why a finding says what it says: its trace hop by hop with the source lines, and its rule.

`explain(review, finding, rule, tree)` gathers, for one finding of a review, the excerpt of
every anchored hop and evidence line read through the SourceTree of the review's revision,
the assumptions made on undecided branches, and the rule's verdict mapping and doc (which
check outcomes give this classification, and why the rule exists). No analysis is re-run:
the finding is explained as the engine produced it, from a fresh `check` or a saved JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

from pydantic import BaseModel, ConfigDict

from srcreview.core.errors import DataError, SourceUnavailable, UsageError
from srcreview.core.records import RecordError
from srcreview.core.tags import TAG_MEANINGS, Tag
from srcreview.model.findings import Anchor, Finding, Hop, Review

DEFAULT_CONTEXT = 2
MAX_EXCERPT_LINES = 24


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Excerpt(_Frozen):
    """Source lines around an anchor, as read from the tree at the review's revision."""

    path: str
    first_line: int
    lines: tuple[str, ...]
    start_line: int
    end_line: int
    truncated: bool = False  # the anchored range is longer than the excerpt shows


class Step(_Frozen):
    """One hop of the trace, or one evidence anchor, with its excerpt when it has an anchor."""

    hop: Hop | None = None
    anchor: Anchor | None = None
    excerpt: Excerpt | None = None
    unreadable: str = ""


class RuleReason(_Frozen):
    """What the rule says about the classification."""

    id: str
    claim: str
    severity: str
    check_kind: str
    verdict: dict[str, str]
    outcomes: tuple[str, ...]  # the check outcomes that map to the finding's classification
    downgraded: bool = False  # confirmed/refuted turned plausible because the model runner is undecided
    what: str = ""
    why: str = ""
    instead: str = ""
    references: tuple[str, ...] = ()


class Explanation(_Frozen):
    """Everything `srcreview explain` shows (the `--format json` contract)."""

    recipe: str
    revision: str
    finding: Finding
    trace: tuple[Step, ...]
    evidence: tuple[Step, ...]
    tags: dict[str, str]
    rule: RuleReason | None = None


def load_saved_reviews(path: Path, shown: str) -> list[Review]:
    """The reviews in a `check --format json` output (one review, or {"reviews": [...]})."""
    from srcreview.core.userfile import read_user_file
    from srcreview.gate.baseline import MAX_BASELINE_BYTES

    raw = read_user_file(path, f"--review {shown}", "review", MAX_BASELINE_BYTES)
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"--review {shown}: not a JSON review ({type(exc).__name__})") from None
    except RecursionError:
        raise DataError(f"--review {shown}: not a JSON review (nesting too deep)") from None
    items = data.get("reviews") if isinstance(data, dict) and "reviews" in data else [data]
    if not isinstance(items, list):
        raise DataError(f"--review {shown}: 'reviews' is not a list")
    try:
        return [Review.model_validate(item) for item in items]
    except RecordError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        raise DataError(f"--review {shown}: not a srcreview check JSON output ({where}: {err['msg']})") from None


def find_finding(reviews: list[Review], wanted: str, recipe: str | None = None) -> tuple[Review, Finding]:
    """The finding named by id, fingerprint (or a unique fingerprint prefix of 6+ digits) or rule
    id, in the review of `recipe` (its path as the review shows it) when given.

    A fingerprint is unique within a recipe's review; the same rule can give the same
    fingerprint for several recipes, which `recipe` tells apart."""
    wanted = wanted.strip()
    if recipe is not None:
        chosen = [r for r in reviews if _same_recipe(r.recipe.path, recipe)]
        if not chosen:
            known = ", ".join(sorted(r.recipe.path for r in reviews))
            raise UsageError(f"--recipe {recipe}: no review of that recipe (reviews: {known})")
        reviews = chosen
    pairs = [(r, f) for r in reviews for f in r.findings]
    for match in (lambda f: f.id == wanted or f.fingerprint == wanted,
                  lambda f: len(wanted) >= 6 and f.fingerprint.startswith(wanted.lower()),
                  lambda f: f.rule == wanted):
        found = [(r, f) for r, f in pairs if match(f)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            recipes = sorted({r.recipe.path for r, _ in found})
            if len(recipes) > 1:
                raise UsageError(f"{wanted!r} matches findings of {len(recipes)} recipes: {', '.join(recipes)}; "
                                 "choose one with --recipe PATH")
            names = ", ".join(sorted(f"{f.id} ({f.fingerprint})" for _, f in found))
            raise UsageError(f"{wanted!r} matches several findings: {names}; give an id or fingerprint")
    known = ", ".join(sorted(f"{f.id} ({f.fingerprint})" for _, f in pairs)) or "none"
    raise UsageError(f"no finding {wanted!r} in the review (findings: {known})")


def _same_recipe(shown: str, given: str) -> bool:
    """`given` names the recipe shown as `shown`: the same path, or its trailing components."""
    given = given.replace("\\", "/").removeprefix("./")
    return shown == given or shown.endswith("/" + given)


def excerpt(tree, anchor: Anchor, context: int = DEFAULT_CONTEXT, max_lines: int = MAX_EXCERPT_LINES) -> Excerpt:
    """The anchored lines with `context` lines around them (at most `max_lines` in all)."""
    lines = tree.read_text(anchor.path).splitlines()
    if anchor.start_line < 1 or anchor.start_line > len(lines):
        raise SourceUnavailable(f"{anchor.path}: line {anchor.start_line} is past the end of the file "
                                f"({len(lines)} lines) at {tree.revision.label()}")
    first = max(1, anchor.start_line - context)
    last = min(len(lines), max(anchor.end_line, anchor.start_line) + context)
    if last - first + 1 > max_lines:
        last = first + max_lines - 1
    truncated = last < anchor.end_line  # the anchored lines themselves are cut, not just context
    return Excerpt(path=anchor.path, first_line=first, lines=tuple(lines[first - 1:last]),
                   start_line=anchor.start_line, end_line=anchor.end_line, truncated=truncated)


def explain(review: Review, finding: Finding, rule=None, tree=None, *, context: int = DEFAULT_CONTEXT) -> Explanation:
    """The explanation of `finding`; excerpts are read from `tree` (none without a tree)."""
    if tree is not None and not tree.revision.matches_commit(review.revision.sha):
        raise UsageError(f"the source is vLLM {tree.revision.label()}, but the review is of {review.revision.sha}")

    def step(hop: Hop | None, anchor: Anchor | None) -> Step:
        if anchor is None or tree is None:
            return Step(hop=hop, anchor=anchor)
        try:
            return Step(hop=hop, anchor=anchor, excerpt=excerpt(tree, anchor, context))
        except SourceUnavailable as exc:
            return Step(hop=hop, anchor=anchor, unreadable=exc.message)

    trace = tuple(step(h, h.anchor) for h in finding.trace)
    shown = {(h.anchor.path, h.anchor.start_line, h.anchor.end_line) for h in finding.trace if h.anchor}
    evidence = tuple(step(None, a) for a in finding.evidence if (a.path, a.start_line, a.end_line) not in shown)
    tags = {t: TAG_MEANINGS.get(cast(Tag, t), "") for t in finding.tags}
    label = f"{review.revision.version} ({review.revision.sha[:9]})" if review.revision.version \
        else review.revision.sha[:12]
    return Explanation(recipe=review.recipe.path, revision=label, finding=finding, trace=trace,
                       evidence=evidence, tags=tags, rule=_rule_reason(rule, finding) if rule else None)


def _rule_reason(rule, finding: Finding) -> RuleReason:
    if finding.outcome:  # the check outcome the engine recorded: nothing to infer
        outcomes = (finding.outcome,)
        downgraded = rule.verdict.get(finding.outcome) not in (None, finding.classification)
    else:  # a review saved before findings carried their outcome: infer it from the verdict
        outcomes = tuple(sorted(o for o, c in rule.verdict.items() if c == finding.classification))
        downgraded = finding.classification == "plausible" and "runner-undecided" in finding.tags
        if downgraded:
            outcomes = tuple(sorted(o for o, c in rule.verdict.items() if c != "none"))
    return RuleReason(downgraded=downgraded, id=rule.id, claim=rule.claim, severity=rule.severity,
                      check_kind=rule.check.kind,
                      verdict=dict(sorted(rule.verdict.items())), outcomes=outcomes, what=rule.doc.what,
                      why=rule.doc.why, instead=rule.doc.instead, references=tuple(rule.doc.references))
