"""Model config values a recipe states itself (its `[model]` table), and how they apply over obtained facts.

A user may know what the review cannot fetch (a private model, an offline CI) or may want to
check another variant: each key of the table, nested tables for nested keys
(`[model.text_config] model_type = "qwen3_5"`), replaces that key of config.json and keeps
its recipe line, so a branch decided by it is anchored on the recipe.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Mapping
from typing import Any

from srcreview.core.errors import DataError
from srcreview.core.records import Record
from srcreview.hfconfig.facts import AppliedOverride, ModelFacts
from srcreview.hfconfig.files import CONFIG_FILE

MAX_KEY_DEPTH = 16
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")  # config.json keys are kept as written: no kebab-to-snake


class Override(Record):
    key: str  # dotted inside config.json
    value: Any
    line: int


class ModelOverrides(Record):
    """The overrides of one model table, in the order written."""

    items: tuple[Override, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.items)

    def get(self, key: str) -> Override | None:
        return next((item for item in self.items if item.key == key), None)


def parse_model_overrides(table: Mapping[str, Any], lines: Mapping[str, int], *, table_line: int = 1,
                          where: str = "", name: str = "model") -> ModelOverrides:
    """ModelOverrides from a parsed TOML table (`[model]`) and the lines of its keys (`lines`:
    dotted key relative to the table -> line; a key not in it takes its nearest enclosing
    table's line, else `table_line`). `where` names the file in errors, `name` the table."""
    items: list[Override] = []
    _flatten(table, (), lines, table_line, f"{where}:" if where else "line ", name, items)
    return ModelOverrides(items=tuple(items))


def apply_overrides(facts: ModelFacts, overrides: ModelOverrides) -> ModelFacts:
    """`facts` with config.json's keys replaced by the recipe's values (a pure function).

    The source gains `+recipe` ("recipe" alone when config.json was not obtained: then only the
    stated keys are decided, and the reason it is unknown stays)."""
    if not overrides:
        return facts
    config = copy.deepcopy(facts.config)
    applied = []
    for item in overrides.items:
        replaced = facts.has(item.key) and facts.known
        applied.append(AppliedOverride(key=item.key, value=item.value, line=item.line, replaced=replaced,
                                       replaces=copy.deepcopy(facts.get(item.key)) if replaced else None))
        _set(config, item.key.split("."), copy.deepcopy(item.value))
    source = "recipe" if facts.source in ("none", "recipe") else f"{facts.source.removesuffix('+recipe')}+recipe"
    documents = {**facts.documents, CONFIG_FILE: config}
    return facts.model_copy(update={"source": source, "documents": documents,
                                    "overrides": (*facts.overrides, *applied)})


def _set(config: dict, path: list[str], value: Any) -> None:
    for part in path[:-1]:
        if not isinstance(config.get(part), dict):
            config[part] = {}
        config = config[part]
    config[path[-1]] = value


def _flatten(table: Mapping, prefix: tuple[str, ...], lines: Mapping[str, int], table_line: int,
             where: str, name: str, items: list[Override]) -> None:
    for key, value in table.items():
        path = (*prefix, str(key))
        dotted = ".".join(path)
        line = _line(path, lines, table_line)
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise DataError(f"{where}{line}: [{name}] key {dotted!r} is not a config key (letters, digits, "
                            f"'_' and '-'; nest tables instead of quoting dots)")
        if len(path) > MAX_KEY_DEPTH:
            raise DataError(f"{where}{line}: [{name}] nested deeper than {MAX_KEY_DEPTH} levels")
        if isinstance(value, Mapping):
            if not value:
                raise DataError(f"{where}{line}: [{name}.{dotted}] is empty")
            _flatten(value, path, lines, table_line, where, name, items)
            continue
        problem = _not_json(value)
        if problem:
            raise DataError(f"{where}{line}: [{name}] {dotted}: {problem}")
        items.append(Override(key=dotted, value=value, line=line))


def _line(path: tuple[str, ...], lines: Mapping[str, int], table_line: int) -> int:
    for end in range(len(path), 0, -1):
        found = lines.get(".".join(path[:end]))
        if isinstance(found, int):
            return found
    return table_line


def _not_json(value: Any) -> str | None:
    """What keeps `value` out of a JSON config (TOML dates, NaN, infinities), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a JSON number"
    if isinstance(value, (str, int, float, bool)):
        return None
    if isinstance(value, list):
        return next((p for p in map(_not_json, value) if p), None)
    if isinstance(value, Mapping):
        if not all(isinstance(k, str) for k in value):
            return "table keys must be strings"
        return next((p for p in map(_not_json, value.values()) if p), None)
    return f"a {type(value).__name__} is not a JSON value"
