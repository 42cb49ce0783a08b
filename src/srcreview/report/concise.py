"""`--format concise`: one line per finding, like a linter, then the gate line.

    recipes/mtp3.toml:25:1: high confirmed problem spec-draft-attention-backend-ignored - <claim> [fails the gate]
    recipes/docker-compose.yml:24:1: service vllm: high confirmed problem ... [fails the gate]

Each finding's line starts `file:line:col:` as compilers print it, so an editor or a
terminal opens the recipe there: the file the recipe is read from (a compose service's
compose file; the service is named after it, in the message), the line that sets the knob,
column 1 (reviews carry no column). Then the severity, classification and kind, the rule and
its claim, and the finding's gate state in brackets. Problems come first, then open
questions, then facts; stale rules and incomplete reviews get a line each too.
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
        file, service = recipe_place(review)
        part = part_word(review)
        where = f"{file}: {part} {service}" if service is not None else file
        lines += [f"{where}: {line}" for line in review.startup_lines() + review.profile_lines()]
        for f in sorted(review.findings, key=lambda f: (-KIND_ORDER[f.kind], -SEVERITY_ORDER[f.severity],
                                                        review.line_of(f), f.rule, f.fingerprint)):
            lines.append(f"{file}:{review.line_of(f)}:1: " + (f"{part} {service}: " if service is not None else "")
                         + f"{f.severity} {f.classification} {f.kind} {f.rule} - {f.claim}"
                         + _marks(f, (path, f.fingerprint) in failing))
        failing_stale = set(review.gate.stale) if review.gate is not None else set()
        lines += [f"{where}: stale rule {s.rule}: missing {', '.join(s.missing) or 'its anchors'}"
                  + (" [fails the gate]" if s.rule in failing_stale else "") for s in review.stale_rules]
        lines += [f"{where}: review incomplete: {reason}" for reason in review.incomplete]
        lines += [f"{where}: {model.summary()}" for model in review.models if model.unknown is not None]
    text = "".join(oneline(line) + "\n" for line in lines)
    return text + (gate_line(gate) + "\n" if gate is not None else "")


def recipe_place(review: Review) -> tuple[str, str | None]:
    """(the file an editor opens, the compose service or None): `docker-compose.yml#vllm` is no
    path, so a service's findings sit on its compose file and name the service."""
    path, file = review.recipe.path, review.recipe.file
    if file and path.startswith(file + "#"):
        return file, path[len(file) + 1:]
    return file or path, None


def part_word(review: Review) -> str:
    """What the part after `#` is: a recipes-registry model's variant, else a compose service."""
    return review.recipe.part or "service"


def _marks(finding: Finding, is_failing: bool) -> str:
    marks = ["fails the gate"] if is_failing else []
    if finding.waiver is not None:
        marks.append(f"waived until {finding.waiver.expires}")
    if finding.baseline is not None:
        marks.append(f"baseline: {finding.baseline}")
    return f" [{'; '.join(marks)}]" if marks else ""
