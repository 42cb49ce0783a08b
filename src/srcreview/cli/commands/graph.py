"""`srcreview graph --rev REV --from SYMBOL [--to SYMBOL] [--recipe R]`: feasible call paths.

With `--tree DIR` instead of --rev, any Python tree is read as it is (no revision, no vLLM
identity check, anchors are the tree's own paths): `--format json` lists every edge the call
graph resolved and every call site it could not, so its precision and soundness can be
measured on public call-graph benchmarks.

Walks the call graph of the pinned source from SYMBOL (a qualified-name suffix such as
MTPSpeculator.load_draft_model, so the question survives files moving between releases),
with the recipe's settings bound: branches the recipe decides are followed on one side
only; the others on both sides, listed as assumptions. Each hop carries its anchor.
With --reads Class.field, the reads of that config field on the paths are listed too.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from srcreview.cli.commands._common import (
    add_model_config_arg,
    add_patch_args,
    add_source_args,
)
from srcreview.core.errors import EXIT_OK, DataError, UsageError


def add_parser(sub) -> None:
    p = sub.add_parser("graph", help="feasible call paths from a symbol, with the recipe's settings bound",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_source_args(p)
    add_model_config_arg(p)
    p.add_argument("--tree", metavar="DIR", help="any Python source tree, read without a revision (instead of --rev)")
    add_patch_args(p)
    p.add_argument("--from", dest="entry", required=True, metavar="SYMBOL",
                   help="entry function, by qualified-name suffix (MTPSpeculator.load_draft_model)")
    p.add_argument("--to", dest="sink", metavar="SYMBOL", help="sink function; only paths reaching it are shown")
    p.add_argument("--recipe", metavar="R", help="recipe TOML whose settings, env and hardware are bound")
    p.add_argument("--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                   help="bind one more value (speculative_config.method=mtp, env.VLLM_USE_V2_MODEL_RUNNER=1)")
    p.add_argument("--reads", metavar="CLASS.FIELD", help="also list reads of this config field on the paths")
    p.add_argument("--depth", type=int, default=None, metavar="N", help="call levels to explore (default 6 with --to, else 2)")
    p.add_argument("--format", default="text", choices=["text", "dot", "json"], help="output format (default: text)")
    p.set_defaults(run=run)


def parse_setting(text: str) -> tuple[str, object]:
    """KEY=VALUE with VALUE read as JSON when it is JSON (3, true, null, "x"), else as a string."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise UsageError(f"--set {text!r}: expected KEY=VALUE")
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):  # not JSON, too deep, or a number of too many digits
        parsed = value
    return key.strip(), parsed


def run(args) -> int:
    from srcreview.cli.commands._common import layers_from_args, tree_from_args
    from srcreview.index import Index
    from srcreview.index.cache import default_cache_dir
    from srcreview.interp import field_reads, render_trace, trace
    from srcreview.interp.domain import install
    from srcreview.vllm.domain import VLLM

    install(VLLM)
    if args.depth is not None and not 1 <= args.depth <= 20:
        raise UsageError("--depth: must be between 1 and 20")
    recipe = None
    if args.recipe:
        from srcreview.cli.commands._common import with_models
        from srcreview.cli.commands._gate_args import shown_path
        from srcreview.model.recipe import load_recipe

        recipe = with_models(load_recipe(args.recipe, display_path=shown_path(args.recipe)), args.recipe, args)
    settings = [parse_setting(text) for text in args.settings]
    if args.tree:
        if args.rev or args.source or getattr(args, "layers", None):
            raise UsageError("--tree reads a tree as it is: give it without --rev, --source, --patch or --overlay")
        tree, index = _any_tree(args.tree)
    elif not args.rev:
        raise UsageError("give --rev (a vLLM revision) or --tree (any Python source tree)")
    else:
        tree = tree_from_args(args, layers=layers_from_args(args, recipe, args.recipe))
        index = Index(tree, cache_dir=default_cache_dir())
    bindings: dict = {}
    if recipe is not None:
        from srcreview.vllm.flags import at_revision
        from srcreview.vllm.models import model_bindings

        bindings.update(at_revision(recipe, index).bindings)
        bindings.update(model_bindings(recipe))
    bindings.update(dict(settings))
    with _option("--to"):
        if args.sink and not index.find(args.sink, "function"):
            raise DataError(f"{args.sink}: no such function at {tree.revision.label()}")
    with _option("--from"):
        result = trace(index, args.entry, bindings, sink=args.sink, max_depth=args.depth)
    out = render_trace(result, args.format)
    if args.reads:
        with _option("--reads"):
            reads = field_reads(index, result, args.reads)
        out = _with_reads(out, reads, args.format)
    sys.stdout.write(out)
    return EXIT_OK


def _any_tree(directory: str):
    """A tree of any Python code and its index (every module of it, no revision)."""
    from pathlib import Path

    from srcreview.index import Index
    from srcreview.model.revision import Revision
    from srcreview.source.base import AnyPythonTree

    root = Path(directory)
    if not root.is_dir():
        raise UsageError(f"--tree {directory}: not a directory")
    tree = AnyPythonTree(root, Revision(requested="tree", sha="0" * 40))
    return tree, Index(tree, package="")


@contextlib.contextmanager
def _option(name: str):
    """A symbol the command line names that the source does not define (or defines several
    times) is a usage error (64), naming the option."""
    try:
        yield
    except DataError as exc:
        raise UsageError(f"{name} {exc.message}") from None


def _with_reads(out: str, reads, fmt: str) -> str:
    from srcreview.core.textsafe import printable
    from srcreview.interp.render import trace_to_dict

    if fmt == "json":
        data = json.loads(out)
        data["field_reads"] = trace_to_dict(reads)
        return json.dumps(data, indent=2, sort_keys=True) + "\n"
    if fmt == "dot":
        return out
    lines = [out.rstrip("\n"), "", f"reads of {reads.field}: {len(reads.reads)}"
             + ("" if reads.exists else " (no such field at this revision)")]
    for r in reads.reads:
        lines.append(f"  - {r.kind}: {r.text} in {r.function}")
        lines.append(f"    {r.anchor.url}")
    lines.append(f"dynamic access that may touch it: {len(reads.dynamic)}")
    for d in reads.dynamic:
        lines.append(f"  - {d.kind}: {d.text}")
        lines.append(f"    {d.anchor.url}")
    return printable("\n".join(lines)) + "\n"
