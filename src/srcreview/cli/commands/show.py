"""`srcreview show --rev REV PATH[:START[-END]]`: source lines at a revision and their anchor URL.

Prints the lines with their numbers, then the GitHub URL that anchors them, so a claim about
vLLM can be checked (and cited) against the exact pinned source. With --patch/--overlay the
lines are those of the patched source; lines a patch added or changed are anchored in the
patch file (marked "patched").
"""

from __future__ import annotations

import argparse
import re

from srcreview.cli.commands._common import add_patch_args, add_source_args
from srcreview.core.errors import EXIT_OK, SourceUnavailable, UsageError

_SPEC = re.compile(r"^(?P<path>[^:]+?)(?::(?P<start>\d+)(?:-(?P<end>\d+))?)?$", re.ASCII)
MAX_LINE_DIGITS = 9  # longer is no line of any file (and past 4,300 digits, int() itself refuses)


def add_parser(sub) -> None:
    p = sub.add_parser("show", help="print source lines at a revision with their anchor URL",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("location", metavar="PATH[:START-END]",
                   help="tree-relative file, optionally with a line or line range")
    add_source_args(p, rev_required=True)
    add_patch_args(p)
    p.set_defaults(run=run)


def parse_location(spec: str) -> tuple[str, int | None, int | None]:
    """(path, start, end) from `path`, `path:N` or `path:N-M`; usage error otherwise."""
    from srcreview.source.base import clean_relpath

    match = _SPEC.match(spec)
    if not match:
        raise UsageError(f"{spec!r}: expected PATH, PATH:LINE or PATH:START-END")
    try:
        path = clean_relpath(match["path"])
    except SourceUnavailable as exc:
        raise UsageError(exc.message) from None
    for number in (match["start"], match["end"]):
        if number and len(number) > MAX_LINE_DIGITS:
            raise UsageError(f"{match['path'][:80]!r}: a line number of {len(number)} digits; "
                             f"no file has that many lines")
    start = int(match["start"]) if match["start"] else None
    end = int(match["end"]) if match["end"] else start
    if start is not None and end is not None and (start < 1 or end < start):
        raise UsageError(f"{spec!r}: line range must satisfy 1 <= START <= END")
    return path, start, end


def run(args) -> int:
    from srcreview.cli.commands._common import layers_from_args, tree_from_args
    from srcreview.core.textsafe import printable

    path, start, end = parse_location(args.location)
    tree = tree_from_args(args, layers=layers_from_args(args))
    if not tree.exists(path):
        raise UsageError(f"{path}: no such file at vLLM {tree.revision.label()}")
    lines = tree.read_text(path).splitlines()
    if start is not None and end is not None and end > len(lines):
        raise UsageError(f"{path}: has {len(lines)} lines; {start}-{end} is out of range")
    first, last = (start, end) if start is not None and end is not None else (1, len(lines))
    width = len(str(last))
    out = [f"{n:>{width}}  {lines[n - 1]}" for n in range(first, last + 1)]
    where = getattr(tree, "provenance", None)
    origin = where(path, first, last) if where is not None else None
    out.append(tree.url(path, start, end) + ("  (patched)" if origin is not None and origin.kind == "patched" else ""))
    print(printable("\n".join(out)))  # the source is shown, never obeyed by the terminal
    return EXIT_OK
