"""The safe evaluator: interprets function facts over abstract values, under recipe bindings.

Never evaluates source code: it walks the statement IR, decides a branch only when every
value its test needs is a constant (from the recipe, a literal or a module constant table),
and otherwise follows both sides and records the condition. The same walk records what the
call graph and the field-read search need: calls with their resolved targets, attribute
reads with their receivers, dynamic access, raises and returns with the conditions assumed.
"""

from __future__ import annotations

import builtins
import operator
from dataclasses import dataclass, field, replace

from srcreview.graph.values import (
    NONE,
    BoundBuiltin,
    Builtin,
    ClassRef,
    Const,
    EnumMember,
    External,
    FuncRef,
    LazyCall,
    ListVal,
    ModuleRef,
    Obj,
    OneOf,
    Ref,
    Super,
    Union,
    Unknown,
)
from srcreview.index import ir
from srcreview.index.facts import UNKNOWN

MAX_EVAL_DEPTH = 6
MAX_UNION = 6
ROOT_CONFIG = "VllmConfig"
_BUILTIN_NAMES = frozenset(dir(builtins))
_CAPABILITY_KEY = "hardware.compute_capability"
_PLATFORM_KEY = "hardware.platform"  # srcreview.graph.bindings.PLATFORM_KEY
_CAPABILITY_CALLS = ("get_device_capability", "has_device_capability", "is_device_capability",
                     "is_device_capability_family")
# platform predicate -> the platforms for which it is true (vllm/platforms/interface.py)
_PLATFORM_PREDICATES = {
    "is_cuda": ("cuda",), "is_cuda_alike": ("cuda", "rocm"), "is_rocm": ("rocm",), "is_xpu": ("xpu",),
    "is_cpu": ("cpu",), "is_tpu": ("tpu",), "is_zen_cpu": (), "is_out_of_tree": (), "is_unspecified": (),
}


# ---------------------------------------------------------------------------------------------
# events a walk records


@dataclass(frozen=True)
class CallEvent:
    line: int
    end_line: int
    text: str
    target: object  # FuncRef | Ref | ClassRef | None
    via: str  # "call" | "init" | "property" | "super"
    status: str  # "static" | "unresolved" | "external" | "builtin"
    reason: str = ""
    args: tuple = field(default=(), compare=False)


@dataclass(frozen=True)
class ReadEvent:
    line: int
    end_line: int
    text: str
    receiver: object
    attr: str
    kind: str  # "direct" | "alias" | "getattr-literal" | "getattr-table"


@dataclass(frozen=True)
class DynamicEvent:
    kind: str  # "dynamic-getattr" | "kwargs-forward" | "dunder-dict"
    line: int
    end_line: int
    text: str
    receiver: object = field(default=None, compare=False)


@dataclass(frozen=True)
class Condition:
    """A branch condition the walk could not decide, and the side taken on the current path."""

    text: str
    line: int
    end_line: int
    reason: str
    taken: bool | None = None


@dataclass(frozen=True)
class Decision:
    text: str
    line: int
    end_line: int
    value: bool


@dataclass(frozen=True)
class ReturnEvent:
    line: int
    end_line: int
    value: object
    conditions: tuple[Condition, ...]


@dataclass(frozen=True)
class RaiseEvent:
    line: int
    end_line: int
    text: str
    conditions: tuple[Condition, ...]
    in_loop: bool = False  # inside a loop body that may not run: reached only if it runs


class _Stop(Exception):
    pass


# ---------------------------------------------------------------------------------------------


