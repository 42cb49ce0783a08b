"""The library's front door: review recipes in a Workspace. The CLI, the benchmarks and the tests
call this; the CLI only builds the Workspace from its arguments and renders what comes back.

A Workspace says where each recipe's vLLM source comes from (the rev it is reviewed at, the
layers laid over it, how its tree is opened) and where parsed facts are cached. Reviewing many
recipes shares what they can: recipes pinned to the same revision with the same layers share the
tree and its index, and a forked worker parses ahead on the second core. Reviewing many recipes
at many revisions (`iter_reviews`) runs one revision's recipes in one process at a time, on as
many processes as jobs, and hands the cells back in a fixed order as they finish.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Workspace:
    """Where reviews come from (srcreview.cli.commands._common.workspace builds one from options)."""

    rev: Callable[[Any], str]  # recipe -> the rev it is reviewed at
    layers: Callable[[Any, Any], list]  # (recipe, its file or None) -> the patches and overlays over its tree
    open_tree: Callable[[str, Any, list], Any]  # (rev, recipe, layers) -> its SourceTree, layers applied
    cache_dir: Path | None = None  # the parsed-facts cache (None: none)


# (event, label): "fetch" (obtaining the source of a revision), "analyse" (a recipe at it), "done"
StepCallback = Callable[[str, str], None]


def review_recipes(workspace: Workspace, recipes: Sequence, rules, files: Sequence | None = None, *,
                   on_step: StepCallback | None = None) -> list[tuple]:
    """(review, source tree) of each recipe; recipes pinned to the same revision (with the same
    patches) share the tree and its index. `files`: the recipes' files, which their `[runtime]
    patches` are relative to; `on_step`: told when a tree is obtained, a recipe analysed, done."""
    return [(review, tree) for _, review, tree in _reviews(workspace, recipes, rules, files, on_step=on_step)]


def _reviews(workspace: Workspace, recipes: Sequence, rules, files: Sequence | None = None, *,
             parse_ahead: bool = True, keep_errors: bool = False,
             on_step: StepCallback | None = None) -> Iterator[tuple[int, Any, Any]]:
    """(position, review, tree) of each recipe, in order, as each is reviewed. With `keep_errors`,
    a recipe that cannot be reviewed gives (position, the SrcreviewError, None) and the others go
    on (a tree that could not be opened is one error for every recipe that needs it, asked once);
    otherwise the first error is raised, before any tree is opened when a recipe's layers are bad."""
    from srcreview.core.errors import SrcreviewError
    from srcreview.index import Index

    step = on_step or (lambda event, label: None)
    planned: list[Any] = []  # (tree key, layers) of each recipe, or the error that stopped it
    for n, recipe in enumerate(recipes):
        try:
            layers = workspace.layers(recipe, files[n] if files else None)
            planned.append(((workspace.rev(recipe), tuple(layer.sha256 for layer in layers)), layers))
        except SrcreviewError as exc:
            if not keep_errors:
                raise
            planned.append(exc)
    trees: dict[tuple, Any] = {}  # tree key -> (tree, index), or the error opening it
    cache_dir = workspace.cache_dir  # handed through: the facts cache root
    for n, (recipe, plan) in enumerate(zip(recipes, planned, strict=True)):
        if isinstance(plan, SrcreviewError):
            yield n, plan, None
            step("done", "")
            continue
        key, layers = plan
        label = key[0] + (" (patched)" if layers else "")
        try:
            if key not in trees:
                step("fetch", label)
                try:
                    tree = workspace.open_tree(key[0], recipe, layers)
                    trees[key] = (tree, Index(tree, cache_dir=cache_dir))
                except SrcreviewError as exc:
                    if not keep_errors:
                        raise
                    trees[key] = exc
            if isinstance(trees[key], SrcreviewError):
                yield n, trees[key], None
                continue
            tree, index = trees[key]
            step("analyse", f"{label}: {getattr(recipe, 'path', '')}")
            try:
                done = _review_one(recipe, tree, index, rules, parse_ahead=parse_ahead)
            except SrcreviewError as exc:
                if not keep_errors:
                    raise
                yield n, exc, None
                continue
            yield n, done, tree
        finally:
            step("done", label)
            # memory: no index after its tree's last recipe
            if key in trees and not any(not isinstance(p, SrcreviewError) and p[0] == key for p in planned[n + 1:]):
                del trees[key]


def _review_one(recipe, tree, index, rules, *, parse_ahead: bool):
    """One recipe's review over a shared index; its walks and raw text are dropped after it."""
    from srcreview.engine.patched import mark_patched
    from srcreview.engine.run import anchor_names, review
    from srcreview.index.prefetch import start
    from srcreview.vllm.flags import at_revision

    recipe = at_revision(recipe, index)  # command-line flags, as this revision defines them
    # the second core runs the same review with the rules in reverse order: it parses what
    # the review meets last while the review parses what it meets first
    ahead = start(index, anchor_names(recipe, rules),
                  partial(review, recipe, tree, rules=tuple(reversed(rules)), index=index)) if parse_ahead else None
    try:
        return mark_patched(review(recipe, tree, rules=rules, index=index), tree)
    finally:
        if ahead is not None:
            ahead.stop()
        # the bodies it converted, kept in the facts cache for the next process (recipe-independent)
        index.keep_converted()
        # memory: no recipe's walks and no raw text after its review (what was found in the text
        # is kept, and on disk: a later recipe reads the files again only for a new question)
        index.forget_analyses()
        index.forget_text()
        # its raw-text answers are known now: a next recipe here starts a worker only for anchors
        # not cached yet, and reads no tree for it
        index.reviewed_before = True


@dataclass(frozen=True)
class Cell:
    """One recipe at one revision of a matrix: its review, or the error that stopped it."""

    recipe: int  # position in the recipes given
    rev: int  # position in the revisions given
    review: Any = None  # srcreview.model.findings.Review
    error: tuple[int, str] | None = None  # (exit code, message) of the SrcreviewError


def iter_reviews(workspace: Workspace, recipes: Sequence, revs: Sequence[str], rules, *,
                 files: Sequence | None = None, jobs: int = 1,
                 on_step: StepCallback | None = None) -> Iterator[Cell]:
    """Every recipe at every rev (`workspace.rev` is not asked), as Cells in the order recipe by
    recipe, then the revs in the order given, each as soon as it and those before it are done.

    A rev listed twice is reviewed once. Each revision's recipes are reviewed in one process over
    one tree and index, freed once they are done; with `jobs` above one, that many forked
    processes (no parse-ahead worker of their own: the cores are taken) take (revision, share of
    its recipes) units from a queue, a revision's recipes dealt in turn over as many units as keep
    every process busy. Memory: each process holds one tree at a time; this one only the cells
    that finished before one ahead of them in the order."""
    import math

    distinct = list(dict.fromkeys(revs))
    shares = max(1, min(len(recipes), math.ceil(jobs / len(distinct)))) if jobs > 1 and distinct else 1
    units = [(u, list(range(len(recipes)))[share::shares]) for u in range(len(distinct)) for share in range(shares)]
    units = [(u, members) for u, members in units if members]
    positions = {u: [j for j, rev in enumerate(revs) if rev == distinct[u]] for u in range(len(distinct))}
    done: dict[tuple[int, int], Cell] = {}
    order = [(i, j) for i in range(len(recipes)) for j in range(len(revs))]
    at = 0
    if jobs <= 1 or len(units) <= 1:
        results = _units_here(workspace, recipes, distinct, rules, files, units, on_step, parse_ahead=True)
    else:
        results = _units_forked(workspace, recipes, distinct, rules, files, units, on_step, jobs)
    for i, u, review, error in results:
        for j in positions[u]:
            done[(i, j)] = Cell(recipe=i, rev=j, review=review, error=error)
        while at < len(order) and order[at] in done:
            yield done.pop(order[at])
            at += 1


def _unit_results(workspace, recipes, distinct, rules, files, unit, on_step, parse_ahead):
    """(recipe position, rev unit, review or None, (exit code, message) or None) of one unit."""
    u, members = unit
    at_rev = replace(workspace, rev=lambda recipe: distinct[u])
    chosen = [recipes[i] for i in members]
    chosen_files = [files[i] for i in members] if files else None
    for n, outcome, _tree in _reviews(at_rev, chosen, rules, chosen_files, parse_ahead=parse_ahead,
                                      keep_errors=True, on_step=on_step):
        if isinstance(outcome, Exception):
            yield members[n], u, None, (getattr(outcome, "exit_code", 2), str(outcome))
        else:
            yield members[n], u, outcome, None


def _units_here(workspace, recipes, distinct, rules, files, units, on_step, parse_ahead):
    for unit in units:
        yield from _unit_results(workspace, recipes, distinct, rules, files, unit, on_step, parse_ahead)


def _units_forked(workspace, recipes, distinct, rules, files, units, on_step, jobs):
    """The units' results from `jobs` forked processes, in the order they finish. A process that
    dies (killed, out of memory) or crashes stops the run with RuntimeError: no cell is made up."""
    import multiprocessing
    import queue

    context = multiprocessing.get_context("fork")  # the workspace's callables and the rules go by fork
    tasks = context.Queue()
    results = context.Queue()
    for unit in units:
        tasks.put(unit)
    count = min(jobs, len(units))
    for _ in range(count):
        tasks.put(None)
    processes = [context.Process(target=_worker, daemon=True,
                                 args=(workspace, recipes, distinct, rules, files, tasks, results))
                 for _ in range(count)]
    for process in processes:
        process.start()
    finished = 0
    try:
        while finished < count:
            try:
                message = results.get(timeout=1.0)
            except queue.Empty:
                dead = [p for p in processes if p.exitcode not in (None, 0)]
                if dead:
                    raise RuntimeError(f"a review process died (exit {dead[0].exitcode})") from None
                continue
            kind = message[0]
            if kind == "step":
                if on_step is not None:
                    on_step(*message[1:])
            elif kind == "cell":
                yield message[1:]
            elif kind == "crash":
                raise RuntimeError(f"a review process failed:\n{message[1]}")
            else:  # "exit"
                finished += 1
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
            process.join()


def _worker(workspace, recipes, distinct, rules, files, tasks, results) -> None:
    import traceback

    def step(event: str, label: str) -> None:
        results.put(("step", event, label))

    try:
        while (unit := tasks.get()) is not None:
            for result in _unit_results(workspace, recipes, distinct, rules, files, unit, step, parse_ahead=False):
                results.put(("cell", *result))
    except BaseException:  # noqa: BLE001 - reported to the parent, which stops the run
        results.put(("crash", traceback.format_exc()))
    else:
        results.put(("exit",))
    results.close()
    results.join_thread()
