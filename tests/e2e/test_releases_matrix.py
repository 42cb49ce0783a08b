"""Real releases 0.25.0-0.33.0, both model runners, several speculative methods (marker `releases`).

Each case reviews a recipe at a release with every shipped rule and checks the draft-scope
knob row the source decides there (read by hand at each release: which class the runner
builds, whether it loads a draft model, which config get_model receives). Where the source
leaves it to the model (a speculator chosen by the draft's model type), only an open answer
is right. A case never accepts a confident answer the release does not support.

    .venv/bin/pytest -m releases tests/e2e/test_releases_matrix.py
"""

from __future__ import annotations

import pytest
from recipe_support import build_recipe

from srcreview.engine.run import review
from srcreview.model.recipe import Recipe
from srcreview.model.revision import parse_version

pytestmark = [pytest.mark.network, pytest.mark.releases]

RELEASES = ("0.25.0", "0.26.0", "0.27.0", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0")
NESTED_BACKEND = ("speculative_config.attention_backend", "draft")
TOP_KV = ("kv_cache_dtype", "draft")
OPEN = ("undecided",)


def _v(version: str):
    return parse_version(version)


def expected(version: str, runner: str, method: str, row) -> tuple[str, ...] | str:
    """The knob status(es) the source of `version` admits, "rejected" (a certain start-up refusal)
    or "open refusal" (one the recipe leaves to what it does not state)."""
    v = _v(version)
    if runner == "v1":
        if method in ("ngram", "suffix"):
            return ("ignored",)  # no draft model
        if row == NESTED_BACKEND:
            return ("applied",)  # the V1 draft config always takes the nested backend
        return ("applied",)  # the top-level KV dtype is inherited
    if method == "ngram":
        return "rejected" if v < _v("0.32.0") else ("ignored",)
    if method == "draft_model":
        # refused by the V2 gate up to 0.30, unless SpeculativeConfig re-detects the method from the
        # draft's architectures or model type (to mtp, say), which the recipe does not give
        return "open refusal" if v < _v("0.31.0") else ("ignored", "undecided")
    if method == "eagle" and row == NESTED_BACKEND:
        return ("ignored",) if v < _v("0.30.0") else ("applied",)
    if method == "mtp" and row == NESTED_BACKEND:
        # Gemma4 keeps the target's backend; the others ignore it up to 0.29 and apply it after
        return ("ignored",) if v < _v("0.30.0") else OPEN
    if method == "dflash" and row == TOP_KV:
        return ("applied", "undecided")  # inherited, unless a model-dependent variant re-runs hooks
    raise AssertionError((version, runner, method, row))


CASES = [
    ("v1", "eagle", NESTED_BACKEND), ("v1", "ngram", NESTED_BACKEND), ("v1", "suffix", NESTED_BACKEND),
    ("v1", "eagle", TOP_KV),
    ("v2", "eagle", NESTED_BACKEND), ("v2", "mtp", NESTED_BACKEND), ("v2", "ngram", NESTED_BACKEND),
    ("v2", "draft_model", NESTED_BACKEND), ("v2", "dflash", TOP_KV),
]


@pytest.fixture(scope="module")
def index_of(vllm_release):
    """One Index per release, its facts kept in the user cache between runs."""
    from srcreview.index import Index
    from srcreview.source.cache import default_root

    made = {}

    def get(version: str):
        if version not in made:
            made[version] = Index(vllm_release(version), cache_dir=default_root()[0])
        return made[version]

    return get


def _recipe(runner: str, method: str) -> Recipe:
    values = {"speculative_config.method": method, "speculative_config.num_speculative_tokens": 3,
              "speculative_config.attention_backend": "TRITON_ATTN", "kv_cache_dtype": "fp8",
              "speculative_config.model": "org/draft-model"}
    if method in ("ngram", "suffix", "mtp"):
        del values["speculative_config.model"]  # these take no separate draft checkpoint
    env = {"VLLM_USE_V2_MODEL_RUNNER": "1" if runner == "v2" else "0"}
    return build_recipe(values, env=env, env_line=40, name=f"{runner}-{method}", path="matrix.toml")


@pytest.mark.parametrize("version", RELEASES)
@pytest.mark.parametrize("runner, method, row", CASES, ids=[f"{r}-{m}-{k[0].split('.')[-1]}" for r, m, k in CASES])
def test_release_matrix(index_of, version, runner, method, row):
    if method == "suffix" and runner == "v1" and _v(version) < _v("0.26.0"):
        pytest.skip("no suffix proposer before 0.26.0")
    index = index_of(version)
    result = review(_recipe(runner, method), index.tree, index=index)
    assert result.runner.value == runner, result.runner.reason
    want = expected(version, runner, method, row)
    rejected = [f for f in result.findings if f.rule == "startup-rejected"]
    if want == "rejected":
        assert [f.classification for f in rejected] == ["confirmed"], [f.message for f in result.findings]
        return
    if want == "open refusal":
        assert [f.classification for f in rejected] == ["plausible"], [f.message for f in result.findings]
        method_row = {(k.key, k.scope): k for k in result.knobs}[("speculative_config.method", "engine")]
        assert method_row.status == "undecided", (method_row.status, method_row.reason)
        return
    rows = {(k.key, k.scope): k for k in result.knobs}
    knob = rows.get(row)
    if row[0].startswith("speculative_config.") and knob is None and _v(version) < _v("0.26.0"):
        return  # speculative_config.kv_cache_dtype did not exist: reported as an unknown key instead
    assert knob is not None, sorted(rows)
    assert knob.status in want, (knob.status, want, knob.tags,
                                 [f.message for f in result.findings if f.rule.startswith("spec-")])
    for finding in result.findings:
        if finding.classification in ("confirmed", "refuted"):
            assert not finding.assumptions
