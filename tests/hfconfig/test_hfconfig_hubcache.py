"""The huggingface_hub cache read directly (srcreview.hfconfig.hubcache) answers as huggingface_hub
does, on caches huggingface_hub wrote from the Hub served on 127.0.0.1; and a review that need not
ask the Hub does not import the library.

Each comparison runs in a fresh process (huggingface_hub reads its environment on import).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hub_support import (
    GEMMA4_TARGET,
    MULTI_LAYER_MTP,
    MULTI_LAYER_QUANT,
    QWEN35_GENERATION,
    QWEN35_MTP,
    hub_env,
    obtain_in_subprocess,
    serve_hub,
)

from srcreview.hfconfig import MODEL_FILES

QWEN = "Qwen/Qwen3.5-27B"

_COMPARE = """
import json, sys
from huggingface_hub import _CACHED_NO_EXIST, constants, try_to_load_from_cache
from srcreview.hfconfig.hubcache import NO_EXIST, HubSettings, lookup, snapshot_file

def shown(found):
    return "no-exist" if found is _CACHED_NO_EXIST or found is NO_EXIST else found

settings = HubSettings.from_environment()
out = {"settings": [[settings.cache_dir, settings.offline, settings.endpoint],
                    [constants.HF_HUB_CACHE, constants.is_offline_mode(), constants.ENDPOINT]], "lookups": []}
for repo, name, revision in json.loads(sys.argv[1]):
    ours = shown(lookup(settings.cache_dir, repo, name, revision))
    theirs = shown(try_to_load_from_cache(repo, name, revision=revision))
    pinned = snapshot_file(settings.cache_dir, repo, name, revision) if revision and len(revision) == 40 else None
    out["lookups"].append([repo, name, revision, ours, theirs, pinned])
