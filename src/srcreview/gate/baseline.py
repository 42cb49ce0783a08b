"""Baselines: a previous `--format json` output, so the gate fails only on what got worse.

Findings are matched by fingerprint (built from rule, recipe key and symbol path, not line
numbers), so moving code in vLLM or the recipe does not make an old finding look new. A
current finding is `new` (not in the baseline), `worse` (it became more of a problem: fact ->
open question -> problem, judged by the rule's current `problem`, or its severity rose),
`improved` (the reverse) or `unchanged`; a baseline finding no longer present is `fixed`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from srcreview.core.errors import DataError
from srcreview.core.records import RecordError
from srcreview.core.userfile import read_user_file
from srcreview.model.findings import (
    KIND_ORDER,
    SEVERITY_ORDER,
    BaselineEntry,
    BaselineStatus,
    Finding,
    Review,
    kind_of,
)

MAX_BASELINE_BYTES = 50_000_000


@dataclass(frozen=True)
class BaselineReview:
    recipe_path: str
    recipe_name: str
    entries: tuple[BaselineEntry, ...]


@dataclass(frozen=True)
class Baseline:
    """The findings of a previous run, per recipe."""

    source: str
    reviews: tuple[BaselineReview, ...]

    def entries_for(self, review: Review, run_size: int) -> dict[str, BaselineEntry]:
        """The baseline findings of the same recipe: by path, else by name, else the only one."""
        match = next((b for b in self.reviews if b.recipe_path == review.recipe.path), None)
        if match is None:
            named = [b for b in self.reviews if b.recipe_name == review.recipe.name]
            match = named[0] if len(named) == 1 else None
        if match is None and run_size == 1 and len(self.reviews) == 1:
            match = self.reviews[0]
        return {} if match is None else {e.fingerprint: e for e in match.entries}


def load_baseline(path: str | Path, shown: str | None = None) -> Baseline:
    """Read a previous `--format json` output (one review, a list, or {"reviews": [...]})."""
    path = Path(path)
    shown = shown or str(path)
    raw = read_user_file(path, f"--baseline {shown}", "baseline", MAX_BASELINE_BYTES)
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", 1)
        raise DataError(f"{shown}:{line}: baseline is not JSON: {getattr(exc, 'msg', exc)}") from None
    except RecursionError:
        raise DataError(f"{shown}: baseline is not JSON srcreview reads: nesting too deep") from None
    return parse_baseline(data, shown)


def parse_baseline(data, shown: str) -> Baseline:
    if isinstance(data, dict) and "reviews" in data:
        data = data["reviews"]
    items = data if isinstance(data, list) else [data]
    reviews = []
    for i, item in enumerate(items):
        where = f"{shown}: review {i}" if isinstance(data, list) else shown
        if not isinstance(item, dict) or not isinstance(item.get("recipe"), dict) \
                or not isinstance(item.get("findings"), list):
            raise DataError(f"{where}: not a srcreview --format json review (needs recipe and findings)")
        recipe = item["recipe"]
        entries = []
        for j, finding in enumerate(item["findings"]):
            if not isinstance(finding, dict):
                raise DataError(f"{where}: findings[{j}] is not an object")
            try:
                entries.append(BaselineEntry.model_validate(
                    {k: finding[k] for k in ("fingerprint", "rule", "classification", "severity", "claim")
                     if k in finding}))
            except RecordError as exc:
                err = exc.errors()[0]
                field = ".".join(str(p) for p in err["loc"])
                raise DataError(f"{where}: findings[{j}].{field}: {err['msg']}") from None
        reviews.append(BaselineReview(recipe_path=str(recipe.get("path", "")), recipe_name=str(recipe.get("name", "")),
                                      entries=tuple(sorted(entries, key=lambda e: e.fingerprint))))
    return Baseline(source=shown, reviews=tuple(reviews))


def status(finding: Finding, previous: BaselineEntry | None) -> BaselineStatus:
    """How a current finding compares with the same fingerprint in the baseline."""
    if previous is None:
        return "new"
    now = (KIND_ORDER[finding.kind], SEVERITY_ORDER[finding.severity])
    before = (KIND_ORDER[kind_of(previous.classification, finding.problem)], SEVERITY_ORDER[previous.severity])
    if now[0] > before[0] or (now[0] == before[0] and now[1] > before[1]):
        return "worse"
    if now < before:
        return "improved"
    return "unchanged"


def fixed(findings: Sequence[Finding], previous: dict[str, BaselineEntry]) -> tuple[BaselineEntry, ...]:
    """Baseline findings whose fingerprint no longer appears."""
    current = {f.fingerprint for f in findings}
    return tuple(e for fp, e in sorted(previous.items()) if fp not in current)
