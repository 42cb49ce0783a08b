"""Benchmark of `srcreview check` on real vLLM: the rows of issue 17's table, each as a ratio to
the whole-tree ast.parse floor measured in the same run.

    python bench/bench_check.py [--rev 0.29.0] [--repeat N] [--recipe RECIPE] [--recipes N]
                                [--releases 0.29.0,0.30.0,0.33.0] [--per-release 40]
    python bench/bench_check.py --matrix-only [--matrix-recipes N] [--matrix-revs 0.29.0,0.33.0] [--jobs J]
    python bench/bench_check.py --new-recipe-only [--new-recipes K] [--recipes N]

Each measurement is a whole `srcreview check ... --rev REV --format json` process (start-up,
source lookup, rules, rendering; `--format text` for the text row). The source comes from the
user cache (fetch it first:
`srcreview fetch --rev REV`); everything else from a fresh cache root whose `registry` links
to the user's, so that:

  cold wall      RECIPE with an empty facts cache and no stored review
  cold CPU       user + system time of that process and its parse-ahead worker
  warm wall      the same command again (its review is stored: neither the analysis nor pydantic
                 is imported); then once more with --format text
  peak memory    the largest resident set of any process measured here
  N recipes      one process reviewing N variants of RECIPE (default 37): first with their
                 facts cached but no stored review (computed), then again (warm: stored)
  --source DIR   the same single-recipe and N-recipe runs with `--source DIR`, DIR a copy of
                 the cached tree (a directory srcreview did not write): first computed, its
                 stat index built (every file hashed), then warm (stored; the tree stat'd, no
                 file hashed: srcreview.source.statindex). DIR is copied before the cold run,
                 so its files are past the racy window when the index is written
  M x K releases one process reviewing M variants pinned to each of K releases (default 40 x
                 0.29.0, 0.30.0, 0.33.0) from an empty facts cache: the peak memory of a
                 campaign (each release's tree and facts held while its recipes are reviewed)

  matrix         (--matrix-only: only these rows) one `check DIR --rev A --rev B ... -j J` process
                 (issue 27): N variants of RECIPE at each of the revisions, JSON Lines; cold (empty
                 facts cache), warm (the same again: facts cached; a matrix stores no reviews),
                 and cold and warm with -j 1; the four outputs must be byte-identical

  new recipe     (--new-recipe-only: only these rows; issue 27) facts cached by one cold run of
                 RECIPE, then K processes (default 5), each `check` of a variant never reviewed
                 (no stored review): the median CPU and wall of one, then one process of N other
                 variants (CPU per recipe). SRCREVIEW_REUSE=0 in the environment measures it with
                 the reuse off (srcreview.index.cache.reuse_enabled); every output must be the same
                 with it on

Printed: seconds, the ratio to the floor and the issue's goal for each row. Warm output must
equal cold output, byte for byte, or the benchmark fails. One run of each unless --repeat.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_analysis  # noqa: E402 - the floor phase, found through the sys.path entry above

DEFAULT_RECIPE = HERE.parent / "examples" / "thinkingcap-awq-vllm029-5090-16k-mtp3-triton-fp8.toml"
# the goals of issue 17, as ratios to its floor (4.2 s): 37 warm recipes in 1.0 s is 0.24x
GOALS = {"cold wall": 0.5, "cold CPU": 1.0, "warm wall": 0.05, "warm wall, text": 0.05, "recipes warm": 1.0 / 4.2,
         # issue 27: a --source directory as fast as the cache (the goals of the --rev rows)
         "warm wall, --source DIR": 0.05, "recipes warm, --source DIR": 1.0 / 4.2}
PEAK_GOAL_MB = 200
ANALYSIS = ("libcst", "networkx", "pydantic", "srcreview.interp", "srcreview.vllm", "srcreview.engine.run",
            "huggingface_hub")
_CHILD = """\
import json, resource, runpy, sys
sys.argv = ['srcreview'] + sys.argv[1:]
try:
    runpy.run_module('srcreview', run_name='__main__')
