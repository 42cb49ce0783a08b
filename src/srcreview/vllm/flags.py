"""Command-line flags to engine keys, as the pinned revision's argument parser defines them.

vLLM registers its flags in `EngineArgs.add_cli_args` (`--max-model-len`, `-q`), in
`AsyncEngineArgs.add_cli_args`, and for `vllm serve` in `make_arg_parser` plus the fields of
`FrontendArgs` (`--host`, `--port`, ...). A flag's engine key is argparse's `dest` (its `dest=`
or its first long name, dashes as underscores), which `EngineArgs.from_cli_args` reads back
as the field of that name. Whether it takes a value follows its `action` or, for the
`**get_kwargs(Config)[name]` registrations, the EngineArgs field's annotation (a `bool`
field is a `BooleanOptionalAction`: `--x` / `--no-x`), and the value is typed by that
annotation (`int`, `float`, a `dict` or config dataclass as JSON). Everything is read from
the index's facts of that revision, never from a list of ours.

A flag the revision does not register becomes a setting under its dest-like key, so the
`engine-key-exists` rule reports it as an unknown knob with the closest declared name.
"""

from __future__ import annotations

import json
import re
import weakref
from dataclasses import dataclass
from typing import Any

from srcreview.core.errors import DataError
from srcreview.model.recipe.model import (
    MAX_SETTINGS,
    Recipe,
    ServerOption,
    Setting,
    normalize_key,
)
from srcreview.vllm.anchors import (  # noqa: F401 - vLLM's names, re-exported for modules importing them from here
    ENGINE_CLASS,
    FRONTEND_CLASS,
    PARSERS,
    SERVE_MARK,
    SERVE_PARSER,
)

MAX_JSON_DEPTH = 16
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


@dataclass(frozen=True)
class FlagDef:
    """One registered flag: the key it sets and how it reads its value."""

    dest: str
    engine: bool  # an EngineArgs field (reviewed); otherwise a server option (--host, --port)
    boolean: bool = False  # takes no value
    negatable: bool = False  # BooleanOptionalAction: --no-<name> too
    many: bool = False  # nargs '+' / '*' or a list-typed field: takes every following word
    annotation: str | None = None
    where: str = ""  # "path:line" of the registration


def flag_table(index) -> dict[str, FlagDef]:
    """Every flag of `vllm serve` at the revision of `index` (memoized per index)."""
    cache = _MEMO.setdefault(index, {})
    if "flags" not in cache:
        cache["flags"] = _flag_table(index)
    return cache["flags"]


_MEMO: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _flag_table(index) -> dict[str, FlagDef]:
    from srcreview.index.ir import Constant, dotted, iter_calls

    engine = _class(index, ENGINE_CLASS)
    engine_fields = {f.name: f for f in engine.fields} if engine is not None else {}
    table: dict[str, FlagDef] = {}
    functions = []
    for suffix in PARSERS:
        functions += [(s, False) for s in _find(index, suffix)]
    for symbol in _find(index, SERVE_PARSER):
        fn = index.function(symbol.qualname)
        consts = {a.value for call in iter_calls(fn.facts.body if fn else ()) for a in call.args
                  if isinstance(a, Constant)}
        if SERVE_MARK in consts:
            functions.append((symbol, True))
    for symbol, serve in functions:
        fn = index.function(symbol.qualname)
        for call in iter_calls(fn.facts.body if fn else ()):
            if not (dotted(call.func) or "").endswith("add_argument"):
                continue
            names = [a.value for a in call.args
                     if isinstance(a, Constant) and isinstance(a.value, str) and a.value.startswith("-")]
            if not names:
                continue
            kwargs = {k.name: k.value for k in call.keywords if k.name}
            dest = _const(kwargs.get("dest")) or _dest(names)
            field = engine_fields.get(dest)
            annotation = field.annotation if field is not None else None
            action = _action(kwargs.get("action"))
            nargs = _const(kwargs.get("nargs"))
            if action is None and None in {k.name for k in call.keywords} and _is_bool(annotation):
                action = "optional"  # **get_kwargs(...): a bool field is a BooleanOptionalAction
            flag = FlagDef(dest=dest, engine=field is not None and not serve,
                           boolean=action in ("store_true", "store_false", "optional"),
                           negatable=action == "optional", many=nargs in ("+", "*") or _is_list(annotation),
                           annotation=annotation, where=f"{symbol.path}:{call.line}")
            for name in names:
                table.setdefault(name, flag)
    frontend = _class(index, FRONTEND_CLASS)
    for field in (frontend.fields if frontend is not None else ()):
        if field.classvar:
            continue
        name = "--" + field.name.replace("_", "-")
        table.setdefault(name, FlagDef(dest=field.name, engine=False, boolean=_is_bool(field.annotation),
                                       negatable=_is_bool(field.annotation), many=_is_list(field.annotation),
                                       annotation=field.annotation))
    return table


def _find(index, suffix: str):
    try:
        return index.find(suffix, kind="function")
    except DataError:
        return []


def _class(index, name: str):
    try:
        return index.class_info(name)
    except DataError:  # ambiguous at this revision: no table from it rather than a guess
        return None


def _const(expr) -> Any:
    from srcreview.index.ir import Constant

    return expr.value if isinstance(expr, Constant) else None


def _action(expr) -> str | None:
    if expr is None:
        return None
    from srcreview.index.ir import Constant, dotted

    if isinstance(expr, Constant):
        return expr.value if expr.value in ("store_true", "store_false") else "other"

    return "optional" if (dotted(expr) or "").endswith("BooleanOptionalAction") else "other"


