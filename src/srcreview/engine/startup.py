"""The review's start-up verdict: does vLLM start with the recipe, as far as the source tells.

A rule declares `stops_startup` when a problem it confirms means vLLM refuses the recipe (a
raise while the config is built, a refused value or key, a backend the selector refuses). The
verdict is `rejected` when such a problem is confirmed or a knob row says the value or the key is
refused; `undecided` when such a rule has an open question, a knob is undecided or the review
is incomplete (each reason named); otherwise `no-refusal-found`, which says what it is: no
refusal reachable on the walked path, not a promise about what runs after the config is built.
"""

from __future__ import annotations

from srcreview.model.findings import Startup

REFUSING_STATUSES = ("invalid-value", "unknown-knob")


def startup_verdict(rules, findings, knobs, incomplete) -> Startup:
    """The verdict and its reasons, from what the review found (see the module doc)."""
    stopping = {rule.id for rule in rules if rule.stops_startup}
    refused = [f"{f.rule}: {f.claim}" for f in findings if f.rule in stopping and f.kind == "problem"]
    refused += [f"{k.key} ({k.scope}) {k.status}" for k in knobs if k.status in REFUSING_STATUSES]
    if refused:
        return Startup(verdict="rejected", reasons=tuple(dict.fromkeys(refused)))
    open_ = [f"{f.rule} open" for f in findings if f.rule in stopping and f.kind == "open-question"]
    open_ += [f"{k.key} ({k.scope}) undecided" for k in knobs if k.status == "undecided"]
    open_ += ["the review is incomplete"] if incomplete else []
    if open_:
        return Startup(verdict="undecided", reasons=tuple(dict.fromkeys(open_)))
    return Startup(verdict="no-refusal-found")
