"""The gate's command-line options and glue, shared by `check` (and any command that gates).

Wiring in a command (two lines, plus rendering):

    add_gate_args(parser)                              # in add_parser
    run = run_gate(args, reviews, rules=rule_objects)  # in run(): evaluates, writes --sarif/--markdown
    if args.format in GATE_FORMATS: print(render_gate_format(args.format, run), end="")
    return run.result.exit_code
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from srcreview.core.errors import DataError, UsageError
from srcreview.core.userfile import shown_path  # noqa: F401 - the commands' import of it

if TYPE_CHECKING:
    from srcreview.gate.policy import GateResult

GATE_FORMATS = ("sarif", "markdown", "json")
# srcreview.gate.policy.DEFAULT_FAIL_ON, spelled out so that building the parser does not import the
# gate (and the review records with it); argparse converts it with `_fail_on` only when a command runs.
DEFAULT_FAIL_ON_TEXT = "confirmed:high"

FAIL_ON_HELP = ("fail the gate on findings at or above CLASSIFICATION[:SEVERITY] (comma-separated terms): "
                "confirmed (problems) | plausible (problems and open questions) | any (the same: facts never "
                "fail), and high | medium | low | info; or none (default: confirmed:high)")


def _fail_on(text: str):
    from srcreview.gate.policy import parse_fail_on

    try:
        return parse_fail_on(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(exc.message.removeprefix("--fail-on: ")) from None


def _date(text: str) -> str:
    from srcreview.core.dates import parse_date

    try:
        return parse_date(text).isoformat()
    except UsageError as exc:
        raise argparse.ArgumentTypeError(exc.message.removeprefix("--date: ")) from None


class Given(argparse.Action):
    """`store`, also noting the option in `namespace.given`: a default the project's file sets
    (srcreview.core.project) yields to a flag the command line gives, even one equal to the default."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        namespace.given = (*getattr(namespace, "given", ()), self.dest)


def add_gate_args(parser: argparse.ArgumentParser) -> None:
    """--fail-on, --baseline, --date, --sarif FILE, --markdown FILE, --json FILE and --allow-stale."""
    group = parser.add_argument_group("gate (CI)")
    group.add_argument("--fail-on", type=_fail_on, default=DEFAULT_FAIL_ON_TEXT, metavar="POLICY", action=Given,
                       help=FAIL_ON_HELP)
    group.add_argument("--baseline", metavar="JSON",
                       help="a previous --format json output: fail only on findings that are new or got worse")
    group.add_argument("--date", type=_date, metavar="YYYY-MM-DD",
                       help="review date printed in reports and used for waiver expiry "
                            "(default: SOURCE_DATE_EPOCH, else no date in the output)")
    group.add_argument("--sarif", metavar="FILE", help="also write SARIF 2.1.0 to FILE")
    group.add_argument("--markdown", metavar="FILE",
                       help="also write the Markdown summary to FILE (e.g. \"$GITHUB_STEP_SUMMARY\")")
    group.add_argument("--json", metavar="FILE", dest="json_file",
                       help="also write the JSON report to FILE (a later run's --baseline), whatever --format is")
    group.add_argument("--allow-stale", action="store_true",
                       help="accept rules that are stale at the revision (their anchors are gone, so they "
                            "decided nothing) instead of failing the gate on them")


@dataclass(frozen=True)
class GateRun:
    """A gate decision with what rendering needs."""

    result: GateResult
    date: str | None
    rules: Any = None

    @property
    def reviews(self):
        return self.result.reviews


