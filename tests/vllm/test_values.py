"""What vLLM would accept (issue 11): each value against its declarations and validators.

`fixtures/vllm_snippets/config_values` holds one declaration shape per config class (see its
README); the release tests ask the same of real vLLM, one row of the issue's table each.
"""

from __future__ import annotations

import math

import pytest
from recipe_support import FIXTURES, build_recipe, fixture_tree

from srcreview.engine.run import review

TREE = FIXTURES / "config_values"
SPEC = {"speculative_config.method": "mtp", "speculative_config.num_speculative_tokens": 3}


def _review(settings: dict, tree=None, index=None):
    tree = tree or fixture_tree(TREE)
    return review(build_recipe(settings), tree, index=index)


def _knob(result, key: str):
    return next(k for k in result.knobs if k.key == key and k.scope in ("engine", "target"))


def _finding(result, key: str):
    return next((f for f in result.findings if f.rule == "engine-value-admitted" and f.knobs == (key,)), None)


def _mark(path: str, label: str) -> int:
    lines = (TREE / path).read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if f"# mark: {label}" in line)


# -- declarations: scalar types and Field constraints --------------------------------------------

REFUSED = [
    ("max_num_seqs", "one", "scheduler.py", "max_num_seqs"),
    ("max_num_seqs", -5, "scheduler.py", "max_num_seqs"),
    ("max_num_seqs", 0, "scheduler.py", "max_num_seqs"),
    ("max_num_seqs", math.nan, "scheduler.py", "max_num_seqs"),
    ("max_num_seqs", math.inf, "scheduler.py", "max_num_seqs"),
    ("max_num_seqs", 2.5, "scheduler.py", "max_num_seqs"),
    ("long_prefill_token_threshold", 100, "scheduler.py", "multiple_of"),
    ("gpu_share", 0.0, "scheduler.py", "gpu_share"),
    ("gpu_share", 1.5, "scheduler.py", "gpu_share"),
    ("gpu_share", math.nan, "scheduler.py", "gpu_share"),
    ("async_scheduling", "maybe", "scheduler.py", "bool"),
    ("policy", "x", "scheduler.py", "policy"),
    ("policy", 3, "scheduler.py", "policy"),
    ("speculative_config.num_speculative_tokens", 0, "speculative.py", "num_speculative_tokens"),
    ("speculative_config.draft_tensor_parallel_size", 0, "speculative.py", "draft_tp"),
]


@pytest.mark.parametrize("key,value,path,mark", REFUSED, ids=[f"{k}={v!r}" for k, v, _, _ in REFUSED])
def test_a_value_the_declaration_refuses_is_invalid(key, value, path, mark):
    result = _review({**SPEC, key: value})
    assert _knob(result, key).status == "invalid-value"
    finding = _finding(result, key)
    assert finding is not None and finding.classification == "confirmed"
    line = _mark(f"vllm/config/{path}", mark)
    assert any(a.path == f"vllm/config/{path}" and a.start_line <= line <= a.end_line for a in finding.evidence)


ADMITTED = [
    ("max_num_seqs", 1), ("max_num_seqs", "5"), ("max_num_seqs", 5.0), ("max_num_seqs", 10**30),
    ("long_prefill_token_threshold", 64), ("gpu_share", 1), ("gpu_share", "0.5"), ("policy", "priority"), ("stream_interval", "auto"), ("kv_cache_dtype", "fp8_e4m3"),
    ("speculative_config.num_speculative_tokens", 1), ("speculative_config.draft_tensor_parallel_size", 2),
]


@pytest.mark.parametrize("key,value", ADMITTED, ids=[f"{k}={v!r}" for k, v in ADMITTED])
def test_a_value_pydantic_admits_stays_accepted(key, value):
    result = _review({**SPEC, key: value})
    assert _knob(result, key).status == "accepted"
    assert _finding(result, key) is None


@pytest.mark.parametrize("value", ["yes", 1, True])
def test_a_value_a_hook_rewrites_is_overridden_not_accepted(value):
    """pydantic admits it (as True), then VllmConfig.__post_init__ turns async scheduling off
    under a speculative config: the engine runs with False, anchored on that store."""
    result = _review({**SPEC, "async_scheduling": value})
    knob = _knob(result, "async_scheduling")
    assert knob.status == "overridden" and knob.effective == "False"
    line = next(n for n, text in enumerate((TREE / "vllm/config/vllm.py").read_text().splitlines(), 1)
                if "async_scheduling = False" in text)
    assert [(a.path, a.start_line) for a in knob.evidence] == [("vllm/config/vllm.py", line)]
    assert _finding(result, "async_scheduling") is None


