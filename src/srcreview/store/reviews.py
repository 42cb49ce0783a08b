"""Stored reviews: a `check` whose answer was already computed gets it back without the analysis.

A Review is a function of its inputs, so it is stored under the sha256 of all of them (`key`):
the recipe as read (its file's bytes and the parsed Recipe, path and format included), the
resolved revision (with its pin) and pins/, the identity of the source tree (provider, cache
entry and manifest digest, each patch or overlay's digest: srcreview.source.identity), the rule
files, the tool (its version and every module of the package), and the environment the review
reads (SRCREVIEW_REPO_URL, which anchors link to). The date is not among them: the review does
not read it (waiver expiry is the gate's, and the gate, waivers and baseline always run).
Whatever else a review comes to read (the model's config, once `check` binds it) must join the
key, or a stored review would stand for inputs it was not computed from.

Entries live under `<cache>/reviews/v<SCHEMA>/`, one file per key, written atomically and
sealed (srcreview.core.sealed) with an HMAC under the secret of `$SRCREVIEW_CACHE_KEY`: a key
that does not live in the cache, so a cache restored from another CI run (or edited and
sealed again) cannot have a verdict served. Without the secret nothing is stored or served
(`cache_key()` is None and `check` computes every review); an entry damaged, edited or sealed
under another key since it was written, or that does not load as the Review it names, is
absent, and the review is computed again. Only complete
reviews are stored (an incomplete one may stem from a source that was unavailable for now),
and only when the Review reads back equal to itself. The directory is bounded (MAX_BYTES):
storing past the bound removes the entries used least recently (a hit marks an entry used).

The rules a run loaded are kept the same way, by the digest of their files: what rendering and
the gate need of them (`StoredRule`: id, claim, severity, doc, probe), and the fact that they
passed validation, so a run served from stored reviews neither validates the rules again nor
imports the checks behind them.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from srcreview.core.cachedir import MARKER
from srcreview.core.sealed import seal, secret_key, unseal, write_atomic

SCHEMA = 1
DIRECTORY = "reviews"
MAGIC = b"srcreview-review\n"
MAX_ENTRY_BYTES = 16_000_000  # one review (a recipe has at most 2,000 settings)
MAX_BYTES = 64_000_000  # the whole directory; past it, the least recently used entries go


def reviews_dir(root: Path) -> Path:
    """Where the stored reviews of a srcreview cache root live (`<root>/reviews/v<SCHEMA>`)."""
    return Path(root) / DIRECTORY / f"v{SCHEMA}"


@lru_cache(maxsize=1)
def tool_digest() -> str:
    """The version and every file of the installed package: a changed module is another tool."""
    from srcreview import __version__

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(f"srcreview {__version__}\n".encode())
    for folder, subdirs, names in os.walk(package):
        subdirs[:] = sorted(d for d in subdirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith((".py", ".toml")):
                path = Path(folder) / name
                digest.update(path.relative_to(package).as_posix().encode() + b"\0")
                digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def rules_digest(directory: Path | None = None) -> str | None:
    """The digest of the rule files `srcreview.rules.loader.load_rules(directory)` reads (default: the
    shipped rules); None when they cannot be read (the loader then says why)."""
    from srcreview.core.errors import SrcreviewError
    from srcreview.core.resources import data_dir
    from srcreview.core.userfile import read_user_file

    try:
        folder = Path(directory) if directory is not None else data_dir("rules")
        if not folder.is_dir():
            return None  # (glob finds nothing in a missing directory: it would digest as an empty one)
        digest = hashlib.sha256(b"rules\n")
        files = sorted(folder.glob("*.toml"))
        for path in files:
            # a regular file only (a FIFO would wait for ever); the loader refuses what is too large
            raw = read_user_file(path, path.name, "rule", limit=1 << 20)
            digest.update(path.name.encode() + b"\0" + hashlib.sha256(raw).digest())
    except (OSError, SrcreviewError):  # the loader then says why
        return None
    if not files:
        return None  # no rule: never a stored summary, the loader refuses it
    return digest.hexdigest()


def pins_digest() -> str | None:
    """The digest of the pins file in use (a release resolves through it)."""
    from srcreview.model.revision import pins_path

    try:
        return hashlib.sha256(pins_path().read_bytes()).hexdigest()
    except OSError:
        return None


@dataclass(frozen=True)
class StoredDoc:
    what: str
    why: str
    instead: str
    references: tuple[str, ...] = ()


@dataclass(frozen=True)
class StoredProbe:
    axis: str
    input_or_state: str
    wrong_result: str


@dataclass(frozen=True)
class StoredRule:
    """What the gate and the renderers read of a rule (its id, claim, severity, doc and probe)."""

    id: str
    claim: str
    severity: str
    doc: StoredDoc
    probe: StoredProbe | None = None

    @classmethod
    def of(cls, rule) -> StoredRule:
        probe = rule.probe
        return cls(id=rule.id, claim=rule.claim, severity=rule.severity,
                   doc=StoredDoc(rule.doc.what, rule.doc.why, rule.doc.instead, tuple(rule.doc.references)),
                   probe=StoredProbe(probe.axis, probe.input_or_state, probe.wrong_result) if probe else None)

    def as_json(self) -> dict:
        return {"id": self.id, "claim": self.claim, "severity": self.severity,
                "doc": [self.doc.what, self.doc.why, self.doc.instead, list(self.doc.references)],
                "probe": [self.probe.axis, self.probe.input_or_state, self.probe.wrong_result] if self.probe else None}

    @classmethod
    def from_json(cls, data: dict) -> StoredRule:
        what, why, instead, references = data["doc"]
        probe = data["probe"]
        rule = cls(id=data["id"], claim=data["claim"], severity=data["severity"],
                   doc=StoredDoc(what, why, instead, tuple(references)),
                   probe=StoredProbe(*probe) if probe is not None else None)
        texts = [rule.id, rule.claim, rule.severity, what, why, instead, *references, *(probe or ())]
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("not a stored rule")
        return rule


def cache_key(environ=None) -> bytes | None:
    """The HMAC key of stored reviews, derived from the secret in $SRCREVIEW_CACHE_KEY; None
    when it is unset or empty (stored reviews are then off)."""
    return secret_key(b"srcreview stored reviews\n", environ)


class ReviewCache:
    """The stored reviews and rule summaries under one srcreview cache root, sealed under `key`."""

    def __init__(self, root: Path, *, key: bytes, max_bytes: int = MAX_BYTES):
        self.root = reviews_dir(root)
        self.max_bytes = max_bytes
        self._key = key

    # -- keys
    def rules_key(self, rules_digest: str) -> str:
        return _digest({"tool": tool_digest(), "rules": rules_digest})

    def key(self, *, rules_digest: str, recipe, recipe_bytes: bytes, revision, source: dict) -> str | None:
        """The key of `recipe`'s review at `revision` from the tree `source` names (see the
        module docstring); None when an input has no stable spelling."""
        from srcreview.source.base import repo_url

        pins = pins_digest()
        if pins is None:
            return None
        return _digest({"tool": tool_digest(), "rules": rules_digest,
                        "recipe": [hashlib.sha256(recipe_bytes).hexdigest(), repr(recipe)],
                        "revision": repr(revision), "pins": pins, "source": source, "repo_url": repo_url()})

    # -- reviews
    def load(self, key: str):
        """The stored Review of `key`, or None (absent, damaged, edited, or not a Review)."""
        data = self._read(key)
        if data is None:
            return None
        from srcreview.model.findings import Review

        try:
            review = Review.model_validate_json(data)
        except (ValueError, RecursionError):  # srcreview.core.records.RecordError is a ValueError
            return None
        self._touch(key)
        return review

    def store(self, key: str, review) -> bool:
        """Keep a complete `review` under `key` (nothing is stored for an incomplete one, or one
        that would not read back as itself); whether it was stored."""
        if review.incomplete:
            return False
        from srcreview.model.findings import Review

        text = review.model_dump_json()
        try:
            if Review.model_validate_json(text) != review:
                return False
        except ValueError:
            return False
        return self._write(key, text.encode())

    # -- rules
    def load_rules(self, rules_digest: str) -> tuple[StoredRule, ...] | None:
        """The stored summaries of the rule files of `rules_digest` (validated when stored), or None."""
        data = self._read(self.rules_key(rules_digest))
        try:
            return tuple(StoredRule.from_json(item) for item in json.loads(data)["rules"]) if data else None
        except (ValueError, TypeError, KeyError, RecursionError):
            return None

    def store_rules(self, rules_digest: str, rules) -> None:
        """Keep what the gate and the renderers read of validated `rules` (srcreview.rules.loader.Rule)."""
        self._write(self.rules_key(rules_digest),
                    json.dumps({"rules": [StoredRule.of(r).as_json() for r in rules]}, sort_keys=True).encode())

    # -- entries
    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def _read(self, key: str) -> bytes | None:
        try:
            with open(self._path(key), "rb") as fh:
                data = fh.read(MAX_ENTRY_BYTES + len(MAGIC) + 33)
        except OSError:
            return None
        payload = unseal(data, MAGIC, self._key)
        if payload is None or not payload.startswith(key.encode() + b"\n"):
            return None  # damaged, edited, or another key's entry copied here
        return payload[len(key) + 1:]

    def _write(self, key: str, body: bytes) -> bool:
        sealed = seal(key.encode() + b"\n" + body, MAGIC, self._key)
        if len(body) > MAX_ENTRY_BYTES or not write_atomic(self._path(key), sealed):
            return False
        self._bound()
        return True

    def _touch(self, key: str) -> None:
        try:
            os.utime(self._path(key))
        except OSError:
            pass

    def _bound(self) -> None:
        """Remove the least recently used entries until the directory is within max_bytes."""
        entries = []
        try:
            folders = [f for f in self.root.iterdir() if f.is_dir() and not f.is_symlink()]
            for folder in folders:
                for item in folder.iterdir():
                    if item.name == MARKER:
                        continue
                    stat = item.lstat()
                    entries.append((stat.st_mtime_ns, stat.st_size, item))
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        for _, size, item in sorted(entries, key=lambda e: (e[0], e[2].name)):
            if total <= self.max_bytes:
                break
            try:
                item.unlink()
            except OSError:
                continue
            total -= size


def _digest(parts: dict) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
