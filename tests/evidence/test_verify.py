"""Plan and verify over the startup_logs fixture tree, with hand-written logs in vLLM's format
(interleaved ranks, DEBUG noise, colour codes, a truncated tail) and hostile ones."""

from __future__ import annotations

import time

import pytest
from recipe_support import fixture_tree
from startup_logs import emit, line_of, record, structure

from srcreview.core.errors import DataError
from srcreview.evidence import logfile
from srcreview.evidence.plan import plan
from srcreview.evidence.verify import verify
from srcreview.index import Index
from srcreview.model.findings import Knob, RecipeRef, Review, RevisionInfo, RunnerInfo, ToolInfo
from srcreview.vllm import log_calls


@pytest.fixture(scope="module")
def index():
    return Index(fixture_tree("startup_logs"))


def _review(index, knobs):
    review = Review(tool=ToolInfo(version="0"), recipe=RecipeRef(path="r.toml", name="r"),
                    revision=RevisionInfo(sha="1234567ab"), runner=RunnerInfo(value="v2", status="resolved"),
                    knobs=tuple(Knob(key=k, scope=s, value=v, status=st) for k, s, v, st in knobs))
    return review.model_copy(update={"startup_evidence": plan(index, review)})


TOP = [("attention_backend", "target", "TRITON_ATTN", "applied"), ("attention_backend", "draft", "TRITON_ATTN",
       "applied"), ("speculative_config.method", "engine", "mtp", "accepted"),
       ("kv_cache_dtype", "target", "fp8", "applied")]
NESTED = [("attention_backend", "target", None, "undecided"),
          ("speculative_config.attention_backend", "draft", "TRITON_ATTN", "ignored"),
          ("speculative_config.method", "engine", "mtp", "accepted")]


NOISE = log_calls.calls_with_format(Index(fixture_tree("startup_logs")), "Attention backend %s is unavailable")[0]


def _write(tmp_path, lines):
    path = tmp_path / "startup.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _log(review, *, draft_impl=None, ranks=("Worker_TP0 pid=11", "Worker_TP1 pid=12"), colour=False,
         inspect=True):
    p = review.startup_evidence
    out = emit(line_of(p, "kv_cache_dtype", "target", "Using %s data type"), "fp8")
    per_rank = []
    for rank in ranks:
        lines = emit(line_of(p, "model_runner", "engine", "Loading model from scratch"), process=rank)
        lines += emit(line_of(p, "attention_backend", "target", "Using %s backend."),
                      "AttentionBackendEnum.TRITON_ATTN", process=rank)
        lines += record(NOISE.file, NOISE.line, NOISE.format % "FLASHINFER", level="DEBUG", process=rank)
        shape = line_of(p, "attention_backend", "target", "vLLM model structure")
        lines += emit(shape, structure("Target", "TritonAttentionImpl"), process=rank) if inspect else []
        if draft_impl:
            lines += emit(shape, structure("Draft", draft_impl), process=rank, time="12-01 23:37:30")
        lines += emit(line_of(p, "speculative_method", "engine", "Model loading took"), "1.0", 2.0, process=rank)
        per_rank.append(lines)
    for group in zip(*per_rank, strict=True):  # ranks interleaved line by line
        out += list(group)
    if colour:
        out = [f"\x1b[36m{line}\x1b[0m" if line.startswith("(") else line for line in out]
    return out


def _row(result, knob, scope):
    return next(r for r in result.rows if r.knob == knob and r.scope == scope)


def test_interleaved_ranks_with_colour_prove_the_draft_structure(index, tmp_path):
    review = _review(index, TOP)
    result = verify(index, review, logfile.read_log(_write(tmp_path, _log(review, draft_impl="TritonAttentionImpl",
                                                                          colour=True))), "startup.log")
    assert result.identified and len(result.processes) == 3
    assert _row(result, "attention_backend", "draft").verdict == "consistent"
    assert _row(result, "kv_cache_dtype", "target").verdict == "consistent"
    assert _row(result, "startup", "engine").verdict == "not-shown"  # the tail is cut before the ready line
    assert result.exit_code == 2


def test_flash_attention_draft_contradicts(index, tmp_path):
    review = _review(index, TOP)
    result = verify(index, review, logfile.read_log(_write(tmp_path, _log(review, draft_impl="FlashAttentionImpl"))),
                    "startup.log")
    assert _row(result, "attention_backend", "draft").verdict == "contradicted" and result.exit_code == 1


def test_no_draft_record_is_not_proof_of_the_nested_key(index, tmp_path):
    review = _review(index, NESTED)
    result = verify(index, review, logfile.read_log(_write(tmp_path, _log(review))), "startup.log")
    row = _row(result, "attention_backend", "draft")
    assert row.verdict == "not-shown" and "nested TRITON_ATTN" in row.basis


def test_cached_selection_predicted_by_the_review_explains_a_missing_line(index, tmp_path):
    review = _review(index, TOP)
    lines = _log(review, inspect=False)
    result = verify(index, review, logfile.read_log(_write(tmp_path, lines)), "startup.log")
    row = _row(result, "attention_backend", "draft")
    assert row.verdict == "consistent" and "cached" in row.basis


def test_moved_lines_are_refused(index, tmp_path):
    review = _review(index, TOP)
    lines = [line.replace("[cuda.py:", "[cuda.py:9") for line in _log(review, draft_impl="TritonAttentionImpl")]
    lines = [line.replace("[model_runner.py:", "[model_runner.py:7") for line in lines]
    lines = [line.replace("[base_loader.py:", "[base_loader.py:5") for line in lines]
    result = verify(index, review, logfile.read_log(_write(tmp_path, lines)), "startup.log")
    assert not result.identified and result.exit_code == 65 and result.mismatches


@pytest.mark.parametrize("content, message", [
    (b"INFO 12-01 23:37:21 [cuda.py:10] x\n\0\0binary", "binary"),
    (b"x" * (logfile.MAX_LINE_BYTES + 10), "longer than"),
    (b"hello\nworld\n", "no line in vLLM's log format"),
])
def test_hostile_logs_get_one_line_errors(tmp_path, content, message):
    path = tmp_path / "bad.log"
    path.write_bytes(content)
    with pytest.raises(DataError, match=message):
        logfile.read_log(path)


def test_too_many_lines_fail_in_bounded_time(tmp_path, monkeypatch):
    monkeypatch.setattr(logfile, "MAX_LINES", 1000)
    path = tmp_path / "long.log"
    path.write_bytes(b"INFO 12-01 23:37:21 [cuda.py:10] x\n" * 5000)
    started = time.perf_counter()
    with pytest.raises(DataError, match="more than 1000 lines"):
        logfile.read_log(path)
    assert time.perf_counter() - started < 5
