"""The resolver, one behaviour per case: what a name or an attribute refers to (srcreview.interp.resolver).

Most cases are a function of one small module tree written here, asked through
`evaluate_function` for the constant it returns: the value is right only when the name or the
attribute on the way was resolved to its definition. The last ones ask the Resolver itself.
"""

from __future__ import annotations

import pytest
from recipe_support import module_index

from srcreview.interp import evaluate_function, trace
from srcreview.interp.interpreter import analyzer
from srcreview.interp.resolver import entry_function
from srcreview.interp.values import Builtin, Unknown

TREE = {
    "vllm/b.py": """
        LIMIT = 8
        NAME = "b"
    """,
    "vllm/pkg/c.py": """
        from ..b import LIMIT
        VALUE = LIMIT + 1
    """,
    "vllm/config/__init__.py": "from vllm.config.cache import CacheConfig as CacheConfig\n",
    "vllm/config/cache.py": "class CacheConfig:\n    pass\n",
    "vllm/tables.py": """
        from dataclasses import dataclass, field

        _TEXT = {"Llama": ("llama", "Llama"), "Qwen": ("qwen", "Qwen")}
        _POOL = {
            "Embed": ("bert", "Bert"),
            **{k: (mod, cls) for k, (mod, cls) in _TEXT.items() if cls == "Llama"},
        }
        _ALL = {**_TEXT, **_POOL, "Qwen": ("qwen2", "Qwen")}

        @dataclass(frozen=True)
        class Entry:
            module_name: str
            class_name: str

        @dataclass
        class Registry:
            models: dict = field(default_factory=dict)

        @dataclass
        class Later:
            a: int = 0
            b: int = field(default=1, init=False)
            c: int = 2

        class Llama:
            pass

        def merged_spread():
            return _ALL["Qwen"][0] + "/" + _POOL["Llama"][1]

        def comprehension_over_items():
            return len(_POOL)

        def dataclass_positional():
            registry = Registry({arch: Entry(mod, cls) for arch, (mod, cls) in _ALL.items()})
            return registry.models["Llama"].module_name

        @dataclass(init=False)
        class OwnInit:
            a: int = 0

        def dataclass_out_of_init():
            return Later(5, 6).c

        def dataclass_without_init():
            return OwnInit(5).a

        def class_name():
            return Llama.__name__

        def spread_of_unknown(x):
            return {**x, "k": 1}["k"]
    """,
    "vllm/a.py": """
        import vllm.b
        import vllm.b as bmod
        from vllm.b import LIMIT, NAME as B_NAME
        from vllm.pkg.c import VALUE
        from vllm.config import CacheConfig

        def imported():
            return LIMIT

        def imported_as():
            return B_NAME

        def module_alias():
            return bmod.LIMIT

        def dotted_module():
            return vllm.b.LIMIT

        def through_a_relative_import():
            return VALUE

        def imported_in_the_function():
            from vllm.b import NAME
            return NAME

        def local_aliases():
            x = LIMIT
            y = x
            return y * 2

        def pair():
            import os
            return os.cpu_count(), LIMIT

        def either(flag):
            import os
            if flag:
                return os.cpu_count(), LIMIT
            return os.getpid(), LIMIT

        def unpacked_item():
            count, limit = pair()
            return limit

        def indexed_item():
            return pair()[1] + len(pair())

        def item_of_either_return():
            _, limit = either(os_flag())
            return limit

        def os_flag():
            import os
            return os.cpu_count() > 8

        def takes_rest(first, **kwargs):
            kwargs["added"] = first
            return without_secret(kwargs)

        def without_secret(options):
            return {k: v for k, v in options.items() if k != "secret"}

        def rest_kept():
            return takes_rest(1, secret="s", kept=LIMIT)["kept"]

        def rest_dropped():
            return "secret" in takes_rest(1, secret="s", kept=LIMIT)

        def rest_added():
            return takes_rest(LIMIT, kept=2)["added"]

        def rest_forwarded(options):
            return takes_rest(1, **options)["kept"]

        import enum

        class Mode(enum.Enum):
            NONE = 0
            FULL = 1

            def __bool__(self):
                return self != Mode.NONE

        class Level(enum.IntEnum):
            OFF = 0
            ON = 1

        class Plain(enum.Enum):
            ZERO = 0

        def member_with_bool():
            return "full" if Mode.NONE else "none"

        class Opaque(enum.Enum):
            ONLY = 1

            def __bool__(self):
                import random
                return random.random() > 0.5

        def member_with_open_bool():
            return "true" if Opaque.ONLY else "false"

        class Graphs(enum.Enum):
            NONE = 0
            PIECE = 1
            FULL = 2
            BOTH = (FULL, PIECE)

            def parts(self):
                return self.value if isinstance(self.value, tuple) else (self.value,)

            def has_full(self):
                return Graphs(max(self.parts())) == Graphs.FULL

            def opaque(self):
                return len(self.name) > 2

            def __bool__(self):
                return self.opaque()

        def member_method():
            return Graphs.BOTH.has_full()

        def member_by_value():
            return Graphs(1).name

        def member_bool_walked():
            return "yes" if Graphs.NONE else "no"

        def int_member_off():
            return "on" if Level.OFF else "off"

        def int_members_ordered():
            return Level.ON > Level.OFF and Level.OFF < 1

        def plain_member():
            return "true" if Plain.ZERO else "false"

        def d0():
            return LIMIT

        def d1():
            return d0() + 0

        def d2():
            return d1() + 0

        def d3():
            return d2() + 0

        def d4():
            return d3() + 0

        def d5():
            return d4() + 0

        def d6():
            return d5() + 0

        NESTED = {"a": {"b": {"c": {"d": {"e": {"f": {"g": "leaf"}}}}}}}

        def deepest(table):
            for key, value in table.items():
                if isinstance(value, dict):
                    return deepest(value) + ""  # not a tail call: each level is a call of itself
                return d0() and value  # the leaf: one more call below seven levels of recursion

        def recursion_over_a_nested_table():
            return deepest(NESTED)

        def countdown(n):
            return countdown(n - 1) + 1 if n else 0  # not a tail call: each level is a call of itself

        def recursion_past_its_budget():
            return countdown(40)

        def asked_deep():
            return d3() + 0  # four calls below: within a fresh budget, not within what is left at depth 4

        def deep_then_shallow():
            ignored = d6() + 1  # d1 is reached at the depth limit here: its value is cut short
            return d1()

        def scaled():
            n = LIMIT
            n *= 2
            return n

        def extended():
            sizes = [i for i in [1, 2, 4] if i <= LIMIT]
            sizes += list(range(8, LIMIT + 1, 8))
            return sizes

        def put_in_order():
            sizes = [i for i in [4, 8, 2] if i <= LIMIT]
            sizes.sort()
            return sizes[-1]

        def grown():
            items = [LIMIT]
            items += [LIMIT]
            return len(items)

        def config_file_name():
            from transformers.utils import CONFIG_NAME
            return CONFIG_NAME

        def shard_matched():
            import fnmatch
            import os
            return fnmatch.fnmatch(os.path.basename("x/consolidated-1.safetensors"), "consolidated*.safetensors")

        class Base:
            K = "base"

            def kind(self):
                return "base-kind"

            def kind_of_base(self):
                return self.kind()

        class Child(Base):
            OWN = "child"

            def __init__(self):
                self.x = 5

            def kind(self):
                return super().kind()

            def set_in_init(self):
                return self.x

            def class_attribute(self):
                return Child.OWN

            def inherited_class_attribute(self):
                return Child.K

            def class_attribute_through_self(self):
                return self.OWN

            @property
            def size(self):
                return 7

            def through_a_property(self):
                return self.size

        class Holder:
            runner = Child

            def go(self):
                self.runner().kind()
    """,
}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return module_index(tmp_path_factory.mktemp("resolver"), TREE)


