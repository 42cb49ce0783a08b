"""Whether the runner's load method loads a draft model through its speculative component,
one call kind per case (srcreview.vllm.drafting.draft_loading).

The runner's `load_model` calls `self.drafter.load_model()`; the drafter reaches the model
loader one way per case. `loads` is True (a path reaches the loader), False (no path does:
"it loads no draft model") or None (calls on the way are not resolved).
"""

from __future__ import annotations

import pytest
from recipe_support import module_index

from srcreview.interp.interpreter import analyzer
from srcreview.vllm.anchors import MODEL_LOADER
from srcreview.vllm.drafting import draft_loading

RUNNER = "class GPUModelRunner:\n    def load_model(self):\n        self.drafter.load_model()\n"
DRAFTER = """
    from vllm.model_executor.model_loader import get_model

    LOADERS = {{"default": get_model}}

    def call_it(fn):
        fn()

    class Drafter:
        def load_model(self):
            {call}
"""


def loads(tmp_path, call: str):
    index = module_index(tmp_path, {
        "vllm/model_executor/model_loader/__init__.py": "def get_model():\n    pass\n",
        "vllm/v1/worker/gpu_model_runner.py": RUNNER,
        "vllm/v1/spec.py": DRAFTER.format(call=call),
    })
    return draft_loading(analyzer(index, {}), "v1", "vllm.v1.spec.Drafter", MODEL_LOADER).loads


def test_a_direct_call_of_the_loader_loads_a_draft_model(tmp_path):
    assert loads(tmp_path, "get_model()") is True


def test_a_drafter_that_never_calls_the_loader_loads_none(tmp_path):
    assert loads(tmp_path, "pass") is False


@pytest.mark.parametrize("call", ['LOADERS[self.kind]()', "call_it(get_model)"])
def test_a_loader_behind_a_call_it_cannot_follow_is_undecided(tmp_path, call):
    assert loads(tmp_path, call) is None
