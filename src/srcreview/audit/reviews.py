"""Audit a hand-written review: do its line anchors still show what their `purpose` says?

Hand reviews cite vLLM as `https://github.com/<repo>/blob/<rev>/<path>#L<a>-L<b>` with a
sentence saying what those lines show. Anchors drift: a range typed against one checkout is
pasted with another commit. For each anchor this module reads the file at the URL's revision
and checks whether the anchored lines contain the things the purpose names:

- identifiers written as code (`load_eagle_model`, `speculative_config.attention_backend`,
  `VllmConfig`, `fp8_per_token_head`) and command-line flags (`--attention-backend`);
- a small, conservative vocabulary of concepts (`CONCEPTS` below: "attention backend",
  "KV dtype", "slot mappings", "SM89", ...), matched against code words (snake_case and
  CamelCase split, `attn` read as `attention`, plurals folded).

Words of the purpose that are neither are ignored; things it says are *not* there ("does not
apply X", "rather than Y", "not proof of Z"), things named in a remark "(default None)" and
the key of `key=value` are recorded but never required. `Owner.name` needs `name` on a line
that also shows the owner (in any spelling: `cache_config` for `CacheConfig`) or inside the
owner's declaration, when the file lets that be told. A range inside the function a term
names shows that term. A bare CamelCase word that nothing at the revision declares is taken
as prose ("PyTorch"). The verdicts:

- `ok`: every required term occurs inside the anchored lines;
- `drifted`: some required term is missing from the range but occurs elsewhere: the corrected
  range is the smallest span of the file (or of another file at that revision, when a named
  identifier is not in the anchored file at all) that shows every term, widened to whole
  declarations and statements through the analysis Index;
- `unverifiable`: the purpose names nothing checkable, the named things are nowhere in the
  file, the file is missing at that revision, or the URL is not a fixed revision of the
  configured repository.

The engine does no I/O of its own: it is given the review document and callbacks that
return a SourceTree for a revision (and optionally an Index for a tree).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, cast
from urllib.parse import unquote, urlsplit

from srcreview.core.errors import (
    DataError,
    SourceUnavailable,
    SrcreviewError,
    UsageError,
)
from srcreview.core.records import Record
from srcreview.source.base import anchor_url, clean_relpath, repo_url

Status = Literal["ok", "drifted", "unverifiable"]

MAX_REVIEW_BYTES = 5_000_000
MAX_UNIT_LINES = 120  # a declaration longer than this is shown by its header line, not whole
MAX_CANDIDATE_FILES = 3  # other files named in a reason when the described code is ambiguous
MAX_DECLARING_FILES = 25  # a name declared in more files than this says too little to pick one
MAX_RAW_FILES = 200  # files showing every missing name: more than this, no single correction

_URL_PREFIX = "https://github.com/"
_TOKEN = re.compile(r"[^\s\"'<>)\]]+")  # a URL never spans these
_LINE_FRAGMENT = re.compile(r"#L\d+(?:C\d+)?(?:-L?\d+(?:C\d+)?)?(?![\dC])")
_BLOB_PARTS = re.compile(r"^/(?P<repo>[^/]+/[^/]+)/blob/(?P<rev>[^/]+)/(?P<path>.+)$")
_FRAGMENT = re.compile(r"^L(?P<start>\d+)(?:C\d+)?(?:-L?(?P<end>\d+)(?:C\d+)?)?$")


# ----------------------------------------------------------------------------- results

class Range(Record):
    """A line range of one file at one revision, with its anchor URL."""

    path: str
    start_line: int
    end_line: int
    url: str


class AuditEntry(Record):
    """One anchor of the review and the verdict on it."""

    pointer: str  # JSON pointer of the URL inside the review document
    url: str
    path: str = ""
    rev: str = ""
    start_line: int = 0
    end_line: int = 0
    purpose: str = ""
    status: Status
    reason: str
    terms: tuple[str, ...] = ()  # what the purpose names and the audit looked for
    missing: tuple[str, ...] = ()  # terms the anchored range does not show
    claimed_absent: tuple[str, ...] = ()  # terms the purpose says are NOT there (never required)
    context: tuple[str, ...] = ()  # terms of remarks "(…)" and keys of key=value (never required)
    corrected: Range | None = None
    notes: tuple[str, ...] = ()


class AuditReport(Record):
    review: str
    entries: tuple[AuditEntry, ...]

    def count(self, status: Status) -> int:
        return sum(1 for e in self.entries if e.status == status)

    @property
    def drifted(self) -> bool:
        return any(e.status == "drifted" for e in self.entries)

    def summary(self) -> dict[str, int]:
        return {s: self.count(s) for s in ("ok", "drifted", "unverifiable")}


# ----------------------------------------------------------------------------- anchors

@dataclass(frozen=True)
class AnchorRef:
    """A line-anchored GitHub URL found in the review, with the purpose that goes with it."""

    pointer: str
    url: str
    purpose: str


def load_review(raw: bytes, shown: str) -> Any:
    """Parse a review document; DataError with one line when it is not JSON."""
    if len(raw) > MAX_REVIEW_BYTES:
        raise DataError(f"{shown}: review is {len(raw)} bytes, over the {MAX_REVIEW_BYTES}-byte limit")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise DataError(f"{shown}:{line}: review is not valid UTF-8") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{shown}:{exc.lineno}: malformed JSON: {exc.msg}") from None
    except RecursionError:
        raise DataError(f"{shown}: malformed JSON: nesting too deep") from None


def check_review_document(doc: Any, shown: str) -> list[AnchorRef]:
    """The anchors of a review document; DataError (65) for JSON that is not a review to audit:
    not an object, srcreview's own `check --format json` output, or no line-anchored URL."""
    if not isinstance(doc, dict):
        raise DataError(f"{shown}: not a review document (expected a JSON object, got {type(doc).__name__})")
    if isinstance(doc.get("reviews"), list) or {"findings", "knobs", "revision"} <= set(doc):
        raise DataError(f"{shown}: this is `srcreview check --format json` output, not a review document; "
                        "audit reads independent reviews (operator-workflow/v1, as `check --format review` writes)")
    anchors = collect_anchors(doc)
    if not anchors:
        raise DataError(f"{shown}: no line-anchored GitHub URL to audit "
                        "(expected URLs like https://github.com/OWNER/REPO/blob/REV/PATH#L10-L20)")
    return anchors


