"""The seed review's anchors against the real vLLM 0.29.0 source (obtained by the project's providers).

The seed (tests/data, byte-identical to what its authors wrote) cites 12 ranges; several do not
show what their purpose says at 98dff2a. The corrected ranges below were checked by reading
the release source; the test also checks their content, so a wrong range cannot pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from srcreview.audit.reviews import audit_review, load_review
from srcreview.core.errors import SourceUnavailable
from srcreview.index import Index

SEED = Path(__file__).parent.parent / "data" / "independent-review-thinkingcap-98dff2a.json"


def index_for(tree):
    """The Index as the command builds it: facts cached in the user cache, shared between runs."""
    from srcreview.index.cache import default_cache_dir

    return Index(tree, cache_dir=default_cache_dir())

# source_urls index -> (status, corrected path, start, end)
EXPECTED = {
    0: ("drifted", "vllm/config/vllm.py", 2562, 2589),
    1: ("drifted", "vllm/config/speculative.py", 411, 417),
    2: ("ok", None, None, None),
    3: ("ok", None, None, None),
    4: ("ok", None, None, None),
    5: ("drifted", "vllm/v1/worker/gpu/spec_decode/autoregressive/speculator.py", 312, 320),
    6: ("drifted", "vllm/v1/attention/backends/triton_attn.py", 294, 374),
    7: ("drifted", "vllm/v1/attention/backends/triton_attn.py", 482, 492),
    8: ("ok", None, None, None),
    9: ("ok", None, None, None),
    10: ("drifted", "vllm/engine/arg_utils.py", 1020, 1022),
    11: ("unverifiable", None, None, None),
}

# what each corrected range must show (plain substrings of the release source)
MUST_SHOW = {
    0: ('"mtp"', "speculative_config.method not in"),
    1: ("attention_backend: AttentionBackendEnum | None = None", "kv_cache_dtype: CacheDType | None = None",
        "the draft inherits the"),
    5: ("attn_metadata", "slot_mappings", "self._prefill("),
    6: ('"fp8_per_token_head"', "def supports_mm_prefix", "def supports_compute_capability"),
    7: ('startswith("fp8")', "has_device_capability(89)", "raise ValueError"),
    10: ('"--attention-backend"',),
}


@pytest.fixture(scope="module")
def seed_report(vllm_029):
    doc = load_review(SEED.read_bytes(), SEED.name)

    def tree_for(rev: str):
        if not vllm_029.revision.matches_commit(rev):
            raise SourceUnavailable(f"only 0.29.0 is available to this test, not {rev}")
        return vllm_029

    return audit_review(doc, SEED.name, tree_for, index_for)


def test_seed_is_the_users_file_unchanged():
    doc = json.loads(SEED.read_text())
    assert doc["schema_version"] == "operator-workflow/v1"
    assert len(doc["artifacts"]["pinned_runtime"]["source_urls"]) == len(EXPECTED)


def test_every_seed_anchor_has_a_status(seed_report):
    pointers = [e.pointer for e in seed_report.entries]
    assert pointers == [f"/artifacts/pinned_runtime/source_urls/{i}/url" for i in range(len(EXPECTED))]
    assert seed_report.summary() == {"ok": 5, "drifted": 6, "unverifiable": 1}
    assert seed_report.drifted


@pytest.mark.parametrize("number", sorted(EXPECTED))
def test_seed_anchor_verdict_and_corrected_range(seed_report, vllm_029, number):
    entry = seed_report.entries[number]
    status, path, start, end = EXPECTED[number]
    assert entry.status == status, entry
    if path is None:
        assert entry.corrected is None
        return
    corrected = entry.corrected
    assert (corrected.path, corrected.start_line, corrected.end_line) == (path, start, end)
    assert corrected.url == (f"https://github.com/vllm-project/vllm/blob/98dff2a81d747d1dba01a47f939f48c3526d4206/"
                             f"{path}#L{start}-L{end}")
    lines = vllm_029.read_text(path).splitlines()[start - 1:end]
    shown = "\n".join(lines)
    for needle in MUST_SHOW[number]:
        assert needle in shown, (number, needle)
    # and the anchored range really lacks at least one of them: the drift is real
    old = "\n".join(vllm_029.read_text(entry.path).splitlines()[entry.start_line - 1:entry.end_line])
    assert not all(needle in old for needle in MUST_SHOW[number])


def test_seed_unverifiable_anchor_says_why(seed_report):
    entry = seed_report.entries[11]
    assert entry.path == "tests/quantization/test_per_token_kv_cache.py"
    assert "names no identifier" in entry.reason
    assert "SM120" in entry.claimed_absent


def test_seed_negated_claim_is_not_required(seed_report):
    entry = seed_report.entries[3]  # "... loader does not apply speculative_config.attention_backend ..."
    assert entry.status == "ok"
    assert entry.claimed_absent == ("speculative_config.attention_backend",)


def test_cli_audit_of_the_seed_gates_on_drift(vllm_029, cli):
    """The command obtains 0.29.0 through the providers (the cache the fixture filled) and exits 1."""
    result = cli("audit", str(SEED), "--format", "json", "--no-progress")
    assert result.code == 1, result.err
    data = json.loads(result.out)
    assert data["summary"] == {"ok": 5, "drifted": 6, "unverifiable": 1}
    assert data["incomplete"] == []
    corrected = [(e["corrected"]["path"], e["corrected"]["start_line"], e["corrected"]["end_line"])
                 for e in data["entries"] if e["corrected"]]
    assert corrected == [(p, a, b) for _, (s, p, a, b) in sorted(EXPECTED.items()) if s == "drifted"]
    text = cli("audit", str(SEED), "--no-progress")
    assert text.code == 1
    assert "12 anchors: 5 ok, 6 drifted, 1 unverifiable" in text.out
    assert str(SEED.parent) not in text.out + result.out


def test_an_identifier_missing_from_the_file_is_found_where_0_29_0_has_it(vllm_029):
    sha = vllm_029.revision.sha
    doc = [{"url": f"https://github.com/vllm-project/vllm/blob/{sha}/vllm/config/speculative.py#L10-L20",
            "purpose": purpose} for purpose in ("load_eagle_model replaces the draft cache dtype",
                                                 "TritonAttentionBackend lists fp8_per_token_head")]
    report = audit_review(doc, "review.json", lambda rev: vllm_029, index_for)
    found = [(e.status, e.corrected.path, e.corrected.start_line, e.corrected.end_line) for e in report.entries]
    assert found == [
        ("drifted", "vllm/v1/worker/gpu/spec_decode/eagle/utils.py", 36, 114),  # def load_eagle_model, whole
        ("drifted", "vllm/v1/attention/backends/triton_attn.py", 274, 374),  # class TritonAttentionBackend, whole
    ]
    utils = vllm_029.read_text(found[0][1]).splitlines()
    assert utils[35].startswith("def load_eagle_model(") and "cache_dtype=speculative_config.kv_cache_dtype" in "\n".join(utils[35:114])
    triton = vllm_029.read_text(found[1][1]).splitlines()
    assert triton[273].startswith("class TritonAttentionBackend(") and triton[376].startswith("class TritonAttentionImpl(")


@pytest.mark.parametrize("rev", ["v0.29.0", "98dff2a"])
def test_a_tag_or_short_id_in_the_url_is_corrected_to_a_permalink(vllm_029, rev):
    from srcreview.model.revision import resolve_rev

    doc = [{"url": f"https://github.com/vllm-project/vllm/blob/{rev}/vllm/config/speculative.py#L385-L391",
            "purpose": "declared draft attention-backend and KV-dtype fields"}]

    def tree_for(written):
        assert resolve_rev(written).sha == vllm_029.revision.sha
        return vllm_029

    [entry] = audit_review(doc, "review.json", tree_for, index_for).entries
    assert entry.status == "drifted" and entry.rev == rev
    assert entry.corrected.url == ("https://github.com/vllm-project/vllm/blob/98dff2a81d747d1dba01a47f939f48c3526d4206/"
                                   "vllm/config/speculative.py#L411-L417")
