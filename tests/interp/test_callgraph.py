"""The call graph, one call kind per case (srcreview.interp.callgraph.trace): which calls it
follows to a sink, and which it records as unresolved instead of following.

Every entry below calls `sink` (vllm/b.py) one way. A followed call is a path entry -> ... ->
sink; a call it cannot follow must show up in `unresolved` or `dynamic`, never vanish.
"""

from __future__ import annotations

import pytest
from recipe_support import module_index

from srcreview.interp import trace

CALLS = """
    import functools

    import vllm.b as bmod
    from vllm.b import sink
    from vllm.b import sink as renamed

    def helper():
        sink()

    def through_a_helper():
        helper()

    def through_a_module_alias():
        bmod.sink()

    def through_an_import_alias():
        renamed()

    def through_a_nested_function():
        def inner():
            sink()
        inner()

    def deco(f):
        return f

    @deco
    def decorated():
        sink()

    def through_a_decorated_function():
        decorated()

    def wrap(f):
        @functools.wraps(f)
        def wrapper(*a, **k):
            return f(*a, **k)
        return wrapper

    @wrap
    def wrapped():
        sink()

    def through_a_wrapping_decorator():
        wrapped()

    TABLE = {"s": sink}

    def through_a_constant_table_key():
        TABLE["s"]()

    def through_a_literal_getattr():
        getattr(bmod, "sink")()

    def through_functools_partial():
        functools.partial(sink)()

    def in_a_comprehension():
        return [sink() for _ in range(2)]

    def through_a_lambda():
        f = lambda: sink()
        f()

    def through_a_table_key_known_at_run_time(k):
        TABLE[k]()

    def through_a_run_time_getattr(name):
        getattr(bmod, name)()

    def call_it(fn):
        fn()

    def through_a_callback():
        call_it(sink)

    def on_an_unknown_receiver(obj):
        obj.run()

    class Base:
        def run(self):
            sink()

    class Child(Base):
        def run(self):
            super().run()

        @property
        def value(self):
            sink()
            return 1

        def through_a_property(self):
            return self.value

    class Holder:
        def __init__(self):
            self.child = Child()

        def through_an_attribute_set_in_init(self):
            self.child.run()
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return module_index(tmp_path_factory.mktemp("callgraph"), {"vllm/a.py": CALLS, "vllm/b.py": "def sink():\n    pass\n"})


def path_to_sink(index, entry):
    t = trace(index, f"vllm.a.{entry}", {}, sink="sink")
    return [(hop.symbol.removeprefix("vllm.a."), hop.via) for hop in t.paths[0]] if t.paths else None


def unresolved(index, entry):
    """What the tree walk from `entry` (no sink) records as not followed: (kind, text)."""
    t = trace(index, f"vllm.a.{entry}", {})
    return sorted({(s.kind, s.text) for s in t.unresolved + t.dynamic})


SINK = ("vllm.b.sink", "call")


@pytest.mark.parametrize("entry, path", [
    ("through_a_helper", [("through_a_helper", "entry"), ("helper", "call"), SINK]),
    ("through_a_module_alias", [("through_a_module_alias", "entry"), SINK]),
    ("through_an_import_alias", [("through_an_import_alias", "entry"), SINK]),
    ("through_a_nested_function", [("through_a_nested_function", "entry"),
                                   ("through_a_nested_function.<locals>.inner", "call"), SINK]),
    ("through_a_decorated_function", [("through_a_decorated_function", "entry"), ("decorated", "call"), SINK]),
    ("through_a_wrapping_decorator", [("through_a_wrapping_decorator", "entry"), ("wrapped", "call"), SINK]),
    ("through_a_constant_table_key", [("through_a_constant_table_key", "entry"), SINK]),
    ("through_a_literal_getattr", [("through_a_literal_getattr", "entry"), SINK]),
    ("through_functools_partial", [("through_functools_partial", "entry"), SINK]),
    ("in_a_comprehension", [("in_a_comprehension", "entry"), SINK]),
    ("through_a_lambda", [("through_a_lambda", "entry"), SINK]),
    ("Child.run", [("Child.run", "entry"), ("Base.run", "super"), SINK]),
    ("Child.through_a_property", [("Child.through_a_property", "entry"), ("Child.value", "property"), SINK]),
    ("Holder.through_an_attribute_set_in_init", [("Holder.through_an_attribute_set_in_init", "entry"),
                                                 ("Child.run", "call"), ("Base.run", "super"), SINK]),
])
def test_reaches_the_sink(index, entry, path):
    assert path_to_sink(index, entry) == path


@pytest.mark.parametrize("entry, site", [
    ("through_a_table_key_known_at_run_time", ("unresolved-call", "TABLE[k](): TABLE[k]")),
    ("through_a_run_time_getattr", ("dynamic-getattr", "getattr(bmod, name)")),
    ("through_a_run_time_getattr",
     ("unresolved-call", "getattr(bmod, name)(): getattr with a name known only at run time")),
    ("through_a_callback", ("unresolved-call", "fn(): untyped parameter fn")),
    ("on_an_unknown_receiver", ("unresolved-call", "obj.run(): attribute run of an unknown value")),
])
def test_records_what_it_does_not_follow(index, entry, site):
    assert site in unresolved(index, entry)


def test_a_call_of_a_lambda_is_its_body(index):
    # `f = lambda: sink(); f()`: the call is followed (the body's call is seen where it is written)
    assert unresolved(index, "through_a_lambda") == []


@pytest.mark.parametrize("entry", ["through_a_table_key_known_at_run_time", "through_a_callback"])
def test_does_not_reach_the_sink_through_a_call_it_cannot_follow(index, entry):
    assert path_to_sink(index, entry) is None


@pytest.mark.parametrize("entry", ["through_a_table_key_known_at_run_time", "through_a_callback",
                                   "through_a_run_time_getattr"])
def test_a_missed_sink_keeps_the_calls_it_could_not_follow(index, entry):
    t = trace(index, f"vllm.a.{entry}", {}, sink="sink")
    assert t.unresolved + t.dynamic


def test_a_sink_beyond_the_depth_limit_is_not_proved_absent(index):
    """A walk stopped by its depth limit has not shown that the sink is unreachable."""
    t = trace(index, "vllm.a.through_a_helper", {}, sink="sink", max_depth=1)
    assert not t.found_sink and any("not walked" in site.text for site in t.unresolved)
