"""Facts extracted from one module: plain frozen dataclasses and tuples, cheap to pickle.

Facts, not trees, are what the analysis keeps and caches: a warm run loads these and never
imports libcst. Expressions and statements of function bodies are kept in the typed IR of
srcreview.index.ir, so that the call graph, the interpreter and the checks work from the
cache alone.
"""

from __future__ import annotations

import pickle
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, TypeVar

if sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # pragma: no cover
    from typing_extensions import dataclass_transform

from srcreview.core.errors import SourceUnavailable
from srcreview.index.ir import Expr, Stmt

# Bump whenever the shape or meaning of any fact changes: cached facts of another version are
# rebuilt, never reused.
SCHEMA_VERSION = 14  # 14: a class says whether its body binds only what its facts list

# The local name of a module's own statements (what runs at import), kept as a function: not an
# identifier, so it never meets a name the module defines.
MODULE_CODE = "<module>"


class _Unknown:
    """The value of a constant the extractor could not evaluate statically."""

    _instance: _Unknown | None = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __reduce__(self):
        return (_Unknown, ())

    def __bool__(self) -> bool:  # an unknown value must never pass as false or true silently
        raise TypeError("UNKNOWN has no truth value")


UNKNOWN: Any = _Unknown()

# How a body stored unconverted becomes IR, by the type it is stored as: PendingBody (the source
# of a function `ast` read; registered by srcreview.index.builder) or bytes (a converted body
# pickled in a cache entry, without its 4-byte checksum; registered by srcreview.index.cache).
# Registered by those modules, which importing any module of srcreview.index imports, so that
# facts stay plain data that imports neither.
BODY_LOADERS: dict[type, Callable[[Any], tuple[Stmt, ...]]] = {}


_F = TypeVar("_F")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def _fact(cls: type[_F]) -> type[_F]:
    """A frozen, slotted dataclass that pickles as (class, field values), like the IR's nodes: a
    cold review loads every fact the parse-ahead worker built, and the dataclass default
    (`__setstate__` reading `fields()` per object) cost a tenth of a second there."""
    cls = dataclass(frozen=True, slots=True)(cls)
    names = tuple(f.name for f in fields(cls))  # type: ignore[arg-type]  # a dataclass from the line above
    cls.__reduce__ = (  # type: ignore[method-assign]  # object's __reduce__, replaced on purpose
        lambda self: (type(self), tuple(getattr(self, name) for name in names)))
    return cls


@_fact
class ImportFact:
    """`import a.b as c` / `from .x import y as z`: the local name and what it refers to.

    `target` is the absolute dotted name the local name stands for: a module
    (`vllm.envs`) or a module attribute (`vllm.config.VllmConfig`); `is_module` tells which
    kind of import it was (an attribute import may still name a submodule).
    """

    local: str
    target: str
    line: int
    is_module: bool
    scope: str = ""  # "" for module level, else the qualname of the function it sits in


@_fact
class Param:
    name: str
    annotation: str | None
    default: str | None
    kind: str  # "positional", "keyword", "vararg", "kwarg"
    annotation_expr: Expr | None = None


@_fact
class FieldFact:
    """A class-body declaration `name: annotation = default` (dataclass, pydantic, @config or plain)."""

    name: str
    owner: str  # qualname of the declaring class
    annotation: str | None
    default: str | None
    docstring: str | None
    start_line: int
    end_line: int
    classvar: bool = False
    annotation_expr: Expr | None = None
    default_expr: Expr | None = None
    value: Any = UNKNOWN  # the default's literal value when it is one (strings, numbers, lists of them)


@_fact
class PendingBody:
    """A function body not converted to the IR yet (srcreview.index.builder.convert_body):
    the module's source, shared by all its functions (one copy in memory and in a cache entry),
    and where the `def` stands."""

    source: bytes
    qualname: str
    line: int  # of the `def`
    col: int
    start: int  # offsets of the function's lines in `source`: from its `def` line to its last line
    stop: int