print(json.dumps(out))
"""

_OBTAIN_IMPORTS = """
import json, sys
from srcreview.hfconfig import obtain_model_config, parse_model_ref
calls = json.loads(sys.argv[1])
facts = [obtain_model_config(parse_model_ref(text), offline=offline).to_json() for text, offline in calls]
print(json.dumps({"facts": facts, "imported": "huggingface_hub" in sys.modules}, sort_keys=True))
"""


def _run(script: str, argument, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", script, json.dumps(argument)], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def hub():
    with serve_hub() as served:
        served.publish(QWEN, {"config.json": QWEN35_MTP, "generation_config.json": QWEN35_GENERATION})
        served.publish("deepseek-ai/mtp3", {"config.json": MULTI_LAYER_MTP, "hf_quant_config.json": MULTI_LAYER_QUANT},
                       branches=("main", "v1"))
        served.publish("google/gemma-4-31B-it", {"config.json": GEMMA4_TARGET})
        served.publish("org/no-config", {"README.md": b"# weights only\n"})
        yield served


def test_the_cache_reader_answers_as_huggingface_hub_on_a_cache_it_wrote(hub, tmp_path):
    home = tmp_path / "hf"
    env = hub_env(home, hub.endpoint)
    qwen, mtp3 = hub.repos[QWEN].commit, hub.repos["deepseek-ai/mtp3"].commit
    obtain_in_subprocess([(QWEN, None, None), ("deepseek-ai/mtp3@v1", None, None), ("org/no-config", None, None),
                          (f"google/gemma-4-31B-it@{hub.repos['google/gemma-4-31B-it'].commit}", None, None)], env)
    # a cache another tool filled in part: a snapshot file removed, a .no_exist entry removed
    os.unlink(next((home / "hub").glob("models--Qwen--Qwen3.5-27B/snapshots/*/generation_config.json")))
    os.unlink(next((home / "hub").glob("models--deepseek-ai--mtp3/.no_exist/*/quant_config.json")))

    revisions = (None, "main", "v1", "no-such-branch", "refs/pr/1", qwen, mtp3, "0" * 40)
    repos = (QWEN, "deepseek-ai/mtp3", "google/gemma-4-31B-it", "org/no-config", "org/never-fetched")
    calls = [(repo, name, revision) for repo in repos for name in (*MODEL_FILES, "README.md") for revision in revisions]
    for variables in ({}, {"HF_HUB_OFFLINE": "1"}):
        answers = _run(_COMPARE, calls, {**env, **variables})
        ours, theirs = answers["settings"]
        assert ours == theirs
        disagree = [row for row in answers["lookups"] if row[3] != row[4]]
        assert disagree == []
        kinds = {("path" if isinstance(row[3], str) and row[3] != "no-exist" else row[3]) for row in answers["lookups"]}
        assert kinds == {"path", "no-exist", None}  # every kind of answer was compared
        # a file of a pinned commit's snapshot: what hf_hub_download returns without asking the Hub
        assert all(row[5] == (row[3] if row[3] != "no-exist" else None) for row in answers["lookups"]
                   if row[2] in (qwen, mtp3))


@pytest.mark.parametrize("variables", [
    {},
    {"HF_HUB_CACHE": "~/elsewhere/$HF_TEST_PART", "HF_TEST_PART": "hub-cache", "HF_HUB_OFFLINE": "yes"},
    {"HUGGINGFACE_HUB_CACHE": "/tmp/legacy-hub", "TRANSFORMERS_OFFLINE": "1", "HF_ENDPOINT": "https://mirror.test/"},
    {"XDG_CACHE_HOME": "/tmp/xdg", "HF_HUB_OFFLINE": "0", "HUGGINGFACE_CO_STAGING": "true"},
    {"HF_HOME": "~/hf-home", "HF_HUB_OFFLINE": "On"},
])
def test_the_settings_are_read_as_huggingface_hub_reads_them(variables, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "TRANSFORMERS_", "XDG_"))}
    env.update(HOME=str(tmp_path), **variables)
    ours, theirs = _run(_COMPARE, [], env)["settings"]
    assert ours == theirs


def test_a_review_that_need_not_ask_the_hub_does_not_import_huggingface_hub(hub, tmp_path):
    home = tmp_path / "hf"
    commit = hub.repos[QWEN].commit
    online, _, _ = obtain_in_subprocess([(QWEN, None, None), (f"{QWEN}@{commit}", None, None)],
                                        hub_env(home, hub.endpoint))
    asked = len(hub.requests)

    offline = _run(_OBTAIN_IMPORTS, [[QWEN, None], ["org/never-fetched", None]],
                   hub_env(home, hub.endpoint, HF_HUB_OFFLINE="1"))
    assert offline["facts"][0] == online[0] and not offline["imported"]
    assert offline["facts"][1]["unknown_reason"].endswith("is not in the huggingface_hub cache and the Hub is "
                                                          "offline (HF_HUB_OFFLINE)")
    by_argument = _run(_OBTAIN_IMPORTS, [[QWEN, True]], hub_env(home, hub.endpoint))
    assert by_argument["facts"] == online[:1] and not by_argument["imported"]
    unresolvable = _run(_OBTAIN_IMPORTS, [[QWEN, None]], hub_env(home, "http://no-such-host.invalid"))
    assert unresolvable["facts"] == online[:1] and not unresolvable["imported"]
    # online, a pinned commit the cache holds whole (.no_exist answers for the absent files)
    pinned = _run(_OBTAIN_IMPORTS, [[f"{QWEN}@{commit}", None]], hub_env(home, hub.endpoint))
    assert pinned["facts"] == online[1:] and not pinned["imported"]
    assert len(hub.requests) == asked

    # online and unpinned, the Hub is asked (the branch may have moved): the library is imported
    branch = _run(_OBTAIN_IMPORTS, [[QWEN, None]], hub_env(home, hub.endpoint))
    assert branch["facts"] == online[:1] and branch["imported"] and len(hub.requests) > asked
