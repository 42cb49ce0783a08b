"""The interpreter's questions, one behaviour per case (srcreview.interp.queries): what a small
function returns under the bindings (`evaluate_function`) and which reads of a config field
the functions make (`field_reads`)."""

from __future__ import annotations

import pytest
from recipe_support import module_index

from srcreview.interp import evaluate_function, field_reads

FUNCTIONS = """
    def constant():
        return 3

    def by_flag(flag):
        if flag:
            return "yes"
        return "no"

    def bounded(n):
        if n > 3:
            raise ValueError("too many")
        return n

    def always_raises():
        raise RuntimeError("never")

    def kilo(text):
        import re
        match = re.fullmatch(r"(\\d+)k", text)
        if match:
            (number,) = match.groups()
            return int(number) * 10**3
        return -1

    def power(n):
        return 10**n

    def backend_class(backend):
        if isinstance(backend, type):
            raise TypeError("not an executor class")
        return backend

    KINDS = {"llama": "dense", "mixtral": "moe"}
    GROWN = {"llama": "dense"}

    def kind(model_type):
        return KINDS.get(model_type, "other")

    def grown_kind(model_type):
        return GROWN.get(model_type, "other")

    PARSERS = {"hf": 1, "mistral": 2}
    SHRUNK = {"hf": 1}
    RESET = ["a"]

    def parser(fmt):
        if fmt not in PARSERS:
            raise ValueError("unknown format")
        return fmt

    def shrunk(fmt):
        if fmt not in SHRUNK:
            raise ValueError("unknown format")
        return fmt

    def reset(item):
        return item in RESET

    def falsy_chain(flag):
        ids = flag and None  # the unknown flag (when falsy), or None: falsy either way
        if ids:
            raise ValueError("never: a falsy chain")
        return 1

    def open_chain(flag, other):
        if flag and other:
            raise ValueError("open")
        return 1

    def guarded(flag, n):
        if flag:
            return 0
        if n > 3:
            raise ValueError("too many")
        return n

    def refused_first(flag, n):
        if flag:
            raise ValueError("refused")
        if n > 3:
            raise ValueError("too many")
        return n

    def table_of(flag, key):
        table = {"a": 1, "b": 2} if flag else {"a": 1}
        return table.get(key, 0)

    def capped(n):
        return min(n, 0) >= 1

    def capped_above(n):
        return min(n, 8) >= 1

    def floored(n, flag):
        m = max(n, 4) if flag else 6
        return m > 3

    def floored_or_text(n, flag):
        m = max(n, 4) if flag else "x"
        return m > 3

    def position_of(names, wanted):
        for i, name in enumerate(names):
            if name == wanted:
                return i
        return -1

    class MultipleOf:
        base: int

        def __init__(self, base: int):
            self.base = base

    from typing import NamedTuple

    class Capability(NamedTuple):
        major: int
        minor: int

    def is_capability(value):
        return isinstance(value, Capability)

    def is_multiple(value):
        return isinstance(value, MultipleOf)

    def kernel_sizes():
        return [MultipleOf(16)]

    def supports_size(block_size):
        for size in kernel_sizes():
            if isinstance(size, MultipleOf):
                size = size.base
            if block_size % size == 0:
                return True
        return False

    def replaced_size(block_size):
        sizes = kernel_sizes()
        sizes[0] = MultipleOf(7)
        return block_size % sizes[0].base == 0

    def grown_sizes():
        sizes = [MultipleOf(16)]
        sizes.append(32)
        return isinstance(sizes[1], MultipleOf)

    def described(flag, name):
        why = None
        if flag:
            why = f"{name}-based"
        return why is not None and isinstance(why, str)

    def optional_package():
        try:
            import somepackage
        except ImportError:
            raise RuntimeError("needs somepackage")
        return somepackage

    def dispatched(kind):
        match kind:
            case "a":
                raise ValueError("a refused")
            case _:
                return 1
"""

PLUGINS = """
    from vllm.f import GROWN, PARSERS, RESET, SHRUNK

    GROWN["mamba"] = "ssm"
    PARSERS["custom"] = 3
    SHRUNK["custom"] = 3
    SHRUNK.pop("hf")
    RESET.append("b")


    def clear():
        global RESET
        RESET = []
"""

READS = """
    from vllm.config import SpeculativeConfig

    def direct(cfg: SpeculativeConfig):
        return cfg.method

    def alias(cfg: SpeculativeConfig):
        c = cfg
        return c.method

    def literal_getattr(cfg: SpeculativeConfig):
        return getattr(cfg, "method")

    def dynamic_getattr(cfg: SpeculativeConfig, name):
        return getattr(cfg, name)

    def untyped(cfg):
        return cfg.method

    def no_read(cfg: SpeculativeConfig):
        return 1

    def forwards(cfg: SpeculativeConfig, **kw):
        return other(**kw)

    def through_dict(cfg: SpeculativeConfig):
        return cfg.__dict__["method"]

    def through_a_helper(cfg: SpeculativeConfig):
        return direct(cfg)
"""


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return module_index(tmp_path_factory.mktemp("queries"), {
        "vllm/f.py": FUNCTIONS,
        "vllm/config.py": "class SpeculativeConfig:\n    method: str = 'ngram'\n",
        "vllm/reads.py": READS,
        "vllm/plugins.py": PLUGINS,
    })