def run_gate(args, reviews, *, rules=None, known_rules=None, recipe_files=None, project_waivers=None) -> GateRun:
    """Evaluate the gate for parsed `args` and write the --sarif / --markdown / --json files.

    `rules`: rule objects or dicts (id, claim, doc, severity) for SARIF's rule docs;
    `known_rules`: rule ids a waiver may name (default: the ids of `rules`, else of rules/);
    `recipe_files`: (file on disk, shown path) of each review, whose waivers apply (default:
    matched from the paths in `args.recipes`); `project_waivers`: (file, shown) of the waiver
    file the project's defaults name, applying to every review.
    """
    from srcreview.core.dates import review_date, today
    from srcreview.gate.baseline import load_baseline
    from srcreview.gate.policy import DEFAULT_FAIL_ON, evaluate, parse_fail_on
    from srcreview.gate.waivers import load_waivers

    date = review_date(getattr(args, "date", None))
    policy = getattr(args, "fail_on", None) or parse_fail_on(DEFAULT_FAIL_ON)
    if isinstance(policy, str):
        policy = parse_fail_on(policy)
    baseline = load_baseline(args.baseline, shown_path(args.baseline)) if getattr(args, "baseline", None) else None
    waivers = load_waivers(recipe_files if recipe_files is not None
                           else _recipe_files(getattr(args, "recipes", ()), reviews), project=project_waivers)
    if rules is None:
        rules = _shipped_rules()
    if known_rules is None and any(w.rule for w in waivers):
        known_rules = _rule_ids(rules) if rules is not None else shipped_rule_ids()
    result = evaluate(reviews, policy, baseline=baseline, waivers=waivers, known_rules=known_rules,
                      today=today(date), allow_stale=bool(getattr(args, "allow_stale", False)))
    run = GateRun(result=result, date=date, rules=rules)
    for attribute, fmt in (("sarif", "sarif"), ("markdown", "markdown"), ("json_file", "json")):
        target = getattr(args, attribute, None)
        if target:
            _write(target, render_gate_format(fmt, run), fmt)
    return run


def render_gate_format(fmt: str, run: GateRun) -> str:
    """Render `sarif`, `markdown` or `json` for a gate run."""
    from srcreview.report.formats import Run, render

    if fmt not in GATE_FORMATS:
        raise UsageError(f"--format: {fmt!r} is not a gate format ({', '.join(GATE_FORMATS)})")
    return render(fmt, Run(gate=run.result, rules=run.rules, date=run.date))


def shipped_rule_ids() -> set[str] | None:
    """Ids of the rule files in rules/ (None if there are none: unknown-rule checks are then skipped)."""
    from srcreview.core.resources import data_dir

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        root = data_dir("rules")
    except FileNotFoundError:
        return None
    ids = set()
    for path in sorted(root.rglob("*.toml")):
        try:
            rule_id = tomllib.loads(path.read_text(encoding="utf-8")).get("id")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            raise DataError(f"rules/{path.relative_to(root).as_posix()}: cannot read rule file") from None
        if isinstance(rule_id, str):
            ids.add(rule_id)
    return ids or None


def _shipped_rules():
    """The validated rule set, for SARIF rule docs and waiver checks (None before rules exist)."""
    try:
        from srcreview.rules.loader import load_rules
    except ImportError:
        return None
    return load_rules() or None


def _rule_ids(rules) -> set[str]:
    from srcreview.report.sarif import rule_docs

    return set(rule_docs(rules))


def _recipe_files(given, reviews) -> list[tuple[Path, str]]:
    """(file on disk, shown path) for each review, matching the paths given on the command line."""
    given = [str(p) for p in given]
    pairs = []
    for position, review in enumerate(reviews):
        shown = review.recipe.file or review.recipe.path  # compose services: their file
        match = next((p for p in given if p == shown), None)
        if match is None:
            target = Path(shown).resolve()
            match = next((p for p in given if Path(p).resolve() == target), None)
        if match is None:  # shown as its bare name (outside the working directory): same order as given
            match = given[position] if len(given) == len(reviews) else shown
        pairs.append((Path(match), review.recipe.path))
    return pairs


def _write(target: str, text: str, option: str) -> None:
    """Write a side output. Opened without blocking first: a FIFO nobody reads (`--sarif fifo`)
    is refused at once (ENXIO) instead of hanging the run; a pipe with a reader (`--sarif >(cat)`),
    /dev/null and regular files are written as usual."""
    import errno
    import os

    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise write_error(f"--{option}: cannot write {target}", OSError(exc.errno, "a FIFO no process "
                                                                                    "reads")) from None
        raise write_error(f"--{option}: cannot write {target}", exc) from None
    try:
        os.set_blocking(fd, True)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise write_error(f"--{option}: cannot write {target}", exc) from None


def write_error(what: str, exc: OSError):
    """The error for a report file that could not be written: a bad path is a usage error (64);
    a full disk or an I/O error leaves the run incomplete (2)."""
    import errno

    from srcreview.core.errors import OutputError

    message = f"{what}: {exc.strerror or exc}"
    if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO):
        return OutputError(message)
    return UsageError(message)
