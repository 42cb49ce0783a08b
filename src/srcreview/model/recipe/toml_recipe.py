"""srcreview's own recipe format: TOML with [recipe], [runtime], [hardware], [engine] and [env].

Each engine setting keeps the line it was written on, because findings are anchored on the
recipe line that sets the knob (SARIF primary locations, terminal output).
"""

from __future__ import annotations

import re
import sys
from typing import Any

from srcreview.core.errors import DataError
from srcreview.core.records import RecordError
from srcreview.hfconfig.overrides import ModelOverrides, parse_model_overrides
from srcreview.model.recipe.model import (
    MAX_SETTINGS,
    EnvVar,
    Hardware,
    Recipe,
    RecipeInfo,
    RuntimePin,
    Setting,
    normalize_key,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MODEL_TABLES = ("model", "draft_model")  # config.json values of the target / the draft model
MAX_KEY_DEPTH = 16  # vLLM's nested settings go 3 deep; deeper keys are refused before tomllib sees them
_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")
_SETTING_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


_TOP_TABLES = {"recipe", "runtime", "hardware", "engine", "env", "srcreview", *MODEL_TABLES}


def parse_recipe(text: str, shown: str) -> Recipe:
    """Validate recipe TOML text; `shown` names it in messages. DataError on anything invalid."""
    try:
        return _parse_recipe(text, shown)
    except RecursionError:
        raise DataError(f"{shown}: recipe nesting too deep") from None


def _check_key_depth(text: str, shown: str) -> None:
    """Refuse absurdly deep dotted keys and headers up front: tomllib is quadratic in them."""
    for number, line in enumerate(text.splitlines(), start=1):
        head = line.split("=", 1)[0] if "=" in line else line
        if head.count(".") >= MAX_KEY_DEPTH and (("=" in line) or head.lstrip().startswith("[")):
            raise DataError(f"{shown}:{number}: key nested deeper than {MAX_KEY_DEPTH} levels")


def _parse_recipe(text: str, shown: str) -> Recipe:
    _check_key_depth(text, shown)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        pos = _TOML_POS.search(message)
        line = pos.group(1) if pos else "?"
        reason = _TOML_POS.sub("", message).strip()
        raise DataError(f"{shown}:{line}: malformed TOML: {reason}") from None
    except RecursionError:
        raise DataError(f"{shown}: malformed TOML: nesting too deep") from None
    lines = KeyLines(text)
    _check_characters(data, lines, shown)

    unknown = sorted(set(data) - _TOP_TABLES)
    if unknown:
        raise DataError(
            f"{shown}:{lines.of(unknown[0])}: unknown table [{unknown[0]}] "
            f"(expected: {', '.join(sorted(_TOP_TABLES))})"
        )
    if "recipe" not in data:
        raise DataError(f"{shown}:1: missing [recipe] table with a name")
    for table in ("recipe", "runtime", "hardware", "engine", "env"):
        if table in data and not isinstance(data[table], dict):
            raise DataError(f"{shown}:{lines.of(table)}: [{table}] must be a table")

    if isinstance(data.get("hardware"), dict) and "gpu_from" in data["hardware"]:
        raise DataError(f"{shown}:{lines.of('hardware', 'gpu_from')}: [hardware] gpu_from is not a recipe key "
                        "(it records `--gpu`)")
    try:
        info = RecipeInfo.model_validate(data["recipe"])
        runtime = RuntimePin.model_validate(data.get("runtime", {}))
        hardware = Hardware.model_validate(data.get("hardware", {}))
    except RecordError as exc:
        raise DataError(_validation_line(exc, data, lines, shown)) from None

    settings: list[Setting] = []
    for setting in _flatten_engine(data.get("engine", {}), lines, shown):
        if len(settings) == MAX_SETTINGS:
            raise DataError(f"{shown}:{setting.line}: more than {MAX_SETTINGS} engine settings; "
                            "a vLLM recipe has tens")
        settings.append(setting)
    env = []
    for name, value in data.get("env", {}).items():
        if not _ENV_NAME.match(name):
            raise DataError(f"{shown}:{lines.of('env', name)}: env.{name!r} is not an environment variable name")
        if isinstance(value, bool):
            value = "1" if value else "0"
        if isinstance(value, (dict, list)):
            raise DataError(f"{shown}:{lines.of('env', name)}: env.{name} must be a string, number or boolean")
        env.append(EnvVar(name=name, value=str(value), line=lines.of("env", name)))
    extra = {k: v for k, v in data.items() if k == "srcreview"}
    stated = {table: _model_table(data, table, lines, shown) for table in MODEL_TABLES if table in data}
    return Recipe(path=shown, info=info, runtime=runtime, hardware=hardware,
                  settings=tuple(settings), env=tuple(env), extra_tables=extra, format="toml",
                  pin_line=lines.of("runtime") if "runtime" in data else None,
                  model_overrides=stated.get("model", ModelOverrides()),
                  draft_model_overrides=stated.get("draft_model", ModelOverrides()))


def _model_table(data: dict, table: str, lines: KeyLines, shown: str) -> ModelOverrides:
    """`[model]` / `[draft_model]`: config.json values the recipe states (srcreview.hfconfig)."""
    value = data[table]
    if not isinstance(value, dict):
        raise DataError(f"{shown}:{lines.of(table)}: [{table}] must be a table")
    located: dict[str, int] = {}

    def walk(node: dict, prefix: tuple[str, ...]) -> None:
        for key, item in node.items():
            path = (*prefix, str(key))
            located[".".join(path)] = lines.of(table, *path)
            if isinstance(item, dict):
                walk(item, path)

    walk(value, ())
    return parse_model_overrides(value, located, table_line=lines.of(table), where=shown, name=table)


# Control characters (ESC sequences, BEL, NUL) and bidirectional overrides have no place in a
# recipe value, and would drive the terminal (or hide text) wherever the value is shown.
_HOSTILE_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _check_characters(value: Any, lines: KeyLines, shown: str, path: tuple[str, ...] = ()) -> None:
    if isinstance(value, str):
        bad = _HOSTILE_CHARS.search(value)
        if bad:
            raise DataError(f"{shown}:{lines.of(*path)}: {'.'.join(path)} contains the control character "
                            f"U+{ord(bad.group(0)):04X}")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_characters(item, lines, shown, (*path, str(key)))
    elif isinstance(value, list):
        for item in value:
            _check_characters(item, lines, shown, path)


def _flatten_engine(engine: dict, lines: KeyLines, shown: str, prefix: tuple[str, ...] = ()):
    seen: dict[str, str] = {}
    if len(prefix) >= MAX_KEY_DEPTH:
        raise DataError(f"{shown}:{lines.of('engine', *prefix)}: [engine] nested deeper than {MAX_KEY_DEPTH} levels")
    for written, value in engine.items():
        key = normalize_key(written)
        if not _SETTING_NAME.match(written):
            raise DataError(f"{shown}:{lines.of('engine', *prefix, written)}: engine key {written!r} is not a "
                            f"setting name (letters, digits, '_' and '-'; nest tables instead of quoting dots)")
        if key in seen:
            raise DataError(
                f"{shown}:{lines.of('engine', *prefix, written)}: engine key {written!r} "
                f"repeats {seen[key]!r} (kebab-case and snake_case name the same setting)"
            )
        seen[key] = written
        path = (*prefix, key)
        if isinstance(value, dict):
            if not value:
                raise DataError(f"{shown}:{lines.of('engine', *prefix, written)}: [engine.{'.'.join(path)}] is empty")
            yield from _flatten_engine(value, lines, shown, (*prefix, written))
            continue
        dotted = ".".join(normalize_key(p) for p in path)
        if _holds_datetime(value):
            raise DataError(f"{shown}:{lines.of('engine', *prefix, written)}: engine.{dotted}: a TOML date or time "
                            "is no value a vLLM flag takes (quote it if it is meant as text)")
        yield Setting(key=dotted, value=value, line=lines.of("engine", *prefix, written),
                      written_as=".".join((*prefix, written)))


def _holds_datetime(value: Any) -> bool:
    """Whether a TOML value is (or holds) a date, time or datetime: no report can write one as JSON."""
    import datetime

    if isinstance(value, list):
        return any(_holds_datetime(item) for item in value)
    return isinstance(value, (datetime.date, datetime.time))


def _validation_line(exc: RecordError, data: dict, lines: KeyLines, shown: str) -> str:
    err = exc.errors()[0]
    loc = [str(p) for p in err["loc"]]
    model = exc.title
    table = {"RecipeInfo": "recipe", "RuntimePin": "runtime", "Hardware": "hardware"}.get(model, model)
    where = lines.of(table, *loc)
    field = ".".join([table, *loc])
    if err["type"] == "extra_forbidden":
        return f"{shown}:{where}: unknown key {field}"
    if err["type"] == "missing":
        return f"{shown}:{lines.of(table)}: missing required key {field}"
    msg = err["msg"].removeprefix("Value error, ")
    return f"{shown}:{where}: {field}: {msg}"


class KeyLines:
    """Line numbers of TOML keys and table headers, for messages and anchors.

    tomllib gives values but not positions; a light line scan is enough for the shapes a
    recipe uses: table headers, `key = value` and dotted keys. A key that cannot be located
    maps to the nearest enclosing table's line, never to a wrong key.
    """

    _HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
    _KEY = re.compile(r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""  # a bare or quoted key,
                      r"""(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*=""")  # then dotted parts

    def __init__(self, text: str):
        self._lines: dict[tuple[str, ...], int] = {}
        table: tuple[str, ...] = ()
        open_string = None  # the delimiter of a multi-line string the scan is inside
        for number, line in enumerate(text.splitlines(), start=1):
            if open_string is not None:  # a line of a multi-line string value is text, not a key
                if line.count(open_string) % 2:
                    open_string = None
                continue
            for delimiter in ('"""', "'''"):
                if line.count(delimiter) % 2:
                    open_string = delimiter
                    break
            header = self._HEADER.match(line)
            if header and not line.lstrip().startswith("[["):
                table = self._split(header.group(1))
                self._lines.setdefault(table, number)
                continue
            key = self._KEY.match(line)
            if key:
                full = table + self._split(key.group(1))
                for i in range(len(table) + 1, len(full) + 1):
                    self._lines.setdefault(full[:i], number)

    @staticmethod
    def _split(dotted: str) -> tuple[str, ...]:
        return tuple(part.strip().strip("\"'") for part in re.split(r"\.(?=(?:[^\"']|\"[^\"]*\"|'[^']*')*$)", dotted))

    def of(self, *key: str) -> int:
        for end in range(len(key), 0, -1):
            if key[:end] in self._lines:
                return self._lines[key[:end]]
        return 1