def collect_anchors(doc: Any) -> list[AnchorRef]:
    """Every line-anchored GitHub URL in the document, in document order.

    An object with `url` and `purpose` (the seed's `source_urls` entries) gives its purpose;
    a URL inside a longer string takes the rest of that string as its purpose; a URL in an
    object with a `purpose`, `description` or `evidence` sibling takes that text; a URL with
    none of these takes the purpose given to the same URL elsewhere in the document.
    """
    found: list[AnchorRef] = []
    stack: list[tuple[str, Any, dict | None]] = [("", doc, None)]
    while stack:
        pointer, value, parent = stack.pop()
        if isinstance(value, dict):
            for key in reversed(list(value)):
                stack.append((f"{pointer}/{_escape(str(key))}", value[key], value))
        elif isinstance(value, list):
            for i in reversed(range(len(value))):
                stack.append((f"{pointer}/{i}", value[i], None))
        elif isinstance(value, str):
            spans = list(_anchored_urls(value))
            for i, (start, end) in enumerate(spans):
                before = spans[i - 1][1] if i else 0
                after = spans[i + 1][0] if i + 1 < len(spans) else len(value)
                found.append(AnchorRef(pointer, value[start:end],
                                       _purpose_for(value, (before, start, end, after), parent)))
    # a URL cited without a purpose (a list of evidence URLs) takes the purpose the document
    # gives the same URL elsewhere (its source_urls entry)
    purposes: dict[str, str] = {}
    for ref in found:
        if ref.purpose:
            purposes.setdefault(ref.url, ref.purpose)
    return [ref if ref.purpose or ref.url not in purposes else AnchorRef(ref.pointer, ref.url, purposes[ref.url])
            for ref in found]


def _anchored_urls(text: str) -> Iterator[tuple[int, int]]:
    """Spans of GitHub URLs ending in a line fragment, found in linear time (a regex with a lazy
    run to `#L` is quadratic on a long string of URL prefixes: minutes for 400 KB)."""
    if _URL_PREFIX not in text:
        return
    for token in _TOKEN.finditer(text):
        body, offset = token.group(0), token.start()
        begin = body.find(_URL_PREFIX)
        while begin != -1:
            fragment = _LINE_FRAGMENT.search(body, begin)
            if fragment is None:
                break
            start = body.rfind(_URL_PREFIX, begin, fragment.start())
            yield offset + start, offset + fragment.end()
            begin = body.find(_URL_PREFIX, fragment.end())


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


MAX_LINE_DIGITS = 9  # a line anchor longer than this names no line (past 4,300 digits int() refuses it)
MAX_PURPOSE_CHARS = 600  # of the text around a URL inside a longer string, each side


def _purpose_for(text: str, around: tuple[int, int, int, int], parent: dict | None) -> str:
    """The text beside the URL (up to its neighbours), else the purpose-like sibling field."""
    before, start, end, after = around
    head = text[max(before, start - MAX_PURPOSE_CHARS):start]
    tail = text[end:min(after, end + MAX_PURPOSE_CHARS)]
    rest = (head + " " + tail).strip(" \t\n:;,-()")
    if rest:
        return " ".join(rest.split())
    if parent is not None:
        # a start-up evidence line's purpose is its logger call: the line must show it
        for key in ("purpose", "description", "evidence", "note", "finding", "call"):
            sibling = parent.get(key)
            if isinstance(sibling, str) and sibling.strip() and sibling.strip() != text:
                return f"`{sibling.strip()}`" if key == "call" else " ".join(sibling.split())
    return ""


@dataclass(frozen=True)
class ParsedUrl:
    repo: str
    rev: str
    path: str
    start: int
    end: int


