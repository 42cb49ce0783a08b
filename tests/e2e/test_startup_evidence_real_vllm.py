"""The start-up evidence plan and `verify` on the example recipes at real vLLM 0.29.0: logs built
from the plan's own lines (file, line, format of that tree), never copied from a run."""

from __future__ import annotations

import json

import pytest
from real_reviews import BF16, FP8, NESTED, index_for, review_of
from startup_logs import emit, line_of, record, structure

from srcreview.evidence.logfile import read_log
from srcreview.evidence.verify import verify
from srcreview.vllm import anchors as A
from srcreview.vllm import log_calls

WORKER = "EngineCore_DP0 pid=4242"


def _log(tree, review, *, target: str | None, draft: str | None, inspection: bool, forced: bool = True,
         ready: bool = True) -> list[str]:
    index = index_for(tree)
    plan = review.startup_evidence
    impls = {names[0]: impl for impl, names in log_calls.impl_backends(index).items()}
    start = line_of(plan, "model_runner", "engine", "Loading model from scratch")
    loaded = next(ln for ln in plan.rows[[r.knob for r in plan.rows].index("model_runner")].lines
                  if ln.format and ln.format.startswith(A.MODEL_LOADED_LOG) and "/gpu/" in ln.path)
    out = []
    out += emit(start, process=WORKER)
    if target:
        fmt = A.BACKEND_FORCED_LOG if forced else A.BACKEND_SELECTED_LOG
        backend = line_of(plan, "attention_backend", "target", fmt)
        args = (f"AttentionBackendEnum.{target}",) if forced else (target, f"['{target}']")
        out += emit(backend, *args, process=WORKER)
    if inspection:
        shape = line_of(plan, "attention_backend", "target", "vLLM model structure")
        out += emit(shape, structure("Qwen3_5ForCausalLM", impls[target or "FLASH_ATTN"]), process=WORKER)
        if draft:
            out += emit(shape, structure("Qwen3_5MTP", impls[draft]), process=WORKER, time="12-01 23:37:40")
    out += emit(loaded, "12.3", 41.5, process=WORKER)
    if ready:
        ready_call = log_calls.calls_with_format(index, A.ENGINE_READY_LOG)[-1]
        out += record(ready_call.file, ready_call.line, ready_call.format % 20.5, process=WORKER)
    return out


def _verify(tree, tmp_path, review, lines):
    path = tmp_path / "startup.log"
    path.write_text("\n".join(lines) + "\n")
    return verify(index_for(tree), review, read_log(path), "startup.log")


def _row(result, knob, scope):
    return next(r for r in result.rows if r.knob == knob and r.scope == scope)


def test_plan_names_the_lines_that_show_the_drafts_backend(vllm_029):
    index = index_for(vllm_029)
    for path in (NESTED, BF16, FP8):
        plan = review_of(vllm_029, path).startup_evidence
        draft = next(r for r in plan.rows if r.knob == "attention_backend" and r.scope == "draft")
        assert draft.provable == "with-settings" and draft.run_with == ("VLLM_LOG_MODEL_INSPECTION=1",)
        telling = [ln for ln in draft.lines if ln.tells_draft]
        inspection = log_calls.calls_of_function(index, A.MODEL_STRUCTURE_FUNCTION)
        assert [(ln.path, ln.line) for ln in telling if ln.format == A.MODEL_STRUCTURE_LOG] == \
            [(c.path, c.line) for c in inspection]
        # the backend lines are on the draft's path too, but cannot tell the draft from the target
        forced = [c for c in log_calls.calls_with_format(index, A.BACKEND_FORCED_LOG) if c.path.endswith("cuda.py")]
        assert {(ln.path, ln.line) for ln in draft.lines if not ln.tells_draft} >= {(c.path, c.line) for c in forced}
    nested = review_of(vllm_029, NESTED).startup_evidence
    row = next(r for r in nested.rows if r.knob == "attention_backend" and r.scope == "draft")
    assert row.not_claimed == "TRITON_ATTN" and row.claim is None


def test_plain_successful_log_is_no_proof_of_the_nested_backend(vllm_029, tmp_path):
    """The seed's breakage probe: success without a draft-specific backend record."""
    review = review_of(vllm_029, NESTED)
    result = _verify(vllm_029, tmp_path, review, _log(vllm_029, review, target="FLASH_ATTN", draft=None,
                                                      inspection=False, forced=False))
    draft = _row(result, "attention_backend", "draft")
    assert draft.verdict == "not-shown" and "does not prove" in draft.basis
    assert result.exit_code == 2
    assert _row(result, "startup", "engine").verdict == "consistent"


def test_draft_structure_showing_triton_with_top_level_backend_is_consistent(vllm_029, tmp_path):
    review = review_of(vllm_029, BF16)
    result = _verify(vllm_029, tmp_path, review, _log(vllm_029, review, target="TRITON_ATTN", draft="TRITON_ATTN",
                                                      inspection=True))
    assert _row(result, "attention_backend", "draft").verdict == "consistent"
    assert _row(result, "attention_backend", "target").verdict == "consistent"
    assert _row(result, "model_runner", "engine").verdict == "consistent"
    assert result.exit_code != 1


