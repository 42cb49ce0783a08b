"""The vLLM runtime model: what the running engine would see, answered from the recipe.

What the source cannot tell statically is modelled here, once (pytype's overlays): the
environment (`os.environ`, `os.getenv`, the `vllm.envs` module whose `__getattr__` reads a
table of lambdas), the platform predicates (`current_platform.is_cuda()`), the device
capability, where each config class sits under VllmConfig, and how the recipe's engine
arguments become VllmConfig fields.

Recipe bindings in VllmConfig terms: a recipe writes `kv_cache_dtype = "fp8"`; the code reads
`vllm_config.cache_config.cache_dtype`.
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

import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from srcreview.index import ir
from srcreview.index.ir import dotted, iter_calls, iter_statements
from srcreview.interp.values import Const, EnumMember, Unknown
from srcreview.vllm.anchors import (  # noqa: F401 - vLLM's names, re-exported for modules importing them from here
    ALIASES,
    ATTN_SELECTOR,
    BACKEND_ENUM,
    BACKEND_VALIDATE,
    BUILDER,
    CAPABILITY_CALLS,
    CURRENT_CONFIG,
    ENGINE_CLASS,
    ENV_TABLE,
    FIELD_COPY,
    LAYER_FACTS,
    MODEL_LOADER,
    PLATFORM_CLASSES,
    PLATFORM_MODULES,
    PLATFORM_PREDICATES,
    PLATFORM_SELECTOR,
    PROBE_CALLS,
    REINIT_FIELDS,
    REINIT_HOOK,
    REPLACE_FUNCTIONS,
    ROOT_CONFIG,
    RUNNERS,
    SERVE_USAGE_CONTEXT,
    USAGE_CONTEXT_PARAM,
)

PLATFORM_KEY = "hardware.platform"
CAPABILITY_KEY = "hardware.compute_capability"
GPU_KEY = "hardware.gpu"

MEMORY_KEY = "hardware.memory_gib"
GPUS_KEY = "hardware.gpus"
GIB = 1 << 30
# the platform's device questions the recipe's [hardware] answers (get_device_total_memory in bytes)
DEVICE_ANSWERS = {"get_device_name": GPU_KEY, "get_device_total_memory": MEMORY_KEY, "device_count": GPUS_KEY}
EMPTY_FACTORIES = {"dict": dict, "list": list}  # `field(default_factory=dict)`: a fresh empty one
PACKAGES_KEY = "runtime.packages"  # the profile's installed distributions (normalised)
ABSENT_KEY = "runtime.absent"  # the distributions the recipe says are not installed
ENTRY_POINTS_KEY = "runtime.entry_points"  # ((group, names), ...) when the profile has no plugins
_NVIDIA_WORDS = ("nvidia", "geforce", "rtx", "tesla", "quadro")


class Runtime:
    """The bindings of one recipe as the running engine sees them: config values by path, env
    vars, platform and capability. Counts the platform questions it answered (each is an
    assumption that the recipe's GPU is the platform)."""

    def __init__(self, index, bindings: dict):
        self.index = index
        self.bindings = dict(bindings)
        self.platform_calls = 0
        self.probes: dict[str, tuple[str, int, int]] = {}  # import-time probe -> its first binding (import_probe)
        # every proper prefix of a bound key: the config objects the recipe sets something under
        self.prefix_keys = {k.rsplit(".", i)[0] for k in self.bindings for i in range(1, k.count(".") + 1)}
        self._prefixes: dict[str, str] | None = None
        # config fields stored while the engine constructs its config (VllmConfig.__post_init__
        # and the validators it runs), path -> value: they overlay every later read
        self.heap: dict[tuple[str, ...], object] = {}
        # fields the recipe sets that a hook stores to while the config is built (Analyzer.rewritten)
        self.rewrites: dict[tuple[str, ...], list[tuple]] = {}
        # recipe fields a hook may rewrite under a condition the walk does not decide, while the
        # config is built: path -> that store in words (a raise whose walk read one is not certain)
        self.tentative: dict[tuple[str, ...], str] = {}
        # recipe fields a hook stores back unchanged (`self.model = maybe_model_redirect(self.model)`):
        # another object of that class built during construction is taken to keep its own value too
        self.preserved: set[tuple[str, ...]] = set()
        # config path -> the config paths (and names) what a hook stored there read (Frame.bind)
        self.derived: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
        self._engine: Any = None  # the engine's ClassInfo, False when absent, None until asked
        self.walked: set[str] = set()  # config classes whose hooks the construction walk models
        # config class -> what the heap held under its path once its own hooks had run (before the
        # root config's): what the engine's builder reads on the object it built (Resolver.obj_attr)
        self.built: dict[str, dict[tuple[str, ...], object]] = {}
        # configs read on an object the builder built before their hooks had run to their end,
        # and how many of those have been built since: a walk that read one is walked again
        self.read_half_built: set[str] = set()
        self.built_epoch = 0
        self.hook_walks: list[tuple[str, Any]] = []  # (hook, its walk) of configs walked when first read
        self.havocked: list = []  # (path prefix | None, names | None, class | None, reason): see havoc()
        self.model_reads: set[tuple[str, str]] = set()  # (model reference, config key) read from a model's config
        # (model reference, what its config class decided: "name: absent", "name = 2048 (default)")
        self.class_reads: set[tuple[str, str]] = set()
        # names vLLM's walked code stores on a model's config (`hf_config.x = v`, setattr, an
        # update the walk cannot place: "*"): name -> the store; never read as a default or absent
        self.hf_stores: dict[str, str] = {}
        # set by the interpreter: walks a config class's post-init hooks
        self.walk_hooks: Callable[[str], None] | None = None

    # -- config values -------------------------------------------------------------------------
    def binding(self, path) -> Const | Unknown | None:
        """The recipe's value at a config path (("speculative_config", "method")), if it sets one."""
        if path is None:
            return None
        key = ".".join(path)
        if key in self.bindings:
            value = self.bindings[key]
            # a value the recipe leaves to the shell ($PORT) is bound, but unknown
            return value if isinstance(value, Unknown) else Const(value, origin=tuple(path))
        return None

    def havoc(self, prefix, names, reason: str, cls: str | None = None, only_none: bool = False) -> None:
        """Fields a store the analysis cannot place may hit (see Analyzer.havoc): on the config
        object at `prefix` (None: any), or on any object of class `cls`; `names` None: any
        field. Earlier stores there are forgotten and later reads are unknown, unless the recipe
        sets the field."""
        self.havocked.append((tuple(prefix) if prefix is not None else None, tuple(names) if names else None,
                              cls, reason, only_none))
        for path, value in list(self.heap.items()):
            surely_set = (isinstance(value, Const) and value.value is not None) or getattr(value, "nonnull", False)
            if self.havocked_reason(path, None, surely_set):
                del self.heap[path]

    def havocked_reason(self, path, cls: str | None = None, surely_set: bool = False) -> str | None:
        """Why field `path` (of an object of class `cls`, when known) may have been set by a store
        the analysis cannot place; None when it cannot have been (`surely_set`: its value is not
        None, which a store guarded by `getattr(obj, name) is None` leaves alone)."""
        if not self.havocked or (path and ".".join(path) in self.bindings):
            return None
        for prefix, names, only, reason, only_none in self.havocked:
            if only_none and surely_set:
                continue
            if only is not None and only != cls:
                continue
            if prefix is not None and (tuple(path[:len(prefix)]) != prefix or len(path) <= len(prefix)):
                continue
            if names is not None and (not path or path[-1] not in names):
                continue
            return f"{'.'.join(path)} {reason}"
        return None

    @staticmethod
    def canonical_path(path: tuple[str, ...]) -> tuple[str, ...]:
        """A config path with the aliases of ALIASES replaced by the object they name."""
        for alias, target in ALIASES.items():
            if path[:len(alias)] == alias:
                return target + path[len(alias):]
        return path

    def engine_class(self):
        """The EngineArgs ClassInfo of this revision (None when absent or ambiguous)."""
        if self._engine is None:
            from srcreview.core.errors import DataError

            try:
                self._engine = self.index.class_info(ENGINE_CLASS) or False
            except DataError:
                self._engine = False
        return self._engine or None

    def engine_default(self, path) -> tuple[bool, object]:
        """(decided, value) for a config path an engine key lands on (create_engine_config):
        the recipe leaves that key unset, so the engine passes the EngineArgs field's declared
        default (through its normaliser when the evaluator decides it). (False, None) when no
        engine key lands there; (True, UNDECIDED) when its default is not static, or is None and
        EngineArgs sets the field itself (the "unset" default it replaces before building)."""
        where = engine_paths(self.index).get(".".join(path))
        engine = self.engine_class()
        if where is None or engine is None:
            return False, None
        f = engine.field(where.key)
        value = static_default(self.index, engine, f) if f is not None else _UNDECIDED
        if value is None and self.self_set(engine.qualname, where.key):
            return True, _UNDECIDED  # `None` until EngineArgs fills it in itself (`_set_default_args`)
        if value is not _UNDECIDED and where.via is not None:
            from srcreview.interp.values import EnumMember

            value = _through(self.index, where.via, value)
            if isinstance(value, EnumMember):
                value = value.name
        return True, value

    def constructed(self, cls: str, field: str) -> bool:
        """Whether something other than the declared default may set `field` of a `cls` while
        the engine builds its config: the engine passes it (a keyword of a `SomethingConfig(...)`
        call, or a key of a dict it fills, in EngineArgs' methods), or the class sets it itself
        (`self.field = ...` in one of its methods: its own hooks, which are not walked)."""
        fields = constructed_fields(self.index)
        return (cls.rsplit(".", 1)[-1], field) in fields or ("*", field) in fields or self.self_set(cls, field)

    def section_built(self, cls: str) -> None:
        """The hooks of config class `cls` have run to their end: keep what they left under its
        path (`built`)."""
        home = self.config_path_for(cls)
        if home is not None and home:
            self.built[cls] = {p: v for p, v in self.heap.items() if p[:len(home)] == home}
            if cls in self.read_half_built:
                self.built_epoch += 1

    def self_set(self, cls: str, field: str) -> bool:
        """Whether the class's own methods may assign the field in a way the analysis does not
        model. A config class (one VllmConfig holds) has its post-init hooks walked the first
        time this is asked (`walk_hooks`): their stores land on the heap, so nothing is left
        unmodelled; any other class is judged by what its methods assign."""
        if cls in self.walked:
            return False
        if self.walk_hooks is not None and self.config_path_for(cls) is not None:
            self.walk_hooks(cls)
            return False
        return field in self_written(self.index, cls)

    def config_path_for(self, cls: str | None) -> tuple[str, ...] | None:
        """Where instances of a config class sit under VllmConfig, for binding lookups."""
        if not cls:
            return None
        short = cls.rsplit(".", 1)[-1]
        if short == ROOT_CONFIG:
            return ()
        if not short.endswith("Config"):
            return None
        prefixes = self.config_prefixes()
        return (prefixes[short],) if short in prefixes else None

    def config_nonnull(self, cls: str) -> bool:
        """The recipe sets something under this config class: the object exists."""
        path = self.config_path_for(cls)
        return path is not None and (not path or ".".join(path) in self.prefix_keys)

    def config_prefixes(self) -> dict[str, str]:
        """Config class short name -> the VllmConfig field holding it (`SpeculativeConfig` ->
        `speculative_config`), from the field annotations of VllmConfig at this revision."""
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

    @staticmethod
    def is_replace(callee, index) -> bool:
        """Whether a callee copies a dataclass with fields changed (REPLACE_FUNCTIONS)."""
        from srcreview.interp.values import External, FuncRef, Ref

        if isinstance(callee, External):
            return callee.name in REPLACE_FUNCTIONS
        if isinstance(callee, Ref):
            if callee.dotted.rsplit(".", 1)[-1] not in {f.rsplit(".", 1)[-1] for f in REPLACE_FUNCTIONS}:
                return False  # named otherwise: never resolved (that would parse its module)
            symbol = index.resolve(callee.dotted)
            return symbol is not None and symbol.qualname in REPLACE_FUNCTIONS
        return isinstance(callee, FuncRef) and callee.qualname in REPLACE_FUNCTIONS

    @staticmethod
    def reinit_reason(base, kwargs) -> str:
        """Why a copy of `base` with `kwargs` set may differ beyond those fields (REINIT_FIELDS)."""
        if base.path == () and any(name in REINIT_FIELDS for name, _ in kwargs):
            names = ", ".join(name for name, _ in kwargs if name in REINIT_FIELDS)
            return (f"the copy of VllmConfig with a new {names} runs its post-init again: the model's "
                    "architecture hooks may rewrite what the copy does not set")
        return ""

    # -- environment -----------------------------------------------------------------------------
    def env_binding(self, name) -> Const | Unknown | None:
        """The recipe's value of env var `name` (a string, as the process would see it), if set."""
        key = f"env.{name}"
        if key in self.bindings:
            value = self.bindings[key]
            if isinstance(value, Unknown):
                return value
            return Const(value if isinstance(value, str) or value is None else str(value))
        return None

    def env_set(self, name) -> bool:
        return f"env.{name}" in self.bindings

    @staticmethod
    def env_table_entry(module, name: str):
        """The lambda body `vllm.envs` evaluates for `envs.NAME` (its `__getattr__` reads
        `environment_variables[NAME]()`), or None when the module has no such entry."""
        table = module.constants.get(ENV_TABLE)
        if table is not None and isinstance(table.expr, ir.Dict):
            for k, v in zip(table.expr.keys, table.expr.values, strict=True):
                if isinstance(k, ir.Constant) and k.value == name and isinstance(v, ir.Lambda):
                    return v.body
        return None

    # -- runtime profile -------------------------------------------------------------------------
    @property
    def platform(self) -> str | None:
        """The platform the runtime profile (or the recipe's GPU) binds: "cuda"..., None when open."""
        return self.bindings.get(PLATFORM_KEY)

    def probe_call(self, name: str, args, kwargs):
        """A PROBE_CALLS call with forced arguments, answered from the runtime profile."""
        if name.endswith("find_spec"):
            return self.package_probe(args[0]) if len(args) == 1 and not kwargs else Unknown("find_spec")
        group = dict(kwargs).get("group")
        if args or not isinstance(group, Const) or not isinstance(group.value, str):
            return Unknown("entry_points() of an unknown group")
        table = self.bindings.get(ENTRY_POINTS_KEY)
        if table is None:
            return Unknown(f"entry_points(group={group.value!r}): the runtime profile does not say")
        names = dict(table).get(group.value, ())
        if names:
            return Unknown(f"entry_points(group={group.value!r}): the release declares {', '.join(names)}")
        self.platform_calls += 1
        return Const(())  # the release declares none in the group, and the profile has no plugins

    def builds_at_import(self, module: str, name: str) -> bool:
        """Whether a module-level instance is taken as the one its module builds at import
        (srcreview.vllm.model_registry: the model registry, which nothing else can have changed)."""
        from srcreview.vllm import model_registry

        return model_registry.builds_at_import(self.index, self.bindings, module, name, self.without_plugins)

    def without_plugins(self) -> bool:
        """Whether the runtime profile runs no out-of-tree code (no plugins): then code of the
        tree that nothing calls never runs. Counted as a platform answer (it rests on the profile)."""
        if ENTRY_POINTS_KEY not in self.bindings:
            return False
        self.platform_calls += 1
        return True

    def package_probe(self, module_name):
        """`find_spec(name)` under the runtime profile: a spec when a distribution of that name is
        installed, None when the recipe says it is not, unknown otherwise (the profile lists what
        the requirement files name; what they pull in is not all known). Counted as a platform
        answer: a verdict resting on it rests on the profile."""
        from srcreview.interp.values import Obj

        if not isinstance(module_name, Const) or not isinstance(module_name.value, str):
            return Unknown("find_spec of an unknown module")
        name = re.sub(r"[-_.]+", "-", module_name.value.split(".")[0]).lower()
        if name in (self.bindings.get(ABSENT_KEY) or ()):
            self.platform_calls += 1
            return Const(None)
        if name in (self.bindings.get(PACKAGES_KEY) or ()):
            self.platform_calls += 1
            return Obj(cls="importlib.machinery.ModuleSpec", nonnull=True,
                       origin=f"find_spec({module_name.value!r}): installed under the runtime profile")
        if PACKAGES_KEY not in self.bindings:
            return Unknown(f"find_spec({module_name.value!r}): no runtime profile (no GPU named)")
        return Unknown(f"find_spec({module_name.value!r}): not among the runtime profile's packages")

    def import_probe(self, module, const, evaluate) -> Const | None:
        """The value of a module constant bound more than once at import time, when it is a probe
        the profile decides: its first binding is unconditional and decided (through the profile's
        answers) to True or False, and every later binding sits under `if NAME:` at module level
        (a path only a found package reaches: its own checks turning the probe off). False is
        then exact (those paths do not run); for True the profile assumes the official
        container's packages work on its GPU, so they do not run either.
        None when the constant is not such a probe (its value stays unknown)."""
        if PACKAGES_KEY not in self.bindings or const.expr is None:
            return None
        before = self.platform_calls
        value = evaluate(module, const.expr)
        if not (isinstance(value, Const) and isinstance(value.value, bool)) or self.platform_calls == before:
            return None
        if not probe_rebinds_guarded(self.index, module.path, const.name, const.start_line):
            return None
        self.probes[const.name] = (module.path, const.start_line, const.end_line)
        return value

    # -- platform and device -------------------------------------------------------------------
    def platform_method(self, name: str) -> tuple[str, str] | None:
        """(method qualname, class) of `current_platform.<name>` on the profile's platform: the
        method its class (or a base) defines, when none of the platform's variants overrides
        it (which one runs is then the same); None when the platform is open or it is not so.
        Counted as a platform answer."""
        classes = PLATFORM_CLASSES.get(self.platform or "")
        if classes is None:
            return None
        base, variants = classes
        info = self.index._class_info_abs(base)
        method = info.methods.get(name) if info is not None else None
        if method is None:
            return None
        for variant in variants:  # (a class's methods include those it inherits)
            other = self.index._class_info_abs(variant)
            if other is None or name not in other.methods or other.methods[name].qualname != method.qualname:
                return None
        self.platform_calls += 1
        return method.qualname, base

    def platform_constant(self, name: str):
        """`current_platform.<name>` for a class-level literal of the profile's platform class
        (`device_type = "cuda"`) that each of its variants keeps and nothing rebinds: no store
        through a platform object anywhere (`current_platform.x = ...`), none through `self` or
        `cls` in the platforms' own package, no `setattr(..., "x", ...)` anywhere. That value, as
        a Const; None when the platform is open or it is not so. Counted as a platform answer."""
        classes = PLATFORM_CLASSES.get(self.platform or "")
        if classes is None:
            return None
        base, variants = classes
        values = []
        for qualname in (base, *variants):
            info = self.index._class_info_abs(qualname)
            if info is None or name not in info.constants or name in info.methods:
                return None
            values.append(info.constants[name])
        if any(v != values[0] or type(v) is not type(values[0]) for v in values):
            return None
        store = rf"\.{re.escape(name)}\s*(:[^=\n]*)?(=[^=]|[-+*/|&]=)"
        base_path = self.index.module_path(base.rsplit(".", 1)[0]) or ""
        if self.index.grep_re(rf"platform\w*\)?{store}", literal=name) \
                or self.index.grep_re(store, prefix=base_path.rsplit("/", 1)[0], literal=name) \
                or self.index.grep_re(rf"setattr\([^)\n]*[\"']{re.escape(name)}[\"']", literal=name):
            return None
        self.platform_calls += 1
        return Const(values[0])

    def platform_call(self, method: str):
        """`current_platform.is_cuda()` and the like, from the recipe's GPU vendor."""
        platform = self.bindings.get(PLATFORM_KEY)
        if platform is None:
            return Unknown(f"{method}(): the recipe names no GPU vendor")
        self.platform_calls += 1
        return Const(platform in PLATFORM_PREDICATES[method])

    def capability_call(self, method: str, args, force):
        """A device-capability question (`has_device_capability(90)`...) from the recipe's
        compute capability; `force` gives the value of the asked capability."""
        if method in DEVICE_ANSWERS:  # the device's name, memory and count, as the recipe's [hardware] gives them
            key = DEVICE_ANSWERS[method]
            if key not in self.bindings:
                return Unknown(f"{key} not set by the recipe")
            value = self.bindings[key]
            return Const(int(value * GIB) if key == MEMORY_KEY else value)
        capability = self.bindings.get(CAPABILITY_KEY)
        if capability is None:
            return Unknown(f"{CAPABILITY_KEY} not set by the recipe")
        capability = tuple(capability)
        if method == "get_device_capability":
            return Const(capability)
        if not args:
            return Unknown(method)
        wanted = force(args[0])
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

    @staticmethod
    def device_capability(qualname: str, args, force):
        """`DeviceCapability(major, minor)` with constant arguments, as the (major, minor) tuple."""
        if qualname.rsplit(".", 1)[-1] != "DeviceCapability":
            return None
        values = [force(a) for a in args]
        if len(values) >= 2 and all(isinstance(v, Const) and isinstance(v.value, int) for v in values[:2]):
            return Const((values[0].value, values[1].value))
        return None


def probe_rebinds_guarded(index, path: str, name: str, first_line: int) -> bool:
    """Whether every module-level binding of `name` after the one at `first_line` lies inside a
    top-level `if name:` (or `if name and ...:`) block of the module at `path`."""
    import ast

    def compute():
        try:
            tree = ast.parse(index._raw_text(path))
        except (SyntaxError, ValueError):
            return False
        first = next((stmt for stmt in tree.body if stmt.lineno == first_line), None)
        targets = first.targets if isinstance(first, ast.Assign) else \
            [first.target] if isinstance(first, ast.AnnAssign) else []
        if not any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return False  # the first binding is not a plain module-level assignment
        for stmt in tree.body:
            if stmt.lineno <= first_line:
                continue  # the first binding itself (the constant's own site)
            if isinstance(stmt, ast.If) and _tests_name(stmt.test, name):
                continue  # its body runs only when the probe found the package
            for node in ast.walk(stmt):
                targets = node.targets if isinstance(node, ast.Assign) else \
                    [node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else []
                if any(isinstance(t, ast.Name) and t.id == name for t in targets) \
                        and getattr(node, "lineno", 0) > first_line:
                    return False
        return True

    return _memo(index, f"probe:{path}:{name}", compute)


def _tests_name(test, name: str) -> bool:
    import ast

    if isinstance(test, ast.Name):
        return test.id == name
    return isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) and any(
        isinstance(v, ast.Name) and v.id == name for v in test.values)


def _identifiers(text: str) -> list[str]:
    import re

    return re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)


