"""Helpers shared by the check kinds: resolving a rule's entry, config classes and fields."""

from __future__ import annotations

import re
from dataclasses import dataclass

from srcreview.checks import CheckContext, CheckResult, Params, short, stale
from srcreview.model.findings import Anchor, Hop
from srcreview.vllm.anchors import ROOT_CONFIG

_OPTIONAL = re.compile(r"^(?:Optional\[(.+)\]|(.+?)\s*\|\s*None|None\s*\|\s*(.+))$")


class EntryParams(Params):
    """Where a trace starts: a function or method, by qualified-name suffix (an inherited
    method is walked with self of the class it is named through)."""

    entry: str


@dataclass(frozen=True)
class Entry:
    symbol: object  # srcreview.index.Symbol
    hops: tuple[Hop, ...]  # the entry, for the trace
    evidence: tuple[Anchor, ...]


def find_one(index, suffix: str, kind: str = "function"):
    """(symbol, candidates): the one definition a suffix names; when several match, the one
    whose module-relative name is exactly the suffix (a module-level function over methods)."""
    found = index.find(suffix, kind=kind)
    if not found and kind == "function" and "." in suffix:
        # a method the class inherits: `EagleProposer._get_model` defined on a base class
        cls, _, method = suffix.rpartition(".")
        from srcreview.index import UnreadableSource

        try:
            info = index.class_info(cls)
        except UnreadableSource:
            raise  # the class may be there: the question stays open
        except Exception:  # noqa: BLE001 - an ambiguous class name: not found here
            info = None
        inherited = info.methods.get(method) if info is not None else None
        if inherited is not None:
            return inherited, [inherited]
    if len(found) > 1:
        exact = [s for s in found if s.local == suffix]
        if len(exact) == 1:
            return exact[0], found
    return (found[0] if len(found) == 1 else None), found


def resolve_entry(ctx: CheckContext, params: EntryParams) -> Entry | CheckResult:
    """The entry function of a rule, or the stale / undecided result when it is missing or
    names several functions."""
    symbol, found = find_one(ctx.index, params.entry)
    if not found:
        return stale([params.entry])
    if symbol is None:
        names = ", ".join(s.qualname for s in found)
        return CheckResult("undecided", tags=("ambiguous-symbol",), reason=f"{params.entry} names several functions: {names}",
                           open=(f"{params.entry} names several functions",))
    anchor = ctx.symbol_anchor(symbol, f"entry: {short(symbol.qualname)}")
    return Entry(symbol, (Hop(kind="call", text=f"entry {short(symbol.qualname)}", anchor=anchor),), (anchor,))


def strip_optional(annotation: str | None) -> str | None:
    """`SpeculativeConfig | None` -> `SpeculativeConfig`; quotes removed."""
    if annotation is None:
        return None
    text = annotation.strip().strip("\"'")
    match = _OPTIONAL.match(text)
    if match:
        text = next(g for g in match.groups() if g)
    return text.strip().strip("\"'")


def admits_none(annotation: str | None) -> bool:
    return bool(annotation) and ("None" in annotation.replace("NoneType", "None") or "Optional[" in annotation)


def owner_of(ctx: CheckContext, info, field):
    """The ClassInfo that declares `field` (found in the MRO of `info`, the class it was read from)."""
    if info is None:
        return None
    for qualname in info.linearization:
        if qualname == field.owner or qualname.endswith("." + field.owner):
            found = ctx.index.class_info(qualname)
            if found is not None:
                return found
    return info


def field_anchor(ctx: CheckContext, field, role: str, info=None) -> Anchor:
    """Anchor of a class field declaration (FieldFact), in the file of the class declaring it."""
    owner = owner_of(ctx, info, field) if info is not None else ctx.index.class_info(field.owner)
    path = owner.symbol.path if owner is not None else ""
    return ctx.anchor(path, field.start_line, field.end_line, f"{short(field.owner)}.{field.name}", role)


def split_field(spec: str) -> tuple[str, str]:
    cls, _, name = spec.rpartition(".")
    return cls, name