def outcome(index, function, args=None):
    return evaluate_function(index, f"vllm.f.{function}", {}, args)


def reads(index, function, field="SpeculativeConfig.method", **kw):
    return field_reads(index, [f"vllm.reads.{function}"], field, **kw)


# -- evaluate_function ---------------------------------------------------------------------------

def test_a_constant_return_is_decided(index):
    result = outcome(index, "constant")
    assert (result.value, result.decided) == (3, True)


def test_an_argument_decides_the_branch(index):
    assert outcome(index, "by_flag", {"flag": True}).value == "yes"


def test_an_unbound_argument_leaves_the_branch_undecided(index):
    assert [value for _, value in outcome(index, "by_flag").branches] == [None]


def test_an_unbound_argument_is_an_assumption(index):
    assert [a.text for a in outcome(index, "by_flag").assumptions] == ["flag"]


def test_a_raise_the_arguments_reach_is_certain(index):
    assert [r.text for r in outcome(index, "bounded", {"n": 5}).certain_raises] == ["ValueError('too many')"]


def test_a_raise_the_arguments_avoid_is_not_listed(index):
    assert outcome(index, "bounded", {"n": 1}).raises == ()


def test_a_raise_under_an_undecided_condition_is_listed_but_not_certain(index):
    result = outcome(index, "bounded")
    assert ([r.text for r in result.raises], result.certain_raises) == (["ValueError('too many')"], ())


@pytest.mark.parametrize(("key", "value"), [("mixtral", "moe"), ("bert", "other")])
def test_a_module_table_lookup_gives_its_value_or_the_default(index, key, value):
    assert (outcome(index, "kind", {"model_type": key}).value, outcome(index, "kind", {"model_type": key}).decided) \
        == (value, True)


@pytest.mark.parametrize("key", ["mamba", "llama", "bert"])
def test_a_table_another_module_changes_is_not_what_its_literal_says(index, key):
    # `GROWN["mamba"] = ...` in another module: any key may hold another value at run time
    assert not outcome(index, "grown_kind", {"model_type": key}).decided


def test_a_member_of_a_table_other_code_only_adds_to_is_still_in_it(index):
    # `PARSERS["custom"] = ...` elsewhere: "hf" is still a key, "custom" may or may not be
    assert outcome(index, "parser", {"fmt": "hf"}).raises == ()
    assert [r.text for r in outcome(index, "parser", {"fmt": "custom"}).raises] == ["ValueError('unknown format')"]
    # a pop elsewhere may take "hf" out; a `global` declaration may rebind the name
    assert [r.text for r in outcome(index, "shrunk", {"fmt": "hf"}).raises] == ["ValueError('unknown format')"]
    assert not outcome(index, "reset", {"item": "a"}).decided


def test_a_raise_after_an_undecided_early_return_is_not_certain(index):
    # `n > 3` is decided, but the path reaches it only where `flag` is false: not decided here
    result = outcome(index, "guarded", {"n": 5})
    assert ([r.text for r in result.raises], result.certain_raises) == (["ValueError('too many')"], ())


def test_a_raise_after_an_undecided_raise_is_certain_where_the_function_goes_on(index):
    # either `flag` raises or `n > 3` does: what follows a raise is the path that survives it
    result = outcome(index, "refused_first", {"n": 5})
    assert [r.text for r in result.certain_raises] == ["ValueError('too many')"]


def test_a_function_that_always_raises_is_not_decided(index):
    assert not outcome(index, "always_raises").decided


@pytest.mark.parametrize("value", ["mp", 3, None, ["a"]])
def test_plain_data_is_never_a_class(index, value):
    result = outcome(index, "backend_class", {"backend": value})
    assert (result.decided, result.value, result.raises) == (True, value, ())


@pytest.mark.parametrize(("text", "value"), [("4k", 4000), ("4", -1), ("k", -1)])
def test_a_regular_expression_over_constants_is_run(index, text, value):
    result = outcome(index, "kilo", {"text": text})
    assert (result.decided, result.value) == (True, value)


def test_only_small_powers_are_computed(index):
    assert outcome(index, "power", {"n": 12}).value == 10**12
    assert not outcome(index, "power", {"n": 10**6}).decided


def test_an_unbound_value_may_be_a_class(index):
    assert [r.text for r in outcome(index, "backend_class").raises] == ["TypeError('not an executor class')"]


# -- field_reads ---------------------------------------------------------------------------------

