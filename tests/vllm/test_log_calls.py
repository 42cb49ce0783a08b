"""The logger-call table read from a fixture tree's function facts."""

from __future__ import annotations

from recipe_support import fixture_tree

from srcreview.index import Index
from srcreview.vllm import anchors as A
from srcreview.vllm import log_calls


def _index():
    return Index(fixture_tree("startup_logs"))


def test_calls_located_by_format_with_level_once_and_line():
    index = _index()
    forced, = log_calls.calls_with_format(index, A.BACKEND_FORCED_LOG)
    selected, = log_calls.calls_with_format(index, A.BACKEND_SELECTED_LOG)
    text = index.tree.read("vllm/platforms/cuda.py").decode().splitlines()
    assert "logger.info(" in text[forced.line - 1] and not forced.once
    assert "logger.info_once(" in text[selected.line - 1] and selected.once and selected.scope == "local"
    assert selected.match("Using TRITON_ATTN attention backend out of potential backends: ['TRITON_ATTN'].") == \
        ("TRITON_ATTN", "['TRITON_ATTN']")
    assert selected.match("Using TRITON_ATTN backend.") is None


def test_multi_line_format_matches_its_first_line_and_impls_are_derived():
    index = _index()
    shape, = log_calls.calls_with_format(index, A.MODEL_STRUCTURE_LOG)
    assert shape.match("vLLM model structure:") == ()  # the argument starts on the next line
    assert log_calls.impl_backends(index) == {"FlashAttentionImpl": ("FLASH_ATTN",),
                                              "TritonAttentionImpl": ("TRITON_ATTN",)}


def test_file_tokens_as_vllm_prints_them():
    assert log_calls.file_matches("cuda.py", "vllm/platforms/cuda.py")
    assert log_calls.file_matches("v1/worker/.../gpu/model_runner.py", "vllm/v1/worker/x/gpu/model_runner.py")
    assert not log_calls.file_matches("v1/worker/gpu_model_runner.py", "vllm/v1/worker/gpu/model_runner.py")