@pytest.mark.parametrize("function, value", [
    ("imported", 8),                          # from m import X
    ("imported_as", "b"),                     # from m import X as Y
    ("module_alias", 8),                      # import m as alias; alias.X
    ("dotted_module", 8),                     # import a.b; a.b.X
    ("through_a_relative_import", 9),         # from ..m import X in the module imported
    ("imported_in_the_function", "b"),        # an import inside the function
    ("local_aliases", 16),                    # x = X; y = x
    ("unpacked_item", 8),                     # a, b = f() where f returns (unknown, X): b is X
    ("indexed_item", 10),                     # f()[1] and len(f()) of such a tuple
    ("item_of_either_return", 8),             # two returns, both (unknown, X): b is X either way
    ("rest_kept", 8),                         # **kwargs holds the keywords no parameter takes
    ("rest_dropped", False),                  # {k: v for k, v in d.items() if ...} over a known dict
    ("rest_added", 8),                        # d[k] = v on it
    ("int_member_off", "off"),                # an IntEnum member is as true as its value
    ("int_members_ordered", True),            # ... and orders as its value
    ("member_method", True),                  # an enum's method with the member as self; a tuple of members' values
    ("member_by_value", "PIECE"),             # Enum(value): the member with it
    ("member_bool_walked", "yes"),            # its own __bool__, walked
    ("plain_member", "true"),                 # a plain Enum member is true, whatever its value
    ("deep_then_shallow", 8),                 # a value cut short by the depth limit is not kept for later
    ("recursion_over_a_nested_table", "leaf"),  # a function's calls of itself spend no depth (their own budget)
    ("scaled", 16),                           # n *= 2 of a number: a new number
    ("extended", [1, 2, 4, 8]),               # a list += the items of a sequence of constants
    ("put_in_order", 8),                      # xs.sort() of a list of constants: the same items in order
    ("config_file_name", "config.json"),      # transformers' CONFIG_NAME (srcreview.hfconfig.files)
    ("shard_matched", True),                  # fnmatch and os.path.basename over constants, as on Linux
    ("Child.kind", "base-kind"),              # super().method()
    ("Child.set_in_init", 5),                 # self.x assigned in __init__
    ("Child.class_attribute", "child"),       # Cls.ATTR
    ("Child.inherited_class_attribute", "base"),  # Cls.ATTR defined on a base class
    ("Child.through_a_property", 7),          # self.prop: the property's return value
])
def test_resolves(index, function, value):
    assert evaluate_function(index, f"vllm.a.{function}", {}).value == value


