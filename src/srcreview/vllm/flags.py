"""Command-line flags to engine keys, as the pinned revision's argument parser defines them.

vLLM registers its flags in `EngineArgs.add_cli_args` (`--max-model-len`, `-q`), in
`AsyncEngineArgs.add_cli_args`, and for `vllm serve` in `make_arg_parser` plus the fields of
`FrontendArgs` (`--host`, `--port`, ...). A flag's engine key is argparse's `dest` (its `dest=`
or its first long name, dashes as underscores), which `EngineArgs.from_cli_args` reads back
as the field of that name. Whether it takes a value follows its `action` or, for the
`**get_kwargs(Config)[name]` registrations, the EngineArgs field's annotation (a `bool`
field is a `BooleanOptionalAction`: `--x` / `--no-x`), and the value is typed by that
annotation as `_compute_kwargs` reads it (a `dict` or config dataclass as JSON; a list, in its
order of checks, as `nargs='+'`). Where the parser types a value with a function of its own (an
explicit `type=`, or `_compute_kwargs`' per-name choice such as `human_readable_int_or_auto`
for `max_model_len`), the word is handed to that function by the safe evaluator
(srcreview.interp.evaluate_function); a result it cannot decide leaves the value unknown, never
refused. argparse's unique-prefix matching (`--tensor-parallel` for `--tensor-parallel-size`)
is applied where the revision's parser allows it (srcreview.vllm.argv_forms). Everything is read
from the index's facts of that revision, never from a list of ours.

A flag the revision does not register becomes a setting under its dest-like key, so the
`engine-key-exists` rule reports it as an unknown knob with the closest declared name.

Before that, the words go through the rewrites the revision's own `parse_args` makes
(srcreview.vllm.argv_forms: `-O3`, dotted `-cc.x=v`, `--x_y`), in its order: dotted arguments
are merged per written key and placed last, replacing a JSON value of the same flag (a note
says so); `--model X` is the served model; a YAML `key: false` is `--no-key` only where that
is registered. A form the revision's parser does not let us read is open, never unknown.
Values the shell decides (UnknownValue) pass through untyped.
"""

from __future__ import annotations

import json
import re
import weakref
from dataclasses import dataclass
from typing import Any

