"""Fixture variants as overlays: a variant directory holds only what differs from its base.

A directory with an `overlay.toml` (`base = "rules_spec_decode"`, a directory relative to the
overlay's parent, itself possibly an overlay; optional `remove = ["vllm/v1/spec_decode"]`) stands for the base tree
with the variant's files laid over it (overlay.toml itself excluded) and the removed paths
dropped. `materialize` builds that tree once per process in a temporary directory, so the
rule examples and the history tests read a plain tree, and a change to the base reaches
every variant.
"""

from __future__ import annotations

import atexit
import shutil
import sys
import tempfile
from pathlib import Path

OVERLAY_FILE = "overlay.toml"
_BUILT: dict[tuple, Path] = {}


def is_overlay(root: Path) -> bool:
    return (Path(root) / OVERLAY_FILE).is_file()


def materialize(root: Path) -> Path:
    """The tree `root` stands for: `root` itself, or (for an overlay) a built temporary copy."""
    from srcreview.core.errors import DataError

    root = Path(root)
    if not is_overlay(root):
        return root
    spec = _spec(root)
    key = (root.resolve(), _signature(root), _signature(root.parent / spec["base"]))
    if key in _BUILT and _BUILT[key].is_dir():
        return _BUILT[key]
    base = root.parent / spec["base"]
    if not base.is_dir() or base.resolve() == root.resolve():
        raise DataError(f"{root / OVERLAY_FILE}: base {spec['base']!r} is not a fixture directory")
    source = materialize(base)
    target = Path(tempfile.mkdtemp(prefix=f"srcreview-{root.name}-"))
    atexit.register(shutil.rmtree, target, True)
    shutil.copytree(source, target, dirs_exist_ok=True, ignore=shutil.ignore_patterns("__pycache__"))
    for relative in spec["remove"]:
        doomed = target / relative
        if doomed.is_dir():
            shutil.rmtree(doomed)
        elif doomed.exists():
            doomed.unlink()
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.name != OVERLAY_FILE and "__pycache__" not in path.parts:
            out = target / path.relative_to(root)
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out)
    _BUILT[key] = target
    return target


def _spec(root: Path) -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    from srcreview.core.errors import DataError

    where = root / OVERLAY_FILE
    try:
        data = tomllib.loads(where.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise DataError(f"{where}: {exc}") from None
    base, remove = data.get("base"), data.get("remove", [])
    if not isinstance(base, str) or not base or base.startswith("/") or "\\" in base:
        raise DataError(f"{where}: base must be a fixture directory relative to the overlay's parent")
    if set(data) - {"base", "remove"} or not all(isinstance(r, str) and ".." not in r for r in remove):
        raise DataError(f"{where}: only `base` and `remove` (relative paths) are allowed")
    return {"base": base, "remove": list(remove)}


def _signature(root: Path) -> tuple:
    """What the built tree depends on: every file's path, size and mtime (rebuilt when one changes)."""
    return tuple((p.relative_to(root).as_posix(), p.stat().st_size, p.stat().st_mtime_ns)
                 for p in sorted(Path(root).rglob("*")) if p.is_file() and "__pycache__" not in p.parts)
