"""What the cache holds and how to empty it (`srcreview cache info|clean`).

The cache (see srcreview.source.cache) holds verified source trees by provider and revision
(`<root>/<kind>/<key>/`, about 100 MB a release) with the records of releases found on the
package index (`<root>/releases/vllm-<version>.json`: their commit and sdist sha256, counted
with the sources), the parsed facts of modules by content (`<root>/facts/v<schema>/`; older
schema directories are never read again) with the stat indexes of `--source` directories
(`<root>/statindex/v<schema>/`, srcreview.source.statindex, counted with the facts), the stored
reviews (`<root>/reviews/v<schema>/`, srcreview.store.reviews) and what runs leave behind
(`.tmp/`, `.locks/`). What this version does not know (a newer facts or reviews schema, files
another srcreview version keeps) is `other`: kept unless the whole cache is cleaned.
Only what srcreview wrote may be removed: a part counts only when it lies in a directory
srcreview created and marked (srcreview.core.cachedir), the root or its top-level directory;
anything else (`SRCREVIEW_CACHE=~/.cache` holds other programs' files) is `foreign`: listed,
never measured (it may be all of `$HOME`), never removed.
`usage` measures each part; `clean` removes the parts asked for, each source entry under its
lock so that no run is building it meanwhile.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from srcreview.core.cachedir import MARKER, is_marked
from srcreview.core.errors import UsageError
from srcreview.source.cache import MANIFEST

LEFTOVERS = (".tmp", ".locks")


@dataclass(frozen=True)
class Part:
    """One thing in the cache: a source entry, a facts or reviews schema directory, or leftovers."""

    kind: str  # "source", "facts", "reviews", "unused", "other", "foreign" (not srcreview's: never removed)
    name: str  # e.g. "registry/0.29.0-98dff2a81", "facts/v6", "reviews/v1", ".tmp"
    size: int
    files: int
    path: Path = field(repr=False, compare=False)


@dataclass(frozen=True)
class Usage:
    parts: tuple[Part, ...]

    def total(self, kind: str | None = None) -> int:
        return sum(p.size for p in self.parts if kind is None or p.kind == kind)


def usage(root: Path) -> Usage:
    """Every part of the cache at `root` with its size (nothing is read but directory entries).

    The root is srcreview's only if srcreview created (marked) it, wherever it is: the default
    location's name proves nothing (`XDG_CACHE_HOME=~` makes `~/srcreview`, a directory the user
    may own, the default)."""
    from srcreview.index.cache import facts_dir
    from srcreview.index.facts import SCHEMA_VERSION
    from srcreview.source import statindex
    from srcreview.source.registry import RELEASES
    from srcreview.store.reviews import SCHEMA as REVIEWS_SCHEMA
    from srcreview.store.reviews import reviews_dir

    # each kind decides where its schema directories live: <root>/facts/v<schema>, <root>/reviews/v<schema>;
    # the stat indexes of --source directories are facts too (what was read of files, rebuilt when missing)
    schemas = {facts_dir(root).parent: ("facts", SCHEMA_VERSION), reviews_dir(root).parent: ("reviews", REVIEWS_SCHEMA),
               statindex.index_dir(root).parent: ("facts", statindex.SCHEMA)}
    parts: list[Part] = []
    # a link at the root (to $HOME, to a disk of caches) is srcreview's only if what it points at is marked
    root_owned = is_marked(Path(os.path.realpath(root)))
    for top in _children(root):
        if top.name in LEFTOVERS or not top.is_dir() or top.is_symlink():
            found = [("unused" if top.name in LEFTOVERS else "other", top.name, top)]
        elif top in schemas:
            kind, current = schemas[top]
            found = [(_schema_kind(s.name, kind, current), f"{top.name}/{s.name}", s) for s in _children(top)]
        elif top.name == RELEASES:
            found = [("source" if r.suffix == ".json" else "other", f"{top.name}/{r.name}", r) for r in _children(top)]
        else:
            found = [("source" if (e / MANIFEST).is_file() else "other", f"{top.name}/{e.name}", e)
                     for e in _children(top)]
        if root_owned or is_marked(top):
            parts += [_part(*item) for item in found]
        elif top.is_dir() and not top.is_symlink() and any(is_marked(path) for _, _, path in found):
            # a directory srcreview did not create, holding some it did (SRCREVIEW_CACHE=~/.cache, facts/v6)
            parts += [_part(*item) if is_marked(item[2]) else Part("foreign", item[1], 0, 0, item[2]) for item in found]
        else:
            parts.append(Part("foreign", top.name, 0, 0, top))
    return Usage(tuple(parts))


def _schema_kind(name: str, kind: str, current: int) -> str:
    """The current schema's `kind` (facts, reviews); an older schema's are unused; a newer one is
    another version's."""
    number = name[1:] if name.startswith("v") else ""
    if not number.isdigit():
        return "other"
    return kind if int(number) == current else "unused" if int(number) < current else "other"