# ---------------------------------------------------------------------------------------------
# EngineArgs -> VllmConfig


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
    """Engine key -> its VllmConfig path at this revision (empty when the builder is absent): a
    fact of the tree, computed once per Index (the checks ask it for every setting of every recipe)."""
    from srcreview.index.cache import reuse_enabled

    return _memo(index, "key_paths", lambda: _key_paths(index)) if reuse_enabled() else _key_paths(index)


def _key_paths(index) -> dict[str, KeyPath]:
    from srcreview.core.errors import DataError

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
    config_of = _root_locals(body)
    derived: dict[str, tuple[str | None, object]] = {}  # local -> (engine key, the call that normalises it)
    built: list[tuple[str, str, object, int]] = []  # (config local, field, value expr, line)
    for stmt in iter_statements(body):
        if not isinstance(stmt, ir.Assign) or len(stmt.targets) != 1 or stmt.value is None:
            continue
        target, value = stmt.targets[0], stmt.value
        if isinstance(target, ir.Name) and isinstance(value, ir.Call):
            if target.id in config_of:
                built += [(target.id, kw.name, kw.value, line)
                          for kw, line in _built_with(index, info, value, stmt.line) if kw.name]
            elif value.args and _self_attr(value.args[0]):
                derived[target.id] = (_self_attr(value.args[0]), value)
        elif isinstance(target, ir.Attr) and isinstance(target.value, ir.Name) and target.value.id in config_of:
            built.append((target.value.id, target.attr, value, stmt.line))
    nested = []  # `OffloadConfig(prefetch=PrefetchOffloadConfig(group_size=self.group_size))`
    for local, field, value, line in built:
        nested += [(f"{config_of[local]}.{field}", kw.name, kw.value, line) for kw in _nested_keywords(value)]
    while nested:
        prefix, field, value, line = nested.pop(0)
        config_of.setdefault(prefix, prefix)
        built.append((prefix, field, value, line))
        nested += [(f"{prefix}.{field}", kw.name, kw.value, line) for kw in _nested_keywords(value)]
    out: dict[str, KeyPath] = {}
    for local, field, value, line in built:
        path = f"{config_of[local]}.{field}"
        value = _uncast(info, value)
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


