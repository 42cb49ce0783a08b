"""Frozen, validated records: the data a warm `check` reads and writes, without pydantic.

A stored review is answered from the recipe, the stored Review and the gate; importing pydantic
and building its validators alone took longer than the whole of that answer (issue 17). These
records are frozen dataclasses whose fields are checked and converted by small validators
compiled once per class from the annotations: str, int, float, bool, None, Literal, unions,
`tuple[X, ...]`, `dict[K, V]`, Path, Any and other records (a list becomes a tuple, a mapping
the record it is declared as). Input is never coerced across types ("5" is not an int).

The API keeps the names of the pydantic subset the code uses (`model_validate`,
`model_validate_json`, `model_dump`, `model_dump_json`, `model_copy`, `model_json_schema`,
`model_fields`), with the same meaning, so a reader knows what each call does. A record can be
a field of a pydantic model (the analysis's own models): pydantic then validates it with
`model_validate` and dumps it with `model_dump`.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover
    from typing_extensions import dataclass_transform

_MISSING = dataclasses.MISSING
_R = TypeVar("_R", bound="Record")


class RecordError(ValueError):
    """Values that do not fit a record; `errors()` lists them as pydantic does (loc, msg, type)."""

    def __init__(self, title: str, errors: list[dict]):
        self.title = title
        self._errors = errors
        lines = [f"{len(errors)} validation error{'s' if len(errors) != 1 else ''} for {title}"]
        for err in errors:
            lines.append(".".join(str(p) for p in err["loc"]) or "(record)")
            lines.append(f"  {err['msg']}")
        super().__init__("\n".join(lines))

    def errors(self) -> list[dict]:
        return [dict(err) for err in self._errors]

    def error_count(self) -> int:
        return len(self._errors)


class _Invalid(Exception):
    """Inside validation: the errors found so far, locations relative to the value checked."""

    def __init__(self, errors: list[dict]):
        self.errors = errors


def _fail(msg: str, kind: str) -> _Invalid:
    return _Invalid([{"loc": (), "msg": msg, "type": kind}])


def Field(default: Any = _MISSING, *, default_factory: Callable[[], Any] | None = None, description: str = "",
          exclude: bool = False, repr: bool = True, omit_none: bool = False,  # noqa: A002 - pydantic's name
          alias: str | None = None) -> Any:
    """A field with what the schema and the dumps need: its `description`; `exclude`: never
    dumped; `omit_none`: dumped only when not None (readers of older outputs keep their bytes);
    `alias`: the key input uses (and `model_dump(by_alias=True)` writes), e.g. `in`."""
    metadata = {"description": description, "exclude": exclude, "omit_none": omit_none, "alias": alias}
    if default_factory is not None:
        return dataclasses.field(default_factory=default_factory, repr=repr, metadata=metadata)
    return dataclasses.field(default=default, repr=repr, metadata=metadata)


def field_validator(*names: str, mode: Literal["before", "after"] = "after") -> Callable[[Any], Any]:
    """A classmethod that checks (and may convert) the named fields: `before` sees the raw
    value, `after` the validated one. Raising ValueError refuses the value with its message."""

    def mark(method: Any) -> Any:
        function: Any = method.__func__ if isinstance(method, classmethod) else method
        function._record_fields = (names, mode)
        return classmethod(function)

    return mark


@dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(Field,))
class Record:
    """Base of the records: subclasses become frozen, keyword-only dataclasses.

    `_validated(self)` (optional) runs after every field is valid: raise ValueError to refuse the
    record as a whole, or set derived fields with `object.__setattr__`. `_prepare(cls, data)`
    (optional) reshapes the input mapping of `model_validate` before its keys are checked.
    (`dataclass_transform` tells type checkers what `__init_subclass__` makes of a subclass.)
    """

    _record_extra: ClassVar[str] = "forbid"  # or "ignore": unknown keys of model_validate's input are dropped
    # set on each subclass by __init_subclass__ (the first by dataclasses)
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]
    model_fields: ClassVar[dict[str, dataclasses.Field]]
    _record_doc: ClassVar[str | None]
    _required: ClassVar[frozenset[str]]
    _dumped: ClassVar[tuple[tuple[str, bool], ...]]
    _aliases: ClassVar[dict[str, str]]
    _prepares: ClassVar[bool]
    _record_plan: ClassVar[list | None]

    def __init_subclass__(cls, extra: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if extra is not None:
            cls._record_extra = extra
        cls._record_doc = cls.__dict__.get("__doc__")  # (dataclass writes its signature where there is none)
        dataclasses.dataclass(frozen=True, kw_only=True)(cls)
        cls.model_fields = {f.name: f for f in dataclasses.fields(cls)}
        cls._required = frozenset(name for name, f in cls.model_fields.items()
                                  if f.default is _MISSING and f.default_factory is _MISSING)
        cls._dumped = tuple((f.name, f.metadata.get("omit_none", False)) for f in cls.model_fields.values()
                            if not f.metadata.get("exclude"))
        cls._aliases = {f.metadata["alias"]: f.name for f in cls.model_fields.values() if f.metadata.get("alias")}
        cls._prepares = callable(getattr(cls, "_prepare", None))
        cls._record_plan = None

    def __post_init__(self) -> None:
        try:
            _validate_fields(self)
        except _Invalid as invalid:
            raise RecordError(type(self).__name__, invalid.errors) from None

    # -- reading
    @classmethod
    def model_validate(cls: type[_R], data: Any) -> _R:
        """The record `data` (a mapping of field names, or already one of these) describes."""
        try:
            return typing.cast(_R, _from_value(cls, data))
        except _Invalid as invalid:
            raise RecordError(cls.__name__, invalid.errors) from None

    @classmethod
    def model_validate_json(cls: type[_R], text: str | bytes) -> _R:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise RecordError(cls.__name__, [{"loc": (), "msg": f"invalid JSON: {exc}", "type": "json_invalid"}]) \
                from None
        return cls.model_validate(data)

    # -- writing
    def model_dump(self, *, mode: Literal["python", "json"] = "python", exclude: set[str] | None = None,
                   by_alias: bool = False, exclude_none: bool = False) -> dict:
        """The fields as a dict (`json`: JSON values only); `exclude` names top-level fields to
        leave out; `by_alias`: keys as input writes them; `exclude_none`: no top-level None."""
        data = _dump_record(self, mode == "json", exclude or ())
        if exclude_none:
            data = {k: v for k, v in data.items() if v is not None}
        if by_alias and self._aliases:
            names = {name: alias for alias, name in self._aliases.items()}
            data = {names.get(k, k): v for k, v in data.items()}
        return data

    def model_dump_json(self) -> str:
        return json.dumps(self.model_dump(mode="json"), ensure_ascii=False, separators=(",", ":"))

    def model_copy(self: _R, *, update: dict | None = None) -> _R:
        """A copy with `update`'s fields replaced (and validated: a copy is a record like any other)."""
        return dataclasses.replace(self, **(update or {}))

    # -- describing
    @classmethod
    def model_json_schema(cls) -> dict:
        """The JSON Schema (2020-12) of the record's JSON dump, nested records under `$defs`."""
        defs: dict[str, dict] = {}
        top = _record_schema(cls, defs)
        defs.pop(cls.__name__, None)
        return {**({"$defs": dict(sorted(defs.items()))} if defs else {}), **top}

    # -- inside pydantic models
    @classmethod
    def __get_pydantic_core_schema__(cls, source, handler):
        from pydantic_core import core_schema

        def dump(value, info):
            return value.model_dump(mode="json" if info.mode_is_json() else "python")

        return core_schema.no_info_plain_validator_function(
            cls.model_validate,
            serialization=core_schema.plain_serializer_function_ser_schema(dump, info_arg=True))

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema, handler):
        return cls.model_json_schema()