def test_draft_structure_showing_flash_attention_is_contradicted(vllm_029, tmp_path):
    review = review_of(vllm_029, BF16)
    result = _verify(vllm_029, tmp_path, review, _log(vllm_029, review, target="TRITON_ATTN", draft="FLASH_ATTN",
                                                      inspection=True))
    row = _row(result, "attention_backend", "draft")
    assert row.verdict == "contradicted" and row.observed == ("FLASH_ATTN",)
    assert any("FlashAttentionImpl" in ref.text for ref in row.log)
    assert result.exit_code == 1


def test_log_of_another_release_is_refused(vllm_029, vllm_release, tmp_path):
    review = review_of(vllm_029, BF16)
    tree33 = vllm_release("0.33.0")
    from srcreview.evidence.plan import plan as make_plan

    review33 = review.model_copy(update={"startup_evidence": make_plan(index_for(tree33), review)})
    lines = _log(tree33, review33, target="TRITON_ATTN", draft="TRITON_ATTN", inspection=True)
    result = _verify(vllm_029, tmp_path, review, lines)
    assert not result.identified and result.exit_code == 65
    assert any("at this revision" in m.expected for m in result.mismatches)


def test_rejected_startup_is_matched_to_its_predicted_finding(vllm_029, tmp_path):
    review = review_of(vllm_029, BF16)
    from srcreview.model.findings import Anchor

    raise_at = log_calls.calls_with_format(index_for(vllm_029), A.BACKEND_FORCED_LOG)[-1]
    anchor = Anchor(url="https://example.invalid/x", path=raise_at.path, start_line=raise_at.line - 4,
                    end_line=raise_at.line - 1)
    plan = review.startup_evidence.model_copy(update={"rejection": (anchor,)})
    predicted = review.model_copy(update={"startup_evidence": plan})
    lines = _log(vllm_029, review, target=None, draft=None, inspection=False, ready=False)
    failed = log_calls.calls_with_format(index_for(vllm_029), A.ENGINE_FAILED_LOG)[0]
    lines += record(failed.file, failed.line, failed.format, level="ERROR", process=WORKER)
    lines += [f"({WORKER}) Traceback (most recent call last):",
              f'({WORKER})   File "/usr/lib/python3/site-packages/{raise_at.path}", line {raise_at.line - 2}, '
              "in get_attn_backend_cls",
              f"({WORKER}) ValueError: Selected backend AttentionBackendEnum.TRITON_ATTN is not valid"]
    result = _verify(vllm_029, tmp_path, predicted, lines)
    assert _row(result, "startup", "engine").verdict == "consistent"
    missed = _verify(vllm_029, tmp_path, review, lines)
    assert _row(missed, "startup", "engine").verdict == "contradicted" and missed.exit_code == 1


def test_review_json_carries_the_plan(vllm_029):
    from srcreview.report import review as report_review

    doc = json.loads(report_review.render([review_of(vllm_029, NESTED)]))
    block = doc["artifacts"]["startup_evidence"]
    assert block[0]["rows"] and block[0]["target"] == NESTED
    assert pytest is not None


def test_check_reads_a_startup_log_after_the_review(vllm_029, tmp_path, cli, monkeypatch):
    """`check --startup-log`: the review, then the log read against it; the worse exit code. The
    bf16 recipe passes the gate, its log with a FlashAttention draft is contradicted: exit 1."""
    from real_reviews import ROOT

    review = review_of(vllm_029, BF16)
    log = tmp_path / "startup.log"
    log.write_text("\n".join(_log(vllm_029, review, target="TRITON_ATTN", draft="FLASH_ATTN", inspection=True)) + "\n")
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "120")
    result = cli("check", BF16, "--startup-log", str(log), "--color", "never")
    assert result.code == 1, result.err
    gate = result.out.index("gate: passed")
    assert "contradicted" in result.out[gate:] and "FLASH_ATTN" in result.out[gate:]
    alone = cli("check", BF16, "--color", "never")
    assert alone.code == 0 and result.out.startswith(alone.out)
    refused = cli("check", BF16, "--startup-log", str(log), "--format", "json")
    assert refused.code == 64 and "srcreview verify" in refused.err


def test_the_plan_and_the_start_up_verdict_are_in_every_format(vllm_029):
    """Text (a section), JSON and the review format (a block), Markdown (a folded section) and
    SARIF (run properties): the same rows and the same start-up verdict."""
    from srcreview.report import markdown, sarif, terminal

    review = review_of(vllm_029, NESTED)
    rows = [text for text, _ in review.startup_evidence.row_lines()]
    assert rows and "base_loader.py:92" in " ".join(rows)
    md = markdown.render([review])
    assert review.startup_evidence.heading() in md and all(row.split(":")[0] in md for row in rows)
    assert review.startup.line() in md
    run = json.loads(sarif.render([review]))["runs"][0]
    assert run["properties"]["startupEvidence"][0]["rows"] == \
        json.loads(review.startup_evidence.model_dump_json())["rows"]
    assert run["properties"]["startup"][0]["verdict"] == review.startup.verdict
    text = " ".join(terminal.render(review).split())  # as words: the terminal wraps its lines
    assert review.startup_evidence.heading() in text and review.startup.line()[:40] in text
