"""`--format registry` and `--registry FILE`: the vLLM sources a review relied on, as source-registry entries.

Benchmark campaigns keep a source registry (schema `anvil-serving.benchmark-source-registry/v1`):
every source consulted, with `url`, `observed_at`, `age_class`, `evidence_type`,
`hardware_runtime_relevance` and `decision_impact`. This writes one entry per anchored source
of each review: the full-commit URL with its line range (or, for lines a patch made, the
patch file and its lines), what the lines show, naming their symbol so `srcreview audit` can
check it later, and the findings and knobs that used them.

Entries srcreview writes have ids `srcreview-<recipe>-<12 hex of the URL's sha256>`. Merging
into an existing registry replaces the entries written for the same recipe (dropping those the
new review no longer relies on) and never touches any other entry, nor the registry's own fields.
`SCHEMA` is the JSON Schema of the document (`srcreview schema registry`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from typing import cast

from srcreview.core.errors import DataError
from srcreview.core.textsafe import dumps
from srcreview.model.findings import Anchor, AnchorOrigin, Review

SCHEMA_ID = "anvil-serving.benchmark-source-registry/v1"
ID_PREFIX = "srcreview-"
MAX_REGISTRY_BYTES = 20_000_000
CURRENT = "current pinned engine revision"
_TEXT = {"type": "string", "minLength": 1}
_ENTRY_FIELDS = ("id", "url", "observed_at", "age_class", "evidence_type", "hardware_runtime_relevance",
                 "decision_impact")

SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://srcreview.invalid/schemas/benchmark-source-registry-v1.json",
    "title": "Benchmark source registry (anvil-serving.benchmark-source-registry/v1)",
    "description": "Every source a benchmark campaign consulted. srcreview writes the entries whose id starts "
                   "with 'srcreview-' and never changes the others.",
    "type": "object",
    "required": ["schema", "sources"],
    "properties": {
        "schema": {"const": SCHEMA_ID},
        "campaign_id": {"type": "string"},
        "observed_at": {"type": "string"},
        "sources": {
            "type": "array",
            "items": {
                "type": "object",
                "required": list(_ENTRY_FIELDS),
                "properties": {
                    "id": _TEXT,
                    "url": _TEXT,
                    "published_or_observed": {"type": "string"},
                    "observed_at": _TEXT,
                    "age_class": _TEXT,
                    "evidence_type": _TEXT,
                    "hardware_runtime_relevance": {"type": "string"},
                    "decision_impact": {"type": "string"},
                },
            },
        },
    },
}


def render(reviews: Sequence[Review] | Review, *, date: str, **_options) -> str:
    """A new registry holding the entries of `reviews`, observed on `date` (YYYY-MM-DD)."""
    if isinstance(reviews, Review):
        reviews = [reviews]
    doc = {"schema": SCHEMA_ID, "observed_at": date, "sources": entries(reviews, date)}
    return dumps(doc, indent=2) + "\n"


def entries(reviews: Sequence[Review], date: str) -> list[dict]:
    """One entry per (recipe, anchored URL), ordered by recipe then URL."""
    out = []
    for review in reviews:
        for url, anchor in sorted(_sources(review).items()):
            out.append(_entry(review, url, anchor, date))
    return out


def recipe_ids(name: str) -> re.Pattern:
    """The ids srcreview writes for the recipe `name` (and no other recipe's)."""
    return re.compile(re.escape(f"{ID_PREFIX}{_slug(name)}-") + r"[0-9a-f]{12}")


def merge(existing: dict, reviews: Sequence[Review], date: str) -> dict:
    """`existing` with the entries of `reviews`: those srcreview wrote for the same recipes are
    replaced in place (or dropped when no longer relied on), new ones appended; nothing else changes."""
    fresh = entries(reviews, date)
    by_id = {e["id"]: e for e in fresh}
    owned = [recipe_ids(r.recipe.name) for r in reviews]
    kept, placed = [], set()
    for entry in existing["sources"]:
        entry_id = entry.get("id") if isinstance(entry, dict) else None
        if isinstance(entry_id, str) and any(p.fullmatch(entry_id) for p in owned):
            if entry_id in by_id and entry_id not in placed:
                kept.append(by_id[entry_id])
                placed.add(entry_id)
            continue
        kept.append(entry)
    kept += [e for e in fresh if e["id"] not in placed]
    return {**existing, "sources": kept}


def load_registry(raw: bytes, shown: str) -> dict:
    """A registry document; DataError (one line) when it is not one."""
    if len(raw) > MAX_REGISTRY_BYTES:
        raise DataError(f"{shown}: registry is {len(raw)} bytes, over the {MAX_REGISTRY_BYTES}-byte limit")
    try:
        doc = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise DataError(f"{shown}: registry is not valid UTF-8") from None
    except json.JSONDecodeError as exc:
        raise DataError(f"{shown}:{exc.lineno}: malformed JSON: {exc.msg}") from None
    except RecursionError:
        raise DataError(f"{shown}: malformed JSON: nesting too deep") from None
    if not is_registry(doc):
        raise DataError(f"{shown}: not a source registry (expected \"schema\": \"{SCHEMA_ID}\" and a \"sources\" list)")
    ids = [e.get("id") for e in doc["sources"] if isinstance(e, dict)]
    duplicate = next((i for n, i in enumerate(ids) if i is not None and i in ids[:n]), None)
    if duplicate is not None:
        raise DataError(f"{shown}: source id {duplicate!r} appears twice")
    return doc


def is_registry(doc) -> bool:
    return isinstance(doc, dict) and doc.get("schema") == SCHEMA_ID and isinstance(doc.get("sources"), list)


def render_merged(doc: dict) -> str:
    return dumps(doc, indent=2) + "\n"


# ----------------------------------------------------------------------------- one entry

def _sources(review: Review) -> dict[str, Anchor]:
    """Anchored URLs with a role, first anchor of each (the same anchors as the review format)."""
    anchors = list(review.runner.evidence)
    for f in review.findings:
        anchors += list(f.evidence)
    for k in review.knobs:
        anchors += list(k.evidence)
    found: dict[str, Anchor] = {}
    for a in anchors:
        if a.role and a.url not in found:
            found[a.url] = a
    return found


def _entry(review: Review, url: str, anchor: Anchor, date: str) -> dict:
    context = [f"vLLM {review.revision.version or review.revision.sha[:12]}"]
    if review.runner.value:
        context.append(f"{review.runner.value} model runner")
    hardware = _hardware(review)
    if hardware:
        context.append(hardware)
    if anchor.patched:
        context.append(f"patched by {cast(AnchorOrigin, anchor.origin).file}")  # a patched anchor has one
    return {
        "id": f"{ID_PREFIX}{_slug(review.recipe.name)}-{hashlib.sha256(url.encode()).hexdigest()[:12]}",
        "url": url,
        "published_or_observed": date,
        "observed_at": date,
        "age_class": age_class(review),
        "evidence_type": "engine-patch" if anchor.patched else "official-source-code",
        "hardware_runtime_relevance": f"{_claim(anchor)} ({', '.join(context)})",
        "decision_impact": _impact(review, url),
    }


def _claim(anchor: Anchor) -> str:
    """What the lines show, naming something `srcreview audit` can look for in them: the review
    format's purpose, led by the anchor's symbol when the purpose names no identifier."""
    from srcreview.audit.reviews import parse_purpose
    from srcreview.report.review import anchor_purpose

    purpose = anchor_purpose(anchor)
    if anchor.symbol and not any(t.strong for t in parse_purpose(purpose).terms):
        return f"`{anchor.symbol.rsplit('.', 1)[-1]}`: {purpose}"
    return purpose


def _impact(review: Review, url: str) -> str:
    """The findings and knob rows of the review that this source supports."""
    parts = []
    for f in review.findings:
        if any(a.url == url for a in f.evidence) or any(h.anchor is not None and h.anchor.url == url for h in f.trace):
            keys = f" ({', '.join(f.knobs)})" if f.knobs else ""
            parts.append(f"{f.classification} {f.severity} {f.rule}{keys}")
    for k in review.knobs:
        if any(a.url == url for a in k.evidence):
            parts.append(f"{k.key} ({k.scope}) {k.status}")
    if any(a.url == url for a in review.runner.evidence) and review.runner.value:
        parts.append(f"model runner {review.runner.value}")
    return f"{review.recipe.name}: " + ("; ".join(dict.fromkeys(parts)) or "context of the review")


def age_class(review: Review) -> str:
    """The reviewed revision relative to the recipe's pin."""
    from srcreview.model.revision import parse_version

    info = review.revision
    if info.recipe_pin is None:
        return "no recipe pin"
    if info.matches_recipe_pin:
        return CURRENT
    pinned = _pinned_version(info.recipe_pin)
    if info.version and pinned:
        order = "newer" if parse_version(info.version) > parse_version(pinned) else "older"
        return f"{order} than the recipe pin ({pinned})"
    return f"not the recipe pin ({info.recipe_pin[:12]})"


def _pinned_version(pin: str) -> str | None:
    from srcreview.core.errors import UsageError
    from srcreview.model.revision import resolve_rev

    try:
        return resolve_rev(pin).version
    except (UsageError, DataError):
        return None


def _hardware(review: Review) -> str:
    ref = review.recipe
    capability = f"sm{ref.compute_capability.replace('.', '')}" if ref.compute_capability else ""
    return " ".join(p for p in (ref.gpu, capability) if p)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._]+", "-", name).strip("-") or "recipe"
