"""The engine that runs: an upstream tree plus patches and overlay directories, as one SourceTree.

Serving stacks run upstream vLLM with PR patches applied by an install script, or with files
bind-mounted over the package. `PatchedTree` wraps the base tree of the pinned revision and
lays each layer over it in order: a unified diff (`--patch`, applied hunk by hunk, in pure
Python: a hunk must match its context exactly, at its line or shifted, or the patch does not
apply: DataError naming the patch file and hunk) or an overlay directory (`--overlay`, whose
files replace or add the same tree-relative paths).

Every line of a touched file keeps its origin: an upstream line number, or the patch (or
overlay file) line it came from. `url(path, start, end)` therefore points at upstream for a
range of unchanged lines (with upstream's line numbers) and at the patch for a range that a
layer added or changed; `provenance(path, start, end)` says which, so a review can mark its
anchors "patched" without the analysis knowing anything about patches.

Applied trees are cached (kind "patched") keyed by the base revision and the layers' digests;
the facts cache is keyed by content, so a patched module is parsed once and untouched ones
share the upstream facts.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

from srcreview.core.errors import DataError, SourceUnavailable, UsageError
from srcreview.source.base import SourceTree
from srcreview.source.unidiff import FilePatch, Hunk, parse_patch

MAX_PATCH_BYTES = 20_000_000
MAX_OVERLAY_FILES = 20_000
MAX_OVERLAY_BYTES = 200_000_000
APPLY_VERSION = 2  # bump when applying or the cached layout changes
_SKIPPED_DIRS = {"__pycache__"}

LayerKind = Literal["patch", "overlay"]


@dataclass(frozen=True)
class Layer:
    """One patch file or overlay directory, read once: its digest and its content."""

    kind: LayerKind
    shown: str  # how it is named in output (never an absolute local path)
    sha256: str  # of the patch file; of the overlay's (path, content digest) listing
    changes: tuple[FilePatch, ...] = ()  # patch
    files: tuple[tuple[str, bytes], ...] = ()  # overlay: (tree path, content)

    def where(self, path: str) -> str:
        """The file a person reads for lines of `path` from this layer: the patch, or the overlay's file."""
        return self.shown if self.kind == "patch" else f"{self.shown.rstrip('/')}/{path}"


def load_patch(path: Path, shown: str) -> Layer:
    """A patch file, parsed; UsageError when it cannot be read, DataError when it is not a diff."""
    from srcreview.core.userfile import read_user_file

    raw = read_user_file(path, shown, "patch", MAX_PATCH_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"{shown}:{line}: patch is not valid UTF-8") from None
    changes = parse_patch(text, shown)
    for change in changes:
        if change.binary:
            raise DataError(f"{shown}:{change.line}: binary change to {change.path} cannot be applied")
    return Layer("patch", shown, hashlib.sha256(raw).hexdigest(), changes=tuple(changes))


def load_overlay(root: Path, shown: str) -> Layer:
    """Every regular file under `root` (hidden directories and __pycache__ skipped)."""
    if not root.exists():
        raise UsageError(f"--overlay {shown}: no such directory")
    if not root.is_dir():
        raise UsageError(f"--overlay {shown}: not a directory")
    files: list[tuple[str, bytes]] = []
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in _SKIPPED_DIRS)
        rel = Path(dirpath).relative_to(root).as_posix()
        for name in dirnames:  # os.walk lists a symlinked directory and never enters it: never skip it silently
            if (Path(dirpath) / name).is_symlink():
                where = name if rel == "." else f"{rel}/{name}"
                raise DataError(f"{shown}/{where}: an overlay holds regular files only (a symlinked directory)")
        for name in sorted(filenames):
            where = name if rel == "." else f"{rel}/{name}"
            full = Path(dirpath) / name
            if not where.isprintable() and any("\udc80" <= c <= "\udcff" for c in where):
                raise DataError(f"--overlay {shown}: the file name {ascii(where)} is not UTF-8: a path of the tree "
                                "is text")
            if full.is_symlink() or not full.is_file():
                raise DataError(f"{shown}/{where}: an overlay holds regular files only (no links or devices)")
            if len(files) >= MAX_OVERLAY_FILES:
                raise DataError(f"--overlay {shown}: more than {MAX_OVERLAY_FILES} files")
            room = MAX_OVERLAY_BYTES - total
            try:  # the size first: a sparse 6 GB file is refused without a byte read
                if full.stat().st_size > room:
                    raise DataError(f"--overlay {shown}: over {MAX_OVERLAY_BYTES} bytes ({where})")
                with open(full, "rb") as handle:
                    data = handle.read(room + 1)  # (it may have grown since)
            except OSError as exc:
                raise UsageError(f"--overlay {shown}/{where}: cannot read: {exc.strerror or exc}") from None
            total += len(data)
            if total > MAX_OVERLAY_BYTES:
                raise DataError(f"--overlay {shown}: over {MAX_OVERLAY_BYTES} bytes ({where})")
            files.append((where, data))
    if not files:
        raise DataError(f"--overlay {shown}: holds no file")
    listing = "".join(f"{p}\0{hashlib.sha256(d).hexdigest()}\n" for p, d in sorted(files))
    return Layer("overlay", shown, hashlib.sha256(listing.encode()).hexdigest(), files=tuple(sorted(files)))


