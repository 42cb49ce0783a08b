"""`--format text`: the knob table, then findings grouped by meaning, then the gate's decision.

Findings are grouped as problems (what can fail the gate), open questions (plausible) and
facts (verified behaviour); each still shows its classification and the rule's claim, its
gate state (fails the gate, waived, baseline status) and where the source shows it, as
`path:lines` (the anchor URLs and the whole trace, hop by hop, only with `verbose`). The
last line states the gate decision with its counts.

Fits `width` (the terminal's, from the CLI): prose wraps between words, a path or URL is
never broken inside; the knob table drops its evidence column when it would not fit.
A pure function of the reviews: rich renders into a string; color only when asked.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from srcreview.core.textsafe import oneline
from srcreview.model.findings import Anchor, Finding, Review

# one colour per knob status and per classification, for every rich renderer
STATUS_STYLE = {"applied": "green", "accepted": "cyan", "ignored": "bold red", "overridden": "magenta",
                "undecided": "yellow", "unknown-knob": "bold red", "invalid-value": "bold red"}
VERDICT_STYLE = {**STATUS_STYLE, "confirmed": "bold red", "plausible": "yellow", "refuted": "green", "stale": "magenta"}
KIND_GROUPS = (("problem", "Problems"), ("open-question", "Open questions"), ("fact", "Facts"))
_KIND_STYLE = {"problem": "bold red", "open-question": "yellow", "fact": "green"}
_GATE_STYLE = {"passed": "bold green", "failed": "bold red", "incomplete": "bold red"}
_PROVIDERS = {"registry": "registry sdist", "github": "GitHub tarball", "git": "git clone",
              "local": "local source", "directory": "local directory"}
MAX_ANCHORS = 3  # per finding without --verbose
DEFAULT_WIDTH = 100


def render(reviews: Sequence[Review] | Review, *, gate=None, verbose: bool = False, color: bool = False,
           width: int = DEFAULT_WIDTH, **_options) -> str:
    """The text report; with `gate` (a GateResult), each finding's gate state and the gate line."""
    from rich.console import Console

    if isinstance(reviews, Review):
        reviews = [reviews]
    if gate is not None:
        reviews = gate.annotate(reviews)
    failing = {(p, f.fingerprint) for p, f in gate.failing} if gate is not None else set()
    out = io.StringIO()
    console = Console(file=out, width=max(width, 40), color_system="standard" if color else None,
                      force_terminal=color, highlight=False, emoji=False, markup=False)
    for n, review in enumerate(reviews):
        if n:
            console.print()
        _review(console, review, verbose, failing)
    if gate is not None:
        console.print()
        console.print(gate_line(gate), style=_GATE_STYLE.get(gate.decision, ""), soft_wrap=True)
    return "\n".join(line.rstrip(" ") for line in out.getvalue().split("\n"))


def gate_line(gate) -> str:
    """`gate: failed (1 problem at or above confirmed:high; 1 waived; 2 open questions; 3 facts)`."""
    return f"gate: {gate.decision} ({gate.summary()})"


