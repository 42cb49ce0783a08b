"""`--format text`: the knob table, then findings grouped by meaning, then the gate's decision.

Findings are grouped as problems (what can fail the gate), open questions (plausible) and
facts (verified behaviour); each still shows its classification and the rule's claim, its
gate state (fails the gate, waived, baseline status) and where the source shows it. The last
line states the gate decision with its counts. `verbose` adds each finding's anchor URLs and
whole trace, hop by hop (recipe key -> field -> calls -> sink).
A pure function of the reviews: rich renders into a string; color only when asked.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from srcreview.findings import Finding, Review
from srcreview.textsafe import oneline

_STATUS_STYLE = {"applied": "green", "accepted": "cyan", "ignored": "bold red", "undecided": "yellow",
                 "unknown-knob": "bold red", "invalid-value": "bold red"}
KIND_GROUPS = (("problem", "Problems"), ("open-question", "Open questions"), ("fact", "Facts"))
_KIND_STYLE = {"problem": "bold red", "open-question": "yellow", "fact": "green"}
_GATE_STYLE = {"passed": "bold green", "failed": "bold red", "incomplete": "bold red"}
MAX_ANCHORS = 6  # per finding without --verbose


def render(reviews: Sequence[Review] | Review, *, gate=None, verbose: bool = False, color: bool = False,
           width: int = 120, **_options) -> str:
    """The text report; with `gate` (a GateResult), each finding's gate state and the gate line."""
    from rich.console import Console

    if isinstance(reviews, Review):
        reviews = [reviews]
    if gate is not None:
        reviews = gate.annotate(reviews)
    failing = {(p, f.fingerprint) for p, f in gate.failing} if gate is not None else set()
    out = io.StringIO()
    console = Console(file=out, width=width, color_system="standard" if color else None,
                      force_terminal=color, highlight=False, emoji=False, markup=False)
    for n, review in enumerate(reviews):
        if n:
            console.print()
        _review(console, review, verbose, failing)
    if gate is not None:
        console.print()
        console.print(gate_line(gate), style=_GATE_STYLE.get(gate.decision, ""), soft_wrap=True)
    return out.getvalue()


def gate_line(gate) -> str:
    """`gate: failed (1 problem at or above confirmed:high; 1 waived; 2 open questions; 3 facts)`."""
    return f"gate: {gate.decision} ({gate.summary()})"


def _review(console, review: Review, verbose: bool, failing: set) -> None:
    from rich.table import Table
    from rich.text import Text

    rev = review.revision
    console.print(Text(oneline(f"{review.recipe.path}: {review.recipe.name}"), style="bold"))
    label = f"{rev.version} ({rev.sha[:12]})" if rev.version else rev.sha[:12]
    pin = ""
    if rev.recipe_pin is not None:
        pin = " matches the recipe pin" if rev.matches_recipe_pin else f" differs from the recipe pin {rev.recipe_pin[:12]}"
    console.print(oneline(f"vLLM {label}{pin}"))
    for layer in review.patches:
        console.print(oneline(f"patched with {layer.kind} {layer.file} (sha256 {layer.sha256[:12]}): "
                                + ", ".join(layer.touched)), soft_wrap=True)
    runner = review.runner
    console.print(oneline(f"model runner: {runner.value or 'undecided'}" + (f" ({runner.reason})" if runner.reason else "")))
    for anchor in runner.evidence if verbose else ():
        console.print(oneline(f"  {anchor.url}  {anchor.role}"), soft_wrap=True)

    table = Table(title="Knobs", title_justify="left", show_lines=False)
    table.add_column("key", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_column("scope", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("line", no_wrap=True, justify="right")
    table.add_column("evidence", overflow="fold")
    for knob in review.knobs:
        first = knob.evidence[0] if knob.evidence else None
        evidence = oneline(f"{first.path}:{first.start_line}" + (" (patched)" if first.patched else "")) if first else ""
        if len(knob.evidence) > 1:
            evidence += f" (+{len(knob.evidence) - 1})"
        status = Text(knob.status, style=_STATUS_STYLE.get(knob.status, ""))
        table.add_row(oneline(knob.key), oneline(_show(knob.value)), oneline(knob.scope), status,
                      str(knob.recipe_line or ""), evidence + (f"  {oneline(knob.note)}" if knob.note else ""))
    console.print(table)

    for kind, title in KIND_GROUPS:
        group = [f for f in review.findings if f.kind == kind]
        if not group:
            continue
        console.print(Text(f"{title}: {len(group)}", style=_KIND_STYLE[kind]))
        for f in group:
            _finding(console, f, verbose, (review.recipe.path, f.fingerprint) in failing)
    if review.stale_rules:
        console.print(Text(f"Stale rules at this revision: {len(review.stale_rules)}", style="yellow"))
        for s in review.stale_rules:
            console.print(oneline(f"  {s.rule}: missing {', '.join(s.missing)}"))
    if review.incomplete:
        console.print(Text("Review incomplete:", style="bold red"))
        for reason in review.incomplete:
            console.print(oneline(f"  {reason}"), soft_wrap=True)
    if not review.findings and not review.incomplete:
        console.print("No findings.")


def _finding(console, f: Finding, verbose: bool, is_failing: bool) -> None:
    from rich.text import Text

    where = f" (recipe line {f.recipe_line})" if f.recipe_line else ""
    head = Text(oneline(f"  [{f.severity}] {f.classification}  {f.rule}{where}"), style="bold")
    if is_failing:
        head.append("  fails the gate", style="bold red")
    console.print(head)
    console.print(oneline(f"    claim: {f.claim}"), soft_wrap=True)
    console.print(oneline(f"    {f.message}"), soft_wrap=True)
    if f.waiver is not None:
        w = f.waiver
        console.print(oneline(f"    waived until {w.expires}: {w.reason} ({w.source})"), soft_wrap=True)
    if f.baseline is not None:
        console.print(f"    baseline: {f.baseline}")
    if f.tags:
        console.print(oneline(f"    tags: {', '.join(f.tags)}"))
    for assumption in f.assumptions:
        console.print(oneline(f"    assumes: {assumption}"), soft_wrap=True)
    for test in f.missing_tests:
        console.print(oneline(f"    missing test: {test}"), soft_wrap=True)
    anchors = f.evidence if verbose else f.evidence[:MAX_ANCHORS]
    for a in anchors:
        console.print(oneline(f"    {a.url}  {a.role}" + ("  (patched)" if a.patched else "")), soft_wrap=True)
    if len(f.evidence) > len(anchors):
        console.print(f"    ... {len(f.evidence) - len(anchors)} more anchor(s) (--verbose)")
    if verbose:
        console.print("    trace:")
        for n, hop in enumerate(f.trace, 1):
            where = hop.anchor.url + (" (patched)" if hop.anchor.patched else "") if hop.anchor \
                else (f"recipe line {hop.recipe_line}" if hop.recipe_line else "")
            console.print(oneline(f"      {n}. [{hop.kind}] {hop.text}" + (f"  {where}" if where else "")), soft_wrap=True)
    console.print(oneline(f"    fingerprint: {f.fingerprint}"))


def _show(value) -> str:
    if value is None:
        return "unset"
    return str(value)