# ----------------------------------------------------------------------------- line origins

@dataclass(frozen=True)
class Origin:
    """Where one line of a patched file comes from: upstream (layer -1) or a layer's line."""

    layer: int
    line: int


@dataclass
class _Line:
    text: str
    origin: Origin
    removed_before: list[Origin] = field(default_factory=list)  # lines a layer deleted just before this one


@dataclass
class _File:
    lines: list[_Line]
    eol: bool  # ends with a newline
    removed_at_end: list[Origin] = field(default_factory=list)
    upstream_path: str | None = None  # where its upstream lines are (a renamed file's old path)

    @classmethod
    def upstream(cls, data: bytes, path: str) -> _File:
        parts = data.decode("utf-8", errors="surrogateescape").split("\n")
        eol = parts[-1] == ""
        if eol:
            parts.pop()
        return cls([_Line(text, Origin(-1, n)) for n, text in enumerate(parts, start=1)], eol, upstream_path=path)

    @classmethod
    def from_layer(cls, data: bytes, layer: int) -> _File:
        made = cls.upstream(data, "")
        for line in made.lines:
            line.origin = Origin(layer, line.origin.line)
        made.upstream_path = None
        return made

    def data(self) -> bytes:
        text = "\n".join(line.text for line in self.lines) + ("\n" if self.eol and self.lines else "")
        return text.encode("utf-8", errors="surrogateescape")


@dataclass(frozen=True)
class Provenance:
    """What a line range of the patched tree shows: upstream lines, or lines of a layer."""

    kind: Literal["upstream", "patched"]
    file: str  # upstream tree path, or the patch/overlay file as shown
    start_line: int
    end_line: int
    sha256: str = ""  # of the layer (patched only)


# ----------------------------------------------------------------------------- applying

class PatchFailed(DataError):
    """A layer does not apply to the base tree (exit 65)."""


def _apply_layers(base: SourceTree, layers: Sequence[Layer]) -> dict[str, _File | None]:
    """Every touched path -> its patched file (None: deleted)."""
    files: dict[str, _File | None] = {}

    def current(path: str) -> _File | None:
        if path in files:
            return files[path]
        if not base.exists(path):
            return None
        return _File.upstream(base.read(path), path)

    written_by: dict[str, str] = {}  # path -> where a layer wrote it (for the message)
    for index, layer in enumerate(layers):
        if layer.kind == "overlay":
            for path, data in layer.files:
                files[path] = _File.from_layer(data, index)
                written_by[path] = f"{layer.shown}/{path}"
            continue
        for change in layer.changes:
            _apply_change(layer, index, change, current, files, base)
            if change.new_path is not None:
                written_by[change.new_path] = f"{layer.shown}:{change.line}"
    _refuse_file_directory_clashes(base, files, written_by)
    return files


def _refuse_file_directory_clashes(base: SourceTree, files: dict, written_by: dict[str, str]) -> None:
    """A layer may not write a file where the tree has a directory (`vllm/config` beside
    `vllm/config/`), nor inside what is a file (`vllm/envs.py/x`): no filesystem holds both,
    so no engine runs that tree (docs/patches.md)."""
    written = {p for p, f in files.items() if f is not None}
    if not written:
        return
    listing = (set(base.files()) - {p for p, f in files.items() if f is None}) | written
    directories = {path.rsplit("/", n)[0] for path in listing for n in range(1, path.count("/") + 1)}
    label = base.revision.label()
    for path in sorted(written):
        if path in directories:
            raise PatchFailed(f"{written_by.get(path, path)}: writes the file {path}, where the tree has a "
                              f"directory {path}/ at vLLM {label}")
        parts = path.split("/")
        for n in range(1, len(parts)):
            ancestor = "/".join(parts[:n])
            if ancestor in listing:
                raise PatchFailed(f"{written_by.get(path, path)}: writes {path} inside {ancestor}, a file at "
                                  f"vLLM {label}")


