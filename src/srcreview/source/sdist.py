"""The commit an sdist was built from, read (never executed) from its `vllm/_version.py`.

Release sdists record it as `__commit_id__ = commit_id = 'g98dff2a81'`; dev builds also
carry it in the version (`0.29.1.dev3+g1234abcd`). The file is parsed as Python and the last
module-level assignment of each name wins, as at import: a decoy inside a string or an
earlier assignment cannot stand in for the real one. The version and commit are then
checked against pins/ (a release must be the commit pins/ records, and that commit that
release), and a full commit asked for is only taken as fact when pins/ vouches for it: the
sdist itself proves 9 digits. Identity does not rest on that one file: the sdist's own metadata
(`PKG-INFO`, and the copy setuptools keeps in `vllm.egg-info/`) must name the same release, so
a newer tree carrying an older release's `_version.py` is refused, as is a `_version.py` whose
version's `+g<commit>` names another commit than its `__commit_id__`. A tree where no metadata
names the release (PKG-INFO deleted, a GitHub tarball) rests on `_version.py` alone: its
identity is reported unverified (pins/ records no blob ids to check the tree's files against).
"""

from __future__ import annotations

import ast
import re

from srcreview.core.errors import SourceUnavailable
from srcreview.model.revision import Pin, Revision, load_pins
from srcreview.source.base import SourceTree, VerificationFailed
from srcreview.vllm.anchors import EGG_INFO_METADATA, VERSION_FILE

_COMMIT_TEXT = re.compile(r"g?([0-9a-fA-F]{7,40})")
_LOCAL_COMMIT = re.compile(r"\+g([0-9a-f]{7,40})\b")
_RELEASE = re.compile(r"\d+(?:\.\d+)*")
METADATA_FILE = "PKG-INFO"  # an sdist's core metadata (PEP 241/643): its `Version:` header
METADATA_FILES = (METADATA_FILE, EGG_INFO_METADATA)  # the second: setuptools' copy in the sdist
UNCORROBORATED = f"source identity unverified: only {VERSION_FILE} names the release (no {METADATA_FILE} agrees)"
_NAMES = {"__version__": "version", "version": "version", "__commit_id__": "commit", "commit_id": "commit"}


def version_info(text: str) -> tuple[str | None, str | None]:
    """(version, abbreviated commit) recorded in a `_version.py` text; either may be None."""
    found: dict[str, object] = {}
    try:
        module = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None, None
    for stmt in module.body:  # module level only, in order: the last assignment wins
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        else:
            continue
        literal = value.value if isinstance(value, ast.Constant) else _UNKNOWN
        for target in targets:
            if isinstance(target, ast.Name) and target.id in _NAMES:
                found[_NAMES[target.id]] = literal
    version = found.get("version")
    version = version if isinstance(version, str) else None
    commit = found.get("commit")
    match = _COMMIT_TEXT.fullmatch(commit) if isinstance(commit, str) else None
    found_commit = match.group(1).lower() if match else None
    if found_commit is None and version and "commit" not in found:
        local = _LOCAL_COMMIT.search(version)
        found_commit = local.group(1) if local else None
    return version, found_commit


_UNKNOWN = object()


def verify_commit(tree: SourceTree, revision: Revision, what: str, pins: tuple[Pin, ...] | None = None) -> str:
    """The commit `tree`'s `_version.py` records; VerificationFailed unless it names `revision`
    and agrees with pins/ (see the module docstring)."""
    return verify_identity(tree, revision, what, pins)[0]


def verify_identity(tree: SourceTree, revision: Revision, what: str,
                    pins: tuple[Pin, ...] | None = None) -> tuple[str, str | None]:
    """`verify_commit`'s commit, and `UNCORROBORATED` when no metadata file of the tree names
    the release `_version.py` names (None when one does)."""
    try:
        text = tree.read_text(VERSION_FILE)
    except SourceUnavailable:
        raise VerificationFailed(f"{what}: has no {VERSION_FILE}, so its commit cannot be verified") from None
    version, commit = version_info(text)
    if commit is None:
        raise VerificationFailed(f"{what}: {VERSION_FILE} records no commit id, so it cannot be verified")
    _check_local_commit(version, commit, what)
    if not revision.matches_commit(commit):
        asked = revision.label() if revision.version else revision.sha
        raise VerificationFailed(f"{what}: built from commit {commit}"
                                 + (f" (version {version})" if version else "")
                                 + f", not the requested {asked}")
    corroborated = _check_metadata(tree, version, what)
    check_against_pins(version, commit, revision, what, load_pins() if pins is None else pins)
    return commit, None if corroborated else UNCORROBORATED


