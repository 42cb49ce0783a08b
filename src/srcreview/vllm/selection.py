"""Which attention backend the platform selects when the recipe names none.

With no backend selected, the platform's `get_attn_backend_cls` asks a priority function for
the candidates (for this capability, KV dtype, MLA-ness, ...) and asks each candidate's
`validate_configuration` in that order; the first one that returns no reason wins (vLLM 0.29+
keeps the lowest index of those admitted, the same thing), and none admitted raises. This
module walks that, from the source:

- the platform's selector walked with no backend selected and the selector config the
  attention layers hand it (srcreview.vllm.backends.selector_call); the loop that asks each
  candidate's validating method is found in it or in a method it calls, and the call its
  iterable makes is the priority function;
- the priority function walked with the arguments that call passes: every list it may return
  on a path the recipe decides, its items read in order (`*([X] if c else [])` is X present
  only if `c`, an item the walk cannot read is a gap);
- each candidate's admission (srcreview.vllm.backends.admission), in order.

The selected backend is decided when every list the priority function may return gives the
same first admitted candidate with every candidate before it refused; otherwise the backends
still possible are named, with what the choice rests on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from srcreview.index import ir
from srcreview.interp.interpreter import Frame, analyzer
from srcreview.interp.results import frame_anchor
from srcreview.interp.values import Const, EnumMember, FuncRef, Union
from srcreview.vllm.anchors import BACKEND_ENUM, BACKEND_VALIDATE
from srcreview.vllm.backends import (
    Admission,
    admission,
    platform_selector,
    selector_call,
    selector_value,
)

NONE_ADMITTED = "none"  # no candidate admits the recipe: the platform raises, start-up fails
UNREADABLE = "a backend the analysis cannot read"
MAX_DEPTH = 2  # the selector, and the methods it calls, where the candidates loop may be


@dataclass(frozen=True)
class Item:
    """One entry of a priority list: a backend (maybe only under a condition) or a gap."""

    backend: str | None  # the Enum member's name; None for an item the walk cannot read
    when: str = ""  # present only if this holds (a condition the recipe does not decide)
    text: str = ""  # the item's source text (for a gap)


@dataclass(frozen=True)
class Priorities:
    """One list the priority function may return under the recipe."""

    items: tuple[Item, ...]
    conditions: tuple[str, ...] = ()  # the undecided conditions on the path to that return
    anchor: object = None  # Anchor of the return


@dataclass(frozen=True)
class Selection:
    """The backend the platform selects for the target when the recipe names none."""

    verdict: str  # "selects" | "none-admitted" | "undecided" | "not-applicable" (a backend is named)
    selected: str | None = None  # decided: the backend's Enum member name (not-applicable: the one named)
    possible: tuple[str, ...] = ()  # undecided: the backends still possible, in order (NONE_ADMITTED too)
    lists: tuple[Priorities, ...] = ()
    admissions: tuple[Admission, ...] = ()  # of every candidate asked, in order of first appearance
    open: tuple[str, ...] = ()
    evidence: tuple = ()
    reason: str = ""

    @property
    def refusal_reads(self) -> tuple[tuple[str, ...], ...]:
        """The config paths the refusing tests of the refused candidates read: with none
        admitted, the values start-up fails on."""
        return tuple(dict.fromkeys(path for a in self.admissions if a.verdict == "refuses"
                                   for t in a.tests if t.outcome == "refuses" for path in t.reads))


def selection(index, bindings: dict) -> Selection:
    """The target's automatic backend selection under the recipe (memoized per recipe)."""
    an = analyzer(index, bindings)
    memo = an.__dict__.setdefault("_admission", {})
    if "<selection>" not in memo:
        memo["<selection>"] = _selection(an, index, bindings)
    return memo["<selection>"]