except SystemExit:
    pass
rss = max(resource.getrusage(w).ru_maxrss for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
analysis = %r
loaded = [m for m in analysis if m in sys.modules]
sys.stderr.write('\\nBENCH ' + json.dumps({'analysis': loaded, 'rss_kb': rss}) + '\\n')
""" % (ANALYSIS,)  # noqa: UP031 - the child's code has braces of its own


def run_check(args: list[str], cache_root: str, fmt: str = "json") -> dict:
    """One `check` process: wall and CPU seconds (its worker included), peak RSS (the largest
    of the process and its worker, each on its own), the analysis modules it imported, stdout."""
    env = dict(os.environ, SRCREVIEW_CACHE=cache_root,
               SRCREVIEW_CACHE_KEY=os.environ.get("SRCREVIEW_CACHE_KEY") or "bench")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _CHILD, "check", *args, "--format", fmt], capture_output=True,
                         text=True, env=env, check=False)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode not in (0, 1):
        raise SystemExit(f"check {' '.join(args)} failed ({out.returncode}): {out.stderr.strip()[-500:]}")
    marker = [line for line in out.stderr.splitlines() if line.startswith("BENCH ")]
    report = json.loads(marker[-1][6:]) if marker else {"analysis": None, "rss_kb": 0}
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"seconds": seconds, "cpu": cpu, "peak_mb": report["rss_kb"] / 1024.0, "analysis": report["analysis"],
            "stdout": out.stdout}


def variants(recipe: Path, count: int, target: Path, pin: str | None = None) -> Path:
    """`count` recipes that differ from `recipe` in the settings the rules look at (attention
    backend, KV-cache dtype, draft depth, the nested backend, the runner), in `target`; with
    `pin`, each pinned to that release (its [runtime] version, no revision)."""
    text = recipe.read_text(encoding="utf-8")
    backends = (None, "TRITON_ATTN", "FLASH_ATTN", "FLASHINFER")
    dtypes = ("auto", "fp8", "fp8_per_token_head")
    depths = (1, 3, 5)
    nested = (None, "TRITON_ATTN")
    runners = ("1", "0")
    combos = list(itertools.product(backends, dtypes, depths, nested, runners))
    step = max(1, len(combos) // count)
    target.mkdir(parents=True, exist_ok=True)
    for n, (backend, dtype, depth, draft_backend, runner) in enumerate(combos[::step][:count]):
        body = re.sub(r'(?m)^attention_backend = .*\n', "", text)
        body = re.sub(r'(?m)^kv_cache_dtype = .*$', f'kv_cache_dtype = "{dtype}"', body)
        body = re.sub(r'(?m)^num_speculative_tokens = .*$', f"num_speculative_tokens = {depth}", body)
        body = re.sub(r'(?m)^VLLM_USE_V2_MODEL_RUNNER = .*$', f'VLLM_USE_V2_MODEL_RUNNER = "{runner}"', body)
        body = re.sub(r'(?m)^name = "(.*)"$', rf'name = "\1-v{n:02d}"', body, count=1)
        if pin:
            body = re.sub(r'(?m)^revision = .*\n', "", body)
            body = re.sub(r'(?m)^version = .*$', f'version = "{pin}"', body)
        if backend:
            body = body.replace("[engine]\n", f'[engine]\nattention_backend = "{backend}"\n', 1)
        if draft_backend:
            body = body.replace("[engine.speculative_config]\n",
                                f'[engine.speculative_config]\nattention_backend = "{draft_backend}"\n', 1)
        (target / f"variant-{n:02d}.toml").write_text(body, encoding="utf-8")
    return target


def _user_cache() -> Path:
    from srcreview.source.cache import default_root

    return Path(default_root()[0])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rev", default="0.29.0")
    parser.add_argument("--recipe", default=str(DEFAULT_RECIPE), help="the recipe of the single-recipe rows")
    parser.add_argument("--recipes", type=int, default=37, help="how many variants one process reviews (default 37)")
    parser.add_argument("--releases", default="0.29.0,0.30.0,0.33.0",
                        help="the releases of the campaign row, comma-separated ('' skips the row)")
    parser.add_argument("--per-release", type=int, default=40, help="recipes pinned to each release (default 40)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement; the best is reported")
    parser.add_argument("--matrix-only", action="store_true",
                        help="only the matrix rows: --matrix-recipes variants x --matrix-revs in one process")
    parser.add_argument("--matrix-recipes", type=int, default=8, help="recipes of the matrix rows (default 8)")
    parser.add_argument("--matrix-revs", default="0.29.0,0.33.0",
                        help="revisions of the matrix rows, comma-separated (their sources cached)")
    parser.add_argument("--jobs", type=int, default=2, help="-j of the matrix rows (default 2)")
    parser.add_argument("--new-recipe-only", action="store_true",
                        help="only the new-recipe rows: variants never reviewed, their facts cached")
    parser.add_argument("--new-recipes", type=int, default=5,
                        help="single-recipe processes of the new-recipe rows (default 5)")
    args = parser.parse_args(argv)
    user = _user_cache()
    if not (user / "registry").is_dir():
        print(f"no cached source: run `srcreview fetch --rev {args.rev}` first", file=sys.stderr)
        return 2

    floor_args = argparse.Namespace(rev=args.rev, source=None)
    floor = min((bench_analysis._child("floor", floor_args, "") for _ in range(args.repeat)),
                key=lambda r: r["seconds"])
    if args.matrix_only:
        return matrix_rows(args, floor, user)
    if args.new_recipe_only:
        return new_recipe_rows(args, floor, user)
    releases = [r for r in args.releases.split(",") if r]
    cached_tree = Path(bench_analysis._tree(args.rev, None).root)
    colds, warms, texts, many_computed, many_warm, campaigns = [], [], [], [], [], []
    dir_built, dir_warm, many_dir_computed, many_dir_warm = [], [], [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="srcreview-bench-") as root:
            os.symlink(user / "registry", Path(root) / "registry")
            local = Path(root) / "vllm-source"
            shutil.copytree(cached_tree, local, symlinks=True)
            single = [args.recipe, "--rev", args.rev]
            colds.append(run_check(single, root))
            warms.append(run_check(single, root))
            if warms[-1]["stdout"] != colds[-1]["stdout"]:
                print("warm output differs from cold output", file=sys.stderr)
                return 1
            texts.append(run_check(single, root, fmt="text"))
            many = [str(variants(Path(args.recipe), args.recipes, Path(root) / "recipes")), "--rev", args.rev]
            many_computed.append(run_check(many, root))  # the facts are cached by the cold run
            many_warm.append(run_check(many, root))
            if many_warm[-1]["stdout"] != many_computed[-1]["stdout"]:
                print(f"the {args.recipes} stored reviews differ from the computed ones", file=sys.stderr)
                return 1
            on_dir = [args.recipe, "--source", str(local), "--rev", args.rev]
            dir_built.append(run_check(on_dir, root))  # computed; the stat index built
            dir_warm.append(run_check(on_dir, root))
            many_on_dir = [many[0], "--source", str(local), "--rev", args.rev]
            many_dir_computed.append(run_check(many_on_dir, root))
            many_dir_warm.append(run_check(many_on_dir, root))
            if dir_warm[-1]["stdout"] != dir_built[-1]["stdout"] \
                    or many_dir_warm[-1]["stdout"] != many_dir_computed[-1]["stdout"]:
                print("with --source DIR, the stored reviews differ from the computed ones", file=sys.stderr)
                return 1
        if releases:
            with tempfile.TemporaryDirectory(prefix="srcreview-bench-") as root:
                os.symlink(user / "registry", Path(root) / "registry")
                target = Path(root) / "campaign"
                for release in releases:
                    variants(Path(args.recipe), args.per_release, target / release, pin=release)
                campaigns.append(run_check([str(target)], root))

    def best(runs, key="seconds"):
        return min(runs, key=lambda r: r[key])

    base = floor["seconds"]
    peak = max(r["peak_mb"] for r in colds + warms + texts + many_computed + many_warm + campaigns)
    rows = [
        ("cold wall", best(colds), "seconds", "empty facts cache, no stored review"),
        ("cold CPU", best(colds, "cpu"), "cpu", "the check process and its parse-ahead worker"),
        ("warm wall", best(warms), "seconds",
         f"stored review; analysis, pydantic or huggingface_hub imported: {best(warms)['analysis'] or 'none'}"),
        ("warm wall, text", best(texts), "seconds", "the same, --format text (rich renders it)"),
        (f"{args.recipes} recipes, facts cached", best(many_computed), "seconds",
         "one process, every review computed (no goal in the issue)"),
        ("recipes warm", best(many_warm), "seconds", "one process, every review stored"),
        ("check --source DIR, index built", best(dir_built), "seconds",
         "computed (facts cached); DIR's stat index built: every file hashed (no goal in the issue)"),
        ("warm wall, --source DIR", best(dir_warm), "seconds",
         f"stored review; DIR stat'd against its index; analysis imported: {best(dir_warm)['analysis'] or 'none'}"),
        ("recipes warm, --source DIR", best(many_dir_warm), "seconds", "one process, every review stored"),
    ]
    if campaigns:
        rows.append((f"{args.per_release} recipes x {len(releases)} releases", best(campaigns), "seconds",
                     f"one process, empty facts cache ({', '.join(releases)}); no time goal, "
                     f"peak < {PEAK_GOAL_MB} MiB"))
    print(f"vLLM {args.rev}: ast.parse floor {base:.2f} s over {floor['files']} files (one core, peak "
          f"{floor['peak_rss_mb']:.0f} MiB); recipe {Path(args.recipe).name}")
    print(f"{'row':32} {'seconds':>8} {'x floor':>8} {'goal':>7}  met  {'peak':>8}  notes")
    for name, run, key, note in rows:
        seconds, goal = run[key], GOALS.get(name)
        shown = name.replace("recipes warm", f"{args.recipes} recipes warm", 1) if name.startswith("recipes warm") \
            else name
        met = "" if goal is None else ("yes" if seconds / base <= goal else "no")
        goal_text = f"{goal:.2f}x" if goal is not None else ""
        print(f"{shown:32} {seconds:8.2f} {seconds / base:8.2f} {goal_text:>7}  {met:3}  "
              f"{run['peak_mb']:5.0f}MiB  {note}")
    print(f"{'peak memory':32} {peak:5.0f}MiB {'':>8} {PEAK_GOAL_MB:4d}MiB  "
          f"{'yes' if peak < PEAK_GOAL_MB else 'no':3}  "
          f"{'':8}  the largest process above (each process and its worker on its own)")
    return 0


def new_recipe_rows(args, floor: dict, user: Path) -> int:
    """A recipe never reviewed at a release whose facts are cached: one process each, and many in one."""
    import statistics

    with tempfile.TemporaryDirectory(prefix="srcreview-bench-") as root:
        os.symlink(user / "registry", Path(root) / "registry")
        run_check([args.recipe, "--rev", args.rev], root)  # cold: the facts cached
        singles = []
        everything = variants(Path(args.recipe), args.new_recipes + args.recipes, Path(root) / "all")
        files = sorted(everything.iterdir())
        for path in files[:args.new_recipes]:
            singles.append(run_check([str(path), "--rev", args.rev], root))
        many_dir = Path(root) / "many"
        many_dir.mkdir()
        for path in files[args.new_recipes:]:
            path.rename(many_dir / path.name)
        many = run_check([str(many_dir), "--rev", args.rev], root)
        outputs = ("".join(r["stdout"] for r in singles) + many["stdout"]).replace(root, "ROOT")
    base = floor["seconds"]
    cpu = statistics.median(r["cpu"] for r in singles)
    wall = statistics.median(r["seconds"] for r in singles)
    count = len(files) - args.new_recipes
    reuse = "off" if os.environ.get("SRCREVIEW_REUSE", "").strip() == "0" else "on"
    print(f"vLLM {args.rev}: ast.parse floor {base:.2f} s over {floor['files']} files (one core); variants of "
          f"{Path(args.recipe).name}; reuse {reuse}; output sha256 "
          f"{hashlib.sha256(outputs.encode()).hexdigest()[:16]}")
    print(f"{'row':40} {'seconds':>8} {'x floor':>8} {'goal':>7}  notes")
    rows = [(f"new recipe, facts cached: CPU (median of {len(singles)})", cpu, "one check process, worker included"),
            (f"new recipe, facts cached: wall (median of {len(singles)})", wall, ""),
            (f"{count} new recipes in one process: CPU / recipe", many["cpu"] / count,
             f"{many['cpu']:.2f} s CPU, {many['seconds']:.2f} s wall in all")]
    for name, seconds, note in rows:
        goal = "0.02x" if "CPU" in name else ""
        print(f"{name:40} {seconds:8.3f} {seconds / base:8.3f} {goal:>7}  {note}")
    return 0


def matrix_rows(args, floor: dict, user: Path) -> int:
    """The matrix rows: N recipes x the revisions in one process, cold, warm, and warm with -j 1."""
    revs = [r for r in args.matrix_revs.split(",") if r]
    colds, warms, singles, cold_singles = [], [], [], []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="srcreview-bench-") as root:
            os.symlink(user / "registry", Path(root) / "registry")
            recipes = str(variants(Path(args.recipe), args.matrix_recipes, Path(root) / "recipes"))
            command = [recipes, *itertools.chain.from_iterable(("--rev", rev) for rev in revs)]
            colds.append(run_check([*command, "-j", str(args.jobs)], root))
            warms.append(run_check([*command, "-j", str(args.jobs)], root))
            singles.append(run_check([*command, "-j", "1"], root))
            with tempfile.TemporaryDirectory(prefix="srcreview-bench-") as other:  # an empty facts cache again
                os.symlink(user / "registry", Path(other) / "registry")
                cold_singles.append(run_check([*command, "-j", "1"], other))
            if not colds[-1]["stdout"] == warms[-1]["stdout"] == singles[-1]["stdout"] == cold_singles[-1]["stdout"]:
                print("the matrix output differs between cold, warm and -j 1", file=sys.stderr)
                return 1
    base = floor["seconds"]
    cells = args.matrix_recipes * len(revs)
    shape = f"{args.matrix_recipes} recipes x {len(revs)} revs"
    rows = [(f"{shape}, cold, -j {args.jobs}", min(colds, key=lambda r: r["seconds"]), "empty facts cache"),
            (f"{shape}, warm, -j {args.jobs}", min(warms, key=lambda r: r["seconds"]), "facts cached"),
            (f"{shape}, cold, -j 1", min(cold_singles, key=lambda r: r["seconds"]),
             "empty facts cache, one process (and its parse-ahead worker)"),
            (f"{shape}, warm, -j 1", min(singles, key=lambda r: r["seconds"]), "facts cached, one process")]
    print(f"vLLM {args.rev}: ast.parse floor {base:.2f} s over {floor['files']} files (one core, peak "
          f"{floor['peak_rss_mb']:.0f} MiB); matrix of {cells} cells ({', '.join(revs)}), variants of "
          f"{Path(args.recipe).name}, {os.cpu_count()} CPUs")
    print(f"{'row':36} {'seconds':>8} {'x floor':>8} {'CPU s':>7} {'s/cell':>7} {'peak':>8}  notes")
    for name, run, note in rows:
        print(f"{name:36} {run['seconds']:8.2f} {run['seconds'] / base:8.2f} {run['cpu']:7.2f} "
              f"{run['seconds'] / cells:7.2f} {run['peak_mb']:5.0f}MiB  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