from srcreview.core import jsonvalue
from srcreview.core.errors import DataError
from srcreview.model.recipe.model import (
    MAX_SETTINGS,
    OpenItem,
    Recipe,
    ServerOption,
    Setting,
    normalize_key,
)
from srcreview.model.recipe.shell_values import UnknownValue, holds_placeholder
from srcreview.vllm.anchors import (  # noqa: F401 - vLLM's names, re-exported for modules importing them from here
    ENGINE_CLASS,
    FRONTEND_CLASS,
    KWARGS_BUILDER,
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
    parser_type: str | None = None  # qualname of the function argparse types the value with, if vLLM's own


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
    by_name = _per_name_types(index)
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
            spread = None in {k.name for k in call.keywords}  # **get_kwargs(Config)[name]
            if action is None and spread and _is_bool(annotation):
                action = "optional"  # **get_kwargs(...): a bool field is a BooleanOptionalAction
            parser_type = _type_function(index, symbol, kwargs.get("type")) or (by_name.get(dest) if spread else None)
            flag = FlagDef(dest=dest, engine=field is not None and not serve,
                           boolean=action in ("store_true", "store_false", "optional"),
                           negatable=action == "optional", many=nargs in ("+", "*") or _is_list(annotation),
                           annotation=annotation, where=f"{symbol.path}:{call.line}", parser_type=parser_type)
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


def _members(annotation: str | None) -> list[str]:
    """The members of an annotation's top-level union (`X | None`, `Optional[X]`, `Union[X, Y]`)."""
    text = (annotation or "").strip()
    match = re.fullmatch(r"(?:typing\.)?(Optional|Union)\[(.*)\]", text, re.S)
    if match:
        return [m for part in _split_top(match.group(2), ",") for m in _members(part)]
    return [m.strip() for m in _split_top(text, "|") if m.strip()]


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for n, char in enumerate(text):
        depth += char in "[(" and 1 or -(char in "])" and 1)
        if char == sep and depth == 0:
            parts.append(text[start:n])
            start = n + 1
    return parts + [text[start:]]


def _head(member: str) -> str:
    return member.split("[", 1)[0].strip().removeprefix("typing.")


def _is_list(annotation: str | None) -> bool:
    """`_compute_kwargs`' order: a dataclass, a bool, a Literal or a tuple is read before a list,
    which becomes `nargs='+'` (its items typed as the list's item type, a union as str)."""
    heads = [_head(m) for m in _members(annotation)]
    if not heads or any(h in ("bool", "Literal", "tuple") or h.endswith("Config") for h in heads):
        return False
    return "list" in heads


def _list_item(annotation: str | None) -> str:
    """The item type `collection_to_kwargs` gives each word of a list flag (a union: str)."""
    member = next((m for m in _members(annotation) if _head(m) == "list"), "")
    inner = member[member.find("[") + 1:member.rfind("]")] if "[" in member else "str"
    return "str" if len(_members(inner)) > 1 else inner.strip() or "str"


def _per_name_types(index) -> dict[str, str]:
    """Field name -> the qualname of the function `_compute_kwargs` makes its `type=` (its
    `if name == "max_model_len": kwargs[name]["type"] = human_readable_int_or_auto` and
    `elif name in <set literal>:` branches), as the revision writes them."""
    from srcreview.index import ir

    out: dict[str, str] = {}
    for symbol in _find(index, KWARGS_BUILDER):
        fn = index.function(symbol.qualname)
        if fn is None:
            continue
        sets = {t.id: {e.value for e in s.value.elts if isinstance(e, ir.Constant)}
                for s in ir.iter_statements(fn.facts.body)
                if isinstance(s, ir.Assign) and isinstance(s.value, ir.Seq) and s.value.kind == "set"
                for t in s.targets if isinstance(t, ir.Name)}
        for stmt in ir.iter_statements(fn.facts.body):
            if not (isinstance(stmt, ir.If) and isinstance(stmt.test, ir.Compare) and len(stmt.test.ops) == 1):
                continue
            test = stmt.test
            names: set = set()
            if test.ops[0] == "==" and isinstance(test.comparators[0], ir.Constant):
                names = {test.comparators[0].value}
            elif test.ops[0] == "in" and isinstance(test.comparators[0], ir.Name):
                names = sets.get(test.comparators[0].id, set())
            target = next((_type_function(index, symbol, s.value) for s in stmt.body
                           if isinstance(s, ir.Assign) and s.value is not None
                           and any(isinstance(t, ir.Subscript) and [getattr(i, "value", None) for i in t.index]
                                   == ["type"] for t in s.targets)), None)
            for name in names:
                if target and isinstance(name, str):
                    out.setdefault(name, target)
    return out


def _type_function(index, symbol, expr) -> str | None:
    """The qualname of a `type=` that names a function of the tree (not a builtin such as int)."""
    from srcreview.index.ir import dotted

    name = dotted(expr) if expr is not None else None
    if not name or name in ("int", "float", "str", "bool"):
        return None
    target = index.resolve_name(symbol.module, name, symbol.local)
    return target.qualname if target is not None and target.kind == "function" else None


# ---------------------------------------------------------------------------------------------
# mapping


def map_flags(recipe: Recipe, index) -> Recipe:
    """`recipe` with its raw flags turned into settings and server options (see module doc),
    after the rewrites the revision's own parser makes (srcreview.vllm.argv_forms)."""
    from srcreview.vllm.argv_forms import diverting_flags, parser_forms

    table = flag_table(index)
    forms = parser_forms(index)
    shown = recipe.source_file
    settings: dict[str, Setting] = {s.key: s for s in recipe.settings}
    server: list[ServerOption] = list(recipe.server_options)
    open_items: list[OpenItem] = list(recipe.open)
    notes: list[OpenItem] = list(recipe.notes)
    positionals: list = []
    dotted: dict[str, list] = {}  # written key (-cc, --compilation-config) -> [(raw, path, value)], in order
    info = recipe.info
    diverting = diverting_flags(index)
    for raw in recipe.flags:
        raw = _rewritten(raw, forms)
        if raw is None:
            continue
        if raw.flag in diverting:
            open_items.append(OpenItem(what=raw.flag, line=raw.line, incomplete=True, reason=(
                f"the vllm command hands a command line holding {raw.flag} to another program before any "
                f"parser reads it ({diverting[raw.flag]}): what that program starts is not reviewed")))
            positionals += _placed(raw.following[1:] if raw.value is None else raw.following, raw)
            continue
        if _is_dotted(raw.flag):
            if not forms.dotted:
                open_items.append(OpenItem(what=raw.flag, line=raw.line, reason=_unsettled(forms, "dotted arguments")))
                positionals += _placed(raw.following[1:] if raw.value is None else raw.following, raw)
                continue
            base, _, sub = raw.flag.partition(".")
            following = list(raw.following)
            if raw.value is not None:
                value = raw.value
            elif following:
                value = following.pop(0)
            else:
                raise DataError(f"{shown}:{raw.line}: {raw.flag} expects a value")
            positionals += _placed(following, raw)
            dotted.setdefault(base, []).append((raw, sub, _dotted_value(value, sub, forms)))
            continue
        if raw.flag.startswith("-O") and raw.flag != "-O" and not forms.optimization_flag and raw.flag not in table:
            open_items.append(OpenItem(what=raw.flag, line=raw.line, reason=_unsettled(forms, "-O<level>")))
            positionals += _placed(raw.following, raw)
            continue
        base = raw.flag
        if not forms.found and base.startswith("--") and "_" in base and base not in table:
            open_items.append(OpenItem(what=raw.flag, line=raw.line,
                                       reason=_unsettled(forms, "underscored flag names")))
            positionals += _placed(raw.following[1:] if raw.value is None else raw.following, raw)
            continue
        flag, negated = table.get(base), False
        if flag is None and base.startswith("--no-"):
            positive = table.get("--" + base[5:])
            if positive is not None and positive.negatable:
                flag, negated = positive, True
        if flag is None and base.startswith("--") and base not in table:
            matches = _prefix_matches(base, table)
            if matches and forms.abbreviations is not True:
                open_items.append(OpenItem(what=raw.flag, line=raw.line, reason=(
                    f"{raw.flag} is a prefix of {', '.join(m for m, _, _ in matches[:3])}: "
                    + _unsettled(forms, "abbreviated options"))))
                positionals += _placed(raw.following[1:] if raw.value is None else raw.following, raw)
                continue
            if len(matches) > 1:
                several = len({(f.dest, n) for _, f, n in matches}) > 1
                open_items.append(OpenItem(what=raw.flag, line=raw.line, reason=(
                    f"{raw.flag} abbreviates {len(matches)} options ({', '.join(m for m, _, _ in matches[:4])}): "
                    + ("argparse refuses an ambiguous abbreviation" if several else
                       "aliases of one option; whether argparse calls that ambiguous depends on its Python"))))
                positionals += _placed(raw.following[1:] if raw.value is None else raw.following, raw)
                continue
            if matches:  # argparse's allow_abbrev (its default): the one option it is a prefix of
                full, flag, negated = matches[0]
                raw = raw.model_copy(update={"flag": f"{raw.flag} (abbreviates {full})"})
        following = list(raw.following)
        if isinstance(raw.value, bool) and flag is not None and flag.boolean:
            # a YAML config's `key: true` is `--key`; `key: false` is `--no-key` where that is
            # registered, otherwise nothing (vLLM's load_config_file)
            if not raw.value and (negated or not flag.negatable):
                notes.append(OpenItem(what=raw.flag, line=raw.line, reason=f"{raw.flag.lstrip('-')}: false is "
                                      f"dropped: vLLM passes a false value only as a registered --no- flag"))
                continue
            value = raw.value != negated
        elif raw.value is not None:
            value = raw.value  # `--x=v`, or a YAML config's value
            if flag is not None and flag.many and not isinstance(value, list):
                value = [value]  # nargs='+': `--x=v` (and a YAML scalar, passed as `--x v`) is [v]
        elif flag is not None and flag.boolean:
            value = not negated
        elif flag is not None and flag.many:
            value, following = following, []
            if not value:
                raise DataError(f"{shown}:{raw.line}: {raw.flag} expects a value")
        elif following:
            value = following.pop(0)
        elif flag is None:
            value = True  # an unknown bare flag: reported as an unknown knob below
        else:
            raise DataError(f"{shown}:{raw.line}: {raw.flag} expects a value")
        positionals += _placed(following, raw)
        if flag is not None and flag.engine and flag.dest == "model":
            # `--model X` names the served model, as the positional does (vllm serve moves it there;
            # the older api_server entry point reads it as EngineArgs.model)
            info = _served_model(info, value, raw, shown, open_items)
            continue
        if flag is not None and not flag.engine:
            server.append(ServerOption(flag=raw.flag, value=value, line=raw.line))
            continue
        if flag is None:
            key = normalize_key(base.lstrip("-"))
            annotation = None
        else:
            key, annotation = flag.dest, flag.annotation
        if flag is not None and flag.parser_type:
            typed = _parser_typed(index, flag, value, annotation, shown, raw)
        else:
            typed = _typed(value, annotation, shown, raw.line, raw.flag)
        for setting in _settings(key, typed, raw, shown):
            settings.pop(setting.key, None)  # argparse: the last occurrence wins
            settings[setting.key] = setting
            if len(settings) > MAX_SETTINGS:
                raise DataError(f"{shown}:{raw.line}: more than {MAX_SETTINGS} engine settings; a vLLM recipe has tens")
    for written, leaves in dotted.items():  # appended after the command line, in first-use order
        _place_dotted(written, leaves, table, settings, notes, shown, forms.source)
    for word, line, before in positionals:
        if isinstance(word, UnknownValue):
            may_set = tuple(k for k, s in settings.items() if (s.line, s.column or 0) <= before) if word.split else ()
            open_items.append(OpenItem(what=str(word), line=line, may_set=may_set, reason=(
                f"{word.reason}; unquoted, the shell may make flags of it, and they win over the ones before"
                if word.split else f"a word after the flags: {word.reason}")))
            continue
        if info.model is None:
            info = info.model_copy(update={"model": word})
            continue
        hint = ("; a backslash followed by a space (not by the end of the line) makes such a word"
                if isinstance(word, str) and not word.strip() else "")
        raise DataError(f"{shown}:{line}: unexpected word {str(word)[:60]!r} (vllm serve takes one model, and "
                        f"argparse refuses an extra argument{hint})")
    ordered = tuple(sorted(settings.values(), key=lambda s: (s.line, s.column or 0)))
    return recipe.model_copy(update={"settings": ordered, "flags": (), "server_options": tuple(server),
                                     "info": info, "open": tuple(open_items), "notes": tuple(notes)})


def _prefix_matches(word: str, table) -> list[tuple]:
    """(option, flag, negated) for every option string argparse would match `word` against as
    an abbreviation (each long option, and the `--no-` form of a negatable one)."""
    out = []
    for name, flag in table.items():
        if name.startswith("--") and name.startswith(word):
            out.append((name, flag, False))
        if flag.negatable and name.startswith("--") and ("--no-" + name[2:]).startswith(word):
            out.append(("--no-" + name[2:], flag, True))
    return sorted(out, key=lambda m: m[0])


def _parser_typed(index, flag: FlagDef, value: Any, annotation: str | None, shown: str, raw) -> Any:
    """A word typed by the parser's own `type=` function, run by the safe evaluator. A plain
    decimal integer for an int field is that integer (what every integer parser of vLLM's returns
    for it); any other word the evaluator cannot decide is unknown, so no check refuses it."""
    from srcreview.interp.domain import install
    from srcreview.interp.queries import evaluate_function
    from srcreview.vllm.domain import VLLM

    install(VLLM)  # the evaluator's framework model (mapping flags precedes the review's walks)
    if isinstance(value, list):
        return [_parser_typed(index, flag, item, _list_item(annotation), shown, raw) for item in value]
    parser_type = flag.parser_type
    if not isinstance(value, str) or parser_type is None:
        return value
    fn = index.function(parser_type)
    params = [p.name for p in fn.facts.params if p.kind == "positional"] if fn is not None else []
    if params:
        outcome = evaluate_function(index, parser_type, {}, args={params[0]: value})
        if outcome.decided:
            return outcome.value
    if _words(annotation) == {"int"} and _INT.fullmatch(value.strip()):
        return int(value)
    short = parser_type.rsplit(".", 1)[-1]
    return UnknownValue(text=value, reason=(
        f"vLLM's parser types it with {short}(), which srcreview cannot evaluate for {value!r}"))


def _placed(words, raw) -> list[tuple]:
    """Words left after a flag, with the line and position they are at (what is before them)."""
    return [(word, raw.line, (raw.line, raw.column or 0)) for word in words]


def _is_dotted(flag: str) -> bool:
    """`--compilation-config.mode`, `-cc.pass_config.x`: a dotted argument (a `.` in the name)."""
    return flag.startswith("-") and "." in flag.lstrip("-")[1:]


def _rewritten(raw, forms):
    """The flag as the revision's parse_args hands it to argparse: underscores as dashes in a
    long name (up to the first `.`), `-O<level>` / `-O=<level>` / `-O <n>` as the optimization
    flag. None when nothing is left of it."""
    flag = raw.flag
    if forms.underscores and flag.startswith("--"):
        head, dot, rest = flag[2:].partition(".")
        flag = "--" + head.replace("_", "-") + dot + rest
    if forms.optimization_flag and flag.startswith("-O") and not flag.startswith("--"):
        if flag != "-O":
            level = flag[2:] + ("" if raw.value is None else f"={raw.value}")
            return raw.model_copy(update={"flag": forms.optimization_flag, "value": level})
        if raw.value is not None:
            return raw.model_copy(update={"flag": forms.optimization_flag})
        if raw.following and raw.following[0] in forms.optimization_levels:
            return raw.model_copy(update={"flag": forms.optimization_flag})
    return raw if flag == raw.flag else raw.model_copy(update={"flag": flag})


def _unsettled(forms, what: str) -> str:
    if not forms.found:
        return f"how this revision's parser reads {what} is not settled: " + "; ".join(forms.missing)
    return f"how this revision's parser reads {what} is not settled: {forms.where} shows no such rewrite"


def _dotted_value(value: Any, sub: str, forms) -> Any:
    """A dotted argument's value as parse_args reads it: `key+` splits on commas into a list;
    else JSON, else a human-readable int (1k, 80g), else the text."""
    if isinstance(value, UnknownValue) or not isinstance(value, str):
        return value
    if forms.list_suffix and sub.endswith(forms.list_suffix):
        return value.split(",")
    if forms.dotted_json:
        try:
            return jsonvalue.loads(value)
        except ValueError:
            pass
    if forms.dotted_human_int:
        number = _human_int(value)
        if number is not None:
            return number
    return value


def _human_int(text: str) -> int | None:
    """vLLM's human_readable_int: 1k = 1000, 1K = 1024, 25.6k = 25600, else a plain int."""
    text = text.strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([kKmMgGtT])", text)
    if match:
        number, suffix = match.groups()
        if suffix.islower():
            return int(float(number) * 10 ** (3 * "kmgt".index(suffix) + 3))
        return int(number) * 2 ** (10 * "KMGT".index(suffix) + 10) if "." not in number else None
    return int(text) if _INT.fullmatch(text) else None


def _place_dotted(written: str, leaves: list, table, settings: dict, notes: list, shown: str, source: str) -> None:
    """The dotted arguments of one written key, merged as parse_args merges them (nested keys
    merge, lists concatenate, a later scalar wins), in place of every value an earlier
    `<key> <json>` gave: they come last on argparse's command line, and the last value wins."""
    flag = table.get(written)
    key = flag.dest if flag is not None else normalize_key(written.lstrip("-"))
    merged: dict[tuple, tuple] = {}
    for raw, sub, value in leaves:
        path = tuple(sub.removesuffix("+").split("."))
        for leaf in list(_leaves(path, value)):
            at, item = leaf
            for old in [p for p in merged if p[:len(at)] == at and p != at or at[:len(p)] == p and p != at]:
                del merged[old]  # a scalar replaced by a mapping, or a mapping by a scalar
            if at in merged and isinstance(merged[at][0], list) and isinstance(item, list):
                item = merged[at][0] + item
            merged[at] = (item, raw)
    replaced = sorted({(s.line, re.sub(r"[.( ].*", "", s.written_as, flags=re.S)) for k, s in settings.items()
                       if k == key or k.startswith(key + ".")})
    for k in [k for k in settings if k == key or k.startswith(key + ".")]:
        del settings[k]
    if replaced:
        first = leaves[0][0]
        notes.append(OpenItem(what=replaced[0][1], line=replaced[0][0], reason=(
            f"replaced by the dotted {written}.… arguments (line {first.line}): vLLM's parser appends them as one "
            f"JSON value after the command line, and argparse keeps the last value"), source=source))
    for path, (value, raw) in merged.items():
        setting_key = ".".join((key,) + tuple(normalize_key(p) for p in path))
        written_as = raw.flag if raw.origin is None else f"{raw.flag} ({raw.origin})"
        settings.pop(setting_key, None)
        settings[setting_key] = Setting(key=setting_key, value=value, line=raw.line, column=raw.column,
                                        written_as=written_as)
    if len(settings) > MAX_SETTINGS:
        raise DataError(f"{shown}:{leaves[-1][0].line}: more than {MAX_SETTINGS} engine settings; "
                        "a vLLM recipe has tens")


def _leaves(path: tuple, value: Any, depth: int = 0):
    if depth > MAX_JSON_DEPTH:
        return
    if isinstance(value, dict) and value:
        for sub, item in value.items():
            yield from _leaves(path + (str(sub),), item, depth + 1)
        return
    yield path, value


def _served_model(info, value, raw, shown: str, open_items: list):
    """`--model X`: the served model (the positional one wins only if they agree)."""
    if isinstance(value, UnknownValue):
        open_items.append(OpenItem(what=f"{raw.flag} {value}", line=raw.line,
                                   reason=f"the served model: {value.reason}"))
        return info
    if not isinstance(value, str) or not value.strip():
        kind = "empty" if isinstance(value, str) else f"a {type(value).__name__}"
        raise DataError(f"{shown}:{raw.line}: {raw.flag} names the served model: it must be a model id or path, "
                        f"not {kind}")
    if info.model is not None and info.model != value:
        raise DataError(f"{shown}:{raw.line}: {raw.flag} {str(value)[:60]!r} and the positional model "
                        f"{info.model!r} both name the model")
    return info.model_copy(update={"model": value})


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
    if raw.origin:
        written = f"{written} ({raw.origin})"
    yield Setting(key=key, value=value, line=raw.line, column=raw.column, written_as=written)


def _typed(value: Any, annotation: str | None, shown: str, line: int, flag: str) -> Any:
    """A command-line word as the revision's parser types it (YAML values keep their type)."""
    words = _words(annotation)
    if isinstance(value, list) and _is_list(annotation):  # nargs: each word typed as the list's items
        return [_typed(item, _list_item(annotation), shown, line, flag) for item in value]
    if not isinstance(value, str):
        return value
    text = value.strip()
    if text.startswith("{") and (not words or "dict" in words or any(w.endswith("Config") for w in words)):
        try:
            return jsonvalue.loads(text)
        except json.JSONDecodeError as exc:
            if holds_placeholder(text) is not None:
                return holds_placeholder(text)  # {"model": <draft>}: the reader fills it in
            raise DataError(f"{shown}:{line}: {flag}: invalid JSON: {exc.msg} (column {exc.colno})") from None
        except ValueError as exc:  # nested past the stack, a number no JSON output holds
            raise DataError(f"{shown}:{line}: {flag}: invalid JSON: {exc}") from None
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
