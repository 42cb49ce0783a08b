"""`--format github`: GitHub Actions workflow commands, so a pull request's changed recipes are
annotated where no code scanning takes SARIF (a private repository without it).

    ::error file=recipes/mtp3.toml,line=25,col=1,title=srcreview spec-draft-attention-backend-ignored::...

One command per finding, on the recipe file and line the concise format names (a compose
service on its compose file, the service in the message). The command follows what the
finding is and what the gate made of it, never the severity alone: a problem that fails the
gate is an `error`; an open question (the source did not settle it) is a `warning` even when
it fails the gate under a `plausible` term, so an undecided claim never reads as a defect;
a problem below `--fail-on` or unchanged against the baseline is a `warning`, a waived
finding a `notice`. Facts are left out (they never fail, and a step shows only ten
annotations of each kind); the Markdown summary lists them. Stale rules and incomplete
reviews are errors (warnings when allowed); the profile and model lines and the gate line
are plain log lines.

Untrusted text cannot break out of its command: the message is escaped as the runner reads
it (`%` -> `%25`, CR -> `%0D`, LF -> `%0A`) and properties also `:` -> `%3A`, `,` -> `%2C`,
with control characters shown as escapes; every plain line goes through `ci_safe`, so the
commands written here are the only ones in the output (the CLI writes this format past its
own stdout guard, see `srcreview.report.formats.WORKFLOW_COMMANDS`).
"""

from __future__ import annotations

from collections.abc import Sequence

from srcreview.core.textsafe import ci_safe, oneline
from srcreview.model.findings import KIND_ORDER, SEVERITY_ORDER, Review
from srcreview.report.concise import part_word, recipe_place


def render(reviews: Sequence[Review] | Review, *, gate=None, **_options) -> str:
    from srcreview.report.terminal import gate_line

    if isinstance(reviews, Review):
        reviews = [reviews]
    if gate is not None:
        reviews = gate.annotate(reviews)
    failing = {(p, f.fingerprint) for p, f in gate.failing} if gate is not None else None
    out: list[str] = []
    for review in reviews:
        path = review.recipe.path
        file, service = recipe_place(review)
        where = f"{file}: {part_word(review)} {service}" if service is not None else file
        lines = [_plain(f"{where}: {line}") for line in review.profile_lines()]
        for f in sorted(review.findings, key=lambda f: (-KIND_ORDER[f.kind], -SEVERITY_ORDER[f.severity],
                                                        review.line_of(f), f.rule, f.fingerprint)):
            if f.kind == "fact":
                continue
            fails = f.kind == "problem" if failing is None else (path, f.fingerprint) in failing
            marks = (["fails the gate"] if fails else []) + (
                [f"waived until {f.waiver.expires}"] if f.waiver is not None else []) + (
                [f"baseline: {f.baseline}"] if f.baseline is not None else [])
            text = (f"{part_word(review)} {service}: " if service is not None else "") + \
                f"{f.severity} {f.classification} {f.kind.replace('-', ' ')}: {f.claim}" + \
                (f" [{'; '.join(marks)}]" if marks else "") + f" (fingerprint {f.fingerprint})"
            lines.append(command(level(f.kind, fails, f.waiver is not None), text, file=file,
                                 line=review.line_of(f), col=1, title=f"srcreview {f.rule}"))
        stale_failing = set(review.gate.stale) if review.gate is not None else set()
        lines += [command("error" if s.rule in stale_failing else "warning",
                          f"{where}: rule {s.rule} is stale at {review.revision.sha[:12]}: missing "
                          f"{', '.join(s.missing) or 'its anchors'}", file=file, line=1, col=1,
                          title=f"srcreview {s.rule}") for s in review.stale_rules]
        lines += [command("error", f"{where}: review incomplete: {reason}", file=file, line=1, col=1,
                          title="srcreview: review incomplete") for reason in review.incomplete]
        lines += [_plain(f"{where}: {model.summary()}") for model in review.models if model.unknown is not None]
        out += lines
    if gate is not None:
        out.append(_plain(gate_line(gate)))
    return "".join(line + "\n" for line in out)


def level(kind: str, fails: bool, waived: bool = False) -> str:
    """The command of a finding: see the module doc."""
    if waived:
        return "notice"
    return "error" if kind == "problem" and fails else "warning"


def command(name: str, message: str, **properties: object) -> str:
    """`::name k=v,...::message`, escaped as the runner unescapes it (properties in the order given)."""
    props = ",".join(f"{key}={escape_property(str(value))}" for key, value in properties.items())
    return f"::{name}{' ' + props if props else ''}::{escape_message(message)}"


def escape_message(text: str) -> str:
    """A command's message: `%`, CR and LF percent-encoded (the runner decodes them back), other
    control characters and other line breaks shown as escapes, `##[` broken as ci_safe breaks it."""
    text = str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return oneline(text).replace("##[", "#\\u0023[")


def escape_property(text: str) -> str:
    """A command's property value: the message's escapes, and `:` and `,` (which end it)."""
    return escape_message(text).replace(":", "%3A").replace(",", "%2C")


def _plain(text: str) -> str:
    """A log line that is no command: on one line, and never read as one."""
    return ci_safe(oneline(text))
