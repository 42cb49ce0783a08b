"""The rule reference (docs/rules.md), generated from the rule files: never written by hand.

Every rule gets the same sections (what it checks, why it matters, what to do instead,
references), its claim, when it applies, its check and verdicts, and its examples.
"""

from __future__ import annotations

HEADER = """# Rule reference

Generated from `rules/*.toml` by `srcreview rules --doc`; do not edit by hand
(`tests/rules/test_rules.py` fails when this file is not current).

Each rule states one claim, checks it against the pinned vLLM source with one check kind,
and maps the check's outcome to a classification: **confirmed** (the source proves the
claim), **refuted** (the source proves it false) or **plausible** (the source admits it but
cannot settle it; the reason is tagged). `none` means no finding (the knob table may still
record the result). A rule whose symbols are missing at a revision is reported as stale.

Each rule also says which classification of its claim is a **problem** (`problem`): a
finding with that classification is a problem (it can fail the gate), a plausible one an
open question, the other decided one a fact (verified behaviour; never fails the gate).
`confirmed` for a claim that states a defect, `refuted` for a claim that states a desired
property, `none` for a rule that only informs. A rule that declares `stops_startup` states a
refusal: its problem makes the review's start-up verdict `rejected`, its open question leaves
it `undecided`.

| rule | severity | problem | check | claim |
|---|---|---|---|---|
"""


def render(rules) -> str:
    parts = [HEADER]
    for r in rules:
        parts.append(f"| [`{r.id}`](#{r.id}) | {r.severity} | {r.problem} | {r.check.kind} | {_cell(r.claim)} |\n")
    for r in rules:
        parts.append("\n" + render_rule(r, level=2))
    return "".join(parts)


def render_rule(rule, level: int = 1) -> str:
    h = "#" * level
    lines = [f"{h} {rule.id}", "", f"**Claim:** {rule.claim}", "",
             f"**Severity:** {rule.severity} · **Problem:** {_problem(rule.problem)} · **Check:** `{rule.check.kind}`"
             + (" · **For each recipe setting**" if rule.for_each else "")
             + (f" · **Runner:** {rule.requires_runner}" if rule.requires_runner else "")
             + (" · **Stops start-up**" if rule.stops_startup else ""), ""]
    if rule.when:
        lines += ["**When:** " + "; ".join(f"`{k}` {_cond(c)}" for k, c in rule.when.items()), ""]
    params = rule.check.params
    if params:
        lines += ["**Check parameters:** " + ", ".join(f"`{k} = {v!r}`" for k, v in params.items()), ""]
    lines += ["**Verdicts:** " + ", ".join(f"{o} → {c}" for o, c in rule.verdict.items()), ""]
    lines += [f"{h}# What it checks", "", rule.doc.what, "", f"{h}# Why it matters", "", rule.doc.why, "",
              f"{h}# What to do instead", "", rule.doc.instead, ""]
    if rule.doc.references:
        lines += [f"{h}# References", ""] + [f"- {ref}" for ref in rule.doc.references] + [""]
    lines += [f"{h}# Examples", "", "| example | fixture | settings | expect |", "|---|---|---|---|"]
    for ex in rule.examples:
        settings = ", ".join(f"`{k} = {v!r}`" for k, v in sorted(ex.settings.items()))
        if ex.env:
            settings += (", " if settings else "") + ", ".join(f"`env.{k} = {v!r}`" for k, v in sorted(ex.env.items()))
        if ex.hardware:
            settings += (", " if settings else "") + ", ".join(f"`hardware.{k} = {v!r}`" for k,
                                                               v in sorted(ex.hardware.items()))
        lines.append(f"| {_cell(ex.name)} | {ex.fixture} | {settings} | {ex.expect} |")
    return "\n".join(lines) + "\n"


def _problem(problem: str) -> str:
    return {"confirmed": "confirmed (the claim states a defect)",
            "refuted": "refuted (the claim states a desired property)",
            "none": "none (informational: its findings are facts or open questions)"}[problem]


def _cond(cond) -> str:
    data = cond.model_dump(by_alias=True, exclude_none=True)
    if data == {"set": True}:
        return "is set"
    if data == {"set": False}:
        return "is unset"
    return ", ".join(f"{k.replace('_', ' ')} {v!r}" for k, v in data.items())


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
