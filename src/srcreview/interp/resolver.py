"""Names, imports and attributes: what a name or `x.attr` refers to, and the class a type names.

The one resolver of the interpreter: module-level and nested names, imports (resolved
lazily, so a module is parsed only when a question needs it), module, class, instance and
`super()` attributes along the MRO, `canonical` in-tree class names (deferred types too),
and annotations -> instances (`obj_for_annotation`). It asks the interpreter to evaluate the
expressions that give a value (constants, `self.x = ...`, `vllm.envs` entries) and the
runtime model for the recipe's values at config paths.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import replace
from typing import Any, cast

from srcreview.core.errors import DataError
from srcreview.hfconfig.config_classes import TEXT_CONFIG
from srcreview.hfconfig.facts import MODEL_CONFIG_UNKNOWN
from srcreview.hfconfig.files import EXTERNAL_CONSTANTS
from srcreview.index import ir
from srcreview.index.cache import reuse_enabled
from srcreview.index.facts import UNKNOWN
from srcreview.interp import paths
from srcreview.interp.builtins import BUILTIN_NAMES, STDLIB_CONSTANTS, const_attr
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
    Grown,
    HfConfig,
    LazyCall,
    LocalPath,
    ModuleInstance,
    ModuleRef,
    Obj,
    Ref,
    Rewritable,
    Super,
    TupleVal,
    Union,
    Unknown,
)

# what a class object has from its metaclass (`type`, and `ABCMeta` behind `Protocol` and `ABC`)
METACLASS_NAMES = frozenset({"mro", "register"})
# class decorators that bind no name of the class's namespace a lookup may ask for
_NAMESPACE_KEEPING = frozenset({"runtime_checkable", "typing.runtime_checkable", "final", "typing.final"})
_DERIVED_FIELDS = tuple(f.name for f in dataclasses.fields(Derived))
CONFIG_UPDATES = ("update", "update_from_string", "__setattr__", "__dict__")  # may store any name on a config


class Resolver:
    """Resolves names and attributes for one interpreter; caches class names and instance types."""

    def __init__(self, index, runtime, interp):
        self.index = index
        self.runtime = runtime
        self.interp = interp  # evaluates the expressions that give a name its value
        self.domain = interp.domain  # the framework model (srcreview.interp.domain)
        self._canon: dict = {}
        self._instance_attr: dict = {}
        self._filled: dict[tuple[str, str], str | None] = {}  # (class, attribute) -> the method filling it
        self._root_args: dict = {}
        # id(const) -> (const, module, value): see constant_value; like _names, for every review of the tree
        self._constants: dict[int, tuple] = index.memo.setdefault("constant_value", {}) if reuse_enabled() else {}
        # (id(module), name, scope) -> (module, value): see global_name; shared by every review of
        # the tree unless the reuse is off (srcreview.index.cache.reuse_enabled)
        self._names: dict[tuple, tuple] = index.memo.setdefault("global_name", {}) if reuse_enabled() else {}
        self._annotations: dict[tuple, tuple] = {}  # see obj_for_annotation
        # module-level instances built at import (runtime.builds_at_import): a function of the
        # facts alone (whether one may be taken is asked per review), kept like _constants
        self._instances: dict[tuple, object] = index.memo.setdefault("import_instances", {}) \
            if reuse_enabled() else {}

    def global_name(self, module, name: str, scope: str):
        """What a name not bound locally refers to in `scope` of `module`: a nested definition,
        a function-level import, a module-level class, function, constant or import, a builtin.

        Kept per (module, name, scope), for every review of the tree (Index.memo; per review
        with SRCREVIEW_REUSE=0), unless it is
        a constant's value or comes through a `*` import or is unbound (the branches that
        evaluate or resolve further): the others read the tree's facts alone, and a walk asks
        the same names tens of thousands of times."""
        key = (id(module), name, scope)
        hit = self._names.get(key)
        if hit is not None and hit[0] is module:
            return hit[1]
        value, kept = self._global_name(module, name, scope)
        if kept:
            self._names[key] = (module, value)
        return value

    def _global_name(self, module, name: str, scope: str):
        """(value, whether it is a pure function of the facts: see global_name)."""
        value = self._scoped_name(module, name, scope)
        if value is not None:
            return value, True
        if name in module.classes:
            return ClassRef(f"{module.module}.{name}"), True
        if name in module.functions:
            return FuncRef(f"{module.module}.{name}"), True
        const = module.constants.get(name)
        if const is not None and const.guard is None:
            return self.constant_value(module, const), False
        for imp in module.imports:
            if imp.local == name and not imp.scope:
                return self.import_value(imp.target), True
        if const is not None:
            if const.guard == "TYPE_CHECKING":
                return Unknown(f"{name} is declared only for type checking"), True
            return Unknown(f"{name} is bound conditionally at import time"), True
        if name in BUILTIN_NAMES:
            return Builtin(name), True
        for imp in module.imports:
            if imp.local == "*" and not imp.scope:
                symbol = self.index.resolve(f"{imp.target}.{name}")
                if symbol is not None:
                    return self.symbol_value(symbol), False
        return Unknown(f"unbound name {name}"), False

    def _scoped_name(self, module, name: str, scope: str):
        """A nested definition or function-level import `name` is in `scope`, or None."""
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
        return None

    def import_value(self, target: str):
        """An imported dotted name: an in-tree module, a lazy in-tree reference, or External."""
        if self.index.has_module(target):
            return ModuleRef(target)
        root = target.split(".")[0]
        if self.index.has_module(root):
            return Ref(target)
        if target in EXTERNAL_CONSTANTS:  # a file name a library spells as a constant
            return Const(EXTERNAL_CONSTANTS[target])
        return External(target)

    def symbol_value(self, symbol):
        """The value an index Symbol stands for."""
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
        """A module constant's value: only when bound once, unconditionally, to something static.

        Kept for the next read when `_static` shows it a pure function of the facts (a literal, or
        a display of literals and names of classes, functions, imports and such constants: an
        expression whose walk reads no recipe value, config object or environment variable and
        records nothing outside its own frame), for every review of the tree (Index.memo; per
        review with SRCREVIEW_REUSE=0); a dict of model classes is read hundreds of times a
        review."""
        key = id(const)
        hit = self._constants.get(key)
        if hit is not None and hit[0] is const and hit[1] is module:
            return self._constant_value(module, const) if hit[2] is _NOT_KEPT else hit[2]
        value = self._constant_value(module, const)
        self._constants[key] = (const, module, value if self._static(module, const, frozenset()) else _NOT_KEPT)
        return value

    def _builds_own_instance(self, module, call) -> bool:
        """`NAME = Cls(...)` with `Cls` a (non-enum) class of the same module: an instance, which
        is never kept as a constant, so it is not built (a registry of hundreds of entries was
        built again at every read)."""
        if not isinstance(call.func, ir.Name) or call.func.id not in module.classes:
            return False
        info = self.index._class_info_abs(f"{module.module}.{call.func.id}")
        return info is not None and info.enum_members is None

    def _static(self, module, const, seen: frozenset) -> bool:
        """Whether `_constant_value(module, const)` is a pure function of the facts (see
        constant_value): every path it may take is checked, conservatively."""
        if const.reassigned:  # the import probe walks the module's statements
            return False
        if const.guard is not None or const.expr is None:
            return True
        if self._filled_by_uncalled(const):  # its literal holds only under a profile with no plugins
            return False
        return _static_expr(self, module, const.expr, seen | {id(const)})

    def _filled_by_uncalled(self, const) -> bool:
        stores = self.index.grep_re(_changed_in_place(const.name), literal=const.name) if _container(const) else []
        return bool(stores) and self.index.filled_only_by_uncalled(const.name, stores)

    def _static_name(self, module, name: str, seen: frozenset) -> bool:
        """Whether a module-level name resolves (global_name at module scope, in its order)
        without evaluating anything impure."""
        if name in module.classes or name in module.functions:
            return True
        const = module.constants.get(name)
        if const is not None and const.guard is None:
            return id(const) not in seen and self._static(module, const, seen)
        if any(imp.local == name and not imp.scope for imp in module.imports):
            return True
        return const is not None or name in BUILTIN_NAMES

    def _constant_value(self, module, const):
        if const.reassigned:
            probe = self.runtime.import_probe(module, const, self.interp.evaluate)
            if probe is not None:
                return probe
            return Unknown(f"{const.name} is bound more than once at import time")
        if const.guard is not None:
            return Unknown(f"{const.name} is bound conditionally at import time ({const.guard})")
        changed = _container(const) and self.index.grep_re(_changed_in_place(const.name), literal=const.name)
        if changed and self._filled_by_uncalled(const) and self.runtime.without_plugins():
            changed = False  # only functions nothing in the tree calls fill it, and no plugin runs: its literal
        if changed:
            # a registration elsewhere (`TABLE["x"] = ...`, `TABLE.update(...)`): not what the literal says;
            # where nothing ever takes a member out, its literal's members are still in it
            reason = f"{const.name} is changed in place in the tree"
            if self.index.grep_re(_shrunk_in_place(const.name), literal=const.name):
                return Unknown(reason)
            return Grown(reason, self._literal_members(module, const))
        if not _holds_unknown(const.value):
            return Const(const.value)
        if isinstance(const.expr, ir.Call) and self._builds_own_instance(module, const.expr):
            if self.runtime.builds_at_import(module.module, const.name):  # built once per review
                key = (module.module, const.name)
                if key not in self._instances:
                    built = self.interp.evaluate(module, const.expr)
                    if type(built) is Derived:
                        built = ModuleInstance(**{f: getattr(built, f) for f in _DERIVED_FIELDS},
                                               bound_to=f"{module.module}.{const.name}")
                    self._instances[key] = built
                return self._instances[key]
            return Unknown(f"{const.name} is computed at import time")  # an instance: never kept
        if isinstance(const.expr, (ir.Seq, ir.Name, ir.Attr, ir.BinOp, ir.Dict, ir.Call)):
            value = self.interp.evaluate(module, const.expr)
            if isinstance(value, (Const, DictVal)):
                return value
        return Unknown(f"{const.name} is computed at import time")

    def _literal_members(self, module, const) -> tuple:
        """The keys of a dict literal, the items of a list or set literal, where they are constants."""
        value = const.value
        if not _holds_unknown(value) and isinstance(value, (dict, list, set)):
            return tuple(value)
        if isinstance(const.expr, ir.Dict):
            evaluated = self.interp.evaluate(module, const.expr)
            if isinstance(evaluated, DictVal):
                return tuple(k for k, _ in evaluated.items)
        return ()

    def attribute(self, receiver, name: str):
        """`receiver.name` for any value: instance, module, class, out-of-tree, super() or constant."""
        if isinstance(receiver, Obj):
            return self.obj_attr(receiver, name)
        if isinstance(receiver, ModuleRef):
            return self.module_attr(receiver.name, name)
        if isinstance(receiver, ClassRef):
            return self.class_attr(receiver.qualname, name)
        if isinstance(receiver, External):
            dotted = f"{receiver.name}.{name}"
            return Const(STDLIB_CONSTANTS[dotted]) if dotted in STDLIB_CONSTANTS else External(dotted)
        if isinstance(receiver, Super):
            return self.super_attr(receiver, name)
        if isinstance(receiver, Const) and isinstance(receiver.value, EnumMember):
            return self.member_attr(receiver, name)
        if isinstance(receiver, Const):
            return const_attr(receiver.value, name)
        if isinstance(receiver, LocalPath):  # a path in a listed directory (srcreview.interp.paths)
            value = paths.attribute(receiver, name)
            return value if value is not None else BoundBuiltin(name, receiver)
        if isinstance(receiver, DictVal) and (name in DICT_VIEWS or name == "get"):
            return BoundBuiltin(name, receiver)  # a view of a dict with abstract values (Frame.loop)
        if isinstance(receiver, Unknown) and MODEL_CONFIG_UNKNOWN in receiver.reason:
            return receiver  # whatever it is read from, the model's config is what is not known
        return Unknown(f"attribute {name} of an unknown value")

    def obj_attr(self, obj: Obj, name: str):
        """An attribute of an instance: a known attribute of a derived object, its method (a
        property is a lazy call), the config value at its path (stored while the engine built
        its config, set by the recipe, or the default the engine gives it), or an instance
        typed from the field's annotation."""
        if isinstance(obj, HfConfig):
            if obj.ref:
                self.runtime.model_reads.add((obj.ref, obj.prefix + name))
                self._class_read(obj, name)
            obj = self._with_stores(obj)
            if obj.classes is not None and obj.override(name) is None and name in CONFIG_UPDATES:
                self.runtime.hf_stores.setdefault("*", f"{name}() of the model's config, not placed by the walk")
            if obj.classes is not None and obj.override(name) is None and obj.classes.members.get(name, "") \
                    .startswith("a method") and name == TEXT_CONFIG:
                return BoundBuiltin(name, obj)  # called: HfConfig.method decides it
            return obj.attribute(name)
        if name == self.domain.hf_config and self._is_model_config(obj) and not (
                isinstance(obj, Derived) and obj.override(name) is not None):
            return self.domain.model_hf_config(self, obj)
        if isinstance(obj, Derived) and obj.home is not None:
            built = self._as_built(obj, name)
            if built is not None:
                return built
        if isinstance(obj, Derived):
            known = obj.override(name)
            cls = self.canonical(obj.cls) if isinstance(obj.cls, str) else None
            moved = self.runtime.havocked_reason((name,), cls, _surely_set(known)) if cls and obj.path is None else None
            if known is not None and moved:
                return Unknown(moved)
            if known is not None:
                cls = self.canonical(obj.cls) if isinstance(obj.cls, str) and obj.origin.endswith("(...)") else None
                if cls and name not in obj.initialized and self.runtime.self_set(cls, name):
                    # built with it, but the class's own hooks (not walked) may rewrite it
                    return Unknown(f"{cls.rsplit('.', 1)[-1]}.{name} may be rewritten by its own hooks")
                home = self.runtime.config_path_for(cls) if cls else None
                if home is not None and home + (name,) in self.runtime.heap:
                    return self.runtime.heap[home + (name,)]  # its post-init hooks (walked) set it
                if home is not None and home + (name,) in self.runtime.preserved:
                    return known  # its hooks hand that field back unchanged (Runtime.preserved)
                if cls and name not in obj.initialized and name in self.domain.self_written(self.index, cls):
                    # its own methods assign it, and the walk of its hooks did not say what to
                    return Unknown(f"{cls.rsplit('.', 1)[-1]}.{name} may be rewritten by its own hooks")
                return known
        path = obj.path + (name,) if obj.path is not None else None
        if path is not None and self.runtime.canonical_path(path) != path:
            return self.at_path(self.runtime.canonical_path(path))
        if isinstance(obj.cls, tuple):  # a deferred type stays deferred: reading it parses nothing
            return Obj(cls=("attr", obj.cls, name), path=path, receiver=obj, origin=f"{obj.origin}.{name}")
        cls = self.canonical(obj.cls)
        info = self.index._class_info_abs(cls) if cls else None
        value_type = None
        f = None
        if info is not None:
            method = info.methods.get(name)
            if method is not None:
                fn = self.index.module(method.module).functions[method.local]
                if fn.is_property:
                    return LazyCall(FuncRef(method.qualname, bound=obj, via="property"), (), (), name)
                return FuncRef(method.qualname, bound=obj)
            f = info.field(name)
            held = self.held_function(info, f)
            if held is not None:  # `handler = some_function` in the class body: a method of it
                return replace(held, bound=obj)
            if f is not None:
                if f.annotation_expr is not None:
                    owner_module = self.index.module(self.owner_module(info, f.owner))
                    value_type = self.obj_for_annotation(f.annotation_expr, owner_module, "", name)
            else:
                value_type = self.instance_attr(info, name)
        value = self._config_value(obj, path, info, f, value_type)
        if value is None:
            if isinstance(value_type, Obj):
                value = replace(value_type, path=path if path is not None else value_type.path,
                                nonnull=value_type.nonnull
                                or (path is not None and ".".join(path) in self.runtime.prefix_keys),
                                owner=cls, attr=name, receiver=obj, alias=False)
            elif value_type is not None and not isinstance(value_type, Unknown):
                value = value_type
            else:
                value = Obj(cls=None, path=path, owner=cls, attr=name, receiver=obj,
                            nonnull=path is not None and ".".join(path) in self.runtime.prefix_keys,
                            origin=f"{(cls or '?').rsplit('.', 1)[-1]}.{name}")
        if path is not None and tuple(path) not in self.runtime.heap:
            moved = self.runtime.havocked_reason(tuple(path), cls, _surely_set(value))
            if moved:
                return Unknown(moved)
        if isinstance(obj, Derived) and obj.reinit:
            # the copy's post-init hooks ran again: what it did not set may have been rewritten
            nested = self.canonical(value.cls) if isinstance(value, Obj) and isinstance(value.cls, str) else None
            if nested is not None and self.runtime.config_path_for(nested) is not None:  # a sub-config
                return Derived(**{**_obj_fields(value), "overrides": (), "reinit": obj.reinit})
            return Rewritable(obj.reinit, value)
        return value

    def _as_built(self, obj, name: str):
        """A field of a config the engine's builder built (`obj.home`, its path), read once its
        own hooks have run: as any hook reads it at that path, when nothing stored it there since
        (the root config's hooks run later; a read before them sees what its own left). None
        when that is not so: its hooks have not run to their end, or a later one stored it."""
        cls = self.canonical(obj.cls) if isinstance(obj.cls, str) else None
        left = self.runtime.built.get(cls) if cls else None
        path = obj.home + (name,)
        if left is None and cls:
            self.runtime.read_half_built.add(cls)
        if left is None or self.runtime.heap.get(path) is not left.get(path):
            return None
        known = obj.override(name)
        if known is not None and path not in left and ".".join(path) not in self.runtime.bindings:
            moved = self.runtime.havocked_reason(path, cls, _surely_set(known))
            return Unknown(moved) if moved else known  # built with it, and its hooks left it
        return self.at_path(path)

    def at_path(self, path: tuple[str, ...]):
        """The config object or value at a path under the root VllmConfig."""
        root_config = self.domain.root_config
        try:
            root = self.index.class_info(root_config)
        except DataError:
            root = None
        if root is None:
            return Unknown(f"{'.'.join(path)}: no {root_config} in the tree")
        value = Obj(cls=root.qualname, path=(), nonnull=True, origin="self")
        for name in path:
            value = self.attribute(self.interp.force(value), name)
        return value

    def _is_model_config(self, obj: Obj) -> bool:
        if not isinstance(obj.cls, str) or obj.cls.rsplit(".", 1)[-1] != self.domain.model_config:
            return False
        cls = self.canonical(obj.cls)
        return cls is not None and cls.rsplit(".", 1)[-1] == self.domain.model_config

    def _config_value(self, obj, path, info, f, value_type):
        """The value of a field (None: not known here). On EngineArgs: the recipe's value of
        that engine key, else the field's declared default. On a config path: what was stored
        while the engine validated its config, the recipe's value, else what the engine passes
        when the recipe leaves it unset: the default of the engine key that lands there, the
        root `VllmConfig(...)` argument when it is a constant, or the field's declared default
        when the engine passes nothing for it. In a tree without EngineArgs, no default."""
        runtime = self.runtime
        engine = runtime.engine_class()
        if engine is None or f is None or info is None:
            if path is not None and tuple(path) in runtime.heap:
                return runtime.heap[tuple(path)]
            return runtime.binding(path) if path is not None else None
        if info.qualname == engine.qualname:
            bound = runtime.binding((f.name,))
            if bound is not None:
                return bound
            if f.name in runtime.prefix_keys:
                return None  # the recipe sets keys of this table (speculative_config)
            if runtime.self_set(engine.qualname, f.name):
                return None  # EngineArgs fills it in itself (`_set_default_args`)
            value = self.domain.static_default(self.index, info, f)
            return Const(value, origin=(f.name,)) if value is not self.domain.undecided else None
        if path is None:
            return None
        key = tuple(path)
        if key in runtime.heap:
            return runtime.heap[key]
        bound = runtime.binding(path)
        if bound is not None:
            if key in runtime.tentative:  # a hook may have rewritten it: what reads it rests on that
                self.interp.note_tentative(key)
            return bound
        if ".".join(path) in runtime.prefix_keys:
            return None  # the recipe sets fields under it: it exists, whatever its default
        owner = self.owner_class(info, f.owner)
        if runtime.self_set(owner, f.name):
            return None  # the class's own hooks may set it
        decided, value = runtime.engine_default(path)
        if decided:
            if value is not self.domain.undecided:
                return Const(value, origin=key)
            # EngineArgs fills the key in itself: what its builder passes, when the walk decides it
            return _held_at(self.domain.passed_argument(self.interp, info.qualname, f.name), key)
        if len(key) == 1:
            passed = self.root_argument(key[0])
            if passed is not _NOT_PASSED:
                return Const(passed.value, origin=key) if isinstance(passed, Const) else None
        if runtime.constructed(owner, f.name):
            # the engine passes it while it builds the config: what its builder computes, when
            # the walk decides it (never the declared default)
            return _held_at(self.domain.passed_argument(self.interp, info.qualname, f.name), key)
        value = self.domain.static_default(self.index, info, f)
        if value is not self.domain.undecided:
            return Const(value, origin=key)
        if self.domain.factory_class(f) is not None and isinstance(value_type, Obj):
            return replace(value_type, path=key, nonnull=True, alias=False)
        return None

    def entry_value(self, info, name: str):
        """A field of the engine's arguments (`info`) before anything stores it: the recipe's
        value, else its declared default; None when neither is a constant (a table the recipe
        sets keys of, a default that is not static)."""
        f = info.field(name)
        if f is None or f.classvar:
            return None
        bound = self.runtime.binding((name,))
        if bound is not None:
            return bound if isinstance(bound, Const) else None
        if name in self.runtime.prefix_keys:
            return None
        value = self.domain.static_default(self.index, info, f)
        return Const(value, origin=(name,)) if value is not self.domain.undecided else None

    def root_argument(self, name: str):
        """The value create_engine_config passes as `VllmConfig(<name>=...)` (forced), or
        _NOT_PASSED; computed once per name, walking the builder with the recipe's engine args."""
        if name in self._root_args:
            return self._root_args[name]
        self._root_args[name] = Unknown(f"{name}: being computed")  # a cycle reads it as unknown
        engine = self.runtime.engine_class()
        builder = engine.methods.get(self.domain.builder) if engine is not None else None
        value = _NOT_PASSED
        if builder is not None:
            frame = self.interp.value_walk(builder.qualname, Obj(cls=engine.qualname, nonnull=True, origin="self"))
            call = next((c for c in frame.calls if _names_root(c.target, self.domain.root_config)), None)
            if call is not None:
                given = next((v for k, v in call.kwargs if k == name), _NOT_PASSED)
                value = self.interp.force(given) if given is not _NOT_PASSED else _NOT_PASSED
        self._root_args[name] = value
        return value

    def owner_class(self, info, owner_local: str) -> str:
        """The qualname of the class in `info`'s MRO that declares a member."""
        for qual in info.linearization:
            symbol = self.index._class_symbol(qual)
            if symbol is not None and symbol.local == owner_local:
                return symbol.qualname
        return info.qualname

    def forget(self) -> None:
        """Drop instance types computed before the engine's config was built."""
        self._instance_attr.clear()

    def _with_stores(self, config: HfConfig) -> HfConfig:
        """The config with what vLLM's walked code stores on model configs kept open."""
        stores = self.runtime.hf_stores
        if config.classes is None or not stores:
            return config
        if "*" in stores:
            return replace(config, classes=config.classes.model_copy(update={
                "unknown": f"vLLM stores names not known on the model's config ({stores['*']})"}))
        loader = dict(config.loader or {})
        loader.update({n: f"vLLM stores it: {why}" for n, why in stores.items()})
        return replace(config, loader=loader)

    def _class_read(self, config: HfConfig, name: str) -> None:
        """Note what the config class decided of a name config.json does not state (shown on
        the model's line: it rests on the transformers version of the runtime profile)."""
        if config.classes is None or config.override(name) is not None:
            return
        if name == TEXT_CONFIG and config.classes.members.get(name, "").startswith("a method"):
            return  # noted when called (HfConfig.method)
        kind, value, _ = config._decision(name)
        if kind == "value":
            tested = config.classes.presence.get(name)
            how = f"a property: whether it has {tested}" if tested else "default"
            self.runtime.class_reads.add((config.ref, f"{config.prefix}{name} = {value!r} ({how})"))
        elif kind == "absent":
            self.runtime.class_reads.add((config.ref, f"{config.prefix}{name}: absent"))

    def has_attribute(self, value, name: str) -> bool | None:
        """`hasattr(value, name)` when the source decides it: True for a known attribute, a
        method, a field or a class attribute; False only when the class and every base are in
        the tree, none defines `__getattr__` and nothing assigns that name; None otherwise."""
        if isinstance(value, HfConfig):
            value = self._with_stores(value)
            if value.ref:
                self._class_read(value, name)
            return value.has(name)
        if isinstance(value, Derived) and value.override(name) is not None:
            return True
        if isinstance(value, External):  # an out-of-tree class a stub describes
            return self.stub_defines(value.name, name)
        if isinstance(value, ClassRef):  # a class object: its MRO's namespaces
            cls = self.canonical(value.qualname)
            binding = self.class_binding(cls, name) if cls else None
            return None if binding is None else binding[0] != "absent"
        if not isinstance(value, Obj) or not isinstance(value.cls, str):
            return None
        cls = self.canonical(value.cls)
        info = self.index._class_info_abs(cls) if cls else None
        if info is None:
            return None
        if name in info.methods or info.field(name) is not None or name in info.constants:
            return True
        closed = True
        for qual in info.linearization:
            symbol = self.index._class_symbol(qual)
            if symbol is None:
                closed = qual in ("object", "builtins.object")
                if not closed:
                    break
                continue
            facts = self.index.module(symbol.module).classes[symbol.local]
            if any(a.attr == name for a in facts.instance_attrs):
                return None  # assigned in some method: present only once that ran
        if not closed or "__getattr__" in info.methods or "__getattribute__" in info.methods:
            return None
        return False

    def class_binding(self, qualname: str, name: str) -> tuple[str, str | None] | None:
        """Where `Cls.name` is found on the class object `qualname`, its MRO in order: ("tree",
        class) for a class of the tree whose body binds it, ("external", class) for an out-of-tree
        base whose stub lists it (srcreview.vllm.stubs), ("absent", None) where no class of the
        MRO binds it. None where the source does not decide it: a body with statements its facts
        do not list, a decorated class (a decorator may set it), an `__init_subclass__` or a
        metaclass of the tree, an out-of-tree base no stub decides, before a class that binds
        it; and, for "absent", a store of that name on some object other than `self` in the tree
        (a store elsewhere cannot take a name away from a class that binds it)."""
        memo = self.index.memo.setdefault("class_binding", {})
        key = (qualname, name)
        if key not in memo:
            memo[key] = self._class_binding(qualname, name)
        return memo[key]

    def _class_binding(self, qualname: str, name: str):
        info = self.index._class_info_abs(qualname)
        if info is None:
            return None
        externals = self._external_bases(info)
        for qual in info.linearization:
            symbol = self.index._class_symbol(qual)
            if symbol is None:
                where = "builtins.object" if qual in ("object", "builtins.object") else externals.get(qual)
                found = self.stub_defines(where, name) if where is not None else None
                if found is None:
                    return None
                if found:
                    return ("external", where)
                continue
            facts = self.index.module(symbol.module).classes[symbol.local]
            if not facts.body_closed or any(d not in _NAMESPACE_KEEPING for d in facts.decorators) or \
                    "metaclass" in dict(facts.keywords) or \
                    ("__init_subclass__" in facts.methods and qual != info.linearization[0]):
                return None
            declared = [f for f in facts.fields if f.name == name and f.default_expr is not None]
            if any(_field_call(f.default_expr) for f in declared):
                return None  # `field(...)`/`Field(...)`: a dataclass or pydantic may take it off the class
            if name in facts.methods or self.index._class_symbol(f"{qual}.{name}") is not None or declared:
                return ("tree", qual)
        if name in METACLASS_NAMES or name.startswith("__") or self._stored_anywhere(name):
            return None  # the class object's metaclass (`type`) and its special names; a store elsewhere
        return ("absent", None)

    def stub_defines(self, qualname: str, name: str) -> bool | None:
        """Whether the out-of-tree class `qualname` has `name`, as the framework's stub of it
        says (Domain.external_names); None without a stub, and for a private or special name."""
        names = self.domain.external_names(qualname)
        if names is None or name.startswith("_"):
            return None
        return name in names

    def _stored_anywhere(self, name: str) -> bool:
        """Whether the tree may store `name` on a class object: an attribute store of that name
        on something other than `self`, or a `setattr` of it. A store inside a class decorator
        (`def attn_type(t): def func(model): model.attn_type = t; return model; return func`)
        reaches only the classes written under it, when its factory is used nowhere but as
        `@factory(...)`: those classes are decorated, which `class_binding` leaves open anyway."""
        pattern = rf"(\b(?!self\b)\w+\.{re.escape(name)}\s*=[^=])|(setattr\([^,]+,\s*['\"]{re.escape(name)}['\"])"
        regex = re.compile(pattern.encode())
        for path in self.index.grep_re(pattern, literal=name):
            text = self.index.raw_text(path)
            facts = self.index.module(path)
            for match in regex.finditer(text):
                line = text.count(b"\n", 0, match.start()) + 1
                if self._decorator_factory(facts, line) is None:
                    return True
        return False

    def _decorator_factory(self, facts, line: int) -> str | None:
        """The factory `G` whose nested function holds `line`, where the tree only ever uses
        `G` as a decorator (`@G(...)`); None otherwise."""
        inner = [f for f in facts.functions.values() if f.start_line <= line <= f.end_line]
        if not inner:
            return None
        nested = max(inner, key=lambda f: f.start_line)
        outer, sep, _ = nested.qualname.partition(".<locals>.")
        if not sep or "." in outer:
            return None
        name = outer.rsplit(".", 1)[-1]
        applied = re.compile(br"^\s*(@[\w.]*|def |async def )$")
        for path in self.index.grep(f"{name}("):
            text = self.index.raw_text(path)
            for match in re.finditer(rf"(?<!\w){re.escape(name)}\(".encode(), text):
                before = text[text.rfind(b"\n", 0, match.start()) + 1:match.start()]
                if not applied.match(before):
                    return None  # called, or passed on: not only applied with `@`
        return name

    def _external_bases(self, info) -> dict[str, str]:
        """An out-of-tree base of `info`'s MRO as written -> the dotted name its module's imports
        give it (`nn.Module` -> `torch.nn.Module`)."""
        out: dict[str, str] = {}
        for qual in info.linearization:
            symbol = self.index._class_symbol(qual)
            if symbol is None:
                continue
            module = self.index.module(symbol.module)
            imports = {i.local: i.target for i in module.imports if not i.scope}
            for base in module.classes[symbol.local].bases:
                head, _, tail = base.partition(".")
                if head in imports and base not in out:
                    out[base] = imports[head] + (f".{tail}" if tail else "")
        return out

    def class_isinstance(self, obj_qual: str, cls_qual: str) -> bool | None:
        """`isinstance(Obj, Cls)` for a class object `obj_qual` of the tree: against a
        runtime-checkable protocol, whether the class has every member the protocol declares
        (what `typing` checks); against a class of the tree that is no metaclass, False."""
        cls = self.index._class_info_abs(cls_qual)
        if cls is None:
            return None
        members = self._protocol_members(cls)
        if members is None:
            if any(q.rsplit(".", 1)[-1] in ("type", "ABCMeta") or self.index._class_symbol(q) is None
                   for q in cls.linearization[1:]):
                return None  # a metaclass, or a base outside the tree that may be one
            return False
        found = [self.class_binding(obj_qual, m) for m in members]
        if any(b is not None and b[0] == "absent" for b in found):
            return False
        return True if all(b is not None for b in found) else None

    def is_bound_method(self, fn: FuncRef) -> bool:
        """Whether `fn` is a bound method (it has `__func__`; its signature drops the first
        parameter): a method reached through an instance, or a classmethod. A plain method
        reached through its class, a staticmethod and a function are plain functions."""
        info = self.index.function(fn.qualname)
        if info is None or fn.bound is None or info.facts.is_staticmethod:
            return False
        return info.facts.is_classmethod or not isinstance(fn.bound, ClassRef)

    def class_subclass(self, qualname: str, other) -> bool | None:
        """`issubclass(Cls, other)` for a class of the tree and a class of the tree or an
        out-of-tree class: True where `other` is in its MRO; False where it is not and every
        out-of-tree base there is one a stub describes (whose own bases are known); else None."""
        info = self.index._class_info_abs(qualname)
        if info is None:
            return None
        externals = self._external_bases(info)
        outside = [externals.get(q) for q in info.linearization if self.index._class_symbol(q) is None]
        if isinstance(other, ClassRef):
            target = self.canonical(other.qualname)
            if target is not None and target in info.linearization:
                return True
        elif isinstance(other, External):
            if other.name == "builtins.object" or other.name in outside:
                return True
        else:
            return None
        return False if all(q is not None and self.domain.external_names(q) is not None for q in outside) else None

    def class_mro(self, info):
        """`Cls.__mro__`: the classes of the tree in their order, the out-of-tree bases by their
        imported names, then `typing.Protocol` and `typing.Generic` where a class of the MRO is
        written over them (the index drops those two; their place is taken as C3 gives it for
        protocol mixins: after every other class) and `object`. Unknown where an out-of-tree base
        has no name its module's imports give."""
        externals = self._external_bases(info)
        items: list = []
        for qual in info.linearization:
            if self.index._class_symbol(qual) is not None:
                items.append(ClassRef(qual))
            elif qual in externals:
                items.append(External(externals[qual]))
            else:
                return Unknown(f"{info.facts.name}.__mro__")
        written = [b.split("[")[0] for q in info.linearization if (sym := self.index._class_symbol(q)) is not None
                   for b in self.index.module(sym.module).classes[sym.local].bases]
        for typing_base in ("Protocol", "Generic"):
            if typing_base in written or f"typing.{typing_base}" in written:
                items.append(External(f"typing.{typing_base}"))
        items.append(External("builtins.object"))
        return TupleVal(tuple(items))

    def _protocol_members(self, info) -> tuple[str, ...] | None:
        """The members a `@runtime_checkable` protocol of the tree declares (fields, annotated or
        not, and methods of it and its protocol bases); None for a class that is no such protocol."""
        if not any(d.rsplit(".", 1)[-1] == "runtime_checkable" for d in info.facts.decorators):
            return None
        members: list[str] = []
        for qual in info.linearization:
            symbol = self.index._class_symbol(qual)
            if symbol is None:
                continue
            facts = self.index.module(symbol.module).classes[symbol.local]
            if not any(b.split("[")[0].rsplit(".", 1)[-1] == "Protocol" for b in facts.bases):
                continue
            if not facts.body_closed:
                return None
            members += [f.name for f in facts.fields] + list(facts.methods)
        return tuple(dict.fromkeys(m for m in members if not (m.startswith("__") and m.endswith("__"))
                                   and m not in ("_is_protocol", "_is_runtime_protocol")))

    def owner_module(self, info, owner_local: str) -> str:
        """The module of the class in `info`'s MRO that declares a member (by its local name)."""
        for qual in info.linearization:
            symbol = self.index._class_symbol(qual)
            if symbol is not None and symbol.local == owner_local:
                return symbol.module
        return info.symbol.module

    def is_dataclass(self, value) -> bool | None:
        """`dataclasses.is_dataclass(value)` for an instance of an in-tree class: True when a
        class of its MRO is decorated by a dataclass maker (`dataclasses.dataclass`, pydantic's,
        or an in-tree function every return of which is one: vLLM's `@config`), False when no
        class of it is and it has no base outside the tree (but `object`, `ABC`, ...), None
        otherwise (a decorator or base the analysis cannot read)."""
        if isinstance(value, Const) and (value.value is None or isinstance(value.value, (
                bool, int, float, str, bytes, tuple, list, dict, frozenset, EnumMember))):
            return False  # a constant of a builtin type, or an enum member
        if not (isinstance(value, Obj) and isinstance(value.cls, str)):
            return None
        info = self.index._class_info_abs(self.canonical(value.cls) or value.cls)
        if info is None:
            return None
        plain = True
        for qual in info.linearization:
            symbol = self.index._class_symbol(qual)
            if symbol is None:
                plain = plain and qual.rsplit(".", 1)[-1] in _PLAIN_BASES
                continue
            module = self.index.module(symbol.module)
            for text in module.classes[symbol.local].decorators:
                made = self._maker(module, text.split("(", 1)[0].strip(), set())
                if made:
                    return True
                if made is None:
                    plain = False
        return False if plain else None

    def _maker(self, module, dotted: str, seen: set) -> bool | None:
        """Whether the decorator named `dotted` in `module` makes dataclasses (None: unknown)."""
        head, _, rest = dotted.partition(".")
        value = self.global_name(module, head, "")
        if rest and isinstance(value, External):
            value = External(f"{value.name}.{rest}")
        elif rest:
            return None
        if isinstance(value, Ref):
            value = self.interp.force(value)
        if isinstance(value, External):
            return value.name in DATACLASS_MAKERS or None
        if isinstance(value, FuncRef) and value.qualname not in seen:
            seen.add(value.qualname)
            symbol = self.index.resolve(value.qualname)
            return self._makes(self.index.module(symbol.module), self.index.function_at(symbol).facts, seen) \
                if symbol is not None else None
        return False if isinstance(value, Builtin) else None

    def _makes(self, module, fn, seen: set) -> bool | None:
        """Whether `fn`, applied to a class, returns a dataclass: True when every return is a
        dataclass maker, a nested function that is one, or a call of one (what `@config` and
        `@config(...)` return); False when every return hands back the class it was given and
        nothing is handed the class but a container's `append`/`add` (a registrar); None else."""
        returns = [s for s in ir.iter_statements(fn.body) if isinstance(s, ir.Return)]
        if not returns:
            return None
        param = fn.params[0].name if fn.params else None
        nested = f"{fn.qualname}.<locals>."
        kinds = set()
        for ret in returns:
            if isinstance(ret.value, ir.Name) and ret.value.id == param:
                handed = [c for c in ir.iter_calls(fn.body) if any(
                    isinstance(a, ir.Name) and a.id == param for a in c.args)]
                if any(not (isinstance(c.func, ir.Attr) and c.func.attr in ("append", "add")) for c in handed):
                    return None
                kinds.add(False)
                continue
            target = ret.value.func if isinstance(ret.value, ir.Call) else ret.value
            if not isinstance(target, ir.Name):
                return None
            inner = module.functions.get(nested + target.id)
            if inner is not None:
                made = None if inner.qualname in seen else self._makes(module, inner, seen | {inner.qualname})
            else:
                made = self._maker(module, target.id, seen) if isinstance(ret.value, ir.Call) else None
            if made is None:
                return None
            kinds.add(made)
        return kinds.pop() if len(kinds) == 1 else None

    def init_stores(self, info) -> tuple[tuple[str, str], ...] | None:
        """((attribute, parameter), ...) that a plain class's `__init__` stores unchanged on
        every path (`self.a = a` in its top-level statements, before any that may return, the
        parameter not rebound before) where nothing else in the class assigns `a`: what an
        instance built with those arguments holds. None when the class has no `__init__` of its
        own in the tree (a dataclass or config class: its keywords are its fields) or inherits
        from a class outside it (whose `__init__` or `__setattr__` may differ)."""
        key = ("init_stores", info.qualname)
        memo = self.index.memo.setdefault("init_stores", {}) if reuse_enabled() else {}
        if key in memo:
            return memo[key]
        memo[key] = found = self._init_stores(info)
        return found

    def _init_stores(self, info):
        init = info.methods.get("__init__")
        if init is None or "__setattr__" in info.methods or "__new__" in info.methods:
            return None
        if any(self.index._class_symbol(q) is None and q.rsplit(".", 1)[-1] not in _PLAIN_BASES
               for q in info.linearization[1:]):
            return None
        if any(self._hands_out_self(symbol) for symbol in info.methods.values()):
            return None
        fn = self.index.module(init.module).functions[init.local]
        params = {p.name for p in fn.params[1:] if p.kind in ("positional", "keyword")}
        assigned: dict[str, int] = {}
        for qual in info.linearization:
            symbol = self.index._class_symbol(qual)
            if symbol is not None:
                for a in self.index.module(symbol.module).classes[symbol.local].instance_attrs:
                    assigned[a.attr] = assigned.get(a.attr, 0) + 1
        me = fn.params[0].name if fn.params else "self"
        rebound: set[str] = set()
        stores = []
        for stmt in fn.body:
            if isinstance(stmt, ir.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ir.Attr) \
                    and isinstance(stmt.targets[0].value, ir.Name) and stmt.targets[0].value.id == me \
                    and isinstance(stmt.value, ir.Name) and stmt.value.id in params \
                    and stmt.value.id not in rebound and assigned.get(stmt.targets[0].attr) == 1 \
                    and stmt.targets[0].attr not in info.methods:
                stores.append((stmt.targets[0].attr, stmt.value.id))
                continue
            if any(isinstance(s, ir.Return) for s in ir.iter_statements((stmt,))):
                break
            rebound |= _bound_names(stmt)
        return tuple(stores)

    def _hands_out_self(self, method) -> bool:
        """Whether a method may set attributes of `self` that no `self.x = ...` names: it hands
        `self` to a call (`setattr(self, ...)` among them; `super().__init__()` does not) or
        reaches `self.__dict__`."""
        fn = self.index.module(method.module).functions.get(method.local)
        if fn is None or not fn.params:
            return fn is None
        me = fn.params[0].name
        module = self.index.module(method.module)
        for call in ir.iter_calls(fn.body):
            if not any(isinstance(a, ir.Name) and a.id == me for a in (*call.args, *(k.value for k in call.keywords))):
                continue
            callee = ir.dotted(call.func)
            if callee in _READING_BUILTINS and isinstance(self.global_name(module, callee, fn.qualname), Builtin):
                continue  # `type(self)`, `isinstance(self, C)`, `getattr(self, name)`: they only look
            return True  # `register(self)`, `setattr(self, ...)`: whatever receives it may set anything
        return any(isinstance(e, ir.Attr) and e.attr == "__dict__" and isinstance(e.value, ir.Name)
                   and e.value.id == me for e in ir.iter_exprs(fn.body))

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
                value = self.interp.evaluate(module, expr, fn, Obj(cls=info.qualname, nonnull=True))
                if isinstance(value, LazyCall) and isinstance(value.target, Ref):
                    target = self.interp.force(value.target)
                    if isinstance(target, ClassRef):
                        value = self.interp.instantiate(target.qualname, value.args, value.kwargs)
                    else:
                        value = Obj(cls=("returns", cast(Any, value.target).dotted), origin=f"self.{name}")
                elif isinstance(value, (LazyCall, Ref)):
                    value = self.interp.force(value)
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

    def module_attr(self, module_name: str, name: str):
        """An attribute of an in-tree module (a module outside the tree gives External)."""
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
            entry = self.runtime.env_table_entry(module, name)
            if entry is not None:
                return self.interp.env_attribute(module, entry)
            return Unknown(f"{module_name}.{name} comes from the module's __getattr__")
        if name in module.constants:
            return Unknown(f"{module_name}.{name} is declared only for type checking")
        return Unknown(f"{module_name}.{name} not found")

    def class_attr(self, qualname: str, name: str):
        """`Class.name`: an enum member, a method bound to the class, a literal class attribute,
        a nested class."""
        info = self.index._class_info_abs(qualname)
        if info is None:
            return Unknown(f"{qualname}.{name}")
        if info.enum_members is not None and any(m == name for m, _ in info.enum_members):
            return Const(EnumMember(qualname, name))
        if name == "__name__" and not info.facts.decorators:
            return Const(info.facts.name)  # type's data descriptor: the class statement's name
        if name == "__mro__":
            return self.class_mro(info)
        method = info.methods.get(name)
        if method is not None:
            return FuncRef(method.qualname, bound=ClassRef(qualname))
        f = info.field(name)
        held = self.held_function(info, f)
        if held is not None:
            return held
        if f is not None and f.value is not UNKNOWN:
            filler = self.filled_by(info, name) if isinstance(f.value, (dict, list, set)) else None
            if filler is not None:
                return Unknown(f"{qualname.rsplit('.', 1)[-1]}.{name} is filled by {filler}: not its declared value")
            return Const(f.value)
        nested = f"{qualname}.{name}"
        if self.index._class_symbol(nested) is not None:
            return ClassRef(nested)
        return Unknown(f"{qualname.rsplit('.', 1)[-1]}.{name}")

    def member_attr(self, member: Const, name: str):
        """`member.value` (its literal value, or a tuple of earlier members' values, as the class
        body spells them) and `member.method` (the in-tree enum class's method, the member as
        `self`); anything else as of a constant."""
        cls = self.canonical(member.value.enum)
        info = self.index._class_info_abs(cls) if cls else None
        if info is None or info.enum_members is None:
            return const_attr(member.value, name)
        if name == "value":
            value = self.enum_values(info.symbol.qualname).get(member.value.name, UNKNOWN)
            return Const(value) if value is not UNKNOWN else Unknown(f"{member.value.name}.value")
        method = info.methods.get(name)
        if method is not None and name not in info.properties:
            fn = self.index.function(method.qualname)
            if fn is not None and fn.facts.is_classmethod:
                return FuncRef(method.qualname, bound=ClassRef(info.symbol.qualname))
            if fn is not None and not fn.facts.is_staticmethod:
                return FuncRef(method.qualname, bound=member)  # type: ignore[arg-type]
        return const_attr(member.value, name)

    def enum_values(self, qualname: str) -> dict:
        """An enum's member values by name, as its class body gives them: a literal, or a tuple
        of names of members defined before it (`FULL_AND_PIECEWISE = (FULL, PIECEWISE)`: in the
        body those names are still the plain values); UNKNOWN for anything else."""
        memo = self.index.memo.setdefault("enum_values", {})
        if qualname not in memo:
            info = self.index._class_info_abs(qualname)
            values: dict = {}
            for f in info.facts.fields if info is not None and info.enum_members is not None else ():
                if f.annotation is not None or f.name.startswith("_"):
                    continue
                value = f.value
                expr = f.default_expr
                if value is UNKNOWN and isinstance(expr, ir.Seq) and expr.kind == "tuple":
                    items = [values.get(e.id, UNKNOWN) if isinstance(e, ir.Name) else
                             e.value if isinstance(e, ir.Constant) else UNKNOWN for e in expr.elts]
                    value = tuple(items) if all(i is not UNKNOWN for i in items) else UNKNOWN
                values[f.name] = value
            memo[qualname] = values
        return memo[qualname]

    def enum_member_of(self, qualname: str, value) -> Const | Unknown | None:
        """`Enum(value)`: the member with that value (an enum's members by value); None when
        the class is no enum of the tree."""
        info = self.index._class_info_abs(qualname)
        if info is None or info.enum_members is None:
            return None
        values = self.enum_values(qualname)
        if not isinstance(value, Const):
            return Unknown(f"{qualname.rsplit('.', 1)[-1]}(...) of a value not known")
        for name, held in values.items():
            if held is not UNKNOWN and type(held) is type(value.value) and held == value.value:
                return Const(EnumMember(qualname, name))
        return Unknown(f"{qualname.rsplit('.', 1)[-1]}({value.value!r}): no member is known to have it")

    def held_function(self, info, f) -> FuncRef | None:
        """The in-tree function a class attribute names (`handler = some_function`), if it does."""
        if f is None or f.annotation is not None or not isinstance(f.default_expr, (ir.Name, ir.Attr)):
            return None
        module = self.index.module(self.owner_module(info, f.owner))
        value = self.interp.force(self.interp.evaluate(module, f.default_expr))
        return value if isinstance(value, FuncRef) and value.bound is None else None

    def filled_by(self, info, name: str) -> str | None:
        """The method of the class that fills its container attribute `name` (`cls._registry[k] =
        v`, `cls._registry.update(...)`: a registry filled when the module is imported or later),
        or None when no method does: only then is the declared value what a read sees."""
        key = (info.qualname, name)
        if key not in self._filled:
            self._filled[key] = None
            for symbol in info.methods.values():
                fn = self.index.function(symbol.qualname)
                if fn is not None and _fills(fn.facts.body, name):
                    self._filled[key] = symbol.qualname.rsplit(".", 2)[-2] + "." + symbol.local
                    break
        return self._filled[key]

    def super_attr(self, sup: Super, name: str):
        """`super().name`: the next definition after the calling class in self's MRO."""
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
                module = self.index.module(self.owner_module(info, f.owner))
                value = self.obj_for_annotation(f.annotation_expr, module, "", ref[2])
            elif f is None:
                value = self.instance_attr(info, ref[2])
            return self.canonical(value.cls) if isinstance(value, Obj) and isinstance(value.cls, str) else None
        return None

    def obj_for_annotation(self, ann, module, scope: str, name: str):
        """An instance of the class an annotation names (`X | None` -> X, nullable).

        Kept per (annotation, module, scope, name) when the class name resolved through
        global_name answers it kept and no module attribute (which may be a `__getattr__` env
        entry): what the annotation names is then a function of the facts and the bindings."""
        key = (id(ann), id(module), scope, name)
        hit = self._annotations.get(key)
        if hit is not None and hit[0] is ann and hit[1] is module:
            return hit[2]
        value, kept = self._obj_for_annotation(ann, module, scope, name)
        if kept:
            self._annotations[key] = (ann, module, value)
        return value

    def _obj_for_annotation(self, ann, module, scope: str, name: str):
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
            return Unknown(f"parameter {name}: annotation {ir.text(ann)}"), True
        dotted = ir.text(classes[0])
        head = dotted.split(".")[0]
        frame_value = self.global_name(module, head, scope)
        kept = (id(module), head, scope) in self._names  # (global_name kept its answer)
        rest = dotted.split(".")[1:]
        value = frame_value
        for part in rest:
            if isinstance(value, ModuleRef):
                kept = False
                value = self.module_attr(value.name, part)
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
            return Obj(cls=value.name, nonnull=not nullable, origin=name), kept
        else:
            return Unknown(f"parameter {name}: {dotted}"), kept
        return Obj(cls=cls, path=self.runtime.config_path_for(cls),
                   nonnull=not nullable or self.runtime.config_nonnull(cls),
                   origin=name), kept


