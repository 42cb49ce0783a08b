"""Which files are recipes: `srcreview check recipes/` finds them by their content.

The paths on the command line are taken as given when they are files; a directory is searched
(recursively, in sorted order, hidden directories skipped) for the files `is_recipe_file`
accepts. One question decides, so a new recipe format (a `vllm serve` command line, a YAML
or compose file) is added by teaching `is_recipe_file` to recognise it.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from srcreview.errors import UsageError
from srcreview.userfile import shown_path
from srcreview.waivers import WAIVER_FILE

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

RECIPE_TABLES = ("recipe", "engine")
MAX_SNIFF_BYTES = 1_000_000  # srcreview.recipe.MAX_RECIPE_BYTES: a larger file is refused by the loader
_SKIPPED_DIRS = {"__pycache__", "node_modules"}
# a [recipe] or [engine...] table header: how a recipe that does not parse is still recognised
_RECIPE_HEADER = re.compile(r"^[ \t]*\[[ \t]*[\"']?(recipe|engine)[\"']?[ \t]*[\].]", re.M)


def is_recipe_file(path: Path) -> bool:
    """A TOML file with a top-level `[recipe]` or `[engine]` table; never a waiver file.

    A file that does not parse as TOML but has such a table header is a recipe too, so that
    `check` reports its syntax error (exit 65) instead of skipping it silently.
    """
    if path.name == WAIVER_FILE or path.suffix != ".toml":
        return False
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_SNIFF_BYTES + 1)
    except OSError:
        return False
    text = raw.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if len(raw) > MAX_SNIFF_BYTES:
        return bool(_RECIPE_HEADER.search(text))
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return bool(_RECIPE_HEADER.search(text))
    return any(isinstance(data.get(table), dict) for table in RECIPE_TABLES)


def recipe_files(paths: list[str]) -> list[tuple[Path, str]]:
    """(file on disk, path shown in reports) for each recipe the command-line paths name.

    Files are taken as given (the loader says what is wrong with them); directories give the
    recipes found in them. A directory without any recipe is a usage error (exit 64); a
    recipe named twice is reviewed once.
    """
    found: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            inside = _search(path)
            if not inside:
                raise UsageError(f"{shown_path(path)}: no recipe found in this directory (a recipe is a TOML "
                                 f"file with a [recipe] or [engine] table; {WAIVER_FILE} holds waivers)")
            base = shown_path(path).rstrip("/")
            pairs = [(p, p.relative_to(path).as_posix() if base == "." else f"{base}/{p.relative_to(path).as_posix()}")
                     for p in inside]
        else:
            pairs = [(path, shown_path(path))]
        for file, shown in pairs:
            key = file.resolve() if file.exists() else file
            if key not in seen:
                seen.add(key)
                found.append((file, shown))
    return found


def _search(directory: Path) -> list[Path]:
    """Recipe files under `directory`, sorted; hidden and cache directories and symlinked
    directories (which could loop) are not entered; only regular files are read."""
    found = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS)
        for name in sorted(files):
            candidate = Path(root) / name
            if candidate.is_file() and is_recipe_file(candidate):
                found.append(candidate)
    return sorted(found, key=lambda p: p.relative_to(directory).parts)
