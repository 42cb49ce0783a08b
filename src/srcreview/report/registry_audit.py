"""`srcreview audit REGISTRY.json` output: one row per vLLM entry (text) or the report as JSON. Pure."""

from __future__ import annotations

import io

from srcreview.audit.registries import RegistryAuditReport
from srcreview.core.textsafe import dumps, printable

_STYLE = {"ok": "green", "drifted": "bold red", "unpinned": "bold red", "other-revision": "bold red",
          "whole-file": "yellow", "unverifiable": "yellow"}


def render_json(report: RegistryAuditReport, incomplete: dict[str, str]) -> str:
    data = {
        "registry": report.registry,
        "pin": report.pin,
        "summary": report.summary(),
        "incomplete": [{"rev": rev, "reason": reason} for rev, reason in sorted(incomplete.items())],
        "entries": [e.model_dump(mode="json") for e in report.entries],
    }
    return dumps(data, indent=2) + "\n"


def render_text(report: RegistryAuditReport, incomplete: dict[str, str], width: int = 120) -> str:
    from rich.console import Console
    from rich.markup import escape as escape_markup
    from rich.table import Table

    def escape(text: str) -> str:
        """Text from the registry is shown, never obeyed: no rich markup, no terminal control."""
        return escape_markup(printable(text))

    out = io.StringIO()
    console = Console(file=out, width=width, highlight=False, emoji=False, color_system=None)
    checked = [e for e in report.entries if e.status != "not-vllm"]
    table = Table(title=f"vLLM entries of {escape(report.registry)}", show_lines=True, expand=True)
    table.add_column("id", overflow="fold", ratio=1)
    table.add_column("status", no_wrap=True)
    table.add_column("url and claim", overflow="fold", ratio=2)
    table.add_column("verdict", overflow="fold", ratio=2)
    for entry in checked:
        from_review = " [dim](from the review)[/]" if entry.claim_from == "review" else ""
        claim = f"\n[dim]{escape(entry.claim)}[/]" + from_review if entry.claim else ""
        verdict = escape(entry.reason)
        if entry.corrected is not None:
            verdict += (f"\n[bold]→ {escape(entry.corrected.path)}:{entry.corrected.start_line}-"
                        f"{entry.corrected.end_line}[/]")
        for note in entry.notes:
            verdict += f"\n· {escape(note)}"
        table.add_row(escape(entry.id), f"[{_STYLE.get(entry.status, '')}]{entry.status}[/]", escape(entry.url) + claim,
                      verdict)
    console.print(table)
    for rev, reason in sorted(incomplete.items()):
        console.print(f"source of {escape(rev)} unavailable: {escape(reason)}", soft_wrap=True)
    counts = report.summary()
    pin = f" (pin {report.pin[:12]})" if report.pin else " (no --recipe: commits not compared with a pin)"
    console.print(f"{len(checked)} vLLM entries{pin}: "
                  + ", ".join(f"{counts[s]} {s}" for s in counts if s != "not-vllm")
                  + f"; {counts['not-vllm']} other entries not checked")
    return out.getvalue()
