"""Recipe bindings in VllmConfig terms: top-level engine keys at the config paths the code reads.

A recipe writes `kv_cache_dtype = "fp8"`; the code reads `vllm_config.cache_config.cache_dtype`.
The mapping is derived from the revision's own `EngineArgs.create_engine_config`: a key is
bound at `<config>.<field>` when that function builds the config passed to `VllmConfig(<config>=...)`
with `<field>=self.<key>` (or assigns `<config>.<field> = ...self.<key>...`). A value passed
through a normaliser on the way (`resolve_kv_cache_dtype_string(self.kv_cache_dtype, ...)`,
`AttentionConfig.validate_backend_before(self.attention_backend)`) is bound only when the safe
evaluator decides what that function returns for the recipe's value (an enum member is bound
by its name, which is how vLLM parses it); otherwise the path stays unbound, never guessed.

The platform facts a recipe implies are bindings too: `hardware.platform` ("cuda" for an
NVIDIA GPU), so `current_platform.is_cuda()` is decided by the evaluator like any other call.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass

from srcreview.index import ir
from srcreview.index.ir import dotted, iter_calls, iter_statements

ENGINE_CLASS = "EngineArgs"
BUILDER = "create_engine_config"
ROOT_CONFIG = "VllmConfig"
PLATFORM_KEY = "hardware.platform"
_NVIDIA_WORDS = ("nvidia", "geforce", "rtx", "tesla", "quadro")


@dataclass(frozen=True)
class KeyPath:
    """Where create_engine_config puts an engine key: `cache_config.cache_dtype`, maybe through a normaliser."""

    key: str
    path: str
    line: int
    via: str | None = None  # qualname of the function the value passes through


def platform_of(gpu: str | None) -> str | None:
    """`cuda` when the recipe names an NVIDIA GPU; None (unknown) otherwise."""
    text = (gpu or "").lower()
    return "cuda" if any(word in text for word in _NVIDIA_WORDS) else None


def key_paths(index) -> dict[str, KeyPath]:
    """Engine key -> its VllmConfig path at this revision (empty when the builder is absent)."""
    from srcreview.errors import DataError

    try:
        found = [s for s in index.find(f"{ENGINE_CLASS}.{BUILDER}", kind="function")]
    except DataError:
        return {}
    if len(found) != 1:
        return {}
    info = index.function(found[0].qualname)
    if info is None:
        return {}
    body = info.facts.body
    config_of: dict[str, str] = {}  # local name -> VllmConfig field it is passed as
    for call in iter_calls(body):
        if (dotted(call.func) or "").split(".")[-1] == ROOT_CONFIG:
            for kw in call.keywords:
                if kw.name and isinstance(kw.value, ir.Name):
                    config_of[kw.value.id] = kw.name
    derived: dict[str, tuple[str, object]] = {}  # local -> (engine key, the call that normalises it)
    built: list[tuple[str, str, object, int]] = []  # (config local, field, value expr, line)
    for stmt in iter_statements(body):
        if not isinstance(stmt, ir.Assign) or len(stmt.targets) != 1 or stmt.value is None:
            continue
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, ir.Name) and isinstance(value, ir.Call):
            if target.id in config_of:
                built += [(target.id, kw.name, kw.value, stmt.line) for kw in value.keywords if kw.name]
            elif value.args and _self_attr(value.args[0]):
                derived[target.id] = (_self_attr(value.args[0]), value)
        elif isinstance(target, ir.Attr) and isinstance(target.value, ir.Name) and target.value.id in config_of:
            built.append((target.value.id, target.attr, value, stmt.line))
    out: dict[str, KeyPath] = {}
    for local, field, value, line in built:
        path = f"{config_of[local]}.{field}"
        key, via = _self_attr(value), None
        if key is None and isinstance(value, ir.Name) and value.id in derived:
            key, call = derived[value.id]
            via = _callee(index, info, call)
            if via is None:
                continue
        elif key is None and isinstance(value, ir.Call) and value.args and _self_attr(value.args[0]):
            key = _self_attr(value.args[0])
            via = _callee(index, info, value)
            if via is None:
                continue
        if key is not None and key != path:
            out.setdefault(key, KeyPath(key, path, line, via))
    return out


def config_bindings(index, bindings: dict, gpu: str | None = None) -> dict:
    """`bindings` plus each top-level engine key at its VllmConfig path (see the module doc), and
    `hardware.platform` from the recipe's GPU. Keys already bound are kept."""
    from srcreview.graph.values import EnumMember

    out = dict(bindings)
    if PLATFORM_KEY not in out and platform_of(gpu):
        out[PLATFORM_KEY] = platform_of(gpu)
    paths = _memo(index, "key_paths", lambda: key_paths(index))
    for key, value in bindings.items():
        where = paths.get(key)
        if where is None or where.path in out:
            continue
        if where.via is None:
            out[where.path] = value
            continue
        decided = _through(index, where.via, value)
        if decided is _UNDECIDED:
            continue
        out[where.path] = decided.name if isinstance(decided, EnumMember) else decided
    return out


_UNDECIDED = object()


def _through(index, function: str, value):
    """What `function(value, ...)` returns, when the safe evaluator decides it."""
    from srcreview.graph.api import evaluate_function

    info = index.function(function)
    params = [p for p in info.facts.params if p.kind == "positional"] if info is not None else []
    if info is not None and info.facts.owner and not info.facts.is_staticmethod and params:
        params = params[1:]
    if not params:
        return _UNDECIDED
    try:
        outcome = evaluate_function(index, function, {}, args={params[0].name: value})
    except (NotImplementedError, RecursionError):
        return _UNDECIDED
    return outcome.value if outcome.decided else _UNDECIDED


def _callee(index, info, call) -> str | None:
    """The in-tree function a call in `info` names (`f(...)` or `Class.method(...)`)."""
    name = dotted(call.func)
    if not name:
        return None
    head, _, rest = name.partition(".")
    symbol = index.resolve_name(info.module.module, head, scope=info.facts.qualname)
    if symbol is None:
        return None
    if rest:
        if symbol.kind != "class" or "." in rest:
            return None
        cls = index.class_info(symbol.qualname)
        method = cls.methods.get(rest) if cls is not None else None
        return method.qualname if method is not None else None
    return symbol.qualname if symbol.kind == "function" else None


_MEMO: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _memo(index, name: str, compute):
    """Per-Index memo (the key table is the same for every recipe at one revision)."""
    cache = _MEMO.setdefault(index, {})
    if name not in cache:
        cache[name] = compute()
    return cache[name]


def _self_attr(expr) -> str | None:
    """`self.kv_cache_dtype` -> "kv_cache_dtype"."""
    if isinstance(expr, ir.Attr) and isinstance(expr.value, ir.Name) and expr.value.id == "self":
        return expr.attr
    return None
