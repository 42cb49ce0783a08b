"""srcreview's side of the differential test: recipes written from cases, srcreview's verdict,
the confusion table.

Imports nothing of srcreview: srcreview is run as the CLI (``srcreview check ... --format
json``), as a user runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections import Counter
from pathlib import Path

# Rules whose problem is "vLLM refuses the recipe": at start-up (the config's hooks and
# validators), or before (a key or value the engine arguments do not admit), or when the
# attention backend is selected.
REFUSAL_RULES = frozenset({
    "startup-rejected",
    "engine-key-exists",
    "engine-value-admitted",
    "attention-backend-admitted",
    "attention-backend-auto-selected",
    "backend-supports-kv-cache-dtype",
    "flash-attn-fp8-family-gate",
    "triton-fp8-capability-gate",
})
REFUSING_KNOB_STATUSES = frozenset({"invalid-value", "unknown-knob"})
START_KNOB_STATUSES = frozenset({"accepted", "applied", "ignored", "overridden"})


def srcreview_verdict(review: dict) -> tuple[str, str]:
    """srcreview's start-up verdict for one review of ``check --format json``, and why: the
    review's ``startup`` verdict when it has one (``no-refusal-found`` counts as ``starts``),
    else, as the review would say it:

    - ``rejected``: a problem (confirmed) of a refusal rule (REFUSAL_RULES), or a knob whose
      status is ``invalid-value`` or ``unknown-knob``;
    - ``undecided``: otherwise, when the review is incomplete, a refusal rule has an open
      question (plausible), or a knob is ``undecided``;
    - ``starts``: otherwise: every knob ``accepted``, ``applied`` or ``ignored`` (an ignored
      value does not take effect, but does not stop start-up) and no refusal rule open.
    """
    startup = review.get("startup")
    if startup:  # the review's own verdict (srcreview.engine.startup): what srcreview claims
        verdict = {"no-refusal-found": "starts"}.get(startup["verdict"], startup["verdict"])
        return verdict, ", ".join(startup.get("reasons", []))
    findings = review.get("findings", [])
    knobs = review.get("knobs", [])
    refusing = sorted({f["rule"] for f in findings if f["rule"] in REFUSAL_RULES and f.get("kind") == "problem"})
    bad = sorted({f"{k['key']}:{k['status']}" for k in knobs if k["status"] in REFUSING_KNOB_STATUSES})
    if refusing or bad:
        return "rejected", ", ".join(refusing + bad)
    if review.get("incomplete"):
        return "undecided", "review incomplete"
    open_rules = sorted({f["rule"] for f in findings if f["rule"] in REFUSAL_RULES and f.get("kind") == "open-question"})
    open_knobs = sorted({f"{k['key']}({k['scope']}):{k['status']}" for k in knobs
                         if k["status"] not in START_KNOB_STATUSES})
    if open_rules or open_knobs:
        return "undecided", ", ".join(open_rules + open_knobs)
    return "starts", ""


# --- recipes -------------------------------------------------------------------------------

def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def _table(lines: list[str], name: str, data: dict) -> None:
    scalars = {k: v for k, v in data.items() if not isinstance(v, dict) and v is not None}
    tables = {k: v for k, v in data.items() if isinstance(v, dict)}
    lines.append(f"[{name}]")
    for key, value in scalars.items():
        lines.append(f"{key} = {_toml_value(value)}")
    for key, value in tables.items():
        _table(lines, f"{name}.{key}", value)


# the oracle venv's packages a recipe states in [runtime] packages (their versions decide
# facts srcreview reads from them: transformers builds the model's config class)
STATED_PACKAGES = ("transformers",)


def runtime_packages(installed: dict | None) -> dict[str, str]:
    """{package: version} of STATED_PACKAGES the oracle venv installed (its installed.json's
    ``packages``, names as pip lists them)."""
    listed = {name.lower().replace("_", "-"): version for name, version in ((installed or {}).get("packages") or {}).items()}
    return {name: listed[name] for name in STATED_PACKAGES if isinstance(listed.get(name), str)}


def recipe_toml(case: dict, packages: dict[str, str] | None = None) -> str:
    """The case as a srcreview TOML recipe, with ``model = "./model"`` (a local directory
    beside the recipe holding the case's config.json), the engine arguments the oracle adds
    to every case, and ``[runtime] packages`` with the versions the oracle venv installed
    (``packages``, from ``runtime_packages``)."""
    engine = json.loads(json.dumps(case["engine"]))
    spec = engine.get("speculative_config")
    if isinstance(spec, dict) and spec.get("model") == "@draft":
        spec["model"] = "./draft"
    engine = {"skip_tokenizer_init": True, "load_format": "dummy", **engine}
    major, minor = case["gpu"]["capability"]
    lines = [f"# differential case {case['id']} (generated by tests/differential/generate.py)",
             "[recipe]", f"name = {json.dumps(case['id'].replace('/', '--'))}", 'model = "./model"', ""]
    if packages:
        stated = ", ".join(f"{json.dumps(name)} = {json.dumps(version)}" for name, version in sorted(packages.items()))
        lines += ["[runtime]", f"packages = {{ {stated} }}", ""]
    from oracle_vllm import DEVICE_COUNT, GPU_MEMORY  # what the oracle's patched platform reports

    memory = GPU_MEMORY.get(case["gpu"]["name"])
    lines += ["[hardware]", f"gpu = {json.dumps(case['gpu']['name'])}", f'compute_capability = "{major}.{minor}"',
              *([f"memory_gib = {memory / 2**30:g}"] if memory else []), f"gpus = {DEVICE_COUNT}", ""]
    _table(lines, "engine", engine)
    if case.get("env"):
        lines.append("")
        _table(lines, "env", case["env"])
    return "\n".join(lines) + "\n"


def write_case(case: dict, root: Path, packages: dict[str, str] | None = None) -> Path:
    """The case's directory: recipe.toml, model/config.json, draft/config.json."""
    d = root / case["id"].replace("/", "--")
    (d / "model").mkdir(parents=True, exist_ok=True)
    (d / "model" / "config.json").write_text(json.dumps(case["model_config"], indent=1) + "\n")
    if case.get("draft_config"):
        (d / "draft").mkdir(exist_ok=True)
        (d / "draft" / "config.json").write_text(json.dumps(case["draft_config"], indent=1) + "\n")
    (d / "recipe.toml").write_text(recipe_toml(case, packages))
    return d / "recipe.toml"


def run_srcreview(srcreview: str, cases: list[dict], root: Path, rev: str, chunk: int = 40,
                  env: dict | None = None, log=None, packages: dict[str, str] | None = None) -> dict[str, dict]:
    """srcreview's review of each case at ``rev``: ``{id: {"verdict", "why", "exit", ...}}``;
    each recipe states ``packages`` (the oracle venv's, see ``runtime_packages``).

    Recipes are checked many to a process (``check A B C --format json`` answers one review
    per recipe, in order); a chunk whose process does not answer JSON is checked one by one.
    """
    paths = {c["id"]: write_case(c, root, packages) for c in cases}
    out: dict[str, dict] = {}
    ids = [c["id"] for c in cases]
    run_env = {**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})}

    def check(batch: list[str]) -> dict | None:
        proc = subprocess.run([srcreview, "check", *[str(paths[i].relative_to(root)) for i in batch],
                               "--rev", rev, "--format", "json"],
                              cwd=root, capture_output=True, text=True, env=run_env)
        try:
            data = json.loads(proc.stdout)
        except json.JSONDecodeError:
            return {"_error": proc.returncode, "_stderr": proc.stderr[-2000:]}
        data["_exit"] = proc.returncode
        return data

    for start in range(0, len(ids), chunk):
        batch = ids[start:start + chunk]
        data = check(batch)
        reviews = data.get("reviews") if data else None
        if reviews is not None and len(reviews) == len(batch):
            for cid, review in zip(batch, reviews, strict=True):
                verdict, why = srcreview_verdict(review)
                out[cid] = {"verdict": verdict, "why": why, "exit": review.get("gate", {}).get("exit_code")}
        else:
            for cid in batch:
                one = check([cid])
                revs = one.get("reviews") if one else None
                if revs and len(revs) == 1:
                    verdict, why = srcreview_verdict(revs[0])
                    out[cid] = {"verdict": verdict, "why": why, "exit": revs[0].get("gate", {}).get("exit_code")}
                else:
                    out[cid] = {"verdict": "error", "why": f"exit {one.get('_error', one.get('_exit'))}: "
                                f"{(one.get('_stderr') or '').strip().splitlines()[-1:]}", "exit": one.get("_error")}
        if log:
            log(f"srcreview {rev}: {min(start + chunk, len(ids))}/{len(ids)}")
    return out


