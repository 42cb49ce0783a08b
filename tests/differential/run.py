"""Run the differential test for one vLLM release: the oracle, srcreview, the confusion table.

    .venv/bin/python tests/differential/run.py 0.29.0 [--only SUBSTRING] [--srcreview PATH]

(``.venv/bin/pytest -m differential tests/differential`` runs this for 0.29.0 and 0.33.0.)
Writes, under ``${SRCREVIEW_CACHE:-~/.cache/srcreview}/differential/vllm-X/``:
``oracle-<digest>.json`` (vLLM's outcomes, reused while the cases, the oracle script's code
(its docstrings and comments aside) and the release are the same), ``srcreview.json`` (srcreview's verdicts), ``table.json`` and
``table.txt`` (the confusion table). Prints the table.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402
import oracle_env as oracle_venv  # noqa: E402
import srcreview_side  # noqa: E402


def default_srcreview() -> str:
    """The srcreview next to the running python (the project's .venv), else on PATH."""
    here = Path(sys.executable).parent / "srcreview"
    if here.is_file():
        return str(here)
    found = shutil.which("srcreview")
    if not found:
        raise SystemExit("srcreview is not installed next to this python nor on PATH")
    return found


def _code_only(source: str) -> str:
    """The script's code without its docstrings and comments: what its results depend on."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def oracle_digest(script_source: str, cases: list[dict]) -> str:
    """The cache key of an oracle run: the oracle's code (not its docs) and the cases."""
    return hashlib.sha256((_code_only(script_source) + json.dumps(cases, sort_keys=True)).encode()).hexdigest()[:16]


def oracle(release: str, cases: list[dict], log=print, timeout: float = 120.0) -> tuple[dict, dict]:
    """vLLM's outcome of each case (cached by the digest of the cases and the oracle script)."""
    py = oracle_venv.ensure(release, log=log)
    script = HERE / "oracle_vllm.py"
    digest = oracle_digest(script.read_text(), cases)
    out = oracle_venv.release_dir(release) / f"oracle-{digest}.json"
    if not out.is_file():
        with tempfile.TemporaryDirectory(prefix="differential-") as tmp:
            cases_path = Path(tmp) / "cases.json"
            cases_path.write_text(json.dumps(cases))
            partial = Path(tmp) / "oracle.json"
            log(f"oracle: vLLM {release}, {len(cases)} cases (log: {out.with_suffix('.log').name} in the cache)")
            with open(out.with_suffix(".log"), "w") as logf:
                proc = subprocess.run([str(py), str(script), str(cases_path), str(partial), "--timeout", str(timeout)],
                                      stdout=logf, stderr=subprocess.STDOUT, text=True, cwd=tmp)
            if proc.returncode != 0 or not partial.is_file():
                tail = out.with_suffix(".log").read_text()[-4000:]
                raise RuntimeError(f"the oracle failed (exit {proc.returncode}):\n{tail}")
            shutil.copyfile(partial, out)
    text = out.read_text()
    local = relativize(text)
    if local != text:  # written before paths were made relative, or just now
        out.write_text(local)
    report = json.loads(local)
    return report, {r["id"]: r for r in report["results"]}


_SITE = re.compile(r"(?:/[^/\s\"']+)+/site-packages/")
_TMP = re.compile(re.escape(tempfile.gettempdir().rstrip("/")) + r"/(?:oracle|differential)[^/\s\"']*")
_PYLIB = re.compile(r"(?:/[^/\s\"']+)+/lib/python3\.\d+/")


def relativize(text: str) -> str:
    """No absolute local path in what the oracle reports: site-packages/..., <tmp>/..., ~/..."""
    text = text.replace(str(HERE.parents[1]) + "/", "")  # the repository: paths relative to it
    text = _SITE.sub("site-packages/", text)
    text = _TMP.sub("<tmp>", text)
    text = _PYLIB.sub("python/lib/", text)
    home = str(Path.home())
    return text.replace(home + "/", "~/") if home != "/" else text


def main(argv: list[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("release")
    ap.add_argument("--only", help="only cases whose id contains this")
    ap.add_argument("--srcreview", default=None, help="the srcreview command (default: beside this python)")
    ns = ap.parse_args(argv)
    table = differential(ns.release, only=ns.only, srcreview=ns.srcreview)
    print(table["text"], end="")
    return 0


def srcreview_identity(srcreview: str) -> dict:
    """Which srcreview answered: its version, and its source's git commit when it is a checkout."""
    version = subprocess.run([srcreview, "--version"], capture_output=True, text=True).stdout.strip()
    python = Path(srcreview).parent / "python"
    commit = None
    if python.is_file():
        where = subprocess.run([str(python), "-c", "import srcreview, os; print(os.path.dirname(srcreview.__file__))"],
                               capture_output=True, text=True).stdout.strip()
        if where:
            commit = subprocess.run(["git", "-C", where, "rev-parse", "--short=12", "HEAD"],
                                    capture_output=True, text=True).stdout.strip() or None
            dirty = subprocess.run(["git", "-C", where, "status", "--porcelain", "--", "."],
                                   capture_output=True, text=True).stdout.strip()
            if commit and dirty:
                commit += " (with uncommitted changes)"
    return {"version": version, "commit": commit}


def differential(release: str, only: str | None = None, srcreview: str | None = None, log=None) -> dict:
    log = log or (lambda m: print(m, file=sys.stderr, flush=True))
    cases = generate.cases()
    if only:
        cases = [c for c in cases if only in c["id"]]
    rdir = oracle_venv.release_dir(release)
    t0 = time.monotonic()
    report, by_id = oracle(release, cases, log=log)
    oracle_wall = report.get("wall_seconds") or (time.monotonic() - t0)
    t1 = time.monotonic()
    srcreview = srcreview or default_srcreview()
    identity = srcreview_identity(srcreview)
    installed = rdir / "installed.json"
    packages = srcreview_side.runtime_packages(json.loads(installed.read_text()) if installed.is_file() else None)
    with tempfile.TemporaryDirectory(prefix="differential-recipes-") as tmp:
        reviews = srcreview_side.run_srcreview(srcreview, cases, Path(tmp), release, log=log, packages=packages)
    srcreview_wall = time.monotonic() - t1
    (rdir / "srcreview.json").write_text(json.dumps(reviews, indent=1, sort_keys=True) + "\n")
    table = srcreview_side.confusion(cases, by_id, reviews)
    per_case = [r.get("seconds") or 0 for r in report["results"]]
    table["release"] = report["vllm"]
    table["srcreview"] = identity
    table["patches"] = next(iter(report["patches"].values()), [])
    table["timing"] = {"oracle_wall_seconds": oracle_wall, "oracle_case_seconds_mean": round(sum(per_case) / max(len(per_case), 1), 2),
                       "oracle_case_seconds_max": max(per_case, default=0), "srcreview_wall_seconds": round(srcreview_wall, 1),
                       "cases": len(cases), "gpus": len(report["patches"])}
    extra = (f" against {identity['version']} at {identity['commit'] or 'an unknown commit'}"
             f" (oracle {oracle_wall:.0f} s wall, {table['timing']['oracle_case_seconds_mean']} s per case in its fork; "
             f"srcreview {srcreview_wall:.0f} s)")
    table["text"] = srcreview_side.render(table, report["vllm"], extra)
    (rdir / "table.json").write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    (rdir / "table.txt").write_text(table["text"])
    return table


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
