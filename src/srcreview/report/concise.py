"""`--format concise`: one line per finding, like a linter, then the gate line.

    recipes/mtp3.toml:25: high confirmed problem spec-draft-attention-backend-ignored - <claim> [fails the gate]

Each line is the recipe and the line that sets the knob, the severity, classification and
kind, the rule and its claim, and the finding's gate state in brackets. Problems come first,
then open questions, then facts; stale rules and incomplete reviews get a line each too.
"""

from __future__ import annotations

from collections.abc import Sequence

from srcreview.core.textsafe import oneline
from srcreview.model.findings import KIND_ORDER, SEVERITY_ORDER, Finding, Review


def render(reviews: Sequence[Review] | Review, *, gate=None, **_options) -> str:
    from srcreview.report.terminal import gate_line

    if isinstance(reviews, Review):
        reviews = [reviews]
    if gate is not None:
        reviews = gate.annotate(reviews)
    failing = {(p, f.fingerprint) for p, f in gate.failing} if gate is not None else set()
    lines = []
    for review in reviews:
        path = review.recipe.path
        lines += [f"{path}: {line}" for line in review.startup_lines() + review.profile_lines()]
        for f in sorted(review.findings, key=lambda f: (-KIND_ORDER[f.kind], -SEVERITY_ORDER[f.severity],
                                                        review.line_of(f), f.rule, f.fingerprint)):
            lines.append(f"{path}:{review.line_of(f)}: {f.severity} {f.classification} {f.kind} {f.rule} - {f.claim}"
                         + _marks(f, (path, f.fingerprint) in failing))
        failing_stale = set(review.gate.stale) if review.gate is not None else set()
        lines += [f"{path}: stale rule {s.rule}: missing {', '.join(s.missing) or 'its anchors'}"
                  + (" [fails the gate]" if s.rule in failing_stale else "") for s in review.stale_rules]
        lines += [f"{path}: review incomplete: {reason}" for reason in review.incomplete]
        lines += [f"{path}: {model.summary()}" for model in review.models if model.unknown is not None]
    text = "".join(oneline(line) + "\n" for line in lines)
    return text + (gate_line(gate) + "\n" if gate is not None else "")


def _marks(finding: Finding, is_failing: bool) -> str:
    marks = ["fails the gate"] if is_failing else []
    if finding.waiver is not None:
        marks.append(f"waived until {finding.waiver.expires}")
    if finding.baseline is not None:
        marks.append(f"baseline: {finding.baseline}")
    return f" [{'; '.join(marks)}]" if marks else ""
