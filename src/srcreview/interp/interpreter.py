"""The interpreter: walks function facts over abstract values, under one recipe's bindings.

Never evaluates source code: a Frame walks the statement IR, decides a branch only when
every value its test needs is a constant (from the recipe, a literal or a module constant
table), and otherwise follows both sides and records the condition. The same walk records
what the call graph and the queries need (srcreview.interp.events): calls with their
resolved targets, attribute reads with their receivers, dynamic access, raises and returns
with the conditions assumed. The Analyzer drives the walks and caches them; it asks the
Resolver (names, attributes, types), the Runtime (the recipe's engine, env, platform) and
the builtins (Python's own behaviour over constants).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from dataclasses import fields as dataclass_fields
from dataclasses import replace
from typing import Any, ClassVar, cast

from srcreview.hfconfig.facts import MODEL_CONFIG_UNKNOWN
from srcreview.hfconfig.ref import HUB_VALIDATED, hub_refuses
from srcreview.index import ir
from srcreview.interp import builtins, paths
from srcreview.interp import domain as domains
from srcreview.interp.builtins import binop
from srcreview.interp.events import (
    CallEvent,
    Condition,
    Decision,
    DynamicEvent,
    RaiseEvent,
    ReadEvent,
    ReturnEvent,
    StoreEvent,
    may_raise,
    raises_on_every_path,
)
from srcreview.interp.resolver import Resolver
from srcreview.interp.values import (
    DICT_VIEWS,
    NONE,
    BoundBuiltin,
    Builtin,
    ClassRef,
    Const,
    Derived,
    DictVal,
    EnumMember,
    External,
    FuncRef,
    HfConfig,
    Known,
    Lambda,
    LazyCall,
    ListVal,
    LocalPath,
    ModuleRef,
    Obj,
    OneOf,
    Partial,
    Ref,
    Super,
    Text,
    TupleVal,
    Unbound,
    Union,
    Unknown,
    element_of,
    item_of,
    merge_envs,
    union,
)

MAX_EVAL_DEPTH = 6
# a function calling itself (a walk over a nested table) spends no depth: the levels of its own
# recursion have a budget of their own
MAX_RECURSION = 8
# enum bases whose members are as true as their values (`bool(IntEnum member 0)` is False)
_VALUE_TRUTH = frozenset({"IntEnum", "IntFlag", "Flag", "StrEnum", "int", "str", "float", "bytes"})
FLOW_KEY = "@flow"  # in a FuncRef's closure: the builder whose flow a method called on `self` follows
_READ = re.compile(r"(?<![\w.'\"])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?!\w*\()")  # a name or attribute chain, not a call
_WORDS = frozenset({"not", "and", "or", "in", "is", "None", "True", "False", "if", "else", "self", "lambda"})


def _handled(handler_type) -> tuple[str | None, ...]:
    """The names an `except` clause catches: (None,) for a bare one, `(A, B)` for a tuple;
    a name that is not spelled out catches nothing known."""
    if handler_type is None:
        return (None,)
    items = handler_type.elts if isinstance(handler_type, ir.Seq) else (handler_type,)
    return tuple(item.id for item in items if isinstance(item, ir.Name))


def _hub_refusal(function: str, args, kwargs, force) -> str | None:
    """Why a call of a huggingface_hub function raises before it runs: its repo_id is one the
    Hub's validator refuses (srcreview.hfconfig.ref.hub_refuses); None when not known to."""
    if function not in HUB_VALIDATED:
        return None
    given = dict(kwargs).get("repo_id", args[0] if args else None)
    given = force(given) if given is not None else None
    if isinstance(given, LocalPath) or (isinstance(given, Const) and hub_refuses(given.value)):
        shown = repr(given.value) if isinstance(given, Const) else "a Path"
        return f"{function}() raises HFValidationError (a ValueError): {shown} is not a Hub repo id"
    return None


def _immutable(value) -> bool:
    """A constant an augmented assignment replaces rather than changes in place (numbers,
    strings, tuples), or a union of such."""
    options = value.options if isinstance(value, Union) else (value,)
    return bool(options) and all(isinstance(o, Const) and type(o.value) in (int, float, bool, str, tuple, frozenset)
                                 for o in options)


def _plain_ref(e) -> bool:
    """A name or an attribute chain over one (`self.compilation_config.custom_ops`): evaluating
    it again calls nothing."""
    while isinstance(e, ir.Attr):
        e = e.value
    return isinstance(e, ir.Name)


def _empty(value, pairs) -> bool:
    """Iterating `value` gives nothing, as the source decides it: an empty constant container, an
    empty list being built, a dict (view) with no items."""
    if isinstance(value, Const):
        return isinstance(value.value, (tuple, list, dict, set, frozenset, str)) and len(value.value) == 0
    if isinstance(value, ListVal):
        return value.min_len == 0 and not value.maybe_more
    if isinstance(value, Union):
        return all(_empty(o, None) for o in value.options)
    return pairs is not None and len(pairs) == 0


def _union_items(value) -> list | None:
    """The distinct items of a union of constant lists or tuples (None for anything else)."""
    if not isinstance(value, Union) or not all(isinstance(o, Const) and isinstance(o.value, (list, tuple))
                                               for o in value.options):
        return None
    items: list = []
    for option in value.options:
        items += [item for item in option.value if item not in items]
    return items


def _decided(value) -> bool:
    """A constant, an enum member, or a union of them: a value a conditional store may join."""
    if isinstance(value, Union):
        return all(_decided(o) for o in value.options)
    return isinstance(value, (Const, EnumMember))


def _tuple_items(value) -> tuple:
    """The items of a TupleVal or of a constant tuple, as values."""
    return value.items if isinstance(value, TupleVal) else tuple(Const(v) for v in value.value)


def _same_built(before, after) -> bool:
    """Two objects built by calls to one class (`Cls(...)`, each with what it was built with):
    a conditional store of one over the other leaves the field one of both."""
    return isinstance(before, Derived) and isinstance(after, Derived) and before.origin.endswith("(...)") \
        and after.origin == before.origin and isinstance(before.cls, str) and before.cls == after.cls \
        and before.path is None and after.path is None


_OBJ_FIELDS = dataclass_fields(Obj)
# builtins that run code given as text: a call that may reach any function
RUNS_CODE = frozenset({"eval", "exec"})
# builtins that never call a function they are handed (they only look at it)
NEVER_CALL = frozenset({"isinstance", "issubclass", "callable", "id", "hash", "repr", "str", "type", "getattr",
                        "setattr", "hasattr", "delattr", "vars", "dir", "print", "super", "len", "bool",
                        "tuple", "list", "dict", "set", "frozenset"})
MAX_UNROLL = 16  # a loop over a constant table of at most this many items is walked item by item
# what a comprehension over an empty container is (a generator object is not falsy: not here)
EMPTY_COMPREHENSIONS: dict[str, Callable[[], Any]] = {"list": list, "set": frozenset, "dict": dict}
# methods that change a list, dict or set in place
MUTATORS = frozenset({"append", "insert", "extend", "remove", "pop", "clear", "sort", "reverse", "update",
                      "setdefault", "popitem", "add", "discard", "intersection_update", "difference_update",
                      "symmetric_difference_update"})


def analyzer(index, bindings: dict) -> Analyzer:
    """One Analyzer per (index, bindings): walks are shared by every question asked with them."""
    cache = index.analyzers
    key = tuple(sorted((k, repr(v)) for k, v in bindings.items()))
    if key not in cache:
        cache[key] = Analyzer(index, bindings)
    return cache[key]