def _nested_keywords(value) -> list:
    """The keywords of a config built inline as another config's keyword (`prefetch=PrefetchOffloadConfig(...)`)."""
    if isinstance(value, ir.Call) and (dotted(value.func) or "").split(".")[-1].endswith("Config") \
            and not value.args:
        return [kw for kw in value.keywords if kw.name]
    return []


def _uncast(info, value):
    """`typing.cast(T, x)` is `x`: the engine passes the value itself."""
    if isinstance(value, ir.Call) and len(value.args) == 2 and not value.keywords:
        name = dotted(value.func) or ""
        head, _, rest = name.partition(".")
        target = info.module.import_map(info.facts.qualname).get(head)
        if target is not None and (f"{target}.{rest}" if rest else target) in ("typing.cast", "typing_extensions.cast"):
            return value.args[1]
    return value


def _root_locals(body) -> dict[str, str]:
    """Local name -> the VllmConfig field the builder passes it as (`VllmConfig(kernel_config=kernel_config)`)."""
    config_of: dict[str, str] = {}
    for call in iter_calls(body):
        if (dotted(call.func) or "").split(".")[-1] == ROOT_CONFIG:
            for kw in call.keywords:
                if kw.name and isinstance(kw.value, ir.Name):
                    config_of[kw.value.id] = kw.name
    return config_of