# -- validation ---------------------------------------------------------------------------------

def _from_value(cls: type[Record], data: Any) -> Record:
    if isinstance(data, cls):
        return data
    if not isinstance(data, (dict, typing.Mapping)):
        raise _fail(f"Input should be an object ({cls.__name__}), not {type(data).__name__}", "model_type")
    if cls._prepares:
        data = cls._prepare(dict(data))  # type: ignore[attr-defined]  # defined where _prepares is true
    if cls._aliases:
        data = {cls._aliases.get(key, key): value for key, value in data.items()}
    fields = cls.model_fields
    if not (data.keys() <= fields.keys() and cls._required <= data.keys()):
        errors = []
        if cls._record_extra == "forbid":
            errors += [{"loc": (key,), "msg": "Extra inputs are not permitted", "type": "extra_forbidden"}
                       for key in data if key not in fields]
        errors += [{"loc": (name,), "msg": "Field required", "type": "missing"}
                   for name in fields if name in cls._required and name not in data]
        if errors:
            raise _Invalid(errors)
        data = {key: value for key, value in data.items() if key in fields}
    try:
        return cls(**data)
    except RecordError as exc:
        raise _Invalid(exc.errors()) from None


def _validate_fields(record: Record) -> None:
    cls = type(record)
    plan = cls.__dict__["_record_plan"] or _compile(cls)
    errors = None
    values = record.__dict__
    for name, convert, checks in plan:
        value = values[name]
        try:
            new = checks(value) if checks is not None else convert(value)
        except _Invalid as invalid:
            errors = (errors or []) + [{**err, "loc": (name, *err["loc"])} for err in invalid.errors]
            continue
        except (ValueError, AssertionError) as exc:
            errors = (errors or []) + [{"loc": (name,), "msg": str(exc), "type": "value_error"}]
            continue
        if new is not value:
            values[name] = new
    if errors:
        raise _Invalid(errors)
    hook = getattr(record, "_validated", None)
    if hook is not None:
        try:
            hook()
        except ValueError as exc:
            raise _fail(str(exc), "value_error") from None


