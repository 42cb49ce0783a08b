"""`srcreview pins [list|update]`: the known vLLM releases, and adding those the package index has.

`update` asks the package index of pip's configuration for releases newer than the newest
pin (or `--since VERSION`), downloads each sdist once (verified against the index's sha256,
kept in the cache for later reviews), takes its commit from `vllm/_version.py`, and writes
the pins file (`$SRCREVIEW_PINS`, else the one srcreview ships). Full commits come from the
release tags of `--git-url` (default: `$SRCREVIEW_GIT_URL`, else the anchor repository) when
it is reachable; `--no-git` keeps the sdist's 9 digits.
"""

from __future__ import annotations

import argparse
import sys

from srcreview.core.errors import EXIT_OK


def add_parser(sub) -> None:
    p = sub.add_parser("pins", help="list the known vLLM releases, or add those the package index has",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", nargs="?", choices=("list", "update"), default="list")
    p.add_argument("--since", metavar="VERSION", help="update: consider releases from VERSION on "
                                                      "(default: newer than the newest pin)")
    p.add_argument("--git-url", metavar="URL", help="update: repository whose release tags give full commits")
    p.add_argument("--no-git", action="store_true", help="update: do not ask a git remote for full commits")
    p.set_defaults(run=run)


def run(args) -> int:
    from srcreview.core.errors import UsageError
    from srcreview.model.revision import VERSION, load_pins, pins_path

    path = pins_path()
    if args.action == "list":
        for pin in load_pins(path):
            print(f"{pin.version}  {pin.revision}" + (f"  sdist sha256 {pin.sdist_sha256}" if pin.sdist_sha256 else ""))
        return EXIT_OK
    if args.since and not VERSION.fullmatch(args.since):
        raise UsageError(f"--since: {args.since[:40]!r} is not a release version (e.g. 0.31.0)")
    from srcreview.cli.progress import progress_reporter
    from srcreview.source.cache import Cache
    from srcreview.source.gitrepo import remote_url
    from srcreview.source.pins_update import update_pins

    git_url = None if args.no_git else (args.git_url or remote_url())
    with progress_reporter(sys.stderr.isatty()) as report:
        changes, notes = update_pins(path, Cache(), since=args.since, git_url=git_url, progress=report)
    for note in notes:
        print(f"srcreview: note: {note}", file=sys.stderr)
    for change in changes:
        source = f" (full commit from the release tag {change.full_from})" if change.full_from else ""
        print(f"{change.what} {change.version} {change.revision}{source}")
    if not changes:
        print(f"{path.name}: up to date with the package index")
    return EXIT_OK