class Frame:
    """One walk of one function (or a module-level expression) under the analyzer's bindings."""

    def __init__(self, analyzer: "Analyzer", module, fn=None, symbol=None, self_obj=None, args=None, owner=None):
        self.an = analyzer
        self.index = analyzer.index
        self.module = module
        self.fn = fn
        self.symbol = symbol
        self.scope = fn.qualname if fn is not None else ""
        self.owner = owner if owner is not None else (fn.owner if fn is not None else None)
        self.self_obj = self_obj
        self.calls: list[CallEvent] = []
        self.reads: list[ReadEvent] = []
        self.dynamic: list[DynamicEvent] = []
        self.assumptions: list[Condition] = []
        self.decisions: list[Decision] = []
        self.returns: list[ReturnEvent] = []
        self.raises: list[RaiseEvent] = []
        self.conds: list[Condition] = []
        self.env: dict[str, object] = {}
        self.narrowed: dict[str, object] = {}  # `self.x` -> its type inside `if isinstance(self.x, C):`
        self.env_reads: dict[str, tuple[int, int]] = {}  # env vars the recipe does not set, read here or below -> line
        self.current: tuple[int, int] = (fn.start_line, fn.start_line) if fn is not None else (1, 1)
        self.kwargs_param = fn.kwargs_param if fn is not None else None
        self.loops = 0  # depth of loop bodies being walked that may not run
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
                    receiver = ClassRef(self.an.canonical(receiver.cls) or receiver.cls)
                if not isinstance(receiver, ClassRef):
                    receiver = ClassRef(f"{self.module.module}.{fn.owner}")
                self.env[first.name] = args.get(first.name, receiver)
            else:
                self.env[first.name] = self.self_obj if self.self_obj is not None else Obj(
                    cls=f"{self.module.module}.{fn.owner}", nonnull=True, origin="self")
        for p in params:
            if p.name in args:
                self.env[p.name] = args[p.name]
            elif p.kind == "kwarg":
                self.env[p.name] = Unknown(f"**{p.name}")
            elif p.kind == "vararg":
                self.env[p.name] = Unknown(f"*{p.name}")
            elif p.annotation_expr is not None:
                self.env[p.name] = self.an.obj_for_annotation(p.annotation_expr, self.module, self.scope, p.name)
            else:
                self.env[p.name] = Unknown(f"untyped parameter {p.name}")

    # -- walking -----------------------------------------------------------------------------
    def run(self):
        self.an.stack.append(self)
        try:
            if not self.block(self.fn.body):  # the end is reachable: an implicit `return None`
                self.returns.append(ReturnEvent(self.fn.end_line, self.fn.end_line, NONE, tuple(self.conds)))
        except RecursionError:
            self.assumptions.append(Condition("<too deep>", self.fn.start_line, self.fn.end_line, "analysis depth"))
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
            self.expr_stmt(s.value)
            return False
        if kind is ir.Assign:
            value = self.ev(s.value) if s.value is not None else None
            for target in s.targets:
                self.bind(target, value if value is not None else Unknown("declaration"))
            return False
        if kind is ir.AugAssign:
            value = self.ev(s.value)
            if isinstance(s.target, ir.Name):
                name = s.target.id
                old = self.env.get(name)
                if isinstance(old, (ListVal,)) or (isinstance(old, Const) and isinstance(old.value, list)):
                    n = old.min_len if isinstance(old, ListVal) else len(old.value)
                    self.env[name] = ListVal(n, True)
                else:
                    self.env[name] = Unknown(f"{name} updated in place")
            else:
                self.ev(s.target)
            return False
        if kind is ir.If:
            return self.if_stmt(s)
        if kind is ir.Return:
            value = self.ev(s.value) if s.value is not None else NONE
            self.returns.append(ReturnEvent(s.line, s.end_line, value, tuple(self.conds)))
            return True
        if kind is ir.Raise:
            if s.exc is not None:
                self.ev(s.exc)
            self.raises.append(RaiseEvent(s.line, s.end_line, ir.text(s.exc) if s.exc is not None else "raise",
                                          tuple(self.conds), self.loops > 0))
            return True
        if kind is ir.Assert:
            truth, reason = self.truth(self.ev(s.test))
            if truth is False:
                self.raises.append(RaiseEvent(s.line, s.end_line, f"assert {s.text}", tuple(self.conds), self.loops > 0))
                return True
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
            body_done = self.block(s.body)
            if not body_done:
                body_done = self.block(s.orelse)
            after_body = self.env
            results = [(after_body, body_done)]
            for handler in s.handlers:
                self.env, self.conds = dict(saved_env), list(saved_conds)
                if handler.type is not None:
                    self.ev(handler.type)
                done = self.block(handler.body)
                results.append((self.env, done))
            self.conds = saved_conds
            live = [env for env, done in results if not done]
            self.env = self.an.merge_envs(live) if live else after_body
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
        return False

    def if_stmt(self, s) -> bool:
        truth, reason = self.truth(self.ev(s.test))
        text = s.text
        test_line, test_end = s.test.line, s.test.end_line
        if truth is True:
            self.decisions.append(Decision(text, test_line, test_end, True))
            return self.block(s.body)
        if truth is False:
            self.decisions.append(Decision(text, test_line, test_end, False))
            return self.block(s.orelse)
        self.assumptions.append(Condition(text, test_line, test_end, reason))
        saved_env, saved_conds = self._fork()
        self.conds = saved_conds + [Condition(text, test_line, test_end, reason, True)]
        saved_narrowed = dict(self.narrowed)
        self.narrow(s.test)
        done_body = self.block(s.body)
        self.narrowed = saved_narrowed
        env_body = self.env
        self.env = dict(saved_env)
        self.conds = saved_conds + [Condition(text, test_line, test_end, reason, False)]
        done_else = self.block(s.orelse)
        env_else = self.env
        self.conds = saved_conds
        if done_body and done_else:
            self.env = saved_env
            return True
        if done_body:
            self.env = env_else
        elif done_else:
            self.env = env_body
        else:
            self.env = self.an.merge_envs([env_body, env_else])
        return False

    def narrow(self, test) -> None:
        """Inside `if isinstance(x, C):` (or `... and isinstance(x, C)`), x is a C."""
        tests = test.values if isinstance(test, ir.BoolOp) and test.op == "and" else (test,)
        for t in tests:
            if isinstance(t, ir.Call) and isinstance(t.func, ir.Name) and t.func.id == "isinstance" and len(t.args) == 2:
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
            if target is not None:
                if self.an.unset_env_reads > env_before:
                    # items drawn from an env var the recipe does not set: not a table of names the
                    # source fixes (a getattr with them is dynamic), whatever "unset" would give
                    element = Unknown(f"element of {ir.text(iterable)}: depends on the environment")
                else:
                    element = self.an.element_of(it, ir.text(iterable))
                self.bind(target, element)
            certain = isinstance(it, Const) and isinstance(it.value, (tuple, list, frozenset, set, dict)) and len(it.value) > 0
        self.loops += 0 if certain else 1
        try:
            self.block(body)  # a return inside a loop body does not end the enclosing path
        finally:
            self.loops -= 0 if certain else 1
        self.block(orelse)
        self.env = self.env if certain else self.an.merge_envs([saved, self.env])
        return False

    def bind(self, target, value) -> None:
        if isinstance(target, ir.Name):
            if isinstance(value, Obj):
                value = replace(value, alias=True)
            self.env[target.id] = value
        elif isinstance(target, ir.Seq) and target.kind in ("tuple", "list"):
            elts = target.elts
            for i, elt in enumerate(elts):
                self.bind(elt, self.an.item_of(value, i, len(elts)))
        elif isinstance(target, ir.Attr):
            self.ev(target.value)  # the receiver is read, the attribute is stored
            if isinstance(target.value, ir.Name):
                # `self.x = <constant>` in this walk: a later `self.x` here reads it (keyed by the
                # dotted text, which no local name can take, so branches merge it like a local)
                key = f"{target.value.id}.{target.attr}"
                forced = self.force(value)
                if isinstance(forced, Const):
                    self.env[key] = forced
                else:
                    self.env.pop(key, None)
        elif isinstance(target, ir.Subscript):
            self.ev(target.value)
            for sl in target.index:
                self.ev(sl)

    def expr_stmt(self, e) -> None:
        # `xs.append(v)` on a local list grows it: `if unsupported:` later depends on it
        if isinstance(e, ir.Call) and isinstance(e.func, ir.Attr) and isinstance(e.func.value, ir.Name):
            name, method = e.func.value.id, e.func.attr
            current = self.env.get(name)
            if isinstance(current, (ListVal, Const)) and (isinstance(current, ListVal) or isinstance(current.value, list)):
                for a in e.args:
                    self.ev(a)
                n = current.min_len if isinstance(current, ListVal) else len(current.value)
                more = current.maybe_more if isinstance(current, ListVal) else False
                if method == "append" or method == "insert":
                    self.env[name] = ListVal(n + 1, more)
                    return
                if method == "extend":
                    self.env[name] = ListVal(n, True)
                    return
        self.ev(e)

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
            if isinstance(stored, Const):
                return stored
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
            return ListVal(sum(1 for x in e.elts if not isinstance(x, ir.Starred)),
                           any(isinstance(x, ir.Starred) for x in e.elts))
        return Unknown(ir.text(e))

    def ev_dict(self, e):
        keys = [self.ev(k) if k is not None else None for k in e.keys]
        values = [self.ev(v) for v in e.values]
        for k, v in zip(e.keys, e.values):
            if k is None:
                self.note_kwargs(v, e, "dict unpacking")
        if all(isinstance(k, Const) for k in keys) and all(isinstance(v, Const) for v in values):
            try:
                return Const({k.value: v.value for k, v in zip(keys, values)})
            except TypeError:
                pass
        return Unknown("dict")

    def ev_ifexp(self, e):
        truth, reason = self.truth(self.ev(e.test))
        if truth is True:
            return self.ev(e.body)
        if truth is False:
            return self.ev(e.orelse)
        return self.an.union([self.ev(e.body), self.ev(e.orelse)])

    def ev_lambda(self, e):
        # the body may run later: walk it once so its calls and reads are seen
        saved = dict(self.env)
        for name in e.params:
            self.env[name] = Unknown(f"lambda parameter {name}")
        self.ev(e.body)
        self.env = saved
        return Unknown("lambda")

    def ev_comp(self, e):
        saved = dict(self.env)
        for gen in e.generators:
            value = self.force(self.ev(gen.iter))
            self.bind(gen.target, self.an.element_of(value, ir.text(gen.iter)))
            for cond in gen.ifs:
                self.ev(cond)
        for elt in e.elts:
            self.ev(elt)
        self.env = saved
        return Unknown("comprehension")

    def ev_starred(self, e):
        self.ev(e.value)
        return Unknown("*args")

    def ev_walrus(self, e):
        value = self.ev(e.value)
        self.bind(e.target, value)
        return value

    def ev_slice(self, e):
        for child in ir.children(e):
            self.ev(child)
        return Unknown("slice")

    def ev_other(self, e):
        for child in e.children:
            self.ev(child)
        return Unknown(e.kind)

    def name(self, name: str):
        if name in self.env:
            return self.env[name]
        return self.an.global_name(self.module, name, self.scope)

    def attr(self, receiver, name: str, e, record: bool, kind: str | None = None):
        if isinstance(receiver, LazyCall) and isinstance(receiver.target, Ref):
            # the result of a call through an import: typed only if a condition needs its value,
            # so that reading one attribute does not parse the callee's module
            receiver = Obj(cls=("returns", receiver.target.dotted), origin=f"result of {receiver.text}")
        elif isinstance(receiver, (LazyCall, Ref)):
            receiver = self.force(receiver)
        if isinstance(receiver, Union):
            options = [self.attr(o, name, e, record, kind) for o in receiver.options
                       if not (isinstance(o, Const) and o.value is None)]
            return self.an.union(options) if options else Unknown(f"attribute of None: {name}")
        if record and (isinstance(receiver, (Obj, Unknown, OneOf))):
            if name == "__dict__":
                self.dynamic.append(DynamicEvent("dunder-dict", e.line, e.end_line, ir.text(e), receiver))
            else:
                read_kind = kind or ("alias" if isinstance(receiver, Obj) and receiver.alias else "direct")
                self.reads.append(ReadEvent(e.line, e.end_line, ir.text(e), receiver, name, read_kind))
        value = self.an.attribute(receiver, name, self)
        if isinstance(value, LazyCall) and isinstance(value.target, FuncRef) and value.target.via == "property":
            self.calls.append(CallEvent(e.line, e.end_line, ir.text(e), value.target, "property", "static", args=(receiver,)))
        return value

    def call(self, e):
        func_expr, arg_exprs, keywords = e.func, e.args, e.keywords
        text = ir.text(e)
        # hardware capability questions are answered from the recipe, whatever object asks them
        if isinstance(func_expr, ir.Attr) and func_expr.attr in _CAPABILITY_CALLS:
            self.ev(func_expr.value)
            args = [self.ev(a) for a in arg_exprs]
            return self.an.capability_call(func_expr.attr, args)
        # which platform: `current_platform.is_cuda()` is answered from the recipe's GPU vendor
        if isinstance(func_expr, ir.Attr) and func_expr.attr in _PLATFORM_PREDICATES and not arg_exprs \
                and ir.text(func_expr.value).split(".")[-1].endswith("platform"):
            self.ev(func_expr.value)
            return self.an.platform_call(func_expr.attr)
        callee = self.ev(func_expr)
        if isinstance(callee, Builtin):
            return self.builtin_call(callee.name, arg_exprs, keywords, e)
        args = tuple(self.ev(a) for a in arg_exprs)
        kwargs = []
        static = isinstance(callee, (FuncRef, Ref, ClassRef))
        for keyword in keywords:
            value_expr = keyword.value
            value = self.ev(value_expr)
            if keyword.name is None:
                # `f(**mapping)`: dynamic when the mapping is this function's own **kwargs (anything
                # a caller passed) or when it goes where the analysis cannot follow
                forwards_own = isinstance(value_expr, ir.Name) and value_expr.id == self.kwargs_param
                if forwards_own or not static:
                    self.note_kwargs(value, value_expr, text)
            else:
                kwargs.append((keyword.name, value))
        kwargs = tuple(kwargs)
        return self.an.call_value(self, callee, args, kwargs, e, text)

    def note_kwargs(self, value, expr, text) -> None:
        self.dynamic.append(DynamicEvent("kwargs-forward", expr.line, expr.end_line, text, value))

    def builtin_call(self, name, arg_exprs, keywords, e):
        text = ir.text(e)
        if name in ("getattr", "setattr", "hasattr", "delattr") and len(arg_exprs) >= 2:
            receiver = self.ev(arg_exprs[0])
            attr = self.force(self.ev(arg_exprs[1]))
            for extra in arg_exprs[2:]:
                self.ev(extra)
            if isinstance(attr, Const) and isinstance(attr.value, str):
                if name == "getattr":
                    value = self.attr(receiver, attr.value, e, record=True, kind="getattr-literal")
                    if len(arg_exprs) >= 3 and isinstance(value, Unknown):
                        return Unknown(f"{text}")
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
        args = [self.ev(a) for a in arg_exprs]
        for keyword in keywords:
            v = self.ev(keyword.value)
            if keyword.name is None:
                self.note_kwargs(v, keyword.value, text)
        if name == "super":
            if self.owner is not None:
                return Super(f"{self.module.module}.{self.owner}", self.self_obj if self.self_obj is not None
                             else self.env.get(self.fn.params[0].name) if self.fn and self.fn.params else None)
            return Unknown("super() outside a method")
        return self.an.builtin_value(name, args, text)

    def compare(self, e):
        left = self.ev(e.left)
        result: bool | None = True
        reason = ""
        for op, right_expr in zip(e.ops, e.comparators):
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
                # (its value is the unknown if that is falsy, so only a boolean False stands in)
                forced = self.force(value)
                return forced if isinstance(forced, Const) and forced.value is False else Unknown(unknown_reason)
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
            return self.an.env_value(keys[0].value, None, self)
        if isinstance(value, ClassRef) and len(keys) == 1 and isinstance(keys[0], Const) \
                and isinstance(keys[0].value, str):
            member = self.an.class_attr(value.qualname, keys[0].value)  # `SomeEnum[name]`
            if isinstance(member, Const) and isinstance(member.value, EnumMember):
                return member
            return Unknown(ir.text(e))
        if isinstance(value, Const) and len(keys) == 1 and isinstance(keys[0], Const):
            try:
                return Const(value.value[keys[0].value])
            except Exception:  # noqa: BLE001 - an index the constant does not have
                return Unknown(ir.text(e))
        return Unknown(ir.text(e))

    def binop_value(self, e, op, left, right):
        left, right = self.force(left), self.force(right)
        if isinstance(left, Const) and isinstance(right, Const):
            fn = _BINOPS.get(op)
            if fn is not None:
                try:
                    return Const(fn(left.value, right.value))
                except Exception:  # noqa: BLE001 - e.g. None + 1: the program would raise; stay undecided
                    pass
        if isinstance(left, ListVal) and op == "+":
            return ListVal(left.min_len, True)
        return Unknown(ir.text(e) if isinstance(e, ir.Node) else "expression")

    _EV = {
        ir.Constant: ev_constant, ir.Name: ev_name, ir.Attr: ev_attr, ir.Call: call, ir.Compare: compare,
        ir.BoolOp: boolop, ir.Not: ev_not, ir.Unary: ev_unary, ir.BinOp: ev_binop, ir.Subscript: subscript,
        ir.Seq: ev_seq, ir.Dict: ev_dict, ir.IfExp: ev_ifexp, ir.Lambda: ev_lambda, ir.Comp: ev_comp,
        ir.Starred: ev_starred, ir.Walrus: ev_walrus, ir.Slice: ev_slice, ir.OtherExpr: ev_other,
    }

    # -- values --------------------------------------------------------------------------------
    def force(self, value):
        return self.an.force(value, self)

    def truth(self, value):
        return self.an.truth(value, self)


