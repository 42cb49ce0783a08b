"""`--format review`: the independent-review JSON operators already write (operator-workflow/v1).

Generated from the reviews, never written by hand: `pinned_runtime.source_urls` are the
evidence anchors (url + the role they play), `findings_summary` the findings,
`breakage_probes` the findings of rules that declare a probe, `missing_tests` the tests the
coverage rules found missing, and the recommendation follows from the problems and open questions.
`SCHEMA` is the JSON Schema of the document (`srcreview schema review`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, cast

from srcreview.core.textsafe import dumps
from srcreview.model.findings import SEVERITY_ORDER, Review
from srcreview.vllm.anchors import SPECULATIVE

SCHEMA_VERSION = "operator-workflow/v1"
MAX_SOURCE_URLS = 60

_CLASSIFICATION = {"type": "string", "enum": ["confirmed", "refuted", "plausible"]}
_SEVERITY = {"type": "string", "enum": ["high", "medium", "low", "info"]}

SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://srcreview.invalid/schemas/operator-workflow-v1.json",
    "title": "Independent pinned-source review (operator-workflow/v1)",
    "type": "object",
    "required": ["schema_version", "request", "targets", "artifacts", "recommendation"],
    "properties": {
        "schema_version": {"const": SCHEMA_VERSION},
        "request": {
            "type": "object",
            "required": ["action"],
            "properties": {
                "action": {"type": "string"},
                "model": {"type": ["string", "null"]},
                "hardware": {"type": ["string", "null"]},
                "execution_scope": {"type": "string"},
            },
        },
        "gate_state": {"type": "string"},
        "targets": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "tools_used": {"type": "array", "items": {"type": "string"}},
        "artifacts": {
            "type": "object",
            "required": ["pinned_runtime", "findings_summary", "breakage_probes", "missing_tests"],
            "properties": {
                "pinned_runtime": {
                    "type": "object",
                    "required": ["vllm_revision", "source_urls"],
                    "properties": {
                        "vllm_version": {"type": ["string", "null"]},
                        "vllm_revision": {"type": "string", "pattern": "^[0-9a-f]{7,40}$"},
                        "source_inspected_on": {"type": "string"},
                        "patches": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["file", "sha256"],
                                "properties": {
                                    "file": {"type": "string"},
                                    "kind": {"type": "string", "enum": ["patch", "overlay"]},
                                    "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                                    "touched": {"type": "array", "items": {"type": "string"}},
                                },
                            },
                        },
                        "model_configs": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["model", "source"],
                                "properties": {
                                    "model": {"type": "string"},
                                    "source": {"type": "string"},
                                    "commit": {"type": ["string", "null"]},
                                    "files": {"type": "array", "items": {
                                        "type": "object", "required": ["path", "sha256"],
                                        "properties": {"path": {"type": "string"},
                                                       "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"}}}},
                                    "stated_by_recipe": {"type": "array", "items": {"type": "string"}},
                                    "unknown": {"type": ["string", "null"]},
                                },
                            },
                        },
                        "runtime_profiles": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["platform", "container", "packages", "summary"],
                                "properties": {
                                    "platform": {"type": ["string", "null"]},
                                    "platform_from": {"type": "string"},
                                    "gpu": {"type": ["string", "null"]},
                                    "compute_capability": {"type": ["string", "null"]},
                                    "container": {"type": "string"},
                                    "requirements": {"type": "array", "items": {"type": "string"}},
                                    "packages": {"type": "array", "items": {
                                        "type": "object", "required": ["name", "installed", "source"],
                                        "properties": {"name": {"type": "string"},
                                                       "installed": {"type": "boolean"},
                                                       "requirement": {"type": "string"},
                                                       "source": {"type": "string"}}}},
                                    "plugins": {"type": "string"},
                                    "summary": {"type": "string"},
                                },
                            },
                        },
                        "source_urls": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["url", "purpose"],
                                "properties": {
                                    "url": {"type": "string", "pattern": "^https?://"},
                                    "purpose": {"type": "string", "minLength": 1},
                                },
                            },
                        },
                    },
                },
                "findings_summary": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["severity", "classification", "finding"],
                        "properties": {
                            "severity": _SEVERITY,
                            "classification": _CLASSIFICATION,
                            "finding": {"type": "string", "minLength": 1},
                            "rule": {"type": "string"},
                            "target": {"type": "string"},
                            "fingerprint": {"type": "string"},
                            "evidence": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                },
                "breakage_probes": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["axis", "input_or_state", "wrong_result", "classification"],
                        "properties": {
                            "axis": {"type": "string"},
                            "input_or_state": {"type": "string"},
                            "wrong_result": {"type": "string"},
                            "classification": _CLASSIFICATION,
                            "evidence": {"type": "string"},
                        },
                    },
                },
                "missing_tests": {"type": "array", "items": {"type": "string"}},
            },
        },
        "recommendation": {"type": "string", "minLength": 1},
        "human_gate_required": {"type": "boolean"},
        "promoted": {"type": "boolean"},
    },
}


def render(reviews: Sequence[Review] | Review, *, rules=None, date: str | None = None, **_options) -> str:
    return dumps(document(reviews, rules=rules, date=date), indent=2) + "\n"


def document(reviews: Sequence[Review] | Review, *, rules=None, date: str | None = None) -> dict:
    if isinstance(reviews, Review):
        reviews = [reviews]
    rules_by_id = {r.id: r for r in (rules or ())}
    first = reviews[0]
    many = len(reviews) > 1
    models = sorted(cast("set[str]", {_model(r, rules_by_id) for r in reviews} - {None}))
    hardware = sorted(cast("set[str]", {_hardware(r) for r in reviews} - {None}))
    pinned: dict[str, Any] = {"vllm_version": first.revision.version, "vllm_revision": first.revision.sha}
    if date:
        pinned["source_inspected_on"] = date
    pinned["source_urls"] = None  # filled below, once the findings it must cite are known
    layers = {(p.file, p.sha256): p for r in reviews for p in r.patches}
    if layers:  # the engine that runs: upstream plus these (their lines are cited by the patch file, not here)
        pinned["patches"] = [{"file": p.file, "kind": p.kind, "sha256": p.sha256, "touched": list(p.touched)}
                             for p in layers.values()]
    configs = {m.ref: m for r in reviews for m in r.models}
    if configs:  # the model configs that decided model-dependent branches (or why they could not)
        pinned["model_configs"] = [
            {"model": m.ref, "source": m.source, "commit": m.commit,
             "files": [{"path": f.path, "sha256": f.sha256} for f in m.files],
             "stated_by_recipe": [f"{v.key} (line {v.line})" for v in m.stated], "unknown": m.unknown}
            for m in configs.values()]
    profiles = {json.dumps(r.profile.model_dump(mode="json"), sort_keys=True): r.profile
                for r in reviews if r.profile is not None}
    if profiles:  # what the machine is assumed to be: import-time probes were answered from it
        pinned["runtime_profiles"] = [{**p.model_dump(mode="json"), "summary": p.summary()}
                                      for p in profiles.values()]
    summary, probes = [], []
    for r in reviews:
        for f in r.findings:
            entry: dict[str, Any] = {"severity": f.severity, "classification": f.classification,
                     "finding": (f"{r.recipe.name}: " if many else "") + f.message, "rule": f.rule}
            if many:
                entry["target"] = r.recipe.path
            entry["fingerprint"] = f.fingerprint
            entry["evidence"] = sorted({a.url for a in f.evidence})[:8]
            summary.append(entry)
            probe = _probe(f, rules_by_id.get(f.rule), r)
            if probe:
                probes.append(probe)
    summary.sort(key=lambda e: ({"confirmed": 0, "plausible": 1, "refuted": 2}[e["classification"]],
                                -SEVERITY_ORDER[e["severity"]], e["rule"], e.get("target", ""), e["finding"]))
    pinned["source_urls"] = _source_urls(reviews, {url for e in summary for url in e["evidence"]})
    probes = list({json.dumps(p, sort_keys=True): p for p in probes}.values())
    probes.sort(key=lambda p: (p["axis"], p["input_or_state"]))
    missing = sorted({t for r in reviews for t in r.missing_tests})
    return {
        "schema_version": SCHEMA_VERSION,
        "request": {
            "action": "independent pinned-source review of " + ", ".join(r.recipe.name for r in reviews),
            "model": models[0] if len(models) == 1 else (", ".join(models) or None),
            "hardware": ", ".join(hardware) or None,
            "execution_scope": "static source review only; no endpoint, GPU, lifecycle, route, or promotion action",
        },
        "gate_state": "not_required",
        "targets": [r.recipe.path for r in reviews],
        "tools_used": [f"srcreview {first.tool.version}: static review of the exact pinned vLLM source "
                       f"({first.revision.source or 'source'})"],
        "artifacts": {
            "pinned_runtime": pinned,
            "findings_summary": summary,
            "breakage_probes": probes,
            "missing_tests": missing,
            **_startup_evidence(reviews),
        },
        "recommendation": _recommendation(reviews),
        "human_gate_required": False,
        "promoted": False,
    }


def _startup_evidence(reviews) -> dict:
    """The start-up evidence plan of each review: the contract's "capture resolved startup evidence"
    made concrete (which log lines prove which knob at this revision)."""
    plans = [{"target": r.recipe.path, **r.startup_evidence.model_dump(mode="json")}
             for r in reviews if r.startup_evidence is not None]
    return {"startup_evidence": plans} if plans else {}


def _model(review: Review, _rules) -> str | None:
    return review.recipe.model


def _hardware(review: Review) -> str | None:
    ref = review.recipe
    if ref.gpu and ref.compute_capability:
        return f"{ref.gpu} (sm{ref.compute_capability.replace('.', '')})"
    return ref.gpu or (f"compute capability {ref.compute_capability}" if ref.compute_capability else None)


def _source_urls(reviews, cited: set[str]) -> list[dict]:
    """Every anchor URL the findings cite (so each has its purpose), then others up to the cap."""
    seen: dict[str, str] = {}
    for r in reviews:
        anchors = list(r.runner.evidence)
        for f in r.findings:
            anchors += list(f.evidence)
        for k in r.knobs:
            anchors += list(k.evidence)
        for a in anchors:
            if a.url not in seen and a.role and not a.patched:  # source URLs are upstream's
                seen[a.url] = anchor_purpose(a)
    items = sorted(seen.items(), key=lambda kv: (kv[0] not in cited, kv[0]))
    items = sorted(items[:max(MAX_SOURCE_URLS, sum(url in cited for url in seen))])
    return [{"url": url, "purpose": purpose} for url, purpose in items]


def anchor_purpose(anchor) -> str:
    """The anchor's role, naming its symbol so that a reader (or `srcreview audit`) can check it
    against the anchored lines: a symbol the role does not name goes in front, and a plain word
    the role uses for it (`the branch that decides the gate: if unsupported`) is quoted as code."""
    parts = anchor.symbol.split(".") if anchor.symbol else []
    if not parts:
        return anchor.role
    name = parts[-1]
    if name in anchor.role:
        if re.fullmatch(r"[a-z][a-z0-9]*", name):  # prose-like: audit checks only what reads as code
            return re.sub(rf"(?<![`\w.]){re.escape(name)}(?![`\w.])", f"`{name}`", anchor.role, count=1)
        return anchor.role
    named = ".".join(parts[-2:]) if len(parts) > 1 and parts[-2][:1].isupper() else name
    return f"{named}: {anchor.role}"


def _probe(finding, rule, review) -> dict | None:
    if rule is None or rule.probe is None:
        return None
    from srcreview.core.templates import fill

    values = {s.key: s.value for s in _settings(review)}
    values.update({"key": finding.knobs[0] if finding.knobs else "", "value": _value(review, finding)})
    values["hardware.compute_capability"] = _capability(review)
    probe = {"axis": rule.probe.axis, "input_or_state": fill(rule.probe.input_or_state, values),
             "wrong_result": fill(rule.probe.wrong_result, values), "classification": finding.classification}
    probe["evidence"] = finding.message
    return probe


def _settings(review):
    return [k for k in review.knobs if k.scope != "draft" or k.key.startswith(f"{SPECULATIVE}.")]


def _value(review, finding):
    key = finding.knobs[0] if finding.knobs else ""
    return next((k.value for k in review.knobs if k.key == key), None)


def _capability(review):
    return review.recipe.compute_capability


def _recommendation(reviews) -> str:
    blocking = [(r, f) for r in reviews for f in r.findings if f.kind == "problem" and f.severity == "high"]
    open_ = [(r, f) for r in reviews for f in r.findings if f.kind == "open-question"
             and SEVERITY_ORDER[f.severity] >= SEVERITY_ORDER["medium"]]
    incomplete = [r for r in reviews if r.incomplete]
    parts = []
    if incomplete:
        parts.append("The review is incomplete for " + ", ".join(r.recipe.name for r in incomplete)
                     + "; do not rely on it until it completes.")
    if blocking:
        names = sorted({r.recipe.name for r, _ in blocking})
        parts.append("Do not run " + ", ".join(names) + " as written: " + "; ".join(
            sorted({f"{f.rule} ({', '.join(f.knobs)})" for _, f in blocking})) + ".")
    ok = [r.recipe.name for r in reviews if not any(f.kind == "problem" and f.severity == "high"
                                                     for f in r.findings) and not r.incomplete]
    if ok:
        parts.append("Source review admits " + ", ".join(ok) + ".")
    if open_:
        parts.append("Before retaining a result, supply local evidence for: " + "; ".join(
            sorted({f"{f.rule} ({r.recipe.name})" for r, f in open_})) + ".")
    return " ".join(parts) or "No findings."
