"""`pathlib.Path` and `os.path` over the directories whose contents the review knows.

A recipe that names its model as a local directory lets srcreview read that directory's
listing (srcreview.hfconfig.local); code that asks the filesystem about it (`Path(model) /
"config.json"`, `.is_file()`, `.rglob("*")`, `os.path.exists(model)`) is then answered from
that listing instead of staying open. A path outside every listed directory, or below a
directory the listing did not descend into (a symlink to one), stays Unknown.

This rests on what srcreview reads the recipe's paths against: the recipe's directory
(srcreview.hfconfig.ref), which must be where the server runs them from.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath

from srcreview.interp.values import Const, LocalPath, OneOf, TupleVal

KNOWN_DIRECTORIES = "@directories"  # the bindings key holding KnownDirectories (no dot: never a config path)

FILE, DIR, OTHER, OPAQUE = "file", "dir", "other", "opaque"  # OPAQUE: a directory not descended into
PATH_CLASSES = frozenset({"pathlib.Path", "pathlib.PosixPath", "pathlib.PurePath", "pathlib.PurePosixPath"})
OS_PATH_TESTS = {"os.path.exists": "exists", "os.path.isfile": "is_file", "os.path.isdir": "is_dir"}
MAX_GLOB = 512  # a listing walked item by item (`[f for f in p.rglob("*") if f.is_file()]`) at most this long


@dataclass(frozen=True)
class KnownTree:
    """One directory as the review listed it: `entries` are (path inside it, kind), sorted."""

    spelling: str
    entries: tuple[tuple[str, str], ...]

    @cached_property
    def table(self) -> dict[str, str]:
        return dict(self.entries)

    def kind(self, rel: str) -> str | None:
        """FILE / DIR / OTHER / OPAQUE for an entry, None when it is not there, "?" below an
        OPAQUE directory (not known)."""
        if rel == "":
            return DIR
        table = self.table
        if rel in table:
            return table[rel]
        parts = rel.split("/")
        for i in range(1, len(parts)):
            if table.get("/".join(parts[:i])) == OPAQUE:
                return "?"
        return None


@dataclass(frozen=True)
class KnownDirectories:
    trees: tuple[KnownTree, ...] = ()

    def __repr__(self) -> str:  # part of the analysis cache key: the digest of every listing
        digest = hashlib.sha256(json.dumps([[t.spelling, t.entries] for t in self.trees]).encode()).hexdigest()
        return f"<known directories {', '.join(t.spelling for t in self.trees)} ({digest[:16]})>"

    def path(self, text: str) -> LocalPath | None:
        """`Path(text)` when `text` names a listed directory or a path inside one."""
        if not text or text.startswith("~"):  # pathlib does not expand `~`; srcreview's reading did
            return None
        parts = _parts(text)
        if parts is None:
            return None
        for tree in self.trees:
            root = _parts(tree.spelling)
            if root is not None and parts[:len(root)] == root and PurePosixPath(text).is_absolute() == \
                    PurePosixPath(tree.spelling).is_absolute():
                return LocalPath(tree.spelling, "/".join(parts[len(root):]), tree)
        return None


def _parts(text: str) -> tuple[str, ...] | None:
    """The parts of a path as pathlib keeps them (`.` and empty ones dropped); None with `..`
    (which would need the filesystem to resolve)."""
    parts = tuple(p for p in PurePosixPath(text).parts if p != "/")
    return None if ".." in parts else parts


def join(path: LocalPath, other) -> LocalPath | None:
    """`path / "name"`: a relative constant path below it; `path / name` with a name that is
    one of several constants (a loop over a table of names), one of those paths."""
    if path.tree is None or not isinstance(path.rel, str):
        return None
    if isinstance(other, OneOf) and other.values:
        joined = [join(path, Const(value)) for value in other.values]
        rels = {p.rel for p in joined if p is not None and isinstance(p.rel, str)}
        return LocalPath(path.spelling, tuple(sorted(rels)), path.tree) if len(rels) == len(set(other.values)) \
            else None
    if not (isinstance(other, Const) and isinstance(other.value, str)):
        return None
    extra = _parts(other.value) if not PurePosixPath(other.value).is_absolute() else None
    if extra is None:
        return None
    return LocalPath(path.spelling, "/".join(p for p in (path.rel, *extra) if p), path.tree)


def text(path: LocalPath) -> str | None:
    """`str(path)`, as pathlib spells it (None for one of several paths)."""
    if not isinstance(path.rel, str):
        return None
    return str(PurePosixPath(path.spelling, path.rel) if path.rel else PurePosixPath(path.spelling))


def test(path: LocalPath, name: str) -> Const | None:
    """`exists()`, `is_file()`, `is_dir()` of a path in a listed directory (of each of several
    paths: decided when they agree)."""
    if path.tree is None:
        return None
    answers = set()
    for rel in (path.rel,) if isinstance(path.rel, str) else path.rel:
        kind = path.tree.kind(rel)
        if kind == "?":
            return None
        answers.add(kind is not None if name == "exists" else kind == FILE if name == "is_file" else
                    kind in (DIR, OPAQUE))
    return Const(answers.pop()) if len(answers) == 1 else None


def method(path: LocalPath, name: str, args: list, kwargs: list):
    """A method of a path, called with forced arguments; None when not decided here."""
    if kwargs:
        return None
    if name in ("exists", "is_file", "is_dir") and not args:
        return test(path, name)
    if name == "is_absolute" and not args:
        return Const(PurePosixPath(path.spelling).is_absolute())
    if name == "rglob" and args == [Const("*")]:
        return _everything_below(path)
    if name == "relative_to" and len(args) == 1 and isinstance(args[0], LocalPath):
        return _relative(path, args[0])
    return None


def _relative(path: LocalPath, base: LocalPath) -> LocalPath | None:
    """`path.relative_to(base)` for two paths of one listed directory, base above path: a
    relative path that names no known place (only its text is known)."""
    if path.tree is None or base.tree is not path.tree or not isinstance(path.rel, str) \
            or not isinstance(base.rel, str):
        return None
    if not (base.rel == "" or path.rel == base.rel or path.rel.startswith(base.rel + "/")):
        return None
    return LocalPath(path.rel[len(base.rel):].lstrip("/") or ".", "", None)


def attribute(path: LocalPath, name: str):
    """`path.name`; None for anything else (methods are called through `method`)."""
    shown = text(path)
    if name == "name" and shown is not None:
        return Const(PurePosixPath(shown).name)
    return None


def _everything_below(path: LocalPath) -> TupleVal | None:
    """`path.rglob("*")`: every entry below a listed directory (sorted: the filesystem's own
    order is arbitrary, so only what does not depend on the order is decided by it); None when
    the listing has a directory it did not descend into, or is long."""
    tree = path.tree
    if tree is None or not isinstance(path.rel, str) or test(path, "is_dir") != Const(True):
        return None
    if any(kind == OPAQUE for _, kind in tree.entries):
        return None
    prefix = f"{path.rel}/" if path.rel else ""
    below = [rel for rel, _ in tree.entries if rel.startswith(prefix)]
    if len(below) > MAX_GLOB:
        return None
    return TupleVal(tuple(LocalPath(tree.spelling, rel, tree) for rel in below))
