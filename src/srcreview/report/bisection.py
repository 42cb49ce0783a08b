"""`srcreview bisect` output: the tested revisions, each boundary, the evidence on both sides.

Text lists every revision in order with its verdict (or `untested`), then the first change
and any later ones with each side's message and the anchors present on one side only; JSON
is the BisectReport model. Pure functions of the report.
"""

from __future__ import annotations

import io
from typing import cast

from srcreview.core.textsafe import dumps, oneline
from srcreview.history.bisect import BisectReport, Change
from srcreview.report.terminal import VERDICT_STYLE


def render_json(report: BisectReport) -> str:
    return dumps(report.model_dump(mode="json"), indent=2) + "\n"


def render_text(report: BisectReport, *, verbose: bool = False, color: bool = False, width: int = 110) -> str:
    from rich.console import Console
    from rich.text import Text

    out = io.StringIO()
    console = Console(file=out, width=width, color_system="standard" if color else None,
                      force_terminal=color, highlight=False, emoji=False, markup=False)
    console.print(Text(oneline(report.recipe), style="bold"))
    tested = sum(r.tested for r in report.revisions)
    how = "every revision tested" if report.exhaustive else "bisection"
    console.print(oneline(f"bisecting the {report.asked} over {len(report.revisions)} revisions "
                            f"({how}; {tested} tested)"))
    for n, row in enumerate(report.revisions, 1):
        if row.tested:
            verdict = Text(oneline(cast(str, row.verdict)), style=VERDICT_STYLE.get(row.verdict or "", ""))
        else:
            verdict = Text("untested", style="dim")
        line = Text(oneline(f"  {n:>2}. {row.label:<24} "))
        line.append_text(verdict)
        if row.incomplete:
            line.append("  (review incomplete)", style="bold red")
        console.print(line)
    console.print(oneline(f"tested in this order: {', '.join(report.test_order)}"), soft_wrap=True)
    if report.first_change is None:
        verdicts = cast("set[str]", {r.verdict for r in report.revisions if r.tested})  # a tested one has one
        console.print(Text(oneline(f"No change: {', '.join(sorted(verdicts))} at every tested revision."),
                           style="bold"))
    else:
        first = report.first_change
        console.print(Text(oneline(f"First change at {first.after.label}: {first.before.verdict} at "
                                   f"{first.before.label} -> {first.after.verdict} at {first.after.label}"),
                           style="bold"))
        for n, change in enumerate(report.changes):
            if n:
                console.print(Text(oneline(f"Later change at {change.after.label}: {change.before.verdict} -> "
                                             f"{change.after.verdict}"), style="bold"))
            _change(console, change, verbose)
    for note in report.notes:
        console.print(Text(oneline(f"note: {note}"), style="yellow"), soft_wrap=True)
    return out.getvalue()


def _change(console, change: Change, verbose: bool) -> None:
    for side in (change.before, change.after):
        console.print(oneline(f"  at {side.label}: {side.verdict}"))
        for f in side.findings:
            console.print(oneline(f"    {f.message}"), soft_wrap=True)
            for anchor in f.evidence if verbose else ():
                console.print(oneline(f"      {anchor.url}  {anchor.role}"), soft_wrap=True)
        for k in side.knobs:
            console.print(oneline(f"    knob {k.key} ({k.scope}) = {k.value!r}: {k.status}"
                                    + (f"; {k.note}" if k.note else "")), soft_wrap=True)
            for anchor in k.evidence if verbose else ():
                console.print(oneline(f"      {anchor.url}  {anchor.role}"), soft_wrap=True)
        for reason in side.incomplete:
            console.print(oneline(f"    review incomplete: {reason}"), soft_wrap=True)
    sides = (("-", change.before.label, change.only_before), ("+", change.after.label, change.only_after))
    for mark, rev, anchors in sides:
        for anchor in anchors:
            console.print(oneline(f"  {mark} only at {rev}: {anchor.url}  {anchor.role}"), soft_wrap=True)
