"""Revisions: validation refuses anything that could reach git or a URL as an option; pins resolve."""

from __future__ import annotations

import re

import pytest

from srcreview.core.errors import EXIT_USAGE, UsageError
from srcreview.model.revision import (
    load_pins,
    parse_version,
    releases_between,
    resolve_rev,
    validate_rev,
)


@pytest.mark.parametrize("rev, why", [
    ("", "empty"),
    ("-x", "starts with '-'"),
    ("--upload-pack=touch", "starts with '-'"),
    ("zzzzzzz", "neither a release version"),
    ("98dff2a81d7g", "neither a release version"),
    ("98df", "too short"),
    ("a" * 41, "neither a release version"),
    ("a" * 65, "at most 40"),
    ("0.29.0; rm -rf", "neither a release version"),
    ("HEAD", "neither a release version"),
    ("main~1", "neither a release version"),
])
def test_malformed_revs_are_usage_errors(rev, why):
    with pytest.raises(UsageError, match=re.escape(why)) as info:
        validate_rev(rev)
    assert info.value.exit_code == EXIT_USAGE
    assert "\n" not in info.value.message


def test_versions_and_hex_are_normalized():
    assert validate_rev("v0.29.0") == "0.29.0"
    assert validate_rev("98DFF2A") == "98dff2a"


def test_release_version_resolves_to_the_pinned_full_commit():
    rev = resolve_rev("0.29.0")
    assert rev.sha == "98dff2a81d747d1dba01a47f939f48c3526d4206"
    assert rev.version == "0.29.0" and rev.is_full


def test_short_commit_of_a_release_resolves_to_the_release():
    rev = resolve_rev("98dff2a")
    assert rev.version == "0.29.0"
    assert rev.sha == resolve_rev("0.29.0").sha


def test_unknown_commit_stays_a_commit():
    rev = resolve_rev("abcdef0123")
    assert rev.version is None and rev.sha == "abcdef0123"


def test_unknown_version_is_a_usage_error_naming_known_releases():
    with pytest.raises(UsageError, match=r"release 0\.1\.0 is not in pins/ \(known: .*0\.29\.0"):
        resolve_rev("0.1.0")


def test_pins_are_well_formed_unique_and_ordered():
    pins = load_pins()
    versions = [p.version for p in pins]
    assert len(set(versions)) == len(versions)
    assert versions == sorted(versions, key=parse_version)
    assert {"0.25.0", "0.26.0", "0.27.0", "0.28.0", "0.29.0", "0.30.0"} <= set(versions)
    assert all(p.sdist_sha256 for p in pins)
    revisions = [p.revision for p in pins]
    assert len(set(r[:9] for r in revisions)) == len(revisions)


def test_releases_between_is_inclusive_and_ordered():
    assert [p.version for p in releases_between("0.30.0", "0.28.0")] == ["0.28.0", "0.29.0", "0.30.0"]
