"""`srcreview pins update`: add the releases the package index has to a pins file.

A release's pin is what `discover_release` learns from the index (the sdist's sha256, the
9-digit commit its `_version.py` records); the full commit comes from the release tag of a
git remote when one is reachable (`git ls-remote --tags`, tag `vX.Y.Z`, checked against
those 9 digits), and stays abbreviated otherwise. Pins already in the file keep their data;
an abbreviated commit is completed when the tag gives it. Only releases newer than the
newest pin are fetched unless `since` says otherwise: each needs its sdist downloaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from srcreview.core.errors import DataError, SourceUnavailable
from srcreview.model.revision import Pin, load_pins, parse_version

HEADER = """\
# Known vLLM releases: version, the commit the release was built from, and the sha256 of
# its source distribution on the package index. `revision` is the full commit where it is
# known; otherwise the abbreviated commit recorded in the sdist's vllm/_version.py.
# Ordered by release. `srcreview pins update` adds the releases the package index has.
"""


@dataclass(frozen=True)
class Change:
    version: str
    revision: str
    what: str  # "added" | "completed"
    full_from: str | None = None  # the release tag the full commit came from, if it did


def update_pins(path: Path, cache, *, since: str | None = None, git_url: str | None = None,
                progress=None) -> tuple[list[Change], list[str]]:
    """Add the index's newer releases to the pins file at `path` (rewritten atomically);
    the changes made, and notes on what could not be done (an unreachable git remote)."""
    from srcreview.source.gitrepo import tag_commits
    from srcreview.source.registry import discover_release, index_releases

    pins = {p.version: p for p in load_pins(path)}
    floor = parse_version(since) if since else max((parse_version(v) for v in pins), default=None)
    wanted = []
    for sdist in index_releases():
        version = sdist.filename[len("vllm-"):-len(".tar.gz")]
        if version not in pins and (floor is None or parse_version(version) >= floor):
            wanted.append(version)
    notes: list[str] = []
    tags: dict[str, str] = {}
    if git_url:
        try:
            tags = tag_commits(git_url)
        except SourceUnavailable as exc:
            notes.append(f"full commits unavailable ({exc.message}); new pins keep the sdist's 9 digits")
    changes: list[Change] = []
    for version in sorted(set(wanted), key=parse_version):
        pin = discover_release(version, cache, progress)
        full = _full(tags, version, pin.revision)
        pins[version] = Pin(version=version, revision=full or pin.revision, sdist_sha256=pin.sdist_sha256)
        changes.append(Change(version, pins[version].revision, "added", _tag(tags, version) if full else None))
    for version, pin in sorted(pins.items(), key=lambda kv: parse_version(kv[0])):
        if len(pin.revision) < 40 and version not in wanted:
            full = _full(tags, version, pin.revision)
            if full:
                pins[version] = pin.model_copy(update={"revision": full})
                changes.append(Change(version, full, "completed", _tag(tags, version)))
    if changes:
        write_pins(path, list(pins.values()))
    return changes, notes


def _tag(tags: dict[str, str], version: str) -> str:
    return f"v{version}" if f"v{version}" in tags else version


def _full(tags: dict[str, str], version: str, abbreviated: str) -> str | None:
    """The tag's full commit when it extends the sdist's abbreviated one (a moved tag never wins)."""
    full = tags.get(_tag(tags, version))
    return full if full and full.startswith(abbreviated) else None


def render_pins(pins: list[Pin]) -> str:
    blocks = [HEADER]
    for pin in sorted(pins, key=lambda p: parse_version(p.version)):
        block = f'\n[[release]]\nversion = "{pin.version}"\nrevision = "{pin.revision}"\n'
        if pin.sdist_sha256:
            block += f'sdist_sha256 = "{pin.sdist_sha256}"\n'
        blocks.append(block)
    return "".join(blocks)


def write_pins(path: Path, pins: list[Pin]) -> None:
    import os
    import tempfile

    text = render_pins(pins)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as exc:
        raise DataError(f"{path.name}: cannot write the pins file: {exc.strerror or exc}") from None