def class_info(ctx: CheckContext, name: str, container: str = ROOT_CONFIG):
    """The class a rule names; when the name is ambiguous in the tree, the one the container
    config class (VllmConfig) refers to by that name, else None."""
    from srcreview.core.errors import DataError

    index = ctx.index
    try:
        return index.class_info(name)
    except DataError:
        pass
    try:
        holder = index.class_info(container)
    except DataError:
        return None
    if holder is None:
        return None
    symbol = index.resolve_name(holder.symbol.module, name.rsplit(".", 1)[-1])
    return index.class_info(symbol.qualname) if symbol is not None else None


def declared_field(ctx: CheckContext, spec: str, container: str = ROOT_CONFIG):
    """The FieldFact a rule names ("SpeculativeConfig.attention_backend"), None when the revision
    does not declare it. A class not found by name is looked up where the container config
    imports it, so a module that cannot be read raises (the question stays open) rather than
    passing for absent."""
    cls_name, attr = split_field(spec)
    info = class_info(ctx, cls_name, container)
    if info is None:
        holder = class_info(ctx, container)
        symbol = ctx.index.resolve_name(holder.symbol.module, cls_name) if holder is not None else None
        info = ctx.index.class_info(symbol.qualname) if symbol is not None and symbol.kind == "class" else None
    return info.field(attr) if info is not None else None


def site_anchor(site) -> Anchor:
    """A graph Site's anchor named after what the line shows (the called or read name)."""
    import re

    head = site.text.split("(", 1)[0].strip()
    name = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", head)
    return site.anchor.model_copy(update={"symbol": name[-1] if name else site.kind,
                                          "role": f"{site.kind}: {site.text}"})


def path_hops(path, sink_kind: bool = True) -> tuple[list[Anchor], list[Hop]]:
    """The call sites of a traced path after its entry, as evidence anchors and trace hops; the last
    hop is the sink when `sink_kind` (the path ends at the check's sink)."""
    evidence, hops = [], []
    for hop in path[1:]:
        anchor = (hop.call_anchor or hop.anchor).model_copy(update={
            "symbol": short(hop.symbol).split(".")[-1], "role": f"calls {short(hop.symbol)}"})
        evidence.append(anchor)
        hops.append(Hop(kind="sink" if sink_kind and hop is path[-1] else "call", text=f"-> {short(hop.symbol)}",
                        anchor=anchor))
    return evidence, hops


@dataclass(frozen=True)
class TraceStart:
    """What a tracing check starts from: the declared field, the sink and the entry."""

    cls: object
    attr: str
    declared: object
    sink: object | None
    entry: Entry


def trace_start(ctx: CheckContext, params: EntryParams, field: str, sink: str | None) -> TraceStart | CheckResult:
    """Locate the field, the sink and the entry, or return the stale result (a symbol missing at
    this revision) or the undecided one (an ambiguous entry or sink)."""
    cls_name, attr = split_field(field)
    cls = class_info(ctx, cls_name)
    declared = cls.field(attr) if cls is not None else None
    missing = [field] if declared is None else []
    sink_symbol, found = find_one(ctx.index, sink) if sink else (None, [])
    if sink and not found:
        missing.append(sink)
    entry = resolve_entry(ctx, params)
    if isinstance(entry, CheckResult) and entry.outcome == "stale":
        missing += list(entry.missing)  # every missing anchor: a module the tree lacks makes it unevaluable
    if missing:
        return stale(missing)
    if isinstance(entry, CheckResult):
        return entry
    if sink and sink_symbol is None:
        return CheckResult("undecided", tags=("ambiguous-symbol",), reason=f"{sink} names several functions",
                           open=(f"{sink} names several functions",))
    return TraceStart(cls, attr, declared, sink_symbol, entry)


def traced(ctx: CheckContext, entry: Entry, sink_name: str | None, max_depth: int):
    """The recipe-conditioned trace from an entry to the sink, computed once per review."""
    from srcreview.interp import trace

    key = f"trace:{entry.symbol.qualname}:{sink_name}:{max_depth}"
    return ctx.memoized(key, lambda: trace(ctx.index, entry.symbol.qualname, ctx.bindings, sink=sink_name,
                                           max_depth=max_depth))


def dedupe(anchors, by_role: bool = False) -> tuple[Anchor, ...]:
    """Anchors in order, each place (path, lines, symbol; and role when `by_role`) once."""
    seen, out = set(), []
    for a in anchors:
        key = (a.path, a.start_line, a.end_line, a.symbol) + ((a.role,) if by_role else ())
        if key not in seen:
            seen.add(key)
            out.append(a)
    return tuple(out)
