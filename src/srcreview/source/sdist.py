"""The commit an sdist was built from, read (never executed) from its `vllm/_version.py`.

Release sdists record it as `__commit_id__ = commit_id = 'g98dff2a81'`; dev builds also
carry it in the version (`0.29.1.dev3+g1234abcd`). This is how an sdist, wherever it came
from, is checked against the revision the user asked for.
"""

from __future__ import annotations

import re

from srcreview.errors import SourceUnavailable
from srcreview.revision import Revision
from srcreview.source.base import SourceTree, VerificationFailed

VERSION_FILE = "vllm/_version.py"
_COMMIT = re.compile(r"""^__commit_id__\s*=\s*(?:commit_id\s*=\s*)?['"]g?([0-9a-fA-F]{7,40})['"]""", re.M)
_VERSION = re.compile(r"""^__version__\s*=\s*(?:version\s*=\s*)?['"]([^'"]+)['"]""", re.M)
_LOCAL_COMMIT = re.compile(r"\+g([0-9a-f]{7,40})\b")


def version_info(text: str) -> tuple[str | None, str | None]:
    """(version, abbreviated commit) recorded in a `_version.py` text; either may be None."""
    version = _VERSION.search(text)
    commit = _COMMIT.search(text)
    found_version = version.group(1) if version else None
    found_commit = commit.group(1).lower() if commit else None
    if found_commit is None and found_version:
        local = _LOCAL_COMMIT.search(found_version)
        found_commit = local.group(1) if local else None
    return found_version, found_commit


def verify_commit(tree: SourceTree, revision: Revision, what: str) -> str:
    """The commit `tree`'s `_version.py` records; SourceUnavailable unless it names `revision`."""
    try:
        text = tree.read_text(VERSION_FILE)
    except SourceUnavailable:
        raise VerificationFailed(f"{what}: has no {VERSION_FILE}, so its commit cannot be verified") from None
    version, commit = version_info(text)
    if commit is None:
        raise VerificationFailed(f"{what}: {VERSION_FILE} records no commit id, so it cannot be verified")
    if not revision.matches_commit(commit):
        asked = revision.label() if revision.version else revision.sha
        raise VerificationFailed(f"{what}: built from commit {commit}"
                                + (f" (version {version})" if version else "")
                                + f", not the requested {asked}")
    return commit