def _compile(cls: type[Record]) -> list:
    hints = typing.get_type_hints(cls)
    validators: dict[tuple[str, str], list] = {}
    for klass in reversed(cls.__mro__):
        for attr in vars(klass).values():
            function: Any = getattr(attr, "__func__", None)
            spec = getattr(function, "_record_fields", None)
            if spec is not None:
                for name in spec[0]:
                    validators.setdefault((name, spec[1]), []).append(getattr(cls, function.__name__))
    plan = []
    for f in dataclasses.fields(cls):
        convert = _converter(hints[f.name])
        before, after = validators.get((f.name, "before"), []), validators.get((f.name, "after"), [])
        plan.append((f.name, convert, _with_validators(before, convert, after) if before or after else None))
    cls._record_plan = plan
    return plan


def _with_validators(before: list, convert: Callable, after: list) -> Callable:
    """The whole check of a field that has validators: before ones, the type, after ones."""
    def check(value):
        for validator in before:
            value = validator(value)
        value = convert(value)
        for validator in after:
            value = validator(value)
        return value
    return check


_CONVERTERS: dict[Any, Callable] = {}


def _converter(annotation: Any) -> Callable[[Any], Any]:
    try:
        return _CONVERTERS[annotation]
    except (KeyError, TypeError):
        pass
    convert = _build_converter(annotation)
    try:
        _CONVERTERS[annotation] = convert
    except TypeError:
        pass
    return convert


def _identity(value):
    return value


def _scalar(kind: type, name: str, error: str) -> Callable:
    def convert(value):
        if isinstance(value, kind) and not (kind is not bool and isinstance(value, bool)):
            return value
        raise _fail(f"Input should be a valid {name}", error)
    return convert


