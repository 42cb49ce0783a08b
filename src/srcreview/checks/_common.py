"""Helpers shared by the check kinds: resolving a rule's entry, config classes and fields."""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import model_validator

from srcreview.checks import CheckContext, CheckResult, Params, short, stale
from srcreview.findings import Anchor, Hop

_OPTIONAL = re.compile(r"^(?:Optional\[(.+)\]|(.+?)\s*\|\s*None|None\s*\|\s*(.+))$")


class EntryParams(Params):
    """Where a trace starts: a symbol (qualified-name suffix), or a dispatcher and the method
    of each class it returns under the recipe (`dispatch = "init_speculator"`,
    `method = "load_draft_model"`)."""

    entry: str | None = None
    dispatch: str | None = None
    method: str | None = None

    @model_validator(mode="after")
    def _one_entry(self):
        if bool(self.entry) == bool(self.dispatch):
            raise ValueError("give exactly one of entry or dispatch")
        if self.dispatch and not self.method:
            raise ValueError("dispatch needs method (the method of the dispatched class to start from)")
        return self


@dataclass(frozen=True)
class Entry:
    symbol: object  # srcreview.index.Symbol
    hops: tuple[Hop, ...]  # how the entry was reached (the dispatch), for the trace
    evidence: tuple[Anchor, ...]
    assumptions: tuple[str, ...] = ()
    condition: str = ""  # when the dispatch returns this candidate ("" when the recipe decides it)


@dataclass(frozen=True)
class Entries:
    entries: tuple[Entry, ...] = ()
    missing: tuple[str, ...] = ()
    undecided: str = ""  # why no entry could be settled
    tags: tuple[str, ...] = ()
    dispatch: str = ""  # the dispatcher, when the entries are its feasible candidates


@dataclass(frozen=True)
class Combined:
    """The outcome of a check over every feasible entry, and how it was reached."""

    outcome: str
    hops: tuple[Hop, ...] = ()
    tags: tuple[str, ...] = ()
    assumptions: tuple[str, ...] = ()
    reason: str = ""


def entries_text(entries: Entries) -> str:
    """The entries as a message names them: one, or each candidate of an open dispatch."""
    names = [short(e.symbol.qualname) for e in entries.entries]
    if len(names) > 1 and entries.dispatch:
        return f"each of {', '.join(names)}: every class {entries.dispatch} may return under the recipe"
    return ", ".join(names)


def combine(entries: Entries, outcomes: list[str], undecided: str = "undecided") -> Combined:
    """One outcome for all the feasible candidates of a dispatch: when they agree, it holds
    whichever the run time picks (their conditions are not assumptions of the result); when
    they disagree, it is `undecided`, tagged runtime-branch, naming each candidate's outcome."""
    names = [short(e.symbol.qualname) for e in entries.entries]
    if len(set(outcomes)) == 1:
        if len(outcomes) > 1:
            text = (f"every feasible candidate of {entries.dispatch} was checked ({', '.join(names)}): "
                    f"each gives {outcomes[0]}")
            return Combined(outcomes[0], hops=(Hop(kind="note", text=text),))
        return Combined(outcomes[0], assumptions=tuple(a for e in entries.entries for a in e.assumptions))
    parts = [f"{name} ({e.condition or 'the recipe selects it'}) -> {o}"
             for name, e, o in zip(names, entries.entries, outcomes)]
    where = f"the feasible candidates of {entries.dispatch}" if entries.dispatch else "the feasible entries"
    reason = f"{where} disagree: " + "; ".join(parts)
    return Combined(undecided, hops=(Hop(kind="note", text=reason),), tags=("runtime-branch",),
                    assumptions=tuple(a for e in entries.entries for a in e.assumptions), reason=reason)


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


