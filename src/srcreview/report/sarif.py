"""SARIF 2.1.0 for code scanning: results annotate the recipe line that sets the knob.

Primary location: the recipe file (path relative, as shown in the review) at the line of
the knob. The vLLM anchors are related locations (linked from the message as `[symbol](n)`),
the trace is a codeFlow, and `versionControlProvenance` names the vLLM repository and
revision each anchor base (`VLLM_<sha12>`) maps to. Viewers that honour originalUriBaseIds
open the pinned GitHub lines; GitHub code scanning ignores that mapping (it shows the vLLM
paths without content), so each result also lists its anchors in `properties.evidenceUrls`.
`partialFingerprints` carry the finding's fingerprint, built from meaning (rule, recipe key,
symbols), so alerts survive line moves.

Results are the problems and open questions; facts (verified behaviour, which never fails
the gate) are not alerts: they are listed in `run.properties.facts`, with their evidence
URLs. Levels follow the classification and the gate, never the severity alone, so code
scanning's check (which fails on errors by default) agrees with srcreview's exit code: a
problem that fails the gate is an `error`, any other problem (below `--fail-on`, waived, or
unchanged against the baseline) a `warning`; an open question (plausible: the source did not
settle it) is a `note`, or a `warning` when it fails the gate (a `plausible` term in
`--fail-on`), never an `error`, whatever its severity. Rendered without a gate, problems are
errors and open questions notes. The message
starts with what the finding is (`problem, confirmed (high)` / `open question, plausible
(medium)`) and the rule's claim, with the characters SARIF reads as links (`[`, `]`) and
HTML tags escaped. Waived findings carry a SARIF suppression with the waiver's
reason; with a baseline, `baselineState` says new / updated (worse) / unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath
from typing import Any
from urllib.parse import quote

from srcreview.core.textsafe import dumps
from srcreview.model.findings import Anchor, Finding, Hop, Review

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT_KEY = "srcreviewFingerprint/v1"
RECIPE_BASE = "%SRCROOT%"
_TEMPLATE_FIELD = re.compile(r"\{([A-Za-z0-9_.\-]+)\}")
_ANCHOR_URL = re.compile(r"^(?P<repo>.+?)/blob/(?P<sha>[0-9a-fA-F]{7,40})/")
_PROBLEM_LEVEL = {"high": "error", "medium": "warning", "low": "note", "info": "note"}
# a result's level: (kind, fails the gate) -> level; see the module doc
_LEVEL = {("problem", True): "error", ("problem", False): "warning",
          ("open-question", True): "warning", ("open-question", False): "note"}
_DOC_TITLES = {"what": "What it checks", "why": "Why it matters", "instead": "What to do instead",
               "references": "References"}
_BASELINE_STATE = {"new": "new", "worse": "updated", "improved": "updated", "unchanged": "unchanged"}


@dataclass(frozen=True)
class RuleDoc:
    """What SARIF shows about a rule: its claim and its doc (markdown)."""

    id: str
    summary: str = ""
    description: str = ""
    doc: str = ""
    severity: str | None = None
    help_uri: str | None = None


def rule_docs(rules: Iterable[object] | Mapping[str, object] | None) -> dict[str, RuleDoc]:
    """RuleDocs from rule objects or dicts (id, claim/summary, doc as text or sections, severity)."""
    if rules is None:
        return {}
    items = rules.values() if isinstance(rules, Mapping) else rules
    docs = {}
    for rule in items:
        if isinstance(rule, RuleDoc):
            docs[rule.id] = rule
            continue
        get = (lambda k, r=rule: r.get(k)) if isinstance(rule, Mapping) else (lambda k, r=rule: getattr(r, k, None))
        rule_id = get("id")
        if not rule_id:
            continue
        summary = get("summary") or get("title") or get("claim") or ""
        doc = get("doc")
        what = doc.get("what") if isinstance(doc, Mapping) else getattr(doc, "what", None)
        docs[str(rule_id)] = RuleDoc(id=str(rule_id), summary=_TEMPLATE_FIELD.sub(r"<\1>", str(summary)),
                                     description=str(what or get("description") or ""), doc=_doc_text(doc),
                                     severity=get("severity"), help_uri=get("help_uri") or get("url"))
    return docs


def _doc_text(doc) -> str:
    if doc is None:
        return ""
    if isinstance(doc, str):
        return doc
    if not isinstance(doc, Mapping):
        doc = {k: getattr(doc, k) for k in ("what", "why", "instead", "references") if getattr(doc, k, None)}
    parts = []
    for key, value in doc.items():
        if not value:
            continue
        if isinstance(value, (list, tuple)):
            value = "\n".join(f"- {v}" for v in value)
        title = _DOC_TITLES.get(str(key), str(key).replace("_", " ").capitalize())
        parts.append(f"**{title}**\n\n{value}")
    return "\n\n".join(parts)


def recipe_uri(path: str) -> str:
    """A relative URI for a recipe path; an absolute path is cut to its file name, never leaked."""
    text = path.replace("\\", "/")
    if PurePosixPath(text).is_absolute() or PureWindowsPath(path).is_absolute():
        text = PurePosixPath(text).name
    while text.startswith("./"):
        text = text[2:]
    return quote(text, safe="/-_.~")


def shown_path(path: str) -> str:
    """A path for message text: as shown if relative, else only its file name."""
    text = path.replace("\\", "/")
    if PurePosixPath(text).is_absolute() or PureWindowsPath(path).is_absolute():
        return PurePosixPath(text).name
    return text


def render(reviews: Sequence[Review], *, gate=None, date: str | None = None,
           rules: Iterable[object] | Mapping[str, object] | None = None) -> str:
    """The SARIF log of a run (one SARIF run for all recipes), as deterministic JSON."""
    from srcreview import __version__

    if gate is not None:
        reviews = gate.annotate(reviews)
    reviews = sorted(reviews, key=lambda r: r.recipe.path)
    docs = rule_docs(rules)
    bases = _Bases()
    for review in reviews:
        bases.add_review(review)
    rule_ids = sorted({f.rule for r in reviews for f in r.findings if f.kind != "fact"}
                      | {s.rule for r in reviews for s in r.stale_rules})
    index = {rule_id: i for i, rule_id in enumerate(rule_ids)}
    results, facts = [], []
    failing = None if gate is None else {(p, f.fingerprint) for p, f in gate.failing}
    for review in reviews:
        for finding in sorted(review.findings, key=lambda f: (f.sort_key(), f.fingerprint)):
            if finding.kind == "fact":
                facts.append({"recipe": recipe_uri(review.recipe.path), "rule": finding.rule,
                              "classification": finding.classification, "fingerprint": finding.fingerprint,
                              "claim": finding.claim, "message": finding.message,
                              "evidenceUrls": sorted({a.url for a in finding.evidence})})
                continue
            key = (review.recipe.path, finding.fingerprint)
            fails = finding.kind == "problem" if failing is None else key in failing
            results.append(_result(review, finding, index, bases, fails))

    invocation: dict = {"executionSuccessful": not any(r.incomplete for r in reviews)}
    notifications = [{"level": "error", "message": {"text": inert(f"{shown_path(r.recipe.path)}: {reason}")}}
                     for r in reviews for reason in r.incomplete]
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    failing_stale = {(r.recipe.path, rule) for r in reviews if r.gate is not None for rule in r.gate.stale}
    stale = [{"level": "error" if (r.recipe.path, s.rule) in failing_stale else "warning",
              "descriptor": {"id": s.rule, "index": index[s.rule]},
              "message": {"text": f"rule {s.rule} is stale at {r.revision.sha[:12]}: "
                                  f"missing {', '.join(s.missing) or 'its anchors'}"}}
             for r in reviews for s in sorted(r.stale_rules, key=lambda s: s.rule)]
    if stale:
        invocation["toolConfigurationNotifications"] = stale
    if gate is not None:
        invocation["exitCode"] = gate.exit_code

    properties: dict = {}
    if date is not None:
        properties["reviewDate"] = date
    if gate is not None:
        properties["gate"] = {"decision": gate.decision, "exitCode": gate.exit_code, "failOn": str(gate.fail_on),
                              "failing": len(gate.failing), "waived": len(gate.waived), "summary": gate.summary()}
        if gate.stale:
            properties["gate"]["staleRulesFailing"] = len(gate.stale)
        if gate.baseline is not None:
            properties["gate"]["baseline"] = {
                "file": shown_path(gate.baseline), "new": len(gate.new), "worse": len(gate.worse),
                "unchanged": len(gate.unchanged) + len(gate.improved), "fixed": len(gate.fixed)}
    if facts:
        properties["facts"] = facts
    models = [{"recipe": r.recipe.path, **m.model_dump(mode="json", exclude={"read"}), "summary": m.summary()}
              for r in reviews for m in r.models]
    if models:
        properties["models"] = models
    profiles = [{"recipe": r.recipe.path, **r.profile.model_dump(mode="json"), "summary": r.profile.summary()}
                for r in reviews if r.profile is not None]
    if profiles:
        properties["runtimeProfiles"] = profiles
    startup = [{"recipe": r.recipe.path, **r.startup.model_dump(mode="json"), "summary": r.startup.line()}
               for r in reviews if r.startup is not None]
    if startup:
        properties["startup"] = startup
    plans = [{"recipe": r.recipe.path, **r.startup_evidence.model_dump(mode="json")}
             for r in reviews if r.startup_evidence is not None]
    if plans:
        properties["startupEvidence"] = plans

    driver = {"name": "srcreview", "version": __version__, "semanticVersion": __version__,
              "rules": [_rule(rule_id, docs.get(rule_id), reviews) for rule_id in rule_ids]}
    run: dict = {
        "tool": {"driver": driver},
        "invocations": [invocation],
        "results": results,
        "columnKind": "unicodeCodePoints",
    }
    if bases.ids:
        run["originalUriBaseIds"] = bases.original_uri_base_ids()
        run["versionControlProvenance"] = bases.provenance()
    if properties:
        run["properties"] = properties
    log = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return dumps(log, indent=2, sort_keys=True) + "\n"


class _Bases:
    """One uriBaseId per vLLM (repository, revision) the anchors point into."""

    def __init__(self):
        self.ids: dict[tuple[str, str], dict] = {}

    def add_review(self, review: Review) -> None:
        for anchor in _anchors(review):
            self.of(anchor, review)

    def of(self, anchor: Anchor, review: Review) -> str | None:
        match = _ANCHOR_URL.match(anchor.url)
        if match is None:
            return None
        key = (match.group("repo"), match.group("sha"))
        if key not in self.ids:
            self.ids[key] = {"id": f"VLLM_{key[1][:12]}",
                             "version": review.revision.version if review.revision.sha[:7] == key[1][:7] else None}
        return self.ids[key]["id"]

    def original_uri_base_ids(self) -> dict:
        out = {}
        for (repo, sha), info in sorted(self.ids.items()):
            label = f"vLLM {info['version']} ({sha[:12]})" if info["version"] else f"vLLM {sha[:12]}"
            out[info["id"]] = {"uri": f"{repo}/blob/{sha}/", "description": {"text": f"{label} source"}}
        return out

    def provenance(self) -> list:
        return [{"repositoryUri": repo, "revisionId": sha, "mappedTo": {"uriBaseId": info["id"]}}
                for (repo, sha), info in sorted(self.ids.items())]


def _anchors(review: Review) -> list[Anchor]:
    found = [a for f in review.findings for a in f.evidence]
    found += [h.anchor for f in review.findings for h in f.trace if h.anchor is not None]
    return found


def _recipe_location(review: Review, line: int) -> dict:
    where = review.recipe.file or review.recipe.path  # a compose service annotates its compose file
    return {"physicalLocation": {"artifactLocation": {"uri": recipe_uri(where), "uriBaseId": RECIPE_BASE},
                                 "region": {"startLine": max(line, 1)}}}


def _anchor_location(anchor: Anchor, review: Review, bases: _Bases) -> dict:
    origin = anchor.origin  # a patched tree's anchor: where its URL points, not the patched file's lines
    path, first, last = (origin.file, origin.start_line, origin.end_line) if origin is not None \
        else (anchor.path, anchor.start_line, anchor.end_line)
    if origin is not None and origin.kind == "patched":  # the patch file, beside the recipe in the repository
        artifact = {"uri": recipe_uri(path), "uriBaseId": RECIPE_BASE}
    else:
        base = bases.of(anchor, review)
        artifact = {"uri": quote(path, safe="/-_.~"), "uriBaseId": base} if base else {"uri": anchor.url}
    region = {"startLine": max(first, 1), "endLine": max(last, first, 1)}
    location: dict[str, Any] = {"physicalLocation": {"artifactLocation": artifact, "region": region}}
    text = ": ".join(p for p in (anchor.role, anchor.symbol) if p)
    if text:
        location["message"] = {"text": inert(text)}
    if anchor.symbol:
        location["logicalLocations"] = [{"fullyQualifiedName": anchor.symbol}]
    return location


def _hop_location(hop: Hop, review: Review, bases: _Bases) -> dict:
    if hop.anchor is not None:
        location = _anchor_location(hop.anchor, review, bases)
    elif hop.recipe_line is not None or hop.kind == "recipe":
        location = _recipe_location(review, hop.recipe_line or 1)
    else:
        location = {}
    location["message"] = {"text": inert(hop.text)}
    return {"location": location, "kinds": [hop.kind]}


def _result(review: Review, finding: Finding, index: dict, bases: _Bases, fails: bool) -> dict:
    level = _LEVEL[(finding.kind, fails)]
    related = []
    links = []
    for i, anchor in enumerate(sorted(finding.evidence, key=Anchor.sort_key), start=1):
        location = _anchor_location(anchor, review, bases)
        location["id"] = i
        related.append(location)
        links.append(f"[{inert(anchor.symbol or anchor.path)}]({i})")
    what = "problem" if finding.kind == "problem" else "open question"
    text = f"{what}, {finding.classification} ({finding.severity}): {inert(finding.claim)}. {inert(finding.message)}"
    if links:
        text += " Evidence: " + ", ".join(links) + "."
    result: dict = {
        "ruleId": finding.rule,
        "ruleIndex": index[finding.rule],
        "kind": "fail",
        "level": level,
        "message": {"text": text},
        "locations": [_recipe_location(review, review.line_of(finding))],
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
        "properties": {
            "classification": finding.classification,
            "kind": finding.kind,
            "severity": finding.severity,
            "claim": finding.claim,
            "findingId": finding.id,
            "knobs": list(finding.knobs),
            "tags": sorted(finding.tags),
            "recipe": recipe_uri(review.recipe.path),
            "revision": review.revision.sha,
        },
    }
    if finding.missing_tests:
        result["properties"]["missingTests"] = list(finding.missing_tests)
    if finding.assumptions:
        result["properties"]["assumptions"] = list(finding.assumptions)
    if related:
        result["relatedLocations"] = related
        # code scanning ignores originalUriBaseIds, so the pinned links travel as data too
        result["properties"]["evidenceUrls"] = sorted({a.url for a in finding.evidence})
    if finding.trace:
        result["codeFlows"] = [{"threadFlows": [{"locations": [_hop_location(h, review, bases)
                                                               for h in finding.trace]}]}]
    if finding.baseline is not None:
        result["baselineState"] = _BASELINE_STATE[finding.baseline]
    if finding.waiver is not None:
        waiver = finding.waiver
        in_recipe = waiver.source.rsplit(":", 1)[0] == review.recipe.path
        result["suppressions"] = [{
            "kind": "inSource" if in_recipe else "external",
            "status": "accepted",
            "justification": f"{waiver.reason} (expires {waiver.expires}; {shown_path(waiver.source)})",
        }]
    return result


_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")


def inert(text: str) -> str:
    """Text for a SARIF message: `\\`, `[` and `]` escaped (no embedded link can be formed from
    recipe values) and `<` before a tag name shown as `\\x3c` (no HTML tag either)."""
    text = text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return _TAG_START.sub(r"\\x3c", text)


def _rule(rule_id: str, doc: RuleDoc | None, reviews: Sequence[Review]) -> dict:
    examples = sorted((f for r in reviews for f in r.findings if f.rule == rule_id),
                      key=lambda f: (f.sort_key(), f.fingerprint))
    summary = (doc.summary if doc and doc.summary else examples[0].claim if examples else rule_id)
    severity = (doc.severity if doc and doc.severity else examples[0].severity if examples else None)
    descriptor: dict = {"id": rule_id, "shortDescription": {"text": _first_line(summary)}}
    if doc and (doc.description or doc.doc):
        descriptor["fullDescription"] = {"text": doc.description or _first_paragraph(doc.doc)}
    if doc and doc.doc:
        descriptor["help"] = {"text": doc.doc.replace("**", ""), "markdown": doc.doc}
    if doc and doc.help_uri:
        descriptor["helpUri"] = doc.help_uri
    if severity in _PROBLEM_LEVEL:
        descriptor["defaultConfiguration"] = {"level": _PROBLEM_LEVEL[severity]}
        descriptor["properties"] = {"severity": severity}
    return descriptor


def _first_paragraph(text: str) -> str:
    """The first paragraph that is not a bold heading."""
    for block in text.split("\n\n"):
        block = block.strip()
        if block and not (block.startswith("**") and block.endswith("**")):
            return " ".join(block.split())
    return _first_line(text)


def _first_line(text: str) -> str:
    for line in text.splitlines():
        line = line.strip().strip("*").strip()
        if line:
            return line
    return text.strip() or "-"
