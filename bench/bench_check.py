"""Benchmark of `srcreview check` on real vLLM: cold and warm runs of the example recipes
next to the ast.parse floor of bench_analysis.py.

    python bench/bench_check.py [--rev 0.29.0] [--repeat N] [RECIPE ...]

Each run is a whole `srcreview check RECIPE --rev REV --format json` process (start-up,
source lookup, rules, rendering). The source comes from the user cache (it must be fetched
already: `srcreview fetch --rev REV`); the facts come from a fresh cache root per recipe
whose `registry` links to the user's, so that:
  cold  the source is cached, the facts cache is empty
  warm  the same command again, every fact cached (libcst must not be imported)
Printed: seconds, ratios to the floor, peak RSS of each run; warm output must equal cold.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_analysis  # the floor phase


def _run(recipe: str, rev: str, cache_root: str) -> dict:
    """One `check` process: wall seconds, its peak RSS, whether libcst was imported, its stdout."""
    env = dict(os.environ, SRCREVIEW_CACHE=cache_root)
    code = ("import runpy, sys, json, resource; sys.argv = ['srcreview'] + sys.argv[1:]\n"
            "try:\n    runpy.run_module('srcreview', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "rss = max(resource.getrusage(w).ru_maxrss for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))\n"
            "sys.stderr.write('\\nBENCH ' + json.dumps({'libcst': 'libcst' in sys.modules, 'rss_kb': rss}) + '\\n')\n")
    cmd = [sys.executable, "-c", code, "check", recipe, "--rev", rev, "--format", "json"]
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    seconds = time.perf_counter() - start
    if out.returncode not in (0, 1, 2):
        raise SystemExit(f"check {recipe} failed ({out.returncode}): {out.stderr.strip()[-500:]}")
    marker = [line for line in out.stderr.splitlines() if line.startswith("BENCH ")]
    report = json.loads(marker[-1][6:]) if marker else {"libcst": None, "rss_kb": 0}
    # the peak of the check process and of any worker it started (each process on its own)
    return {"seconds": seconds, "peak_rss_mb": report["rss_kb"] / 1024.0, "libcst": report["libcst"],
            "stdout": out.stdout}


def _user_registry() -> Path:
    from srcreview.source.cache import default_root

    return Path(default_root()[0]) / "registry"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipes", nargs="*", help="recipes (default: examples/*.toml)")
    parser.add_argument("--rev", default="0.29.0")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement; the best is reported")
    args = parser.parse_args(argv)
    recipes = args.recipes or sorted(glob.glob(str(HERE.parent / "examples" / "*.toml")))
    registry = _user_registry()
    if not registry.is_dir():
        print(f"no cached source: run `srcreview fetch --rev {args.rev}` first", file=sys.stderr)
        return 2

    floor_args = argparse.Namespace(rev=args.rev, source=None)
    floor = min((bench_analysis._child("floor", floor_args, "") for _ in range(args.repeat)),
                key=lambda r: r["seconds"])
    rows = []
    for recipe in recipes:
        colds, warms = [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="srcreview-bench-") as root:
                os.symlink(registry, Path(root) / "registry")
                colds.append(_run(recipe, args.rev, root))
                warms.append(_run(recipe, args.rev, root))
        if any(w["stdout"] != c["stdout"] for c, w in zip(colds, warms)):
            print(f"{recipe}: warm output differs from cold output", file=sys.stderr)
            return 1
        rows.append((Path(recipe).stem, min(colds, key=lambda r: r["seconds"]), min(warms, key=lambda r: r["seconds"]),
                     max((r["peak_rss_mb"] or 0) for r in colds + warms)))
    print(f"vLLM {args.rev}: ast.parse floor {floor['seconds']:.2f} s over {floor['files']} files "
          f"(peak {floor['peak_rss_mb']:.0f} MB); targets: cold <= 1.00x, warm <= 0.10x, peak < 500 MB")
    print(f"{'recipe':58} {'cold s':>7} {'x floor':>7} {'warm s':>7} {'x floor':>7} {'peak':>7}  libcst(warm)")
    for name, cold, warm, peak in rows:
        print(f"{name:58} {cold['seconds']:7.2f} {cold['seconds'] / floor['seconds']:7.2f} "
              f"{warm['seconds']:7.2f} {warm['seconds'] / floor['seconds']:7.2f} {peak:5.0f}MB  {warm['libcst']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
