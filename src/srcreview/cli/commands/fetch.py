"""`srcreview fetch --rev REV`: obtain and verify the exact vLLM source of a revision.

Prints one line: what was obtained, from which provider, and the commit. Later commands
reuse the verified tree from the cache, offline.
"""

from __future__ import annotations

import argparse

from srcreview.cli.commands._common import add_source_args
from srcreview.core.errors import EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser("fetch", help="obtain and verify the vLLM source of a revision (cached)",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_source_args(p, rev_required=True)
    p.set_defaults(run=run)


def run(args) -> int:
    from srcreview.cli.commands._common import tree_from_args

    tree = tree_from_args(args, verify=True)
    files = len(tree.files())
    notes = "".join(f" ({note})" for note in tree.revision.notes())
    print(f"{tree.describe()}: commit {tree.revision.sha}, {files} files{notes}")
    return EXIT_OK
