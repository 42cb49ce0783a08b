"""Load: 20 recipes across 3 real releases, in one invocation and in parallel invocations
sharing one cache; memory stays bounded and every review equals the recipe's single run.

The recipes are variations of examples/*.toml (kv cache dtypes, where the attention backend
is set, speculative method and depth, the model-runner switch), each pinned to 0.28.0, 0.29.0
or 0.30.0 (`runtime.version` + `runtime.revision` from pins/vllm.toml), so one `check`
reviews three revisions. The releases come from the user cache (`vllm_release`); the test
links their entries into a private cache whose facts start cold, so the three parallel runs
parse and write the same facts at the same time.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent.parent
RELEASES = ("0.28.0", "0.29.0", "0.30.0")
RECIPES = 20
PARALLEL = 3
MAX_RSS_BYTES = 1536 * 1024 * 1024  # 1.5 GiB for one invocation over three revisions

KV_DTYPES = ("auto", "bfloat16", "fp8", "fp8_e4m3", "fp8_per_token_head")
BACKENDS = ("nested", "engine-triton", "engine-flash", "none")


def _pins() -> dict[str, str]:
    data = tomllib.loads((ROOT / "pins" / "vllm.toml").read_text(encoding="utf-8"))
    return {r["version"]: r["revision"] for r in data["release"]}


def _recipe(n: int, version: str, revision: str) -> str:
    kv = KV_DTYPES[n % len(KV_DTYPES)]
    backend = BACKENDS[n % len(BACKENDS)]
    speculative = n % 7 != 6
    runner = ("1", "0", None)[(n // 3) % 3]
    lines = ["[recipe]", f'name = "load-{n:02d}-{version}-{kv}-{backend}"',
             'model = "bottlecapai/ThinkingCap-Qwen3.8-27B-NVFP4A4-AWQ"', "",
             "[runtime]", 'engine = "vllm"', f'version = "{version}"', f'revision = "{revision}"', "",
             "[hardware]", 'gpu = "NVIDIA GeForce RTX 5090"', 'compute_capability = "12.0"', "",
             "[engine]", f"max_model_len = {8192 * (1 + n % 3)}", f"max_num_seqs = {1 + n % 2}",
             f'kv_cache_dtype = "{kv}"']
    if backend == "engine-triton":
        lines.append('attention_backend = "TRITON_ATTN"')
    elif backend == "engine-flash":
        lines.append('attention_backend = "FLASH_ATTN"')
    if speculative:
        lines += ["", "[engine.speculative_config]", f'method = "{("mtp", "eagle")[n % 2]}"',
                  f"num_speculative_tokens = {1 + n % 4}"]
        if backend == "nested":
            lines.append('attention_backend = "TRITON_ATTN"')
        if n % 5 == 3:
            lines.append('kv_cache_dtype = "auto"')
    if runner is not None:
        lines += ["", "[env]", f'VLLM_USE_V2_MODEL_RUNNER = "{runner}"']
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def workspace(vllm_release, tmp_path_factory):
    """20 recipe files and a private cache holding the three releases (hard links) and no facts."""
    from srcreview.source.cache import default_root

    trees = [vllm_release(v) for v in RELEASES]  # in the user cache, obtained once
    work = tmp_path_factory.mktemp("load")
    cache = work / "cache"
    user_registry = default_root()[0] / "registry"
    pins = _pins()
    for tree in trees:
        entry = Path(tree.root).parent  # the cache entry the registry provider used for this release
        assert entry.parent == user_registry
        shutil.copytree(entry, cache / "registry" / entry.name, copy_function=os.link, symlinks=True)
    names = []
    for n in range(RECIPES):
        version = RELEASES[n % len(RELEASES)]
        name = f"load-{n:02d}.toml"
        (work / name).write_text(_recipe(n, version, pins[version]))
        names.append(name)
    return work, cache, names


def _start(work: Path, cache: Path, names: list[str], out: Path) -> subprocess.Popen:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(work), "SRCREVIEW_CACHE": str(cache),
           "PIP_INDEX_URL": "http://127.0.0.1:9/simple"}  # everything must come from the cache
    with out.open("w") as handle:
        return subprocess.Popen([sys.executable, "-m", "srcreview", "check", *names, "--format", "json",
                                 "--fail-on", "none"], cwd=work, env=env, stdout=handle,
                                stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)


def _finish(proc: subprocess.Popen) -> tuple[int, int]:
    """(exit code, peak RSS in bytes) of that one child, from wait4."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read()
    proc.stderr.close()
    assert "Traceback" not in err, err
    return proc.returncode, usage.ru_maxrss * 1024


def _reviews(path: Path) -> dict[str, dict]:
    data = json.loads(path.read_text())
    reviews = data["reviews"] if "reviews" in data else [data]
    return {r["recipe"]["path"]: r for r in reviews}


@pytest.mark.releases
def test_twenty_recipes_three_revisions_one_and_parallel_invocations(workspace, record_property):
    work, cache, names = workspace
    started = time.monotonic()

    # parallel invocations on a cold facts cache: all write the same entries at once
    procs = [_start(work, cache, names if k % 2 == 0 else names[::-1], work / f"parallel-{k}.json")
             for k in range(PARALLEL)]
    results = [_finish(p) for p in procs]
    assert [code for code, _ in results] == [0] * PARALLEL
    cold = time.monotonic() - started

    # one invocation, warm: every recipe at its own pin, three revisions
    t = time.monotonic()
    code, peak = _finish(_start(work, cache, names, work / "one.json"))
    assert code == 0
    one = _reviews(work / "one.json")
    warm = time.monotonic() - t
    assert sorted(one) == sorted(names)
    assert {r["revision"]["version"] for r in one.values()} == set(RELEASES)
    assert all(r["revision"]["matches_recipe_pin"] and r["incomplete"] == [] for r in one.values())

    # each recipe alone, two at a time
    single = {}
    for batch in range(0, RECIPES, 2):
        pair = [(name, _start(work, cache, [name], work / f"single-{name}.json")) for name in names[batch:batch + 2]]
        for name, proc in pair:
            assert _finish(proc)[0] == 0
            single.update(_reviews(work / f"single-{name}.json"))

    for k in range(PARALLEL):
        assert _reviews(work / f"parallel-{k}.json") == single, f"parallel run {k} differs"
    assert one == single
    # the findings differ between recipes and revisions: the comparison is not of empty reviews
    assert len({json.dumps(r["findings"], sort_keys=True) for r in single.values()}) > RECIPES // 2

    assert peak < MAX_RSS_BYTES, f"one invocation peaked at {peak / 2**20:.0f} MiB"
    total = time.monotonic() - started
    record_property("peak_rss_mib", round(peak / 2**20))
    record_property("seconds", {"cold-parallel": round(cold, 1), "one-warm": round(warm, 1), "total": round(total, 1)})
    print(f"\nload: peak RSS of one invocation {peak / 2**20:.0f} MiB; cold parallel {cold:.1f} s, "
          f"one warm {warm:.1f} s, total {total:.1f} s")
    # no facts temp file left behind by the concurrent writers
    assert not [p for p in (cache / "facts").rglob(".tmp-*")]
