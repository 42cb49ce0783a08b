"""Resolving a recipe key (`speculative_config.method`) to its declaration at the revision.

A top-level key is a field of the engine-arguments class; a nested key `a.b` is field `b`
of the config class that the container class (VllmConfig) declares for `a`, and `a.b.c` field
`c` of the config class `b` is declared as, and so on. Below a field declared as a mapping
(`limit_mm_per_prompt: dict[str, int]`) a key is one of its entries (`entry`): any name, its
value checked against the mapping's item type.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from srcreview.checks import CheckContext
from srcreview.checks._common import strip_optional

if TYPE_CHECKING:
    from srcreview.index.facts import FieldFact
    from srcreview.index.index import ClassInfo


@dataclass(frozen=True)
class KeyDecl:
    status: str  # "exists" | "entry" (of a mapping field: `field`) | "missing" | "undecided" | "stale"
    field: FieldFact | None = None  # the key's last part (set when it exists)
    owner: ClassInfo | None = None  # the class that declares/inherits it
    parent: FieldFact | None = None  # the container key's, for nested keys
    reason: str = ""
    suggestion: str = ""
    missing: tuple[str, ...] = ()


def resolve_key(ctx: CheckContext, key: str, engine_class: str, container_class: str) -> KeyDecl:
    def compute() -> KeyDecl:
        index = ctx.index
        engine = index.class_info(engine_class)
        if engine is None:
            return KeyDecl("stale", missing=(engine_class,))
        parts = key.split(".")
        top = engine.field(parts[0])
        if top is None:
            return KeyDecl("missing", owner=engine, reason=f"{parts[0]} is not a field of {engine_class}",
                           suggestion=_suggest(parts[0], [f.name for f in engine.fields]))
        if len(parts) == 1:
            return KeyDecl("exists", field=top, owner=engine)
        container = index.class_info(container_class)
        if container is None:
            return KeyDecl("stale", missing=(container_class,))
        holder = container.field(parts[0])
        nested = _config_class(ctx, container, holder)
        if nested is None:  # no config class (`speculative_config` is a dict in EngineArgs but one in VllmConfig)
            if holder is not None and _is_mapping(ctx, container, holder):
                return KeyDecl("entry", field=holder, owner=container, parent=top)
            if holder is None and _is_mapping(ctx, engine, top):
                return KeyDecl("entry", field=top, owner=engine, parent=top)
            return KeyDecl("undecided", parent=top,
                           reason=f"the config class of {parts[0]} is not resolved from {container_class}")
        for depth, part in enumerate(parts[1:], 1):
            field = nested.field(part)
            if field is None or field.classvar:
                return KeyDecl("missing", owner=nested, parent=top,
                               reason=f"{part} is not a field of {nested.symbol.local}",
                               suggestion=_suggest(part, [f.name for f in nested.fields if not f.classvar]))
            if depth == len(parts) - 1:
                return KeyDecl("exists", field=field, owner=nested, parent=top)
            if _is_mapping(ctx, nested, field):
                return KeyDecl("entry", field=field, owner=nested, parent=top)
            inner = _config_class(ctx, nested, field)
            if inner is None:
                return KeyDecl("undecided", parent=top, reason=(
                    f"{'.'.join(parts[:depth + 1])}: the config class of {part} is not resolved from "
                    f"{nested.symbol.local}"))
            nested = inner
        raise AssertionError("unreachable: the loop returns at the last part")

    return ctx.memoized(f"key:{engine_class}:{container_class}:{key}", compute)


def _config_class(ctx: CheckContext, owner: ClassInfo, field: FieldFact | None) -> ClassInfo | None:
    """The class a field is declared as (`SpeculativeConfig | None` -> SpeculativeConfig), if the tree has it."""
    name = strip_optional(field.annotation) if field is not None else None
    symbol = ctx.index.resolve_name(owner.symbol.module, name) if name and name.isidentifier() else None
    return ctx.index.class_info(symbol.qualname) if symbol is not None and symbol.kind == "class" else None


def _is_mapping(ctx: CheckContext, owner: ClassInfo, field: FieldFact) -> bool:
    """Whether every option of the field's declaration (None aside) is a mapping."""
    from srcreview.checks._common import owner_of
    from srcreview.vllm import declarations

    module = owner_of(ctx, owner, field).symbol.module
    options = [o for o in declarations.declared(ctx.index, module, field).options if o.kind != "none"]
    return bool(options) and all(o.kind == "dict" for o in options)


def _suggest(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.75)
    return close[0] if close else ""
