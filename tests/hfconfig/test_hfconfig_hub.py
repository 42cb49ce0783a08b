"""Model configs through huggingface_hub, against a Hub served on 127.0.0.1 through HF_ENDPOINT.

Each run is a fresh process (huggingface_hub reads its environment on import), as a
`srcreview check` is. The cache is a temporary HF_HOME, so a second run shows what a warm
cache answers offline.
"""

from __future__ import annotations

import hashlib
import json

import pytest
from hub_support import (
    GEMMA4_ASSISTANT,
    GEMMA4_TARGET,
    MULTI_LAYER_MTP,
    MULTI_LAYER_QUANT,
    QWEN35_GENERATION,
    QWEN35_MTP,
    dumps,
    hub_env,
    obtain_in_subprocess,
    serve_hub,
)

from srcreview.hfconfig import MODEL_CONFIG_UNKNOWN, MODEL_FILES

TOKEN = "hf_TESTsecretTOKENthatMustNeverBeShown"
QWEN = "Qwen/Qwen3.5-27B"


@pytest.fixture
def hub():
    with serve_hub() as served:
        served.publish(QWEN, {"config.json": QWEN35_MTP, "generation_config.json": QWEN35_GENERATION})
        served.publish("google/gemma-4-31B-it", {"config.json": GEMMA4_TARGET})
        served.publish("google/gemma-4-31B-it-assistant", {"config.json": GEMMA4_ASSISTANT})
        served.publish("deepseek-ai/mtp3", {"config.json": MULTI_LAYER_MTP, "hf_quant_config.json": MULTI_LAYER_QUANT},
                       branches=("main", "v1"))
        served.publish("org/private", {"config.json": GEMMA4_ASSISTANT}, token=TOKEN)
        served.publish("org/other-token", {"config.json": GEMMA4_ASSISTANT}, token="hf_someone_elses")
        served.publish("org/no-config", {"README.md": b"# weights only\n"})
        served.publish("org/broken", {"config.json": b'{"model_type": "qwen3_5",\n  "architectures": [}\n'})
        served.publish("org/not-a-hub", {"config.json": GEMMA4_TARGET}, hub_headers=False)
        served.renamed["old-org/qwen"] = QWEN
        yield served


def _resolve_requests(hub) -> list[tuple[str, str, str | None]]:
    return [r for r in hub.requests if "/resolve/" in r[1]]


def test_a_hub_config_is_read_at_its_commit_with_digests_and_the_token_never_shown(hub, tmp_path):
    calls = [(QWEN, None, None), ("google/gemma-4-31B-it-assistant", None, None), ("deepseek-ai/mtp3@v1", None, None),
             ("org/private", None, None), ("old-org/qwen", None, None)]
    facts, stdout, stderr = obtain_in_subprocess(calls, hub_env(tmp_path / "hf", hub.endpoint, HF_TOKEN=TOKEN))
    qwen, assistant, mtp3, private, renamed = facts

    commit = hub.repos[QWEN].commit
    assert (qwen["source"], qwen["kind"], qwen["revision"], qwen["commit"]) == ("hub", "hub", None, commit)
    assert qwen["files"] == [{"path": name, "sha256": hashlib.sha256(dumps(doc)).hexdigest(), "size": len(dumps(doc)),
                              "commit": commit}
                             for name, doc in (("config.json", QWEN35_MTP), ("generation_config.json", QWEN35_GENERATION))]
    assert qwen["documents"] == {"config.json": QWEN35_MTP, "generation_config.json": QWEN35_GENERATION}
    assert qwen["unresolved"] == [] and qwen["unknown_reason"] is None and qwen["tags"] == []
    assert assistant["documents"]["config.json"]["model_type"] == "gemma4_assistant"
    assert (mtp3["revision"], mtp3["documents"]["hf_quant_config.json"]) == ("v1", MULTI_LAYER_QUANT)
    assert private["documents"]["config.json"] == GEMMA4_ASSISTANT  # the token from HF_TOKEN was sent
    assert renamed["documents"] == qwen["documents"] and renamed["ref"] == "old-org/qwen"  # the Hub's 307

    resolved = _resolve_requests(hub)
    # config.json at the revision asked for, every other file at the commit it resolved to
    assert ("HEAD", f"/{QWEN}/resolve/main/config.json", f"Bearer {TOKEN}") in resolved
    assert {p.split("/resolve/")[1].split("/")[0] for _, p, _ in resolved if p.startswith(f"/{QWEN}/") and
            not p.endswith("/config.json")} == {commit}
    assert hub.files_requested() - {"agent-harnesses"} <= set(MODEL_FILES)  # never weights
    assert TOKEN not in stdout + stderr
    assert stderr == ""  # no progress bar, no warning: nothing prints below the CLI


