"""Which files are recipes: `srcreview check recipes/` finds them by their content.

The paths on the command line are taken as given when they are files; a directory is searched
(recursively, in sorted order, hidden directories skipped) for the files `is_recipe_file`
accepts: every file `srcreview.model.recipe.looks_like_recipe` reads as a recipe in one of its
formats (srcreview TOML, a `vllm serve` script or Dockerfile, a vLLM YAML config, a compose
file), never a waiver file. A file meant as a recipe that does not read as one (a launch
script with an escape character, a compose file over the size limit or in an encoding
srcreview cannot read) is found all the same, so the run fails naming it: a directory run never
passes by skipping what it could not review.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from srcreview.core.errors import SrcreviewError, UsageError
from srcreview.core.userfile import shown_path
from srcreview.model.recipe import (
    _BOMS,
    _SCRIPT_SUFFIXES,
    _SERVE,
    MAX_RECIPE_BYTES,
    Recipe,
    looks_like_recipe,
)
from srcreview.vllm.anchors import PACKAGE

WAIVER_FILE = "srcreview.toml"  # the waivers beside recipes (srcreview.gate.waivers): never a recipe

_SKIPPED_DIRS = {"__pycache__", "node_modules"}
# a [recipe] or [engine...] table header: how a TOML recipe that does not read is still recognised
_RECIPE_HEADER = re.compile(r"^[ \t]*\[[ \t]*[\"']?(recipe|engine)[\"']?[ \t]*[\].]", re.M)
# what docker compose reads by default, and the `-f` files people name after it
_COMPOSE_NAME = re.compile(r"^(docker-)?compose([.-][^/]*)?\.ya?ml$|\.compose\.ya?ml$", re.I)
_REGISTRY_KEYS = re.compile(r"^model\s*:\s*(#.*)?$", re.M)  # `model:` opening a mapping, as a registry file has
_DOCKERFILE_NAME = re.compile(r"^(Dockerfile|Containerfile)([.-].*)?$|\.(Dockerfile|Containerfile)$", re.I)


def is_recipe_file(path: Path) -> bool:
    """A file that reads as a recipe in any format srcreview reviews; never a waiver file.

    A TOML file with a `[recipe]` or `[engine]` table header that does not read as a recipe
    (a syntax error, no `[recipe]` table, too large) is a recipe too, so that `check` reports
    what is wrong with it (exit 65) instead of skipping it silently.
    """
    if path.name == WAIVER_FILE:
        return False
    if looks_like_recipe(path):
        return True
    return _meant_as_recipe(path)


def _meant_as_recipe(path: Path) -> bool:
    """Whether a file that does not read as a recipe is meant as one, by its first megabyte
    (decoded leniently, any BOM honoured): a TOML file with a `[recipe]` or `[engine]` header,
    a launch script (`#!` or a shell suffix) or a Dockerfile running vLLM, a compose file (by
    its name, or a YAML `services:` mapping) that names vLLM, a vLLM YAML config (its top-level
    keys vLLM flags, one of them a common one)."""
    try:
        if not path.is_file():  # a FIFO or a device is never opened
            return False
        with open(path, "rb") as handle:
            raw = handle.read(MAX_RECIPE_BYTES + 1)
    except PermissionError:  # cannot tell: a file named like a recipe is one, and its reader says why it fails
        return path.suffix.lower() in (".toml", ".yml", ".yaml", *_SCRIPT_SUFFIXES[1:]) \
            or bool(_DOCKERFILE_NAME.search(path.name) or _COMPOSE_NAME.search(path.name))
    except OSError:
        return False
    if len(raw) > MAX_RECIPE_BYTES and (_DOCKERFILE_NAME.search(path.name) or _COMPOSE_NAME.search(path.name)):
        return True  # too large to tell by its content (vLLM may be named past the first megabyte): its name says
    text = _lenient_text(raw)
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return bool(_RECIPE_HEADER.search(text))
    if _SERVE.search(text) and (text.startswith("#!") or suffix in _SCRIPT_SUFFIXES):
        return True
    if _DOCKERFILE_NAME.search(path.name):
        return PACKAGE in text.lower()
    if suffix in (".yml", ".yaml") and _REGISTRY_KEYS.search(text) and re.search(r"^variants\s*:", text, re.M):
        return True  # a recipes-registry model file
    compose = _COMPOSE_NAME.search(path.name) or (
        suffix in (".yml", ".yaml") and re.search(r"^services\s*:", text, re.M))
    if not compose and suffix in (".yml", ".yaml"):
        from srcreview.model.recipe.vllm_yaml import looks_like_config_text

        return looks_like_config_text(text)  # a vLLM config (`vllm serve --config`) by its top-level keys
    return bool(compose) and PACKAGE in text.lower()


def _lenient_text(raw: bytes) -> str:
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            return raw[len(bom):].decode(codec, errors="replace")
    return raw.decode("utf-8", errors="replace").removeprefix("\ufeff")


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
                raise UsageError(f"{shown_path(path)}: no recipe found in this directory (a recipe is srcreview TOML, "
                                 f"a `vllm serve` script or Dockerfile, a vLLM YAML config or a compose file; "
                                 f"{WAIVER_FILE} holds waivers)")
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

    def unlisted(error: OSError) -> None:  # its recipes would go unreviewed: never skipped without a word
        where = Path(error.filename) if error.filename else directory
        raise SrcreviewError(f"{shown_path(where)}: cannot list this directory ({error.strerror or error}); "
                             "the recipes in it would not be reviewed")

    for root, dirs, files in os.walk(directory, onerror=unlisted):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in _SKIPPED_DIRS)
        for name in sorted(files):
            candidate = Path(root) / name
            if candidate.is_file() and is_recipe_file(candidate):
                found.append(candidate)
    return sorted(found, key=lambda p: p.relative_to(directory).parts)


def selected_recipes(paths: list[str], hardware_override: str | None = None) -> list[tuple[Recipe, Path]]:
    """(recipe, its file) for each path: a file, a directory, or `FILE#NAME` naming one recipe of
    a file (a compose service, a recipes-registry variant, `variant@key` a hardware override of
    it: the key is then read as if `--hardware-override key` were given for that file).

    `hardware_override` (a key or `all`) is for recipes-registry files; given without any, or
    a NAME the file does not hold, is a usage error (exit 64) naming what there is.
    """
    from srcreview.model.recipe import load_recipes

    out: list[tuple[Recipe, Path]] = []
    for given in paths:
        given, name = _selector(given)
        key = hardware_override
        if name is not None and "@" in name and key is None:
            key = name.rpartition("@")[2]
        for path, shown in recipe_files([given]):
            recipes = load_recipes(path, display_path=shown, hardware_override=key)
            if name is not None:
                chosen = [r for r in recipes if r.path == f"{shown}#{name}"]
                if not chosen:
                    held = ", ".join(r.path.partition("#")[2] or r.path for r in recipes[:20])
                    raise UsageError(f"{shown}: holds no recipe {name!r} (it holds: {held})")
                recipes = tuple(chosen)
            out.extend((r, path) for r in recipes)
    if hardware_override is not None and not any(r.format == "recipes-registry" for r, _ in out):
        raise UsageError("--hardware-override: applies to recipes-registry model files; none is given")
    return out


def _selector(given: str) -> tuple[str, str | None]:
    """(`FILE`, `NAME`) of `FILE#NAME` when FILE is a file and `FILE#NAME` is not; else (given, None)."""
    base, hash_, name = given.rpartition("#")
    if hash_ and name and not Path(given).exists() and Path(base).is_file():
        return base, name
    return given, None