def _apply_change(layer: Layer, index: int, change: FilePatch, current, files: dict, base: SourceTree) -> None:
    label = base.revision.label()
    if change.old_path is None:  # a new file
        if current(change.new_path) is not None:
            raise PatchFailed(f"{layer.shown}:{change.line}: creates {change.new_path}, which exists at vLLM {label}")
        target = _File([], True)
    else:
        target = current(change.old_path)
        if target is None:
            raise PatchFailed(f"{layer.shown}:{change.line}: {change.old_path} does not exist at vLLM {label}")
        target = _File([_Line(x.text, x.origin, list(x.removed_before)) for x in target.lines], target.eol,
                       list(target.removed_at_end), target.upstream_path)
    start = 0
    for hunk in change.hunks:
        start = _apply_hunk(layer, index, change, hunk, target, start, label)
    if change.new_path is None:
        if target.lines:
            raise PatchFailed(f"{layer.shown}:{change.line}: deletes {change.old_path}, but lines of it are left "
                              f"after its hunks at vLLM {label}")
        files[change.old_path] = None
        return
    if change.old_path is not None and change.old_path != change.new_path:  # a rename or a copy
        if current(change.new_path) is not None:
            raise PatchFailed(f"{layer.shown}:{change.line}: renames onto {change.new_path}, "
                              f"which exists at vLLM {label}")
        if not change.copy:
            files[change.old_path] = None
    files[change.new_path] = target


def _apply_hunk(layer: Layer, index: int, change: FilePatch, hunk: Hunk, target: _File, floor: int,
                label: str) -> int:
    """Replace the hunk's old lines with its new ones; return where the next hunk may start."""
    old = [line.text for line in hunk.lines if line.tag in " -"]
    expected = hunk.old_start - 1 if hunk.old_count else hunk.old_start
    at = _find(target, old, expected, floor)
    if at is None:
        raise PatchFailed(f"{layer.shown}:{hunk.header_line}: hunk #{hunk.number} ({hunk.header}) of "
                          f"{change.path} does not apply at vLLM {label}")
    replaced: list[_Line] = []
    removed: list[Origin] = []
    cursor = at
    for line in hunk.lines:
        if line.tag == " ":
            kept = target.lines[cursor]
            kept.removed_before.extend(removed)
            removed = []
            replaced.append(kept)
            cursor += 1
        elif line.tag == "-":
            gone = target.lines[cursor]
            removed.extend(gone.removed_before)
            removed.append(Origin(index, line.patch_line))
            cursor += 1
        else:
            replaced.append(_Line(line.text, Origin(index, line.patch_line), removed))
            removed = []
    end = at + len(old)
    if removed:
        if end < len(target.lines):
            target.lines[end].removed_before.extend(removed)
        else:
            target.removed_at_end.extend(removed)
    target.lines[at:end] = replaced
    if at + len(replaced) == len(target.lines):  # the hunk reaches the end of the file
        if hunk.new_no_eol:
            target.eol = False
        elif hunk.old_no_eol or not target.lines:
            target.eol = True
    return at + len(replaced)


def _find(target: _File, old: list[str], expected: int, floor: int) -> int | None:
    """Where `old` occurs: at `expected`, else the nearest shift (never before `floor`)."""
    size, count = len(old), len(target.lines)

    def matches(at: int) -> bool:
        return at >= floor and at + size <= count and all(target.lines[at + k].text == old[k] for k in range(size))

    if not old:  # a pure insertion with no context: only where the header says
        return expected if floor <= expected <= count else None
    for shift in range(0, count + 1):
        for at in (expected - shift, expected + shift) if shift else (expected,):
            if matches(at):
                return at
    return None


# ----------------------------------------------------------------------------- the tree