def _selection(an, index, bindings) -> Selection:
    selector = selector_call(an)
    backend = an.force(selector.backend) if selector.backend is not None else None
    if isinstance(backend, Const) and backend.value is not None:
        named = backend.value.name if isinstance(backend.value, EnumMember) else str(backend.value).upper()
        return Selection("not-applicable", selected=named, evidence=selector.evidence,
                         reason=f"the selector passes the platform the backend {named}: the platform selects none")
    if not isinstance(backend, Const):
        why = "the backend the selector passes the platform is not decided under the recipe"
        return Selection("undecided", reason=why, open=(why,) + selector.open, evidence=selector.evidence)
    found = _priority_call(an, selector)
    if isinstance(found, str):
        return Selection("undecided", reason=found, open=(found,) + selector.open, evidence=selector.evidence)
    loop_anchor, callee = found
    lists = tuple(_lists(an, callee))
    if not lists:
        why = "the priority function returns no list the analysis can read"
        return Selection("undecided", reason=why, open=(why,), evidence=selector.evidence + (loop_anchor,))
    asked: dict[str, Admission] = {}
    possible, open_ = [], list(selector.open)
    for plist in lists:
        open_ += [f"if {c}" for c in plist.conditions]
        for name in _outcomes(an, index, bindings, plist, asked, open_):
            if name not in possible:
                possible.append(name)
    evidence = [loop_anchor] + [p.anchor for p in lists if p.anchor is not None]
    admissions = tuple(asked.values())
    if len(possible) == 1 and possible[0] is not None:
        chosen = possible[0]
        # what decides it: every candidate before it refuses (its tests), the winner admits
        for a in admissions:
            evidence += list(a.evidence[:3]) if a.verdict == "refuses" else []
            if a.backend == chosen:
                evidence += list(a.evidence)
        evidence += list(selector.evidence)
        if chosen == NONE_ADMITTED:
            return Selection("none-admitted", possible=(NONE_ADMITTED,), lists=lists, admissions=admissions,
                             evidence=tuple(evidence), reason="no candidate admits the recipe")
        return Selection("selects", selected=chosen, possible=(chosen,), lists=lists, admissions=admissions,
                         evidence=tuple(evidence))
    shown = tuple(p if p is not None else UNREADABLE for p in possible)
    open_ = _grouped(o for o in open_ if o)
    reason = "; ".join(open_) or "the candidates' admission is open"
    return Selection("undecided", possible=shown, lists=lists, admissions=admissions, open=tuple(open_) or (reason,),
                     evidence=tuple(evidence) + selector.evidence, reason=reason)


def _grouped(items) -> list[str]:
    """The open questions, those on what the model's layers pass merged across candidates (one
    line per reason, the parameters of every candidate together)."""
    import re

    model: dict[str, list[str]] = {}
    out = []
    for o in items:
        m = re.match(r"(?:\w+: )?what the model's attention layers pass \(([^)]*)\): (.*)$", o)
        if m:
            model.setdefault(m.group(2), []).extend(n.strip() for n in m.group(1).split(","))
        elif o not in out:
            out.append(o)
    merged = [f"what the model's attention layers pass ({', '.join(sorted(set(names)))}): {why}"
              for why, names in model.items()]
    return merged + out


def _outcomes(an, index, bindings, plist: Priorities, asked: dict, open_: list) -> list[str | None]:
    """The backends this list may select, in order (None: an item the walk cannot read;
    NONE_ADMITTED: no candidate admits)."""
    out: list[str | None] = []
    for item in plist.items:
        if item.backend is None:
            open_.append(f"an item of the priority list the analysis cannot read ({item.text})")
            out.append(None)
            return out
        if item.backend not in asked:
            asked[item.backend] = admission(index, bindings, item.backend)
        verdict = asked[item.backend]
        if verdict.verdict == "refuses":
            continue
        out.append(item.backend)
        if item.when:
            open_.append(f"{item.backend} is a candidate only if {item.when}")
        if verdict.verdict == "undecided":
            open_ += [f"{item.backend}: {o}" for o in verdict.open]
        if verdict.verdict == "admits" and not item.when:
            return out
    out.append(NONE_ADMITTED)
    return out


# ---------------------------------------------------------------------------------------------
# the loop over candidates and the priority function


def _priority_call(an, selector):
    """(anchor of the loop asking each candidate, (callee frame args) of the priority call) or
    a reason string when the source does not show one."""
    symbol = platform_selector(an)
    if symbol is None:
        return "the platform's attention selector is not in the tree"
    fn = an.index.function_at(symbol)
    params = [p.name for p in fn.facts.params][1:]
    args: dict[str, Any] = {params[0]: Const(None)} if params else {}
    if len(params) > 1:
        args[params[1]] = selector_value(selector)
    frame = Frame(an, fn.module, fn.facts, symbol, None, args).run()
    found = _find_loop(an, frame, 0)
    if found is None:
        return (f"no loop asking each candidate's {BACKEND_VALIDATE} is reached in the platform's selector "
                "with no backend selected")
    return found