@pytest.mark.parametrize("function, kind", [
    ("direct", "direct"),                   # cfg.method, cfg typed by its annotation
    ("alias", "alias"),                     # c = cfg; c.method
    ("literal_getattr", "getattr-literal"),  # getattr(cfg, "method")
    ("through_a_helper", "direct"),          # read in a function the config is handed to
])
def test_reads(index, function, kind):
    assert [r.kind for r in reads(index, function).reads] == [kind]


@pytest.mark.parametrize("function, kind", [
    ("dynamic_getattr", "dynamic-getattr"),  # getattr(cfg, name)
    ("untyped", "untyped-read"),             # .method of a value of unknown type
    ("forwards", "kwargs-forward"),          # **kw handed on
    ("through_dict", "dunder-dict"),         # cfg.__dict__
])
def test_dynamic_access(index, function, kind):
    assert [d.kind for d in reads(index, function).dynamic] == [kind]


def test_no_read_and_no_dynamic_access_is_an_absence(index):
    found = reads(index, "no_read")
    assert (found.reads, found.dynamic, found.exists) == ((), (), True)


def test_a_read_in_a_helper_is_not_counted_without_helpers(index):
    assert reads(index, "through_a_helper", helpers=False).reads == ()


def test_a_field_the_class_does_not_declare_does_not_exist(index):
    assert not reads(index, "direct", "SpeculativeConfig.no_such_field").exists


def test_an_and_with_a_falsy_operand_decides_a_test(index):
    # `flag and None` is the unknown flag (when falsy) or None: falsy whichever; with every
    # operand unknown the test stays open
    assert outcome(index, "falsy_chain").raises == ()
    assert [r.text for r in outcome(index, "open_chain").raises] == ["ValueError('open')"]


# -- try and its handlers ------------------------------------------------------------------------

def test_a_handler_of_an_import_is_reached(index):
    # the package may be missing: the walk does not decide it (an import alone leaves the body
    # empty in the IR: it is still a try, not a match)
    result = outcome(index, "optional_package")
    assert ([r.text for r in result.raises], result.certain_raises) == (["RuntimeError('needs somepackage')"], ())


def test_a_match_case_is_reached_as_its_subject_decides(index):
    assert [r.text for r in outcome(index, "dispatched", {"kind": "a"}).certain_raises] == ["ValueError('a refused')"]


@pytest.mark.parametrize(("key", "value", "decided"), [("a", 1, True), ("b", None, False), ("c", 0, True)])
def test_a_method_of_a_value_that_differs_between_branches_is_called_on_each(index, key, value, decided):
    # `table` is one of two dicts (flag undecided): `.get` on each, the same answer or open
    result = outcome(index, "table_of", {"key": key})
    assert (result.decided, result.value if result.decided else None) == (decided, value)


@pytest.mark.parametrize(("function", "value"), [("capped", False), ("capped_above", None), ("floored", True),
                                                 ("floored_or_text", None)])
def test_min_and_max_bound_what_they_return(index, function, value):
    # min(n, 0) is at most 0 whatever n is; max(n, 4) at least 4, and so is 6; "x" is no number,
    # and min(n, 8) has no lower bound: those stay open
    result = outcome(index, function)
    assert (result.decided, result.value if result.decided else None) == (value is not None, value)


@pytest.mark.parametrize(("wanted", "value"), [("b", 1), ("z", -1)])
def test_a_loop_over_enumerate_of_a_constant_is_walked_item_by_item(index, wanted, value):
    assert outcome(index, "position_of", {"names": ["a", "b"], "wanted": wanted}).value == value


@pytest.mark.parametrize(("function", "args", "value"), [
    ("supports_size", {"block_size": 7}, False), ("supports_size", {"block_size": 32}, True),
    ("grown_sizes", {}, False),  # an int appended by name is no MultipleOf (plain data never is)
    ("replaced_size", {"block_size": 32}, None),  # an item stored by index: the items are no longer known
])
def test_a_list_whose_items_are_known_is_iterated_and_indexed_item_by_item(index, function, args, value):
    result = outcome(index, function, args)
    assert (result.decided, result.value if result.decided else None) == (value is not None, value)


@pytest.mark.parametrize(("flag", "value"), [(True, True), (False, False)])
def test_an_f_string_is_a_str_and_never_none(index, flag, value):
    # its content is not computed (`name` is not known), but it is a str
    assert outcome(index, "described", {"flag": flag}).value is value


@pytest.mark.parametrize(("function", "value"), [("is_multiple", False), ("is_capability", None)])
def test_plain_data_is_no_instance_of_a_class_of_the_tree_built_on_the_tree_alone(index, function, value):
    # a class over NamedTuple may be what a tuple constant stands for (vLLM's DeviceCapability)
    result = outcome(index, function, {"value": (12, 0)})
    assert (result.decided, result.value if result.decided else None) == (value is not None, value)