class PatchedTree(SourceTree):
    """The base tree of a revision with layers applied: reads, listings and anchors."""

    def __init__(self, base: SourceTree, layers: Sequence[Layer], files: dict[str, _File | None]):
        super().__init__(base.revision)
        self.base = base
        self.layers = tuple(layers)
        self._patched = files
        self.provider = base.provider
        self.origin = base.origin
        self.cached = base.cached
        self.variant = patch_key(base, layers)
        self._listing: list[str] | None = None

    # -- reading
    def read(self, path: str) -> bytes:
        if path in self._patched:
            found = self._patched[path]
            if found is None:
                raise SourceUnavailable(f"{path}: deleted by a patch at {self.revision.label()}")
            return found.data()
        return self.base.read(path)

    def exists(self, path: str) -> bool:
        if path in self._patched:
            return self._patched[path] is not None
        return self.base.exists(path)

    def blob_id(self, path: str) -> str:
        return super().blob_id(path) if path in self._patched else self.base.blob_id(path)

    def files(self, prefix: str = "") -> list[str]:
        if self._listing is None:
            listing = set(self.base.files())
            for path, found in self._patched.items():
                (listing.add if found is not None else listing.discard)(path)
            self._listing = sorted(listing)
        prefix = prefix.strip("/")
        if not prefix:
            return list(self._listing)
        return [f for f in self._listing if f == prefix or f.startswith(prefix + "/")]

    def symlinks(self) -> list[str]:
        return [p for p in getattr(self.base, "symlinks", list)() if p not in self._patched]

    def unreadable_entries(self) -> dict:
        """The base tree's, except the paths a layer wrote or deleted."""
        return {p: gap for p, gap in self.base.unreadable_entries().items() if p not in self._patched}

    def touched(self, layer: Layer) -> list[str]:
        """The tree paths `layer` changed, added or deleted."""
        if layer.kind == "overlay":
            return sorted(p for p, _ in layer.files)
        return sorted({p for c in layer.changes for p in (c.old_path, c.new_path) if p is not None})

    def describe(self) -> str:
        names = ", ".join(layer.shown for layer in self.layers)
        return f"{self.base.describe()} with {len(self.layers)} layer{'s' if len(self.layers) != 1 else ''} ({names})"

    # -- anchors
    def provenance(self, path: str, start: int, end: int | None = None) -> Provenance | None:
        """Where the lines start..end of `path` come from; None when no layer touched the file."""
        found = self._patched.get(path)
        if found is None:
            return None
        end = start if end is None else end
        lines = found.lines[max(start, 1) - 1:max(end, start)]
        if not lines:
            return None
        spans: dict[int, list[int]] = {}
        for n, line in enumerate(lines):
            if line.origin.layer >= 0:
                spans.setdefault(line.origin.layer, []).append(line.origin.line)
            if n:  # a deletion strictly inside the range changes what it shows
                for gone in line.removed_before:
                    spans.setdefault(gone.layer, []).append(gone.line)
        if not spans:
            return Provenance("upstream", found.upstream_path or path, lines[0].origin.line, lines[-1].origin.line)
        added = [line.origin.layer for line in lines if line.origin.layer >= 0]
        first = added[0] if added else min(spans)  # the layer whose lines the range shows first
        layer = self.layers[first]
        numbers = spans[first]
        return Provenance("patched", layer.where(path), min(numbers), max(numbers), layer.sha256)

    def url(self, path: str, start: int | None = None, end: int | None = None) -> str:
        if start is None:  # the whole file
            found = self._patched.get(path)
            if found is None or not found.lines:
                return self.base.url(path)
            whole = cast(Provenance, self.provenance(path, 1, len(found.lines)))  # a patched file has lines
            return self.base.url(whole.file) if whole.kind == "upstream" else whole.file
        found = self.provenance(path, start, end)
        if found is None:
            return self.base.url(path, start, end)
        if found.kind == "upstream":
            return self.base.url(found.file, found.start_line, found.end_line)
        end = f"-L{found.end_line}" if found.end_line != found.start_line else ""
        return f"{found.file}#L{found.start_line}{end}"


def patch_key(base: SourceTree, layers: Sequence[Layer]) -> str:
    """The identity of a patched tree: base revision and every layer's digest, in order."""
    text = f"{APPLY_VERSION}\n{base.revision.sha}\n" + "".join(f"{layer.kind}:{layer.sha256}\n" for layer in layers)
    content = _content_id(base)
    if content:  # a --source directory: the revision does not fix its content, its snapshot does
        text += f"content:{content}\n"
    return hashlib.sha256(text.encode()).hexdigest()