@dataclass(frozen=True, slots=True, eq=False)  # pickled by its own __getstate__ (bodies stay bytes)
class FunctionFacts:
    """A function or method, with its body in the statement IR.

    A body becomes IR when it is first read (`body`): a review reads about one body in eight of
    the modules it loads. Extracted through `ast`, a body starts pending (PendingBody: converted
    by srcreview.index.builder.convert_body, and cached that way); one already converted is
    cached pickled, and unpickled when read. That pickle carries its CRC-32, checked when the
    entry is loaded (`body_intact`), so a damaged entry is rebuilt like any other.
    """

    qualname: str  # module-relative: "MTPSpeculator.load_draft_model", "init_speculator"
    name: str
    owner: str | None  # class qualname for methods
    params: tuple[Param, ...]
    decorators: tuple[str, ...]
    returns: str | None
    start_line: int
    end_line: int
    stored_body: tuple[Stmt, ...] | bytes | PendingBody = field(repr=False)  # read through `body`
    imports: tuple[ImportFact, ...] = ()
    is_async: bool = False
    posonly: int = 0  # how many of the first positional parameters are positional-only (before `/`)

    @property
    def body(self) -> tuple[Stmt, ...]:
        stored = self.stored_body
        if isinstance(stored, (PendingBody, bytes)):
            pending = isinstance(stored, PendingBody)
            load = BODY_LOADERS[type(stored)]
            try:
                stored = load(stored) if isinstance(stored, PendingBody) else load(stored[4:])
            except Exception:  # noqa: BLE001 - neither parser takes it, or a crafted entry that passed its checksum
                raise SourceUnavailable(f"the {'facts' if pending else 'cached facts'} of {self.qualname} do not load; "
                                        "remove the facts directory of the srcreview cache") from None
            object.__setattr__(self, "stored_body", stored)  # converted once: a cache of the same value
        return stored

    def body_intact(self) -> bool:
        stored = self.stored_body
        return not isinstance(stored, bytes) or (
            len(stored) >= 4 and zlib.crc32(memoryview(stored)[4:]) == int.from_bytes(stored[:4], "big"))

    def __getstate__(self):
        stored = self.stored_body
        if not isinstance(stored, (bytes, PendingBody)):
            payload = pickle.dumps(stored, protocol=pickle.HIGHEST_PROTOCOL)
            stored = zlib.crc32(payload).to_bytes(4, "big") + payload
        return [stored if name == "stored_body" else getattr(self, name) for name in _FUNCTION_FIELDS]

    def __setstate__(self, state):
        for name, value in zip(_FUNCTION_FIELDS, state, strict=True):
            object.__setattr__(self, name, value)

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.body == other.body and all(
            getattr(self, name) == getattr(other, name) for name in _FUNCTION_FIELDS if name != "stored_body")

    @property
    def is_property(self) -> bool:
        return any(d in ("property", "cached_property", "functools.cached_property") or d.endswith(".setter")
                   for d in self.decorators)

    @property
    def is_staticmethod(self) -> bool:
        return "staticmethod" in self.decorators

    @property
    def is_classmethod(self) -> bool:
        return "classmethod" in self.decorators

    @property
    def kwargs_param(self) -> str | None:
        return next((p.name for p in self.params if p.kind == "kwarg"), None)


_FUNCTION_FIELDS = tuple(f.name for f in fields(FunctionFacts))


@_fact
class InstanceAttr:
    """`self.attr = value` (or `self.attr: annotation = value`) in a method of the class."""

    attr: str
    value: Expr | None
    annotation: str | None
    line: int
    method: str  # qualname of the method it is assigned in


@_fact
class ClassFacts:
    qualname: str
    name: str
    bases: tuple[str, ...]  # base expressions as written ("AutoRegressiveSpeculator", "enum.Enum")
    decorators: tuple[str, ...]
    start_line: int
    end_line: int
    fields: tuple[FieldFact, ...]
    methods: tuple[str, ...]  # names of functions defined in the body (qualname = f"{qualname}.{name}")
    keywords: tuple[tuple[str, str], ...] = ()  # class keywords as written: (("metaclass", "M"),)
    docstring: str | None = None
    instance_attrs: tuple[InstanceAttr, ...] = ()  # every `self.attr = ...` in the class's methods
    body_closed: bool = False  # its body binds only the fields, methods and classes listed (no `if`, loop, import)

    def field(self, name: str) -> FieldFact | None:
        return next((f for f in self.fields if f.name == name), None)


@_fact
class ConstantFact:
    """A module-level assignment: `NAME = value` or `NAME: T = value` (also type aliases)."""

    name: str
    value: Any  # the literal value (str, numbers, tuples/lists/sets/dicts of them) or UNKNOWN
    text: str
    start_line: int
    end_line: int
    expr: Expr | None = None
    annotation: str | None = None
    guard: str | None = None  # test text of an enclosing module-level `if` ("TYPE_CHECKING"), "try", ...
    reassigned: bool = False  # bound more than once at module level: its value is not static


@_fact
class ModuleFacts:
    module: str  # dotted: "vllm.v1.worker.gpu.spec_decode"
    path: str  # tree-relative: "vllm/v1/worker/gpu/spec_decode/__init__.py"
    blob_id: str
    schema: int = SCHEMA_VERSION
    imports: tuple[ImportFact, ...] = ()
    classes: dict[str, ClassFacts] = field(default_factory=dict)
    functions: dict[str, FunctionFacts] = field(default_factory=dict)
    constants: dict[str, ConstantFact] = field(default_factory=dict)
    all_names: tuple[str, ...] | None = None  # __all__ when literal
    parse_error: str | None = None

    @property
    def is_package(self) -> bool:
        return self.path.endswith("/__init__.py")

    def import_map(self, scope: str = "") -> dict[str, str]:
        """Local name -> absolute target, module-level imports overlaid by those of `scope`."""
        mapping = {i.local: i.target for i in self.imports if not i.scope}
        if scope:
            func = self.functions.get(scope)
            parts = scope.split(".")
            # imports of enclosing functions, outermost first
            for n in range(1, len(parts) + 1):
                enclosing = self.functions.get(".".join(parts[:n]))
                if enclosing is not None:
                    mapping.update({i.local: i.target for i in enclosing.imports})
            if func is not None:
                mapping.update({i.local: i.target for i in func.imports})
        return mapping