def _check_local_commit(version: str | None, commit: str, what: str) -> None:
    """VerificationFailed when the version's local `+g<commit>` names another commit than
    `__commit_id__` (both are written by one build: they cannot differ)."""
    local = _LOCAL_COMMIT.search(version or "")
    if local and not (local.group(1).startswith(commit) or commit.startswith(local.group(1))):
        raise VerificationFailed(f"{what}: {VERSION_FILE} says version {version} (commit {local.group(1)}), but "
                                 f"records commit {commit}: the file contradicts itself")


def metadata_version(text: str) -> str | None:
    """The `Version:` header of a PKG-INFO text (its headers end at the first blank line)."""
    for line in text.splitlines():
        if not line.strip():
            break
        name, sep, value = line.partition(":")
        if sep and name.strip().lower() == "version":
            return value.strip() or None
    return None


def _check_metadata(tree: SourceTree, version: str | None, what: str) -> bool:
    """Whether a metadata file of the sdist names the release `_version.py` names;
    VerificationFailed when one names another (their numeric release parts differ). A tree
    without any (PKG-INFO deleted, a GitHub tarball) corroborates nothing."""
    claimed = _RELEASE.match(version) if version else None
    agreed = False
    for name in METADATA_FILES:
        try:
            text = tree.read_text(name)
        except SourceUnavailable:
            continue
        recorded = metadata_version(text)
        release = _RELEASE.match(recorded) if recorded else None
        if release is None or claimed is None:
            continue
        if _numbers(release.group(0)) != _numbers(claimed.group(0)):
            raise VerificationFailed(f"{what}: {VERSION_FILE} says vLLM {version}, but {name} says "
                                     f"{recorded}: the tree is not one release")
        agreed = True
    return agreed


def check_against_pins(version: str | None, commit: str, revision: Revision, what: str,
                       pins: tuple[Pin, ...]) -> Pin | None:
    """The pin of the release the sdist claims to be, after checking that the claim holds: its
    version's pinned commit is `commit`, `commit`'s pinned release is `version`, and a full
    commit asked for is the pinned one. VerificationFailed otherwise."""
    claimed = next((p for p in pins if version is not None and p.version == version), None)
    if claimed is not None and not claimed.matches_commit(commit):
        raise VerificationFailed(f"{what}: claims vLLM {version}, but records commit {commit}; "
                                 f"pins/ has {version} at {claimed.revision}")
    owner = next((p for p in pins if p.matches_commit(commit)), None)
    if owner is not None and version is not None and owner.version != _release_part(version):
        raise VerificationFailed(f"{what}: records commit {commit}, which pins/ has as vLLM {owner.version}, "
                                 f"but claims version {version}")
    pin = claimed or owner
    if pin is not None and len(pin.revision) == 40 and len(revision.sha) == 40 and pin.revision != revision.sha:
        raise VerificationFailed(f"{what}: is vLLM {pin.version} = commit {pin.revision} (pins/), "
                                 f"not the requested {revision.sha}")
    return pin


def _numbers(release: str) -> tuple[str, ...]:
    """`0.29.0`, `0.029.00` and `0.29.0.0` alike (PEP 440 release equality), compared as digit
    strings (no int(): a header may hold any number of digits)."""
    parts = [part.lstrip("0") or "0" for part in release.split(".")]
    while len(parts) > 1 and parts[-1] == "0":
        parts.pop()
    return tuple(parts)


def _release_part(version: str) -> str:
    return version.split("+", 1)[0]


def vouched(revision: Revision, commit: str, pins: tuple[Pin, ...] | None = None) -> Revision:
    """`revision` as far as an sdist recording the abbreviated `commit` proves it: a longer sha
    stays only when pins/ records that full commit for the release; otherwise the revision
    becomes the recorded commit and the longer one is kept as `unverified`, never shown as fact."""
    if len(revision.sha) <= len(commit):
        return revision
    pins = load_pins() if pins is None else pins
    pinned = {p.revision for p in pins} | ({revision.pin.revision} if revision.pin else set())
    if revision.sha in pinned:
        return revision
    return revision.model_copy(update={"sha": commit, "unverified": revision.sha})