def _surely_set(value) -> bool:
    """Whether a value is surely not None (a store guarded by `is None` cannot replace it)."""
    return (isinstance(value, Const) and value.value is not None) or (isinstance(value, Obj) and value.nonnull)


_NOT_KEPT = object()  # a constant whose value is computed at each read (not `_static`)


def _static_expr(resolver: Resolver, module, e, seen: frozenset) -> bool:
    """A literal, or a tuple, list, set or dict display of literals and names `_static_name`
    admits: evaluated by Frame.ev_constant, ev_seq, ev_dict and ev_name alone (no attribute,
    call, operator, lambda or comprehension: those may read recipe values or note env reads)."""
    if isinstance(e, ir.Constant):
        return True
    if isinstance(e, ir.Seq):
        return all(_static_expr(resolver, module, x, seen) for x in e.elts)
    if isinstance(e, ir.Dict):
        return all(k is None or _static_expr(resolver, module, k, seen) for k in e.keys) \
            and all(_static_expr(resolver, module, v, seen) for v in e.values)
    if isinstance(e, ir.Name):
        return resolver._static_name(module, e.id, seen)
    return False


def _holds_unknown(value) -> bool:
    """Whether a literal the index read has a part it could not read (at any depth)."""
    if value is UNKNOWN:
        return True
    if isinstance(value, dict):
        return any(_holds_unknown(k) or _holds_unknown(v) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_holds_unknown(v) for v in value)
    return False


