"""Revisions: what `--rev` and a recipe's pin name, checked before anything touches git.

A rev is a release version or a hex commit id (7 to 40 digits). Anything else, and anything
starting with `-`, is refused here, so no user string can reach git or a URL as an option or
a path. A release is looked up in pins/ (`$SRCREVIEW_PINS`, else the shipped file); one that
is not there is asked of the package index through the `discover` callback the caller passes
(srcreview.source.registry), and its pin says so (`origin = "index"`).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Literal

from srcreview.core.errors import DataError, UsageError
from srcreview.core.records import Field, Record, field_validator
from srcreview.core.resources import data_dir

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# ASCII only, matched whole (fullmatch: "$" alone would let a trailing newline through to git)
HEX = re.compile(r"[0-9a-f]{7,40}")
VERSION = re.compile(r"[0-9]+\.[0-9]+(\.[0-9]+)?((rc|\.post)[0-9]+)?")
MAX_REV_LENGTH = 64


class Pin(Record):
    """A known release: its version, commit and sdist digest."""

    version: str
    revision: str = Field(description="full commit where known, else the sdist's abbreviated one")
    sdist_sha256: str | None = None
    origin: Literal["pins", "index"] = Field(default="pins", exclude=True,
                                             description="pins/, or discovered on the package index")

    @field_validator("revision")
    @classmethod
    def _hex(cls, value: str) -> str:
        if not HEX.fullmatch(value):
            raise ValueError("must be 7 to 40 lowercase hex digits")
        return value

    @field_validator("sdist_sha256")
    @classmethod
    def _sha256(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[0-9a-f]{64}", value):
            raise ValueError("must be 64 lowercase hex digits")
        return value

    def matches_commit(self, commit: str) -> bool:
        """Whether `commit` (full or abbreviated) and this pin name the same commit."""
        return self.revision.startswith(commit) or commit.startswith(self.revision)


class Revision(Record, extra="ignore"):
    """A resolved revision: the commit (as full as known) and the release it is, if any."""

    requested: str
    sha: str
    version: str | None = None
    pin: Pin | None = None
    unverified: str | None = Field(default=None, description="a longer commit that was asked for but that the source "
                                                             "could not prove (an sdist records 9 digits)")
    identity_unverified: str | None = Field(default=None, omit_none=True,
                                            description="why the source's release rests on one file of it "
                                                        "(an sdist tree whose metadata does not name it)")

    @field_validator("sha")
    @classmethod
    def _sha_is_hex(cls, value: str) -> str:
        # Every provider puts `sha` into git arguments and URLs: it can never be an option or a path.
        if not HEX.fullmatch(value):
            raise ValueError("must be 7 to 40 lowercase hex digits")
        return value

    @property
    def is_full(self) -> bool:
        return len(self.sha) == 40

    @property
    def short(self) -> str:
        return self.sha[:9]

    def matches_commit(self, commit: str) -> bool:
        """Whether an (abbreviated) commit id names this revision."""
        commit = commit.lower()
        return self.sha.startswith(commit) or commit.startswith(self.sha)

    def label(self) -> str:
        return f"{self.version} ({self.short})" if self.version else self.short

    @property
    def from_index(self) -> bool:
        return self.pin is not None and self.pin.origin == "index"

    def notes(self) -> list[str]:
        """What the user must know about this revision's identity, one phrase each."""
        notes = []
        if self.from_index:
            notes.append("release not in pins/: its sdist sha256 and commit come from the package index")
        if self.unverified:
            notes.append(f"requested commit {self.unverified} is unverified: the source records only {self.sha}")
        if self.identity_unverified:
            notes.append(self.identity_unverified)
        return notes


def pins_path() -> Path:
    """The pins file in use: `$SRCREVIEW_PINS`, else the one shipped with srcreview."""
    configured = os.environ.get("SRCREVIEW_PINS", "").strip()
    return Path(configured).expanduser() if configured else data_dir("pins") / "vllm.toml"