class Frame:
    """One walk of one function (or a module-level expression) under the analyzer's bindings."""

    def __init__(self, analyzer: Analyzer, module, fn=None, symbol=None, self_obj=None, args=None):
        self.an = analyzer
        self.module = module
        self.fn = fn
        self.platform_answers = False  # set by Analyzer.summary: the runtime profile answered a question
        self.symbol = symbol
        self.scope = fn.qualname if fn is not None else ""
        self.owner = fn.owner if fn is not None else None
        self.self_obj = self_obj
        self.calls: list[CallEvent] = []
        self.reads: list[ReadEvent] = []
        self.dynamic: list[DynamicEvent] = []
        self.assumptions: list[Condition] = []
        self.decisions: list[Decision] = []
        self.returns: list[ReturnEvent] = []
        self.raises: list[RaiseEvent] = []
        self.stores: list[StoreEvent] = []
        self.conds: list[Condition] = []
        self.guards: list[Condition] = []  # the decided tests of the ifs being walked (RaiseEvent.guard_reads)
        self.exits = 0  # returns (and item-ending continues) walked so far: how a branch that ends, ended
        self.env: dict[str, object] = {}
        self.narrowed: dict[str, object] = {}  # `self.x` -> its type inside `if isinstance(self.x, C):`
        self.env_reads: dict[str, tuple[int, int]] = {}  # env vars the recipe does not set, read here or below -> line
        self.current: tuple[int, int] = (fn.start_line, fn.start_line) if fn is not None else (1, 1)
        self.kwargs_param = fn.kwargs_param if fn is not None else None
        self.loops = 0  # depth of loop bodies being walked that may not run (or try bodies that may be caught)
        self.unrolling = 0  # depth of constant tables being walked item by item (where `continue` ends an item)
        self.raised: RaiseEvent | None = None  # a call in the current statement always raises (effects walks)
        self.caught = False  # ...and a handler of the try being walked catches it (no raise of this frame)
        self.handled = 0  # raises of this frame a handler caught so far (Frame.handler_reached)
        # local -> what decided its value (Frame.bind): (for undecided tests, for decided ones)
        self.provenance: dict[str, tuple] = {}
        self.catching: list[tuple[tuple[str | None, ...], ...]] = []  # per try walked: what each handler catches
        self.tentative: set[tuple] = set()  # recipe fields read that a hook may have rewritten (note_tentative)
        self.unrolled: set[str] = set()  # names bound to the items of a constant table walked item by item
        # the builder's flow over its own instance (Domain.builder_flow), in the builder and in the
        # methods it calls on `self` (which it hands its fields' values as it has them: `seeded`)
        self.flow: Any = None
        self.receiver: str | None = None
        # where the builder's flow is followed: the tracked fields at each return (None: not known)
        self.exit_states: list[dict] | None = []
        self.finally_depth = 0  # trys with a `finally` being walked: a return there runs more after it
        if fn is not None:
            self._bind_params(args or {})

    # -- setup -------------------------------------------------------------------------------
    def _bind_params(self, args: dict) -> None:
        fn = self.fn
        params = list(fn.params)
        if params and fn.owner and not fn.is_staticmethod:
            first = params.pop(0)
            if fn.is_classmethod:
                # `cls` is the class the method was reached through, not the one declaring it
                receiver = self.self_obj
                if isinstance(receiver, Obj) and receiver.cls:
                    cls = cast(str, receiver.cls)  # the class a class method was reached through
                    receiver = ClassRef(self.an.resolver.canonical(cls) or cls)
                if not isinstance(receiver, ClassRef):
                    receiver = ClassRef(f"{self.module.module}.{fn.owner}")
                self.env[first.name] = args.get(first.name, receiver)
            else:
                self.env[first.name] = self.self_obj if self.self_obj is not None else Obj(
                    cls=f"{self.module.module}.{fn.owner}", nonnull=True, origin="self")
                self.receiver = first.name
                self._seed_entry_fields(first.name)
        for name, value in args.items():  # a nested function's free names (FuncRef.closure)
            if name == FLOW_KEY and isinstance(value, Const):  # called on `self` by the builder (seeded)
                self.flow = self.an.domain.builder_flow(self.an.index, value.value)
            elif not any(p.name == name for p in params):
                self.env[name] = value
        entry = self.an.domain.entry_arguments(self.an.index, self.symbol.qualname) if self.symbol is not None else {}
        for p in params:
            if p.name in args:
                self.env[p.name] = args[p.name]
            elif p.name in entry:  # what the framework's own caller passes (the builder's usage context)
                self.env[p.name] = entry[p.name]
            elif p.kind == "kwarg":
                self.env[p.name] = Unknown(f"**{p.name}")
            elif p.kind == "vararg":
                self.env[p.name] = Unknown(f"*{p.name}")
            elif p.annotation_expr is not None:
                self.env[p.name] = self.an.resolver.obj_for_annotation(p.annotation_expr, self.module, self.scope,
                                                                       p.name)
            else:
                self.env[p.name] = Unknown(f"untyped parameter {p.name}")

    def note_exit(self) -> None:
        """Where the builder's flow is followed, the tracked fields as this path leaves them."""
        if self.flow is None or self.exit_states is None:
            return
        if self.finally_depth:  # a `finally` runs after this return: what it stores is not seen here
            self.exit_states = None
            return
        prefix = f"{self.receiver}."
        self.exit_states.append({key[len(prefix):]: self.forced_all(value) for key, value in self.env.items()
                                 if key.startswith(prefix) and key[len(prefix):] in self.flow.tracked
                                 and not isinstance(value, Unbound)})

    def forced_all(self, value):
        """A value with its lazy calls computed, each option of a union too."""
        value = self.force(value)
        return union([self.force(o) for o in value.options]) if isinstance(value, Union) else value

    def tracks(self, name: str, attr: str) -> bool:
        """Whether `name.attr` is a field of the builder's instance this walk follows store by store."""
        return self.flow is not None and name == self.receiver and attr in self.flow.tracked

    def _seed_entry_fields(self, receiver: str) -> None:
        """`self.<field>` as the function finds it, for the fields the framework model says only
        this function's own statements store (the engine's builder): bound like a store, so a
        read follows the stores the walk has seen on its path (Domain.entry_fields)."""
        if self.symbol is None:
            return
        fields = self.an.domain.entry_fields(self.an.index, self.symbol.qualname)
        if not fields:
            return
        self.flow = self.an.domain.builder_flow(self.an.index, self.symbol.qualname)
        obj = self.env[receiver]
        cls = self.an.resolver.canonical(obj.cls) if isinstance(obj, Obj) and isinstance(obj.cls, str) else None
        info = self.an.index._class_info_abs(cls) if cls else None
        if info is None:
            return
        for name in sorted(fields):
            value = self.an.resolver.entry_value(info, name)
            if value is not None:
                self.env[f"{receiver}.{name}"] = value
        if self.flow is not None and self.flow.post_init and isinstance(obj, Obj):  # it ran before the builder
            init = self.handed(FuncRef(self.flow.post_init, bound=obj))
            if init is not None:
                self.flow_back(self.flow.init_stores, self.an.flow_exit(init, (), ()))

    # -- walking -----------------------------------------------------------------------------
    def delegated(self):
        """A generator whose body only delegates (`yield from TABLE`, one or more): the tuple of
        the items it yields, where each is a constant sequence; None otherwise."""
        body = self.fn.body if self.fn is not None else ()
        if not body or not all(isinstance(st, ir.ExprStmt) and isinstance(st.value, ir.OtherExpr)
                               and st.value.kind == "YieldFrom" and st.value.children for st in body):
            return None
        items: list = []
        for st in body:
            value = self.force(self.ev(st.value.children[0]))
            if not (isinstance(value, Const) and isinstance(value.value, (tuple, list))):
                return None
            items.extend(value.value)
        return Const(tuple(items))

    def run(self):
        self.an.stack.append(self)
        try:
            delegated = self.delegated()
            if delegated is not None:  # called, it hands out what it yields, in order
                self.returns.append(ReturnEvent(self.fn.start_line, self.fn.end_line, delegated, ()))
                return self
            if not self.block(self.an.body_of(self.symbol, self.fn)):  # the end is reachable: an implicit `return None`
                self.returns.append(ReturnEvent(self.fn.end_line, self.fn.end_line, NONE, tuple(self.conds)))
                self.note_exit()
        except RecursionError:
            self.assumptions.append(Condition("<too deep>", self.fn.start_line, self.fn.end_line, "analysis depth"))
            self.exit_states = None
        finally:
            self.an.stack.pop()
        return self

    def block(self, stmts) -> bool:
        """Walk statements; True when every path through them returned or raised."""
        for stmt in stmts:
            if self.stmt(stmt):
                return True
        return False

    def _fork(self):
        return dict(self.env), list(self.conds)

    def stmt(self, s) -> bool:
        kind = type(s)
        if kind is ir.If or kind is ir.While:
            self.current = (s.test.line, s.test.end_line)
        elif kind is ir.For:
            self.current = (s.target.line, s.target.end_line)
        else:
            self.current = (s.line, s.end_line)
        if kind is ir.ExprStmt:
            self.effect(self.expr_stmt(s.value))
            return self.ends_here(s)
        if kind is ir.Assign:
            value = self.ev(s.value) if s.value is not None else None
            if s.value is not None:
                value = self.effect(value)
                if self.raised is not None:
                    return self.ends_here(s)
            for target in s.targets:
                if s.value is None and isinstance(target, ir.Attr):
                    continue  # `self.x: T` declares, stores nothing
                self.bind(target, value if value is not None else Unknown("declaration"), s)
            return False
        if kind is ir.AugAssign:
            value = self.ev(s.value)
            if isinstance(s.target, ir.Name):
                name = s.target.id
                old = self.env.get(name)
                before = self.force(old) if old is not None else None
                added = self.force(value)
                computed = binop(s.op, before, added) if _immutable(before) else None
                if computed is None and s.op == "+" and isinstance(before, Const) and isinstance(before.value, list) \
                        and isinstance(added, Const) and isinstance(added.value, (list, tuple)):
                    computed = Const(before.value + list(added.value))  # `items += more`: extended by its items
                if isinstance(computed, (Const, Union)):
                    self.env[name] = computed  # `n *= factor` of numbers: a new value, as `n * factor` is
                elif isinstance(old, (ListVal,)) or (isinstance(old, Const) and isinstance(old.value, list)):
                    n = old.min_len if isinstance(old, ListVal) else len(old.value)
                    self.env[name] = ListVal(n, True)
                else:
                    self.env[name] = Unknown(f"{name} updated in place")
                if old is not None:
                    self.mutated(old, s, ir.text(s.target) + " += ...")
            else:
                current = self.ev(s.target)
                self.mutated(current, s, ir.text(s.target) + " += ...")
                if isinstance(s.target, ir.Attr) and _plain_ref(s.target.value):
                    receiver = self.force(self.ev(s.target.value))
                    if isinstance(receiver, Obj) and receiver.path is not None:
                        path = receiver.path + (s.target.attr,)
                        self.an.stored(path, Unknown(f"{'.'.join(path)} is updated in place"), s)
            return False
        if kind is ir.If:
            return self.if_stmt(s)
        if kind is ir.Return:
            # a call returned is run here, in an effects walk: what it raises, it raises on this
            # path (forced later by the caller, it would end the caller's statement on every path)
            value = self.ev(s.value) if s.value is not None else NONE
            if self.an.effects and isinstance(value, LazyCall):
                self.an.depth -= 1  # a tail call: at the depth its caller would have forced it at
                try:
                    value = self.effect(value, returned=True)
                finally:
                    self.an.depth += 1
            if self.raised is not None:
                return self.ends_here(s)
            self.returns.append(ReturnEvent(s.line, s.end_line, value, tuple(self.conds)))
            self.exits += 1
            self.note_exit()
            return True
        if kind is ir.Raise:
            if s.exc is not None:
                self.ev(s.exc)
            conds = self.raise_conds()
            self.raises.append(RaiseEvent(s.line, s.end_line, ir.text(s.exc) if s.exc is not None else "raise",
                                          conds, self.loops > 0, reads=self.cond_reads(conds),
                                          guard_reads=self.cond_reads(self.guards, decided=True)))
            return True
        if kind is ir.Assert:
            truth, reason = self.truth(self.ev(s.test))
            if truth is False:
                conds = self.raise_conds()
                test = Condition(s.text, s.line, s.end_line, "", False)
                self.raises.append(RaiseEvent(s.line, s.end_line, f"assert {s.text}", conds,
                                              self.loops > 0, reads=self.cond_reads(conds),
                                              guard_reads=self.cond_reads((*self.guards, test), decided=True)))
                return True
            if truth is None and self.an.effects:  # an assert the walk cannot decide may fail
                failing = Condition(f"not ({s.text})", s.line, s.end_line, reason or "undecided", True)
                self.raises.append(RaiseEvent(s.line, s.end_line, f"assert {s.text}", (*self.conds, failing),
                                              self.loops > 0, reads=self.cond_reads((*self.conds, failing))))
            return False
        if kind is ir.For:
            return self.loop(s.target, s.iter, s.body, s.orelse)
        if kind is ir.While:
            self.ev(s.test)
            return self.loop(None, None, s.body, s.orelse)
        if kind is ir.With:
            for item in s.items:
                self.ev(item.context)
                if item.target is not None:
                    self.bind(item.target, Unknown("context manager value"))
            return self.block(s.body)
        if kind is ir.Try:
            saved_env, saved_conds = self._fork()
            caught = 1 if s.handlers else 0  # a raise in the body may be caught: never certain
            self.loops += caught
            self.catching.append(tuple(_handled(h.type) for h in s.handlers))
            finals = 1 if s.finalbody else 0
            self.finally_depth += finals
            marks = (len(self.raises), len(self.calls), self.handled)
            try:
                body_done = self.block(s.body)
            finally:
                self.loops -= caught
                self.catching.pop()
            reached, raised_in_body = self.handler_reached(s, marks)
            try:
                if not body_done:
                    body_done = self.block(s.orelse)
                after_body = self.env
                results = [(after_body, body_done, self.conds)]
                for handler in s.handlers:
                    self.env, self.conds = dict(saved_env), list(saved_conds)
                    if raised_in_body is not None:
                        self.conds.append(raised_in_body)
                    if handler.type is not None:
                        self.ev(handler.type)
                    mark, returned, exits = len(self.raises), len(self.returns), self.exits
                    done = self.block(handler.body)
                    if not reached:
                        # no exception the walk models reaches it: none of its raises or returns,
                        # and what follows sees the body's state (it was walked for its reads)
                        del self.raises[mark:], self.returns[returned:]
                        self.exits = exits
                        continue
                    # what follows the try rests on the paths taken, not on whether the body raised
                    results.append((self.env, done, [c for c in self.conds if c is not raised_in_body]))
            finally:
                self.finally_depth -= finals
            # what follows runs on the live paths: under the early exits any of them took
            self.conds = _joined(saved_conds, [conds[len(saved_conds):] for _, done, conds in results if not done])
            live = [env for env, done, _ in results if not done]
            self.env = merge_envs(live) if live else after_body
            finally_done = self.block(s.finalbody)
            return finally_done or not live
        if kind is ir.Def:
            name = s.qualname.rsplit(".", 1)[-1]
            qual = f"{self.module.module}.{s.qualname}"
            self.env[name] = ClassRef(qual) if s.qualname in self.module.classes else FuncRef(qual)
            return False
        if kind is ir.OtherStmt:
            for e in s.exprs:
                self.ev(e)
            return False
        if kind is ir.Jump and s.kind == "continue" and self.unrolling:
            self.exits += 1
            return True  # this item's walk ends here; the next item's begins
        return False  # ir.Jump: the enclosing loop is walked as if the body ran on

    def handler_reached(self, s, marks) -> tuple[bool, Condition | None]:
        """Whether the handlers of the try `s` may run, and the condition they run under, from
        what its body's walk recorded since `marks` (raises, calls, handled raises). Not when, in
        an effects walk (where a callee's raises are followed, and a try body's every call is
        run), no exception the walk models is raised there (no raise reached, in the body or a
        callee; no call the walk did not resolve; no import, which may fail): an exception the
        walk does not model (a library's, a builtin's) is not reachable outside a `try` either,
        so neither are the handlers' raises. Else under the undecided condition that the body raised: no raise
        of a handler is certain (the body may well complete). A `match` (a Try with no body, its
        cases as handlers) runs one of them, under no condition of its own."""
        end = s.handlers[0].line if s.handlers else s.end_line
        imports = any(s.line <= i.line < end for i in (self.fn.imports if self.fn is not None else ()))
        if not s.body and not imports:  # a body of imports alone is empty in the IR
            return True, None
        raises, calls, handled = marks
        unresolved = any(c.status == "unresolved" for c in self.calls[calls:])
        # a raise at a line of the body, recorded now or on an earlier pass (a call's value is
        # computed once: an unrolled loop's later attempts do not record its raises again)
        body_raises = len(self.raises) > raises or any(s.line <= r.line < end for r in self.raises)
        # a value walk does not follow what callees raise (Analyzer.effects): it asks, for the
        # body's calls of the tree, what an effects walk of each would raise
        callees = not self.an.effects and any(self.an.call_may_raise(c) for c in self.calls[calls:]
                                              if c.status == "static")
        if callees or body_raises or self.handled > handled or unresolved or imports:
            return True, Condition(f"the try body (lines {s.line}-{end}) raised", s.line, end,
                                   "an exception a handler catches may be raised there", True)
        return False, None

    def ends_here(self, s) -> bool:
        """A statement whose call always raises ends its path (effects walks): it becomes a raise
        here, naming the raise it comes from."""
        raised, self.raised = self.raised, None
        if raised is None:
            return False
        if self.caught:
            self.caught = False
            self.handled += 1
            return True
        conds = self.raise_conds()
        self.raises.append(RaiseEvent(s.line, s.end_line, raised.text, conds, self.loops > 0,
                                      raised.chain, self.cond_reads(conds) + raised.reads,
                                      self.cond_reads(self.guards, decided=True) + raised.guard_reads))
        return True

    def catches(self, exception: str) -> bool:
        """Whether a handler of the innermost try being walked catches `exception` (a builtin
        exception's name), by its name, `Exception`, `BaseException` or a bare `except:`."""
        if not self.catching:
            return False
        names = {exception, "Exception", "BaseException", None}
        return any(bool(names & set(handled)) for handled in self.catching[-1])

    def raise_conds(self) -> tuple[Condition, ...]:
        """The undecided conditions a raise here is under: this path's, and, when the walk read a
        recipe field that a hook may have rewritten (note_tentative), that rewrite: the recipe's
        value decided the path only if the hook left it alone."""
        conds = tuple(self.conds)
        if self.tentative:
            path = sorted(self.tentative)[0]
            text = self.an.runtime.tentative.get(path, ".".join(path))
            conds += (Condition(f"{'.'.join(path)} keeps the recipe's value", self.current[0], self.current[1],
                                text, True),)
        return conds

    def possible_raises(self, events) -> None:
        """Raises a call in the current statement may reach (Analyzer._note_may_raise): kept
        as raises of this frame at the statement, under this frame's conditions and theirs."""
        line, end = self.current
        own = self.cond_reads(self.conds)
        for event in events:
            self.raises.append(RaiseEvent(line, end, event.text, (*self.conds, *event.conditions),
                                          self.loops > 0 or event.in_loop, event.chain, own + event.reads))

    def cond_reads(self, conds, decided: bool = False) -> tuple[tuple[str, ...], ...]:
        """What undecided conditions read, from their text: `self.a.b` as the config path of
        this frame's `self` (when it has one) extended by `a.b`, `p.a` as the config path of the
        config object `p` holds extended by `a`, and each bare name as itself (a parameter or
        local: the recipe key of that name, when there is one) with what decided a local's value
        (Frame.bind; `decided`: the conditions are a raise's decided tests, which rest on the
        decided tests that led to the local's store too)."""
        if not conds:
            return ()
        base = self.self_obj.path if isinstance(self.self_obj, Obj) else None
        out: list[tuple[str, ...]] = []
        for cond in conds:
            for dotted in _dotted_reads(cond.text):
                if dotted.startswith("self."):
                    if base is not None:
                        out.append(tuple(base) + tuple(dotted.split(".")[1:]))
                elif "." not in dotted and dotted not in _WORDS:
                    out.append((dotted,))
                    out.extend(self.provenance.get(dotted, ((), ()))[decided])
                else:  # `parallel_config.x` with `parallel_config` a config object handed in
                    head, *rest = dotted.split(".")
                    held = self.env.get(head)
                    if isinstance(held, Obj) and held.path is not None:
                        out.append(tuple(held.path) + tuple(rest))
        return tuple(dict.fromkeys(out))

    def if_stmt(self, s) -> bool:
        test = self.effect(self.ev(s.test))
        if self.raised is not None:
            return self.ends_here(s)
        truth, reason = self.truth(test)
        text = s.text
        test_line, test_end = s.test.line, s.test.end_line
        if truth is not None:
            self.decisions.append(Decision(text, test_line, test_end, truth))
            self.guards.append(Condition(text, test_line, test_end, "", truth))
            try:
                return self.block(s.body if truth else s.orelse)
            finally:
                self.guards.pop()
        self.assumptions.append(Condition(text, test_line, test_end, reason))
        saved_env, saved_conds = self._fork()
        taken = Condition(text, test_line, test_end, reason, True)
        self.conds = saved_conds + [taken]
        saved_narrowed = dict(self.narrowed)
        self.narrow(s.test)
        exits = self.exits
        done_body = self.block(s.body)
        body_raises = done_body and self.exits == exits  # every path of it raised: none returned
        self.narrowed = saved_narrowed
        env_body, conds_body = self.env, self.conds
        self.env = dict(saved_env)
        not_taken = Condition(text, test_line, test_end, reason, False)
        self.conds = saved_conds + [not_taken]
        exits = self.exits
        done_else = self.block(s.orelse)
        else_raises = done_else and self.exits == exits
        env_else, conds_else = self.env, self.conds
        if done_body and done_else:
            self.env, self.conds = saved_env, saved_conds
            return True
        # what follows runs on the live branch only: under its condition where the other branch
        # returned (after an undecided `if x: return`, under `not x`), with its own early exits.
        # Where the other branch raised, what follows is what the engine does when it starts at
        # all (that raise is kept as open): it does not rest on the condition.
        mine = len(saved_conds) + 1
        if done_body:
            self.env = env_else
            self.conds = saved_conds + conds_else[mine:] if body_raises else conds_else
        elif done_else:
            self.env = env_body
            self.conds = saved_conds + conds_body[mine:] if else_raises else conds_body
        else:
            self.env = merge_envs([env_body, env_else])
            self.conds = _joined(saved_conds, [conds_body[len(saved_conds) + 1:], conds_else[len(saved_conds) + 1:]])
        return False

    def narrow(self, test) -> None:
        """Inside `if isinstance(x, C):` (or `... and isinstance(x, C)`), x is a C."""
        tests = test.values if isinstance(test, ir.BoolOp) and test.op == "and" else (test,)
        for t in tests:
            if (isinstance(t, ir.Call) and isinstance(t.func, ir.Name) and t.func.id == "isinstance"
                    and len(t.args) == 2):
                target, cls = t.args
                value = self.force(self.ev(cls))
                if not isinstance(value, ClassRef):
                    continue
                obj = Obj(cls=value.qualname, nonnull=True, origin=ir.text(target))
                if isinstance(target, ir.Name):
                    self.env[target.id] = obj
                elif isinstance(target, ir.Attr):
                    self.narrowed[ir.text(target)] = obj

    def loop(self, target, iterable, body, orelse) -> bool:
        saved = dict(self.env)
        certain = False
        if iterable is not None:
            env_before = self.an.unset_env_reads
            it = self.force(self.ev(iterable))
            self.iteration(it, iterable)
            items = it.value if isinstance(it, Const) and isinstance(it.value, (tuple, list)) else None
            pairs = self.dict_view(it)
            if _empty(it, pairs) and self.an.unset_env_reads == env_before:
                # over a container the source decides is empty: the body never runs
                return self.block(orelse)
            unrollable = target is not None and _unrollable(body)
            options = _union_items(it) if unrollable and self.an.unset_env_reads == env_before else None
            if options is not None and len(options) <= MAX_UNROLL:
                return self.walk_each(target, options, body, orelse, saved)
            if unrollable and pairs is not None and len(pairs) <= MAX_UNROLL:
                # a dict whose keys are constants: walk the body once per item, in order
                bindings: list[tuple] = []
                for item in pairs:
                    if isinstance(item, tuple) and isinstance(target, ir.Seq) and len(target.elts) == 2:
                        bindings.append(((target.elts[0], item[0]), (target.elts[1], item[1])))
                    else:
                        bindings.append(((target, item if not isinstance(item, tuple) else Unknown("a dict item")),))
                return self.unroll(target, bindings, body, orelse)
            if unrollable and items and len(items) <= MAX_UNROLL and self.an.unset_env_reads == env_before:
                # a constant table: walk the body once per item, in order, with the item bound
                return self.unroll(target, [((target, Const(item)),) for item in items], body, orelse)
            if unrollable and isinstance(it, ListVal) and it.items and not it.maybe_more \
                    and len(it.items) <= MAX_UNROLL and self.an.unset_env_reads == env_before:
                # a list whose items are known (not all constants): once per item, in order
                return self.unroll(target, [((target, self.force(item)),) for item in it.items], body, orelse)
            if unrollable and isinstance(it, TupleVal) and it.items and len(it.items) <= MAX_UNROLL \
                    and self.an.unset_env_reads == env_before:
                # a tuple whose items are known, not all constants (a class's `__mro__`)
                return self.unroll(target, [((target, item),) for item in it.items], body, orelse)
            if target is not None:
                if self.an.unset_env_reads > env_before:
                    # items drawn from an env var the recipe does not set: not a table of names the
                    # source fixes (a getattr with them is dynamic), whatever "unset" would give
                    element = Unknown(f"element of {ir.text(iterable)}: depends on the environment")
                else:
                    element = element_of(it, ir.text(iterable))
                self.bind(target, element)
            certain = (isinstance(it, Const) and isinstance(it.value, (tuple, list, frozenset, set, dict))
                       and len(it.value) > 0)
        self.loops += 0 if certain else 1
        unrolling, self.unrolling = self.unrolling, 0  # a `continue` here is this loop's
        try:
            self.block(body)  # a return inside a loop body does not end the enclosing path
        finally:
            self.loops -= 0 if certain else 1
            self.unrolling = unrolling
        self.block(orelse)
        self.env = self.env if certain else merge_envs([saved, self.env])
        return False

    def walk_each(self, target, items, body, orelse, saved) -> bool:
        """A loop over one of several constant lists (a union: a field appended to under an
        undecided condition): the body walked once for each item any of them holds, each from
        the state before the loop and as a body that may not run (which list it is, and so
        whether an item is there, is not decided)."""
        envs = [saved]
        self.loops += 1
        unrolling, self.unrolling = self.unrolling, 0
        try:
            for item in items:
                self.env = dict(saved)
                self.bind(target, Const(item))
                self.block(body)
                envs.append(self.env)
        finally:
            self.loops -= 1
            self.unrolling = unrolling
        self.env = merge_envs(envs)
        self.block(orelse)
        return False

    def unroll(self, target, bindings, body, orelse) -> bool:
        """Walk `body` once per item (`bindings`: the (target, value) pairs of each), in order;
        a `continue` ends that item's walk. True when a return or raise ends every path."""
        self.unrolled.update(n.id for n in ir.iter_exprs(target) if isinstance(n, ir.Name))
        continues = _has(body, lambda s: isinstance(s, ir.Jump))
        self.unrolling += 1
        try:
            for pairs in bindings:
                for name, value in pairs:
                    self.bind(name, value)
                if self.block(body) and not continues:
                    return True
        finally:
            self.unrolling -= 1
        return self.block(orelse)

    @staticmethod
    def dict_view(value):
        """What iterating `value` gives when it is a DictVal or its `.items()`, `.keys()` or
        `.values()` (a BoundBuiltin view): (Const key, value) pairs, keys or values; None otherwise."""
        view = None
        if isinstance(value, BoundBuiltin) and isinstance(value.receiver, DictVal):
            view, value = value.name, value.receiver
        if not isinstance(value, DictVal):
            return None
        if view == "items":
            return [(Const(k), v) for k, v in value.items]
        if view == "values":
            return [v for _, v in value.items]
        return [Const(k) for k, _ in value.items]

    def bind(self, target, value, stmt=None) -> None:
        if isinstance(target, ir.Name):
            if isinstance(value, Obj):
                value = replace(value, alias=True)
            self.env[target.id] = value
            # what decided the value a local holds: the field or name it copies (`m = self.method`;
            # what a call computes from its arguments is not followed), the undecided conditions
            # its store is under, and (for a raise's decided tests: RaiseEvent.guard_reads) the
            # decided tests on the path to it; a raise whose test reads the local reads them too
            copied = isinstance(stmt, ir.Assign) and isinstance(stmt.value, (ir.Name, ir.Attr)) \
                and _plain_ref(stmt.value)
            text = ir.text(stmt.value) if copied else ""
            line = stmt.line if stmt is not None else 0
            own = self.cond_reads((*self.conds, *((Condition(text, line, line, "", True),) if text else ())))
            self.provenance[target.id] = (own, own + self.cond_reads(self.guards, decided=True))
        elif isinstance(target, ir.Seq) and target.kind in ("tuple", "list"):
            elts = target.elts
            value = self.force(value) if isinstance(value, LazyCall) else value  # unpacked: its items are needed
            for i, elt in enumerate(elts):
                self.bind(elt, item_of(value, i, len(elts)))
        elif isinstance(target, ir.Attr):
            receiver = self.force(self.ev(target.value))  # the receiver is read, the attribute is stored
            path = receiver.path + (target.attr,) if isinstance(receiver, Obj) and receiver.path is not None else None
            line = stmt or target
            if isinstance(receiver, HfConfig):  # vLLM sets it on the model's config: never a default or absent
                self.an.runtime.hf_stores.setdefault(target.attr, f"{ir.text(target)} = ... (line {line.line})")
            self.stores.append(StoreEvent(line.line, line.end_line, ir.text(target), receiver, target.attr, value,
                                          tuple(self.conds), path, self.loops > 0))
            if path is not None:
                self.an.stored(path, value, line)
                if self.an.constructing and isinstance(stmt, (ir.Assign, ir.AugAssign)) and stmt.value is not None:
                    reads = self.cond_reads((Condition(ir.text(stmt.value), line.line, line.end_line, "", True),))
                    if reads:
                        self.an.runtime.derived.setdefault(tuple(path), set()).update(reads)
            elif isinstance(target.value, ir.Name) and isinstance(receiver, Derived) and receiver.path is None:
                # a field set on an object built here (`cfg = CacheConfig(); cfg.x = v`)
                self.set_local(target.value.id, receiver, receiver.with_field(target.attr, value))
                return
            if isinstance(target.value, ir.Name):
                # `self.x = v` in this walk: a later `self.x` here reads it (keyed by the dotted
                # text, which no local name can take, so branches merge it like a local)
                key = f"{target.value.id}.{target.attr}"
                forced = self.force(value) if not isinstance(value, LazyCall) else value
                if isinstance(forced, (Const, Obj)) or self.tracks(target.value.id, target.attr):
                    self.env[key] = forced
                else:
                    self.env.pop(key, None)
        elif isinstance(target, ir.Subscript):
            container = self.ev(target.value)
            keys = [self.force(self.ev(sl)) for sl in target.index]
            self.mutated(container, target, f"{ir.text(target)} = ...")
            if isinstance(target.value, ir.Name):
                self.changed_local(target.value.id, keys[0] if len(keys) == 1 else None, value)

    def updated_config(self, config: HfConfig, arg, text: str):
        """`config.update(arg)` for a dict literal, a dict value or one of several (a union)."""
        items = self.spread(arg, None)
        if items is not None:
            options = [[(k, self.force(v)) for k, v in items]]
        else:
            value = self.force(self.ev(arg))
            options = []
            for option in (value.options if isinstance(value, Union) else (value,)):
                if isinstance(option, Const) and option.value is None:
                    continue  # update(None) raises: not a way on
                if isinstance(option, DictVal) and all(isinstance(k, str) for k, _ in option.items):
                    options.append(list(option.items))
                elif isinstance(option, Const) and isinstance(option.value, dict):
                    options.append([(k, Const(v)) for k, v in option.value.items()])
                else:
                    return Unknown(f"{text}: keys not known")
        results = []
        for fields in options:
            updated = config
            for key, value in fields:
                updated = updated.with_field(key, value)
            results.append(updated)
        return union(results) if results else Unknown(f"{text}: raises")

    def set_local(self, name: str, old, new) -> None:
        """A local object changed in place: the name now holds `new`, and so does every model
        config holding `old` as a nested config (`text = hf.text_config; text.x = 0` changes
        `hf` too)."""
        self.env[name] = new
        if not isinstance(old, HfConfig):
            return
        for other, value in list(self.env.items()):
            if other != name and isinstance(value, HfConfig):
                updated = _with_nested(value, old, new)
                if updated is not value:
                    self.env[other] = updated

    def expr_stmt(self, e):
        """Walk an expression statement; its value (`xs.append(v)` on a local list grows it:
        `if unsupported:` later depends on it; `hf_config.update({...})` sets those keys)."""
        if isinstance(e, ir.Call) and isinstance(e.func, ir.Attr) and isinstance(e.func.value, ir.Name):
            name, method = e.func.value.id, e.func.attr
            current = self.env.get(name)
            if isinstance(current, HfConfig) and method == "update" and len(e.args) == 1 and not e.keywords:
                self.set_local(name, current, self.updated_config(current, e.args[0], ir.text(e)))
                return NONE
            if (isinstance(current, (ListVal, Const))
                    and (isinstance(current, ListVal) or isinstance(current.value, list))):
                args = [self.ev(a) for a in e.args]
                n = current.min_len if isinstance(current, ListVal) else len(current.value)
                more = current.maybe_more if isinstance(current, ListVal) else False
                if method == "append" or method == "insert":
                    known = current.items if isinstance(current, ListVal) else tuple(Const(v) for v in current.value)
                    grown = (*known, args[0]) if method == "append" and known is not None and len(args) == 1 \
                        and not e.keywords and not more else None
                    self.env[name] = ListVal(n + 1, more, grown)
                    self.mutated(current, e, ir.text(e))
                    return NONE
                if method == "extend":
                    self.env[name] = ListVal(n, True)
                    self.mutated(current, e, ir.text(e))
                    return NONE
                if method in ("sort", "reverse") and not args and not e.keywords and isinstance(current, Const):
                    try:  # a list of constants put in order: the same items, in that order
                        self.env[name] = Const(sorted(current.value) if method == "sort" else current.value[::-1])
                    except TypeError:  # items that do not compare: Python raises; not followed
                        self.env[name] = Unknown(f"{name} changed in place")
                    self.mutated(current, e, ir.text(e))
                    return NONE
        if isinstance(e, ir.Call) and isinstance(e.func, ir.Attr) and e.func.attr in MUTATORS \
                and _plain_ref(e.func.value):  # evaluated twice: only a name or attribute chain
            if self.appended_to_field(e):
                return NONE
            self.mutated(self.ev(e.func.value), e, ir.text(e))
            value = self.ev(e)
            if isinstance(e.func.value, ir.Name):
                self.changed_local(e.func.value.id, None, None)
            return value
        return self.ev(e)

    def appended_to_field(self, e) -> bool:
        """`self.ops.append("+x")` (or `.sort()`, `.reverse()`) on a config field holding a decided
        list (a constant, or one of several): the field now holds the list with that constant at
        its end (or those items in that order), stored as any
        config store is (under an undecided condition: one of the lists before and after). A
        loop over it then sees each item it may hold; any other change leaves it unknown."""
        method = e.func.attr
        if not isinstance(e.func.value, ir.Attr) or e.keywords or \
                (method, len(e.args)) not in (("append", 1), ("sort", 0), ("reverse", 0)):
            return False
        path = self.config_path_of(e.func.value)
        if path is None:
            return False
        before = self.force(self.ev(e.func.value))
        item = self.force(self.ev(e.args[0])) if e.args else None
        if item is not None and not (isinstance(item, Const) and isinstance(item.value, (str, int, float, bool,
                                                                                             type(None)))):
            return False
        options = before.options if isinstance(before, Union) else (before,)
        if not all(isinstance(o, Const) and isinstance(o.value, list) for o in options):
            return False
        try:  # `.sort()` / `.reverse()` of a decided list: the same items in that order
            after = [Const([*o.value, item.value] if item is not None else
                           sorted(o.value) if method == "sort" else o.value[::-1]) for o in options]
        except TypeError:  # items that do not compare: Python raises there; not followed
            return False
        self.an.stored(path, union(after), e)
        return True

    def changed_local(self, name: str, key, value) -> None:
        """A local container changed in place: `d[k] = v` with a constant key sets that item of a
        dict whose keys are known; any other change leaves a constant container not known."""
        current = self.env.get(name)
        if isinstance(current, LazyCall):  # `xs = f()`: the list it returned is what changes
            current = self.force(current)
        if isinstance(key, Const) and isinstance(current, (DictVal, Const)) and value is not None:
            items = current.items if isinstance(current, DictVal) else (
                tuple((k, Const(v)) for k, v in current.value.items()) if isinstance(current.value, dict) else None)
            if items is not None:
                try:
                    kept = tuple((k, v) for k, v in items if k != key.value)
                    self.env[name] = DictVal(kept + ((key.value, value),))
                    return
                except TypeError:
                    pass
        if isinstance(current, DictVal) or (isinstance(current, Const)
                                            and isinstance(current.value, (list, dict, set, frozenset))):
            self.env[name] = Unknown(f"{name} changed in place")
        elif isinstance(current, ListVal) and value is None:
            self.env[name] = ListVal(0, True)  # `pop`, `remove`, `clear`: it may hold fewer now
        elif isinstance(current, ListVal) and current.items is not None:
            self.env[name] = ListVal(current.min_len, current.maybe_more)  # `xs[i] = v`: which item, not followed

    def mutated(self, container, node, text: str) -> None:
        """A constant container read from a config field is changed in place (`xs.append(v)`,
        `d[k] = v`, also through a local alias or a parameter): the field no longer holds the
        constant read before, so later reads of it are not that constant (an empty list seen
        after an append would skip a loop that runs)."""
        container = self.force(container)
        path = container.origin if isinstance(container, Const) else None
        if path and isinstance(container.value, (list, dict, set, frozenset)):
            self.an.stored(path, Unknown(f"{'.'.join(path)} is changed in place by {text}"), node)

    # -- expressions ---------------------------------------------------------------------------
    def ev(self, e):
        return self._EV[type(e)](self, e)

    def ev_constant(self, e):
        return Const(e.value)

    def ev_name(self, e):
        return self.name(e.id)

    def ev_attr(self, e):
        receiver = self.ev(e.value)
        value = self.attr(receiver, e.attr, e, record=True)
        if isinstance(e.value, ir.Name):
            stored = self.env.get(f"{e.value.id}.{e.attr}")
            if isinstance(stored, (Const, Obj)):
                return stored
            if stored is not None and not isinstance(stored, Unbound) and self.tracks(e.value.id, e.attr):
                return stored  # a tracked field holds what was last stored on this path, known or not
        if self.narrowed:
            narrowed = self.narrowed.get(ir.text(e))
            if narrowed is not None:
                return narrowed
        return value

    def ev_not(self, e):
        truth, reason = self.truth(self.ev(e.operand))
        return Const(not truth) if truth is not None else Unknown(reason)

    def ev_unary(self, e):
        value = self.force(self.ev(e.operand))
        if isinstance(value, Const) and isinstance(value.value, (int, float)) and not isinstance(value.value, bool):
            return Const({"-": -value.value, "+": value.value}.get(e.op, None)) if e.op in "-+" else Unknown("~")
        return Unknown(ir.text(e))

    def ev_binop(self, e):
        return self.binop_value(e, e.op, self.ev(e.left), self.ev(e.right))

    def ev_seq(self, e):
        values = [self.ev(x) for x in e.elts]
        if all(isinstance(v, Const) for v in values):
            items = [v.value for v in values]
            if e.kind == "tuple":
                return Const(tuple(items))
            if e.kind == "list":
                return Const(items)
            try:
                return Const(frozenset(items))
            except TypeError:
                return Unknown("set")
        if e.kind == "list":
            starred = any(isinstance(x, ir.Starred) for x in e.elts)
            return ListVal(sum(1 for x in e.elts if not isinstance(x, ir.Starred)), starred,
                           None if starred else tuple(values))
        if e.kind == "tuple" and not any(isinstance(x, ir.Starred) for x in e.elts):
            return TupleVal(tuple(values))
        return Unknown(ir.text(e))

    def ev_dict(self, e):
        keys = [self.ev(k) if k is not None else None for k in e.keys]
        values = [self.ev(v) for v in e.values]
        for k, v in zip(e.keys, e.values, strict=True):
            if k is None:
                self.note_kwargs(v, e, "dict unpacking")
        if any(k is None for k in e.keys):  # `{**a, "k": v, **b}`: known only where each mapping is
            return self.merged_dict(keys, values)
        if all(isinstance(k, Const) for k in keys) and all(isinstance(v, Const) for v in values):
            try:
                return Const({k.value: v.value for k, v in zip(cast("list[Const]", keys), values, strict=True)})
            except TypeError:
                pass
        if keys and all(isinstance(k, Const) for k in keys):
            return DictVal(tuple((k.value, v) for k, v in zip(cast("list[Const]", keys), values, strict=True)))
        return Unknown("dict")

    def merged_dict(self, keys, values):
        """A dict display with `**mapping` entries, later keys winning: a Const (or DictVal) when
        every spread mapping's items are known, else unknown."""
        items: dict = {}
        for k, v in zip(keys, values, strict=True):
            if k is None:
                mapping = self.force(v)
                if isinstance(mapping, Const) and isinstance(mapping.value, dict):
                    items.update((key, Const(item)) for key, item in mapping.value.items())
                elif isinstance(mapping, DictVal):
                    items.update(mapping.items)
                else:
                    return Unknown("dict")
            elif isinstance(k, Const):
                try:
                    items[k.value] = v
                except TypeError:
                    return Unknown("dict")
            else:
                return Unknown("dict")
        if all(isinstance(v, Const) for v in items.values()):
            return Const({k: v.value for k, v in items.items()})
        return DictVal(tuple(items.items()))

    def ev_ifexp(self, e):
        truth, reason = self.truth(self.ev(e.test))
        if truth is True:
            return self.ev(e.body)
        if truth is False:
            return self.ev(e.orelse)
        return union([self.ev(e.body), self.ev(e.orelse)])

    def ev_lambda(self, e):
        # the body may run later: walk it once so its calls and reads are seen
        saved = dict(self.env)
        for name in e.params:
            self.env[name] = Unknown(f"lambda parameter {name}")
        self.ev(e.body)
        self.env = saved
        self.an.lambdas += 1
        return Lambda("lambda", f"{self.module.module}:{e.line}#{self.an.lambdas}", e, self)

    def call_lambda(self, fn: Lambda, args: tuple):
        """A lambda's body with its parameters bound to `args`, in the frame that wrote it (its
        names as they are now). What the body's calls may raise is raised here, at the call."""
        saved, marks = self.env, (len(self.calls), len(self.reads), len(self.dynamic), len(self.decisions))
        self.env = dict(saved)
        self.env.update(zip(fn.expr.params, args, strict=True))
        try:
            return self.ev(fn.expr.body)
        finally:
            self.env = saved
            # what the body calls and reads was recorded where it was written (ev_lambda); a call
            # it could not resolve leaves the caller's statement open too (Frame.handler_reached)
            unresolved = [c for c in self.calls[marks[0]:] if c.status == "unresolved"]
            del self.calls[marks[0]:], self.reads[marks[1]:], self.dynamic[marks[2]:], self.decisions[marks[3]:]
            caller = self.an.stack[-1] if self.an.stack else None
            if unresolved and caller is not None and caller is not self:
                line, end = caller.current
                caller.calls.append(CallEvent(line, end, unresolved[0].text, None, "call", "unresolved",
                                              f"the lambda it calls calls {unresolved[0].text}: "
                                              f"{unresolved[0].reason}"))

    def ev_comp(self, e):
        first = self.force(self.ev(e.generators[0].iter)) if e.generators else None
        if first is not None and _empty(first, self.dict_view(first)) and e.kind in EMPTY_COMPREHENSIONS:
            self.iteration(first, e.generators[0].iter)
            return Const(EMPTY_COMPREHENSIONS[e.kind]())  # over an empty container: nothing is computed
        if e.kind == "dict":
            built = self.dict_comp(e, first)
            if built is not None:
                return built
        if e.kind in ("list", "set", "generator"):
            options = first.options if isinstance(first, Union) else (None,)
            found = [self.comp_items(e, option) for option in options]  # a union: each of its lists
            if all(items is not None for items in found):
                try:  # a generator as the tuple of what it yields (as `sorted`, `zip`: _SEQUENCES)
                    kind = {"list": list, "set": frozenset, "generator": tuple}[e.kind]
                    return union([Const(items if e.kind == "list" else kind(items)) for items in found])
                except TypeError:
                    pass
        saved = dict(self.env)
        for gen in e.generators:
            value = self.force(self.ev(gen.iter))
            self.iteration(value, gen.iter)
            self.bind(gen.target, element_of(value, ir.text(gen.iter)))
            for cond in gen.ifs:
                self.ev(cond)
        for elt in e.elts:
            self.ev(elt)
        self.env = saved
        return Unknown("comprehension")

    def dict_comp(self, e, first):
        """`{k: v for k, v in d.items() if ...}` over a dict whose keys are known (a constant or
        a DictVal), each filter decided per item: the dict it builds; None otherwise."""
        pairs = self.dict_view(first)
        if pairs is None and isinstance(first, BoundBuiltin) and first.name == "items" \
                and isinstance(first.receiver, Const) and isinstance(first.receiver.value, dict):
            pairs = [(Const(k), Const(v)) for k, v in first.receiver.value.items()]
        if pairs is None and isinstance(first, Const) and isinstance(first.value, (tuple, list)) \
                and all(isinstance(p, tuple) and len(p) == 2 for p in first.value):
            pairs = [(Const(k), Const(v)) for k, v in first.value]  # a computed `.items()`: its pairs
        gen = e.generators[0] if len(e.generators) == 1 else None
        if pairs is None or gen is None or len(e.elts) != 2 or not (isinstance(gen.target, ir.Seq) and len(
                gen.target.elts) == 2) or not all(isinstance(p, tuple) and len(p) == 2 for p in pairs):
            return None
        saved, items = dict(self.env), []
        try:
            for key, value in pairs:
                self.bind(gen.target, TupleVal((key, value)))
                truths = [self.truth(self.ev(c))[0] for c in gen.ifs]
                if None in truths:
                    return None
                if all(truths):
                    k = self.force(self.ev(e.elts[0]))
                    if not isinstance(k, Const):
                        return None
                    items.append((k.value, self.ev(e.elts[1])))
        finally:
            self.env = saved
        if all(isinstance(self.force(v), Const) for _, v in items):
            return Const({k: self.force(v).value for k, v in items})
        return DictVal(tuple(items))

    def comp_items(self, e, it=None):
        """The items of a one-generator comprehension over a small constant table (`it` when
        given: one option of a union the iterable is), each decided (`any(platform.is_family(f)
        for f in (80, 90))`); None when any is not."""
        if not isinstance(e, ir.Comp) or len(e.elts) != 1 or len(e.generators) != 1:
            return None
        gen = e.generators[0]
        it = self.force(self.ev(gen.iter)) if it is None else it
        if isinstance(it, TupleVal) and (all(isinstance(item, LocalPath) for item in it.items)
                                         or len(it.items) <= MAX_UNROLL):
            table = it.items  # a directory's listing (srcreview.interp.paths bounds it), a class's MRO
        elif isinstance(it, Const) and isinstance(it.value, (tuple, list)) and len(it.value) <= MAX_UNROLL:
            table = tuple(Const(item) for item in it.value)
        else:
            return None
        saved, items = dict(self.env), []
        try:
            for item in table:
                self.bind(gen.target, item)
                truths = [self.truth(self.ev(c))[0] for c in gen.ifs]
                if None in truths:
                    return None
                if not all(truths):
                    continue
                value = self.force(self.ev(e.elts[0]))
                if not isinstance(value, Const):
                    return None
                items.append(value.value)
        finally:
            self.env = saved
        return items

    def ev_starred(self, e):
        self.ev(e.value)
        return Unknown("*args")

    def ev_walrus(self, e):
        value = self.ev(e.value)
        self.bind(e.target, value)
        return value

    def ev_slice(self, e):
        parts = [self.force(self.ev(part)) if part is not None else NONE for part in (e.lower, e.upper, e.step)]
        if all(isinstance(p, Const) and (p.value is None or type(p.value) is int) for p in parts):
            return Const(slice(*(p.value for p in parts)))  # `op[1:]` of a constant is computed
        return Unknown("slice")

    def ev_other(self, e):
        parts = [self.ev(child) for child in e.children]
        if e.kind == "JoinedString":  # an f-string of plain parts: joined where each is a str or a number
            forced = [self.force(p) for p in parts]
            if all(isinstance(p, Const) and type(p.value) in (str, int) for p in forced):
                return Const("".join(str(p.value) for p in forced))
            return Text("FormattedString")
        return Text(e.kind) if e.kind == "FormattedString" else Unknown(e.kind)

    def name(self, name: str):
        value = self.env[name] if name in self.env else self.an.resolver.global_name(self.module, name, self.scope)
        if isinstance(value, FuncRef) and ".<locals>." in value.qualname and self.fn is not None \
                and not value.closure:
            # a nested function sees this frame's names (`self` in a helper defined in a method)
            free = tuple((k, v) for k, v in self.env.items() if "." not in k)
            return replace(value, closure=free)
        return value

    def attr(self, receiver, name: str, e, record: bool, kind: str | None = None):
        if isinstance(receiver, LazyCall) and isinstance(receiver.target, Ref):
            # the result of a call through an import: typed only if a condition needs its value,
            # so that reading one attribute does not parse the callee's module; a class called is
            # its instance (building one walks nothing, and its methods are then followed)
            # (built too where the engine's builder flow is followed: it reads the configs it builds)
            target = self.an.force(receiver.target) if self.an.effects or self.flow is not None else None
            receiver = self.an.instantiate(target.qualname, receiver.args, receiver.kwargs) \
                if isinstance(target, ClassRef) else \
                Obj(cls=("returns", receiver.target.dotted), origin=f"result of {receiver.text}")
        elif isinstance(receiver, (LazyCall, Ref)):
            receiver = self.force(receiver)
        if isinstance(receiver, Union):
            options = [self.attr(o, name, e, record, kind) for o in receiver.options
                       if not (isinstance(o, Const) and o.value is None)]
            return union(options) if options else Unknown(f"attribute of None: {name}")
        if record and (isinstance(receiver, (Obj, Unknown, OneOf))):
            if name == "__dict__":
                self.dynamic.append(DynamicEvent("dunder-dict", e.line, e.end_line, ir.text(e), receiver))
            else:
                read_kind = kind or ("alias" if isinstance(receiver, Obj) and receiver.alias else "direct")
                self.reads.append(ReadEvent(e.line, e.end_line, ir.text(e), receiver, name, read_kind))
        value = self.an.resolver.attribute(receiver, name)
        if isinstance(value, Unknown) and isinstance(e, ir.Attr) \
                and ir.text(e.value).split(".")[-1].endswith("platform"):
            # a class-level constant of the platform object (`current_platform.device_type`)
            constant = self.an.runtime.platform_constant(name)
            value = constant if constant is not None else value
        if isinstance(value, LazyCall) and isinstance(value.target, FuncRef) and value.target.via == "property":
            self.calls.append(CallEvent(e.line, e.end_line, ir.text(e), value.target, "property", "static",
                                        args=(receiver,)))
        return value

    def call(self, e):
        func_expr, arg_exprs, keywords = e.func, e.args, e.keywords
        text = ir.text(e)
        # hardware capability questions are answered from the recipe, whatever object asks them
        if isinstance(func_expr, ir.Attr) and func_expr.attr in self.an.domain.capability_calls:
            self.ev(func_expr.value)
            args = [self.ev(a) for a in arg_exprs]
            answer = self.an.runtime.capability_call(func_expr.attr, args, self.an.force)
            if isinstance(answer, Unknown):  # the recipe does not say: the call stays open, and says why
                self.calls.append(CallEvent(e.line, e.end_line, text, None, "call", "unresolved", answer.reason))
            return answer
        # which platform: `current_platform.is_cuda()` is answered from the recipe's GPU vendor
        if isinstance(func_expr, ir.Attr) and func_expr.attr in self.an.domain.platform_predicates and not arg_exprs \
                and ir.text(func_expr.value).split(".")[-1].endswith("platform"):
            self.ev(func_expr.value)
            return self.an.runtime.platform_call(func_expr.attr)
        callee = self.ev(func_expr)
        if isinstance(callee, Unknown) and isinstance(func_expr, ir.Attr) \
                and ir.text(func_expr.value).split(".")[-1].endswith("platform"):
            # another method of the platform object: the one the profile's platform class defines
            method = self.an.runtime.platform_method(func_expr.attr)
            if method is not None:
                callee = FuncRef(method[0], bound=ClassRef(method[1]))
        if isinstance(callee, Builtin):
            return self.builtin_call(callee.name, arg_exprs, keywords, e)
        # what is installed: `find_spec("triton")`, `entry_points(group=...)` from the runtime profile
        if isinstance(callee, External) and callee.name in self.an.domain.probe_calls:
            return self.an.runtime.probe_call(callee.name, [self.force(self.ev(a)) for a in arg_exprs],
                                              [(k.name, self.force(self.ev(k.value))) for k in keywords])
        if isinstance(callee, External) and callee.name in builtins.PURE_EXTERNALS and not keywords:
            return builtins.external_value(callee.name, [self.force(self.ev(a)) for a in arg_exprs], text)
        if isinstance(callee, External) and callee.name in builtins.TYPING_ARGS and len(arg_exprs) == 1:
            return builtins.typing_args(self.an.index, self.module.module, ir.text(arg_exprs[0]))
        if isinstance(callee, External) and callee.name == "importlib.import_module" and len(arg_exprs) == 1 \
                and not keywords:
            name = self.force(self.ev(arg_exprs[0]))
            if isinstance(name, Const) and isinstance(name.value, str) and self.an.index.has_module(name.value):
                self.calls.append(CallEvent(e.line, e.end_line, text, callee, "call", "external",
                                            f"imports {name.value}", args=(name,)))
                return ModuleRef(name.value)  # a module of the tree, by its absolute name
        if isinstance(callee, External) and callee.name == builtins.SIGNATURE and len(arg_exprs) == 1 and not keywords:
            return self.signature(self.force(self.ev(arg_exprs[0])), text)
        args = tuple(self.ev(a) for a in arg_exprs)
        kwargs = []
        forwards = False  # a `**mapping` whose keys are not known (not the recipe's own table)
        static = isinstance(callee, (FuncRef, Ref, ClassRef))
        for keyword in keywords:
            value_expr = keyword.value
            value = self.ev(value_expr)
            if keyword.name is None:
                spread = self.spread(value_expr, value)
                if spread is not None:  # `f(**{name: v})` with names the source fixes
                    kwargs.extend(spread)
                    continue
                # `f(**mapping)`: dynamic when the mapping is this function's own **kwargs (anything
                # a caller passed) or when it goes where the analysis cannot follow
                forwards = forwards or not (isinstance(value, Obj) and value.path is not None)
                forwards_own = isinstance(value_expr, ir.Name) and value_expr.id == self.kwargs_param
                if forwards_own or not static:
                    self.note_kwargs(value, value_expr, text)
            else:
                kwargs.append((keyword.name, value))
        kwargs = tuple(kwargs)
        own = self.own_method(func_expr, callee)
        if own is None:
            return self.an.call_value(self, callee, args, kwargs, e, text, forwards)
        value = self.an.call_value(self, own, args, kwargs, e, text, forwards)
        self.flow_back(self.flow.stores.get(func_expr.attr, ()), self.an.flow_exit(own, args, kwargs))
        return value

    def flow_back(self, names, state: dict | None) -> None:
        """After a method called on `self` (or `__post_init__`, before the builder), the fields it
        may store hold what it leaves them on every path it returns by (Analyzer.flow_exit); one
        it leaves unknown reads as the field's other stores leave it."""
        for name in names:
            key = f"{self.receiver}.{name}"
            held = state.get(name) if state is not None else None
            if held is not None and not isinstance(held, Unknown):
                self.env[key] = held
            elif self.an.runtime.binding((name,)) is None:
                self.env.pop(key, None)  # the field's own reading: unknown, naming the method that fills it
            else:  # never the recipe's value again: the call may have stored over it
                self.env[key] = held if held is not None else Unknown(f"{key}: what the call stores is not followed")

    def own_method(self, func_expr, callee) -> FuncRef | None:
        """`self.method` called where the builder's flow is followed (self.flow): the method with
        this frame's tracked fields as it has them, handed on (FuncRef.closure, under the method's
        own name for its instance); None for any other call."""
        if self.flow is None or not isinstance(callee, FuncRef) or not isinstance(func_expr, ir.Attr) \
                or not isinstance(func_expr.value, ir.Name) or func_expr.value.id != self.receiver:
            return None
        return self.handed(callee)

    def handed(self, callee: FuncRef) -> FuncRef | None:
        """A method of the builder's instance with this frame's tracked fields in its closure."""
        target = self.an.index.function(callee.qualname)
        if target is None or target.facts.is_staticmethod or target.facts.is_classmethod or not target.facts.params:
            return None
        theirs = target.facts.params[0].name
        prefix = f"{self.receiver}."
        handed = tuple((f"{theirs}.{key[len(prefix):]}", value) for key, value in sorted(self.env.items())
                       if key.startswith(prefix) and key[len(prefix):] in self.flow.tracked)
        return replace(callee, closure=(*callee.closure, *handed, (FLOW_KEY, Const(self.flow.builder))))

    def spread(self, expr, value):
        """The named arguments of `**{"a": x, key: y}` when every key is a known string, or of
        `**mapping` when the mapping's value is a dict whose keys are all known strings."""
        if not isinstance(expr, ir.Dict):
            known = self.force(value) if value is not None else None
            if isinstance(known, Const) and isinstance(known.value, dict) \
                    and all(isinstance(k, str) for k in known.value):
                return [(k, Const(v)) for k, v in known.value.items()]
            if isinstance(known, DictVal) and all(isinstance(k, str) for k, _ in known.items):
                return list(known.items)
            return None
        if any(k is None for k in expr.keys):
            return None
        out = []
        for k, v in zip(expr.keys, expr.values, strict=True):
            key = self.force(self.ev(k))
            if not (isinstance(key, Const) and isinstance(key.value, str)):
                return None
            out.append((key.value, self.ev(v)))
        return out

    def effect(self, value, returned: bool = False):
        """In an effects walk, a call whose value is not needed still runs: its stores and an
        always-raising callee matter. Elsewhere calls stay lazy."""
        if not self.an.effects or not isinstance(value, LazyCall) or value.target is None:
            return value
        if not self.an.follows(value) and not self.catching and not returned:  # in a try body, for what it may raise
            return value
        return self.force(value)

    def config_path_of(self, expr):
        """The config path an expression names syntactically (`self.pooler_config` inside a config
        method), whatever value is known there: None when it names none."""
        if isinstance(expr, ir.Attr):
            base = self.force(self.ev(expr.value))
            if isinstance(base, Obj) and base.path is not None:
                return base.path + (expr.attr,)
            inner = self.config_path_of(expr.value)
            return inner + (expr.attr,) if inner is not None else None
        if isinstance(expr, ir.Name) and self.symbol is not None:  # the builder's `kernel_config` local
            field = self.an.domain.builder_locals(self.an.index, self.symbol.qualname).get(expr.id)
            return (field,) if field else None
        return None

    def local_root_class(self, expr) -> str | None:
        """The class of the object built in this function that `expr` reads from (`kernel_config`
        in `kernel_config.ir_op_priority`), if it does."""
        while isinstance(expr, ir.Attr):
            expr = expr.value
        root = self.env.get(expr.id) if isinstance(expr, ir.Name) else None
        if isinstance(root, Derived) and root.path is None and isinstance(root.cls, str):
            return self.an.resolver.canonical(root.cls)
        return None

    def set_attribute(self, receiver, attr, value, e, named_path=None, local_class=None, only_none=False):
        """`setattr(obj, name, v)` / `delattr(obj, name)`: a store like `obj.name = v` when the
        name is known; otherwise every field the name may be is unknown from here on (on that
        config object, or on any when the receiver is not known)."""
        receiver = self.force(receiver)
        text = ir.text(e)
        if isinstance(receiver, HfConfig):
            name = attr.value if isinstance(attr, Const) and isinstance(attr.value, str) else "*"
            self.an.runtime.hf_stores.setdefault(name, f"{text} (line {e.line})")
        path = receiver.path if isinstance(receiver, Obj) and receiver.path is not None else named_path
        if isinstance(attr, Const) and isinstance(attr.value, str):
            target = path + (attr.value,) if path is not None else None
            self.stores.append(StoreEvent(e.line, e.end_line, text, receiver, attr.value, value, tuple(self.conds),
                                          target, self.loops > 0))
            if target is not None:
                self.an.stored(target, value, e)
            elif isinstance(receiver, Obj) and isinstance(receiver.cls, str):
                self.an.havoc(None, (attr.value,), e, cls=self.an.resolver.canonical(receiver.cls))
            elif not isinstance(receiver, Obj) or receiver.cls is None:
                self.an.havoc(None, (attr.value,), e)
            return NONE
        names = tuple(attr.values) if isinstance(attr, OneOf) and all(isinstance(v, str) for v in attr.values) else None
        self.dynamic.append(DynamicEvent("dynamic-getattr", e.line, e.end_line, text, receiver))
        cls = self.an.resolver.canonical(receiver.cls) if isinstance(receiver, Obj) and isinstance(receiver.cls, str) \
            else None
        if path is None and local_class is not None:  # reached from an object built here: its fields
            self.an.havoc(None, None, e, cls=local_class, only_none=only_none)
            return NONE
        self.an.havoc(path, names, e, cls=cls if path is None else None, only_none=only_none)
        return NONE

    def signature(self, fn, text: str):
        """`inspect.signature(f)` of a function of the tree, as the stdlib builds it from the
        `def`: its parameters' names and kinds in order (annotations and defaults left out);
        the first dropped where `f` is bound. Unknown for a decorated function (a decorator may
        hand back another signature) or anything else."""
        if not isinstance(fn, FuncRef):
            return Unknown(text)
        info = self.an.index.function(fn.qualname)
        if info is None or any(d not in ("staticmethod", "classmethod") for d in info.facts.decorators):
            return Unknown(text)
        params = builtins.signature_of(info.facts)
        if params is None:
            return Unknown(text)
        if self.an.resolver.is_bound_method(fn) and params.parameters:
            params = params.replace(parameters=list(params.parameters.values())[1:])
        return Const(params)

    def external_class_attr(self, receiver, name: str):
        """`getattr(Cls, name)` found first on an out-of-tree base of the class's MRO (a stub lists
        it there): that library's attribute, not a later definition of the tree."""
        if not isinstance(receiver, ClassRef):
            return None
        cls = self.an.resolver.canonical(receiver.qualname)
        binding = self.an.resolver.class_binding(cls, name) if cls else None
        return External(f"{binding[1]}.{name}") if binding is not None and binding[0] == "external" else None

    def note_kwargs(self, value, expr, text) -> None:
        self.dynamic.append(DynamicEvent("kwargs-forward", expr.line, expr.end_line, text, value))

    def builtin_call(self, name, arg_exprs, keywords, e):
        text = ir.text(e)
        if name in ("getattr", "setattr", "hasattr", "delattr") and len(arg_exprs) >= 2:
            receiver = self.ev(arg_exprs[0])
            attr = self.force(self.ev(arg_exprs[1]))
            extras = [self.ev(extra) for extra in arg_exprs[2:]]
            if name in ("setattr", "delattr"):
                guard = f"getattr({ir.text(arg_exprs[0])}, {ir.text(arg_exprs[1])}) is None"
                only_none = name == "setattr" and any(c.text == guard for c in self.an.path_conditions())
                return self.set_attribute(receiver, attr, extras[0] if extras else Unknown(f"{text}: deleted"), e,
                                          self.config_path_of(arg_exprs[0]), self.local_root_class(arg_exprs[0]),
                                          only_none)
            if isinstance(attr, Const) and isinstance(attr.value, str):
                forced = self.force(receiver)
                has = self.an.resolver.has_attribute(forced, attr.value)
                if isinstance(forced, FuncRef) and attr.value == "__func__":
                    has = self.an.resolver.is_bound_method(forced)
                if name == "hasattr":
                    return Const(has) if has is not None else Unknown(text)
                if name == "getattr":
                    if has is False and len(arg_exprs) >= 3:
                        return self.ev(arg_exprs[2])  # the attribute cannot exist: the default
                    shadow = self.external_class_attr(forced, attr.value) if has else None
                    if shadow is not None:
                        return shadow
                    from_table = isinstance(arg_exprs[1], ir.Name) and arg_exprs[1].id in self.unrolled
                    value = self.attr(receiver, attr.value, e, record=True,
                                      kind="getattr-table" if from_table else "getattr-literal")
                    if len(arg_exprs) >= 3 and isinstance(value, Unknown):
                        return Unknown(f"{text}: {value.reason}" if MODEL_CONFIG_UNKNOWN in value.reason else text)
                    return value
                return Unknown(text)
            if isinstance(attr, OneOf) and all(isinstance(v, str) for v in attr.values):
                if name in ("getattr", "hasattr"):
                    for value in attr.values:
                        self.reads.append(ReadEvent(e.line, e.end_line, text, receiver, value, "getattr-table"))
                return Unknown(text)
            self.dynamic.append(DynamicEvent("dynamic-getattr", e.line, e.end_line, text, receiver))
            return Unknown(f"{name} with a name known only at run time")
        if name == "vars" and arg_exprs:
            receiver = self.ev(arg_exprs[0])
            self.dynamic.append(DynamicEvent("dunder-dict", e.line, e.end_line, text, receiver))
            return Unknown(text)
        if name == "next" and len(arg_exprs) == 1 and isinstance(arg_exprs[0], ir.Call) \
                and isinstance(arg_exprs[0].func, ir.Name) and arg_exprs[0].func.id in ("iter", "reversed") \
                and len(arg_exprs[0].args) == 1 and not arg_exprs[0].keywords:
            # the first item of a fresh iterator over a value the walk knows item by item
            items = self.force(self.ev(arg_exprs[0].args[0]))
            if isinstance(items, Const) and isinstance(items.value, (tuple, list, dict, str, frozenset)) \
                    and not (isinstance(items.value, frozenset) and len(items.value) > 1):  # no order to rely on
                ordered = list(items.value)
                if arg_exprs[0].func.id == "reversed":
                    ordered.reverse()
                return Const(ordered[0]) if ordered else Unknown(f"{text}: StopIteration")
            return Unknown(text)
        if name in ("any", "all") and len(arg_exprs) == 1 and not keywords:
            items = self.comp_items(arg_exprs[0])
            if items is not None:
                return Const((any if name == "any" else all)(items))
        args = [self.ev(a) for a in arg_exprs]
        handed = list(args)
        for keyword in keywords:
            v = self.ev(keyword.value)
            handed.append(v)
            if keyword.name is None:
                self.note_kwargs(v, keyword.value, text)
        if name in RUNS_CODE:  # code given as text: any function may run here; never silent
            self.calls.append(CallEvent(e.line, e.end_line, text, None, "call", "unresolved",
                                        f"{name}() runs code known only at run time", args=tuple(args)))
            return Unknown(f"{name}() of code known only at run time")
        if name not in NEVER_CALL:
            self.handed_functions(handed, e, text)
        if name == "super":
            if self.owner is not None:
                bound = self.self_obj if self.self_obj is not None \
                    else self.env.get(self.fn.params[0].name) if self.fn and self.fn.params else None
                return Super(f"{self.module.module}.{self.owner}", cast("Obj | None", bound))
            return Unknown("super() outside a method")
        return self.an.builtin_value(name, args, text)

    def handed_functions(self, values, e, text) -> None:
        """A builtin handed an in-tree function (`map(f, xs)`, `sorted(xs, key=f)`) may call it:
        an edge to it."""
        for value in values:
            if isinstance(value, (FuncRef, Partial)):
                target = value.func if isinstance(value, Partial) else value
                self.calls.append(CallEvent(e.line, e.end_line, text, target, "call", "static"))

    def iteration(self, iterable, e) -> None:
        """`for x in obj` (or a comprehension over it) calls `obj.__iter__()` and the iterator's
        `__next__()`: edges to them when they are in-tree methods."""
        iterable = self.force(iterable)
        if not isinstance(iterable, Obj) or isinstance(iterable, HfConfig) or not isinstance(iterable.cls, str):
            return
        text = ir.text(e)
        method = self.an.resolver.attribute(iterable, "__iter__")
        if not isinstance(method, FuncRef):
            return
        self.calls.append(CallEvent(e.line, e.end_line, f"iter({text})", method, "call", "static",
                                    args=(iterable,)))
        iterator = self.force(LazyCall(method, (), (), f"iter({text})"))
        if isinstance(iterator, Obj) and not isinstance(iterator, HfConfig) and isinstance(iterator.cls, str):
            step = self.an.resolver.attribute(iterator, "__next__")
            if isinstance(step, FuncRef):
                self.calls.append(CallEvent(e.line, e.end_line, f"next(iter({text}))", step, "call", "static",
                                            args=(iterator,)))

    def compare(self, e):
        left = self.ev(e.left)
        result: bool | None = True
        reason = ""
        for op, right_expr in zip(e.ops, e.comparators, strict=True):
            right = self.ev(right_expr)
            value, why = self.an.compare(op, left, right)
            if value is False:
                return Const(False)
            if value is None:
                result = None
                reason = reason or why
            left = right
        return Const(True) if result else Unknown(reason or ir.text(e))

    def boolop(self, e):
        op, values = e.op, e.values
        unknown_reason = None
        last = None
        for sub in values:
            value = self.ev(sub)
            truth, reason = self.truth(value)
            last = value
            if op == "and" and truth is False:
                if unknown_reason is None:
                    return value
                # `<unknown> and False` is falsy whichever the unknown is: decided for a test
                # (its value is the unknown if that is falsy, so only a boolean False stands in;
                # any other falsy operand, `None`, leaves a value known only to be falsy)
                forced = self.force(value)
                return forced if isinstance(forced, Const) and forced.value is False \
                    else Known(unknown_reason, truth=False)
            if op == "or" and truth is True:
                return value if unknown_reason is None else Unknown(unknown_reason)
            if truth is None:
                unknown_reason = unknown_reason or reason
        if unknown_reason is not None:
            return Unknown(unknown_reason)
        return last

    def subscript(self, e):
        value = self.force(self.ev(e.value))
        keys = [self.force(self.ev(s)) for s in e.index]
        if isinstance(value, External) and value.name in ("os.environ",) and keys and isinstance(keys[0], Const):
            return self.an.env_value(keys[0].value, None)
        if isinstance(value, ClassRef) and len(keys) == 1 and isinstance(keys[0], Const) \
                and isinstance(keys[0].value, str):
            member = self.an.resolver.class_attr(value.qualname, keys[0].value)  # `SomeEnum[name]`
            if isinstance(member, Const) and isinstance(member.value, EnumMember):
                return member
            return Unknown(ir.text(e))
        if isinstance(value, DictVal) and len(keys) == 1 and isinstance(keys[0], Const):
            return self.an.dict_item(value, keys[0].value, ir.text(e))
        if isinstance(value, Const) and isinstance(value.value, dict) and len(keys) == 1 \
                and isinstance(keys[0], Const) and keys[0].value not in value.value:
            return self.an.dict_item(DictVal(tuple((k, Const(v)) for k, v in value.value.items())), keys[0].value,
                                     ir.text(e))
        if isinstance(value, (TupleVal, ListVal)) and value.items is not None and len(keys) == 1 \
                and isinstance(keys[0], Const) and type(keys[0].value) is int \
                and -len(value.items) <= keys[0].value < len(value.items):
            return value.items[keys[0].value]
        if isinstance(value, Const) and len(keys) == 1 and isinstance(keys[0], Const):
            try:
                return Const(value.value[keys[0].value])
            except Exception:  # noqa: BLE001 - an index the constant does not have
                return Unknown(ir.text(e))
        return Unknown(ir.text(e))

    def binop_value(self, e, op, left, right):
        value = binop(op, self.force(left), self.force(right))
        return value if value is not None else Unknown(ir.text(e))

    _EV: ClassVar[dict[type, Callable[[Any, Any], Any]]] = {
        ir.Constant: ev_constant, ir.Name: ev_name, ir.Attr: ev_attr, ir.Call: call, ir.Compare: compare,
        ir.BoolOp: boolop, ir.Not: ev_not, ir.Unary: ev_unary, ir.BinOp: ev_binop, ir.Subscript: subscript,
        ir.Seq: ev_seq, ir.Dict: ev_dict, ir.IfExp: ev_ifexp, ir.Lambda: ev_lambda, ir.Comp: ev_comp,
        ir.Starred: ev_starred, ir.Walrus: ev_walrus, ir.Slice: ev_slice, ir.OtherExpr: ev_other,
    }

    # -- values --------------------------------------------------------------------------------
    def force(self, value):
        return self.an.force(value)

    def truth(self, value):
        return self.an.truth(value)