def test_a_value_walk_has_its_own_depth_budget_wherever_it_is_asked(index):
    # the builder's walk answers what it passes whoever asks, however deep the asker is
    from srcreview.interp.values import Const

    an = analyzer(index, {})
    an.depth = 4
    frame = an.value_walk("vllm.a.asked_deep", None)
    assert an.depth == 4
    assert [an.force(r.value) for r in frame.returns] == [Const(8)]


def test_recursion_past_its_own_budget_stays_undecided(index):
    assert not evaluate_function(index, "vllm.a.recursion_past_its_budget", {}).decided


@pytest.mark.parametrize("function, value", [
    ("merged_spread", "qwen2/Llama"),     # {**a, **b, "k": v}: later keys win
    ("comprehension_over_items", 2),      # {k: v for k, (m, c) in d.items() if ...} inside a spread
    ("dataclass_positional", "llama"),    # Dataclass(x, y): its fields in declaration order
    ("class_name", "Llama"),              # Cls.__name__
])
def test_resolves_tables_and_instances(index, function, value):
    assert evaluate_function(index, f"vllm.tables.{function}", {}).value == value


@pytest.mark.parametrize("function", [
    "dataclass_out_of_init",  # a field with init=False: positional arguments are not taken by order
    "dataclass_without_init",  # @dataclass(init=False): no generated __init__ takes them
    "spread_of_unknown",      # {**unknown, "k": 1}: the unknown mapping may hold anything else
])
def test_leaves_open(index, function):
    assert not evaluate_function(index, f"vllm.tables.{function}", {}).decided


