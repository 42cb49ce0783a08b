"""The differential oracle (issue 23): real vLLM's config construction against srcreview's
start-up verdict, on the generated recipes of generate.py.

    .venv/bin/pytest -m differential tests/differential -s

Marked `differential` and left out of the default run: it installs the real vLLM wheels of
each release with torch (several GB per release, under the user cache) and asks vLLM about
every recipe (minutes per release). docs/differential.md says what is patched and what is out
of reach. The tests without the marker check the harness itself (no vLLM, no srcreview run).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import generate  # noqa: E402
import srcreview_side  # noqa: E402

RELEASES = ("0.29.0", "0.33.0")


@pytest.mark.differential
@pytest.mark.parametrize("release", RELEASES)
def test_srcreview_agrees_with_vllm(release):
    import run

    table = run.differential(release)
    print(table["text"])
    totals = table["totals"]
    decided = sum(totals.values()) - totals["environment-only"]
    assert decided >= 300, f"only {decided} recipes decided by vLLM {release}"
    # srcreview does not yet prove start-up: this fails today, with the table as the message
    assert totals["missed"] == 0 and totals["confident wrong"] == 0, table["text"]


def test_cases_are_deterministic_and_unique():
    a, b = generate.cases(), generate.cases()
    assert a == b
    assert len({c["id"] for c in a}) == len(a) >= 300
    assert {c["cls"] for c in a} == {"wrong-type", "bounds", "cross-field", "v2-gate", "backend", "max-model-len",
                                     "hook-overwrite", "coercion", "control"}


def test_recipe_states_what_the_oracle_runs(tmp_path):
    import tomllib

    case = next(c for c in generate.cases() if c["id"] == "v2-gate/v2=1-eagle3-pp2")
    path = srcreview_side.write_case(case, tmp_path)
    recipe = tomllib.loads(path.read_text())
    assert recipe["recipe"]["model"] == "./model"
    assert recipe["hardware"] == {"gpu": "NVIDIA GeForce RTX 5090", "compute_capability": "12.0", "memory_gib": 32,
                                  "gpus": 8}
    assert recipe["engine"]["skip_tokenizer_init"] is True and recipe["engine"]["load_format"] == "dummy"
    assert recipe["engine"]["pipeline_parallel_size"] == 2
    assert recipe["engine"]["speculative_config"] == {"method": "eagle3", "num_speculative_tokens": 3,
                                                      "model": "./draft"}
    assert recipe["env"] == {"VLLM_USE_V2_MODEL_RUNNER": "1"}
    assert (path.parent / "model" / "config.json").is_file() and (path.parent / "draft" / "config.json").is_file()
    assert "runtime" not in recipe  # no venv: the transformers version stays open


def test_recipe_states_the_oracle_venvs_transformers(tmp_path):
    """The version the oracle venv installed (its installed.json) is the recipe's, so srcreview
    reads the config class that venv builds; srcreview parses what is written."""
    import tomllib

    from srcreview.model.recipe import load_recipe

    installed = {"vllm": "0.29.0", "packages": {"Transformers": "5.10.4", "torch": "2.9.0", "vllm": "0.29.0"}}
    packages = srcreview_side.runtime_packages(installed)
    assert packages == {"transformers": "5.10.4"}
    assert srcreview_side.runtime_packages({"packages": {"torch": "2.9.0"}}) == {}
    case = next(c for c in generate.cases() if c["cls"] == "control")
    path = srcreview_side.write_case(case, tmp_path, packages)
    assert tomllib.loads(path.read_text())["runtime"] == {"packages": {"transformers": "5.10.4"}}
    assert load_recipe(path).runtime.packages == {"transformers": "5.10.4"}


def _review(knobs=(), findings=(), incomplete=None):
    return {"knobs": [{"key": k, "scope": "engine", "status": s} for k, s in knobs],
            "findings": [{"rule": r, "kind": kind} for r, kind in findings], "incomplete": incomplete}


def test_verdict():
    v = srcreview_side.srcreview_verdict
    assert v(_review([("max_model_len", "accepted")]))[0] == "starts"
    assert v(_review([("max_model_len", "accepted")], [("startup-rejected", "problem")]))[0] == "rejected"
    assert v(_review([("max_num_seqs", "invalid-value")]))[0] == "rejected"
    assert v(_review([("max_num_seqz", "unknown-knob")]))[0] == "rejected"
    assert v(_review([("attention_backend", "undecided")]))[0] == "undecided"
    assert v(_review([("attention_backend", "applied")], [("attention-backend-admitted", "open-question")]))[0] \
        == "undecided"
    # an open question of a rule that is not about start-up leaves the verdict alone
    assert v(_review([("kv_cache_dtype", "applied")], [("spec-draft-kv-cache-dtype-inherits", "open-question")]))[0] \
        == "starts"
    assert v(_review([("kv_cache_dtype", "applied")], incomplete={"reason": "x"}))[0] == "undecided"
    assert v(_review([("enforce_eager", "overridden")]))[0] == "starts"
    # the review's own start-up verdict, when it says one, is what srcreview claims
    assert v({"startup": {"verdict": "no-refusal-found", "reasons": []}, "knobs": []}) == ("starts", "")
    assert v({"startup": {"verdict": "undecided", "reasons": ["a", "b"]}}) == ("undecided", "a, b")


def test_refusal_rules_are_the_rules_that_stop_startup():
    """The harness's fallback list and the rules' own `stops_startup` say the same."""
    from srcreview.rules.loader import load_rules

    assert srcreview_side.REFUSAL_RULES == {r.id for r in load_rules() if r.stops_startup}


def test_cells():
    c = srcreview_side.cell
    assert c("starts", "starts") == c("rejected", "rejected") == "agree"
    assert c("rejected", "starts") == "missed"
    assert c("starts", "rejected") == "confident wrong"
    assert c("starts", "undecided") == c("rejected", "undecided") == "undecided"
    assert c("environment", "starts") == "environment-only"