_PLAIN_TYPES = {"str": str, "int": int, "float": float, "bool": bool, "tuple": tuple, "list": list,
                "dict": dict}

_BINOPS = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "//": operator.floordiv,
    "%": operator.mod, "|": operator.or_, "&": operator.and_,
}

_COMPARE = {
    "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
    ">": operator.gt, ">=": operator.ge,
}


# ---------------------------------------------------------------------------------------------


class Analyzer:
    """Walks functions of one Index under one set of bindings; caches walks and type lookups."""

    def __init__(self, index, bindings: dict):
        self.index = index
        self.bindings = dict(bindings)
        self._summaries: dict = {}
        self._returns: dict = {}
        self.platform_calls = 0  # platform predicates answered from hardware.platform (an assumption)
        self.unset_env_reads = 0  # env vars read as unset (an assumption), so far
        self._canon: dict[str, str | None] = {}
        self._instance_attr: dict = {}
        self._prefixes: dict[str, str] | None = None
        self.depth = 0
        self.stack: list[Frame] = []  # frames being walked, innermost last
        self._prefix_keys = {k.rsplit(".", i)[0] for k in self.bindings for i in range(1, k.count(".") + 1)}

    # -- walks -------------------------------------------------------------------------------
    def summary(self, qualname: str, self_cls: str | None = None, args: dict | None = None) -> Frame:
        """The trace-mode walk of a function (params typed from annotations unless given)."""
        key = (qualname, self_cls, _args_key(args))
        frame = self._summaries.get(key)
        if frame is None:
            symbol = self.index.resolve(qualname)
            info = self.index.function_at(symbol)
            self_obj = Obj(cls=self_cls, nonnull=True, origin="self",
                           path=self.config_path_for(self_cls)) if self_cls else None
            frame = Frame(self, info.module, info.facts, symbol, self_obj, args)
            self._summaries[key] = frame  # before running: recursion sees a partial walk, not a loop
            self.depth += 1
            try:
                frame.run()
            finally:
                self.depth -= 1
        return frame

    def return_value(self, target: FuncRef, args: tuple, kwargs: tuple):
        symbol = self.index.resolve(target.qualname)
        if symbol is None or symbol.kind != "function":
            return Unknown(f"{target.qualname} not found")
        if self.depth >= MAX_EVAL_DEPTH:
            return Unknown(f"{symbol.local}(): evaluation depth")
        info = self.index.function_at(symbol)
        fn = info.facts
        bound = {}
        params = list(fn.params)
        self_obj = target.bound
        if isinstance(self_obj, ClassRef) and not fn.is_classmethod:
            self_obj = None  # Class.method(instance, ...): the instance comes as the first argument
        if params and fn.owner and not fn.is_staticmethod and (self_obj is not None or fn.is_classmethod):
            first = params.pop(0)
            if self_obj is not None:
                bound[first.name] = self_obj
        positional = [p for p in params if p.kind == "positional"]
        for p, a in zip(positional, args):
            bound[p.name] = a
        names = {p.name for p in params}
        for k, v in kwargs:
            if k in names:
                bound[k] = v
        for p in params:
            if p.name not in bound and p.default is not None and p.kind in ("positional", "keyword"):
                try:
                    import ast

                    bound[p.name] = Const(ast.literal_eval(p.default))
                except (ValueError, SyntaxError):
                    pass
        key = (symbol.qualname, _value_key(self_obj), _args_key(bound))
        if key in self._returns:
            value, env_reads, platform = self._returns[key]
            self.platform_calls += platform
            self._note_env(env_reads)
            return value
        self._returns[key] = (Unknown(f"{symbol.local}() is recursive"), (), 0)
        platform_before = self.platform_calls
        self.depth += 1
        try:
            frame = Frame(self, info.module, fn, symbol, self_obj, bound)
            frame.run()
        finally:
            self.depth -= 1
        value = self.returns_of(frame, fn)
        self._returns[key] = (value, tuple(sorted(frame.env_reads)), int(self.platform_calls > platform_before))
        self._note_env(frame.env_reads)
        return value

    def _note_env(self, names) -> None:
        self.unset_env_reads += len(tuple(names)) if not isinstance(names, dict) else len(names)
        for frame in self.stack:
            for name in names:
                frame.env_reads.setdefault(name, frame.current)

    def returns_of(self, frame: Frame, fn):
        values = [r.value for r in frame.returns]
        if not frame.returns:
            if frame.raises:
                return Unknown(f"{fn.name}() raises")
            return NONE
        merged = self.union([self.force(v, frame) for v in values])
        if isinstance(merged, Union):
            reasons = [c.reason for r in frame.returns for c in r.conditions if c.reason]
            return Unknown(f"{fn.name}() depends on " + (reasons[0] if reasons else "its branches"))
        return merged

    # -- names -------------------------------------------------------------------------------
    def global_name(self, module, name: str, scope: str):
        if scope:
            parts = scope.split(".")
            for n in range(len(parts), 0, -1):
                prefix = ".".join(parts[:n])
                local = f"{prefix}.<locals>.{name}"
                if local in module.functions:
                    return FuncRef(f"{module.module}.{local}")
                if local in module.classes:
                    return ClassRef(f"{module.module}.{local}")
                fn = module.functions.get(prefix)
                if fn is not None:
                    for imp in fn.imports:
                        if imp.local == name:
                            return self.import_value(imp.target)
        if name in module.classes:
            return ClassRef(f"{module.module}.{name}")
        if name in module.functions:
            return FuncRef(f"{module.module}.{name}")
        const = module.constants.get(name)
        if const is not None and const.guard is None:
            return self.constant_value(module, const)
        for imp in module.imports:
            if imp.local == name and not imp.scope:
                return self.import_value(imp.target)
        if const is not None:
            if const.guard == "TYPE_CHECKING":
                return Unknown(f"{name} is declared only for type checking")
            return Unknown(f"{name} is bound conditionally at import time")
        if name in _BUILTIN_NAMES:
            return Builtin(name)
        for imp in module.imports:
            if imp.local == "*" and not imp.scope:
                symbol = self.index.resolve(f"{imp.target}.{name}")
                if symbol is not None:
                    return self.symbol_value(symbol)
        return Unknown(f"unbound name {name}")

    def import_value(self, target: str):
        if self.index.has_module(target):
            return ModuleRef(target)
        root = target.split(".")[0]
        if self.index.has_module(root):
            return Ref(target)
        return External(target)

    def symbol_value(self, symbol):
        if symbol is None:
            return Unknown("unresolved")
        if symbol.kind == "class":
            return ClassRef(symbol.qualname)
        if symbol.kind == "function":
            return FuncRef(symbol.qualname)
        if symbol.kind == "module":
            return ModuleRef(symbol.module)
        if symbol.kind == "constant":
            module = self.index.module(symbol.module)
            return self.constant_value(module, module.constants[symbol.local])
        if symbol.kind == "field":
            owner_q, name = symbol.qualname.rsplit(".", 1)
            info = self.index._class_info_abs(owner_q)
            f = info.field(name) if info is not None else None
            if f is not None and f.value is not UNKNOWN:
                return Const(f.value)
            return Unknown(f"class attribute {symbol.local}")
        return Unknown(symbol.qualname)

    def constant_value(self, module, const):
        if const.reassigned:
            return Unknown(f"{const.name} is bound more than once at import time")
        if const.guard is not None:
            return Unknown(f"{const.name} is bound conditionally at import time ({const.guard})")
        if const.value is not UNKNOWN and not (isinstance(const.value, dict) and any(v is UNKNOWN for v in const.value.values())):
            return Const(const.value)
        if isinstance(const.expr, (ir.Seq, ir.Name, ir.Attr, ir.BinOp)):
            frame = Frame(self, module)
            value = frame.ev(const.expr)
            if isinstance(value, Const):
                return value
        return Unknown(f"{const.name} is computed at import time")

    def force(self, value, frame: Frame | None = None):
        if isinstance(value, Ref):
            symbol = self.index.resolve(value.dotted)
            if symbol is None:
                return Unknown(f"{value.dotted} not found in the tree")
            return self.symbol_value(symbol)
        if isinstance(value, LazyCall):
            return self.force(self.evaluate_call(value), frame)
        return value

    # -- attributes ----------------------------------------------------------------------------
    def attribute(self, receiver, name: str, frame: Frame):
        if isinstance(receiver, Obj):
            return self.obj_attr(receiver, name, frame)
        if isinstance(receiver, ModuleRef):
            return self.module_attr(receiver.name, name, frame)
        if isinstance(receiver, ClassRef):
            return self.class_attr(receiver.qualname, name)
        if isinstance(receiver, External):
            return External(f"{receiver.name}.{name}")
        if isinstance(receiver, Super):
            return self.super_attr(receiver, name)
        if isinstance(receiver, Const):
            value = receiver.value
            if isinstance(value, EnumMember):
                if name == "name":
                    return Const(value.name)
                return Unknown(f"{value.name}.{name}")
            if isinstance(value, tuple) and len(value) == 2 and name in ("major", "minor"):
                return Const(value[0] if name == "major" else value[1])
            return BoundBuiltin(name, value)
        return Unknown(f"attribute {name} of an unknown value")

    def obj_attr(self, obj: Obj, name: str, frame: Frame):
        path = obj.path + (name,) if obj.path is not None else None
        if isinstance(obj.cls, tuple):  # a deferred type stays deferred: reading it parses nothing
            return Obj(cls=("attr", obj.cls, name), path=path, receiver=obj, origin=f"{obj.origin}.{name}")
        cls = self.canonical(obj.cls)
        info = self.index._class_info_abs(cls) if cls else None
        value_type = None
        if info is not None:
            method = info.methods.get(name)
            if method is not None:
                fn = self.index.module(method.module).functions[method.local]
                if fn.is_property:
                    return LazyCall(FuncRef(method.qualname, bound=obj, via="property"), (), (), name)
                return FuncRef(method.qualname, bound=obj)
            f = info.field(name)
            if f is not None:
                if f.annotation_expr is not None:
                    owner_module = self.index.module(self._owner_module(info, f.owner))
                    value_type = self.obj_for_annotation(f.annotation_expr, owner_module, "", name)
            else:
                value_type = self.instance_attr(info, name)
        bound = self._binding(path)
        if bound is not None:
            return bound
        if isinstance(value_type, Obj):
            return replace(value_type, path=path if path is not None else value_type.path,
                           nonnull=value_type.nonnull or (path is not None and ".".join(path) in self._prefix_keys),
                           owner=cls, attr=name, receiver=obj, alias=False)
        if value_type is not None and not isinstance(value_type, Unknown):
            return value_type
        return Obj(cls=None, path=path, owner=cls, attr=name, receiver=obj,
                   nonnull=path is not None and ".".join(path) in self._prefix_keys,
                   origin=f"{(cls or '?').rsplit('.', 1)[-1]}.{name}")

    def _owner_module(self, info, owner_local: str) -> str:
        for qual in info.linearization:
            symbol = self.index._class_symbol(qual)
            if symbol is not None and symbol.local == owner_local:
                return symbol.module
        return info.symbol.module

    def _binding(self, path):
        if path is None:
            return None
        key = ".".join(path)
        if key in self.bindings:
            return Const(self.bindings[key])
        return None

    def instance_attr(self, info, name: str):
        """The type of `self.name`, from its annotation or the values assigned to it in the MRO.

        An annotation wins. Otherwise every assignment counts: `None` placeholders are set
        aside, and the attribute is typed only if the remaining values agree.
        """
        key = (info.qualname, name)
        if key in self._instance_attr:
            return self._instance_attr[key]
        self._instance_attr[key] = None
        import ast as _ast

        values = []
        for qual in info.linearization:
            symbol = self.index._class_symbol(qual)
            if symbol is None:
                continue
            module = self.index.module(symbol.module)
            facts = module.classes[symbol.local]
            for assigned in facts.instance_attrs:
                if assigned.attr != name:
                    continue
                expr, annotation, method = assigned.value, assigned.annotation, assigned.method
                if annotation is not None:
                    try:
                        ann = ir.from_ast(_ast.parse(annotation, mode="eval").body, assigned.line)
                    except SyntaxError:
                        continue
                    typed = self.obj_for_annotation(ann, module, method, name)
                    if isinstance(typed, Obj):
                        self._instance_attr[key] = typed
                        return typed
                    continue
                if expr is None:
                    continue
                fn = module.functions.get(method)
                frame = Frame(self, module, fn, None, Obj(cls=info.qualname, nonnull=True), {})
                value = frame.ev(expr)
                if isinstance(value, LazyCall) and isinstance(value.target, Ref):
                    target = self.force(value.target)
                    if isinstance(target, ClassRef):
                        value = self.instantiate(target.qualname, value.args)
                    else:
                        value = Obj(cls=("returns", value.target.dotted), origin=f"self.{name}")
                elif isinstance(value, (LazyCall, Ref)):
                    value = self.force(value)
                values.append(replace(value, alias=False) if isinstance(value, Obj) else value)
        meaningful = [v for v in values if not (isinstance(v, Const) and v.value is None)]
        result = None
        if meaningful and all(v == meaningful[0] for v in meaningful) and isinstance(meaningful[0], (Obj, Const)):
            result = meaningful[0]
            if isinstance(result, Obj) and len(meaningful) < len(values):
                result = replace(result, nonnull=False)
        elif not meaningful and values:
            result = NONE
        self._instance_attr[key] = result
        return result

    def module_attr(self, module_name: str, name: str, frame: Frame):
        sub = f"{module_name}.{name}"
        from srcreview.index import UnreadableSource

        try:
            module = self.index.module(module_name)
        except UnreadableSource:
            raise  # in the tree but unreadable: the question stays open, never "external"
        except Exception:  # noqa: BLE001 - SourceUnavailable: not in the tree
            return External(sub)
        if name in module.classes or name in module.functions or (
                name in module.constants and module.constants[name].guard is None):
            return self.global_name(module, name, "")
        for imp in module.imports:
            if imp.local == name and not imp.scope:
                return self.import_value(imp.target)
        if self.index.has_module(sub):
            return ModuleRef(sub)
        if "__getattr__" in module.functions:
            table = module.constants.get("environment_variables")
            if table is not None and isinstance(table.expr, ir.Dict):
                for k, v in zip(table.expr.keys, table.expr.values):
                    if isinstance(k, ir.Constant) and k.value == name and isinstance(v, ir.Lambda):
                        env_frame = Frame(self, module)
                        self.stack.append(env_frame)
                        try:
                            value = self.force(env_frame.ev(v.body), env_frame)
                        finally:
                            self.stack.pop()
                        self._note_env(env_frame.env_reads)
                        return value
            return Unknown(f"{module_name}.{name} comes from the module's __getattr__")
        if name in module.constants:
            return Unknown(f"{module_name}.{name} is declared only for type checking")
        return Unknown(f"{module_name}.{name} not found")

    def class_attr(self, qualname: str, name: str):
        info = self.index._class_info_abs(qualname)
        if info is None:
            return Unknown(f"{qualname}.{name}")
        if info.enum_members is not None and any(m == name for m, _ in info.enum_members):
            return Const(EnumMember(qualname, name))
        method = info.methods.get(name)
        if method is not None:
            return FuncRef(method.qualname, bound=ClassRef(qualname))
        f = info.field(name)
        if f is not None and f.value is not UNKNOWN:
            return Const(f.value)
        nested = f"{qualname}.{name}"
        if self.index._class_symbol(nested) is not None:
            return ClassRef(nested)
        return Unknown(f"{qualname.rsplit('.', 1)[-1]}.{name}")

    def super_attr(self, sup: Super, name: str):
        self_cls = self.canonical(sup.self_obj.cls) if isinstance(sup.self_obj, Obj) and sup.self_obj.cls else sup.cls
        info = self.index._class_info_abs(self_cls) or self.index._class_info_abs(sup.cls)
        if info is None:
            return Unknown(f"super().{name}")
        mro = list(info.linearization)
        start = mro.index(sup.cls) + 1 if sup.cls in mro else 1
        for qual in mro[start:]:
            symbol = self.index._class_symbol(qual)
            if symbol is None:
                continue
            module = self.index.module(symbol.module)
            if name in module.classes[symbol.local].methods:
                return FuncRef(f"{qual}.{name}", bound=sup.self_obj, via="super")
        return Unknown(f"super().{name} is outside the tree")

    # -- types ---------------------------------------------------------------------------------
    def canonical(self, dotted) -> str | None:
        """The in-tree class a type reference names; None when it is outside the tree or unknown.

        A reference is a dotted name, or a deferred one: ("returns", function) for the declared
        return type of a call through an import, ("attr", reference, name) for an attribute
        of such a value. Deferred types are resolved (and their modules parsed) only when a
        question needs them, e.g. whether a read of `.field` is on the field's class.
        """
        if not dotted:
            return None
        if dotted not in self._canon:
            self._canon[dotted] = None  # cycle guard
            if isinstance(dotted, tuple):
                self._canon[dotted] = self._deferred(dotted)
            else:
                symbol = self.index.resolve(dotted) if "." in dotted else None
                self._canon[dotted] = symbol.qualname if symbol is not None and symbol.kind == "class" else None
        return self._canon[dotted]

    def _deferred(self, ref) -> str | None:
        import ast as _ast

        if ref[0] == "returns":
            symbol = self.index.resolve(ref[1])
            if symbol is not None and symbol.kind == "class":
                return symbol.qualname  # a constructor call through an import
            if symbol is None or symbol.kind != "function":
                return None
            module = self.index.module(symbol.module)
            fn = module.functions[symbol.local]
            if not fn.returns:
                return None
            try:
                ann = ir.from_ast(_ast.parse(fn.returns, mode="eval").body, fn.start_line)
            except SyntaxError:
                return None
            value = self.obj_for_annotation(ann, module, "", "return value")
            return self.canonical(value.cls) if isinstance(value, Obj) and isinstance(value.cls, str) else None
        if ref[0] == "attr":
            owner = self.canonical(ref[1])
            info = self.index._class_info_abs(owner) if owner else None
            if info is None:
                return None
            f = info.field(ref[2])
            value = None
            if f is not None and f.annotation_expr is not None:
                module = self.index.module(self._owner_module(info, f.owner))
                value = self.obj_for_annotation(f.annotation_expr, module, "", ref[2])
            elif f is None:
                value = self.instance_attr(info, ref[2])
            return self.canonical(value.cls) if isinstance(value, Obj) and isinstance(value.cls, str) else None
        return None

    def obj_for_annotation(self, ann, module, scope: str, name: str):
        """An instance of the class an annotation names (`X | None` -> X, nullable)."""
        nullable = False
        parts = []

        def collect(e):
            nonlocal nullable
            if isinstance(e, ir.BinOp) and e.op == "|":
                collect(e.left)
                collect(e.right)
            elif isinstance(e, ir.Constant) and e.value is None:
                nullable = True
            elif isinstance(e, ir.Constant) and isinstance(e.value, str):
                import ast as _ast

                try:
                    collect(ir.from_ast(_ast.parse(e.value, mode="eval").body, e.line))
                except SyntaxError:
                    pass
            elif isinstance(e, ir.Subscript) and isinstance(e.value, (ir.Name, ir.Attr)) \
                    and ir.text(e.value).split(".")[-1] in ("Optional", "Union"):
                if ir.text(e.value).split(".")[-1] == "Optional":
                    nullable = True
                for s in e.index:
                    if isinstance(s, ir.Seq) and s.kind == "tuple":
                        for x in s.elts:
                            collect(x)
                    else:
                        collect(s)
            else:
                parts.append(e)

        collect(ann)
        classes = [p for p in parts if isinstance(p, (ir.Name, ir.Attr))]
        if len(classes) != 1:
            return Unknown(f"parameter {name}: annotation {ir.text(ann)}")
        dotted = ir.text(classes[0])
        head = dotted.split(".")[0]
        frame_value = self.global_name(module, head, scope)
        rest = dotted.split(".")[1:]
        value = frame_value
        for part in rest:
            if isinstance(value, ModuleRef):
                value = self.module_attr(value.name, part, Frame(self, module))
            elif isinstance(value, External):
                value = External(f"{value.name}.{part}")
            elif isinstance(value, Ref):
                value = Ref(f"{value.dotted}.{part}")
            else:
                value = Unknown(dotted)
        if isinstance(value, ClassRef):
            cls = value.qualname
        elif isinstance(value, Ref):
            cls = value.dotted
        elif isinstance(value, External):
            return Obj(cls=value.name, nonnull=not nullable, origin=name)
        else:
            return Unknown(f"parameter {name}: {dotted}")
        return Obj(cls=cls, path=self.config_path_for(cls), nonnull=not nullable or self._config_nonnull(cls),
                   origin=name)

    def config_path_for(self, cls: str | None) -> tuple[str, ...] | None:
        """Where instances of a config class sit under VllmConfig, for binding lookups."""
        if not cls:
            return None
        short = cls.rsplit(".", 1)[-1]
        if short == ROOT_CONFIG:
            return ()
        if not short.endswith("Config"):
            return None
        prefixes = self._config_prefixes()
        return (prefixes[short],) if short in prefixes else None

    def _config_nonnull(self, cls: str) -> bool:
        path = self.config_path_for(cls)
        return path is not None and (not path or ".".join(path) in self._prefix_keys)

    def _config_prefixes(self) -> dict[str, str]:
        if self._prefixes is None:
            self._prefixes = {}
            root_symbol = self.index.resolve(f"vllm.config.{ROOT_CONFIG}")
            if root_symbol is None or root_symbol.kind != "class":
                found = self.index.find(ROOT_CONFIG, "class")
                root_symbol = found[0] if len(found) == 1 else None
            if root_symbol is not None:
                root = self.index._class_info(root_symbol)
                for f in root.facts.fields:
                    if f.annotation:
                        names = [n for n in _identifiers(f.annotation) if n.endswith("Config")]
                        if len(names) == 1:
                            self._prefixes.setdefault(names[0], f.name)
        return self._prefixes

    # -- calls ---------------------------------------------------------------------------------
    def call_value(self, frame: Frame, callee, args, kwargs, e, text):
        line, end = e.line, e.end_line
        if isinstance(callee, Ref):
            frame.calls.append(CallEvent(line, end, text, callee, "call", "static", args=args + tuple(v for _, v in kwargs)))
            return LazyCall(callee, args, kwargs, text)
        if isinstance(callee, FuncRef):
            frame.calls.append(CallEvent(line, end, text, callee, callee.via, "static", args=args + tuple(v for _, v in kwargs)))
            return LazyCall(callee, args, kwargs, text)
        if isinstance(callee, ClassRef):
            frame.calls.append(CallEvent(line, end, text, callee, "init", "static", args=args + tuple(v for _, v in kwargs)))
            return self.instantiate(callee.qualname, args)
        if isinstance(callee, External):
            if callee.name in ("os.getenv", "os.environ.get") and args and isinstance(self.force(args[0]), Const):
                default = args[1] if len(args) > 1 else NONE
                return self.env_value(self.force(args[0]).value, default, frame)
            frame.calls.append(CallEvent(line, end, text, callee, "call", "external",
                                         f"{callee.name} is outside the tree", args=args + tuple(v for _, v in kwargs)))
            return Unknown(f"{callee.name}() is outside the tree")
        if isinstance(callee, BoundBuiltin):
            value = self.bound_builtin(callee, args)
            if isinstance(value, Unknown):  # never drop a call silently: it stays in the graph, unresolved
                frame.calls.append(CallEvent(line, end, text, None, "call", "unresolved",
                                             f"method {callee.name} of a {type(callee.receiver).__name__} value",
                                             args=args + tuple(v for _, v in kwargs)))
            return value
        if isinstance(callee, LazyCall):
            callee = self.force(callee, frame)
            return self.call_value(frame, callee, args, kwargs, e, text)
        if isinstance(callee, Obj):
            receiver_cls = callee.receiver.cls if isinstance(callee.receiver, Obj) else None
            status = "unresolved"
            if callee.owner is not None and callee.attr is not None:
                reason = f"method {callee.attr} of {callee.owner.rsplit('.', 1)[-1]} not found in its MRO"
            elif isinstance(receiver_cls, str) and not self.canonical(receiver_cls):
                reason, status = f"{receiver_cls} is outside the tree", "external"
            elif isinstance(receiver_cls, tuple) or isinstance(callee.cls, tuple):
                reason = f"{callee.origin}: typed only by a declared return type, not followed"
            elif isinstance(callee.cls, str):
                reason = f"{callee.cls.rsplit('.', 1)[-1]} is outside the tree or has no such method"
            else:
                reason = f"{callee.origin or 'value'} has no resolvable type"
            frame.calls.append(CallEvent(line, end, text, None, "call", status, reason, args=args + tuple(v for _, v in kwargs)))
            return Unknown(f"{text}: {reason}")
        reason = callee.reason if isinstance(callee, Unknown) else f"callee is {type(callee).__name__}"
        frame.calls.append(CallEvent(line, end, text, None, "call", "unresolved", reason, args=args + tuple(v for _, v in kwargs)))
        return Unknown(f"{text}: {reason}")

    def instantiate(self, qualname: str, args=()):
        short = qualname.rsplit(".", 1)[-1]
        if short == "DeviceCapability":
            values = [self.force(a) for a in args]
            if len(values) >= 2 and all(isinstance(v, Const) and isinstance(v.value, int) for v in values[:2]):
                return Const((values[0].value, values[1].value))
        return Obj(cls=qualname, nonnull=True, path=self.config_path_for(qualname) if short == ROOT_CONFIG else None,
                   origin=f"{short}(...)")

    def evaluate_call(self, lazy: LazyCall):
        target = lazy.target
        if isinstance(target, Ref):
            target = self.force(target)
        if isinstance(target, ClassRef):
            return self.instantiate(target.qualname, lazy.args)
        if isinstance(target, FuncRef):
            return self.return_value(target, lazy.args, lazy.kwargs)
        if isinstance(target, Const):
            return Unknown("call of a constant")
        return Unknown(lazy.text or "call")

    def env_value(self, name, default, frame: Frame | None):
        key = f"env.{name}"
        if key in self.bindings:
            value = self.bindings[key]
            return Const(value if isinstance(value, str) or value is None else str(value))
        self._note_env((name,))
        return self.force(default, frame) if default is not None else NONE

    def platform_call(self, method: str):
        platform = self.bindings.get(_PLATFORM_KEY)
        if platform is None:
            return Unknown(f"{method}(): the recipe names no GPU vendor")
        self.platform_calls += 1
        return Const(platform in _PLATFORM_PREDICATES[method])

    def capability_call(self, method: str, args):
        capability = self.bindings.get(_CAPABILITY_KEY)
        if capability is None:
            return Unknown(f"{_CAPABILITY_KEY} not set by the recipe")
        capability = tuple(capability)
        if method == "get_device_capability":
            return Const(capability)
        if not args:
            return Unknown(method)
        wanted = self.force(args[0])
        if not isinstance(wanted, Const):
            return Unknown(f"{method} of an unknown capability")
        value = wanted.value
        as_int = capability[0] * 10 + capability[1]
        if method == "is_device_capability_family":
            return Const(as_int // 10 == value // 10) if isinstance(value, int) else Unknown(method)
        if isinstance(value, int):
            return Const(as_int >= value if method == "has_device_capability" else as_int == value)
        if isinstance(value, tuple):
            return Const(capability >= value if method == "has_device_capability" else capability == value)
        return Unknown(method)

    def bound_builtin(self, bound: BoundBuiltin, args):
        values = [self.force(a) for a in args]
        if not all(isinstance(v, Const) for v in values):
            return Unknown(f".{bound.name}()")
        receiver = bound.receiver
        if bound.name == "to_int" and isinstance(receiver, tuple) and len(receiver) == 2:
            return Const(receiver[0] * 10 + receiver[1])
        allowed = {
            str: ("startswith", "endswith", "lower", "upper", "strip", "split", "replace", "count", "find"),
            dict: ("get", "keys", "values", "items"),
            tuple: ("count", "index"),
            list: ("count", "index"),
            frozenset: ("issubset", "issuperset", "intersection", "union"),
        }
        for kind, names in allowed.items():
            if isinstance(receiver, kind) and bound.name in names:
                try:
                    result = getattr(receiver, bound.name)(*[v.value for v in values])
                except Exception:  # noqa: BLE001
                    return Unknown(f".{bound.name}()")
                if bound.name in ("keys", "values", "items"):
                    result = tuple(result)
                return Const(result)
        return Unknown(f".{bound.name}()")

    def builtin_value(self, name: str, args, text: str):
        values = [self.force(a) for a in args]
        if name == "isinstance" and len(values) == 2:
            obj, cls = values
            if isinstance(obj, Obj) and isinstance(cls, ClassRef) and obj.cls:
                canonical = self.canonical(obj.cls)
                if canonical is not None:
                    return Const(self.index.subclass_of(canonical, cls.qualname))
            if isinstance(obj, Const) and obj.value is None:
                return Const(False)
            if isinstance(obj, Const) and isinstance(cls, Builtin) and cls.name in _PLAIN_TYPES \
                    and not isinstance(obj.value, EnumMember):
                return Const(isinstance(obj.value, _PLAIN_TYPES[cls.name]))
            return Unknown(text)
        if name == "type" and len(values) == 1:
            obj = values[0]
            if isinstance(obj, Obj) and obj.cls and self.canonical(obj.cls):
                return ClassRef(self.canonical(obj.cls))
            return Unknown(text)
        if name in ("len", "bool", "int", "str", "float", "min", "max", "sum", "any", "all", "sorted", "tuple",
                    "list", "set", "frozenset", "abs", "round"):
            if len(values) == 1 and isinstance(values[0], ListVal) and name in ("bool", "len"):
                lv = values[0]
                if name == "bool":
                    return Const(True) if lv.min_len > 0 else (Const(False) if not lv.maybe_more else Unknown(text))
                return Const(lv.min_len) if not lv.maybe_more else Unknown(text)
            if name == "bool" and len(values) == 1:
                truth, reason = self.truth(values[0], None)
                return Const(truth) if truth is not None else Unknown(reason)
            if values and all(isinstance(v, Const) for v in values):
                try:
                    result = getattr(builtins, name)(*[v.value for v in values])
                except Exception:  # noqa: BLE001 - the program would raise here; stay undecided
                    return Unknown(text)
                return Const(tuple(result) if name in ("sorted", "list") else result)
            return Unknown(text)
        return Unknown(text)

    # -- decisions -----------------------------------------------------------------------------
    def truth(self, value, frame: Frame | None):
        value = self.force(value, frame)
        if isinstance(value, Const):
            try:
                return bool(value.value), ""
            except Exception:  # noqa: BLE001
                return None, "truth of a constant"
        if isinstance(value, Obj):
            if value.nonnull:
                return True, ""
            if value.path is not None:
                return None, f"{'.'.join(value.path)} is not set by the recipe"
            return None, f"{value.origin or 'value'} is only known at run time"
        if isinstance(value, ListVal):
            if value.min_len > 0:
                return True, ""
            if not value.maybe_more:
                return False, ""
            return None, "list filled under undecided conditions"
        if isinstance(value, (ClassRef, FuncRef, ModuleRef)):
            return True, ""
        if isinstance(value, Union):
            truths = {self.truth(o, frame)[0] for o in value.options}
            if len(truths) == 1 and None not in truths:
                return truths.pop(), ""
            return None, "value differs between branches"
        if isinstance(value, Unknown):
            return None, value.reason
        if isinstance(value, OneOf):
            return None, f"one of {value.source}"
        return None, f"{type(value).__name__} is only known at run time"

    def compare(self, op: str, left, right):
        left, right = self.force(left), self.force(right)
        if op in ("is", "is not"):
            if isinstance(right, Const) and right.value is None:
                result = None
                if isinstance(left, Const):
                    result = left.value is None
                elif isinstance(left, (Obj, ListVal, ClassRef, FuncRef, ModuleRef)) and (
                        not isinstance(left, Obj) or left.nonnull):
                    result = False
                if result is None:
                    _, reason = self.truth(left, None)
                    return None, reason or "identity"
                return (result if op == "is" else not result), ""
            if isinstance(left, Const) and isinstance(right, Const) and isinstance(left.value, (bool, type(None))):
                same = left.value is right.value
                return (same if op == "is" else not same), ""
            return None, "identity"
        if op in ("in", "not in"):
            if isinstance(right, External) and right.name == "os.environ" and isinstance(left, Const):
                present = f"env.{left.value}" in self.bindings
                if not present:
                    self._note_env((left.value,))
                return (present if op == "in" else not present), ""
            if isinstance(left, Const) and isinstance(right, Const):
                try:
                    container = right.value
                    if isinstance(left.value, EnumMember) or any(isinstance(x, EnumMember) for x in _iter(container)):
                        found = any(_equal(left.value, x) for x in _iter(container))
                    else:
                        found = left.value in container
                except TypeError:
                    return None, "membership"
                return (found if op == "in" else not found), ""
            if isinstance(left, Const) and isinstance(right, ListVal) and right.min_len == 0 and not right.maybe_more:
                return (op == "not in"), ""
            return None, self._why(left, right)
        if isinstance(left, Const) and isinstance(right, Const):
            if op in ("==", "!="):
                eq = _equal(left.value, right.value)
                if eq is None:
                    return None, "comparison"
                return (eq if op == "==" else not eq), ""
            try:
                return bool(_COMPARE[op](left.value, right.value)), ""
            except Exception:  # noqa: BLE001
                return None, "comparison"
        if op in ("==", "!=") and isinstance(right, Const) and isinstance(left, Obj) and left.nonnull and right.value is None:
            return (op == "!="), ""
        return None, self._why(left, right)

    def _why(self, left, right) -> str:
        for v in (left, right):
            if not isinstance(v, Const):
                truth, reason = self.truth(v, None)
                if reason:
                    return reason
        return "comparison of run-time values"

    # -- merging -------------------------------------------------------------------------------
    def union(self, values):
        options = []
        for v in values:
            for o in (v.options if isinstance(v, Union) else (v,)):
                if o not in options:
                    options.append(o)
        if len(options) == 1:
            return options[0]
        if any(isinstance(o, Unknown) for o in options):
            return next(o for o in options if isinstance(o, Unknown))
        if len(options) > MAX_UNION:
            return Unknown("too many possible values")
        return Union(tuple(options))

    def merge_envs(self, envs):
        if len(envs) == 1:
            return envs[0]
        merged = {}
        keys = set().union(*envs)
        for key in keys:
            values = [env.get(key, Unknown(f"{key} unbound on some path")) for env in envs]
            if all(v == values[0] for v in values[1:]):
                merged[key] = values[0]
            elif all(isinstance(v, (ListVal, Const)) and (isinstance(v, ListVal) or isinstance(v.value, list)) for v in values):
                lens = [v.min_len if isinstance(v, ListVal) else len(v.value) for v in values]
                more = any(isinstance(v, ListVal) and v.maybe_more for v in values) or len(set(lens)) > 1
                merged[key] = ListVal(min(lens), more)
            else:
                merged[key] = self.union(values)
        return merged

    def element_of(self, value, source: str):
        if isinstance(value, Const):
            items = value.value
            if isinstance(items, dict):
                items = tuple(items)
            if isinstance(items, (tuple, list, frozenset, set)):
                items = tuple(sorted(items, key=repr)) if isinstance(items, (set, frozenset)) else tuple(items)
                return OneOf(items, source)
        return Unknown(f"element of {source}")

    def item_of(self, value, i: int, n: int):
        if isinstance(value, Const) and isinstance(value.value, (tuple, list)) and len(value.value) == n:
            return Const(value.value[i])
        if isinstance(value, OneOf):
            column = []
            for item in value.values:
                if isinstance(item, (tuple, list)) and len(item) == n:
                    column.append(item[i])
                else:
                    return Unknown(f"element of {value.source}")
            return OneOf(tuple(column), value.source)
        return Unknown("unpacked value")


def _iter(container):
    if isinstance(container, dict):
        return tuple(container)
    try:
        return tuple(container)
    except TypeError:
        return ()


def _equal(a, b):
    if isinstance(a, EnumMember):
        return a.matches(b)
    if isinstance(b, EnumMember):
        return b.matches(a)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return None


def _identifiers(text: str) -> list[str]:
    import re

    return re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)


def _args_key(args) -> tuple:
    if not args:
        return ()
    return tuple(sorted((k, _value_key(v)) for k, v in args.items()))


def _value_key(value) -> str:
    try:
        return repr(value)
    except Exception:  # noqa: BLE001
        return type(value).__name__