def test_a_member_whose_enum_defines_bool_is_as_true_as_that_says(index):
    assert evaluate_function(index, "vllm.a.member_with_bool", {}).value == "none"
    assert evaluate_function(index, "vllm.a.member_with_open_bool", {}).value is None


def test_an_augmented_assignment_to_a_list_changes_it_in_place(index):
    # `items += [...]` extends the list object itself (any alias sees it): its length is not computed
    assert evaluate_function(index, "vllm.a.grown", {}).value is None


def test_a_class_attribute_read_through_self_is_not_taken_as_its_constant(index):
    """Today `self.ATTR` of a class attribute is read as an instance attribute of unknown value,
    unlike `Cls.ATTR`: the function stays undecided (sound, and a gap: an open question, never a
    wrong value)."""
    assert not evaluate_function(index, "vllm.a.Child.class_attribute_through_self", {}).decided


def test_a_class_held_in_a_class_attribute_is_recorded_as_an_unresolved_call(index):
    """`runner = Child; self.runner()` is not followed, and the trace says so."""
    unresolved = trace(index, "vllm.a.Holder.go", {}).unresolved
    assert ("unresolved-call", "self.runner(): method runner of Holder not found in its MRO") in \
        [(site.kind, site.text) for site in unresolved]


@pytest.fixture(scope="module")
def resolver(index):
    return analyzer(index, {}).resolver


def test_a_re_exported_class_has_the_name_of_its_definition(resolver):
    assert resolver.canonical("vllm.config.CacheConfig") == "vllm.config.cache.CacheConfig"


def test_a_class_imported_into_a_module_has_the_name_of_its_definition(resolver):
    assert resolver.canonical("vllm.a.CacheConfig") == "vllm.config.cache.CacheConfig"


def test_a_class_not_in_the_tree_has_no_canonical_name(resolver):
    assert resolver.canonical("vllm.nowhere.Thing") is None


def test_a_builtin_name_is_the_builtin(index, resolver):
    assert resolver.global_name(index.module("vllm.a"), "len", "") == Builtin("len")


def test_an_unbound_name_is_unknown_and_says_so(index, resolver):
    assert resolver.global_name(index.module("vllm.a"), "nowhere", "") == Unknown("unbound name nowhere")


def test_an_inherited_method_is_entered_with_self_of_the_class_named(index):
    symbol, self_cls = entry_function(index, "vllm.a.Child.kind_of_base")
    assert (symbol.qualname, self_cls) == ("vllm.a.Base.kind_of_base", "vllm.a.Child")


REGISTRY = {
    "vllm/reg.py": """
        class Factory:
            _registry: dict = {}
            _fixed: dict = {"a": 1}

            @classmethod
            def register(cls, name, value):
                cls._registry[name] = value

            @classmethod
            def known(cls, name):
                return name in cls._registry

            @classmethod
            def fixed(cls, name):
                return name in cls._fixed

        Factory.register("Nixl", 1)
    """,
}


def test_a_registry_a_method_fills_is_not_its_declared_empty_value(tmp_path):
    """`cls._registry[name] = ...` in a method (called at import): the declared `{}` is not what a
    lookup sees, so `name in cls._registry` is undecided, never False; an attribute no method fills
    keeps its declared value."""
    index = module_index(tmp_path, REGISTRY)
    filled = evaluate_function(index, "vllm.reg.Factory.known", {}, {"name": "Nixl"})
    assert not filled.decided
    assert evaluate_function(index, "vllm.reg.Factory.fixed", {}, {"name": "a"}).value is True


KEPT = {
    "vllm/t.py": """
        import os

        class A:
            pass

        BASE = {"x": 1, "y": [1, 2]}
        TABLE = {"a": A, "n": None, **BASE}
        NAMES = (A, "b", BASE)
        FROM_ENV = {"home": os.environ.get("HOME")}
        COMPUTED = len(BASE)
        BOUND_TWICE = 1
        BOUND_TWICE = 2
    """,
}