class Analyzer:
    """Walks functions of one Index under one set of bindings; caches walks and return values."""

    def body_of(self, symbol, fn):
        """The statements a walk of `fn` takes: its own, or its summary (Analyzer.summary)."""
        summary = self.summary_body(symbol, fn)
        return fn.body if summary is None else summary

    def summary_body(self, symbol, fn):
        """The one statement the framework model summarizes `fn` by (Domain.summary_statement:
        the model registry's inspection), as a body written at the function's first line so
        anchors stay in it; None for a function walked as written."""
        if symbol is None:
            return None
        memo = self.index.memo.setdefault("summary_body", {})
        if symbol.qualname not in memo:
            statement = self.domain.summary_statement(symbol.qualname, tuple(p.name for p in fn.params))
            memo[symbol.qualname] = None if statement is None else _summary_body(symbol, fn, statement)
        return memo[symbol.qualname]

    def __init__(self, index, bindings: dict):
        self.index = index
        self.domain = domains.current()
        self.runtime = self.domain.runtime(index, bindings)
        self.resolver = Resolver(index, self.runtime, self)
        self._summaries: dict = {}
        self._returns: dict = {}
        self._effect_returns: dict = {}  # Analyzer.call_may_raise: returns of walks that followed raises
        self._decorated: dict = {}
        self._value_walks: dict[str, int] = {}  # value walks in progress -> the epoch they were asked in
        self.unset_env_reads = 0  # env vars read as unset (an assumption), so far
        self.depth = 0
        self.recursion = 0  # levels of a function's recursion into itself being walked (MAX_RECURSION)
        self.lambdas = 0  # lambdas evaluated so far (Lambda.at)
        self.depth_cuts = 0  # calls not followed for the depth limit, so far (their callers' values are not cached)
        self.stack: list[Frame] = []  # frames being walked, innermost last
        # an effects walk runs the calls whose values are not needed (construction: stores and
        # raises matter); `constructing` also records config stores on the runtime's heap
        self.effects = False
        self.constructing = False
        self.resolving: set | None = None  # while a construction entry's arguments are computed
        self.construction: Any = None  # srcreview.vllm.construction.Construction, once prepared
        self.runtime.walk_hooks = self.walk_hooks

    def prepare(self):
        """Walk the engine's config construction once (srcreview.vllm.construction): every
        later question reads the config as the engine built it."""
        if self.construction is None:
            self.construction = self.domain.construct(self)
        return self.construction

    def walk_hooks(self, cls: str) -> None:
        """Walk a config class's post-init hooks (its object at its config path), as the engine
        runs them when it builds the config: their stores land on the heap."""
        self.runtime.walked.add(cls)  # first: a read inside the walk sees the declared defaults
        path = self.runtime.config_path_for(cls)
        entries = self.domain.hook_entries(self, cls, Obj(cls=cls, path=path, nonnull=True, origin="self"))
        if not entries:
            return
        saved = (self.effects, self.constructing)
        try:
            frames = self.construct(entries, keep=True)
        finally:
            self.effects, self.constructing = saved
        self.runtime.section_built(cls)
        self.runtime.hook_walks.extend((entry[0], frame) for entry, frame in zip(entries, frames, strict=True))

    def value_walk(self, qualname: str, self_obj) -> Frame:
        """`frame_for` as a value question: the function's own calls do not run (no effects, no
        construction), so asking what a builder passes changes nothing the review holds. Walked
        again once a config it read before its hooks had run to their end is built
        (`runtime.built_epoch`): a builder reads the configs it built, complete only then."""
        saved = (self.effects, self.constructing, self.depth)
        # a question of its own: its own depth budget, wherever it is asked (as a summary's)
        self.effects = self.constructing = False
        self.depth = 0
        # asked again while it is being walked: the walk in progress (as a recursive call sees it)
        outer = qualname in self._value_walks
        epoch = self._value_walks.setdefault(qualname, self.runtime.built_epoch)
        try:
            return self.frame_for(qualname, self_obj, epoch=epoch)
        finally:
            self.effects, self.constructing, self.depth = saved
            if not outer:
                del self._value_walks[qualname]

    def frame_for(self, qualname: str, self_obj, args: dict | None = None, epoch: int | None = None) -> Frame:
        """The walk of a function with `self` bound to a given object (cached)."""
        key = (qualname, "obj", _value_key(self_obj), _args_key(args), epoch)
        frame = self._summaries.get(key)
        if frame is None:
            symbol = self.index.resolve(qualname)
            info = self.index.function_at(symbol)
            frame = Frame(self, info.module, info.facts, symbol, self_obj, args)
            self._summaries[key] = frame
            self.depth += 1
            try:
                frame.run()
            finally:
                self.depth -= 1
        return frame

    # -- walks -------------------------------------------------------------------------------
    def summary(self, qualname: str, self_cls: str | None = None, args: dict | None = None) -> Frame:
        """The trace-mode walk of a function (params typed from annotations unless given)."""
        key = (qualname, self_cls, _args_key(args))
        frame = self._summaries.get(key)
        if frame is None:
            symbol = self.index.resolve(qualname)
            info = self.index.function_at(symbol)
            self_obj = Obj(cls=self_cls, nonnull=True, origin="self",
                           path=self.runtime.config_path_for(self_cls)) if self_cls else None
            frame = Frame(self, info.module, info.facts, symbol, self_obj, args)
            self._summaries[key] = frame  # before running: recursion sees a partial walk, not a loop
            before = self.runtime.platform_calls
            self.depth += 1
            try:
                frame.run()
            finally:
                self.depth -= 1
            frame.platform_answers = self.runtime.platform_calls > before
        return frame

    def flow_exit(self, target: FuncRef, args: tuple, kwargs: tuple) -> dict | None:
        """The tracked fields of the builder's instance as a method called on it leaves them,
        joined over the paths it returns by: {field: value}, a field left unknown on some path
        missing; None when that is not known (the method is not walked, or a path is not seen to
        its end). Walked for its stores only (no effects: its raises and config stores are the
        construction's own walk's), and cached."""
        symbol = self.index.resolve(target.qualname)
        if symbol is None or symbol.kind != "function" or self.depth >= MAX_EVAL_DEPTH:
            return None
        info = self.index.function_at(symbol)
        self_obj, bound = self.bind_arguments(info.facts, target.bound, args, kwargs)
        for name, value in target.closure:
            bound.setdefault(name, value)
        key = ("flow", symbol.qualname, _value_key(self_obj), _args_key(bound), self.runtime.built_epoch)
        if key in self._returns:
            return self._returns[key]
        self._returns[key] = None  # recursion: not known
        saved = (self.effects, self.constructing)
        self.effects = self.constructing = False
        self.depth += 1
        cuts_before = self.depth_cuts
        try:
            frame = Frame(self, info.module, info.facts, symbol, self_obj, bound).run()
        finally:
            self.depth -= 1
            self.effects, self.constructing = saved
        states = frame.exit_states if frame.flow is not None else None
        joined: dict | None = None
        if states is not None:
            joined = {}
            for name in frame.flow.tracked:
                held = [state.get(name) for state in states]
                if held and all(h is not None for h in held):
                    joined[name] = union(held)
        if self.depth_cuts > cuts_before:
            del self._returns[key]
        else:
            self._returns[key] = joined
        return joined

    def call_may_raise(self, event) -> bool:
        """Whether a call recorded in a value walk may raise, as an effects walk of its callee
        (its raises, and its callees', followed) finds: for a `try` body's handlers. A call it
        cannot walk may."""
        target = event.target
        if not isinstance(target, FuncRef):
            return not isinstance(target, ClassRef)  # a class's construction: its hooks are the construction's
        sink = _RaiseSink()
        saved = self.effects, self._returns
        # walked with raises followed, on walks of its own: a value walk's cached returns know
        # nothing of raises, and these must not stand in for them either
        self.effects, self._returns = True, self._effect_returns
        self.stack.append(sink)  # type: ignore[arg-type]  # takes what the callee notes on its caller
        try:
            positional = event.args[: len(event.args) - len(event.kwargs)]
            value = self.return_value(target, positional, event.kwargs)
            if isinstance(value, Unknown) and value.reason.endswith("evaluation depth"):
                return True
        finally:
            self.stack.pop()
            self.effects, self._returns = saved
        return sink.raised is not None or sink.possible

    def walk_call(self, event, frame_cls=None):
        """A fresh walk of the in-tree function a recorded call (CallEvent) reaches, with the
        arguments it passed; None when it reaches none."""
        symbol = self.index.resolve(event.target.qualname) if isinstance(event.target, FuncRef) else None
        if symbol is None or symbol.kind != "function":
            return None
        fn = self.index.function_at(symbol)
        positional = event.args[: len(event.args) - len(event.kwargs)]
        self_obj, bound = self.bind_arguments(fn.facts, event.target.bound, positional, event.kwargs)
        for name, value in event.target.closure:  # as return_value binds them
            bound.setdefault(name, value)
        return (frame_cls or Frame)(self, fn.module, fn.facts, symbol, self_obj, bound).run()

    def return_value(self, target: FuncRef, args: tuple, kwargs: tuple):
        """What a call of an in-tree function returns with these argument values (cached)."""
        symbol = self.index.resolve(target.qualname)
        if symbol is None or symbol.kind != "function":
            return Unknown(f"{target.qualname} not found")
        info = self.index.function_at(symbol)
        fn = info.facts
        summarized = self.summary_body(symbol, fn) is not None
        caller = self.stack[-1] if self.stack else None
        recursive = caller is not None and caller.symbol is not None and caller.symbol.qualname == symbol.qualname
        if recursive and self.recursion >= MAX_RECURSION or \
                self.depth >= MAX_EVAL_DEPTH and not summarized and not recursive:  # a summary starts its own budget
            self.depth_cuts += 1
            return Unknown(f"{symbol.local}(): evaluation depth")
        self_obj, bound = self.bind_arguments(fn, target.bound, args, kwargs)
        for name, value in target.closure:
            bound.setdefault(name, value)
        key = (symbol.qualname, _value_key(self_obj), _args_key(bound))
        runtime = self.runtime
        if key in self._returns:
            value, env_reads, platform, raised, may, tentative = self._returns[key]
            runtime.platform_calls += platform
            self._note_env(env_reads)
            self._note_raised(raised)
            self._note_may_raise(may)
            for path in tentative:
                self.note_tentative(path)
            return value
        self._returns[key] = (Unknown(f"{symbol.local}() is recursive"), (), 0, None, (), ())
        platform_before, cuts_before = runtime.platform_calls, self.depth_cuts
        # a summary: a walk of its own; a call of itself: one level of its recursion
        depth, self.depth = self.depth, 0 if summarized else self.depth + (not recursive)
        self.recursion += recursive
        try:
            frame = Frame(self, info.module, fn, symbol, self_obj, bound)
            frame.run()
        finally:
            self.depth = depth
            self.recursion -= recursive
        value = self.returns_of(frame, fn)
        if summarized and isinstance(value, Derived):  # its fields computed within the summary's own budget
            depth, self.depth = self.depth, 0
            try:
                value = replace(value, overrides=tuple((k, self.force(v)) for k, v in value.overrides))
            finally:
                self.depth = depth
        raised, may = None, ()
        if self.effects and not frame.returns and frame.raises:
            raised = raises_on_every_path(symbol, frame.raises)
        elif self.effects and frame.raises:
            may = may_raise(symbol, frame.raises)
        if self.depth_cuts > cuts_before:  # cut short by the depth limit here: a shallower call may decide it
            del self._returns[key]
        else:
            self._returns[key] = (value, tuple(sorted(frame.env_reads)),
                                  int(runtime.platform_calls > platform_before), raised, may,
                                  tuple(sorted(frame.tentative)))
        self._note_env(frame.env_reads)
        self._note_raised(raised)
        self._note_may_raise(may)
        return value

    @staticmethod
    def bind_arguments(fn, receiver, args: tuple, kwargs: tuple):
        """(self object, {parameter: value}) for a call of `fn` on `receiver` with these
        arguments; literal defaults fill the parameters the call leaves out."""
        bound = {}
        params = list(fn.params)
        self_obj = receiver
        if isinstance(self_obj, ClassRef) and not fn.is_classmethod:
            self_obj = None  # Class.method(instance, ...): the instance comes as the first argument
        if params and fn.owner and not fn.is_staticmethod and (self_obj is not None or fn.is_classmethod):
            first = params.pop(0)
            if self_obj is not None:
                bound[first.name] = self_obj
        positional = [p for p in params if p.kind == "positional"]
        for p, a in zip(positional, args, strict=False):
            bound[p.name] = a
        names = {p.name for p in params if p.kind != "kwarg"}
        for k, v in kwargs:
            if k in names:
                bound[k] = v
        catch_all = next((p for p in params if p.kind == "kwarg"), None)
        if catch_all is not None and all(k is not None for k, _ in kwargs):
            # `**kwargs` holds the keywords no parameter takes (the call forwards no mapping)
            extra = tuple((k, v) for k, v in kwargs if k not in names)
            bound[catch_all.name] = Const({k: v.value for k, v in extra}) \
                if all(isinstance(v, Const) for _, v in extra) else DictVal(extra)
        for p in params:
            if p.name not in bound and p.default is not None and p.kind in ("positional", "keyword"):
                try:
                    import ast

                    bound[p.name] = Const(ast.literal_eval(p.default))
                except (ValueError, SyntaxError):
                    pass
        return self_obj, bound

    def _note_raised(self, raised) -> None:
        """A callee that raises on every path ends the caller's statement (effects walks)."""
        if raised is not None and self.effects and self.stack:
            self.stack[-1].raised = raised

    def note_tentative(self, path: tuple) -> None:
        """A read, while the config is built, of a recipe field a hook may rewrite under an
        undecided condition: every frame being walked now rests on it (Frame.certain_raise)."""
        if self.constructing:
            for frame in self.stack:
                frame.tentative.add(path)
            if self.resolving is not None:
                self.resolving.add(path)

    def _note_may_raise(self, events) -> None:
        """A callee that may raise: each of its raises is a possible raise of the caller's
        statement, under the caller's own undecided conditions too (effects walks)."""
        if events and self.effects and self.stack:
            self.stack[-1].possible_raises(events)

    def follows(self, lazy: LazyCall) -> bool:
        """Whether an effects walk runs a call it does not need the value of: a method of a
        config object, or an in-tree function handed one (where construction stores and
        validation raises happen); never anything else, so the walk stays small."""
        target = lazy.target
        if isinstance(target, FuncRef) and isinstance(target.bound, Obj) and target.bound.path is not None:
            return True
        if isinstance(target, (FuncRef, Ref)):
            return any(isinstance(a, Obj) and a.path is not None for a in lazy.args) or \
                any(isinstance(v, Obj) and v.path is not None for _, v in lazy.kwargs)
        return False

    def path_conditions(self) -> tuple:
        """The undecided conditions of every frame being walked: what a store or raise here rests on."""
        return tuple(c for frame in self.stack for c in frame.conds)

    def stored(self, path, value, node) -> None:
        """A config field stored during construction: later reads see it (an Unknown when the
        store is conditional). A store to a field the recipe sets is a rewrite of the recipe's
        value (`rewritten`); it does not change what later questions read (the recipe's values
        are taken as final there), except that a decided store is what the engine keeps."""
        if not self.constructing:
            return
        if ".".join(path) in self.runtime.bindings:
            self.rewritten(tuple(path), value, node)
            return
        conditional = self.path_conditions() or any(f.loops for f in self.stack)
        if conditional:
            # the field holds what it held, or the stored value: one of both when each is decided
            before = self.force(self.resolver.at_path(tuple(path)))
            after = self.force(value)
            if (_decided(before) and _decided(after)) or _same_built(before, after):
                self.runtime.heap[tuple(path)] = union([before, after])
                return
            where = self.stack[-1].symbol.local if self.stack and self.stack[-1].symbol else "construction"
            self.runtime.heap[tuple(path)] = Unknown(f"{'.'.join(path)} may be set by {where} "
                                                     f"(line {node.line}) under an undecided condition")
            return
        forced = self.force(value)
        if isinstance(forced, Const):
            forced = Const(forced.value, origin=tuple(path))
        self.runtime.heap[tuple(path)] = forced

    def rewritten(self, path: tuple, value, node) -> None:
        """A hook's store to a field the recipe sets: kept on the runtime (`rewrites`: path ->
        its stores in walk order, each (the value stored or None when undecided, whether decided,
        the hook, its file and lines, whether the store is conditional, the condition it is under)). While the config is
        built, a field rewritten unconditionally with a value the walk does not decide reads as
        unknown (`-1` for max_model_len is replaced by the model's length before anything checks
        it); once built, reads see the recipe's value again (srcreview.vllm.construction.build
        restores it) unless the rewrite was decided. A rewrite under an undecided condition
        leaves reads at the recipe's value (what the engine keeps on the path the recipe
        decides); only the knob's row says that it may be rewritten."""
        conditional = bool(self.path_conditions() or any(f.loops for f in self.stack))
        forced = self.force(value)  # what the hook computes from the recipe's value decides
        decided = forced if isinstance(forced, Const) else None
        where = self.stack[-1].symbol.qualname if self.stack and self.stack[-1].symbol else "construction"
        path_file = self.stack[-1].symbol.path if self.stack and self.stack[-1].symbol else ""
        recipe_value = self.runtime.bindings.get(".".join(path))
        if decided is not None and type(decided.value) is type(recipe_value) and decided.value == recipe_value:
            if not conditional:  # the hook hands the value back (`self.model = maybe_model_redirect(self.model)`)
                self.runtime.preserved.add(path)
            return  # stores what the recipe set, on whichever path
        conds = self.path_conditions()
        condition = f"{conds[-1].as_taken} ({conds[-1].reason})" if conds else "in a loop" if conditional else ""
        self.runtime.rewrites.setdefault(path, []).append(
            (decided.value if decided is not None else None, decided is not None, where, path_file, node.line,
             node.end_line, conditional, condition))
        if conditional:  # reads keep the recipe's value, but a raise that reads it is not certain
            hook = ".".join(where.split(".")[-2:])
            self.runtime.tentative.setdefault(path, f"{'.'.join(path)} may be set by {hook} (line {node.line}) "
                                                    f"if {condition}")
            return
        if decided is not None:
            self.runtime.heap[path] = Const(decided.value, origin=path)
        else:
            self.runtime.heap[path] = Unknown(f"{'.'.join(path)} is rewritten by {where.rsplit('.', 2)[-2:][0]} "
                                              f"(line {node.line}) from the recipe's value")

    def dict_item(self, table: DictVal, key, text: str):
        """`table[key]`: an IntEnum member key equals its value (`OptimizationLevel.O2` and 2)."""
        for k, v in table.items:
            if k == key or self.same_key(k, key) or self.same_key(key, k):
                return v
        if any(isinstance(k, EnumMember) and self.enum_value(k) is None for k, _ in table.items):
            return Unknown(text)
        return Unknown(f"{text}: no such key")

    def dict_get(self, table: DictVal, key, default, text: str, module_table: bool):
        """`table.get(key, default)` with a constant key: its value; the default only for a module
        table (`Resolver.constant_value` holds no table that the tree changes in place)."""
        key = self.force(key)
        if not isinstance(key, Const):
            return Unknown(f"{text}: the key is not decided")
        missing = f"{text}: no such key"
        found = self.dict_item(table, key.value, text)
        if not (isinstance(found, Unknown) and found.reason == missing):
            return found
        return default if module_table else Unknown(missing)

    def same_key(self, a, b) -> bool:
        if isinstance(a, EnumMember):
            if isinstance(b, EnumMember) or isinstance(b, str):
                return bool(a.matches(b))
            value = self.enum_value(a)
            return value is not None and value == b
        return False

    def enum_value(self, member: EnumMember):
        """The value of an IntEnum member (None for other enums: they equal no plain value)."""
        cls = self.resolver.canonical(member.enum)
        info = self.index._class_info_abs(cls) if cls else None
        if info is None or not any(q.rsplit(".", 1)[-1] == "IntEnum" for q in info.linearization):
            return None
        return dict(info.enum_members or ()).get(member.name)

    def havoc(self, path, names, node, cls: str | None = None, only_none: bool = False) -> None:
        """A store the walk cannot place (a `setattr` with a name known only at run time, or on an
        object of unknown type) while the engine builds its config: the fields it may hit read
        as unknown from here on (`path` None: under any config object; `names` None: any field)."""
        if not self.constructing:
            return
        where = self.stack[-1].symbol.local if self.stack and self.stack[-1].symbol else "construction"
        reason = f"may be set by {where} (line {node.line}) through setattr with a name known only at run time"
        if only_none:
            reason += " where it is None"
        self.runtime.havoc(path, names, reason, cls=cls, only_none=only_none)

    def _builds_object(self, lazy: LazyCall) -> bool:
        """Whether a call builds an instance of an in-tree class (`ModelConfig(...)`): its value
        is the object with the keywords given, whatever its constructor computes later."""
        target = self.force(lazy.target) if isinstance(lazy.target, Ref) else lazy.target
        return isinstance(target, ClassRef)

    def construct(self, entries, keep: bool = False, after=None) -> list[Frame]:
        """Walk what runs while the engine builds its config (each `(method qualname, self)`
        of `entries`, in order) as an effects walk: config stores land on the runtime's heap,
        raises are kept (`after(n)` is called once entry n is walked). Walks cached before are
        dropped: they read the config before it was built."""
        frames = []
        self.effects = self.constructing = True
        try:
            for n, (qualname, self_obj, *args) in enumerate(entries):  # (qualname, self[, arguments])
                symbol = self.index.resolve(qualname)
                info = self.index.function_at(symbol)
                bound = args[0] if args else {}
                self.resolving = set()  # tentative fields read to compute the arguments (note_tentative)
                try:
                    bound = bound.resolve() if hasattr(bound, "resolve") else bound
                finally:
                    read, self.resolving = self.resolving, None
                frame = Frame(self, info.module, info.facts, symbol, self_obj, bound)
                frame.tentative |= read  # a raise on an argument a hook may have rewritten is not certain
                self.depth += 1
                try:
                    frame.run()
                finally:
                    self.depth -= 1
                frames.append(frame)
                if after is not None:
                    after(n)
        finally:
            self.effects = self.constructing = False
            if not keep:  # the walks read the config before it was built
                self.forget_walks()
        return frames

    def forget_walks(self) -> None:
        """Drop the walks and return values cached so far: they read the config before the
        engine's construction was walked."""
        self._summaries.clear()
        self._returns.clear()
        self._effect_returns.clear()
        self.resolver.forget()

    def returns_of(self, frame: Frame, fn):
        values = [r.value for r in frame.returns]
        if not frame.returns:
            if frame.raises:
                return Unknown(f"{fn.name}() raises")
            return NONE
        forced = [self.force(v) for v in values]
        merged = union(forced)
        if isinstance(merged, Union) and _same_constant(merged.options):
            # the same value on every path, read from a field on some and computed on others
            # (`return max_model_len` / `return int(max_model_len)`): that value, from that field
            origins = {o.origin for o in merged.options if o.origin is not None}
            return Const(merged.options[0].value, origin=origins.pop() if len(origins) == 1 else None)
        if isinstance(merged, Union) and all(isinstance(o, TupleVal) or isinstance(o, Const) and isinstance(
                o.value, tuple) for o in merged.options) and len({len(_tuple_items(o)) for o in merged.options}) == 1:
            # a tuple on every path: item by item, one of the values it has on some path
            columns = zip(*(_tuple_items(o) for o in merged.options), strict=True)
            return TupleVal(tuple(union(list(column)) for column in columns))
        if isinstance(merged, Union) and not all(isinstance(o, HfConfig) for o in merged.options):
            reasons = [c.reason for r in frame.returns for c in r.conditions if c.reason]
            return Unknown(f"{fn.name}() depends on " + (reasons[0] if reasons else "its branches"))
        return merged

    def evaluate(self, module, expr, fn=None, self_obj=None, local_values: dict | None = None):
        """The value of one expression of `module` (inside method `fn` with `self_obj` and those
        locals, if given)."""
        return Frame(self, module, fn, None, self_obj, dict(local_values or {})).ev(expr)

    def evaluate_text(self, module_name: str, text: str, local_values: dict | None = None):
        """The value of an expression written as text, in module `module_name` (its names as
        the module binds them), forced: what a question about the tree's code asks."""
        module = self.index.module(module_name)
        return self.force(self.evaluate(module, _expression_ir(text, module_name, 1), local_values=local_values))

    def env_attribute(self, module, expr):
        """The value of a `vllm.envs` table entry, its env reads noted on the frames walking."""
        env_frame = Frame(self, module)
        self.stack.append(env_frame)
        try:
            value = self.force(env_frame.ev(expr))
        finally:
            self.stack.pop()
        self._note_env(env_frame.env_reads)
        return value

    # -- values --------------------------------------------------------------------------------
    def force(self, value):
        """A lazy value made concrete: a reference resolved, a call's result computed."""
        if isinstance(value, Ref):
            symbol = self.index.resolve(value.dotted)
            if symbol is None:
                return Unknown(f"{value.dotted} not found in the tree")
            return self.resolver.symbol_value(symbol)
        if isinstance(value, LazyCall):
            return self.force(self.evaluate_call(value))
        return value

    def truth(self, value):
        value = self.force(value)
        options = value.options if isinstance(value, Union) else (value,)
        own = [self.own_truth(o) for o in options]
        if all(t is None and not why for t, why in own):
            return builtins.truth(value, self.force)
        truths = set()
        for option, (t, why) in zip(options, own, strict=True):
            if why:
                return None, why
            if t is None:
                t, why = builtins.truth(option, self.force)
                if t is None:
                    return None, why
            truths.add(t)
        return (truths.pop(), "") if len(truths) == 1 else (None, "value differs between branches")

    def own_truth(self, value) -> tuple[bool | None, str]:
        """The truth of an enum member or an instance where its class decides it (class_truth):
        a member's own `__bool__`, walked; an IntEnum's member is as true as its value; (None,
        why) where that is not decided; (None, "") when nothing is special (a plain member or
        instance is true)."""
        if isinstance(value, Const) and isinstance(value.value, EnumMember):
            member: EnumMember | None = value.value
            cls = self.resolver.canonical(value.value.enum)
            shown = value.value.enum.rsplit(".", 1)[-1]
        elif isinstance(value, Obj) and value.nonnull and isinstance(value.cls, str):
            member, cls, shown = None, self.resolver.canonical(value.cls), value.cls.rsplit(".", 1)[-1]
        else:
            return None, ""
        decides: tuple[str, Any] = self.class_truth(cls) if cls else ("unread", None)
        kind, detail = decides
        if kind == "unread":
            return (None, f"{shown}: whether it is true is not read") if member is not None else (None, "")
        if kind == "dunder":
            qual, dunder, where = detail
            if member is not None and dunder == "__bool__":
                said = self.force(self.return_value(FuncRef(qual, bound=value), (), ()))
                if isinstance(said, Const) and isinstance(said.value, bool):  # its own __bool__, walked
                    return said.value, ""
            return None, f"{where} defines {dunder}: whether it is true is not followed"
        if kind == "value" and member is not None:
            number = self.enum_value(member)
            return (bool(number), "") if isinstance(number, int) else \
                (None, f"{member.name}: a {detail} member is as true as its value")
        if kind == "value":
            return None, f"{shown}: a {detail} is as true as its value"
        return None, ""

    def class_truth(self, cls: str) -> tuple[str, Any]:
        """What decides an instance's truth, from its class's MRO (kept per tree): ("dunder",
        (method, "__bool__" | "__len__", class)) for the first class defining one, ("value",
        base) for a base whose instances are as true as their value (IntEnum, str, ...), ("plain",
        "") otherwise, ("unread", "") for a class not in the tree."""
        memo = self.index.memo.setdefault("class_truth", {})
        if cls not in memo:
            info = self.index._class_info_abs(cls)
            found: tuple[str, Any] = ("unread", "") if info is None else ("plain", "")
            for qual in info.linearization if info is not None else ():
                symbol = self.index._class_symbol(qual)
                own = self.index._class_info_abs(symbol.qualname) if symbol is not None else None
                dunder = sorted(set(own.methods if own is not None else ()) & {"__bool__", "__len__"})
                if dunder and own is not None:
                    found = ("dunder", (own.methods[dunder[0]].qualname, dunder[0], qual.rsplit(".", 1)[-1]))
                    break
                if qual.rsplit(".", 1)[-1] in _VALUE_TRUTH:
                    found = ("value", qual.rsplit(".", 1)[-1])
                    break
            memo[cls] = found
        return memo[cls]

    def compare(self, op: str, left, right):
        left, right = self.force(left), self.force(right)
        if op in ("in", "not in") and isinstance(right, External) and right.name == "os.environ" \
                and isinstance(left, Const):
            present = self.runtime.env_set(left.value)
            if not present:
                self._note_env((left.value,))
            return (present if op == "in" else not present), ""
        if op in ("<", "<=", ">", ">=") and (self._int_member(left) or self._int_member(right)):
            # an IntEnum member orders as its value (`optimization_level > OptimizationLevel.O0`)
            left, right = self._as_int(left), self._as_int(right)
        return builtins.compare(op, left, right, self.truth)

    def _int_member(self, value) -> bool:
        return isinstance(value, Const) and isinstance(value.value, EnumMember) \
            and isinstance(self.enum_value(value.value), int)

    def _as_int(self, value):
        return Const(self.enum_value(value.value)) if self._int_member(value) else value

    def builtin_value(self, name: str, args, text: str):
        return builtins.builtin_value(name, [self.force(a) for a in args], text, self.resolver, self.truth)

    # -- calls ---------------------------------------------------------------------------------
    def call_value(self, frame: Frame, callee, args, kwargs, e, text, forwards: bool = False):
        """Record a call in `frame` and give its value (lazy for in-tree functions)."""
        line, end = e.line, e.end_line
        values = args + tuple(v for _, v in kwargs)
        if self.runtime.is_replace(callee, self.index):
            frame.calls.append(CallEvent(line, end, text, callee, "call", "static" if not isinstance(callee, External)
                                         else "builtin", args=values, kwargs=kwargs))
            return self.derive(args, kwargs, text)
        if isinstance(callee, Ref):
            frame.calls.append(CallEvent(line, end, text, callee, "call", "static", args=values, kwargs=kwargs))
            return LazyCall(callee, args, kwargs, text)
        if isinstance(callee, FuncRef):
            frame.calls.append(CallEvent(line, end, text, callee, callee.via, "static", args=values, kwargs=kwargs))
            # the function a decorator put in its place runs too (an edge; the value stays the
            # decorated function's, as before), or the call stays open
            decorated = self.decorated(callee)
            if isinstance(decorated, FuncRef):
                frame.calls.append(CallEvent(line, end, text, decorated, "call", "static", args=values,
                                             kwargs=kwargs))
            elif isinstance(decorated, str):
                frame.calls.append(CallEvent(line, end, text, None, "call", "unresolved", decorated, args=values,
                                             kwargs=kwargs))
            return LazyCall(callee, args, kwargs, text)
        if isinstance(callee, Lambda) and callee.frame is not None and not kwargs \
                and len(args) == len(callee.expr.params):
            frame.calls.append(CallEvent(line, end, text, callee, "call", "static", args=values, kwargs=kwargs))
            return callee.frame.call_lambda(callee, args)
        if isinstance(callee, ClassRef):
            frame.calls.append(CallEvent(line, end, text, callee, "init", "static", args=values, kwargs=kwargs))
            if len(args) == 1 and not kwargs:  # `CUDAGraphMode(2)`: the member with that value
                member = self.resolver.enum_member_of(callee.qualname, self.force(args[0]))
                if member is not None:
                    return member
            return self.instantiate(callee.qualname, args, kwargs, forwards=forwards)
        if isinstance(callee, Partial):
            frame.calls.append(CallEvent(line, end, text, callee.func, callee.func.via, "static", args=values,
                                         kwargs=kwargs))
            return LazyCall(callee.func, callee.args + args, callee.kwargs + kwargs, text)
        if isinstance(callee, External):
            if callee.name == "functools.partial" and args:
                func = self.force(args[0])
                if isinstance(func, FuncRef):
                    return Partial(func, args[1:], kwargs)
            if callee.name == "dataclasses.is_dataclass" and len(args) == 1 and not kwargs:
                made = self.resolver.is_dataclass(self.force(args[0]))
                if made is not None:
                    return Const(made)
            if callee.name in ("os.getenv", "os.environ.get") and args and isinstance(self.force(args[0]), Const):
                default = args[1] if len(args) > 1 else NONE
                return self.env_value(self.force(args[0]).value, default)
            # what the framework model knows a library call returns; a path question (the
            # arguments are computed only for the calls these answer)
            if callee.name in self.domain.external_calls:
                answered = self.domain.external_call(self, callee.name, [self.force(a) for a in args],
                                                     [(k, self.force(v)) for k, v in kwargs], forwards)
                if answered is not None:
                    return answered
            if callee.name in paths.PATH_CLASSES or callee.name in paths.OS_PATH_TESTS:
                known = self.filesystem(callee.name, [self.force(a) for a in args], kwargs)
                if known is not None:
                    return known
            refused = _hub_refusal(callee.name, args, kwargs, self.force)
            if refused and frame.catches("ValueError"):
                # the call raises before it runs, and a handler here catches it: its path ends
                frame.raised, frame.caught = RaiseEvent(line, end, refused, ()), True
                return Unknown(refused)
            frame.calls.append(CallEvent(line, end, text, callee, "call", "external",
                                         f"{callee.name} is outside the tree", args=values, kwargs=kwargs))
            return Unknown(f"{callee.name}() is outside the tree")
        if isinstance(callee, BoundBuiltin):
            if isinstance(callee.receiver, HfConfig):  # a config-class method read from transformers' source
                kw = tuple((k, self.force(v)) for k, v in kwargs)
                result = callee.receiver.method(callee.name, tuple(self.force(a) for a in args), kw)
                if result is not None:
                    if callee.receiver.ref:
                        self.runtime.class_reads.add((callee.receiver.ref, f"{callee.name}(): the config itself"))
                    return result
                reason = f"{callee.receiver.classes.label()}: {callee.name}() is not decided from its source"
                frame.calls.append(CallEvent(line, end, text, None, "call", "unresolved", reason, args=values,
                                             kwargs=kwargs))
                return Unknown(f"{text}: {MODEL_CONFIG_UNKNOWN}: {reason}")
            if isinstance(callee.receiver, LocalPath):
                value = paths.method(callee.receiver, callee.name, [self.force(a) for a in args],
                                     [(k, self.force(v)) for k, v in kwargs])
                if value is not None:
                    return value
                frame.calls.append(CallEvent(line, end, text, None, "call", "unresolved",
                                             f"{callee.name}() of a path the listing does not decide", args=values,
                                             kwargs=kwargs))
                return Unknown(f"{text}: not decided by the listing")
            if isinstance(callee.receiver, DictVal) and callee.name in DICT_VIEWS and not args and not kwargs:
                return callee  # `table.items()`: iterated item by item (Frame.loop)
            if isinstance(callee.receiver, DictVal) and callee.name == "get" and 1 <= len(args) <= 2 and not kwargs:
                table = e.func.value if isinstance(e, ir.Call) and isinstance(e.func, ir.Attr) else None
                return self.dict_get(callee.receiver, args[0], args[1] if len(args) == 2 else NONE, text,
                                     isinstance(table, ir.Name) and table.id not in frame.env)
            value = builtins.bound_builtin(callee, [self.force(a) for a in args])
            if isinstance(value, Unknown):  # never drop a call silently: it stays in the graph, unresolved
                frame.calls.append(CallEvent(line, end, text, None, "call", "unresolved",
                                             f"method {callee.name} of a {type(callee.receiver).__name__} value",
                                             args=values, kwargs=kwargs))
            return value
        if isinstance(callee, LazyCall):
            callee = self.force(callee)
            return self.call_value(frame, callee, args, kwargs, e, text)
        if isinstance(callee, Obj):
            receiver_cls = callee.receiver.cls if isinstance(callee.receiver, Obj) else None
            status = "unresolved"
            if callee.owner is not None and callee.attr is not None:
                reason = f"method {callee.attr} of {callee.owner.rsplit('.', 1)[-1]} not found in its MRO"
            elif isinstance(receiver_cls, str) and not self.resolver.canonical(receiver_cls):
                reason, status = f"{receiver_cls} is outside the tree", "external"
            elif isinstance(receiver_cls, tuple) or isinstance(callee.cls, tuple):
                reason = f"{callee.origin}: typed only by a declared return type, not followed"
            elif isinstance(callee.cls, str):
                reason = f"{callee.cls.rsplit('.', 1)[-1]} is outside the tree or has no such method"
            else:
                reason = f"{callee.origin or 'value'} has no resolvable type"
            frame.calls.append(CallEvent(line, end, text, None, "call", status, reason, args=values, kwargs=kwargs))
            return Unknown(f"{text}: {reason}")
        if isinstance(callee, Union) and all(isinstance(o, BoundBuiltin) for o in callee.options):
            # a method of a value that differs between branches (`defaults.get(k)`, `defaults`
            # one of several tables): the call on each, joined
            return union([self.call_value(frame, o, args, kwargs, e, text) for o in callee.options])
        reason = callee.reason if isinstance(callee, Unknown) else f"callee is {type(callee).__name__}"
        frame.calls.append(CallEvent(line, end, text, None, "call", "unresolved", reason, args=values, kwargs=kwargs))
        return Unknown(f"{text}: {reason}")

    def filesystem(self, name: str, args: list, kwargs) -> object | None:
        """`Path(p)` and `os.path.exists(p)` (isfile, isdir) of a path in a directory the review
        listed (srcreview.interp.paths); None when the call is no such question."""
        known = self.runtime.bindings.get(paths.KNOWN_DIRECTORIES)
        if known is None or len(args) != 1 or kwargs:
            return None
        arg = args[0]
        if name in paths.PATH_CLASSES:
            if isinstance(arg, LocalPath):
                return arg
            return known.path(arg.value) if isinstance(arg, Const) and isinstance(arg.value, str) else None
        if name in paths.OS_PATH_TESTS:
            where = arg if isinstance(arg, LocalPath) else \
                known.path(arg.value) if isinstance(arg, Const) and isinstance(arg.value, str) else None
            return paths.test(where, paths.OS_PATH_TESTS[name]) if where is not None else None
        return None

    def decorated(self, target: FuncRef):
        """What calling a decorated in-tree function runs: None when its decorators leave it in
        place (none, or only ones outside the tree: property, functools.wraps, lru_cache...),
        the function an in-tree decorator returns in its place (a wrapper, with the original
        in its closure), or why that is not known (a str: the call stays open)."""
        key = target.qualname
        if key not in self._decorated:
            self._decorated[key] = None  # a decorator that calls the function it decorates
            symbol = self.index.resolve(target.qualname)
            result: object = None
            if symbol is not None and symbol.kind == "function" and self.index.function_at(symbol).facts.decorators:
                info = self.index.function_at(symbol)
                original = FuncRef(target.qualname)
                current: object = original
                depth, self.depth = self.depth, 0  # kept per function: not cut by where it is first asked
                try:
                    for text in reversed(info.facts.decorators):
                        current = self._apply_decorator(info.module, info.facts, text, current, original)
                        if isinstance(current, str):
                            break
                finally:
                    self.depth = depth
                if isinstance(current, str) or (isinstance(current, FuncRef) and current.qualname != key):
                    result = current
            self._decorated[key] = result
        result = self._decorated[key]
        if isinstance(result, FuncRef) and result.bound is None and target.bound is not None:
            return replace(result, bound=target.bound)  # the wrapper of a method gets its receiver
        return result

    def _apply_decorator(self, module, fn, text: str, current, original: FuncRef):
        """The function `@text` puts in place of `current` (a FuncRef), or why it is not known."""

        expr = _expression_ir(text, module.module, fn.start_line)
        if expr is None:
            return f"decorated by @{text}, which does not parse"
        enclosing = module.functions.get(fn.qualname.rsplit(".<locals>.", 1)[0]) if ".<locals>." in fn.qualname \
            else None  # a decorator of a nested function may be a name of the function it sits in
        deco = self.force(Frame(self, module, enclosing).ev(expr))
        if isinstance(deco, (External, Builtin)) or (isinstance(deco, Unknown) and "outside the tree" in deco.reason):
            return current  # out of the tree: taken to call through (property, wraps, lru_cache...)
        if isinstance(deco, FuncRef):
            if self.index.resolve(deco.qualname) is None:
                return current
            returned = self.force(self.return_value(deco, (current,), ()))
            if isinstance(returned, FuncRef):
                return current if returned.qualname == original.qualname else returned
            return f"decorated by @{text}: what it returns in its place is not known"
        return f"decorated by @{text}: a decorator the analysis does not resolve"

    def derive(self, args, kwargs, text):
        """`replace(obj, **fields)`: the copy with those fields set (pytype's dataclass overlay).
        A copy of the root config with a new model config runs its post-init again: what it
        does not set may be rewritten (the runtime model says which fields trigger that)."""
        if len(args) != 1:
            return Unknown(f"{text}: not a replace of one object")
        base = self.force(args[0])
        if isinstance(base, Union) and all(isinstance(o, Obj) for o in base.options):
            return union([self.derive((o,), kwargs, text) for o in base.options])
        if not isinstance(base, Obj):
            return Unknown(f"{text}: a replace of a value of unknown type")
        fields: dict[str, Any] = {}
        if isinstance(base, Derived):
            fields.update(base.overrides)
        fields.update(dict(kwargs))
        reinit = base.reinit if isinstance(base, Derived) else ""
        trigger = self.runtime.reinit_reason(base, kwargs)
        if trigger:
            reinit = trigger
        plain = {f.name: getattr(base, f.name) for f in _OBJ_FIELDS}
        plain.update(alias=False, receiver=None, origin=f"replace({base.origin or 'config'})")
        return Derived(**plain, overrides=tuple(fields.items()), reinit=reinit)

    def instantiate(self, qualname: str, args=(), kwargs=(), forwards: bool = False):
        """`Class(...)`: an instance built with those keywords (the root config at its path), a
        capability constant. Positional or forwarded arguments make its other fields unknown."""
        capability = self.runtime.device_capability(qualname, args, self.force)
        if capability is not None:
            return capability
        short = qualname.rsplit(".", 1)[-1]
        path = self.runtime.config_path_for(qualname) if short == self.domain.root_config else None
        info = self.index._class_info_abs(qualname) if path is None and not forwards else None
        stores = self.resolver.init_stores(info) if info is not None else None
        if stores is not None and info is not None:  # a plain class: its `__init__` says what the arguments become
            _, bound = self.bind_arguments(self.index.function_at(info.methods["__init__"]).facts,
                                           Obj(cls=qualname, nonnull=True), args, kwargs)
            held = tuple((attr, bound[param]) for attr, param in stores if param in bound)
            return Derived(cls=qualname, nonnull=True, origin=f"{short}(...)", overrides=held,
                           initialized=tuple(attr for attr, _ in held))
        if args and info is not None:
            named = _dataclass_positional(info, len(args))
            if named is not None:  # a dataclass's positional arguments are its fields, in order
                args, kwargs = (), (*zip(named, args, strict=True), *kwargs)
        return Derived(cls=qualname, nonnull=True, path=path, origin=f"{short}(...)", overrides=tuple(kwargs),
                       opaque=bool(args) or forwards, home=self._builder_home(qualname) if path is None else None)

    def _builder_home(self, qualname: str) -> tuple[str, ...] | None:
        """The config path of a config the engine's builder builds itself (in a method of the
        class that defines the builder, walked innermost: not a hook it reaches, which may build
        another instance of the class, the draft's ModelConfig; with the one call of that class
        its methods make): the object it hands the root config."""
        frame = self.stack[-1] if self.stack else None
        owner = frame.symbol.qualname.rsplit(".", 1)[0] if frame is not None and frame.symbol is not None \
            and frame.owner else None
        info = self.index._class_info_abs(owner) if owner else None
        if info is None or self.domain.builder not in info.methods:
            return None
        memo = self.index.memo.setdefault("builds_once", {})
        if (owner, qualname) not in memo:  # one call builds it: the object the builder hands on
            short = qualname.rsplit(".", 1)[-1]
            memo[owner, qualname] = sum(len(ir.calls_by_name(self.index.function_at(self.index.resolve(
                method.qualname)).facts.body).get(short, ())) for method in info.methods.values()
                if method.qualname.startswith(owner)) == 1
        return self.runtime.config_path_for(qualname) if memo[owner, qualname] else None

    def evaluate_call(self, lazy: LazyCall):
        target = lazy.target
        if isinstance(target, Ref):
            target = self.force(target)
        if isinstance(target, ClassRef):
            return self.instantiate(target.qualname, lazy.args, lazy.kwargs)
        if isinstance(target, FuncRef):
            return self.return_value(target, lazy.args, lazy.kwargs)
        if isinstance(target, Const):
            return Unknown("call of a constant")
        return Unknown(lazy.text or "call")

    # -- environment ---------------------------------------------------------------------------
    def env_value(self, name, default):
        """An env var: the recipe's value, else unset (noted as an assumption) -> `default`."""
        bound = self.runtime.env_binding(name)
        if bound is not None:
            return bound
        self._note_env((name,))
        return self.force(default) if default is not None else NONE

    def _note_env(self, names) -> None:
        self.unset_env_reads += len(tuple(names)) if not isinstance(names, dict) else len(names)
        for frame in self.stack:
            for name in names:
                frame.env_reads.setdefault(name, frame.current)


