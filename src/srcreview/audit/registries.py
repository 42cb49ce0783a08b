"""Audit a source registry's vLLM entries: pinned, at the recipe's pin, and still showing what they claim.

A registry (`anvil-serving.benchmark-source-registry/v1`) lists every source a campaign
consulted. Its vLLM entries are judged like a review's anchors (`srcreview.audit.reviews`), one by one:

- `unpinned`: the URL names a tag, branch or abbreviated commit, a pull request, or a
  container image by tag rather than digest: what it shows can change;
- `other-revision`: a full commit other than the recipe's pin (`--recipe`);
- `whole-file`: pinned, but no line range says which lines support the entry;
- `ok` / `drifted` / `unverifiable`: the line range checked by the review audit against the
  entry's claim, which is its `hardware_runtime_relevance` text, or, with `--review`, what a
  review citing the same URL says of it. A claim that names no identifier and is shared by
  several entries says what they show together, not what this range shows: unverifiable.

Entries that are not vLLM sources (model cards, other repositories) are `not-vllm` and not
checked. Like `srcreview.audit.reviews`, no I/O of its own: trees come from a callback.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Literal
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict

from srcreview.audit.reviews import (
    AnchorRef,
    Auditor,
    IndexFor,
    Range,
    TreeFor,
    collect_anchors,
    parse_purpose,
)
from srcreview.core.errors import SourceUnavailable, SrcreviewError
from srcreview.source.base import clean_relpath, repo_url

Status = Literal["ok", "drifted", "unverifiable", "unpinned", "other-revision", "whole-file", "not-vllm"]
FAILING = ("drifted", "unpinned", "other-revision")
STATUSES = ("ok", "drifted", "unpinned", "other-revision", "whole-file", "unverifiable", "not-vllm")
_FULL = 40


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class RegistryEntryAudit(_Frozen):
    pointer: str  # JSON pointer of the entry
    id: str
    url: str
    status: Status
    reason: str
    claim: str = ""  # the text the line range was checked against
    claim_from: Literal["", "entry", "review"] = ""
    terms: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()
    corrected: Range | None = None
    notes: tuple[str, ...] = ()


class RegistryAuditReport(_Frozen):
    registry: str
    pin: str | None  # the commit entries must be at (from --recipe), if given
    entries: tuple[RegistryEntryAudit, ...]

    def summary(self) -> dict[str, int]:
        counts: Counter[str] = Counter(e.status for e in self.entries)
        return {s: counts.get(s, 0) for s in STATUSES}

    @property
    def failed(self) -> bool:
        return any(e.status in FAILING for e in self.entries)


def review_claims(doc: Any) -> dict[str, str]:
    """URL -> what a review says its lines show (the first purpose given for it)."""
    claims: dict[str, str] = {}
    for ref in collect_anchors(doc):
        if ref.purpose:
            claims.setdefault(ref.url, ref.purpose)
    return claims


def audit_registry(doc: dict, name: str, tree_for: TreeFor, index_for: IndexFor | None = None, *,
                   pin=None, claims: dict[str, str] | None = None) -> RegistryAuditReport:
    """Judge every entry of a registry document. `pin`: the recipe's Revision (or None);
    `claims`: URL -> purpose from a review citing the same sources."""
    auditor = Auditor(tree_for, index_for)
    sources = doc["sources"]
    urls: dict[str, set[str]] = {}  # claim text -> the URLs it is written for
    for e in sources:
        if isinstance(e, dict) and isinstance(e.get("url"), str):
            urls.setdefault(_relevance(e), set()).add(e["url"])
    texts = Counter({text: len(found) for text, found in urls.items()})
    judged = []
    for n, entry in enumerate(sources):
        pointer = f"/sources/{n}"
        if not isinstance(entry, dict) or not isinstance(entry.get("url"), str):
            judged.append(RegistryEntryAudit(pointer=pointer, id=str(_get(entry, "id")), url="", status="unverifiable",
                                             reason="entry has no url"))
            continue
        judged.append(_judge(auditor, pointer, entry, pin, claims or {}, texts))
    return RegistryAuditReport(registry=name, pin=pin.sha if pin is not None else None, entries=tuple(judged))


def _get(entry, key: str):
    return entry.get(key, "") if isinstance(entry, dict) else ""


def _relevance(entry: dict) -> str:
    text = entry.get("hardware_runtime_relevance")
    return " ".join(text.split()) if isinstance(text, str) else ""


def _judge(auditor: Auditor, pointer: str, entry: dict, pin, claims: dict[str, str],
           texts: Counter) -> RegistryEntryAudit:
    url = entry["url"]
    base: dict[str, Any] = {"pointer": pointer, "id": str(entry.get("id", "")), "url": url}
    source = _vllm_source(url)
    if source is None:
        return RegistryEntryAudit(**base, status="not-vllm", reason="not a vLLM source: not checked")
    if isinstance(source, str):
        return RegistryEntryAudit(**base, status="unpinned", reason=source)
    rev, path, ranged = source
    if len(rev) != _FULL or not all(c in "0123456789abcdef" for c in rev.lower()):
        return RegistryEntryAudit(**base, status="unpinned",
                                  reason=f"{rev!r} is a tag, branch or abbreviated commit, not a full commit: "
                                         "what it shows can change")
    if pin is not None and not pin.matches_commit(rev):
        return RegistryEntryAudit(**base, status="other-revision",
                                  reason=f"commit {rev[:12]} is not the recipe pin {pin.label()}")
    if not ranged:
        return _whole_file(auditor, base, rev, path)
    origin: Literal["entry", "review"]
    claim, origin = (claims[url], "review") if url in claims else (_relevance(entry), "entry")
    purpose = parse_purpose(claim)
    if origin == "entry" and texts[claim] > 1 and not any(t.strong for t in purpose.terms):
        return RegistryEntryAudit(**base, status="unverifiable", claim=claim, claim_from=origin,
                                  reason=f"its text is shared by entries for {texts[claim]} URLs and names no "
                                         "identifier: it says "
                                         "what they show together, not what this range shows (--review REVIEW.json "
                                         "takes each URL's own claim from a review)")
    checked = auditor.judge(AnchorRef(pointer + "/url", url, claim))
    return RegistryEntryAudit(**base, status=checked.status, reason=checked.reason, claim=claim, claim_from=origin,
                              terms=checked.terms, missing=checked.missing, corrected=checked.corrected,
                              notes=checked.notes)


def _whole_file(auditor: Auditor, base: dict, rev: str, path: str) -> RegistryEntryAudit:
    if not path:
        return RegistryEntryAudit(**base, status="whole-file",
                                  reason="pinned to a commit, but to no file or line range")
    try:
        tree = auditor._tree(rev)
        found = tree.exists(clean_relpath(path))
    except (SourceUnavailable, SrcreviewError) as exc:
        return RegistryEntryAudit(**base, status="unverifiable", reason=exc.message)
    if not found:
        return RegistryEntryAudit(**base, status="unverifiable", reason=f"{path} does not exist at {rev[:12]}")
    return RegistryEntryAudit(**base, status="whole-file",
                              reason="pinned to a commit, but to the whole file: no line range says which lines "
                                     "support the entry")


def _vllm_source(url: str) -> tuple[str, str, bool] | str | None:
    """(rev, path, has a line range) for a file of the configured repository; a reason string
    for a vLLM URL that names no commit; None for anything else."""
    parts = urlsplit(url)
    repo = repo_url().removeprefix("https://github.com/").strip("/").lower()
    owner, _, name = repo.partition("/")
    segments = [unquote(s) for s in parts.path.split("/") if s]
    lowered = [s.lower() for s in segments]
    if parts.netloc == "github.com" and lowered[:2] == [owner, name]:
        if len(segments) >= 5 and lowered[2] == "blob":
            return segments[3], "/".join(segments[4:]), parts.fragment.startswith("L")
        if len(segments) >= 4 and lowered[2] == "tree":
            return segments[3], "/".join(segments[4:]), False
        if len(segments) >= 4 and lowered[2] == "commit":
            return segments[3], "", False
        return f"a {lowered[2] if len(lowered) > 2 else 'repository'} page of {repo}, not a file at a commit"
    if parts.netloc == "raw.githubusercontent.com" and lowered[:2] == [owner, name] and len(segments) >= 4:
        return segments[2], "/".join(segments[3:]), False
    if owner in lowered or name in lowered:  # another vLLM artifact, e.g. its container image
        if "sha256:" in url:
            return None
        return "names a vLLM artifact by a tag or name, not by a digest or commit: what it is can change"
    return None