def select(found: Usage, *, sources: bool, facts: bool, unused: bool, revision=None,
           reviews: bool = False) -> list[Part]:
    """The parts a `clean` with these options removes (all of them when none is given)."""
    everything = not (sources or facts or unused or reviews or revision is not None)
    chosen = []
    for part in found.parts:
        if part.kind == "foreign":
            continue
        if part.kind == "source" and revision is not None:
            if _entry_of(part, revision):
                chosen.append(part)
        elif everything or (part.kind == "source" and sources) or (part.kind == "facts" and facts) \
                or (part.kind == "reviews" and reviews) or (part.kind == "unused" and unused):
            chosen.append(part)
    return chosen


def clean(root: Path, parts: list[Part]) -> int:
    """Remove `parts` (source entries under their lock); the bytes freed."""
    from srcreview.source.cache import Cache

    cache = Cache(root)
    freed = 0
    for part in parts:
        if part.kind == "foreign":
            raise UsageError(f"{part.name} is not marked as srcreview's: never removed")
        if part.kind == "source" and part.path.is_dir():  # an entry, not an index release record
            kind, key = part.name.split("/", 1)
            try:
                with cache.lock(kind, key):
                    _remove(part.path)
            except (ValueError, OSError):  # not a key srcreview writes, or no lock to take: remove it all the same
                _remove(part.path)
        else:
            _remove(part.path)
        freed += part.size
    return freed


def _entry_of(part: Part, revision) -> bool:
    """Whether the source entry holds `revision`: its manifest (or an index release record)
    names the release or the commit (a full id, or the 9-digit prefix an sdist records)."""
    import json

    from srcreview.source.cache import read_manifest

    if part.path.is_file():  # releases/vllm-<version>.json
        try:
            record = json.loads(part.path.read_bytes()[: 1 << 16])
        except (OSError, ValueError, RecursionError):
            record = None
        meta = {"version": record.get("version"), "sha": record.get("revision")} if isinstance(record, dict) else {}
    else:
        data = read_manifest(part.path) or {}
        meta = data.get("meta")
        meta = meta if isinstance(meta, dict) else {}
    if revision.version is not None and meta.get("version") == revision.version:
        return True
    wanted = revision.sha.lower()
    for known in (meta.get("sha"), meta.get("commit_id")):
        if isinstance(known, str) and len(known) >= 7 and (known.lower().startswith(wanted)
                                                          or wanted.startswith(known.lower())):
            return True
    return False


def _children(folder: Path) -> list[Path]:
    """The entries of `folder` but srcreview's marker (cleaning a part never unmarks its folder)."""
    try:
        return sorted(p for p in folder.iterdir() if p.name != MARKER)
    except OSError:
        return []


def _part(kind: str, name: str, path: Path) -> Part:
    size = files = 0
    for dirpath, dirnames, filenames in os.walk(path):
        for item in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            try:
                size += os.lstat(os.path.join(dirpath, item)).st_size
                files += 1
            except OSError:
                pass
    if path.is_file():
        size, files = path.lstat().st_size, 1
    return Part(kind, name, size, files, path)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass
    if path.exists():
        raise UsageError(f"cannot remove {path.name} from the cache (check its permissions)")


def human(size: int) -> str:
    """`123.4 MB`: sizes in decimal units, as downloads are shown."""
    for unit in ("B", "kB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{size:.1f} GB"  # pragma: no cover
