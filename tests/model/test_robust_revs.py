"""Hostile revisions: option-like, overlong, non-hex, unicode, whitespace. Refused with exit 64
and one line, before any git command, cache write or network request.

(Ambiguous short SHAs inside a git repository are the git provider's: tests/source/test_source_git*.py.)
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from srcreview.core.errors import EXIT_OK, EXIT_USAGE, UsageError
from srcreview.model.revision import (
    HEX,
    MAX_REV_LENGTH,
    VERSION,
    resolve_rev,
    validate_rev,
)

HOSTILE = [
    "-x",
    "--upload-pack=touch pwned",
    "--output=/tmp/x",
    "-c core.sshCommand=sh",
    "a" * 41,
    "a" * (MAX_REV_LENGTH + 1),
    "f" * 10_000,
    "98df",
    "zzzzzzz",
    "0x98dff2a",
    "98dff2a~1",
    "98dff2a^{tree}",
    "98dff2a:vllm/envs.py",
    "98dff2a..HEAD",
    "HEAD",
    "main",
    "refs/heads/main",
    "../../etc/passwd",
    "98dff2a\n",
    "0.29.0\n",
    " 98dff2a",
    "98dff2a ",
    "98dff2a\x00",
    "0.29.0; rm -rf ~",
    "$(touch pwned)",
    "٩٨dff2a",  # Arabic-Indic digits
    "٠.٢٩.٠",
    "０.２９.０",  # full-width digits
    "98dff2a\u202e",  # right-to-left override
    "İabcdef0",  # lowercases to two characters
]


@pytest.mark.parametrize("rev", HOSTILE)
def test_hostile_revs_are_usage_errors_on_one_line(rev):
    with pytest.raises(UsageError) as info:
        validate_rev(rev)
    assert info.value.exit_code == EXIT_USAGE
    message = info.value.message
    assert message.startswith("--rev: ") and "\n" not in message and "\x00" not in message
    assert len(message) < 200  # an overlong rev is not echoed back whole


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=80))
def test_validate_rev_accepts_only_ascii_versions_and_hex(rev):
    try:
        normalized = validate_rev(rev)
    except UsageError as exc:
        assert "\n" not in exc.message
        return
    assert HEX.fullmatch(normalized) or VERSION.fullmatch(normalized)
    assert normalized.isascii() and not normalized.startswith("-")
    assert re.fullmatch(r"[0-9a-z.]+", normalized)


@settings(max_examples=200, deadline=None)
@given(st.from_regex(r"[0-9a-fA-F]{7,40}", fullmatch=True))
def test_any_hex_commit_is_accepted_lowercased(rev):
    assert validate_rev(rev) == rev.lower()


def test_resolve_rev_validates_first():
    with pytest.raises(UsageError, match="starts with '-'"):
        resolve_rev("--upload-pack=x")


# ------------------------------------------------------------------------ through the CLI

@pytest.fixture
def offline_world(http_server, tmp_path, monkeypatch):
    """Every provider pointed at a local server that counts requests; a private empty cache."""
    monkeypatch.setenv("SRCREVIEW_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PIP_INDEX_URL", http_server.url("/simple"))
    monkeypatch.setenv("SRCREVIEW_GITHUB_URL", http_server.url("/gh"))
    monkeypatch.setenv("SRCREVIEW_GIT_URL", http_server.url("/git"))
    monkeypatch.chdir(tmp_path)
    return http_server


@pytest.mark.parametrize("rev", [r for r in HOSTILE if "\x00" not in r])
def test_cli_fetch_refuses_hostile_revs_without_touching_anything(offline_world, cli, tmp_path, rev):
    result = cli("fetch", f"--rev={rev}")
    assert result.code == EXIT_USAGE, result
    assert result.out == ""
    assert "Traceback" not in result.err
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("srcreview: error: --rev: ")
    assert offline_world.hits == {}
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").rglob("*"))


def test_cli_option_like_value_is_an_argparse_usage_error(offline_world, cli):
    result = cli("fetch", "--rev", "--upload-pack=touch")
    assert result.code == EXIT_USAGE
    assert offline_world.hits == {}


def test_audit_review_with_hostile_url_revs_marks_them_unverifiable(offline_world, cli, tmp_path):
    """Revisions written inside a review file are validated like --rev: never a git option or a fetch."""
    urls = [f"https://github.com/vllm-project/vllm/blob/{rev}/vllm/envs.py#L1-L2"
            for rev in ("--upload-pack=touch", "HEAD", "a" * 41, "main", "%24%28id%29", "`id`")]
    doc = {"artifacts": {"pinned_runtime": {"source_urls": [{"url": u, "purpose": "reads VLLM_USE_V2_MODEL_RUNNER"}
                                                            for u in urls]}}}
    (tmp_path / "review.json").write_text(json.dumps(doc))
    result = cli("audit", "review.json", "--format", "json", "--no-progress")
    assert result.code == EXIT_OK, result
    entries = json.loads(result.out)["entries"]
    assert [e["status"] for e in entries] == ["unverifiable"] * len(urls)
    assert all(e["reason"].startswith("revision ") for e in entries)
    assert offline_world.hits == {}


# ------------------------------------------------------------------------ a damaged pins file

@pytest.mark.parametrize("content", [
    b"[[release]]\nversion = '1.0'\nrevision = 'xyz'\n",
    b"[[release]]\nversion = '1.0'\nrevision = '--upload-pack=x'\n",
    b"release = 1\n",
    b"release = [1, 2]\n",
    b"[[release]\n",
    b"\xff\xfe",
    b"[[release]]\nversion = '1.0'\nrevision = 'abcdef0'\nsdist_sha256 = 'nothex'\n",
    b"[[release]]\nversion = '1.0'\nrevision = 'abcdef0'\nextra = 1\n",
])
def test_damaged_pins_file_is_one_line_data_error(tmp_path, content):
    from srcreview.core.errors import DataError
    from srcreview.model.revision import load_pins

    path = tmp_path / "vllm.toml"
    path.write_bytes(content)
    with pytest.raises(DataError) as info:
        load_pins(path)
    assert info.value.message.startswith("vllm.toml: invalid pins file: ")
    assert "\n" not in info.value.message and str(tmp_path) not in info.value.message