# --- the confusion table -------------------------------------------------------------------

CELLS = ("agree", "missed", "undecided", "confident wrong", "environment-only", "srcreview error")


def cell(oracle_outcome: str, verdict: str) -> str:
    if oracle_outcome == "environment":
        return "environment-only"
    if verdict == "error":
        return "srcreview error"
    if verdict == "undecided":
        return "undecided"
    if verdict == oracle_outcome:
        return "agree"
    if oracle_outcome == "rejected" and verdict == "starts":
        return "missed"
    if oracle_outcome == "starts" and verdict == "rejected":
        return "confident wrong"
    raise AssertionError((oracle_outcome, verdict))


def confusion(cases: list[dict], oracle: dict[str, dict], review: dict[str, dict]) -> dict:
    rows = []
    for case in cases:
        o = oracle[case["id"]]
        r = review[case["id"]]
        rows.append({"id": case["id"], "cls": case["cls"], "vllm": o["outcome"], "srcreview": r["verdict"],
                     "cell": cell(o["outcome"], r["verdict"]), "exception": o.get("exception"),
                     "message": (o.get("message") or "")[:300], "frame": o.get("frame"), "stage": o.get("stage"),
                     "backend": o.get("backend"), "why": r["why"], "seconds": o.get("seconds")})
    for row in rows:
        # vLLM refused and srcreview left the recipe undecided without naming any refusal:
        # only what it could not decide (an unset attention backend, a draft's knob) kept this
        # from being missed
        row["refusal_unseen"] = (row["cell"] == "undecided" and row["vllm"] == "rejected"
                                 and not any(rule in row["why"] for rule in REFUSAL_RULES))
    totals = Counter(row["cell"] for row in rows)
    by_cls: dict[str, Counter] = {}
    for row in rows:
        by_cls.setdefault(row["cls"], Counter())[row["cell"]] += 1
    outcome_x_verdict = Counter(f"{row['vllm']} x {row['srcreview']}" for row in rows)
    return {"totals": {c: totals.get(c, 0) for c in CELLS}, "by_class": {k: dict(v) for k, v in by_cls.items()},
            "vllm_x_srcreview": dict(sorted(outcome_x_verdict.items())),
            "refusal_unseen": sum(r["refusal_unseen"] for r in rows), "rows": rows}


