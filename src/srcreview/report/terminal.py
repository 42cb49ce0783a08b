"""`--format text`: the knob table first, then findings grouped by classification, with anchors.

`verbose` adds each finding's whole trace, hop by hop (recipe key -> field -> calls -> sink).
A pure function of the reviews: rich renders into a string; color only when asked.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from srcreview.findings import Review
from srcreview.textsafe import printable

_STATUS_STYLE = {"applied": "green", "accepted": "cyan", "ignored": "bold red", "undecided": "yellow",
                 "unknown-knob": "bold red", "invalid-value": "bold red"}
_CLASS_STYLE = {"confirmed": "bold red", "plausible": "yellow", "refuted": "green"}
_GROUPS = (("confirmed", "Confirmed"), ("plausible", "Plausible (open)"), ("refuted", "Refuted"))


def render(reviews: Sequence[Review] | Review, *, verbose: bool = False, color: bool = False,
           width: int = 120, **_options) -> str:
    from rich.console import Console

    if isinstance(reviews, Review):
        reviews = [reviews]
    out = io.StringIO()
    console = Console(file=out, width=width, color_system="standard" if color else None,
                      force_terminal=color, highlight=False, emoji=False, markup=False)
    for n, review in enumerate(reviews):
        if n:
            console.print()
        _review(console, review, verbose)
    return out.getvalue()


def _review(console, review: Review, verbose: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    rev = review.revision
    console.print(Text(printable(f"{review.recipe.path}: {review.recipe.name}"), style="bold"))
    label = f"{rev.version} ({rev.sha[:12]})" if rev.version else rev.sha[:12]
    pin = ""
    if rev.recipe_pin is not None:
        pin = " matches the recipe pin" if rev.matches_recipe_pin else f" differs from the recipe pin {rev.recipe_pin[:12]}"
    origin = " (release not in pins/: commit and sdist sha256 from the package index)" \
        if rev.release_from == "index" else ""
    console.print(printable(f"vLLM {label}{pin}{origin}"))
    for layer in review.patches:
        console.print(printable(f"patched with {layer.kind} {layer.file} (sha256 {layer.sha256[:12]}): "
                                + ", ".join(layer.touched)), soft_wrap=True)
    runner = review.runner
    console.print(printable(f"model runner: {runner.value or 'undecided'}" + (f" ({runner.reason})" if runner.reason else "")))
    for anchor in runner.evidence if verbose else ():
        console.print(printable(f"  {anchor.url}  {anchor.role}"), soft_wrap=True)

    table = Table(title="Knobs", title_justify="left", show_lines=False)
    table.add_column("key", no_wrap=True)
    table.add_column("value", overflow="fold")
    table.add_column("scope", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("line", no_wrap=True, justify="right")
    table.add_column("evidence", overflow="fold")
    for knob in review.knobs:
        first = knob.evidence[0] if knob.evidence else None
        evidence = printable(f"{first.path}:{first.start_line}" + (" (patched)" if first.patched else "")) if first else ""
        if len(knob.evidence) > 1:
            evidence += f" (+{len(knob.evidence) - 1})"
        status = Text(knob.status, style=_STATUS_STYLE.get(knob.status, ""))
        table.add_row(printable(knob.key), printable(_show(knob.value)), printable(knob.scope), status,
                      str(knob.recipe_line or ""), evidence + (f"  {printable(knob.note)}" if knob.note else ""))
    console.print(table)

    for classification, title in _GROUPS:
        group = [f for f in review.findings if f.classification == classification]
        if not group:
            continue
        console.print(Text(f"{title}: {len(group)}", style=_CLASS_STYLE[classification]))
        for f in group:
            where = f" (recipe line {f.recipe_line})" if f.recipe_line else ""
            console.print(Text(printable(f"  [{f.severity}] {f.rule}{where}"), style="bold"))
            console.print(printable(f"    {f.message}"), soft_wrap=True)
            if f.tags:
                console.print(printable(f"    tags: {', '.join(f.tags)}"))
            for assumption in f.assumptions:
                console.print(printable(f"    assumes: {assumption}"), soft_wrap=True)
            for test in f.missing_tests:
                console.print(printable(f"    missing test: {test}"), soft_wrap=True)
            anchors = f.evidence if verbose else f.evidence[:6]
            for a in anchors:
                console.print(printable(f"    {a.url}  {a.role}" + ("  (patched)" if a.patched else "")), soft_wrap=True)
            if len(f.evidence) > len(anchors):
                console.print(f"    ... {len(f.evidence) - len(anchors)} more anchor(s) (--verbose)")
            if verbose:
                console.print("    trace:")
                for n, hop in enumerate(f.trace, 1):
                    where = hop.anchor.url + (" (patched)" if hop.anchor.patched else "") if hop.anchor \
                        else (f"recipe line {hop.recipe_line}" if hop.recipe_line else "")
                    console.print(printable(f"      {n}. [{hop.kind}] {hop.text}" + (f"  {where}" if where else "")), soft_wrap=True)
            console.print(printable(f"    fingerprint: {f.fingerprint}"))
    if review.stale_rules:
        failed = review.gate is not None and review.gate.stale
        console.print(Text(f"Stale rules at this revision: {len(review.stale_rules)}"
                           + (" (they fail the gate: update the rules, or accept them with --allow-stale)"
                              if failed else ""), style="bold red" if failed else "yellow"))
        for s in review.stale_rules:
            console.print(printable(f"  {s.rule}: missing {', '.join(s.missing)}"))
    if review.incomplete:
        console.print(Text("Review incomplete:", style="bold red"))
        for reason in review.incomplete:
            console.print(printable(f"  {reason}"), soft_wrap=True)
    if not review.findings and not review.incomplete:
        console.print("No findings.")


def _show(value) -> str:
    if value is None:
        return "unset"
    return str(value)