def test_the_field_refusal_is_reported_once_not_also_as_a_start_up_rejection():
    """pydantic stops at `Field(gt=0)`: the model validator raising on the same value never runs."""
    result = _review({**SPEC, "speculative_config.num_speculative_tokens": 0})
    assert not [f for f in result.findings if f.rule == "startup-rejected"]


# -- `X | str` with a validator against a module-level list ----------------------------------------

def test_a_string_the_validator_refuses_is_invalid_with_the_raise_as_anchor():
    result = _review({**SPEC, "kv_cache_dtype": "fp8_e4m3fn"})
    assert _knob(result, "kv_cache_dtype").status == "invalid-value"
    finding = _finding(result, "kv_cache_dtype")
    raise_line = _mark("vllm/config/cache.py", "cache_dtype_raise")
    first = finding.evidence[0]
    assert (first.path, first.start_line) == ("vllm/config/cache.py", raise_line)
    assert "CacheConfig._validate_cache_dtype" in finding.message and "'fp8_e4m3'" in finding.message  # did you mean


def test_a_before_validator_decides_the_value_the_declaration_sees():
    """`stream_interval = "auto"` is not an int, but the before-validator maps it to 1."""
    result = _review({**SPEC, "stream_interval": "auto"})
    assert _knob(result, "stream_interval").status == "accepted"
    result = _review({**SPEC, "stream_interval": "often"})
    assert _knob(result, "stream_interval").status == "invalid-value"


# -- Literals: long, composed of aliases ----------------------------------------------------------

def test_a_literal_of_more_than_two_thousand_characters_is_read_whole():
    text = (TREE / "vllm/config/speculative.py").read_text()
    assert len(text.split("MTPModelTypes = Literal[")[1].split("]")[0]) > 2000
    for method in ("mtp", "family99_draft_mtp", "family00_draft_mtp", "eagle3", "ngram"):
        assert _knob(_review({**SPEC, "speculative_config.method": method}), "speculative_config.method").status \
            == "accepted", method
    result = _review({**SPEC, "speculative_config.method": "eagle4"})
    assert _knob(result, "speculative_config.method").status == "invalid-value"
    assert "Did you mean 'eagle'" in _finding(result, "speculative_config.method").message


# -- the declaration model itself -----------------------------------------------------------------

def test_admission_mirrors_pydantic_lax_mode():
    from srcreview.vllm.declarations import Declared, Option, check

    def verdict(kind, value, constraints=()):
        return check(Declared((Option(kind),), tuple(constraints), kind), value).outcome

    assert verdict("int", "5") == "admitted" and verdict("int", " 7 ") == "admitted"
    assert verdict("int", 5.5) == "refused" and verdict("int", math.nan) == "refused"
    assert verdict("float", math.nan) == "admitted" and verdict("float", math.nan, [("ge", 0)]) == "refused"
    assert verdict("float", math.inf, [("gt", 0)]) == "admitted"
    assert verdict("float", math.inf, [("allow_inf_nan", False)]) == "refused"
    assert verdict("str", 5) == "refused" and verdict("bool", "off") == "admitted" and verdict("bool", 2) == "refused"
    assert verdict("list", "a") == "refused" and verdict("dict", {"a": 1}) == "admitted"
    unknown = check(Declared((Option("unknown", text="HfOverrides"),), (), "HfOverrides"), {"a": 1})
    assert unknown.outcome == "unknown"


def test_an_annotation_not_modelled_leaves_the_knob_undecided(tmp_path):
    import shutil

    shutil.copytree(TREE, tmp_path / "tree")
    path = tmp_path / "tree" / "vllm/config/scheduler.py"
    path.write_text(path.read_text().replace("policy: str = Field(", "policy: PolicyName = Field(")
                    .replace("DEFAULT_MAX_NUM_SEQS = 128", "DEFAULT_MAX_NUM_SEQS = 128\nPolicyName = make_type()"))
    tree = fixture_tree(tmp_path / "tree")
    result = _review({**SPEC, "policy": "priority"}, tree=tree)
    assert _knob(result, "policy").status == "undecided"
    finding = _finding(result, "policy")
    assert finding.classification == "plausible" and finding.assumptions


def test_an_init_var_is_validated_as_its_type(tmp_path):
    """A pydantic dataclass validates an `InitVar[X]` field as X (0.33.0's ModelConfig declares
    mm_encoder_tp_mode and others so)."""
    import shutil

    shutil.copytree(TREE, tmp_path / "tree")
    path = tmp_path / "tree" / "vllm/config/scheduler.py"
    path.write_text(path.read_text().replace("from typing import Any", "from dataclasses import InitVar\n"
                                             "from typing import Any, Literal")
                    .replace("policy: str = Field(", 'policy: InitVar[Literal["fcfs", "priority"]] = Field('))
    tree = fixture_tree(tmp_path / "tree")
    assert _knob(_review({**SPEC, "policy": "priority"}, tree=tree), "policy").status == "accepted"
    refused = _review({**SPEC, "policy": "lottery"}, tree=tree)
    assert _knob(refused, "policy").status == "invalid-value"
    assert "not one of the Literal's 2 members" in _finding(refused, "policy").message


