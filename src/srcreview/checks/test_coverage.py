"""test-coverage: which tests under tests/ exercise a combination of recipe values.

A test file covers the combination when it mentions every term as a whole word. Files that
cover only part of it are evidence of what is tested; with none covering all, the missing
tests are listed (templates from the rule) and the outcome is `uncovered`.
"""

from __future__ import annotations

import re
from typing import TypedDict

from srcreview.checks import CheckContext, CheckResult
from srcreview.checks import Params as BaseParams
from srcreview.core.templates import fill
from srcreview.model.findings import Hop

OUTCOMES = ("covered", "uncovered")
UNDECIDED_OUTCOMES = ("uncovered",)
MAX_SHOWN = 3


class Details(TypedDict, total=False):
    """The values this kind's claims may name ({key} in a rule's text)."""

    terms: str
    tests: str


class Params(BaseParams):
    terms: dict[str, str]  # label -> template of the term, e.g. {method = "{speculative_config.method}"}
    under: str = "tests/"
    missing: tuple[str, ...]  # templates of the missing tests when no file covers all terms


def run(ctx: CheckContext, params: Params, subject=None) -> CheckResult:
    values = ctx.template_values
    terms = {label: fill(t, values) for label, t in params.terms.items()}
    files: dict[str, list[str]] = {}
    for label, term in sorted(terms.items()):
        if term.isascii():  # a whole-word match on bytes is the same match on text; remembered per revision
            files[label] = ctx.index.grep_re(_word(term).pattern, prefix=params.under, literal=term)
        else:
            pattern = _word(term)
            files[label] = [f for f in ctx.index.grep(term, prefix=params.under)
                            if pattern.search(ctx.tree.read_text(f))]
    both = sorted(set.intersection(*(set(v) for v in files.values()))) if files else []
    details: Details = {"terms": ", ".join(f"{k}={v}" for k, v in sorted(terms.items())),
               "tests": ", ".join(both[:MAX_SHOWN])}
    evidence, hops = [], []
    if both:
        for path in both[:MAX_SHOWN]:
            evidence += [_first(ctx, path, term, f"covers {label}={term}") for label, term in sorted(terms.items())]
        hops.append(Hop(kind="note", text=f"{len(both)} test file(s) mention all of {details['terms']}"))
        return CheckResult("covered", evidence=tuple(evidence), trace=tuple(hops), details=details,
                           symbols=tuple(sorted(terms.values())))
    for label, term in sorted(terms.items()):
        shown = files[label][:MAX_SHOWN]
        hops.append(Hop(kind="note", text=f"{len(files[label])} test file(s) mention {label}={term}"
                        + (f" (e.g. {', '.join(shown)})" if shown else "")))
        for path in shown:
            evidence.append(_first(ctx, path, term, f"covers {label}={term} only, not the combination"))
    missing = tuple(fill(m, values) for m in params.missing)
    return CheckResult("uncovered", evidence=tuple(evidence), trace=tuple(hops), details=details,
                       tags=("no-covering-test",), missing_tests=missing, symbols=tuple(sorted(terms.values())),
                       reason=f"no file under {params.under} mentions all of {details['terms']}")


def _word(term: str) -> re.Pattern:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(term)}(?![A-Za-z0-9_])")


def _first(ctx, path, term, role):
    """The test function (or line) where the term first appears."""
    lines = ctx.tree.read_text(path).splitlines()
    pattern = _word(term)
    hit = next((n for n, line in enumerate(lines, 1) if pattern.search(line)), 1)
    return ctx.anchor(path, hit, hit, term, role)
