"""Project defaults for `srcreview check`, found as ruff and mypy find theirs.

From the working directory upwards, the first directory holding either

    # pyproject.toml                       # or srcreview.toml
    [tool.srcreview]                       [defaults]
    rev = "0.29.0"                         rev = "0.29.0"
    gpu = "NVIDIA GeForce RTX 5090"        ...
    model-config = "cache"
    fail-on = "plausible:medium"
    waivers = "ci/waivers.toml"

gives the defaults (srcreview.toml first when a directory has both). A `srcreview.toml` is
also the waiver file of the recipes beside it (srcreview.gate.waivers): its `[[waivers]]` are
never defaults and its `[defaults]` table is never a waiver; a srcreview.toml without
`[defaults]` is skipped here. A flag given on the command line wins over the file.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

from srcreview.core.errors import DataError
from srcreview.core.userfile import read_user_file

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PYPROJECT = "pyproject.toml"
OWN_FILE = "srcreview.toml"  # the waiver file's name too (srcreview.model.recipe.files.WAIVER_FILE)
DEFAULTS_TABLE = "defaults"  # srcreview.toml's table of defaults; pyproject.toml: [tool.srcreview]
KEYS = ("rev", "gpu", "model-config", "fail-on", "waivers")  # as the flags spell them
MODEL_CONFIG = ("hub", "cache", "off")
MAX_BYTES = 1_000_000


@dataclass(frozen=True)
class Default:
    """One default: its value and where it is written (file:line, relative to the working directory)."""

    key: str
    value: str
    source: str


@dataclass(frozen=True)
class ProjectDefaults:
    file: Path | None = None  # the file read, None when no project file was found
    shown: str = ""
    values: tuple[Default, ...] = ()

    def get(self, key: str) -> Default | None:
        return next((d for d in self.values if d.key == key), None)

    def path(self, key: str) -> tuple[Path, str] | None:
        """A path default (waivers), resolved against the file that names it: (path, as shown)."""
        found = self.get(key)
        if found is None or self.file is None:
            return None
        folder = self.shown.rpartition("/")[0]
        return self.file.parent / found.value, f"{folder}/{found.value}" if folder else found.value


def find_defaults(start: Path) -> ProjectDefaults:
    """The defaults of the nearest project file above `start` (none found: no defaults)."""
    start = start.resolve()
    for directory in (start, *start.parents):
        for name, table in ((OWN_FILE, (DEFAULTS_TABLE,)), (PYPROJECT, ("tool", "srcreview"))):
            path = directory / name
            if not path.is_file():
                continue
            shown = _shown(path, start)
            found = _read(path, shown, table)
            if found is not None:
                return found
    return ProjectDefaults()


def _read(path: Path, shown: str, table: tuple[str, ...]) -> ProjectDefaults | None:
    raw = read_user_file(path, shown, "project file", MAX_BYTES)
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
        data = tomllib.loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError) as exc:
        if path.name == OWN_FILE:
            return None  # the waiver loader's to report, with its line, when it reads the file
        raise DataError(f"{shown}: malformed TOML: {str(exc) or 'nesting too deep'}") from None
    body = data
    for part in table:
        body = body.get(part) if isinstance(body, dict) else None
    if body is None:
        return None
    header = "[" + ".".join(table) + "]"
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines, 1) if line.strip() == header), 1)
    if not isinstance(body, dict):
        raise DataError(f"{shown}:{start}: {header} must be a table")
    values = []
    for key, value in body.items():
        line = _line(lines, start, key)
        if key not in KEYS:
            raise DataError(f"{shown}:{line}: unknown key {key} in {header} (expected: {', '.join(KEYS)})")
        if not isinstance(value, str) or not value.strip():
            raise DataError(f"{shown}:{line}: {key} must be a non-empty string")
        if key == "model-config" and value not in MODEL_CONFIG:
            raise DataError(f"{shown}:{line}: model-config must be one of {', '.join(MODEL_CONFIG)}")
        values.append(Default(key, value, f"{shown}:{line}"))
    return ProjectDefaults(file=path, shown=shown, values=tuple(sorted(values, key=lambda d: KEYS.index(d.key))))


def _line(lines: list[str], start: int, key: str) -> int:
    pattern = re.compile(rf"\s*[\"']?{re.escape(key)}[\"']?\s*=")
    return next((n for n, line in enumerate(lines[start:], start + 1) if pattern.match(line)), start)


def _shown(path: Path, start: Path) -> str:
    """The file as the user names it from the working directory (never an absolute path)."""
    try:
        return path.relative_to(start).as_posix()
    except ValueError:
        depth = len(start.parts) - len(path.parent.parts)
        return "/".join([".."] * depth + [path.name])