def load_pins(path: Path | None = None) -> tuple[Pin, ...]:
    path = path or pins_path()
    try:
        stat = path.stat()
        key = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        key = None  # _read_pins reports it
    return _read_pins(path, key)


@lru_cache(maxsize=16)
def _read_pins(path: Path, _stamp) -> tuple[Pin, ...]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        releases = data.get("release", [])
        if not isinstance(releases, list):
            raise TypeError("[[release]] must be an array of tables")
        pins = tuple(Pin.model_validate(p) for p in releases)
    except (ValueError, TypeError, OSError) as exc:  # TOML, UTF-8 and validation errors are ValueErrors
        reason = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())[:300]
        raise DataError(f"{path.name}: invalid pins file: {reason}") from None
    return pins


def parse_version(version: str) -> tuple:
    """A sort key for release versions ("0.25.1" < "0.29.0" < "0.30.0")."""
    parts = re.split(r"[.]|(?=rc)|(?=post)", version)
    key = []
    for part in parts:
        if part.isdigit():
            key.append((1, int(part), ""))
        else:
            key.append((0, 0, part))
    return tuple(key)


def validate_rev(rev: str) -> str:
    """Refuse anything that is not a version or hex commit; return it normalized."""
    if not isinstance(rev, str) or not rev:
        raise UsageError("--rev: empty revision")
    if rev.startswith("-"):
        raise UsageError(f"--rev: {rev[:40]!r} starts with '-': a revision is a release version or a hex commit")
    if len(rev) > MAX_REV_LENGTH:
        raise UsageError(f"--rev: revision is {len(rev)} characters long; a commit id has at most 40")
    lowered = rev.lower()
    if VERSION.fullmatch(rev) or (lowered.startswith("v") and VERSION.fullmatch(rev[1:])):
        return rev.removeprefix("v").removeprefix("V")
    if HEX.fullmatch(lowered):
        return lowered
    if re.fullmatch(r"[0-9a-fA-F]{1,6}", rev):
        raise UsageError(f"--rev: {rev!r} is too short to name a commit (use at least 7 hex digits)")
    raise UsageError(f"--rev: {rev!r} is neither a release version (e.g. 0.29.0) nor a hex commit id")


def resolve_rev(rev: str, pins: tuple[Pin, ...] | None = None,
                discover: Callable[[str], Pin] | None = None) -> Revision:
    """Resolve a --rev against pins/: a version must be known there or to `discover` (the
    package index); a commit may or may not be a release."""
    pins = load_pins() if pins is None else pins
    normalized = validate_rev(rev)
    if VERSION.fullmatch(normalized):
        for pin in pins:
            if pin.version == normalized:
                return Revision(requested=rev, sha=pin.revision, version=pin.version, pin=pin)
        if discover is not None:
            pin = discover(normalized)
            return Revision(requested=rev, sha=pin.revision, version=pin.version, pin=pin)
        known = ", ".join(p.version for p in pins) or "none"
        raise UsageError(f"--rev: release {normalized} is not in pins/ (known: {known}); pass its commit instead")
    matches = [p for p in pins if p.matches_commit(normalized)]
    if len(matches) > 1:
        raise UsageError(f"--rev: {normalized} is ambiguous among releases "
                         + ", ".join(f"{p.version} ({p.revision})" for p in matches))
    if matches:
        pin = matches[0]
        sha = pin.revision if len(pin.revision) >= len(normalized) else normalized
        return Revision(requested=rev, sha=sha, version=pin.version, pin=pin)
    return Revision(requested=rev, sha=normalized)


def releases_between(start: str, end: str, pins: tuple[Pin, ...] | None = None) -> list[Pin]:
    """Known releases from version `start` to `end` inclusive, oldest first."""
    pins = load_pins() if pins is None else pins
    lo, hi = sorted((parse_version(start), parse_version(end)))
    return sorted((p for p in pins if lo <= parse_version(p.version) <= hi), key=lambda p: parse_version(p.version))