def parse_blob_url(url: str) -> ParsedUrl:
    """Split a GitHub blob URL with a line fragment; DataError when it is not one."""
    parts = urlsplit(url)
    blob = _BLOB_PARTS.match(parts.path)
    fragment = _FRAGMENT.match(parts.fragment)
    if parts.netloc != "github.com" or not blob or not fragment:
        raise DataError(f"{url}: not a line-anchored GitHub blob URL")
    for number in (fragment.group("start"), fragment.group("end")):
        if number and len(number) > MAX_LINE_DIGITS:
            raise DataError(f"{url[:200]}: a line number of {len(number)} digits; no file has that many lines")
    start = int(fragment.group("start"))
    end = int(fragment.group("end") or start)
    if start < 1 or end < start:
        raise DataError(f"{url}: line range L{start}-L{end} is empty")
    return ParsedUrl(blob.group("repo"), unquote(blob.group("rev")), unquote(blob.group("path")), start, end)


# ----------------------------------------------------------------------------- words

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[A-Za-z0-9]+")
_SYNONYMS = {
    "attn": "attention", "mm": "multimodal", "cfg": "config", "configs": "config",
    "quantization": "quant", "quantize": "quant", "quantized": "quant", "quantizes": "quant",
    "quantizing": "quant", "inherits": "inherit", "inherited": "inherit", "inheritance": "inherit",
    "inheriting": "inherit", "spec": "speculative", "multi": "multi",
}


def normalize_word(word: str) -> str:
    """Fold case, abbreviations and plurals so `attn_metadata_builders` reads as the prose does."""
    word = word.lower()
    word = _SYNONYMS.get(word, word)
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss") and not word[-2].isdigit():
        word = word[:-1]
    return _SYNONYMS.get(word, word)


def words_of(text: str) -> list[str]:
    return [normalize_word(w) for w in _WORD.findall(_CAMEL.sub(" ", text.replace("_", " ")))]


# ----------------------------------------------------------------------------- purpose

# Concepts the audit recognises in prose, as normalized word sequences, each with the word
# sequences that show it in code. Conservative on purpose: a phrase not listed here is not
# checked. Longer phrases win over the shorter ones they contain.
CONCEPTS: dict[tuple[str, ...], tuple[tuple[str, ...], ...]] = {
    ("attention", "backend"): (("attention", "backend"),),
    ("kv", "cache", "dtype"): (("kv", "cache", "dtype"), ("cache", "dtype")),
    ("kv", "dtype"): (("kv", "cache", "dtype"), ("cache", "dtype")),
    ("cache", "dtype"): (("cache", "dtype"),),
    ("v2", "model", "runner"): (("v2", "model", "runner"),),
    ("attention", "metadata", "builder"): (("attention", "metadata", "builder"), ("metadata", "builder")),
    ("attention", "metadata"): (("attention", "metadata"),),
    ("metadata", "builder"): (("metadata", "builder"),),
    ("slot", "mapping"): (("slot", "mapping"),),
    ("prefill",): (("prefill",),),
    ("per", "token", "head"): (("per", "token", "head"),),
    ("fp8",): (("fp8",),),
    ("multimodal", "prefix", "support"): (("support", "multimodal", "prefix"),),
    ("multimodal", "prefix"): (("multimodal", "prefix"),),
    ("capability", "support"): (("support", "compute", "capability"),),
    ("kv", "scale"): (("kv", "scale"), ("k", "scale"), ("v", "scale")),
    ("scale", "cache"): (("scale", "cache"),),
    ("quant",): (("quant",),),
    ("inherit",): (("inherit",),),
    ("mtp",): (("mtp",),),
    ("eagle",): (("eagle",),),
    ("eagle3",): (("eagle3",),),
    ("dflash",): (("dflash",),),
    ("ngram",): (("ngram",),),
    ("triton",): (("triton",),),
    ("flashinfer",): (("flashinfer",),),
    ("speculative", "decoding"): (("speculative", "decoding"), ("spec", "decode"), ("speculative", "decode")),
}
_MAX_CONCEPT = max(len(k) for k in CONCEPTS)

