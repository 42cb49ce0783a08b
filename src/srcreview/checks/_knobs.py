"""Resolving a recipe key (`speculative_config.method`) to its declaration at the revision.

A top-level key is a field of the engine-arguments class; a nested key `a.b` is field `b`
of the config class that the container class (VllmConfig) declares for `a`.
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
    status: str  # "exists" | "missing" | "undecided" | "stale"
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
        if len(parts) > 2:
            return KeyDecl("undecided", reason=f"{key}: keys nested more than one level are not resolved")
        container = index.class_info(container_class)
        if container is None:
            return KeyDecl("stale", missing=(container_class,))
        holder = container.field(parts[0])
        cls_name = strip_optional(holder.annotation) if holder is not None else None
        symbol = index.resolve_name(container.symbol.module, cls_name) if cls_name and cls_name.isidentifier() else None
        nested = index.class_info(symbol.qualname) if symbol is not None else None
        if nested is None:
            return KeyDecl("undecided", parent=top,
                           reason=f"the config class of {parts[0]} is not resolved from {container_class}")
        field = nested.field(parts[1])
        if field is None or field.classvar:
            return KeyDecl("missing", owner=nested, parent=top,
                           reason=f"{parts[1]} is not a field of {nested.symbol.local}",
                           suggestion=_suggest(parts[1], [f.name for f in nested.fields if not f.classvar]))
        return KeyDecl("exists", field=field, owner=nested, parent=top)

    return ctx.memoized(f"key:{engine_class}:{container_class}:{key}", compute)


def _suggest(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.75)
    return close[0] if close else ""
