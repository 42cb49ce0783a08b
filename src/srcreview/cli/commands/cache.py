"""`srcreview cache info|clean|pins`: what the cache holds, emptying it (all of it, or a part),
and what a CI cache of it should be keyed on.

The cache holds the verified vLLM source of each revision obtained (about 100 MB a release),
the parsed facts of modules (shared by every revision that has the same file), the reviews
`check` computed (returned again for the same recipe, source, rules and srcreview; at most
64 MB, the least recently used go first) and what runs leave behind. `info` lists each part with its size; `clean` removes everything, or only what
the options name. Its location: $SRCREVIEW_CACHE, else $XDG_CACHE_HOME/srcreview, else
~/.cache/srcreview. `pins RECIPE...` prints srcreview's version and each vLLM release the
recipes pin, one a line, sorted: what the source and facts a review of them needs depend on,
so a CI cache keyed on its hash is saved once per pin bump or srcreview upgrade, not once per
recipe edit.
"""  # noqa: E501 - the help text (argparse shows it as written)

from __future__ import annotations

import argparse
import json
import sys

FOREIGN_WHY = "no .srcreview-cache marker: another program's files, never removed"

EPILOG = """\
examples:
  srcreview cache info
  srcreview cache clean --rev 0.25.0        # the source of one release
  srcreview cache clean --reviews           # the stored reviews (check computes them again)
  srcreview cache clean --unused            # facts of older srcreview versions, leftovers of killed runs
  srcreview cache clean                     # everything
  srcreview cache pins recipes/ | sha256sum # a CI cache key (docs/ci.md)
"""


def add_parser(sub) -> None:
    p = sub.add_parser("cache", help="what the cache holds (info), and emptying it (clean)", description=__doc__,
                       epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("info", "clean", "pins"))
    p.add_argument("recipes", nargs="*", metavar="RECIPE", help="pins: recipe files or directories (as for check)")
    p.add_argument("--sources", action="store_true", help="clean: the source trees of every revision")
    p.add_argument("--rev", metavar="REV", help="clean: the source tree of this revision only (and the record of a "
                                                  "release found on the package index)")
    p.add_argument("--facts", action="store_true", help="clean: the parsed facts (rebuilt when next needed)")
    p.add_argument("--reviews", action="store_true",
                   help="clean: the stored reviews (check computes them again when next asked)")
    p.add_argument("--unused", action="store_true",
                   help="clean: facts of older srcreview versions and what interrupted runs left")
    p.add_argument("--dry-run", action="store_true", help="clean: say what would be removed, remove nothing")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output on stdout (default: text)")
    p.set_defaults(run=run)


def run(args) -> int:
    from srcreview.core.errors import UsageError
    from srcreview.source.cache import default_root
    from srcreview.store.admin import clean, human, select, usage

    if args.action == "pins":
        return _pins(args)
    if args.recipes:
        raise UsageError(f"cache {args.action} takes no RECIPE (pins does)")
    root, origin = default_root()
    found = usage(root)
    if args.action == "info":
        if args.sources or args.facts or args.reviews or args.unused or args.rev or args.dry_run:
            raise UsageError("cache info takes no --sources, --facts, --reviews, --unused, --rev or --dry-run "
                             "(they are for clean)")
        sys.stdout.write(_info_json(origin, found) if args.format == "json"
                         else _info_text(origin, found) + _stored_mode_text())
        return 0
    revision = None
    if args.rev:
        revision = _cached_revision(args.rev, root, origin)
    parts = select(found, sources=args.sources, facts=args.facts, unused=args.unused, revision=revision,
                   reviews=args.reviews)
    freed = sum(p.size for p in parts) if args.dry_run else clean(root, parts)
    verb = "would remove" if args.dry_run else "removed"
    foreign = [p.name for p in found.parts if p.kind == "foreign"]
    if args.format == "json":
        sys.stdout.write(json.dumps({"cache": origin, "dry_run": args.dry_run, "bytes": freed,
                                     "removed": [p.name for p in parts], "kept_foreign": foreign}, indent=2) + "\n")
    else:
        for part in parts:
            sys.stdout.write(f"{verb} {part.name} ({human(part.size)})\n")
        sys.stdout.write(f"cache {origin}: {verb} {_count(len(parts), 'part')}, {human(freed)}\n")
        if foreign:
            sys.stdout.write(f"kept {_count(len(foreign), 'part')} srcreview did not create ({FOREIGN_WHY}): "
                             + ", ".join(foreign[:10]) + (", ..." if len(foreign) > 10 else "") + "\n")
    return 0