_DECLARATION_WORDS = {"declared", "declare", "declaration", "field", "defined", "define", "definition"}
_NEGATION = re.compile(r"\b(?:not|never|no|without|rather than|instead of|lacks?)\b", re.I)
_SCOPE_END = re.compile(r";|\.(?:\s|$)|\s(?:and|but)\s")
_IDENTIFIER = re.compile(r"`[^`]+`|--[a-z][a-z0-9-]+|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CAPABILITY = re.compile(r"\bsm[ _-]?(\d{2,3})\b", re.I)


@dataclass(frozen=True)
class Term:
    """One thing the purpose names: how it is labelled and how code shows it."""

    label: str
    kind: Literal["identifier", "flag", "concept", "capability"]
    phrases: tuple[tuple[str, ...], ...] = ()  # word sequences, for concepts and capabilities
    name: str = ""  # identifier or flag as written in code (the last part of a dotted name)
    qualifier: str = ""  # what comes before it: "CacheConfig" in "CacheConfig.cache_dtype"

    @property
    def strong(self) -> bool:
        """Identifiers and flags are certainly code: their absence from a file is telling."""
        return self.kind in ("identifier", "flag")


@dataclass(frozen=True)
class Purpose:
    required: tuple[tuple[Term, ...], ...]  # each group is satisfied by any one of its terms
    absent: tuple[Term, ...]
    declared: bool  # the purpose speaks of declarations: prefer declaration sites
    context: tuple[Term, ...] = ()  # named in a remark "(…)" or as the key of key=value: not required

    @property
    def terms(self) -> tuple[Term, ...]:
        return tuple(t for group in self.required for t in group)


_FILE_SUFFIXES = {"py", "pyi", "toml", "json", "md", "yaml", "yml", "txt", "html", "cfg", "ini", "sh"}


def _is_identifier(token: str) -> bool:
    """Code, not prose: snake_case, CamelCase, a dunder, or a dotted name with such a part."""
    if token.startswith("`") or token.startswith("--"):
        return True
    parts = token.split(".")
    if len(parts) > 1:
        return parts[-1] not in _FILE_SUFFIXES and any(_identifier_like(p) for p in parts)
    return _identifier_like(token)


def _identifier_like(part: str) -> bool:
    if len(part) > 4 and part.startswith("__") and part.endswith("__"):
        return True
    if "_" in part.strip("_") and len(part) >= 3:
        return True
    uppers = sum(c.isupper() for c in part)
    return uppers >= 2 and any(c.islower() for c in part) and part[0].isalpha()


def _remark_spans(text: str) -> list[tuple[int, int]]:
    """Parenthesised remarks of the prose ("(default None)"), not calls ("f(x)"): context only."""
    spans, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            if depth == 0 and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_.")):
                start, depth = i, 1
            elif depth:
                depth += 1
        elif char == ")" and depth:
            depth -= 1
            if depth == 0:
                spans.append((start, i + 1))
    return spans


_KEY_VALUE = re.compile(r"\b([A-Za-z_][\w.]*)\s*(?<![=!<>])=(?!=)\s*[\"']?[\w.\-]+")


MAX_PURPOSE_PARSED = 4000  # a purpose is a sentence or two; the rest of a longer text is not read


def parse_purpose(text: str) -> Purpose:
    """Find the identifiers, flags and known concepts a purpose names, and its negated parts."""
    text = text[:MAX_PURPOSE_PARSED]
    spans: list[tuple[int, int, Term]] = []
    masked = list(text)
    for match in _IDENTIFIER.finditer(text):
        token = match.group(0)
        if not _is_identifier(token):
            continue
        if token.startswith("--"):
            term = Term(token, "flag", name=token)
        else:
            bare = token.strip("`")
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", bare) or bare.endswith("."):
                continue
            qualifier, _, name = bare.rpartition(".")
            term = Term(bare, "identifier", name=name, qualifier=qualifier.rsplit(".", 1)[-1])
        spans.append((match.start(), match.end(), term))
        masked[match.start():match.end()] = " " * (match.end() - match.start())
    rest = "".join(masked)
    for match in _CAPABILITY.finditer(rest):
        digits = match.group(1)
        spans.append((match.start(), match.end(),
                      Term(f"SM{digits}", "capability", phrases=((digits,), (f"sm{digits}",)))))
        masked[match.start():match.end()] = " " * (match.end() - match.start())
    rest = "".join(masked)
    spans.extend(_concept_spans(rest))
    spans.sort(key=lambda s: (s[0], s[1]))

    negated = _negated_spans(text)
    remarks = _remark_spans(text) + [m.span(1) for m in _KEY_VALUE.finditer(text)]
    required: list[list[Term]] = []
    absent: list[Term] = []
    context: list[Term] = []
    previous_end = None
    for start, end, term in spans:
        if any(a <= start < b for a, b in remarks):
            if term not in context:
                context.append(term)
            previous_end = None
            continue
        if any(a <= start < b for a, b in negated):
            if term not in absent:
                absent.append(term)
            previous_end = None
            continue
        if previous_end is not None and required and text[previous_end:start].strip() == "/":
            required[-1].append(term)  # "MTP/EAGLE": either shows it
        elif not any(term in group for group in required):
            required.append([term])
        previous_end = end
    declared = bool(set(words_of(text)) & {normalize_word(w) for w in _DECLARATION_WORDS})
    required_terms = {t for g in required for t in g}  # named positively anywhere: required, only that
    return Purpose(tuple(tuple(g) for g in required), tuple(t for t in absent if t not in required_terms),
                   declared, tuple(t for t in context if t not in required_terms and t not in absent))


def _concept_spans(text: str) -> Iterator[tuple[int, int, Term]]:
    tokens = [(m.start(), m.end(), normalize_word(m.group(0))) for m in _WORD.finditer(text)]
    i = 0
    while i < len(tokens):
        for size in range(min(_MAX_CONCEPT, len(tokens) - i), 0, -1):
            key = tuple(t[2] for t in tokens[i:i + size])
            if key in CONCEPTS:
                start, end = tokens[i][0], tokens[i + size - 1][1]
                yield start, end, Term(" ".join(key), "concept", phrases=CONCEPTS[key])
                i += size
                break
        else:
            i += 1


def _negated_spans(text: str) -> list[tuple[int, int]]:
    spans = []
    for cue in _NEGATION.finditer(text):
        if text[cue.end():].lstrip().startswith("("):
            continue  # "not (x.has_y(89))": code quoted in the purpose, not a claim of absence
        end = _SCOPE_END.search(text, cue.end())
        spans.append((cue.start(), end.start() if end else len(text)))
    return spans


# ----------------------------------------------------------------------------- files

@dataclass
class _Occurrence:
    """Where a term shows in a file: the matched lines and the unit that contains them."""

    line: int
    last_line: int
    start: int  # unit start
    end: int  # unit end


@dataclass
class FileText:
    """A file's lines and words with their line numbers, and (when an Index is given) its units."""

    path: str
    lines: list[str]
    words: list[tuple[str, int]]
    units: Units
    _hits: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, path: str, text: str, units: Units) -> FileText:
        lines = text.splitlines()
        words = [(w, number) for number, line in enumerate(lines, start=1) for w in words_of(line)]
        return cls(path, lines, words, units)

    def hits(self, term: Term) -> list[tuple[int, int]]:
        """(first line, last line) of every place the term shows in this file (computed once)."""
        if term not in self._hits:
            self._hits[term] = self._find(term)
        return self._hits[term]

    def _find(self, term: Term) -> list[tuple[int, int]]:
        if term.kind == "flag":
            pattern = re.compile(r"[\"']" + re.escape(term.name) + r"[\"'=]")
            return [(n, n) for n, line in enumerate(self.lines, start=1) if pattern.search(line)]
        if term.kind == "identifier":
            pattern = re.compile(r"(?<![A-Za-z0-9_])" + re.escape(term.name) + r"(?![A-Za-z0-9_])")
            found = [(n, n) for n, line in enumerate(self.lines, start=1) if pattern.search(line)]
            return self._qualified(term, found) if term.qualifier else found
        found = []
        for phrase in term.phrases:
            size = len(phrase)
            for i in range(len(self.words) - size + 1):
                if self.words[i][0] == phrase[0] and tuple(w for w, _ in self.words[i:i + size]) == phrase:
                    found.append((self.words[i][1], self.words[i + size - 1][1]))
        return sorted(set(found))

    def _qualified(self, term: Term, found: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Of `name`'s lines, those that show its qualifier: on the line in any spelling
        (`CacheConfig` as `cache_config`) or as the class/function the line sits in. Where
        none does (a local alias), all of them: the qualifier cannot be checked, so it is not.
        """
        qualifier = tuple(words_of(term.qualifier))
        inside = [d for d in self.units.declarations if d.name == term.qualifier]
        kept = [(a, b) for a, b in found
                if _contains(tuple(words_of(self.lines[a - 1])), qualifier)
                or any(d.start <= a and b <= d.end for d in inside)]
        return kept or found

    def named_declarations(self, term: Term) -> list[Declaration]:
        """Declarations the term names; for `Owner.name`, those inside `Owner` when the file has one."""
        named = [d for d in self.units.declarations if _names(term, d.name)]
        owners = [d for d in self.units.declarations if term.qualifier and d.name == term.qualifier]
        if owners:
            named = [d for d in named if any(o.start <= d.start and d.end <= o.end for o in owners)]
        return named

    def encloses(self, term: Term, start: int, end: int) -> bool:
        """Whether lines start..end lie inside a declaration the term names (a line of `f`'s body is in `f`)."""
        return any(d.start <= start and end <= d.end for d in self.named_declarations(term))

    def occurrences(self, term: Term, declared: bool) -> list[_Occurrence]:
        """Places the term shows, each widened to its unit; declaration sites only if asked and any."""
        if declared:
            decls = self.named_declarations(term)
            if decls:
                return [_Occurrence(d.start, d.start, d.start, self.units.capped_end(d)) for d in decls]
        result = []
        for first, last in self.hits(term):
            start, end = self.units.unit_of(first, last)
            result.append(_Occurrence(first, last, start, end))
        for decl in self.named_declarations(term):
            result.append(_Occurrence(decl.start, decl.start, decl.start, self.units.capped_end(decl)))
        return result


def _names(term: Term, name: str) -> bool:
    """Whether a declaration called `name` is what the term names."""
    if term.kind == "identifier":
        return name == term.name
    if term.kind == "flag":
        return False
    words = tuple(words_of(name))
    return any(_contains(words, phrase) for phrase in term.phrases)


def _contains(words: tuple[str, ...], phrase: tuple[str, ...]) -> bool:
    size = len(phrase)
    return any(words[i:i + size] == phrase for i in range(len(words) - size + 1))


@dataclass(frozen=True)
class Declaration:
    name: str
    kind: str
    start: int
    end: int


@dataclass
class Units:
    """Declarations and statements of one module, from the analysis Index's facts.

    Without facts (no Index, or a file the Index cannot parse) every line is its own unit.
    """

    declarations: list[Declaration] = field(default_factory=list)
    statements: list[tuple[int, int]] = field(default_factory=list)
    guards: dict[tuple[int, int], tuple[int, int]] = field(default_factory=dict)  # raise -> its `if`
    parse_error: str | None = None  # the Index could not parse the file: lines are the only units

    def capped_end(self, decl: Declaration) -> int:
        return decl.end if decl.end - decl.start < MAX_UNIT_LINES else decl.start

    def unit_of(self, first: int, last: int) -> tuple[int, int]:
        """The smallest statement or declaration containing lines first..last (else those lines)."""
        best = None
        for start, end in self.statements:
            if start <= first and last <= end and (best is None or end - start < best[1] - best[0]):
                best = (start, end)
        for decl in self.declarations:
            end = self.capped_end(decl)
            if decl.start <= first and last <= end and (best is None or end - decl.start < best[1] - best[0]):
                best = (decl.start, end)
        if best in self.guards:  # a raise means nothing without the condition that guards it
            best = self.guards[best]
        return best or (first, last)

    @classmethod
    def from_facts(cls, facts) -> Units:
        """Build from a `srcreview.index.ModuleFacts`."""
        from srcreview.index.facts import MODULE_CODE  # imported with the facts: a stored review never is

        decls: list[Declaration] = []
        statements: list[tuple[int, int]] = []
        guards: dict[tuple[int, int], tuple[int, int]] = {}
        for cls_facts in facts.classes.values():
            decls.append(Declaration(cls_facts.name, "class", cls_facts.start_line, cls_facts.end_line))
            for fact in cls_facts.fields:
                decls.append(Declaration(fact.name, "field", fact.start_line, fact.end_line))
        for fn in facts.functions.values():
            if fn.name == MODULE_CODE:  # the module's own statements: not a declaration
                continue
            decls.append(Declaration(fn.name, "function", fn.start_line, fn.end_line))
            statements.extend(_statement_ranges(fn.body, guards))
        for const in facts.constants.values():
            decls.append(Declaration(const.name, "constant", const.start_line, const.end_line))
        decls.sort(key=lambda d: (d.start, d.end, d.name))
        return cls(decls, sorted(set(statements)), guards, getattr(facts, "parse_error", None))


def _statement_ranges(body, guards: dict) -> Iterator[tuple[int, int]]:
    """Line ranges of every statement of a function body (nested ones too), in the facts' IR."""
    from srcreview.index import ir

    for stmt in ir.iter_statements(body or ()):
        yield stmt.line, stmt.end_line
        if isinstance(stmt, ir.If):
            for child in stmt.body:
                if isinstance(child, ir.Raise):
                    guards[(child.line, child.end_line)] = (stmt.line, stmt.end_line)


# ----------------------------------------------------------------------------- judging

TreeFor = Callable[[str], Any]  # rev as written in the URL -> SourceTree (may raise SrcreviewError)
IndexFor = Callable[[Any], Any]  # SourceTree -> Index, or None to audit on raw text only


class Auditor:
    """Judges anchors against source trees obtained through a callback, one tree per revision."""

    def __init__(self, tree_for: TreeFor, index_for: IndexFor | None = None):
        self._tree_for = tree_for
        self._index_for = index_for
        self._trees: dict[str, Any] = {}
        self._indexes: dict[int, Any] = {}
        self._files: dict[tuple[int, str, bool], FileText | None] = {}

    def audit(self, doc: Any, review_name: str) -> AuditReport:
        entries = [self.judge(ref) for ref in collect_anchors(doc)]
        return AuditReport(review=review_name, entries=tuple(entries))

    # -- sources

    def _tree(self, rev: str):
        """The tree of `rev`, obtained once; a failure is remembered too (no refetch per anchor)."""
        if rev not in self._trees:
            try:
                self._trees[rev] = self._tree_for(rev)
            except SrcreviewError as exc:
                self._trees[rev] = exc
        found = self._trees[rev]
        if isinstance(found, SrcreviewError):
            raise found
        return found

    def _index(self, tree):
        if self._index_for is None:
            return None
        key = id(tree)
        if key not in self._indexes:
            self._indexes[key] = self._index_for(tree)
        return self._indexes[key]

    def _file(self, tree, path: str, parse: bool = True) -> FileText | None:
        """The file's text and words; with its declarations and statements unless `parse` is False."""
        key = (id(tree), path, parse)
        if key not in self._files:
            try:
                text = tree.read_text(path)
            except SourceUnavailable:
                self._files[key] = None
                return None
            self._files[key] = FileText.build(path, text, self._units(tree, path) if parse else Units())
        return self._files[key]

    def _units(self, tree, path: str) -> Units:
        index = self._index(tree)
        if index is None or not path.endswith(".py"):
            return Units()
        try:
            return Units.from_facts(index.module(path, allow_unparsable=True))
        except SourceUnavailable:
            return Units()

    # -- one anchor

    def judge(self, ref: AnchorRef) -> AuditEntry:
        base: dict[str, Any] = {"pointer": ref.pointer, "url": ref.url, "purpose": ref.purpose}
        try:
            url = parse_blob_url(ref.url)
        except DataError as exc:
            return AuditEntry(**base, status="unverifiable", reason=exc.message)
        base.update(path=url.path, rev=url.rev, start_line=url.start, end_line=url.end)
        configured = repo_url().removeprefix("https://github.com/").strip("/")
        if url.repo.lower() != configured.lower():
            return AuditEntry(**base, status="unverifiable",
                              reason=f"URL is in {url.repo}, not the configured repository {configured}")
        purpose = parse_purpose(ref.purpose)
        base.update(terms=tuple(t.label for t in purpose.terms),
                    claimed_absent=tuple(t.label for t in purpose.absent),
                    context=tuple(t.label for t in purpose.context))
        if not purpose.required:
            what = ("no purpose given" if not ref.purpose
                    else "purpose names no identifier, flag or known concept to look for")
            return AuditEntry(**base, status="unverifiable", reason=what)
        try:
            path = clean_relpath(url.path)
            tree = self._tree(url.rev)
        except UsageError as exc:
            return AuditEntry(**base, status="unverifiable",
                              reason=f"revision {url.rev!r}: {exc.message.removeprefix('--rev: ')}")
        except SourceUnavailable as exc:
            return AuditEntry(**base, status="unverifiable", reason=exc.message)
        text = self._file(tree, path)
        if text is None:
            return AuditEntry(**base, status="unverifiable", reason=f"{path} does not exist at {url.rev[:12]}")
        return self._judge_file(base, purpose, tree, text, url)

    def _judge_file(self, base: dict, purpose: Purpose, tree, text: FileText, url: ParsedUrl) -> AuditEntry:
        notes: list[str] = []
        if text.units.parse_error:
            notes.append(f"{text.path} does not parse ({text.units.parse_error}): ranges are whole lines")
        past_end = url.end > len(text.lines)
        if past_end:
            notes.append(f"range ends past the last line ({len(text.lines)})")
        hits = {t: text.hits(t) for t in purpose.terms}
        in_range = {t: any(url.start <= a and b <= url.end for a, b in hits[t]) or text.encloses(t, url.start, url.end)
                    for t in purpose.terms}
        groups = []
        for group in purpose.required:
            present = [t for t in group if hits[t]]
            if present:
                groups.append(tuple(present))
            else:
                notes.append(f"{_label_group(group)} does not occur in {text.path}")
        for term in purpose.absent:
            if any(url.start <= a and b <= url.end for a, b in text.hits(term)):
                notes.append(f"{term.label} (said to be absent) occurs in the range")
        missing_strong = [g for g in purpose.required if all(t.strong and not hits[t] for t in g)]
        prose = [g for g in missing_strong if all(self._is_prose(tree, t) for t in g)]
        for group in prose:
            notes.append(f"{_label_group(group)} is declared nowhere at {url.rev[:12]}: taken as prose, not checked")
        missing_strong = [g for g in missing_strong if g not in prose]
        missing = tuple(_label_group(g) for g in purpose.required
                        if not any(in_range[t] for t in g) and (any(hits[t] for t in g) or g in missing_strong))
        base = {**base, "missing": missing}
        if missing_strong:
            return self._elsewhere(base, purpose, tree, text, url, missing_strong, notes)
        if not groups:
            return AuditEntry(**base, status="unverifiable", notes=tuple(notes),
                              reason=f"none of the named things occurs in {text.path}")
        if all(any(in_range[t] for t in g) for g in groups) and not past_end:
            shown = ", ".join(_label_group(g) for g in groups)
            notes.extend(_cut_units(text, [hits[t] for g in groups for t in g], url))
            return AuditEntry(**base, status="ok", notes=tuple(notes), reason=f"the range shows {shown}")
        window = best_window(text, groups, purpose.declared)
        corrected = Range(path=text.path, start_line=window[0], end_line=window[1],
                          url=anchor_url(_permalink_rev(tree, url), text.path, window[0], window[1],
                                         base=_base_url(url)))
        absent_here = ", ".join(_label_group(g) for g in groups if not any(in_range[t] for t in g))
        wrong = (f"the range ends past the last line ({len(text.lines)})" if past_end else "") \
            + (" and" if past_end and absent_here else "") \
            + (f" the range does not show {absent_here}" if absent_here else "")
        return AuditEntry(**base, status="drifted", corrected=corrected, notes=tuple(notes),
                          reason=f"{wrong.strip()}; found at lines {window[0]}-{window[1]}")

    def _elsewhere(self, base: dict, purpose: Purpose, tree, text: FileText, url: ParsedUrl,
                   missing_strong: list[tuple[Term, ...]], notes: list[str]) -> AuditEntry:
        """A named identifier is not in the anchored file at all: look for the file that has it.

        Candidates are the files that show every missing identifier; the Index says which of
        them declare one (preferred).
        """
        names = [g[0] for g in missing_strong]
        label = ", ".join(_label_group(g) for g in missing_strong)
        declared = {t: self._declaring_files(tree, t) for t in names}
        try:
            candidates = self._files_with(tree, names, exclude=text.path)
        except _TooMany as many:
            return AuditEntry(**base, status="drifted", notes=tuple(notes),
                              reason=f"{label} is not in {text.path}; {many.count} other files show it")
        if not candidates:
            return AuditEntry(**base, status="unverifiable", notes=tuple(notes),
                              reason=f"{label} occurs nowhere in {text.path} nor elsewhere at {url.rev[:12]}")
        top = text.path.split("/", 1)[0]
        ranked = []  # on raw text (cheap); only the winner is parsed for whole-unit ranges
        for path in candidates:
            raw = cast(FileText, self._file(tree, path, parse=False))  # a listed file
            groups = [g for g in (tuple(t for t in g if raw.hits(t)) for g in purpose.required) if g]
            declares = sum(1 for t in names if path in declared[t])
            window = best_window(raw, groups, declared=False)
            ranked.append((-len(groups), -declares, path.split("/", 1)[0] != top, window[1] - window[0], path))
        ranked.sort()
        ties = [r[-1] for r in ranked if r[:-1] == ranked[0][:-1]]
        if len(ties) > 1:
            listed = ", ".join(ties[:MAX_CANDIDATE_FILES]) + (" ..." if len(ties) > MAX_CANDIDATE_FILES else "")
            return AuditEntry(**base, status="drifted", notes=tuple(notes),
                              reason=f"{label} is not in {text.path}; it occurs equally in {len(ties)} files: {listed}")
        path = ranked[0][-1]
        other = cast(FileText, self._file(tree, path))  # a listed file
        groups = [g for g in (tuple(t for t in g if other.hits(t)) for g in purpose.required) if g]
        window = best_window(other, groups, purpose.declared)
        corrected = Range(path=path, start_line=window[0], end_line=window[1],
                          url=anchor_url(_permalink_rev(tree, url), path, window[0], window[1], base=_base_url(url)))
        return AuditEntry(**base, status="drifted", corrected=corrected, notes=tuple(notes),
                          reason=f"{label} is not in {text.path}; found in {path} at lines {window[0]}-{window[1]}")

    def _is_prose(self, tree, term: Term) -> bool:
        """A bare CamelCase word that nothing at this revision declares ("PyTorch", "FlashInfer")."""
        return _maybe_prose(term) and self._index(tree) is not None and not self._declaring_files(tree, term)

    def _declaring_files(self, tree, term: Term) -> set[str]:
        """Files where the Index finds a declaration of the identifier (empty without an Index)."""
        index = self._index(tree)
        if index is None or term.kind != "identifier":
            return set()
        maybe = index.definition_names().get(term.name, [])
        if len(maybe) > MAX_DECLARING_FILES:
            return set(maybe)  # declared, surely; too many to parse for a ranking hint
        return {s.path for s in index.find(term.name, prefix="") if s.local.rsplit(".", 1)[-1] == term.name}

    def _files_with(self, tree, terms: list[Term], exclude: str) -> list[str]:
        """Files other than `exclude` whose text shows every term."""
        index = self._index(tree)
        found: set[str] | None = None
        for term in terms:
            if index is not None:
                paths = set(index.grep(term.name, prefix=""))
            else:
                paths = {p for p in tree.files() if p.endswith(".py") and term.name.encode() in tree.read(p)}
            found = paths if found is None else found & paths
        found = (found or set()) - {exclude}
        if len(found) > MAX_RAW_FILES:
            raise _TooMany(len(found))
        return [p for p in sorted(found)
                if all(cast(FileText, self._file(tree, p, parse=False)).hits(t) for t in terms)]


class _TooMany(Exception):
    """Too many files to tell which one a review meant; the anchor is drifted all the same."""

    def __init__(self, count: int):
        super().__init__(count)
        self.count = count


def _maybe_prose(term: Term) -> bool:
    """A bare CamelCase word (no `_`, no dots, no backticks) may be a product name, not code."""
    return term.kind == "identifier" and "_" not in term.name.strip("_") and "." not in term.label \
        and not term.label.startswith("`")


def _cut_units(text: FileText, hit_lists: list[list[tuple[int, int]]], url: ParsedUrl) -> list[str]:
    """Functions holding a matched line of the range that the range only partly covers."""
    lines = {first for hits in hit_lists for first, last in hits if url.start <= first and last <= url.end}
    cut = []
    for decl in text.units.declarations:
        if decl.kind != "function" or not any(decl.start <= n <= decl.end for n in lines):
            continue
        inside = url.start <= decl.start and decl.end <= url.end
        around = decl.start <= url.start and url.end <= decl.end
        if not inside and not around:
            cut.append(f"the range cuts {decl.name} (lines {decl.start}-{decl.end})")
    return cut


def _permalink_rev(tree, url: ParsedUrl) -> str:
    """The full commit the tree was read at (a tag or short id in the URL becomes a permalink)."""
    sha = getattr(getattr(tree, "revision", None), "sha", "")
    return sha if isinstance(sha, str) and len(sha) == 40 else url.rev


def _base_url(url: ParsedUrl) -> str:
    return f"https://github.com/{url.repo}"


def _label_group(group: tuple[Term, ...]) -> str:
    return "/".join(t.label for t in group)


def best_window(text: FileText, groups: list[tuple[Term, ...]], declared: bool) -> tuple[int, int]:
    """The smallest span of whole units that shows one occurrence of every group (earliest on ties).

    For each candidate lower bound L (an occurrence's start), each group contributes its
    occurrence starting at or after L that ends first; the span is L..max(end).
    """
    occurrences = []
    for group in groups:
        occ = [o for t in group for o in text.occurrences(t, declared)]
        occurrences.append(sorted({(o.start, o.end) for o in occ}))
    best: tuple[int, int] | None = None
    for low in sorted({s for occ in occurrences for s, _ in occ}):
        chosen = []
        for occ in occurrences:
            candidates = [(e, s) for s, e in occ if s >= low]
            if not candidates:
                break
            chosen.append(min(candidates))
        else:
            span = (min(s for _, s in chosen), max(e for e, _ in chosen))
            if best is None or (span[1] - span[0], span[0]) < (best[1] - best[0], best[0]):
                best = span
    if best is None:  # pragma: no cover - groups are only passed when each has an occurrence
        raise ValueError("no window")
    return best


def audit_review(doc: Any, review_name: str, tree_for: TreeFor, index_for: IndexFor | None = None) -> AuditReport:
    """Audit every line-anchored GitHub URL of a review document."""
    return Auditor(tree_for, index_for).audit(doc, review_name)
