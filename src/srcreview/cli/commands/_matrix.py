"""`srcreview check RECIPE|DIR... --rev A --rev B [-j N]`: every recipe at every revision.

The cells come from `srcreview.api.iter_reviews` (one revision's tree and index at a time per
process, N processes) and are printed as JSON Lines as they finish, in a fixed order (recipes
sorted by path, then the revisions as given): one object per cell,

    {"recipe": PATH, "rev": REV, "exit_code": CODE, "report": <what `check PATH --rev REV
     --format json` prints>}

(`"report": null` and `"error": MESSAGE` for a cell that could not be reviewed, whose exit code
is the error's), then `{"matrix": {...}}`: the cells, how many ended with each exit code and the
worst, which is the process's exit code (srcreview.gate.policy.EXIT_RANK). Only JSON streams:
any other format, and report files (--sarif, --markdown, --json, --registry, --startup-log), are
usage errors. The run's peak memory is said on stderr.
"""

from __future__ import annotations

import sys

from srcreview.core.errors import UsageError

FILE_OUTPUTS = (("sarif", "--sarif"), ("markdown", "--markdown"), ("json_file", "--json"),
                ("registry", "--registry"), ("startup_log", "--startup-log"))


def refuse_unstreamable(args) -> None:
    """Usage errors of a matrix run, before anything is read: a format other than json, a report file."""
    if args.format not in (None, "json"):
        raise UsageError(f"check: with several --rev the output is JSON Lines, one line per recipe and revision; "
                         f"--format {args.format} cannot stream: use --format json (or one --rev)")
    for attribute, option in FILE_OUTPUTS:
        if getattr(args, attribute, None):
            raise UsageError(f"check: {option} writes one report of one revision; with several --rev use "
                             "--format json (JSON Lines, one line per recipe and revision) and split it")
    args.format = "json"


def default_jobs() -> int:
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def run_matrix(args, revs: list[str], loaded: list, rules) -> int:
    """Review `loaded` ((recipe, file) pairs) at every rev of `revs`; print the cells; the worst exit code."""
    import time

    from srcreview import api
    from srcreview.cli.commands._common import check_revs, workspace
    from srcreview.cli.commands._multirev import progress_display
    from srcreview.gate.policy import worst_exit
    from srcreview.rules.loader import Rule

    check_revs(revs)  # every usage error before any source is fetched
    if not all(isinstance(r, Rule) for r in rules):  # the engine needs the rules themselves
        from srcreview.cli.commands._multirev import load_rules_arg

        rules = load_rules_arg(args)
    ordered = sorted(loaded, key=lambda pair: pair[0].path)
    recipes, files = [r for r, _ in ordered], [path for _, path in ordered]
    jobs = args.jobs or default_jobs()
    start = time.perf_counter()
    counts: dict[int, int] = {}
    write = sys.stdout.write
    with progress_display(total=len(recipes) * len(set(revs)), unit="reviews") as (step, _download):
        cells = api.iter_reviews(workspace(args, progress=False), recipes, revs, rules, files=files, jobs=jobs,
                                 on_step=step)
        for cell in cells:
            line, code = _line(args, cell, recipes[cell.recipe], files[cell.recipe], revs[cell.rev], rules)
            counts[code] = counts.get(code, 0) + 1
            write(line)
            sys.stdout.flush()  # a reader sees each cell as it is done
    worst = worst_exit(counts)
    write(_dumps({"matrix": {"recipes": len(recipes), "revs": revs, "cells": sum(counts.values()),
                             "exit_codes": {str(code): counts[code] for code in sorted(counts)},
                             "worst_exit": worst}}))
    processes = min(jobs, len(recipes) * len(set(revs)))  # iter_reviews starts no more than it has units
    _say_peak(len(recipes), len(revs), processes, time.perf_counter() - start)
    return worst


def _line(args, cell, recipe, recipe_file, rev: str, rules) -> tuple[str, int]:
    """The JSON line of one cell and its exit code: the gate of its one review, as `check` runs it."""
    import json

    from srcreview.cli.commands._gate_args import render_gate_format, run_gate

    head = {"recipe": recipe.path, "rev": rev}
    if cell.error is not None:
        code, message = cell.error
        return _dumps({**head, "exit_code": code, "report": None, "error": message}), code
    gate = run_gate(args, [cell.review], rules=rules, recipe_files=[(recipe_file, recipe.path)],
                    project_waivers=getattr(args, "project_waivers", None))
    report = json.loads(render_gate_format("json", gate))  # what --format json and --json FILE write
    code = gate.result.exit_code
    return _dumps({**head, "exit_code": code, "report": report}), code


def _dumps(data) -> str:
    from srcreview.core.textsafe import dumps

    return dumps(data) + "\n"


def _say_peak(recipes: int, revs: int, jobs: int, seconds: float) -> None:
    """The run's peak resident memory on stderr: this process's and the largest review process's."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"srcreview: {recipes} recipes x {revs} revisions with {jobs} process{'es' if jobs > 1 else ''} in "
          f"{seconds:.1f} s; peak RSS {own:.0f} MiB here, {children:.0f} MiB in the largest child process",
          file=sys.stderr)