def builder_locals(index, qualname: str) -> dict[str, str]:
    """For the engine's config builder (EngineArgs.create_engine_config), the locals it passes to
    VllmConfig and the field each becomes; empty for any other function."""
    if not qualname.endswith(f"{ENGINE_CLASS}.{BUILDER}"):
        return {}
    info = index.function(qualname)
    return _memo(index, f"builder_locals:{qualname}", lambda: _root_locals(info.facts.body)) if info else {}


def _built_with(index, info, call, line: int) -> list:
    """The keywords a config is built with, each with its line: the call's own, or for
    `self.create_x_config()` (an EngineArgs method taking no arguments) those of the
    `Config(...)` it returns on every path."""
    if call.keywords or call.args or not isinstance(call.func, ir.Attr) or _self_attr(call.func) is None:
        return [(kw, line) for kw in call.keywords]
    owner = info.qualname.rsplit(".", 1)[0]
    method = index.function(f"{owner}.{call.func.attr}")
    if method is None:
        return []
    returns = [s for s in iter_statements(method.facts.body) if isinstance(s, ir.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, ir.Call):
        return []
    return [(kw, returns[0].line) for kw in returns[0].value.keywords]


def config_bindings(index, bindings: dict, gpu: str | None = None) -> dict:
    """`bindings` plus each top-level engine key at its VllmConfig path (see the module doc), and
    `hardware.platform` from the recipe's GPU. Keys already bound are kept."""
    from srcreview.interp.values import EnumMember

    out = dict(bindings)
    if PLATFORM_KEY not in out and platform_of(gpu):
        out[PLATFORM_KEY] = platform_of(gpu)
    paths = key_paths(index)
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
UNDECIDED = _UNDECIDED  # a default that is not static: the field stays unbound


def engine_paths(index) -> dict[str, KeyPath]:
    """Config path -> the engine key create_engine_config puts there (key_paths reversed)."""
    return _memo(index, "engine_paths", lambda: {kp.path: kp for kp in key_paths(index).values()})


def constructed_fields(index) -> frozenset:
    """(config class short name, field) passed by keyword to `SomethingConfig(...)` in the
    methods of EngineArgs, and ("*", key) for keys it merges into a dict of keyword arguments:
    the fields the engine sets while it builds its config."""
    def compute():
        from srcreview.core.errors import DataError

        try:
            engine = index.class_info(ENGINE_CLASS)
        except DataError:
            return frozenset()
        out: set[tuple[str, str]] = set()
        for method in (engine.methods.values() if engine is not None else ()):
            fn = index.function(method.qualname)
            if fn is None:
                continue
            for call in iter_calls(fn.facts.body):
                name = (dotted(call.func) or "").split(".")[-1]
                if name.endswith("Config"):
                    out.update((name, k.name) for k in call.keywords if k.name)
            for call in iter_calls(fn.facts.body):
                # keys merged into a dict of keyword arguments: `cfg.update({"target_model_config": x})`
                if isinstance(call.func, ir.Attr) and call.func.attr == "update" and call.args \
                        and isinstance(call.args[0], ir.Dict):
                    out.update(("*", k.value) for k in call.args[0].keys
                               if isinstance(k, ir.Constant) and isinstance(k.value, str))
            for stmt in iter_statements(fn.facts.body):
                # `cfg["key"] = x`
                if isinstance(stmt, ir.Assign):
                    for target in stmt.targets:
                        if isinstance(target, ir.Subscript) and len(target.index) == 1 \
                                and isinstance(target.index[0], ir.Constant) and isinstance(target.index[0].value, str):
                            out.add(("*", target.index[0].value))
        return frozenset(out)

    return _memo(index, "constructed_fields", compute)


def self_written(index, cls: str) -> frozenset:
    """The attributes a class (or a base in the tree) assigns on `self` in its methods."""
    def compute():
        info = index._class_info_abs(cls)
        out: set[str] = set()
        for qual in (info.linearization if info is not None else ()):
            symbol = index._class_symbol(qual)
            if symbol is None:
                continue
            facts = index.module(symbol.module).classes[symbol.local]
            out.update(a.attr for a in facts.instance_attrs)
        return frozenset(out)

    return _memo(index, f"self_written:{cls}", compute)


def static_default(index, info, f):
    """A field's declared default when the source fixes it: a literal, `Field(default=x)` /
    `field(default=x)`, or another class's field (`CacheConfig.cache_dtype`); else UNDECIDED.
    A `default_factory` is not a static value (the caller types the field as its class)."""
    from srcreview.index.facts import UNKNOWN

    if f.value is not UNKNOWN:
        return f.value
    expr = f.default_expr
    if expr is None:
        return _UNDECIDED
    callee = (dotted(expr.func) or "").split(".")[-1] if isinstance(expr, ir.Call) else None
    if callee in ("Field", "field"):
        given = expr.keyword("default")
        if isinstance(given, ir.Constant):
            return given.value
        factory = dotted(expr.keyword("default_factory")) if expr.keyword("default_factory") is not None else None
        if factory in EMPTY_FACTORIES:
            return EMPTY_FACTORIES[factory]()
        return _UNDECIDED
    other_field = None
    if callee == FIELD_COPY and len(expr.args) == 2 and isinstance(expr.args[0], ir.Name) \
            and isinstance(expr.args[1], ir.Constant) and isinstance(expr.args[1].value, str):
        other_field = (expr.args[0].id, expr.args[1].value)  # get_field(ModelConfig, "hf_overrides")
    elif isinstance(expr, ir.Attr) and isinstance(expr.value, ir.Name):
        other_field = (expr.value.id, expr.attr)  # CacheConfig.cache_dtype
    if other_field is not None:
        module = _owner_module_name(index, info, f.owner)
        symbol = index.resolve_name(module, other_field[0]) if module else None
        other = index.class_info(symbol.qualname) if symbol is not None and symbol.kind == "class" else None
        field = other.field(other_field[1]) if other is not None else None
        if field is not None and field is not f:
            return static_default(index, other, field)
    return _UNDECIDED


def factory_class(f) -> str | None:
    """`field(default_factory=CacheConfig)`: the dotted name of the class built by default."""
    expr = f.default_expr
    if isinstance(expr, ir.Call) and (dotted(expr.func) or "").split(".")[-1] in ("Field", "field"):
        factory = expr.keyword("default_factory")
        return dotted(factory) if factory is not None else None
    return None


def _owner_module_name(index, info, owner_local: str) -> str | None:
    for qual in info.linearization:
        symbol = index._class_symbol(qual)
        if symbol is not None and symbol.local == owner_local:
            return symbol.module
    return info.symbol.module


def _through(index, function: str, value):
    """What `function(value, ...)` returns, when the safe evaluator decides it."""
    from srcreview.interp.queries import evaluate_function

    info = index.function(function)
    params = [p for p in info.facts.params if p.kind == "positional"] if info is not None else []
    if info is not None and info.facts.owner and not info.facts.is_staticmethod and params:
        params = params[1:]
    if not params:
        return _UNDECIDED
    try:
        outcome = evaluate_function(index, function, {}, args={params[0].name: value})
    except RecursionError:
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


def builder_tracked_fields(index, qualname: str) -> frozenset:
    """The EngineArgs fields the walk of the engine's builder (`qualname`, create_engine_config)
    can follow store by store: `self.<field>` holds, at the builder's entry, the recipe's value or
    its declared default (nothing else has run on it), and only the builder's own statements and
    the methods it calls on `self` (`self.create_speculative_config(...)`, run at their call
    sites: BuilderFlow) may store it while the builder runs. So a read of it in the builder is the
    last store the walk has seen on that path (`self.data_parallel_size_local` is still None where
    the builder derives the local size, though the builder assigns it under `nnodes > 1`).

    A field any other method of EngineArgs (or of a subclass in its module: `vllm serve` builds
    AsyncEngineArgs) stores, in any way, is not tracked: `__post_init__` ran before, and so may
    any method the builder does not reach. Nothing is tracked when `self` leaves the builder or
    another method as a value (passed to a call, aliased, `setattr(self, ...)`): whatever
    receives it may store any field. Empty for any other function."""
    flow = builder_flow(index, qualname)
    return flow.tracked if flow is not None else frozenset()


@dataclass(frozen=True)
class BuilderFlow:
    """How the engine's builder reaches its own instance: the fields it tracks store by store
    (builder_tracked_fields) and, for each method name it (or a method it reaches) calls on
    `self`, the fields that call may store, itself or through the methods it calls on `self`."""

    builder: str
    tracked: frozenset
    stores: dict  # method name -> frozenset of fields
    post_init: str = ""  # the `__post_init__` that ran on the instance before the builder ("" : none followed)
    init_stores: frozenset = frozenset()  # the tracked fields it (or what it calls on `self`) may store


def entry_arguments(index, qualname: str) -> dict:
    """What `vllm serve` passes the engine's builder beyond the recipe: its usage context,
    `UsageContext.OPENAI_API_SERVER` (a recipe is a serve command; the engine's batch defaults
    are picked by it), where the release's enum has that member. Nothing for other functions."""
    if not qualname.endswith(f"{ENGINE_CLASS}.{BUILDER}"):
        return {}

    def compute() -> dict:
        members = index.enum_members(SERVE_USAGE_CONTEXT[0])
        if not members or not any(name == SERVE_USAGE_CONTEXT[1] for name, _ in members):
            return {}
        return {USAGE_CONTEXT_PARAM: Const(EnumMember(*SERVE_USAGE_CONTEXT))}

    return _memo(index, "entry_arguments", compute)


def builder_flow(index, qualname: str) -> BuilderFlow | None:
    if not qualname.endswith(f"{ENGINE_CLASS}.{BUILDER}"):
        return None
    return _memo(index, f"builder_flow:{qualname}", lambda: _builder_flow(index, qualname))


def _builder_flow(index, qualname: str) -> BuilderFlow | None:
    from srcreview.core.errors import DataError

    builder = index.function(qualname)
    try:
        engine = index.class_info(ENGINE_CLASS)
    except DataError:
        return None
    if builder is None or engine is None or engine.symbol.qualname != qualname.rsplit(".", 1)[0]:
        return None
    methods: list[str] = []
    classes = [engine]
    module = index.module(engine.symbol.module)
    for local, facts in module.classes.items():  # its subclasses in its module (AsyncEngineArgs)
        if any(base.split(".")[-1] == ENGINE_CLASS for base in facts.bases):
            info = index._class_info_abs(f"{engine.symbol.module}.{local}")
            if info is not None:
                classes.append(info)
    for info in classes:
        for qual in info.linearization:
            symbol = index._class_symbol(qual)
            if symbol is None:
                continue
            methods += [m.qualname for m in index._class_info_abs(symbol.qualname).methods.values()]
    methods = list(dict.fromkeys(methods))
    by_name: dict[str, list[str]] = {}
    for name in methods:
        by_name.setdefault(name.rsplit(".", 1)[-1], []).append(name)
    # each function's own stores on its instance, and the method names it calls on it
    own: dict[str, set[str]] = {}
    calls: dict[str, set[str]] = {}
    pending: list[tuple[str, str | None, str]] = [(m, None, m) for m in methods]  # (function, receiver, method)
    seen: set[str] = set()
    while pending:
        name, receiver, method = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        fn = index.function(name)
        if fn is None:
            continue
        if receiver is None:  # a method: its first parameter is the instance
            if fn.facts.is_staticmethod or fn.facts.is_classmethod or not fn.facts.params:
                continue
            receiver = fn.facts.params[0].name
        stores, escapes, nested = _self_stores(fn.facts.body, receiver)
        if escapes:
            return BuilderFlow(qualname, frozenset(), {})
        own.setdefault(method, set()).update(stores)
        calls.setdefault(method, set()).update(_self_calls(fn.facts.body, receiver))
        pending += [(n, receiver, method) for n in nested]  # a nested function sees the instance from its parent
    if any(n != qualname and n.startswith(qualname + ".") for n in seen):
        # a function nested in the builder may store on `self` out of order
        return BuilderFlow(qualname, frozenset(), {})

    def reach(start: list[str]) -> set[str]:
        out: set[str] = set()
        todo = list(start)
        while todo:
            method = todo.pop()
            if method in out:
                continue
            out.add(method)
            todo += [q for called in calls.get(method, ()) for q in by_name.get(called, ())]
        return out

    if any(_method_refs(fn, by_name) for fn in (index.function(m) for m in methods) if fn is not None):
        return BuilderFlow(qualname, frozenset(), {})  # `f = self.method`: it may run where no call of it is seen
    during = reach([qualname]) - {qualname}  # run by the builder, at its calls on `self`
    # the instance's own `__post_init__`, when no subclass in the module has another: walked first
    inits = [m for m in by_name.get("__post_init__", ()) if m.rsplit(".", 2)[-2] == engine.symbol.local]
    post_init = inits[0] if len(inits) == 1 and len(by_name.get("__post_init__", ())) == 1 else ""
    at_init = reach([post_init]) if post_init else set()
    before = reach([m for m in methods if m != qualname and m not in during | at_init])  # may run before it
    stored_before = {f for m in before for f in own.get(m, ())}
    tracked = frozenset(f for f in own.get(qualname, set()) | {f.name for f in engine.facts.fields}
                        if f not in stored_before)
    stores = {called: frozenset(f for q in reach(by_name.get(called, [])) for f in own.get(q, ()))
              for called in sorted({c for m in reach([qualname]) | at_init for c in calls.get(m, ())})}
    init_stores = frozenset(f for m in at_init for f in own.get(m, ()) if f in tracked)
    return BuilderFlow(qualname, tracked, stores, post_init, init_stores)


def _method_refs(fn, by_name: dict) -> bool:
    """Whether a method's body reads one of the instance's methods other than to call it
    (`f = self.method`, `callback=self.method`)."""
    if fn.facts.is_staticmethod or fn.facts.is_classmethod or not fn.facts.params:
        return False
    receiver = fn.facts.params[0].name
    called = {id(c.func) for stmt in fn.facts.body for c in ir.iter_calls(stmt)}
    return any(isinstance(e, ir.Attr) and isinstance(e.value, ir.Name) and e.value.id == receiver
               and e.attr in by_name and id(e) not in called
               for stmt in fn.facts.body for e in ir.iter_exprs(stmt))


def _self_calls(body, receiver: str) -> set[str]:
    """The method names a body calls on `receiver` (`self.create_speculative_config(...)`)."""
    return {c.func.attr for stmt in body for c in ir.iter_calls(stmt)
            if isinstance(c.func, ir.Attr) and isinstance(c.func.value, ir.Name) and c.func.value.id == receiver}


def _self_stores(body, receiver: str | None) -> tuple[set[str], bool, list[str]]:
    """(fields stored on `receiver` in a body, whether `receiver` is used other than as the object
    of an attribute, nested functions' qualnames). A store is any assignment target
    `receiver.x` (plain, augmented, unpacked, a loop's or a comprehension's) or `del receiver.x`."""
    stores: set[str] = set()
    nested: list[str] = []
    if receiver is None:
        return stores, False, nested

    def targets(t):
        if isinstance(t, ir.Attr) and isinstance(t.value, ir.Name) and t.value.id == receiver:
            stores.add(t.attr)
        elif isinstance(t, (ir.Seq, ir.Starred)):
            for child in ir.children(t):
                targets(child)

    for stmt in iter_statements(body):
        if isinstance(stmt, ir.Assign):
            for t in stmt.targets:
                targets(t)
        elif isinstance(stmt, ir.AugAssign):
            targets(stmt.target)
        elif isinstance(stmt, ir.For):
            targets(stmt.target)
        elif isinstance(stmt, ir.OtherStmt):
            for e in stmt.exprs:
                targets(e)
        elif isinstance(stmt, ir.With):
            for item in stmt.items:
                if item.target is not None:
                    targets(item.target)
        elif isinstance(stmt, ir.Def):
            nested.append(stmt.qualname)
    escapes = False
    stack: list = list(body)
    while stack:
        node = stack.pop()
        kids = ir.children(node)
        if isinstance(node, ir.Generator):  # `[... for self.x in xs]`
            targets(node.target)
        if not isinstance(node, ir.Attr):
            escapes = escapes or any(isinstance(k, ir.Name) and k.id == receiver for k in kids)
        stack.extend(kids)
    return stores, escapes, nested