def render(table: dict, release: str, extra: str = "") -> str:
    t = table["totals"]
    n = sum(t.values())
    lines = [f"vLLM {release}: {n} recipes{extra}",
             "  " + " / ".join(f"{c} {t[c]}" for c in CELLS),
             "  vllm outcome x srcreview verdict: " + ", ".join(f"{k} {v}" for k, v in table["vllm_x_srcreview"].items()),
             "  by class:"]
    for cls, counts in table["by_class"].items():
        lines.append(f"    {cls:16s} " + ", ".join(f"{c} {counts[c]}" for c in CELLS if counts.get(c)))
    unseen = [r for r in table["rows"] if r.get("refusal_unseen")]
    lines.append(f"  undecided where vLLM refused and srcreview named no refusal (missed but for an open knob): "
                 f"{len(unseen)}")
    for r in unseen:
        lines.append(f"    {r['id']}: {r['exception']} at {r['frame'] or '-'} {r['message'][:110]!r}; open: {r['why'][:80]}")
    undecided = Counter(reason.strip() for r in table["rows"] if r["cell"] == "undecided"
                        for reason in r["why"].split(", ") if reason.strip())
    if undecided:
        lines.append("  undecided, by what srcreview left open (a recipe may have several):")
        for reason, n in undecided.most_common(12):
            lines.append(f"    {n:4d}  {reason}")
    for name in ("missed", "confident wrong", "environment-only", "srcreview error"):
        rows = [r for r in table["rows"] if r["cell"] == name]
        if rows:
            lines.append(f"  {name} ({len(rows)}):")
            for r in rows:
                lines.append(f"    {r['id']}: vLLM {r['vllm']} {r['exception'] or ''} at {r['frame'] or '-'} "
                             f"[{r['stage']}] {r['message'][:160]!r}; srcreview {r['srcreview']} {r['why'][:120]}")
    return "\n".join(lines) + "\n"
