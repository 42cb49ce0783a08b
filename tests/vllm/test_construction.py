"""The engine's config construction under the recipe, one behaviour per case (srcreview.vllm.construction).

A tiny vLLM-shaped tree: EngineArgs builds a CacheConfig from two recipe keys and hands it to
VllmConfig; CacheConfig's `__post_init__` refuses an fp8 cache with a large block, VllmConfig's
refuses a 4-token block, and the cache dtype is a Literal. The recipe's keys reach the
config through the engine's own builder (`config_bindings`), as in a review.
"""

from __future__ import annotations

import pytest
from recipe_support import module_index

from srcreview.interp.interpreter import analyzer
from srcreview.vllm.runtime import config_bindings

TREE = {
    "vllm/config/__init__.py": """
        from vllm.config.cache import CacheConfig
        from vllm.config.vllm import VllmConfig
    """,
    "vllm/config/cache.py": """
        from dataclasses import dataclass
        from typing import Literal

        CacheDType = Literal["auto", "fp8"]

        @dataclass
        class CacheConfig:
            cache_dtype: CacheDType = "auto"
            block_size: int = 16

            def __post_init__(self):
                if self.cache_dtype == "fp8" and self.block_size > 8:
                    raise ValueError("fp8 needs a small block")
    """,
    "vllm/config/vllm.py": """
        from dataclasses import dataclass, field
        from vllm.config.cache import CacheConfig

        @dataclass
        class VllmConfig:
            cache_config: CacheConfig = field(default_factory=CacheConfig)

            def __post_init__(self):
                if self.cache_config.block_size == 4:
                    raise ValueError("block 4 is too small")
    """,
    "vllm/engine/arg_utils.py": """
        from dataclasses import dataclass
        from vllm.config import CacheConfig, VllmConfig

        @dataclass
        class EngineArgs:
            kv_cache_dtype: str = "auto"
            block_size: int = 16

            def create_engine_config(self) -> VllmConfig:
                cache_config = CacheConfig(cache_dtype=self.kv_cache_dtype, block_size=self.block_size)
                return VllmConfig(cache_config=cache_config)
    """,
}
CACHE_HOOK = "vllm.config.cache.CacheConfig.__post_init__"
ROOT_HOOK = "vllm.config.vllm.VllmConfig.__post_init__"


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    return module_index(tmp_path_factory.mktemp("construction"), TREE)


def built(index, settings: dict):
    return analyzer(index, config_bindings(index, settings)).prepare()


def rejected_by(index, settings: dict) -> list[tuple[str, str]]:
    return [(r.function, r.raise_event.text) for r in built(index, settings).rejections]


def test_a_post_init_raise_the_recipe_values_reach_rejects_the_recipe(index):
    assert rejected_by(index, {"kv_cache_dtype": "fp8"}) == [(CACHE_HOOK, "ValueError('fp8 needs a small block')")]


def test_a_post_init_raise_the_recipe_values_avoid_is_no_rejection(index):
    assert rejected_by(index, {"kv_cache_dtype": "fp8", "block_size": 8}) == []


def test_the_default_left_by_the_recipe_is_the_one_the_engine_passes(index):
    assert rejected_by(index, {"kv_cache_dtype": "auto"}) == []


def test_a_raise_in_the_root_configs_post_init_rejects_the_recipe(index):
    assert rejected_by(index, {"block_size": 4}) == [(ROOT_HOOK, "ValueError('block 4 is too small')")]


def test_the_hooks_of_the_sections_the_recipe_sets_run_before_the_root_configs(index):
    assert built(index, {"kv_cache_dtype": "fp8"}).hooks == (CACHE_HOOK, ROOT_HOOK)


def test_a_section_the_recipe_does_not_set_is_not_walked(index):
    assert built(index, {}).hooks == (ROOT_HOOK,)


def test_a_value_outside_the_literal_is_refused_by_the_declaration(index):
    check = built(index, {"kv_cache_dtype": "int8"}).field_check("kv_cache_dtype")
    assert (check.outcome, check.reason) == ("refused", "'int8' is not one of the Literal's 2 members")


def test_a_value_the_literal_names_is_admitted(index):
    assert built(index, {"kv_cache_dtype": "fp8"}).field_check("kv_cache_dtype").outcome == "admitted"


def test_a_tree_without_engine_args_builds_nothing(tmp_path):
    assert not built(module_index(tmp_path, {"vllm/config/vllm.py": TREE["vllm/config/vllm.py"],
                                             "vllm/config/cache.py": TREE["vllm/config/cache.py"]}), {}).built


