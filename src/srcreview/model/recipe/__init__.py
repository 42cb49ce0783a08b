"""Recipes where they live: srcreview TOML, `vllm serve` command lines (shell scripts, Dockerfiles),
vLLM YAML configs, docker-compose services and vllm-project/recipes registry model files, all
read into the one `Recipe` model.

The format is chosen by content (a `[recipe]` table, a `services:` mapping, a registry's
`model:` mapping with `variants:`, a mapping of vLLM flags, a Dockerfile, a `vllm serve`
command), the file name only breaking ties for error
messages. Command-line flags are mapped to engine keys once the revision is known
(srcreview.vllm.flags.at_revision): flag names are the pinned vLLM's, not ours.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath
from typing import Any

from srcreview.core.errors import DataError, SrcreviewError
from srcreview.core.userfile import MAX_INT_DIGITS, read_user_file
from srcreview.model.recipe.model import (
    MAX_SETTINGS,
    EnvVar,
    Hardware,
    RawFlag,
    Recipe,
    RecipeInfo,
    RuntimePin,
    ServerOption,
    Setting,
    normalize_key,
)
from srcreview.model.recipe.toml_recipe import MAX_KEY_DEPTH, KeyLines, parse_recipe

MAX_RECIPE_BYTES = 1_000_000
FORMATS = ("toml", "compose", "recipes-registry", "vllm-yaml", "dockerfile", "command-line")
_YAML_KEY_LINE = re.compile(r"^\s*[A-Za-z0-9_.\"'-]+\s*:(\s|$)", re.M)
_SCRIPT_SUFFIXES = ("", ".sh", ".bash", ".zsh")
_SERVE = re.compile(r"\bvllm\s+serve\b|vllm\.entrypoints\.(openai\.api_server|cli\.main)")

__all__ = ["MAX_KEY_DEPTH", "MAX_RECIPE_BYTES", "MAX_SETTINGS", "EnvVar", "Hardware", "KeyLines", "RawFlag",
           "Recipe", "RecipeInfo", "RuntimePin", "ServerOption", "Setting", "is_toml_recipe", "load_recipe",
           "load_recipes", "looks_like_recipe", "normalize_key", "parse_recipe", "read_recipes"]


def load_recipes(path: str | Path, display_path: str | None = None,
                 hardware_override: str | None = None) -> tuple[Recipe, ...]:
    """Every recipe in a file (a compose file holds one per vLLM service, a recipes-registry
    file one per variant, and per hardware-override key asked for); DataError if invalid,
    UsageError if unreadable."""
    shown = display_path or str(path)
    from srcreview.model.recipe.named_files import FileAccess

    return read_recipes(_text(Path(path), shown), shown, name=Path(path).name,
                        access=FileAccess(base=Path(path).parent), hardware_override=hardware_override)


def load_recipe(path: str | Path, display_path: str | None = None) -> Recipe:
    """The one recipe of a file (DataError when it holds several: name the service)."""
    recipes = load_recipes(path, display_path)
    if len(recipes) > 1:
        raise DataError(f"{recipes[0].source_file}: holds {len(recipes)} recipes ("
                        + ", ".join(r.path for r in recipes[:5]) + "); this command reviews one")
    return recipes[0]


def _text(path: Path, shown: str) -> str:
    return decode_recipe(read_user_file(path, shown, "recipe", MAX_RECIPE_BYTES), shown)


_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))


def decode_recipe(raw: bytes, shown: str) -> str:
    """A recipe file's text: UTF-8 (a BOM dropped: editors on Windows write one), or UTF-16/32
    when a BOM says so (PowerShell writes them; docker compose reads them); DataError naming
    the line otherwise."""
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            try:
                return raw[len(bom):].decode(codec)
            except UnicodeDecodeError as exc:
                line = raw[len(bom):len(bom) + exc.start].decode(codec, "replace").count("\n") + 1
                raise DataError(f"{shown}:{line}: recipe is not valid {codec.upper()[:6]}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"{shown}:{line}: recipe is not valid UTF-8") from None
    return text.removeprefix("\ufeff")


def read_recipes(text: str, shown: str, name: str = "", access=None,
                 hardware_override: str | None = None) -> tuple[Recipe, ...]:
    """The recipes of a file's text, its format chosen by content (see the module docstring);
    `access` (named_files.FileAccess): where the files a recipe names are read, None: nowhere;
    `hardware_override`: a recipes-registry file's hardware-override key (or `all`) whose
    variants are added (recipes_registry)."""
    from srcreview.model.recipe.named_files import FileAccess

    access = access if access is not None else FileAccess()
    fmt, doc = detect(text, shown, name or shown)
    if fmt == "toml":
        recipe = parse_recipe(text, shown)  # (refuses control characters itself)
        _refuse_numbers_no_setting_takes(recipe, shown)
        return (recipe,)
    if fmt == "compose":
        from srcreview.model.recipe.compose import read_compose

        recipes = read_compose(doc, text, shown, shown, access)
    elif fmt == "recipes-registry":
        from srcreview.model.recipe.recipes_registry import read_registry

        recipes = read_registry(doc, text, shown, shown, hardware_override)
    elif fmt == "vllm-yaml":
        from srcreview.model.recipe.vllm_yaml import read_config

        recipes = [read_config(doc, text, shown, shown)]
    else:
        from srcreview.model.recipe import command_line

        reader = command_line.read_dockerfile if fmt == "dockerfile" else command_line.read_script
        recipes = reader(text, shown, shown, access)
    for recipe in recipes:
        _refuse_control_characters(recipe, shown)
        _refuse_numbers_no_setting_takes(recipe, shown)
    return tuple(recipes)


MAX_INTEGER_DIGITS = MAX_INT_DIGITS  # what Python converts to text (4,300 digits): every report prints values


def _refuse_numbers_no_setting_takes(recipe: Recipe, shown: str) -> None:
    """TOML reads a 4,000-digit hex integer, YAML 1.1 a base-60 one (`1:59:59:...`) of any
    size: every report would fail to print it (Python converts at most 4,300 digits to text;
    measured by size here, never converted). `inf` and `nan`
    (TOML, YAML `.inf`) neither: the JSON report could not carry them (it would write
    `Infinity`, which is no JSON)."""
    import math

    limit = 10 ** MAX_INTEGER_DIGITS

    def check(value, line: int, what: str) -> None:
        if isinstance(value, (list, tuple)):
            for item in value:
                check(item, line, what)
        elif isinstance(value, dict):
            for key, item in value.items():
                check(item, line, f"{what}.{key}")
        elif isinstance(value, int) and not isinstance(value, bool) and abs(value) >= limit:
            raise DataError(f"{shown}:{line}: {what}: an integer of more than {MAX_INTEGER_DIGITS} digits "
                            "(no report can print it)")
        elif isinstance(value, float) and not math.isfinite(value):
            raise DataError(f"{shown}:{line}: {what}: {value} is not a number any setting takes")

    for setting in recipe.settings:
        check(setting.value, setting.line, setting.key)
    for flag in recipe.flags:
        check(flag.value, flag.line, flag.flag)
    for table, overrides in (("model", recipe.model_overrides), ("draft_model", recipe.draft_model_overrides)):
        for item in overrides.items:
            check(item.value, item.line, f"{table}.{item.key}")
    check(recipe.extra_tables, recipe.pin_line or 1, "srcreview")


def _refuse_control_characters(recipe: Recipe, shown: str) -> None:
    """As the TOML reader does: ESC sequences and bidi overrides are no recipe value (they
    would drive the terminal, or hide text, wherever the value is shown)."""
    from srcreview.model.recipe.shell_values import UnknownValue
    from srcreview.model.recipe.toml_recipe import _HOSTILE_CHARS

    def check(value, line: int, what: str) -> None:
        if isinstance(value, (list, tuple)):
            for item in value:
                check(item, line, what)
            return
        if isinstance(value, dict):
            check([*map(str, value), *value.values()], line, what)
            return
        if isinstance(value, UnknownValue):
            value = value.text
        bad = _HOSTILE_CHARS.search(value) if isinstance(value, str) else None
        if bad:
            raise DataError(f"{shown}:{line}: {what} contains the control character U+{ord(bad.group(0)):04X}")

    line = recipe.pin_line or 1
    for what, value in (("name", recipe.info.name), ("model", recipe.info.model or ""),
                        ("image", recipe.runtime.image or ""), ("gpu", recipe.hardware.gpu or "")):
        check(value, line, what)
    for flag in recipe.flags:
        check(flag.flag, flag.line, "a flag")
        check([flag.value, *flag.following], flag.line, flag.flag)
    for env in recipe.env:
        check(env.name + env.value, env.line, f"env {env.name}")
    for item in recipe.open:
        check(item.what, item.line, "a word")


def detect(text: str, shown: str, name: str) -> tuple[str, Any]:
    """(format, parsed document or None); DataError when the text is no recipe in any format."""
    suffix = PurePosixPath(name).suffix.lower()
    if is_toml_recipe(text) or suffix == ".toml" and not _YAML_KEY_LINE.search(text) and not _SERVE.search(text):
        return "toml", None
    yaml_error = None
    if _YAML_KEY_LINE.search(text):
        from srcreview.model.recipe import compose, recipes_registry, vllm_yaml, yaml_doc

        try:
            doc = yaml_doc.parse(text, shown)
        except DataError as exc:
            doc, yaml_error = None, exc
        if compose.looks_like_compose(doc):
            return "compose", doc
        if recipes_registry.looks_like_registry(doc):
            return "recipes-registry", doc
        if vllm_yaml.looks_like_config(doc):
            return "vllm-yaml", doc
    from srcreview.model.recipe.command_line import looks_like_dockerfile

    if looks_like_dockerfile(text):
        return "dockerfile", None
    if _SERVE.search(text):
        return "command-line", None
    if suffix == ".toml":
        return "toml", None  # the TOML reader says what is wrong with it
    if yaml_error is not None and (suffix in (".yml", ".yaml") or re.search(r"^services\s*:", text, re.M)):
        raise yaml_error
    raise DataError(f"{shown}:1: not a recipe: no [recipe] table, compose service, recipes-registry model, "
                    "vLLM config or `vllm serve` command")


def is_toml_recipe(text: str) -> bool:
    """Whether `text` is meant as srcreview's TOML (it has a `[recipe]` table header)."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    if not re.search(r"^\s*\[\s*recipe\s*\]", text, re.M):
        return False
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError):
        return True  # it means to be our TOML: let the TOML reader say what is wrong
    return isinstance(data, dict) and isinstance(data.get("recipe"), dict)


def looks_like_recipe(path: str | Path) -> bool:
    """Whether a file is a recipe srcreview can review (for directory discovery): a regular file
    of at most MAX_RECIPE_BYTES that reads as a recipe in one of the formats. Never raises."""
    path = Path(path)
    try:
        if not path.is_file() or path.stat().st_size > MAX_RECIPE_BYTES:
            return False
        with open(path, "rb") as fh:
            raw = fh.read(MAX_RECIPE_BYTES + 1)
        text = decode_recipe(raw, path.name)
        fmt, _ = detect(text, path.name, path.name)
        if fmt == "command-line" and not (text.startswith("#!") or path.suffix.lower() in _SCRIPT_SUFFIXES):
            return False  # a README or a program that mentions `vllm serve` is not a launch script
        return bool(read_recipes(text, path.name, path.name))
    except (OSError, UnicodeDecodeError, SrcreviewError, RecursionError, ValueError):
        return False