def entry_function(index, name: str):
    """(function symbol, class of self) for a qualified-name suffix; `Class.method` may be inherited."""
    symbol = index.find_one(name, "function")
    if symbol is not None:
        return symbol, self_class(index, symbol)
    owner, _, method = name.rpartition(".")
    if owner:
        info = index.class_info(owner)
        if info is not None and method in info.methods:
            return info.methods[method], info.qualname
    raise DataError(f"{name}: no such function at {index.tree.revision.label()}")


def self_class(index, symbol) -> str | None:
    """The class whose instance a method's `self` is (None for functions and staticmethods)."""
    fn = index.module(symbol.module).functions[symbol.local]
    if fn.owner and not fn.is_staticmethod:
        return f"{symbol.module}.{fn.owner}"
    return None


_NOT_PASSED = object()


def _names_root(target, root_config: str) -> bool:
    """A call target naming the root config class (`VllmConfig(...)`)."""
    name = (target.qualname if isinstance(target, (ClassRef, FuncRef))
            else target.dotted if isinstance(target, Ref) else "")
    return name.rsplit(".", 1)[-1] == root_config


def _obj_fields(value: Obj) -> dict:
    """The fields of an Obj (or Derived) as constructor arguments for a Derived copy."""
    from dataclasses import fields

    return {f.name: getattr(value, f.name) for f in fields(Obj)}


