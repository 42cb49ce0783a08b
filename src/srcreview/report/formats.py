"""The output formats of a gated run, one formatter each: a pure render of the reviews the gate
annotated (Semgrep's one formatter per format). `check` and the gate's `--sarif`/`--markdown`
files render through this table; a new format is a module in report/ and a row here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Run:
    """What a formatter reads: the gate's result (its reviews included) and the options of the run."""

    gate: Any  # srcreview.gate.policy.GateResult
    rules: Any = None  # the rules (or their stored summaries): SARIF's rule docs, the review's probes
    date: str | None = None  # --date / SOURCE_DATE_EPOCH: reproducible output
    observed_on: str = ""  # the date registry entries are observed on (the date, else today)
    verbose: bool = False
    color: bool = False
    width: int = 100

    @property
    def reviews(self) -> list:
        return list(self.gate.reviews)


def _text(run: Run) -> str:
    from srcreview.report import terminal

    return terminal.render(run.reviews, gate=run.gate, verbose=run.verbose, color=run.color, width=run.width)


def _concise(run: Run) -> str:
    from srcreview.report import concise

    return concise.render(run.reviews, gate=run.gate)


def _github(run: Run) -> str:
    from srcreview.report import github

    return github.render(run.reviews, gate=run.gate)


def _json(run: Run) -> str:
    return "".join(_json_chunks(run))


def _json_chunks(run: Run) -> Iterator[str]:
    from srcreview.report import json as report

    return report.chunks(run.reviews, gate=run.gate)


def _review(run: Run) -> str:
    from srcreview.report import review

    return review.render(run.reviews, rules=run.rules, date=run.date)


def _sarif(run: Run) -> str:
    from srcreview.report import sarif

    return sarif.render(run.reviews, gate=run.gate, date=run.date, rules=run.rules)


def _markdown(run: Run) -> str:
    from srcreview.report import markdown

    return markdown.render(run.reviews, gate=run.gate, date=run.date)


def _registry(run: Run) -> str:
    from srcreview.report import registry

    return registry.render(run.reviews, date=run.observed_on)


FORMATTERS: dict[str, Callable[[Run], str]] = {
    "text": _text, "concise": _concise, "github": _github, "json": _json, "review": _review, "sarif": _sarif,
    "markdown": _markdown, "registry": _registry,
}
# formats whose output holds workflow commands the formatter built, every untrusted character
# escaped and every other line ci_safe: the CLI writes them past its stdout guard (which would
# break the commands), and only them
WORKFLOW_COMMANDS = frozenset({"github"})
STREAMED: dict[str, Callable[[Run], Iterator[str]]] = {"json": _json_chunks}  # a campaign's JSON is megabytes


def render(fmt: str, run: Run) -> str:
    """The whole output of format `fmt`."""
    return FORMATTERS[fmt](run)


def chunks(fmt: str, run: Run) -> Iterator[str]:
    """The output of format `fmt` a piece at a time (one piece where the format is not streamed)."""
    if fmt in STREAMED:
        return STREAMED[fmt](run)
    return iter((render(fmt, run),))