def _with_nested(config: HfConfig, old: HfConfig, new: HfConfig) -> HfConfig:
    """`config` with every nested occurrence of `old` replaced by `new` (itself when none)."""
    changed = False
    fields = []
    for key, value in config.overrides:
        if value == old:
            value, changed = new, True
        elif isinstance(value, HfConfig):
            replaced = _with_nested(value, old, new)
            changed = changed or replaced is not value
            value = replaced
        fields.append((key, value))
    return replace(config, overrides=tuple(fields)) if changed else config


def _dataclass_positional(info, count: int) -> tuple[str, ...] | None:
    """The fields `count` positional arguments of a dataclass's generated `__init__` fill, in
    declaration order: only for a class decorated `@dataclass` that declares every field itself
    (no base contributes or reorders one), defines no `__init__`, has one generated (no
    `init=False`, no `kw_only=True`), and has no field out of it (ClassVar, InitVar, KW_ONLY,
    `field(init=False)`); None otherwise."""
    if "__init__" in info.methods or not any(d.split("(")[0].rsplit(".", 1)[-1] == "dataclass"
                                             for d in info.facts.decorators):
        return None
    fields = [f for f in info.fields if not f.classvar]
    if any(f.owner != info.facts.qualname for f in fields) or any(
            "InitVar" in (f.annotation or "") or "KW_ONLY" in (f.annotation or "")
            or "init=False" in (f.default or "").replace(" ", "") for f in fields):
        return None
    if any("kw_only=True" in d.replace(" ", "") or "init=False" in d.replace(" ", "")
           for d in info.facts.decorators) or count > len(fields):
        return None
    return tuple(f.name for f in fields[:count])