_MUTATORS = frozenset({"append", "extend", "insert", "update", "setdefault", "add", "pop", "clear", "remove"})


def _fills(body, name: str) -> bool:
    """Whether a body stores into, or calls a mutating method of, an attribute `name` of its
    receiver or class (`cls.name[k] = v`, `self.name.append(v)`)."""
    for stmt in ir.iter_statements(body):
        if isinstance(stmt, ir.Assign):
            for target in stmt.targets:
                if isinstance(target, ir.Subscript) and isinstance(target.value, ir.Attr) \
                        and target.value.attr == name:
                    return True
    for call in ir.iter_calls(body):
        func = call.func
        if isinstance(func, ir.Attr) and func.attr in _MUTATORS and isinstance(func.value, ir.Attr) \
                and func.value.attr == name:
            return True
    return False


def _container(const) -> bool:
    """A module constant bound to a mutable container (a dict, list or set display)."""
    return isinstance(const.value, (dict, list, set)) or isinstance(const.expr, ir.Dict) or (
        isinstance(const.expr, ir.Seq) and const.expr.kind in ("list", "set"))


def _changed_in_place(name: str) -> str:
    """A regex for a store into `name`, a call of one of its mutating methods, a `del` of an
    item or a `global` declaration of it (a function may rebind it), in any file. (A change
    through an alias, `t = TABLE; t.pop()`, is not seen.)"""
    return (rf"\b{re.escape(name)}\s*(\[[^\]\n]*\]\s*=|\.(update|setdefault|append|extend|insert|add|"
            rf"pop|popitem|remove|discard|clear|__setitem__|__delitem__)\s*\()|{_taken_out(name)}")


