"""Tags: why an outcome is what it is, or why it is not decided. One closed set, each with its meaning.

A check result, a finding and a knob carry tags; every output writes them as the plain strings
below. `Tag` is the set a type checker holds the code to (a tag outside it does not type-check),
and `TAG_MEANINGS` says what each one means (`srcreview explain` prints it). A test holds the
two equal and every tag the source writes inside the set.
"""

from __future__ import annotations

from typing import Literal

# what the analysis could not see through (the kinds of srcreview.interp.results.Site, also tags)
SiteKind = Literal[
    "dynamic-getattr", "kwargs-forward", "dunder-dict", "unresolved-call", "external-call", "untyped-read",
    "virtual-call", "raise",
]

Tag = Literal[
    "dynamic-getattr", "kwargs-forward", "dunder-dict", "unresolved-call", "external-call", "untyped-read",
    "virtual-call", "raise",
    "runtime-branch", "runner-undecided", "model-config-unknown", "not-traced", "unresolved-type",
    "value-undecided", "dynamic-registration", "no-covering-test", "ambiguous-symbol",
    "source-unavailable", "unparsable-source", "unreadable-source", "analysis-unavailable", "analysis-error",
    "undecided", "shell-value", "recipe-open", "parser-form", "startup-open",
]

TAG_MEANINGS: dict[Tag, str] = {
    "dynamic-getattr": "a getattr with a name the analysis cannot compute may read the field",
    "kwargs-forward": "the config travels through **kwargs, which the analysis cannot follow",
    "dunder-dict": "the config travels through an object's __dict__ (or vars()), which the analysis cannot follow",
    "unresolved-call": "a call on the path could not be resolved to its definition",
    "external-call": "a call on the path goes to code outside the source tree, which the analysis does not read",
    "untyped-read": "an attribute of that name is read on a value of unknown type, which may be the field",
    "virtual-call": "a call on the path is to an abstract method: the override that runs depends on the "
                    "run-time class",
    "raise": "a raise on the path may end it before the value is used",
    "runtime-branch": "a branch on the path depends on a value only known at run time",
    "runner-undecided": "the model runner could not be decided under the recipe; a confirmed or refuted "
                        "outcome was downgraded to plausible",
    "model-config-unknown": "the outcome depends on the model's config (config.json), which could not be "
                            "obtained or does not decide it",
    "not-traced": "the value's way from the recipe to where it is used is not one the analysis follows",
    "unresolved-type": "a class or type annotation the check needs could not be resolved in the source",
    "value-undecided": "whether the declaration admits the value depends on what the analysis cannot decide",
    "dynamic-registration": "the parser may register flags by code the analysis does not follow, so a flag "
                            "not found is not proven absent",
    "no-covering-test": "no test under tests/ exercises the combination",
    "ambiguous-symbol": "a symbol the rule names matches several definitions",
    "source-unavailable": "part of the source could not be read",
    "unparsable-source": "a module the check needs does not parse",
    "unreadable-source": "a module the check needs is listed but cannot be read",
    "analysis-unavailable": "the analysis core could not evaluate this check",
    "analysis-error": "the analysis failed on this check (a defect of srcreview, reported); the outcome is "
                      "left undecided",
    "undecided": "the check's outcome is undecided",
    "shell-value": "the value is the shell's to decide ($VAR, $(...), a <placeholder>): unknown until it runs",
    "parser-form": "what the revision's argument parser does with the recipe's words (a JSON value replaced by "
                   "dotted arguments, a false YAML value dropped): the words alone do not show it",
    "startup-open": "a raise on the start-up path reads the value under a condition the recipe does not decide "
                    "(the model's config, the GPU, a value the engine fills in): vLLM may refuse to start with it",
    "recipe-open": "part of the recipe srcreview cannot read as a setting (words the shell may split, a file "
                   "it cannot read): said as an open row, never a silent pass",
}