def _joined(base: list, extras: list[list]) -> list:
    """`base` with the conditions each live path added (its early exits), once each: code after
    a join runs on one of those paths, so it rests on all of them (more than it needs, never less)."""
    out = list(base)
    for more in extras:
        out.extend(c for c in more if c not in out)
    return out


def _same_constant(options) -> bool:
    """Constants of one type and value, whatever field each was read from."""
    first = options[0]
    return all(isinstance(o, Const) for o in options) and all(
        type(o.value) is type(first.value) and o.value == first.value for o in options)


def _has(body, test) -> bool:
    """Whether a statement of a loop body (outside loops nested in it) passes `test`."""
    for stmt in body:
        if test(stmt):
            return True
        if isinstance(stmt, (ir.For, ir.While)):
            continue
        if any(_has(block, test) for block in ir.blocks(stmt)):
            return True
    return False


def _unrollable(body) -> bool:
    """A body walked item by item: no `break` (later items may not run), and `continue` only
    where no `return` could also end a path (an ended item then means a continue)."""
    if _has(body, lambda s: isinstance(s, ir.Jump) and s.kind == "break"):
        return False
    return not (_has(body, lambda s: isinstance(s, ir.Jump)) and _has(body, lambda s: isinstance(s, ir.Return)))


def _args_key(args) -> tuple:
    if not args:
        return ()
    return tuple(sorted((k, _value_key(v)) for k, v in args.items()))