def test_failures_say_why_once_and_never_raise(hub, tmp_path):
    calls = [("org/absent", None, None), ("org/other-token", None, None), (QWEN, "no-such-branch", None),
             ("org/no-config", None, None), ("org/broken", None, None), ("org/not-a-hub", None, None)]
    facts, stdout, stderr = obtain_in_subprocess(calls, hub_env(tmp_path / "hf", hub.endpoint, HF_TOKEN=TOKEN))
    reasons = [f["unknown_reason"] for f in facts]
    assert all(f["tags"] == [MODEL_CONFIG_UNKNOWN] and f["source"] == "none" and f["documents"] == {} for f in facts)
    assert reasons == [
        "model config of org/absent: the repository does not exist, or is private and the token in use cannot "
        "read it (HTTP 404)",
        "model config of org/other-token: the repository does not exist, or is private and the token in use "
        "cannot read it (HTTP 404)",
        f"model config of {QWEN}@no-such-branch: revision no-such-branch does not exist in the repository",
        "model config of org/no-config: the repository has no config.json at the default branch",
        "model config of org/broken: config.json is not valid JSON: Expecting value at line 2 column 21",
        "model config of org/not-a-hub: the Hub endpoint's answer for config.json lacks the Hub's headers "
        "(check HF_ENDPOINT), and it is not in the huggingface_hub cache",
    ]
    assert TOKEN not in stdout + stderr and stderr == ""


def test_without_a_token_a_private_repository_is_a_401(hub, tmp_path):
    facts, _, _ = obtain_in_subprocess([("org/private", None, None)], hub_env(tmp_path / "hf", hub.endpoint))
    assert facts[0]["unknown_reason"].endswith("cannot read it (HTTP 401)")
    assert all(auth is None for _, _, auth in _resolve_requests(hub))


def test_offline_a_warm_cache_answers_exactly_as_online_and_a_cold_one_says_so(hub, tmp_path):
    home = tmp_path / "hf"
    calls = [(QWEN, None, None), ("deepseek-ai/mtp3@v1", None, None)]
    online, _, _ = obtain_in_subprocess(calls, hub_env(home, hub.endpoint))
    asked = len(hub.requests)

    warm, stdout, stderr = obtain_in_subprocess([*calls, ("org/private", None, None)],
                                                hub_env(home, hub.endpoint, HF_HUB_OFFLINE="1"))
    assert json.dumps(warm[:2], sort_keys=True) == json.dumps(online, sort_keys=True)  # .no_exist answers too
    assert warm[2]["unknown_reason"] == ("model config of org/private: config.json is not in the huggingface_hub "
                                         "cache and the Hub is offline (HF_HUB_OFFLINE)")
    assert len(hub.requests) == asked and stderr == ""  # offline: not one request

    by_argument, _, _ = obtain_in_subprocess([(QWEN, None, True)], hub_env(home, hub.endpoint))
    assert by_argument == online[:1] and len(hub.requests) == asked

    cold, _, _ = obtain_in_subprocess(calls, hub_env(tmp_path / "cold", hub.endpoint, HF_HUB_OFFLINE="1"))
    assert [f["tags"] for f in cold] == [[MODEL_CONFIG_UNKNOWN]] * 2 and len(hub.requests) == asked
    assert cold[0]["unknown_reason"].endswith("is not in the huggingface_hub cache and the Hub is offline (HF_HUB_OFFLINE)")


def test_offline_an_optional_file_never_asked_for_stays_unresolved(hub, tmp_path):
    """A cache filled by another tool (config.json only) cannot say whether the other files exist."""
    home = tmp_path / "hf"
    obtain_in_subprocess([(QWEN, None, None)], hub_env(home, hub.endpoint))
    snapshot = next((home / "hub").glob("models--Qwen--Qwen3.5-27B/.no_exist/*"))
    (snapshot / "quant_config.json").unlink()

    facts, _, _ = obtain_in_subprocess([(QWEN, None, None)], hub_env(home, hub.endpoint, HF_HUB_OFFLINE="1"))
    assert facts[0]["unknown_reason"] is None and facts[0]["unresolved"] == ["quant_config.json"]
