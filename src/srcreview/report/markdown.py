"""Markdown for a pull-request comment or a CI step summary: decision first, then per recipe.

Compact on purpose: the gate decision and counts, then for each recipe the knob table and
the findings grouped by meaning (problems, open questions, facts; facts folded), each with
its classification, the rule's claim, its anchor links and its gate state (failing, waived,
new...), then the baseline's new / fixed / unchanged.

Every string from a recipe, a baseline, a waiver file or the source renders inert in a
pull-request comment: text has Markdown and HTML characters escaped and its @mentions, bare
URLs, e-mail addresses and issue references put in code spans (where GitHub links nothing);
code spans are fenced with more backticks than they contain; control characters show as
escapes and whitespace (newlines too) collapses to one space.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from srcreview.core.textsafe import printable
from srcreview.model.findings import Anchor, Finding, Review
from srcreview.report.sarif import shown_path

_MD_SPECIAL = re.compile(r"([\\`*\[\]<>|#&~]|(?<!\w)_|_(?!\w))")
# what GitHub turns into links or notifications in a comment: URLs, www., e-mail addresses,
# @mentions (also @org/team), issue and pull request references (#12, owner/repo#12, GH-12)
_LIVE = re.compile(r"(?i)(?:https?|ftp)://\S+|\bwww\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
                   r"|(?<![\w`])@[a-z0-9][\w-]*(?:/[\w.-]+)?|(?:\b[\w.-]+/[\w.-]+)?#\d+\b|\bgh-\d+\b")
MAX_LINKS = 4  # per finding; the JSON and SARIF carry every anchor
_GROUPS = (("problem", "Problems"), ("open-question", "Open questions"), ("fact", "Facts"))


def render(reviews: Sequence[Review], *, gate=None, date: str | None = None) -> str:
    """The Markdown summary of a run; deterministic for the same reviews, gate and date."""
    if gate is not None:
        reviews = gate.annotate(reviews)
    reviews = sorted(reviews, key=lambda r: r.recipe.path)
    failing = {(p, f.fingerprint) for p, f in gate.failing} if gate is not None else set()
    out: list[str] = []
    out += _header(reviews, gate, date)
    for review in reviews:
        out += _review(review, failing)
    if gate is not None and gate.baseline is not None:
        out += _baseline(gate)
    return "\n".join(out).rstrip("\n") + "\n"


def _header(reviews: Sequence[Review], gate, date: str | None) -> list[str]:
    if gate is not None:
        title = f"## srcreview: gate {gate.decision} (exit {gate.exit_code})"
    else:
        title = "## srcreview review"
    facts = []
    if gate is not None:
        facts.append(f"`--fail-on {gate.fail_on}`")
    facts.append(f"{len(reviews)} recipe{'s' if len(reviews) != 1 else ''}")
    if gate is not None:
        facts.append(_text(gate.summary()))
        if gate.stale:
            facts.append("stale rules fail the gate (`--allow-stale` accepts them)")
    if date is not None:
        facts.append(f"review date {date}")
    lines = [title, "", " · ".join(facts), ""]
    lines += ["| recipe | vLLM | gate | problems | open questions | facts |", "|---|---|---|---|---|---|"]
    for review in reviews:
        counts = {kind: sum(1 for f in review.findings if f.kind == kind) for kind, _ in _GROUPS}
        state = review.gate.status if review.gate is not None else ("incomplete" if review.incomplete else "-")
        state = f"**{state}**" if state in ("failed", "incomplete") else state
        lines.append(f"| {_code(shown_path(review.recipe.path), cell=True)} | {_text(_revision(review))} | {state} | "
                     f"{counts['problem']} | {counts['open-question']} | {counts['fact']} |")
    return lines + [""]


def _revision(review: Review) -> str:
    rev = review.revision
    short = rev.sha[:12]
    return f"{rev.version} ({short})" if rev.version else short


def _review(review: Review, failing: set) -> list[str]:
    path = shown_path(review.recipe.path)
    lines = [f"### {_code(path)}: {_text(review.recipe.name)}", ""]
    facts = [f"vLLM {_text(_revision(review))}"]
    if review.revision.recipe_pin:
        pin = _code(review.revision.recipe_pin)
        facts.append({True: "matches the recipe pin", False: f"differs from the recipe pin {pin}",
                      None: f"recipe pin {pin}"}[review.revision.matches_recipe_pin])
    if review.revision.identity_unverified:
        facts.append(f"**{_text(review.revision.identity_unverified)}**")
    runner = review.runner
    facts.append(f"runner {runner.value or 'unknown'} ({runner.status})")
    facts += [f"patched with {_code(layer.file)} ({layer.sha256[:12]})" for layer in review.patches]
    lines += [" · ".join(facts), ""]
    lines += [f"- {_text(line)}" for line in review.startup_lines() + review.profile_lines()]
    lines += [f"- {_text(model.summary())}" for model in review.models]
    if review.models or review.profile is not None or review.startup is not None:
        lines.append("")
    for reason in review.incomplete:
        lines.append(f"> **Review incomplete:** {_text(reason)}")
    if review.incomplete:
        lines.append("")
    if review.knobs:
        lines += ["| knob | scope | value | status | line |", "|---|---|---|---|---|"]
        for knob in sorted(review.knobs, key=lambda k: (k.recipe_line or 0, k.key, k.scope)):
            status = f"**{knob.status}**" if knob.status not in ("applied", "accepted") else knob.status
            line = str(knob.recipe_line) if knob.recipe_line else ""
            value = _code(_value(knob.value), cell=True)
            if knob.effective:  # what the source selects for an unset or automatic value
                value += f" → {_text(knob.effective)}"
            lines.append(f"| {_code(knob.key, cell=True)} | {knob.scope} | {value} | {status} | {line} |")
        lines.append("")
    findings = sorted(review.findings, key=lambda f: (f.sort_key(), f.fingerprint))
    for kind, title in _GROUPS:
        group = [f for f in findings if f.kind == kind]
        if not group:
            continue
        if kind == "fact":
            lines += [f"<details><summary>{title} ({len(group)})</summary>", ""]
        else:
            lines += [f"**{title} ({len(group)})**", ""]
        for f in group:
            lines += _finding(f, (review.recipe.path, f.fingerprint) in failing)
        lines.append("")
        if kind == "fact":
            lines += ["</details>", ""]
    failing_stale = set(review.gate.stale) if review.gate is not None else set()
    for stale in sorted(review.stale_rules, key=lambda s: s.rule):
        lines.append(f"- stale rule {_code(stale.rule)} at this revision: missing "
                     f"{', '.join(_code(m) for m in stale.missing) or 'its anchors'}"
                     + (" (**fails the gate**)" if stale.rule in failing_stale else ""))
    if review.missing_tests:
        lines.append("- missing tests:")
        lines += [f"  - {_text(t)}" for t in review.missing_tests]
    if review.stale_rules or review.missing_tests:
        lines.append("")
    plan = review.startup_evidence
    if plan is not None and plan.rows:  # what a start-up log must show (srcreview verify reads it)
        lines += [f"<details><summary>{_text(plan.heading())}</summary>", ""]
        lines += [f"- {_text(text)}" for text, _ in plan.row_lines()]
        lines += ["", "</details>", ""]
    return lines


def _finding(finding: Finding, is_failing: bool) -> list[str]:
    """A bullet (severity, classification, rule, line, gate state) with the claim, the message
    and its links, the waiver or baseline status and the fingerprint below it."""
    head = [f"**{finding.severity}**", finding.classification, _code(finding.rule)]
    if finding.recipe_line:
        head.append(f"line {finding.recipe_line}")
    if is_failing:
        head.append("**fails the gate**")
    anchors, seen = [], set()
    for anchor in sorted(finding.evidence, key=Anchor.sort_key):
        if anchor.url not in seen:
            seen.add(anchor.url)
            anchors.append(anchor)
    links = ", ".join(_link(a) for a in anchors[:MAX_LINKS])
    if len(anchors) > MAX_LINKS:
        links += f", +{len(anchors) - MAX_LINKS} more"
    lines = [f"- {' · '.join(head)}", f"  - claim: {_text(finding.claim)}",
             f"  - {_text(finding.message)}" + (f" ({links})" if links else "")]
    if finding.waiver is not None:
        w = finding.waiver
        lines.append(f"  - *waived until {_text(w.expires)}: {_text(w.reason)} ({_text(shown_path(w.source))})*")
    if finding.baseline is not None:
        lines.append(f"  - baseline: {finding.baseline}")
    lines.append(f"  - fingerprint {_code(finding.fingerprint)}")
    return lines


def _baseline(gate) -> list[str]:
    lines = [f"### Baseline {_code(shown_path(gate.baseline))}", "",
             f"new {len(gate.new)} · worse {len(gate.worse)} · unchanged {len(gate.unchanged) + len(gate.improved)} "
             f"(improved {len(gate.improved)}) · fixed {len(gate.fixed)}", ""]
    for label, pairs in (("new", gate.new), ("worse", gate.worse)):
        for path, finding in pairs:
            lines.append(f"- {label}: {_code(shown_path(path))} {_code(finding.rule)} {finding.classification} "
                         f"{finding.severity} {_code(finding.fingerprint)}")
    for path, entry in gate.fixed:
        lines.append(f"- fixed: {_code(shown_path(path))} {_code(entry.rule or '?')} (was {entry.classification}) "
                     f"{_code(entry.fingerprint)}")
    return lines + [""]


def _link(anchor: Anchor) -> str:
    label = (anchor.symbol or f"{anchor.path}:{anchor.start_line}") + (" (patched)" if anchor.patched else "")
    return f"[{_text(label)}]({_url(anchor.url)})"


def _url(url: str) -> str:
    """A link target that stays one: characters that would end it or start HTML, percent-encoded."""
    from urllib.parse import quote

    return quote(url, safe=":/#?=&%@+,;!$*'~")


def _value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "unset"
    return str(value)


def _text(text: str) -> str:
    """Untrusted text as inert Markdown: escaped, with what GitHub would link in code spans."""
    text = " ".join(printable(text).split())
    out, start = [], 0
    for match in _LIVE.finditer(text):
        out += [_MD_SPECIAL.sub(r"\\\1", text[start:match.start()]), _code(match.group())]
        start = match.end()
    out.append(_MD_SPECIAL.sub(r"\\\1", text[start:]))
    return "".join(out)


def _code(text: str, cell: bool = False) -> str:
    """A code span that holds `text` whatever it contains: fenced with one backtick more than its
    longest run of backticks, padded when it starts or ends with one; `cell`: `|` escaped, as a
    table cell needs (GitHub removes that backslash)."""
    text = " ".join(printable(text).split())
    if cell:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"