def _pins(args) -> int:
    """`cache pins RECIPE...`: see the module doc; reads the recipes, fetches nothing."""
    from srcreview import __version__
    from srcreview.core.errors import UsageError
    from srcreview.model.recipe import load_recipes
    from srcreview.model.recipe.files import recipe_files

    if not args.recipes:
        raise UsageError("cache pins: give at least one RECIPE")
    if args.sources or args.facts or args.reviews or args.unused or args.rev or args.dry_run or args.format != "text":
        raise UsageError("cache pins takes only RECIPE arguments")
    pins = {(r.runtime.version or "-", r.runtime.revision or "-") for path, shown in recipe_files(args.recipes)
            for r in load_recipes(path, display_path=shown)}
    sys.stdout.write(f"srcreview {__version__}\n" + "".join(
        f"vllm {version} {revision}\n" if (version, revision) != ("-", "-") else "unpinned\n"
        for version, revision in sorted(pins)))
    return 0


def _cached_revision(rev: str, root, origin: str):
    """The Revision `--rev` names: from pins/, or for a release pins/ does not list, from the
    record its discovery left in the cache (never from the network: cleaning downloads nothing)."""
    from srcreview.core.errors import UsageError
    from srcreview.model.revision import resolve_rev
    from srcreview.source.cache import Cache
    from srcreview.source.registry import recorded_release

    def recorded(version: str):
        pin = recorded_release(Cache(root, origin), version)
        if pin is None:
            raise UsageError(f"--rev: release {version} is neither in pins/ nor recorded in the cache")
        return pin

    return resolve_rev(rev, discover=recorded)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _info_text(origin: str, found) -> str:
    from srcreview.store.admin import human

    lines = [f"cache {origin}: {human(found.total())}"]
    for kind, title in (("source", "sources"), ("facts", "facts"), ("reviews", "reviews"), ("unused", "unused"),
                        ("other", "other (another srcreview version's)"),
                        ("foreign", f"not srcreview's ({FOREIGN_WHY})")):
        parts = [p for p in found.parts if p.kind == kind]
        if kind in ("other", "foreign") and not parts:
            continue
        if kind == "foreign":  # never walked: it may be all of $HOME
            lines.append(f"  {title}: {_count(len(parts), 'part')}, not measured")
            lines += [f"    {p.name}" for p in parts]
            continue
        lines.append(f"  {title}: {_count(len(parts), 'part')}, {human(found.total(kind))}")
        width = max((len(p.name) for p in parts), default=0)
        lines += [f"    {p.name:<{width}}  {human(p.size):>9}  {_count(p.files, 'file')}" for p in parts]
    lines.append("srcreview cache clean empties it; --sources, --rev REV, --facts, --reviews or --unused clean a part")
    return "\n".join(lines) + "\n"


def _stored_mode() -> bool:
    from srcreview.store.reviews import cache_key

    return cache_key() is not None


def _stored_mode_text() -> str:
    """Whether stored reviews are served (`check` answers a review computed before), and why."""
    if _stored_mode():
        return ("stored reviews: on, served only when sealed under $SRCREVIEW_CACHE_KEY "
                "(an entry another key sealed, or none, is computed again)\n")
    return ("stored reviews: off ($SRCREVIEW_CACHE_KEY is unset: every check computes its review; set it to a "
            "secret, in CI from its secrets store, to reuse them)\n")


def _info_json(origin: str, found) -> str:
    return json.dumps({"cache": origin, "bytes": found.total(), "stored_reviews": "on" if _stored_mode() else "off",
                       "parts": [{"kind": p.kind, "name": p.name, "bytes": p.size, "files": p.files}
                                 for p in found.parts]}, indent=2) + "\n"
