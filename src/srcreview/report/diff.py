"""`srcreview diff` output: a ReviewDiff as text (side-by-side tables, then each change) or JSON.

For every change the text shows both sides' messages and the anchors present on one side
only (`-` before, `+` after): the lines that made the difference. `verbose` lists every
anchor of both sides. Pure functions of the ReviewDiff.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, cast

from srcreview.core.textsafe import dumps, oneline
from srcreview.history.compare import ReviewDiff
from srcreview.report.terminal import VERDICT_STYLE

if TYPE_CHECKING:
    from srcreview.model.findings import Finding, Knob



def rev_label(info, patches=()) -> str:
    return (f"{info.version} ({info.sha[:9]})" if info.version else info.sha[:12]) + _patched(patches)


def short_label(info, patches=()) -> str:
    return (info.version or info.sha[:9]) + _patched(patches)


def _patched(patches) -> str:
    return f" + {', '.join(p.file for p in patches)}" if patches else ""


def render_json(diff: ReviewDiff) -> str:
    return dumps(diff.model_dump(mode="json"), indent=2) + "\n"


def render_text(diff: ReviewDiff, *, verbose: bool = False, color: bool = False, width: int = 110) -> str:
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, width=width, color_system="standard" if color else None,
                      force_terminal=color, highlight=False, emoji=False, markup=False)
    _header(console, diff)
    _knob_table(console, diff)
    _finding_table(console, diff)
    _changes(console, diff, verbose)
    return out.getvalue()


def _header(console, diff: ReviewDiff) -> None:
    from rich.text import Text

    a, b = diff.before, diff.after
    console.print(Text(oneline(diff.recipe), style="bold"))
    console.print(oneline(f"vLLM {rev_label(a, diff.patches_before)} -> vLLM {rev_label(b, diff.patches_after)}"))
    ra, rb = diff.runner.before.value or "undecided", diff.runner.after.value or "undecided"
    console.print(oneline(f"model runner: {ra}" + (f" -> {rb}" if diff.runner.changed else " (both)")))


def _styled(value: str):
    from rich.text import Text

    return Text(oneline(value), style=VERDICT_STYLE.get(value, ""))


def _knob_table(console, diff: ReviewDiff) -> None:
    from rich.table import Table

    a, b = short_label(diff.before, diff.patches_before), short_label(diff.after, diff.patches_after)
    table = Table(title="Knobs", title_justify="left")
    for column in ("key", "scope", "value", a, b, "change"):
        table.add_column(oneline(column), overflow="fold")
    for k in diff.knobs:
        row = cast("Knob", k.after or k.before)  # never both absent
        table.add_row(oneline(k.key), oneline(k.scope), oneline(_value(row.value)), _styled(k.status_before),
                      _styled(k.status_after), "" if k.change == "unchanged" else oneline(k.change))
    console.print(table)


def _finding_table(console, diff: ReviewDiff) -> None:
    from rich.table import Table

    a, b = short_label(diff.before, diff.patches_before), short_label(diff.after, diff.patches_after)
    table = Table(title="Findings", title_justify="left")
    for column in ("rule", "knobs", a, b, "change"):
        table.add_column(oneline(column), overflow="fold")
    for f in diff.findings:
        some = cast("Finding", f.after or f.before)  # never both absent
        change = "" if f.change == "unchanged" else (", ".join(f.what) if f.what else f.change)
        table.add_row(oneline(f.rule), oneline(", ".join(some.knobs)), _styled(f.class_before), _styled(f.class_after),
                      oneline(change))
    console.print(table)


def _changes(console, diff: ReviewDiff, verbose: bool) -> None:
    from rich.text import Text

    a, b = short_label(diff.before, diff.patches_before), short_label(diff.after, diff.patches_after)
    knobs = [k for k in diff.knobs if k.change != "unchanged"]
    findings = [f for f in diff.findings if f.change != "unchanged"]
    stale = sorted(set(diff.stale_before) ^ set(diff.stale_after))
    if not (knobs or findings or stale or diff.runner.changed):
        console.print(oneline(f"No change between {a} and {b}."))
    else:
        console.print(Text(f"Changes: {len(knobs)} knob row(s), {len(findings)} finding(s)", style="bold"))
    for k in knobs:
        console.print(Text(oneline(f"  knob {k.key} ({k.scope}): {k.status_before} -> {k.status_after}"), style="bold"))
        for side, row in ((a, k.before), (b, k.after)):
            if row is not None and row.note:
                console.print(oneline(f"    {side}: {row.note}"), soft_wrap=True)
        _anchors(console, a, b, k.before.evidence if k.before else (), k.after.evidence if k.after else (),
                 k.only_before, k.only_after, verbose)
    for f in findings:
        head = f"  finding {f.rule}: {f.class_before} -> {f.class_after}"
        if f.what and f.what != ("classification",):
            head += f" ({', '.join(f.what)} changed)"
        console.print(Text(oneline(head), style="bold"))
        for side, finding in ((a, f.before), (b, f.after)):
            if finding is not None:
                console.print(oneline(f"    {side}: {finding.message}"), soft_wrap=True)
                for assumption in finding.assumptions if "assumptions" in f.what else ():
                    console.print(oneline(f"      assumes: {assumption}"), soft_wrap=True)
        _anchors(console, a, b, f.before.evidence if f.before else (), f.after.evidence if f.after else (),
                 f.only_before, f.only_after, verbose)
        console.print(oneline(f"    fingerprint: {f.fingerprint}"))
    for rule in stale:
        where = b if rule in diff.stale_after else a
        console.print(oneline(f"  rule {rule}: stale at {where} (its anchor symbols are missing there)"))
    for side, reasons in ((a, diff.incomplete_before), (b, diff.incomplete_after)):
        for reason in reasons:
            console.print(Text(oneline(f"Review at {side} incomplete: {reason}"), style="bold red"), soft_wrap=True)


def _anchors(console, a: str, b: str, before, after, only_before, only_after, verbose: bool) -> None:
    if verbose:
        for side, anchors in ((a, before), (b, after)):
            console.print(oneline(f"    evidence at {side}:"))
            for anchor in anchors:
                console.print(oneline(f"      {anchor.url}  {anchor.role}"), soft_wrap=True)
    for mark, side, anchors in (("-", a, only_before), ("+", b, only_after)):
        for anchor in anchors:
            console.print(oneline(f"    {mark} only at {side}: {anchor.url}  {anchor.role}"), soft_wrap=True)


def _value(value) -> str:
    return "unset" if value is None else str(value)
