"""vLLM's own YAML config (`vllm serve --config config.yaml`) as a recipe.

vLLM reads each top-level key as the flag `--key` (a mapping value as that flag's JSON); so
does srcreview, through the same revision-dependent flag mapping as a command line. `model`
is the served model, as `vllm serve MODEL` would give it.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from srcreview.core.errors import DataError
from srcreview.model.recipe.directives import read_directives
from srcreview.model.recipe.model import (
    MAX_SETTINGS,
    RawFlag,
    Recipe,
    RecipeInfo,
    RuntimePin,
)
from srcreview.model.recipe.yaml_doc import Located
from srcreview.vllm.anchors import COMMON_ARGS

_KEY = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]*$")
# keys every vLLM config file is likely to use, either spelling; a YAML mapping with none of them is someone else's
COMMON_KEYS = {key for arg in COMMON_ARGS for key in (arg, arg.replace("_", "-"))}


def looks_like_config(doc: Located | None) -> bool:
    """A mapping of flag-like keys that names at least one common vLLM argument."""
    if doc is None or not isinstance(doc.value, dict) or not doc.value:
        return False
    keys = set(doc.value)
    return all(_KEY.match(k) for k in keys) and bool(keys & COMMON_KEYS) and "services" not in keys


_TOP_KEY = re.compile(r"^([^\s#'\"-][^:#]*?)[ \t]*:(?:[ \t]|$)")


def looks_like_config_text(text: str) -> bool:
    """`looks_like_config` by the top-level keys of text that does not parse (too large, an
    escape character, a bad byte decoded leniently): a file meant as a vLLM config, so that a
    directory run names it instead of skipping it."""
    keys = set()
    for line in text.splitlines():
        if not line or line[0] in " \t#" or line.startswith(("---", "...")):
            continue
        match = _TOP_KEY.match(line)
        if match is None:
            return False  # a top-level line that is no `key:`: not a mapping of flags
        keys.add(match.group(1))
    return bool(keys) and all(_KEY.match(k) for k in keys) and bool(keys & COMMON_KEYS) and "services" not in keys


def read_config(doc: Located, text: str, shown: str, file: str) -> Recipe:
    directives = read_directives(text, shown)
    model, flags = config_flags(doc, shown)
    return Recipe(path=file, format="vllm-yaml", info=RecipeInfo(name=directives.name or PurePosixPath(file).stem,
                                                                  model=model),
                  runtime=directives.runtime(RuntimePin(), shown), hardware=directives.hardware(shown),
                  flags=tuple(flags), pin_line=directives.pin_line)


def config_flags(doc: Located | None, shown: str, origin: str | None = None) -> tuple[str | None, list[RawFlag]]:
    """(the `model` the config names, one flag `--key` per other top-level key with its YAML
    value), as vLLM's `load_config_file` turns the file into arguments; `origin`: the file's
    name when it is read through `--config` from another recipe."""
    if doc is None:
        return None, []
    if not isinstance(doc.value, dict):
        raise DataError(f"{shown}:{doc.line}: a vLLM config is a mapping of flag names to values")
    flags: list[RawFlag] = []
    model = None
    for key, item in doc.value.items():
        if not _KEY.match(key):
            raise DataError(f"{shown}:{item.line}: {key[:60]!r} is not a flag name")
        if key == "model" and isinstance(item.value, str):
            model = item.value
            continue
        if len(flags) == MAX_SETTINGS:
            raise DataError(f"{shown}:{item.line}: more than {MAX_SETTINGS} settings; a vLLM config has tens")
        flags.append(RawFlag(flag=f"--{key}", value=item.plain(), line=item.key_line or item.line,
                             column=item.key_column,
                             origin=f"{origin}:{item.key_line or item.line}" if origin else None))
    return model, flags