def _shrunk_in_place(name: str) -> str:
    """A regex for what may take a member out of `name`: a removing method, a `del`, a rebinding."""
    return rf"\b{re.escape(name)}\s*\.(pop|popitem|remove|discard|clear|__delitem__)\s*\(|{_taken_out(name)}"


def _taken_out(name: str) -> str:
    return rf"\bdel\s+{re.escape(name)}\s*\[|\bglobal\s[^\n]*\b{re.escape(name)}\b"


def _held_at(value, key: tuple):
    """A value the builder computed for the field at `key`, as read from that field: a constant
    the computation left without a field of its own takes `key` (where the value is read from is
    what a draft's inheritance is decided by: srcreview.vllm.drafting.classify)."""
    if isinstance(value, Const) and value.origin is None:
        return Const(value.value, origin=key)
    if isinstance(value, Union):
        return Union(tuple(_held_at(o, key) for o in value.options))
    return value


_PLAIN_BASES = ("object", "ABC", "Generic", "Protocol")  # out-of-tree bases that store nothing on an instance
DATACLASS_MAKERS = frozenset({"dataclasses.dataclass", "pydantic.dataclasses.dataclass"})
# builtins that read the object handed to them and set nothing on it
_READING_BUILTINS = frozenset({"type", "isinstance", "getattr", "hasattr", "id", "repr", "str", "hash", "callable",
                               "len", "bool", "iter", "print", "format"})


def _bound_names(stmt) -> set[str]:
    """The local names a statement may bind (assignments, loop and `with` targets, walrus)."""
    out: set[str] = set()
    for s in ir.iter_statements((stmt,)):
        targets = s.targets if isinstance(s, ir.Assign) else (s.target,) if isinstance(s, (ir.AugAssign, ir.For)) \
            else tuple(i.target for i in s.items if i.target is not None) if isinstance(s, ir.With) else ()
        for t in targets:
            out.update(e.id for e in ir.iter_exprs(t) if isinstance(e, ir.Name))
        if isinstance(s, ir.Def):
            out.add(s.qualname.rsplit(".", 1)[-1])
    out.update(e.target.id for e in ir.iter_exprs(stmt) if isinstance(e, ir.Walrus) and isinstance(e.target, ir.Name))
    return out


def _field_call(expr) -> bool:
    """Whether a class-body value is a `field(...)`/`Field(...)` call (dataclasses and pydantic
    keep no class attribute for such a field, or another value than the call)."""
    return isinstance(expr, ir.Call) and (ir.dotted(expr.func) or "").rsplit(".", 1)[-1] in ("field", "Field")