def _float(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise _fail("Input should be a valid number", "float_type")


def _none(value):
    if value is None:
        return None
    raise _fail("Input should be None", "none_required")


def _path(value):
    if isinstance(value, Path):
        return value
    if isinstance(value, str):
        return Path(value)
    raise _fail("Input should be a path", "path_type")


def _build_converter(annotation: Any) -> Callable:
    if annotation is Any or annotation is object:
        return _identity
    if annotation is type(None) or annotation is None:
        return _none
    if annotation is str:
        return _scalar(str, "string", "string_type")
    if annotation is bool:
        return _scalar(bool, "boolean", "bool_type")
    if annotation is int:
        return _scalar(int, "integer", "int_type")
    if annotation is float:
        return _float
    if annotation is Path:
        return _path
    if isinstance(annotation, type) and issubclass(annotation, Record):
        return lambda value: _from_value(annotation, value)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        allowed = args

        def literal(value):
            if any(value == a and type(value) is type(a) for a in allowed):
                return value
            shown = " or ".join(repr(a) for a in allowed) if len(allowed) < 3 else \
                ", ".join(repr(a) for a in allowed[:-1]) + f" or {allowed[-1]!r}"
            raise _fail(f"Input should be {shown}", "literal_error")
        return literal
    if origin in (typing.Union, types.UnionType):
        options = [_converter(a) for a in args]
        if type(None) in args:  # X | None: None first, then X alone keeps X's message
            rest = [_converter(a) for a in args if a is not type(None)]

            def optional(value):
                if value is None:
                    return None
                return _first_of(rest, value)
            return optional
        return lambda value: _first_of(options, value)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            item = _converter(args[0])

            def sequence(value):
                if not isinstance(value, (list, tuple)):
                    raise _fail("Input should be a valid array", "tuple_type")
                return tuple(_at(item, v, n) for n, v in enumerate(value))
            return sequence
        items = [_converter(a) for a in args]

        def fixed(value):
            if not isinstance(value, (list, tuple)) or len(value) != len(items):
                raise _fail(f"Input should be an array of {len(items)} items", "tuple_type")
            return tuple(_at(c, v, n) for n, (c, v) in enumerate(zip(items, value, strict=True)))
        return fixed
    if origin is list:
        item = _converter(args[0]) if args else _identity

        def listing(value):
            if not isinstance(value, (list, tuple)):
                raise _fail("Input should be a valid list", "list_type")
            return [_at(item, v, n) for n, v in enumerate(value)]
        return listing
    if origin is dict or annotation is dict:
        key, val = (_converter(args[0]), _converter(args[1])) if args else (_identity, _identity)

        def mapping(value):
            if not isinstance(value, typing.Mapping):
                raise _fail("Input should be a valid dictionary", "dict_type")
            return {_at(key, k, k): _at(val, v, k) for k, v in value.items()}
        return mapping
    raise TypeError(f"records: no validator for the annotation {annotation!r}")


def _at(convert: Callable, value: Any, where: Any) -> Any:
    try:
        return convert(value)
    except _Invalid as invalid:
        raise _Invalid([{**err, "loc": (where, *err["loc"])} for err in invalid.errors]) from None


def _first_of(options: list[Callable], value: Any) -> Any:
    errors: list[dict] = []
    for option in options:
        try:
            return option(value)
        except _Invalid as invalid:
            errors += invalid.errors
    raise _Invalid(errors[:1] if len(options) == 1 else errors)


# -- dumping ------------------------------------------------------------------------------------

def _dump_record(record: Record, json_mode: bool, exclude) -> dict:
    data = {}
    values = record.__dict__
    for name, omit_none in type(record)._dumped:
        value = values[name]
        if (value is None and omit_none) or name in exclude:
            continue
        data[name] = value if type(value) in _PLAIN else _dump(value, json_mode)
    return data


_PLAIN = frozenset((str, int, float, bool, type(None)))


def _dump(value: Any, json_mode: bool) -> Any:
    kind = type(value)
    if kind in _PLAIN:
        return value
    if isinstance(value, Record):
        return _dump_record(value, json_mode, ())
    if kind is tuple or isinstance(value, tuple):
        items = [v if type(v) in _PLAIN else _dump(v, json_mode) for v in value]
        return items if json_mode else tuple(items)
    if isinstance(value, list):
        return [_dump(v, json_mode) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v, json_mode) for k, v in value.items()}
    if json_mode and isinstance(value, Path):
        return str(value)
    return value


# -- JSON Schema --------------------------------------------------------------------------------

def _record_schema(cls: type[Record], defs: dict) -> dict:
    hints = typing.get_type_hints(cls)
    properties, required = {}, []
    for f in dataclasses.fields(cls):
        if f.metadata.get("exclude"):
            continue
        node = _schema(hints[f.name], defs)
        if f.metadata.get("description"):
            node = {**node, "description": f.metadata["description"]}
        if f.default is not _MISSING:
            node = {**node, "default": _dump(f.default, True)}
        elif f.default_factory is not _MISSING:
            node = {**node, "default": _dump(f.default_factory(), True)}
        else:
            required.append(f.name)
        properties[f.name] = node
    schema: dict[str, Any] = {"additionalProperties": False} if cls._record_extra == "forbid" else {}
    if cls._record_doc:
        schema["description"] = " ".join(cls._record_doc.split())
    schema.update({"properties": properties, **({"required": required} if required else {}),
                   "title": cls.__name__, "type": "object"})
    return schema


def _schema(annotation: Any, defs: dict) -> dict:
    if annotation is Any or annotation is object:
        return {}
    simple = {str: "string", bool: "boolean", int: "integer", float: "number", type(None): "null", Path: "string"}
    if annotation in simple:
        return {"type": simple[annotation]}
    if isinstance(annotation, type) and issubclass(annotation, Record):
        if annotation.__name__ not in defs:
            defs[annotation.__name__] = {}  # a placeholder stops recursion
            defs[annotation.__name__] = _record_schema(annotation, defs)
        return {"$ref": f"#/$defs/{annotation.__name__}"}
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is Literal:
        kinds = {simple.get(type(a)) for a in args}
        return {"enum": list(args), **({"type": kinds.pop()} if len(kinds) == 1 and None not in kinds else {})}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [_schema(a, defs) for a in args]}
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": _schema(args[0], defs)}
        return {"type": "array", "prefixItems": [_schema(a, defs) for a in args],
                "minItems": len(args), "maxItems": len(args)}
    if origin is list:
        return {"type": "array", **({"items": _schema(args[0], defs)} if args else {})}
    if origin is dict or annotation is dict:
        value = _schema(args[1], defs) if args else {}
        return {"type": "object", **({"additionalProperties": value} if value else {})}
    raise TypeError(f"records: no schema for the annotation {annotation!r}")