# -- real releases: each row of the table -------------------------------------------------

def _real(vllm_release, version: str, settings: dict):
    from real_reviews import index_for

    tree = vllm_release(version)
    return _review(settings, tree=tree, index=index_for(tree))


ROWS = [
    ("0.29.0", "max_num_seqs", "one", "vllm/config/scheduler.py"),
    ("0.29.0", "max_num_seqs", -5, "vllm/config/scheduler.py"),
    ("0.29.0", "max_num_seqs", math.nan, "vllm/config/scheduler.py"),
    ("0.33.0", "max_num_seqs", -5, "vllm/config/scheduler.py"),
    ("0.32.0", "speculative_config.num_speculative_tokens", 0, "vllm/config/speculative.py"),
    ("0.32.0", "speculative_config.draft_tensor_parallel_size", 0, "vllm/config/speculative.py"),
    ("0.33.0", "kv_cache_dtype", "fp8_e4m3fn", "vllm/config/cache.py"),
    ("0.29.0", "speculative_config.method", "eagle4", "vllm/config/speculative.py"),
]


@pytest.mark.releases
@pytest.mark.parametrize("version,key,value,path", ROWS, ids=[f"{v}-{k}={x!r}" for v, k, x, _ in ROWS])
def test_real_release_refuses_the_value(vllm_release, version, key, value, path):
    result = _real(vllm_release, version, {**SPEC, key: value})
    assert _knob(result, key).status == "invalid-value"
    finding = _finding(result, key)
    assert finding.classification == "confirmed" and finding.evidence[0].path == path
    assert not [f for f in result.findings if f.rule == "startup-rejected"]  # one cause, reported once


@pytest.mark.releases
def test_real_release_kv_cache_dtype_validator_suggests_the_close_value(vllm_release):
    result = _real(vllm_release, "0.33.0", {**SPEC, "kv_cache_dtype": "fp8_e4m3fn"})
    finding = _finding(result, "kv_cache_dtype")
    assert "_validate_cache_dtype" in finding.evidence[0].symbol and "Did you mean 'fp8_e4m3'" in finding.message


VALID = {"max_model_len": 16384, "max_num_seqs": 1, "attention_backend": "TRITON_ATTN",
         "kv_cache_dtype": "fp8_per_token_head", **SPEC}


@pytest.mark.releases
@pytest.mark.parametrize("version", ["0.29.0", "0.32.0", "0.33.0"])
def test_real_release_admits_valid_values(vllm_release, version):
    result = _real(vllm_release, version, VALID)
    for key in VALID:
        assert _knob(result, key).status != "invalid-value", key
    assert _finding(result, "max_num_seqs") is None and _finding(result, "speculative_config.method") is None


@pytest.mark.releases
def test_real_release_refuses_a_nested_value_where_the_draft_takes_it(vllm_release, tmp_path):
    """0.33.0 declares `speculative_config.kv_cache_dtype: CacheDType | str | None` (any string),
    but the MTP draft's config copy (`replace` of the cache config) runs CacheConfig's validator
    on it: refused, once the model's config says which speculator takes the nested value;
    without it, the refusal is open."""
    from hub_support import QWEN35_MTP, write_model
    from real_reviews import index_for

    from srcreview.engine.run import review
    from srcreview.hfconfig.binding import with_model_configs
    from srcreview.model.recipe import parse_recipe

    write_model(tmp_path / "qwen", {"config.json": QWEN35_MTP})
    text = ('[recipe]\nname = "nested"\nmodel = "./qwen"\n[hardware]\ngpu = "NVIDIA GeForce RTX 5090"\n'
            'compute_capability = "12.0"\n[engine.speculative_config]\nmethod = "mtp"\nnum_speculative_tokens = 3\n'
            'kv_cache_dtype = "fp8_e4m3fn"\n[env]\nVLLM_USE_V2_MODEL_RUNNER = "1"\n')
    tree = vllm_release("0.33.0")
    key = "speculative_config.kv_cache_dtype"
    for mode, status, verdict in (("hub", "invalid-value", "confirmed"), ("off", "undecided", "plausible")):
        recipe = with_model_configs(parse_recipe(text, "nested.toml"), base_dir=tmp_path, mode=mode)
        result = review(recipe, tree, index=index_for(tree))
        assert next(k for k in result.knobs if k.key == key and k.scope == "draft").status == status
        finding = _finding(result, key)
        assert finding.classification == verdict
        assert any(a.path == "vllm/config/cache.py" and "_validate_cache_dtype" in a.symbol for a in finding.evidence)