def _review(console, review: Review, verbose: bool, failing: set) -> None:
    from rich.text import Text

    rev = review.revision
    console.print(Text(oneline(f"{review.recipe.path}: {review.recipe.name}"), style="bold"), soft_wrap=True)
    label = f"{rev.version} ({rev.sha[:12]})" if rev.version else rev.sha[:12]
    source = f", from the {_PROVIDERS.get(rev.source, rev.source)}" if rev.source else ""
    pin = ""
    if rev.recipe_pin is not None:
        pin = ("; matches the recipe pin" if rev.matches_recipe_pin
               else f"; differs from the recipe pin {rev.recipe_pin[:12]}")
    origin = " (release not in pins/: commit and sdist sha256 from the package index)" \
        if rev.release_from == "index" else ""
    origin += f" ({rev.identity_unverified})" if rev.identity_unverified else ""
    _wrapped(console, f"vLLM {label}{source}{pin}{origin}", 0)
    for line in review.startup_lines():
        _wrapped(console, line, 0, hanging=2)
    for line in review.profile_lines():
        _wrapped(console, line, 0, hanging=2)
    for layer in review.patches:
        _wrapped(console, f"patched with {layer.kind} {layer.file} (sha256 {layer.sha256[:12]}): "
                          + ", ".join(layer.touched), 0, hanging=2)
    for model in review.models:
        _wrapped(console, model.summary(), 0, hanging=2)
        if verbose and model.read:
            _wrapped(console, "read: " + ", ".join(model.read), 2)
        if verbose:
            for value in model.stated:
                _wrapped(console, f"recipe line {value.line}: {value.key} = {value.value!r}", 2)
    _runner(console, review, verbose)
    _knobs(console, review, verbose)
    for kind, title in KIND_GROUPS:
        group = [f for f in review.findings if f.kind == kind]
        if not group:
            continue
        console.print(Text(f"{title}: {len(group)}", style=_KIND_STYLE[kind]))
        for f in group:
            _finding(console, f, verbose, (review.recipe.path, f.fingerprint) in failing)
    _startup(console, review, verbose)
    if review.stale_rules:
        failed = review.gate is not None and review.gate.stale
        _wrapped(console, f"Stale rules at this revision: {len(review.stale_rules)}"
                 + (" (they fail the gate: update the rules, or accept them with --allow-stale)" if failed else ""),
                 0, style="bold red" if failed else "yellow", hanging=2)
        for s in review.stale_rules:
            _wrapped(console, f"{s.rule}: missing {', '.join(s.missing)}", 2)
    if review.incomplete:
        console.print(Text("Review incomplete:", style="bold red"))
        for reason in review.incomplete:
            _wrapped(console, reason, 2)
    if not review.findings and not review.incomplete:
        console.print("No findings.")


def _runner(console, review: Review, verbose: bool) -> None:
    """Which model runner the recipe selects, in words; the analysis' own account with -v."""
    runner = review.runner
    if runner.value:
        text = (f"model runner: {runner.value.upper()}, as VllmConfig.use_v2_model_runner decides under the recipe"
                + ("" if verbose else " (-v: why)"))
    elif runner.reason.startswith("not evaluated: "):
        text = f"model runner: not evaluated ({runner.reason.removeprefix('not evaluated: ')})"
    else:
        text = "model runner: undecided" + (f" ({runner.reason})" if runner.reason else "")
    _wrapped(console, text, 0)
    if verbose:
        if runner.value and runner.reason:
            _wrapped(console, f"why: {runner.reason}", 2)
        for anchor in runner.evidence:
            console.print(oneline(f"  {anchor.url}  {anchor.role}"), soft_wrap=True)


def _startup(console, review: Review, verbose: bool) -> None:
    """The start-up evidence plan, one line per knob: the lines that prove it and what a run must set."""
    from rich.text import Text

    plan = review.startup_evidence
    if plan is None or not plan.rows:
        return
    console.print(Text(plan.heading(), style="bold"))
    for text, reason in plan.row_lines():
        _wrapped(console, text if verbose else text[:300], 2, hanging=2)
        if verbose and reason:
            _wrapped(console, reason, 4)