def resolve_entries(ctx: CheckContext, params: EntryParams) -> Entries:
    """The feasible entry functions under the recipe; several when a dispatch stays open."""
    index = ctx.index
    if params.entry:
        symbol, found = find_one(index, params.entry)
        if not found:
            return Entries(missing=(params.entry,))
        if symbol is None:
            names = ", ".join(s.qualname for s in found)
            return Entries(undecided=f"{params.entry} names several functions: {names}", tags=("ambiguous-symbol",))
        anchor = ctx.symbol_anchor(symbol, f"entry: {short(symbol.qualname)}")
        return Entries(entries=(Entry(symbol, (Hop(kind="call", text=f"entry {short(symbol.qualname)}", anchor=anchor),),
                                      (anchor,)),))
    from srcreview.interp import resolve_dispatch

    dispatcher, found = find_one(index, params.dispatch)
    if not found:
        return Entries(missing=(params.dispatch,))
    if dispatcher is None:
        return Entries(undecided=f"{params.dispatch} names several functions", tags=("ambiguous-symbol",))
    dispatch = ctx.memoized(f"dispatch:{dispatcher.qualname}",
                            lambda: resolve_dispatch(index, dispatcher.qualname, ctx.bindings))
    if not dispatch.chosen:
        return Entries(undecided=f"{params.dispatch} returns no candidate under the recipe", tags=("runtime-branch",))
    entries = []
    missing = []
    for candidate in _feasible(index, dispatch):
        info = index.class_info(candidate.symbol)
        method = info.methods.get(params.method) if info is not None else None
        if method is None:
            missing.append(f"{short(candidate.symbol)}.{params.method}")
            continue
        cls = short(candidate.symbol)
        returns = "returns" if not candidate.assumptions else "may return"
        class_anchor = ctx.symbol_anchor(info.symbol, f"{cls} (a class {params.dispatch} {returns} under the recipe)")
        dispatch_anchor = _return_anchor(ctx, dispatcher, cls.split(".")[-1], returns) or class_anchor
        method_anchor = ctx.symbol_anchor(method, f"entry: {cls}.{params.method}")
        hops = (Hop(kind="branch", text=f"{params.dispatch} -> {cls}", anchor=dispatch_anchor),
                Hop(kind="call", text=f"{cls}.{params.method}", anchor=method_anchor))
        conditions = [f"{' '.join(a.text.split())} {'true' if a.taken else 'false'}"
                      for a in candidate.assumptions if a.taken is not None]
        assumptions = tuple(sorted({f"{params.dispatch} returns {cls} only if `{' '.join(a.text.split())}` takes the "
                                    f"branch that leads there; undecided under the recipe"
                                    + (f" ({a.reason})" if a.reason else "") for a in candidate.assumptions}))
        evidence = tuple(dict.fromkeys((dispatch_anchor, class_anchor, method_anchor)))
        entries.append(Entry(method, hops, evidence, assumptions,
                             condition=("if " + " and ".join(conditions)) if conditions else ""))
    if missing and not entries:
        return Entries(missing=tuple(missing))
    if missing:
        return Entries(undecided=f"dispatched classes without {params.method}: {', '.join(missing)}",
                       tags=("unresolved-call",))
    return Entries(entries=tuple(entries), dispatch=params.dispatch)


def _feasible(index, dispatch):
    """Every candidate the dispatch may return under the recipe: the one it returns when every
    undecided condition is false first, then the others (canonical class names)."""
    out, seen = [], set()
    for candidate in (*dispatch.chosen, *sorted(dispatch.alternatives, key=lambda c: c.symbol)):
        symbol = index.resolve(candidate.symbol)
        qualname = symbol.qualname if symbol is not None and symbol.kind == "class" else candidate.symbol
        if qualname not in seen:
            seen.add(qualname)
            out.append(candidate if qualname == candidate.symbol else
                       type(candidate)(qualname, candidate.anchor, candidate.assumptions))
    return out


def _return_anchor(ctx: CheckContext, dispatcher, cls_name: str, returns: str) -> Anchor | None:
    """The dispatcher's `return Cls(...)` line for a candidate class; `returns` says whether the
    recipe decides that branch ("returns") or leaves it open ("may return")."""
    from srcreview.index import ir

    fn = ctx.index.function(dispatcher.qualname)
    if fn is None:
        return None
    for stmt in ir.iter_statements(fn.facts.body):
        if isinstance(stmt, ir.Return) and isinstance(stmt.value, ir.Call) \
                and (ir.dotted(stmt.value.func) or "").split(".")[-1] == cls_name:
            return ctx.anchor(dispatcher.path, stmt.line, stmt.end_line, cls_name,
                              f"{short(dispatcher.qualname)} {returns} {cls_name} under the recipe")
    return None


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


def class_info(ctx: CheckContext, name: str, container: str = "VllmConfig"):
    """The class a rule names; when the name is ambiguous in the tree, the one the container
    config class (VllmConfig) refers to by that name, else None."""
    from srcreview.errors import DataError

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
    """What a tracing check starts from: the declared field, the sink and the dispatch entries."""

    cls: object
    attr: str
    declared: object
    sink: object | None
    entries: Entries


def trace_start(ctx: CheckContext, params: EntryParams, field: str, sink: str | None) -> TraceStart | CheckResult:
    """Locate the field, the sink and the entries, or return the stale result (a symbol missing at
    this revision) or the undecided one (no entry, or an ambiguous sink)."""
    cls_name, attr = split_field(field)
    cls = class_info(ctx, cls_name)
    declared = cls.field(attr) if cls is not None else None
    missing = [field] if declared is None else []
    sink_symbol, found = find_one(ctx.index, sink) if sink else (None, [])
    if sink and not found:
        missing.append(sink)
    entries = resolve_entries(ctx, params)
    missing += list(entries.missing)
    if missing:
        return stale(missing)
    if not entries.entries:
        return CheckResult("undecided", tags=entries.tags, reason=entries.undecided)
    if sink and sink_symbol is None:
        return CheckResult("undecided", tags=("ambiguous-symbol",), reason=f"{sink} names several functions")
    return TraceStart(cls, attr, declared, sink_symbol, entries)


def traced(ctx: CheckContext, entry: Entry, sink_name: str | None, max_depth: int):
    """The recipe-conditioned trace from an entry to the sink, computed once per review."""
    from srcreview.interp import trace

    key = f"trace:{entry.symbol.qualname}:{sink_name}:{max_depth}"
    return ctx.memoized(key, lambda: trace(ctx.index, entry.symbol.qualname, ctx.bindings, sink=sink_name,
                                           max_depth=max_depth))
