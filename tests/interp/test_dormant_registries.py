"""A module container that only a registrar nothing calls fills holds its literal, where no
plugin runs (srcreview.index.dormant): a decorator factory that the tree never applies cannot
have added to it. Any other store, a call, an import, or a string naming the registrar keeps
the container open, and so does a runtime that may run out-of-tree code."""

from __future__ import annotations

import pytest
from recipe_support import module_index

from srcreview.interp import evaluate_function
from srcreview.vllm.runtime import ENTRY_POINTS_KEY

REGISTRIES = '''
    HANDLERS: dict = {}
    NAMES: list = ["auto", "fp8"]


    def register(name):
        """Register a dtype handler (run by a plugin).

            >>> @register("int8")
        """
        def deco(cls):
            NAMES.append(name)
            HANDLERS[name] = cls()
            return cls
        return deco


    CALLED: dict = {}


    def register_called(name):
        def deco(cls):
            CALLED[name] = cls
            return cls
        return deco


    @register_called("x")
    class X:
        pass


    NAMED: dict = {}


    def register_named(name):
        NAMED[name] = 1


    HOOKS = {"named": "register_named"}  # a string that names it: something may look it up

    AT_IMPORT: dict = {}
    AT_IMPORT["y"] = 1


    def handler(name):
        return HANDLERS.get(name)


    def known(name):
        return name in NAMES


    def called(name):
        return CALLED.get(name)


    def named(name):
        return NAMED.get(name)


    def at_import(name):
        return AT_IMPORT.get(name)


    def documented():
        """Handlers come from register("x") (documentation, not a call)."""
        return 1
'''

ELSEWHERE = '''
    # register() is how a plugin adds a handler: a comment is not code
    from vllm.reg import handler


    def use(name):
        return handler(name)
'''

NO_PLUGINS = {ENTRY_POINTS_KEY: ()}


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return module_index(tmp_path_factory.mktemp("dormant"), {"vllm/reg.py": REGISTRIES, "vllm/use.py": ELSEWHERE})


def outcome(index, function, name, bindings=NO_PLUGINS):
    return evaluate_function(index, f"vllm.reg.{function}", bindings, {"name": name})


def test_a_registry_only_an_uncalled_registrar_fills_is_its_literal(index):
    assert (outcome(index, "handler", "fp8").value, outcome(index, "handler", "fp8").decided) == (None, True)
    assert (outcome(index, "known", "auto").value, outcome(index, "known", "auto").decided) == (True, True)
    assert (outcome(index, "known", "int8").value, outcome(index, "known", "int8").decided) == (False, True)


def test_a_runtime_that_may_run_plugins_keeps_it_open(index):
    assert not outcome(index, "handler", "fp8", bindings={}).decided
    assert not outcome(index, "known", "int8", bindings={}).decided


@pytest.mark.parametrize("function", ["called", "named", "at_import"])
def test_a_registrar_that_runs_or_is_named_or_a_store_at_import_keeps_it_open(index, function):
    # applied as a decorator; named by a string in code; stored into at module level
    assert not outcome(index, function, "x").decided