def _find_loop(an, frame, depth: int):
    for stmt in ir.iter_statements(frame.fn.body):
        if not (isinstance(stmt, ir.For) and _asks_validate(stmt.body)):
            continue
        call = _iterable_call(frame.fn.body, stmt.iter)
        event = next((c for c in frame.calls if call is not None and c.line == call.line
                      and isinstance(c.target, FuncRef)), None)
        if event is None:
            continue
        anchor = frame_anchor(an.index, frame, stmt.line, stmt.end_line, f"the platform asks each candidate's "
                              f"{BACKEND_VALIDATE} in priority order")
        named = next((n.id for n in ir.iter_exprs(stmt.iter) if isinstance(n, ir.Name) and n.id != "enumerate"), "for")
        return anchor.model_copy(update={"symbol": named}), event
    if depth >= MAX_DEPTH:
        return None
    for c in frame.calls:
        symbol = an.index.resolve(c.target.qualname) if isinstance(c.target, FuncRef) else None
        if symbol is None or symbol.kind != "function" or symbol.module != frame.symbol.module:
            continue
        callee = an.walk_call(c)
        found = _find_loop(an, callee, depth + 1)
        if found is not None:
            return found
    return None


def _asks_validate(body) -> bool:
    return any(isinstance(x, ir.Call) and isinstance(x.func, ir.Attr) and x.func.attr == BACKEND_VALIDATE
               for x in ir.iter_exprs(body))


def _iterable_call(body, expr):
    """The call whose result a `for` iterates: `f(...)`, `enumerate(f(...))`, or a name bound
    to `f(...)` in the same function."""
    if isinstance(expr, ir.Call) and isinstance(expr.func, ir.Name) and expr.func.id == "enumerate" and expr.args:
        expr = expr.args[0]
    if isinstance(expr, ir.Name):
        bound = [s.value for s in ir.iter_statements(body) if isinstance(s, ir.Assign)
                 and any(isinstance(t, ir.Name) and t.id == expr.id for t in s.targets)]
        expr = bound[0] if len(bound) == 1 else None
    return expr if isinstance(expr, ir.Call) else None


def _lists(an, event):
    """Every list the priority function returns on a path the recipe leaves possible."""
    frame = an.walk_call(event, _PriorityFrame)
    if frame is None:
        return
    for r in frame.returns:
        value = r.value if isinstance(r.value, _Listed) else an.force(r.value)
        if isinstance(value, _Listed):
            items = value.items
        elif isinstance(value, Const) and isinstance(value.value, (list, tuple)):
            items = tuple(_item(v) for v in value.value)
        else:
            items = (Item(None, text="the returned value"),)
        conditions = tuple(" ".join(c.text.split()) + (" is true" if c.taken else " is false")
                           for c in r.conditions)
        anchor = frame_anchor(an.index, frame, r.line, r.end_line,
                              f"the priority list returned under the recipe: `{BACKEND_ENUM}` members in order"
                              + (", on a path it does not decide" if conditions else ""))
        yield Priorities(items, conditions, anchor.model_copy(update={"symbol": "return"}))


def _item(value) -> Item:
    return Item(value.name) if isinstance(value, EnumMember) else Item(None, text=repr(value))


@dataclass(frozen=True)
class _Listed:
    """A list literal whose items were read one by one (some conditional or unreadable)."""

    items: tuple[Item, ...]


class _PriorityFrame(Frame):
    """The priority function's walk: list literals are read item by item, `*(... if c else [])`
    splices what `c` decides (both sides, conditionally, when it does not)."""

    def ev_seq(self, e):
        if e.kind != "list" or not any(isinstance(x, ir.Starred) for x in e.elts):
            return super().ev_seq(e)
        items: list[Item] = []
        for x in e.elts:
            if not isinstance(x, ir.Starred):
                items += _items(self.force(self.ev(x)), "", ir.text(x))
                continue
            value = self.force(self.ev(x.value))
            when = " ".join(ir.text(x.value.test).split()) if isinstance(x.value, ir.IfExp) else "one of several lists"
            if isinstance(value, Union):
                shared = [o for o in value.options if isinstance(o, Const) and isinstance(o.value, (list, tuple))]
                if len(shared) == len(value.options) and min(len(o.value) for o in shared) == 0:
                    longest = max(shared, key=lambda o: len(o.value))
                    items += _items(longest, when, ir.text(x))
                    continue
            items += _items(value, "", ir.text(x))
        return _Listed(tuple(items))

    _EV = {**Frame._EV, ir.Seq: ev_seq}


def _items(value, when: str, text: str) -> list[Item]:
    if isinstance(value, _Listed):
        return [Item(i.backend, i.when or when, i.text) for i in value.items]
    if isinstance(value, Const) and isinstance(value.value, EnumMember):
        return [Item(value.value.name, when)]
    if isinstance(value, Const) and isinstance(value.value, (list, tuple)) and \
            all(isinstance(v, EnumMember) for v in value.value):
        return [Item(v.name, when) for v in value.value]
    return [Item(None, text=text)]