def _content_id(base: SourceTree) -> str | None:
    """What fixes the content of a `--source` directory beyond its revision: the digest of its
    snapshot (srcreview.source.statindex); None for a directory read without one (nothing does),
    "" for every other tree (the revision does)."""
    from srcreview.source.base import DirectoryTree
    from srcreview.source.statindex import SnapshotTree

    if isinstance(base, SnapshotTree):
        return base.snapshot.digest
    if isinstance(base, DirectoryTree) and base.provider == "local" and base._manifest is None:
        return None
    return ""


def apply_layers(base: SourceTree, layers: Sequence[Layer], cache=None) -> SourceTree:
    """`base` with `layers` applied in order (`base` itself when there are none).

    The applied files are kept in the cache (kind "patched") under `patch_key`; a cache that
    cannot be written only costs applying again.
    """
    if not layers:
        return base
    from srcreview.source.cache import Cache, CacheNotWritable

    if _content_id(base) is None:  # applied files kept by revision would be another content's
        return PatchedTree(base, layers, _apply_layers(base, layers))
    key = patch_key(base, layers)
    cache = cache or Cache()
    try:
        files = _cached(cache, key)
        if files is None:
            files = _apply_layers(base, layers)
            _store(cache, key, files)
    except CacheNotWritable:
        files = _apply_layers(base, layers)
    return PatchedTree(base, layers, files)


def _cached(cache, key: str) -> dict[str, _File | None] | None:
    data = cache.lookup_manifest("patched", key)
    if data is None:
        return None
    try:
        meta = data["meta"]
        files: dict[str, _File | None] = {}
        for path, record in meta["files"].items():
            if record is None:
                files[path] = None
                continue
            raw = (cache.tree_path("patched", key) / record["blob"]).read_bytes()
            if hashlib.sha256(raw).hexdigest() != data["files"][record["blob"]][1]:
                cache.mark_damaged("patched", key)  # edited since written (the quick check sees sizes): rebuild
                return None
            text = raw.decode("utf-8", errors="surrogateescape").split("\n")
            if record["eol"]:
                text.pop()
            origins = _expand(record["origins"])
            removed = {int(k): [Origin(*o) for o in v] for k, v in record["removed"].items()}
            if len(origins) != len(text):
                return None
            lines = [_Line(t, o, removed.get(n, [])) for n, (t, o) in enumerate(zip(text, origins, strict=True))]
            files[path] = _File(lines, record["eol"], removed.get(len(lines), []), record["upstream_path"])
        return files
    except (OSError, KeyError, TypeError, ValueError):
        return None


def _store(cache, key: str, files: dict[str, _File | None]) -> None:
    with cache.entry("patched", key) as entry:
        if entry.ready:
            return
        staging = entry.staging()
        records: dict[str, dict | None] = {}
        for number, (path, found) in enumerate(sorted(files.items())):
            if found is None:
                records[path] = None
                continue
            blob = f"{number:06d}"
            (staging / blob).write_bytes(found.data())
            removed = {str(n): [[o.layer, o.line] for o in line.removed_before]
                       for n, line in enumerate(found.lines) if line.removed_before}
            if found.removed_at_end:
                removed[str(len(found.lines))] = [[o.layer, o.line] for o in found.removed_at_end]
            records[path] = {"blob": blob, "eol": found.eol, "origins": _runs([line.origin for line in found.lines]),
                             "removed": removed, "upstream_path": found.upstream_path}
        entry.commit({"provider": "patched", "files": records})


def _runs(origins: list[Origin]) -> list[list[int]]:
    """Origins as runs [layer, first line, count] of consecutive lines: an upstream file is one run."""
    runs: list[list[int]] = []
    for o in origins:
        if runs and runs[-1][0] == o.layer and runs[-1][1] + runs[-1][2] == o.line:
            runs[-1][2] += 1
        else:
            runs.append([o.layer, o.line, 1])
    return runs


def _expand(runs: list[list[int]]) -> list[Origin]:
    return [Origin(layer, first + k) for layer, first, count in runs for k in range(count)]


def layer_records(tree: SourceTree) -> list[dict]:
    """For a review: each layer's file, kind, sha256 and the paths it touched (empty for plain trees)."""
    if not isinstance(tree, PatchedTree):
        return []
    return [{"file": layer.shown, "kind": layer.kind, "sha256": layer.sha256, "touched": tree.touched(layer)}
            for layer in tree.layers]