# -- the engine arguments the builder's walk follows store by store -------------------------
TRACKED = {
    "vllm/engine/arg_utils.py": """
        from dataclasses import dataclass

        @dataclass
        class EngineArgs:
            own: int = 0
            bumped: int = 0
            unpacked: int = 0
            looped: int = 0
            deleted: int = 0
            comprehended: int = 0
            nested: int = 0
            subclassed: int = 0
            untouched: int = 0

            def __post_init__(self):
                self.bumped += 1

            def create_engine_config(self):
                self.own = 1
                return None

            def _fill(self, xs):
                (self.unpacked, other) = xs
                for self.looped in xs:
                    pass
                del self.deleted
                [0 for self.comprehended in xs]

                def helper():
                    self.nested = 2
                helper()

        @dataclass
        class AsyncEngineArgs(EngineArgs):
            def _more(self):
                self.subclassed = 3
    """,
}


def test_the_builder_follows_the_fields_no_other_method_stores(tmp_path):
    from srcreview.vllm.runtime import builder_tracked_fields

    index = module_index(tmp_path, TRACKED)
    tracked = builder_tracked_fields(index, "vllm.engine.arg_utils.EngineArgs.create_engine_config")
    # a store by any other method (augmented, unpacked, a loop's or a comprehension's target,
    # `del`, a nested function's, a subclass's) keeps the field out; the builder's own does not,
    # nor `__post_init__`'s (walked on the recipe's values before the builder)
    assert tracked == {"own", "untouched", "bumped"}
    assert builder_tracked_fields(index, "vllm.engine.arg_utils.EngineArgs._fill") == frozenset()


def test_nothing_is_followed_when_the_engine_arguments_leave_a_method(tmp_path):
    from srcreview.vllm.runtime import builder_tracked_fields

    files = {"vllm/engine/arg_utils.py": TRACKED["vllm/engine/arg_utils.py"].replace(
        "self.subclassed = 3", "register(self)")}
    index = module_index(tmp_path, files)
    assert builder_tracked_fields(index, "vllm.engine.arg_utils.EngineArgs.create_engine_config") == frozenset()


FLOW = {
    "vllm/engine/arg_utils.py": """
        from dataclasses import dataclass

        @dataclass
        class EngineArgs:
            during: int = 0
            deeper: int = 0
            early: int = 0
            shared: int = 0
            untouched: int = 0

            def __post_init__(self):
                self.early = 1
                self._share()

            def create_engine_config(self):
                self._fill()
                return None

            def _fill(self):
                self.during = 2
                self._deeper()

            def _deeper(self):
                self.deeper = 3
                self._share()

            def _share(self):
                self.shared = 4
    """,
}


def test_the_builder_follows_fields_the_methods_it_calls_store_and_knows_what_each_call_may_store(tmp_path):
    from srcreview.vllm.runtime import builder_flow

    index = module_index(tmp_path, FLOW)
    flow = builder_flow(index, "vllm.engine.arg_utils.EngineArgs.create_engine_config")
    # stored only by methods the builder calls on `self` (run at those calls) or by __post_init__
    # and what it calls (run before the builder, walked first): followed
    assert flow.tracked == {"during", "deeper", "early", "shared", "untouched"}
    assert flow.stores == {"_fill": {"during", "deeper", "shared"}, "_deeper": {"deeper", "shared"},
                           "_share": {"shared"}}
    assert flow.post_init == "vllm.engine.arg_utils.EngineArgs.__post_init__"
    assert flow.init_stores == {"early", "shared"}


def test_a_method_no_entry_reaches_keeps_what_it_stores_out(tmp_path):
    from srcreview.vllm.runtime import builder_flow

    files = {"vllm/engine/arg_utils.py": FLOW["vllm/engine/arg_utils.py"] + """
            def reset(self):
                self.untouched = 5
    """}
    index = module_index(tmp_path, files)
    flow = builder_flow(index, "vllm.engine.arg_utils.EngineArgs.create_engine_config")
    # `reset` is called by neither the builder nor __post_init__: it may run before the builder
    assert "untouched" not in flow.tracked


def test_nothing_is_followed_when_a_method_is_taken_as_a_value(tmp_path):
    from srcreview.vllm.runtime import builder_flow

    files = {"vllm/engine/arg_utils.py": FLOW["vllm/engine/arg_utils.py"].replace(
        "self._fill()\n", "later = self._fill\n")}
    index = module_index(tmp_path, files)
    assert builder_flow(index, "vllm.engine.arg_utils.EngineArgs.create_engine_config").tracked == frozenset()