def _knobs(console, review: Review, verbose: bool) -> None:
    """The knob table, its notes below it; the evidence column (`path:line (+N)`) only when
    every cell of the table fits whole."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    rows = []
    for knob in review.knobs:
        first = knob.evidence[0] if knob.evidence else None
        evidence = (oneline(f"{first.path}:{first.start_line}" + (" (patched)" if first.patched else ""))
                    if first else "")
        if len(knob.evidence) > 1:
            evidence += f" (+{len(knob.evidence) - 1})"
        rows.append((oneline(knob.key), oneline(_show(knob.value)), knob.scope, knob.status,
                     str(knob.recipe_line or ""), evidence))
    headers = ("key", "value", "scope", "status", "line", "evidence")
    widths = [max([len(r[i]) for r in rows] + [len(h)]) for i, h in enumerate(headers)]
    with_evidence = sum(widths) + 2 * (len(widths) - 1) <= console.width
    if sum(widths[:5]) + 2 * 4 > console.width:  # no table fits: one knob a line
        console.print("Knobs")
        for key, value, scope, status, line, _ in rows:
            _wrapped(console, f"{key} = {value}: {status} ({scope}" + (f", line {line})" if line else ")"), 2)
        rows = []
    table = Table(title="Knobs", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                  padding=(0, 1, 0, 0))  # a padding space and the box's space: two between columns
    table.add_column("key", no_wrap=True)
    table.add_column("value", overflow="fold", min_width=min(widths[1], 12))
    table.add_column("scope", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("line", no_wrap=True, justify="right")
    if with_evidence:
        table.add_column("evidence", no_wrap=True)
    for key, value, scope, status, line, evidence in rows:
        cells: list[str | Text] = [key, value, scope, Text(status, style=STATUS_STYLE.get(status, "")), line]
        table.add_row(*cells, *([evidence] if with_evidence else []))
    if rows:
        console.print(table)
    for knob in review.knobs:
        if knob.note:
            _wrapped(console, f"{knob.key} ({knob.scope}): {knob.note}", 2)
        for anchor in knob.evidence if verbose else ():
            console.print(oneline(f"  {knob.key} ({knob.scope}): {anchor.url}  {anchor.role}{_patched(anchor)}"),
                          soft_wrap=True)


def _finding(console, f: Finding, verbose: bool, is_failing: bool) -> None:

    where = f" (recipe line {f.recipe_line})" if f.recipe_line else ""
    head = f"[{f.severity}] {f.classification}  {f.rule}{where}" + ("  fails the gate" if is_failing else "")
    _wrapped(console, head, 2, style="bold red" if is_failing else "bold", hanging=4)
    _wrapped(console, f"claim: {f.claim}", 4)
    _wrapped(console, f.message, 4)
    if f.waiver is not None:
        w = f.waiver
        _wrapped(console, f"waived until {w.expires}: {w.reason} ({w.source})", 4)
    if f.baseline is not None:
        console.print(f"    baseline: {f.baseline}")
    if f.tags:
        _wrapped(console, f"tags: {', '.join(f.tags)}", 4)
    for assumption in f.assumptions:
        _wrapped(console, f"assumes: {assumption}", 4)
    for test in f.missing_tests:
        _wrapped(console, f"missing test: {test}", 4)
    if verbose:
        for a in f.evidence:
            console.print(oneline(f"    {a.url}  {a.role}{_patched(a)}"), soft_wrap=True)
        console.print("    trace:")
        for n, hop in enumerate(f.trace, 1):
            where = hop.anchor.url + _patched(hop.anchor).replace("  ", " ") if hop.anchor \
                else (f"recipe line {hop.recipe_line}" if hop.recipe_line else "")
            console.print(oneline(f"      {n}. [{hop.kind}] {hop.text}" + (f"  {where}" if where else "")),
                          soft_wrap=True)
    else:
        for a in f.evidence[:MAX_ANCHORS]:
            _wrapped(console, f"{_where(a)}  {a.role}{_patched(a)}", 4, hanging=6)
        if len(f.evidence) > MAX_ANCHORS:
            console.print(f"    ... {len(f.evidence) - MAX_ANCHORS} more anchor(s) (-v: links and the trace)")
    console.print(oneline(f"    fingerprint: {f.fingerprint}"))


def _patched(anchor: Anchor) -> str:
    """`  (patched)` for an anchor on lines a patch or overlay added or changed."""
    return "  (patched)" if anchor.patched else ""


def _where(anchor: Anchor) -> str:
    lines = f"{anchor.start_line}" if anchor.end_line <= anchor.start_line else f"{anchor.start_line}-{anchor.end_line}"
    return f"{anchor.path}:{lines}"


def _wrapped(console, text: str, indent: int, style: str = "", hanging: int | None = None) -> None:
    """Prose wrapped between words at the console width, continued at the same indent (or at
    `hanging`); a word longer than the line (a path, a URL) is kept whole."""
    import textwrap

    for line in textwrap.wrap(oneline(text), width=console.width, initial_indent=" " * indent,
                              subsequent_indent=" " * (indent if hanging is None else hanging),
                              break_long_words=False, break_on_hyphens=False) or [""]:
        console.print(line, style=style, soft_wrap=True)


def _show(value) -> str:
    if value is None:
        return "unset"
    return str(value)
