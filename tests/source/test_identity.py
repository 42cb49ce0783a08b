"""Identity cannot be forged: what a source proves about its commit, read as Python and checked against pins/.

Sdists built here (our own few files); the pins are the shipped ones, whose 0.29.0 and 0.30.0
carry full commits and sdist digests.
"""

from __future__ import annotations

from conftest import FAKE_SHA, make_tar, sdist_files

from srcreview.core.errors import EXIT_INCOMPLETE
from srcreview.source.sdist import version_info

V029 = "98dff2a81d747d1dba01a47f939f48c3526d4206"
V030 = "ced6857afa0ea7b2e3f0846a62e1394e90f15607"
FORGED = "98dff2a81" + "f" * 31


def write_tree(root, files):
    for name, data in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


def one_error(result, code):
    assert result.code == code, result
    assert result.err.count("\n") == 1 and result.out == ""
    return result.err.removeprefix("srcreview: error: ").rstrip("\n")


def test_a_forged_full_rev_is_refused_when_pins_know_the_full_commit(cli, cache_dir, tmp_path):
    """Fixed: `fetch --rev 98dff2a81fff… --source <0.29.0 sdist>` printed that commit and anchored URLs to it."""
    sdist = write_tree(tmp_path / "vllm-0.29.0", sdist_files(V029, "0.29.0"))
    message = one_error(cli("fetch", "--rev", FORGED, "--source", str(sdist)), EXIT_INCOMPLETE)
    assert message == f"--source vllm-0.29.0: is vLLM 0.29.0 = commit {V029} (pins/), not the requested {FORGED}"
    ok = cli("fetch", "--rev", V029, "--source", str(sdist))
    assert ok.code == 0 and f"commit {V029}," in ok.out and "unverified" not in ok.out


def test_a_full_rev_the_sdist_cannot_prove_is_reported_unverified(cli, cache_dir, tmp_path):
    sdist = write_tree(tmp_path / "vllm-0.99.0", sdist_files(FAKE_SHA, "0.99.0"))
    fetched = cli("fetch", "--rev", FAKE_SHA, "--source", str(sdist))
    assert fetched.code == 0, fetched.err
    assert fetched.out == (f"vLLM 123456789 from local sdist directory: commit 123456789, 4 files "
                           f"(requested commit {FAKE_SHA} is unverified: the source records only 123456789)\n")
    shown = cli("show", "--rev", FAKE_SHA, "--source", str(sdist), "vllm/config/speculative.py:1")
    assert "/blob/123456789/vllm/config/speculative.py#L1" in shown.out and FAKE_SHA not in shown.out


def test_version_file_is_read_as_python_last_assignment_wins():
    decoy = ("__version__ = version = '0.29.0'\n"
             "NOTE = '''\n__commit_id__ = commit_id = 'gced6857af'\n'''\n"
             "__commit_id__ = commit_id = 'g0000000aa'\n"
             "__commit_id__ = commit_id = 'g98dff2a81'\n")
    assert version_info(decoy) == ("0.29.0", "98dff2a81")
    assert version_info("commit_id = 'g98dff2a81'\nif x:\n    commit_id = 'gced6857af'\n") == (None, "98dff2a81")
    assert version_info("__commit_id__ = compute()\n") == (None, None)  # not a literal: unknown, never a guess
    assert version_info("def broken(:\n") == (None, None)
    assert version_info("__version__ = '0.29.1.dev3+g1234abcd'\n") == ("0.29.1.dev3+g1234abcd", "1234abcd")


def test_a_decoy_commit_in_a_string_does_not_pass(cli, cache_dir, tmp_path):
    """Fixed: a regex took the first `__commit_id__ = …` line, even one inside a string."""
    files = sdist_files(FAKE_SHA, "0.99.0")
    files["vllm/_version.py"] = (b"DOC = '''\n__commit_id__ = commit_id = 'gabcdef012'\n'''\n"
                                 + files["vllm/_version.py"])
    sdist = write_tree(tmp_path / "vllm-decoy", files)
    message = one_error(cli("fetch", "--rev", "abcdef012", "--source", str(sdist)), EXIT_INCOMPLETE)
    assert message == "--source vllm-decoy: built from commit 123456789 (version 0.99.0), not the requested abcdef012"


def test_an_sdist_claiming_a_release_with_another_commit_is_refused(cli, cache_dir, tmp_path):
    """A `_version.py` edited to claim 0.30.0 while keeping 0.29.0's commit (or the reverse)."""
    claims = write_tree(tmp_path / "claims", sdist_files(V029, "0.30.0"))
    message = one_error(cli("fetch", "--rev", "98dff2a81", "--source", str(claims)), EXIT_INCOMPLETE)
    assert message == ("--source claims: claims vLLM 0.30.0, but records commit 98dff2a81; pins/ has 0.30.0 at "
                       f"{V030}")


def test_an_edited_release_archive_is_refused_by_its_sha256(cli, cache_dir, tmp_path):
    """An archive whose `_version.py` says 0.30.0 consistently (version and commit) is still not the
    0.30.0 sdist: its sha256 differs from the one pins/ records (fixed: it was accepted)."""
    archive = tmp_path / "vllm-0.30.0.tar.gz"
    archive.write_bytes(make_tar(sdist_files(V030, "0.30.0"), top="vllm-0.30.0"))
    message = one_error(cli("fetch", "--rev", "0.30.0", "--source", str(archive)), EXIT_INCOMPLETE)
    assert message.startswith("--source vllm-0.30.0.tar.gz: claims vLLM 0.30.0, but its sha256 ")
    assert message.endswith("is not that release's sdist (5f8f4e890c042ffa... in pins/)")
    unknown = tmp_path / "vllm-0.99.0.tar.gz"  # a release pins/ does not know: its commit is all there is to check
    unknown.write_bytes(make_tar(sdist_files(FAKE_SHA, "0.99.0"), top="vllm-0.99.0"))
    assert cli("fetch", "--rev", FAKE_SHA[:9], "--source", str(unknown)).code == 0


def test_a_tree_whose_metadata_names_another_release_is_refused(cli, cache_dir, tmp_path):
    """A newer sdist tree carrying 0.29.0's `_version.py` (issue 26): its PKG-INFO still names the
    release it is, so the identity does not rest on the one file. Equal releases written
    differently (`0.029.0`, a local part) and a huge version header are no mismatch, no crash."""
    files = sdist_files(V029, "0.29.0")
    files["PKG-INFO"] = b"Metadata-Version: 2.1\nName: vllm\nVersion: 0.31.0\n\nVersion: 0.29.0\n"
    mixed = write_tree(tmp_path / "mixed", files)
    message = one_error(cli("fetch", "--rev", "0.29.0", "--source", str(mixed)), EXIT_INCOMPLETE)
    assert message == ("--source mixed: vllm/_version.py says vLLM 0.29.0, but PKG-INFO says 0.31.0: "
                       "the tree is not one release")
    for header in ("0.029.0", "0.29.0+cu130", "0.29.0." + "0" * 5000):
        files["PKG-INFO"] = f"Name: vllm\nVersion: {header}\n".encode()
        same = write_tree(tmp_path / f"same{len(header)}", files)
        assert cli("fetch", "--rev", "0.29.0", "--source", str(same)).code == 0, header
