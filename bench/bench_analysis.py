"""Benchmark of the analysis core on real vLLM: cold and warm analysis against an ast.parse floor.

    python bench/bench_analysis.py [--rev 0.29.0] [--source DIR] [--repeat N]

The questions are those of the 0.29.0 case: the speculative component the V2 runner builds under
speculative_config.method=mtp, the MTP draft loader path to get_model with the reads of
SpeculativeConfig.kv_cache_dtype and .attention_backend on it, and the runner with
VLLM_USE_V2_MODEL_RUNNER set to 1, 0 and unset.

Each phase runs in a fresh interpreter so that imports and memory are its own:
  floor  ast.parse of every file under vllm/ (sources read beforehand: parsing only)
  cold   the questions with an empty facts cache (libcst parses what they need)
  warm   the same questions again, every fact from the cache (libcst must not be imported)
Printed: seconds, ratios to the floor, peak RSS of each phase, and modules parsed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

QUESTIONS_BINDINGS = {"speculative_config.method": "mtp", "speculative_config.num_speculative_tokens": 3,
                      "hardware.compute_capability": (12, 0)}


def _tree(rev: str, source: str | None):
    from pathlib import Path

    from srcreview.model.revision import resolve_rev
    from srcreview.source.base import DirectoryTree

    revision = resolve_rev(rev)
    if source:
        return DirectoryTree(Path(source), revision, provider="local")
    from srcreview.source.cache import Cache, default_root
    from srcreview.source.obtain import open_source

    root, origin = default_root()
    return open_source(revision, provider="registry", cache=Cache(root, origin))


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def phase_floor(rev: str, source: str | None) -> dict:
    import ast
    import gc
    import time

    tree = _tree(rev, source)
    paths = [p for p in tree.files("vllm") if p.endswith(".py")]
    sources = [tree.read(p) for p in paths]
    gc.collect()
    start = time.perf_counter()
    for data in sources:
        try:
            ast.parse(data)
        except SyntaxError:
            pass
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "files": len(paths), "peak_rss_mb": _peak_rss_mb()}


def phase_analysis(rev: str, source: str | None, cache_dir: str) -> dict:
    import time
    from pathlib import Path

    tree = _tree(rev, source)
    tree.files()  # the listing is the provider's work, not the analysis's
    start = time.perf_counter()
    from srcreview.index import Index
    from srcreview.interp import field_reads, model_runner, trace
    from srcreview.interp.domain import install
    from srcreview.interp.interpreter import analyzer
    from srcreview.vllm.domain import VLLM
    from srcreview.vllm.drafting import component

    install(VLLM)

    index = Index(tree, cache_dir=Path(cache_dir))
    answers = {}
    v2 = analyzer(index, dict(QUESTIONS_BINDINGS, **{"env.VLLM_USE_V2_MODEL_RUNNER": "1"}))
    answers["component"] = [c.cls.rsplit(".", 1)[1] for c in component(v2, "v2").candidates]
    path = trace(index, "MTPSpeculator.load_draft_model", QUESTIONS_BINDINGS, sink="get_model")
    answers["path"] = [h.symbol.rsplit(".", 1)[1] for h in path.paths[0]] if path.paths else []
    for field in ("SpeculativeConfig.kv_cache_dtype", "SpeculativeConfig.attention_backend"):
        reads = field_reads(index, path, field)
        answers[field] = [f"{r.anchor.path}:{r.line}" for r in reads.reads] + [d.kind for d in reads.dynamic]
    for env in ("1", "0", None):
        bindings = dict(QUESTIONS_BINDINGS)
        if env is not None:
            bindings["env.VLLM_USE_V2_MODEL_RUNNER"] = env
        answers[f"runner env={env}"] = model_runner(index, bindings).value
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "parsed": len(index.parsed), "modules": len(index._modules),
            "libcst_imported": "libcst" in sys.modules, "peak_rss_mb": _peak_rss_mb(), "answers": answers}


def _child(phase: str, args, cache_dir: str) -> dict:
    cmd = [sys.executable, __file__, "--phase", phase, "--rev", args.rev, "--cache-dir", cache_dir]
    if args.source:
        cmd += ["--source", args.source]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=os.environ.copy())
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", default="0.29.0")
    parser.add_argument("--source", help="an unpacked vLLM sdist of --rev (default: the registry provider's cache)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each phase; the best is reported")
    parser.add_argument("--phase", choices=["floor", "analysis"], help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.phase == "floor":
        print(json.dumps(phase_floor(args.rev, args.source)))
        return 0
    if args.phase == "analysis":
        print(json.dumps(phase_analysis(args.rev, args.source, args.cache_dir)))
        return 0

    _tree(args.rev, args.source)  # fetch once, outside the measurements
    floors, colds, warms = [], [], []
    for _ in range(args.repeat):
        floors.append(_child("floor", args, ""))
        with tempfile.TemporaryDirectory(prefix="srcreview-bench-") as cache_dir:
            colds.append(_child("analysis", args, cache_dir))
            warms.append(_child("analysis", args, cache_dir))
    floor = min(floors, key=lambda r: r["seconds"])
    cold = min(colds, key=lambda r: r["seconds"])
    warm = min(warms, key=lambda r: r["seconds"])
    if cold["answers"] != warm["answers"]:
        print("warm answers differ from cold answers", file=sys.stderr)
        return 1
    rows = [
        ("ast.parse floor (whole vllm/)", floor, f"{floor['files']} files"),
        ("cold analysis (empty cache)", cold, f"{cold['parsed']} modules parsed"),
        ("warm analysis (facts cached)", warm, f"{warm['parsed']} parsed, libcst imported: {warm['libcst_imported']}"),
    ]
    print(f"vLLM {args.rev}: questions = V2 speculative component, MTP loader path + 2 field reads, runner x3")
    print(f"{'phase':32} {'seconds':>8} {'x floor':>8} {'peak RSS':>10}  notes")
    for name, r, note in rows:
        print(f"{name:32} {r['seconds']:8.2f} {r['seconds'] / floor['seconds']:8.2f} {r['peak_rss_mb']:8.0f}MB  {note}")
    print("answers: " + json.dumps(cold["answers"], sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