def _dest(names: list[str]) -> str:
    long = [n for n in names if n.startswith("--")]
    return (long[0] if long else names[0]).lstrip("-").replace("-", "_")


def _words(annotation: str | None) -> set[str]:
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", annotation or "")) - {"None", "Optional", "typing"}


def _is_bool(annotation: str | None) -> bool:
    return _words(annotation) == {"bool"}


def _is_list(annotation: str | None) -> bool:
    words = _words(annotation)
    return bool(words) and words <= {"list", "int", "str", "float"} and "list" in words


# ---------------------------------------------------------------------------------------------
# mapping


def map_flags(recipe: Recipe, index) -> Recipe:
    """`recipe` with its raw flags turned into settings and server options (see module doc)."""
    table = flag_table(index)
    shown = recipe.source_file
    settings: dict[str, Setting] = {s.key: s for s in recipe.settings}
    server: list[ServerOption] = list(recipe.server_options)
    positionals: list[str] = []
    for raw in recipe.flags:
        base, dot, sub = raw.flag.partition(".") if raw.flag.startswith("--") else (raw.flag, "", "")
        flag, negated = table.get(base), False
        if flag is None and base.startswith("--no-"):
            positive = table.get("--" + base[5:])
            if positive is not None and positive.negatable:
                flag, negated = positive, True
        following = list(raw.following)
        if raw.value is not None:
            value = raw.value
        elif flag is not None and flag.boolean:
            value = not negated
        elif flag is not None and flag.many and not dot:
            value, following = following, []
            if not value:
                raise DataError(f"{shown}:{raw.line}: {raw.flag} expects a value")
        elif following:
            value = following.pop(0)
        elif flag is None:
            value = True  # an unknown bare flag: reported as an unknown knob below
        else:
            raise DataError(f"{shown}:{raw.line}: {raw.flag} expects a value")
        positionals += following
        if flag is not None and not flag.engine:
            server.append(ServerOption(flag=raw.flag, value=value, line=raw.line))
            continue
        if flag is None:
            key = normalize_key(base.lstrip("-"))
            annotation = None
        else:
            key, annotation = flag.dest, flag.annotation
        if dot:
            key = f"{key}.{normalize_key(sub)}"
            typed = _scalar(value)
        else:
            typed = _typed(value, annotation, shown, raw.line, raw.flag)
        for setting in _settings(key, typed, raw, shown):
            settings.pop(setting.key, None)  # argparse: the last occurrence wins
            settings[setting.key] = setting
            if len(settings) > MAX_SETTINGS:
                raise DataError(f"{shown}:{raw.line}: more than {MAX_SETTINGS} engine settings; a vLLM recipe has tens")
    info = recipe.info
    if positionals:
        if info.model is None:
            info = info.model_copy(update={"model": positionals.pop(0)})
        if positionals:
            raise DataError(f"{shown}:{recipe.flags[0].line}: unexpected word {positionals[0][:60]!r} "
                            f"(vllm serve takes one model)")
    ordered = tuple(sorted(settings.values(), key=lambda s: (s.line, s.column or 0)))
    return recipe.model_copy(update={"settings": ordered, "flags": (), "server_options": tuple(server),
                                     "info": info})


def _settings(key: str, value: Any, raw, shown: str, depth: int = 0):
    """One setting, or one per leaf of a JSON object (`speculative_config.method`, ...)."""
    if depth > MAX_JSON_DEPTH:
        raise DataError(f"{shown}:{raw.line}: {raw.flag}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    if isinstance(value, dict) and value:
        for sub, item in value.items():
            if not isinstance(sub, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_-]*", sub):
                raise DataError(f"{shown}:{raw.line}: {raw.flag}: {str(sub)[:40]!r} is not a setting name")
            yield from _settings(f"{key}.{sub}", item, raw, shown, depth + 1)
        return
    written = raw.flag if "." not in key or "." in raw.flag else f"{raw.flag}.{key.split('.', 1)[1]}"
    yield Setting(key=key, value=value, line=raw.line, column=raw.column, written_as=written)


def _typed(value: Any, annotation: str | None, shown: str, line: int, flag: str) -> Any:
    """A command-line word as the revision's parser types it (YAML values keep their type)."""
    words = _words(annotation)
    if isinstance(value, list) and "list" in words:  # nargs: each word typed as the list's items
        inner = " | ".join(sorted(words - {"list", "str"})) if words - {"list", "str"} else "str"
        return [_typed(item, inner, shown, line, flag) for item in value]
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("{") and (not words or "dict" in words or any(w.endswith("Config") for w in words)):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise DataError(f"{shown}:{line}: {flag}: invalid JSON: {exc.msg} (column {exc.colno})") from None
    if words == {"int"} and _INT.fullmatch(text):
        return int(text)
    if words and words <= {"int", "float"} and _FLOAT.fullmatch(text):
        return float(text) if "float" in words else int(text) if _INT.fullmatch(text) else value
    if words == {"bool"} and text.lower() in ("true", "false"):
        return text.lower() == "true"
    if not words:  # no declaration to go by: numbers as numbers, as a JSON reader would
        return _scalar(value)
    return value


def _scalar(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if _INT.fullmatch(value.strip()):
        return int(value)
    if value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if _FLOAT.fullmatch(value.strip()) and "." in value:
        return float(value)
    return value


def at_revision(recipe, index):
    """The recipe with its command-line flags mapped to engine keys by the revision of `index`
    (a no-op for a TOML recipe)."""
    if not recipe.flags:
        return recipe
    return map_flags(recipe, index)
