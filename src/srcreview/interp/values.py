"""The abstract value lattice: what an expression may be, never computed by eval.

Values live apart from the interpreter that produces them (pytype's `abstract/` beside its
`vm.py`): the joins below (`union`, `merge_envs`) and the element views of constant tables
(`element_of`, `item_of`) need no walk, no index and no recipe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from dataclasses import replace as replace_dc
from typing import Any

from srcreview.hfconfig.facts import MODEL_CONFIG_UNKNOWN


@dataclass(frozen=True)
class Const:
    """A value known exactly (strings, numbers, None, tuples, enum members, capabilities).

    `origin` is the config path the value was read from (("cache_config", "cache_dtype")),
    when it was: where a value comes from is what a draft-config question asks, so two equal
    values from different fields stay apart."""

    value: Any  # the Python constant itself, of any type
    origin: tuple[str, ...] | None = None


@dataclass(frozen=True)
class EnumMember:
    """`AttentionBackendEnum.TRITON_ATTN`: equal to itself and to its name (vLLM parses backends by name)."""

    enum: str
    name: str

    def matches(self, other) -> bool | None:
        if isinstance(other, EnumMember):
            return self.enum.split(".")[-1] == other.enum.split(".")[-1] and self.name == other.name
        if isinstance(other, str):
            return self.name == other or self.name == other.upper()
        if other is None:
            return False
        return None


@dataclass(frozen=True)
class Obj:
    """An instance: its class when known (absolute or as-written dotted name), and its config path.

    `path` is the dotted position under VllmConfig (("speculative_config", "method")) when the
    object was reached from a config root; bindings are looked up by it. `owner`/`attr` say
    which class attribute it was read from, so a call on it resolves to that method.
    """

    cls: str | tuple | None = None  # or ("returns", dotted) / ("attr", cls, name): known only as what made it
    path: tuple[str, ...] | None = None
    nonnull: bool = False
    alias: bool = False
    owner: str | None = None
    attr: str | None = None
    receiver: Obj | None = field(default=None, compare=False, hash=False)
    origin: str = ""


@dataclass(frozen=True)
class Derived(Obj):
    """An instance some of whose attributes are known: one built by `Cls(field=...)` (with its
    keywords), the result of `replace(base, **fields)` (pytype's dataclass overlay), or an
    object a query binds attributes of (a runner with its drafter). Attributes not in `overrides`
    are read from the object it was derived from; `reinit` says why they may not be (its class's
    post-init hooks ran again on the copy)."""

    overrides: tuple = ()  # ((name, value), ...)
    reinit: str = ""
    opaque: bool = False  # built with arguments the analysis does not see: unlisted fields are not their defaults
    initialized: tuple[str, ...] = ()  # overrides the class's `__init__` stored from the arguments (init_stores)
    # the config path of the object the engine's builder built this as (`model_config`): once its
    # class's hooks have run, what they left is read there (Resolver.obj_attr)
    home: tuple[str, ...] | None = None

    def with_field(self, name: str, value) -> Derived:
        return replace_dc(self, overrides=tuple((k, v) for k, v in self.overrides if k != name) + ((name, value),))

    def override(self, name: str):
        return next((v for k, v in self.overrides if k == name), None)


@dataclass(frozen=True, repr=False)
class ModuleInstance(Derived):
    """The instance a module builds at import and binds to a name (`ModelRegistry`), taken as
    that one object: shown, and told apart in the walks' caches, by that name alone (its fields
    hold hundreds of entries; spelling them out for every cache key cost more than the walk)."""

    bound_to: str = ""  # "module.NAME"
    # what its fields hold, as a digest computed once per object (a copy with other fields
    # computes its own: `replace` does not carry it over)
    digest: str = field(default="", init=False, compare=False)

    def __post_init__(self) -> None:
        import hashlib
        from dataclasses import fields

        text = repr(tuple(getattr(self, f.name) for f in fields(self) if f.name != "digest"))
        object.__setattr__(self, "digest", hashlib.sha256(text.encode()).hexdigest()[:16])

    def __repr__(self) -> str:
        return f"ModuleInstance({self.bound_to}, {self.digest})"


@dataclass(frozen=True)
class HfConfig(Derived):
    """A model's Hugging Face config as vLLM's `get_config` hands it over: the keys its
    config.json states (nested objects as HfConfig too), as attributes.

    A key config.json does not state may still be set by the config class transformers or vLLM
    builds from it, so reading one is Unknown, never the default of a `getattr`: `source` says
    where the stated keys come from (the model reference, or the recipe line)."""

    source: str = ""
    ref: str = ""  # the model reference whose config this is
    prefix: str = ""  # the dotted key of this (nested) config inside config.json: "text_config."
    # what the config class of its model_type does with it (srcreview.hfconfig.config_classes),
    # at the runtime profile's transformers version; None: not known (`hint` says why)
    classes: Any = field(default=None, compare=False, hash=False)
    hint: str = field(default="", compare=False, hash=False)
    # names the vLLM code that builds the config may store on it, beyond config.json: name -> why
    loader: Any = field(default=None, compare=False, hash=False)
    absent: frozenset = field(default=frozenset(), compare=False, hash=False)  # model files known not there

    def _decision(self, name: str):
        from srcreview.hfconfig.config_classes import decide, decide_stated

        keys = frozenset(k for k, _ in self.overrides)
        known = self.override(name)
        if known is not None:
            if isinstance(known, Const):
                return decide_stated(self.classes, name, known.value, keys)
            if isinstance(known, HfConfig):  # a JSON object: the sub-config built from it keeps its keys
                return decide_stated(self.classes, name, None, keys, nested=True)
            return decide(self.classes, name, True, keys)
        if self.loader and name in self.loader:
            why = self.loader[name]
            if not isinstance(why, tuple):
                return "open", None, why
            if why[0] == "file":  # stored only when config.json states it (it does not) or a file is there
                if not set(why[1] if isinstance(why[1], tuple) else (why[1],)) <= self.absent:
                    return "open", None, why[2]
            elif self.has(why[0]) is not False:  # copied from another name only when that one exists
                return "open", None, why[1]
        return decide(self.classes, name, False, keys)

    def attribute(self, name: str):
        known = self.override(name)
        if self.classes is None:
            if known is not None:
                return known
            return Unknown(f"{MODEL_CONFIG_UNKNOWN}: {name} is not stated in {self.source}; the config class may "
                           f"set it{self.hint}")
        kind, value, why = self._decision(name)
        if kind == "value":
            return known if known is not None else Const(value)
        if kind == "absent":
            return Unknown(f"{MODEL_CONFIG_UNKNOWN}: {name} does not exist on the config ({why}): reading it raises")
        stated = "stated" if known is not None else "not stated"
        return Unknown(f"{MODEL_CONFIG_UNKNOWN}: {name} ({stated} in {self.source}) stays open: {why}")

    def has(self, name: str) -> bool | None:
        """`hasattr(config, name)`: True for a stated key or a decided default, False for a name
        the config class never has, None when open."""
        if self.classes is None:
            return True if self.override(name) is not None else None
        kind, _, _ = self._decision(name)
        return True if kind == "value" else False if kind == "absent" else None

    def method(self, name: str, args: tuple, kwargs: tuple):
        """`config.get_text_config(...)` decided from its source at the profile's version: the
        config itself when none of the names it looks for exists (and, asked for one end, the
        config is no encoder-decoder); None when not decided."""
        from srcreview.hfconfig.config_classes import TEXT_CONFIG

        facts = self.classes
        if facts is None or name != TEXT_CONFIG or facts.text_config_names is None or args:
            return None
        given = dict(kwargs)
        if any(k not in ("decoder", "encoder") or not isinstance(v, Const) for k, v in given.items()):
            return None
        both = (given["decoder"].value if "decoder" in given else None) == \
            (given["encoder"].value if "encoder" in given else None)
        if any(self.has(n) is not False for n in facts.text_config_names):
            return None
        if not both:
            flag = self.attribute("is_encoder_decoder")
            if not (isinstance(flag, Const) and flag.value is False):
                return None
        return self


@dataclass(frozen=True)
class DictVal:
    """A dict whose keys are constants but some values are not (`{"kernel_config": {...},
    "fuse_norm_quant": enable_norm_fusion}`): its items, in order, values abstract."""

    items: tuple  # ((plain key or EnumMember, value), ...)


DICT_VIEWS = ("items", "keys", "values")  # `table.items()`: a BoundBuiltin view, iterated item by item


@dataclass(frozen=True)
class ClassRef:
    qualname: str


@dataclass(frozen=True)
class FuncRef:
    qualname: str
    bound: Obj | ClassRef | None = field(default=None, compare=False, hash=False)
    via: str = "call"
    # a nested function's free names: ((name, value), ...)
    closure: tuple = field(default=(), compare=False, hash=False)


@dataclass(frozen=True)
class Partial:
    """`functools.partial(func, *args, **kwargs)`: a call of `func` with these arguments first."""

    func: FuncRef
    args: tuple = ()
    kwargs: tuple = ()


@dataclass(frozen=True)
class Ref:
    """A name statically bound by an import to an in-tree dotted name, resolved (parsed) only when needed."""

    dotted: str


@dataclass(frozen=True)
class ModuleRef:
    name: str


@dataclass(frozen=True)
class External:
    """Something outside the tree (torch, os, typing...): its dotted name as imported."""

    name: str


@dataclass(frozen=True)
class Builtin:
    name: str


@dataclass(frozen=True)
class BoundBuiltin:
    """A method of a known value (`"x".startswith`, `capability.to_int`), computed for constants only."""

    name: str
    receiver: object


@dataclass(frozen=True)
class Super:
    cls: str  # the class whose method called super()
    self_obj: Obj | None = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class OneOf:
    """A loop variable drawn from a constant table: one of `values` (from `source`)."""

    values: tuple
    source: str


@dataclass(frozen=True)
class ListVal:
    """A local list being built: at least `min_len` items, maybe more; `items`, each as abstract
    as the walk has it, where they are all known (a display, `[MultipleOf(16)]`, appended to by
    name): dropped by any other change made through the name that holds it."""

    min_len: int = 0
    maybe_more: bool = False
    items: tuple | None = None


@dataclass(frozen=True)
class TupleVal:
    """A tuple some of whose items are not constants (`return model, tokenizer, config`): its
    items, each as abstract as the walk has it, so that unpacking or indexing it keeps them."""

    items: tuple


@dataclass(frozen=True)
class LocalPath:
    """A `pathlib.Path` inside a directory whose contents the review knows (srcreview.interp.paths):
    `spelling` is the directory as the program names it ("./model"), `rel` the path inside it
    ("" for the directory itself). `tree` is that directory's listing; None for a path that
    names no known place (the relative result of `relative_to`): only its text is known."""

    spelling: str
    rel: str | tuple[str, ...] = ""  # a tuple: one of these (`path / name` in a loop over names)
    tree: Any = field(default=None, compare=False, hash=False)


@dataclass(frozen=True)
class LazyCall:
    """The result of a call, computed only if a condition needs it."""

    target: object  # FuncRef | Ref | ClassRef
    args: tuple = ()
    kwargs: tuple = ()
    text: str = ""


@dataclass(frozen=True)
class Unknown:
    reason: str = "unknown"


@dataclass(frozen=True)
class Text(Unknown):
    """A str whose content is not known (an f-string of values the walk does not compute): it
    is never None and always a str; its truth (empty or not) is not known."""


@dataclass(frozen=True)
class Bounded(Unknown):
    """A number not known, but known to lie within bounds (either may be None: unbounded):
    `min(x, 0)` is at most 0 whatever x is, so `min(x, 0) >= 1` is false."""

    lo: float | None = None
    hi: float | None = None


def is_number(value) -> bool:
    """A constant int or float (a bool is not taken as a number here)."""
    return isinstance(value, Const) and type(value.value) in (int, float)


def bounds_of(value) -> tuple[float | None, float | None] | None:
    """(lo, hi) of a number, a Bounded, or a union of those (their hull); None for anything else."""
    if is_number(value):
        return value.value, value.value
    if isinstance(value, Bounded):
        return value.lo, value.hi
    if isinstance(value, Union):
        each = [bounds_of(o) for o in value.options]
        if not each or any(b is None for b in each):
            return None
        los = [b[0] for b in each if b is not None and b[0] is not None]
        his = [b[1] for b in each if b is not None and b[1] is not None]
        return (min(los) if len(los) == len(each) else None), (max(his) if len(his) == len(each) else None)
    return None


@dataclass(frozen=True)
class Lambda(Unknown):
    """A lambda: not known as a value (a function object), but a call of it with as many
    positional arguments as it has parameters is its body, evaluated in the frame that wrote it
    (its module, its names as they are when it is called: Python's late binding)."""

    at: str = ""  # where it was written, and which evaluation of it: a walk's cache key tells them apart
    expr: Any = field(default=None, compare=False, repr=False)  # the ir.Lambda
    frame: Any = field(default=None, compare=False, repr=False)  # the Frame it was written in


@dataclass(frozen=True)
class Unbound(Unknown):
    """What a name is after branches join when some of them never bound it (merge_envs): a
    field of `self` followed store by store reads, there, as if it had not been stored."""


@dataclass(frozen=True)
class Grown(Unknown):
    """A module container that code elsewhere only adds to (`TABLE[k] = v`, `.update(...)`,
    `.append(x)`; no pop, `del`, clear or `global` rebinding anywhere): unknown like any other
    value, except that each member of its literal is still in it (`"hf" in TABLE`)."""

    members: tuple = ()


@dataclass(frozen=True)
class Known(Unknown):
    """A value known only by its truth: `<unknown> and None` is falsy whichever the unknown is
    (it is the unknown when that is falsy, else None). Unknown for everything but a test."""

    truth: bool = False


@dataclass(frozen=True)
class Rewritable(Unknown):
    """A value read through a copy whose post-init hooks ran again: `base` unless a hook the
    analysis does not follow rewrites it (then some other value)."""

    base: object = None


@dataclass(frozen=True)
class Union:
    options: tuple


NONE = Const(None)


MAX_UNION = 6


# -- joins -------------------------------------------------------------------------------------


def union(values):
    """One value for several possible ones: the value itself when they agree, an Unknown when
    one is unknown or there are too many, else a Union."""
    options = []
    for v in values:
        for o in (v.options if isinstance(v, Union) else (v,)):
            if o not in options:
                options.append(o)
    if len(options) == 1:
        return options[0]
    if any(isinstance(o, Bounded) for o in options):
        hull = [b for b in (bounds_of(o) for o in options) if b is not None]
        if len(hull) == len(options):  # numbers and bounded numbers: the bounds of them all
            los = [b[0] for b in hull if b[0] is not None]
            his = [b[1] for b in hull if b[1] is not None]
            return Bounded("one of several numbers", min(los) if len(los) == len(hull) else None,
                           max(his) if len(his) == len(hull) else None)
        other = next((o for o in options if isinstance(o, Unknown) and not isinstance(o, Bounded)), None)
        return other if other is not None else Unknown("a value that differs between branches")
    if any(isinstance(o, Unknown) for o in options):
        return next(o for o in options if isinstance(o, Unknown))
    if len(options) > MAX_UNION:
        return Unknown("too many possible values")
    return Union(tuple(options))


def merge_envs(envs):
    """The local bindings after branches join: agreeing names keep their value, lists keep the
    smallest length they surely have, the rest become a union."""
    if len(envs) == 1:
        return envs[0]
    merged = {}
    keys = set().union(*envs)
    for key in keys:
        values = [env.get(key, Unknown(f"{key} unbound on some path")) for env in envs]
        if all(v == values[0] for v in values[1:]):
            merged[key] = values[0]
        elif all(isinstance(v, (ListVal, Const)) and (isinstance(v, ListVal) or isinstance(v.value, list))
                 for v in values):
            lens = [v.min_len if isinstance(v, ListVal) else len(v.value) for v in values]
            more = any(isinstance(v, ListVal) and v.maybe_more for v in values) or len(set(lens)) > 1
            merged[key] = ListVal(min(lens), more)
        else:
            merged[key] = union(values)
        if any(key not in env for env in envs) and isinstance(merged[key], Unknown):
            merged[key] = Unbound(merged[key].reason)
    return merged


# -- views of constant tables ----------------------------------------------------------------


def element_of(value, source: str):
    """A loop variable over a constant container: one of its items (sets in a stable order)."""
    if isinstance(value, Const):
        items = value.value
        if isinstance(items, dict):
            items = tuple(items)
        if isinstance(items, (tuple, list, frozenset, set)):
            items = tuple(sorted(items, key=repr)) if isinstance(items, (set, frozenset)) else tuple(items)
            return OneOf(items, source)
    return Unknown(f"element of {source}")


def item_of(value, i: int, n: int):
    """Item `i` of a value unpacked into `n` targets (a column of a table of tuples)."""
    if isinstance(value, Const) and isinstance(value.value, (tuple, list)) and len(value.value) == n:
        return Const(value.value[i])
    if isinstance(value, TupleVal) and len(value.items) == n:
        return value.items[i]
    if isinstance(value, Union) and all(isinstance(o, TupleVal) and len(o.items) == n or isinstance(o, Const)
                                        and isinstance(o.value, tuple) and len(o.value) == n
                                        for o in value.options):
        return union([item_of(o, i, n) for o in value.options])  # one tuple per path: item i of one of them
    if isinstance(value, OneOf):
        column = []
        for item in value.values:
            if isinstance(item, (tuple, list)) and len(item) == n:
                column.append(item[i])
            else:
                return Unknown(f"element of {value.source}")
        return OneOf(tuple(column), value.source)
    return Unknown("unpacked value")


# -- equality of constants -------------------------------------------------------------------


def iter_items(container) -> tuple:
    if isinstance(container, dict):
        return tuple(container)
    try:
        return tuple(container)
    except TypeError:
        return ()


def equal(a, b) -> bool | None:
    """`a == b` for constants, an enum member equal to its name; None when Python would raise."""
    if isinstance(a, EnumMember):
        return a.matches(b)
    if isinstance(b, EnumMember):
        return b.matches(a)
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return None
