"""`srcreview explain` output: a finding's trace hop by hop with highlighted source, and its rule.

Text: the finding, then each hop of the trace with its anchor URL and the anchored lines
(rich Syntax, anchored lines marked), the remaining evidence, the assumptions made on
undecided branches, the tags and what they mean, and the rule's verdict mapping and doc.
JSON: the Explanation model. Pure functions of the Explanation.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, cast

from srcreview.audit.explain import Explanation, Step
from srcreview.core.textsafe import dumps, oneline, printable

if TYPE_CHECKING:
    from srcreview.model.findings import Anchor, Hop

_CLASS_STYLE = {"confirmed": "bold red", "plausible": "yellow", "refuted": "green"}


def render_json(explanation: Explanation) -> str:
    return dumps(explanation.model_dump(mode="json"), indent=2) + "\n"


def render_text(explanation: Explanation, *, color: bool = False, width: int = 110,
                show_evidence: bool = True) -> str:
    from rich.console import Console
    from rich.text import Text

    out = io.StringIO()
    console = Console(file=out, width=width, color_system="standard" if color else None,
                      force_terminal=color, highlight=False, emoji=False, markup=False)
    f = explanation.finding
    title = Text(oneline(f"{f.id}  "), style="bold")
    title.append(f.classification, style=_CLASS_STYLE.get(f.classification, ""))
    title.append(oneline(f" {f.kind}  [{f.severity}]"))
    console.print(title)
    console.print(oneline(f"recipe {explanation.recipe}, vLLM {explanation.revision}, fingerprint {f.fingerprint}"))
    console.print(oneline(f"claim: {f.claim}"), soft_wrap=True)
    console.print(oneline(f.message), soft_wrap=True)

    console.print()
    console.print(Text(f"Trace ({len(explanation.trace)} hops)", style="bold"))
    for n, step in enumerate(explanation.trace, 1):
        hop = cast("Hop", step.hop)  # a trace step is a hop
        where = f"  (recipe line {hop.recipe_line})" if hop.recipe_line else ""
        console.print(Text(oneline(f"{n}. [{hop.kind}] {hop.text}{where}")), soft_wrap=True)
        _anchor(console, step, color)
    if show_evidence and explanation.evidence:
        console.print()
        console.print(Text(f"Other evidence ({len(explanation.evidence)})", style="bold"))
        for step in explanation.evidence:
            anchor = cast("Anchor", step.anchor)  # an evidence step is an anchor
            console.print(oneline(f"- {anchor.role or anchor.symbol}"), soft_wrap=True)
            _anchor(console, step, color)

    console.print()
    console.print(Text("Why it is " + f.classification, style="bold"))
    rule = explanation.rule
    if rule is not None:
        mapping = ", ".join(f"{o} -> {c}" for o, c in rule.verdict.items())
        console.print(oneline(f"rule {rule.id} ({rule.check_kind} check): {mapping}"), soft_wrap=True)
        if rule.downgraded:
            console.print("the check's outcome would be confirmed or refuted on the runner the rule requires, "
                          "but the model runner is undecided under the recipe, so the finding stays plausible",
                          soft_wrap=True)
        elif rule.outcomes:
            console.print(oneline(f"the check concluded {' or '.join(rule.outcomes)}, which this rule maps to "
                                    f"{f.classification}"), soft_wrap=True)
    reason = "the rule only informs" if f.problem == "none" else f"a {f.problem} claim is this rule's problem"
    console.print(f"which makes it {_KIND_WORDS[f.kind]}: {reason}", soft_wrap=True)
    if f.assumptions:
        console.print("assumptions made on branches the recipe does not decide:")
        for assumption in f.assumptions:
            console.print(oneline(f"  - {assumption}"), soft_wrap=True)
    else:
        console.print("assumptions: none recorded for this finding")
    for tag, meaning in explanation.tags.items():
        console.print(oneline(f"tag {tag}" + (f": {meaning}" if meaning else "")), soft_wrap=True)
    for test in f.missing_tests:
        console.print(oneline(f"missing test: {test}"), soft_wrap=True)
    if rule is not None:
        console.print(oneline(f"what the rule checks: {rule.what}"), soft_wrap=True)
        console.print(oneline(f"why it matters: {rule.why}"), soft_wrap=True)
        console.print(oneline(f"what to do instead: {rule.instead}"), soft_wrap=True)
        for ref in rule.references:
            console.print(oneline(f"  see {ref}"), soft_wrap=True)
    return "".join(line.rstrip() + "\n" for line in out.getvalue().splitlines())


_KIND_WORDS = {"problem": "a problem (it can fail the gate)", "open-question": "an open question",
               "fact": "a fact (verified behaviour; it never fails the gate)"}


def _anchor(console, step: Step, color: bool) -> None:
    from rich.padding import Padding
    from rich.syntax import Syntax

    if step.anchor is None:
        return
    console.print(oneline(f"   {step.anchor.url}" + ("  (patched)" if step.anchor.patched else "")), soft_wrap=True)
    if step.unreadable:
        console.print(oneline(f"   (source not shown: {step.unreadable})"), soft_wrap=True)
    excerpt = step.excerpt
    if excerpt is None:
        return
    code = printable("\n".join(excerpt.lines))  # the source is shown, never obeyed by the terminal
    marked = set(range(excerpt.start_line, excerpt.end_line + 1))
    syntax = Syntax(code, "python", theme="ansi_dark", line_numbers=True, start_line=excerpt.first_line,
                    highlight_lines=marked, word_wrap=False, background_color="default" if color else None)
    console.print(Padding(syntax, (0, 0, 0, 3)))
    if excerpt.truncated:
        console.print(f"   ... (excerpt cut at {len(excerpt.lines)} lines; the anchor runs to line {excerpt.end_line})")