def _value_key(value) -> str:
    try:
        return repr(value)
    except Exception:  # noqa: BLE001
        return type(value).__name__


def _summary_body(symbol, fn, statement: str):
    """`statement` as the body of a function with `fn`'s parameters, at `fn`'s first line."""
    params = ", ".join(("*" if p.kind == "vararg" else "**" if p.kind == "kwarg" else "") + p.name
                       for p in fn.params if p.kind != "keyword")
    facts = _facts_of(f"def {fn.name}({params}):\n    {statement}", symbol.module, fn.start_line)
    return facts.functions[fn.name].body if facts is not None else None


class _RaiseSink:
    """Stands for the caller while Analyzer.call_may_raise walks a callee: keeps what it raises."""

    def __init__(self):
        self.raised = None
        self.possible = False
        self.conds: list = []  # what Analyzer reads of every frame on its stack
        self.tentative: set = set()
        self.loops = 0
        self.symbol = None
        self.env_reads: dict = {}
        self.current = (0, 0)
        self.calls: list = []

    def possible_raises(self, events) -> None:
        self.possible = self.possible or bool(events)


@functools.lru_cache(maxsize=1 << 16)
def _dotted_reads(text: str) -> tuple[str, ...]:
    """The names and attribute chains a condition's text reads (not the calls), in order: the
    same texts are read at every store a walk makes under them."""
    return tuple(match.group(0) for match in _READ.finditer(text))


@functools.lru_cache(maxsize=4096)
def _expression_ir(text: str, module: str, line: int):
    """An expression written as text (a decorator's) as IR, as the index builds it, at `line`;
    None when it does not parse. Kept: the same decorators are applied in every review."""
    facts = _facts_of(f"__expression = {text}", module, line)
    return facts.constants["__expression"].expr if facts is not None else None


def _facts_of(source: str, module: str, line: int):
    """The index builder's facts of a few lines of source written in `module` at `line`; None
    when they do not parse."""
    from srcreview.index.builder.ast_front import NotTaken, extract

    try:
        return extract(("\n" * (line - 1) + source + "\n").encode(), module, "written.py", "written")
    except NotTaken:
        return None