def test_only_constants_read_from_the_facts_alone_are_kept_for_every_review(tmp_path, monkeypatch):
    """Resolver.constant_value keeps a constant's value for the tree (Index.memo) only when it is
    a display of literals and names of classes and such constants; one that calls, reads an
    attribute or is bound twice is computed again at each read; with SRCREVIEW_REUSE=0 nothing is
    shared between the reviews' resolvers."""
    from srcreview.interp.resolver import _NOT_KEPT

    monkeypatch.delenv("SRCREVIEW_REUSE", raising=False)
    index = module_index(tmp_path / "on", KEPT)
    module = index.module("vllm.t")
    first = analyzer(index, {"attention_backend": "A"}).resolver
    for name in ("TABLE", "NAMES", "FROM_ENV", "COMPUTED", "BOUND_TWICE"):
        first.global_name(module, name, "")
    kept = {const.name: value for const, _, value in index.memo["constant_value"].values()}
    assert kept["TABLE"] is not _NOT_KEPT and kept["NAMES"] is not _NOT_KEPT and kept["BASE"] is not _NOT_KEPT
    assert kept["FROM_ENV"] is _NOT_KEPT and kept["COMPUTED"] is _NOT_KEPT and kept["BOUND_TWICE"] is _NOT_KEPT
    other = analyzer(index, {"attention_backend": "B"}).resolver  # another recipe: the same answers
    assert other.global_name(module, "TABLE", "") is first.global_name(module, "TABLE", "")

    monkeypatch.setenv("SRCREVIEW_REUSE", "0")
    index = module_index(tmp_path / "off", KEPT)
    analyzer(index, {}).resolver.global_name(index.module("vllm.t"), "TABLE", "")
    assert "constant_value" not in index.memo and "global_name" not in index.memo


DATACLASSES = {
    "vllm/config/utils.py": """
        from pydantic.dataclasses import dataclass


        def config(cls=None, *, config=None):
            def decorator(cls):
                return dataclass(cls, config=config)
            if cls is None:
                return decorator
            return decorator(cls)


        def register(cls):
            REGISTRY.append(cls)
            return cls


        REGISTRY = []
    """,
    "vllm/kinds.py": """
        import dataclasses
        from dataclasses import is_dataclass

        from some_library import Base, wrap
        from vllm.config.utils import config, register


        @config
        class Made:
            x: int = 1


        @config(config={"extra": "forbid"})
        class MadeWithArguments:
            x: int = 1


        class Inherits(Made):
            pass


        @dataclasses.dataclass
        class Plain:
            x: int = 1


        @register
        class Registered:
            pass


        class Nothing:
            pass


        @wrap
        class Wrapped:
            pass


        class Outside(Base):
            pass


        def made():
            return is_dataclass(Made())


        def with_arguments():
            return is_dataclass(MadeWithArguments())


        def inherits():
            return is_dataclass(Inherits())


        def plain():
            return is_dataclass(Plain())


        def registered():
            return is_dataclass(Registered())


        def nothing():
            return is_dataclass(Nothing())


        def constant():
            return is_dataclass(3)


        def wrapped():
            return is_dataclass(Wrapped())


        def outside():
            return is_dataclass(Outside())
    """,
}


@pytest.fixture(scope="module")
def kinds(tmp_path_factory):
    return module_index(tmp_path_factory.mktemp("kinds"), DATACLASSES)


@pytest.mark.parametrize(("function", "expected"), [
    ("made", True), ("with_arguments", True), ("inherits", True), ("plain", True),  # made by a dataclass maker
    ("registered", False), ("nothing", False), ("constant", False),  # nothing on the way makes one
    ("wrapped", None), ("outside", None),  # a decorator or a base outside the tree: not known
])
def test_is_dataclass_follows_the_decorators_that_make_one(kinds, function, expected):
    outcome = evaluate_function(kinds, f"vllm.kinds.{function}", {})
    assert (outcome.value if outcome.decided else None) == expected


def test_a_forwarded_mapping_leaves_kwargs_open(index):
    # `f(1, **options)` with options not known: what **kwargs holds is not known either
    assert not evaluate_function(index, "vllm.a.rest_forwarded", {}).decided
