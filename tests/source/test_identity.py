"""Identity cannot be forged: what a source proves about its commit, read as Python and checked against pins/.

Sdists built here (our own few files); the pins are the shipped ones, whose 0.29.0 and 0.30.0
carry full commits and sdist digests.
"""

from __future__ import annotations

import json

from conftest import DEMO_RECIPE, FAKE_SHA, FIXTURE_REV, fixture_source, make_tar, sdist_files

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


UNVERIFIED = "source identity unverified: only vllm/_version.py names the release (no PKG-INFO agrees)"


def test_a_tree_whose_release_rests_on_its_version_file_alone_says_so(cli, cache_dir, tmp_path, monkeypatch):
    """PKG-INFO deleted (or a GitHub tarball given a `_version.py`): nothing else in the tree
    names the release, so the review records its identity as unverified, in the JSON, the
    gate line of every format and the Markdown; with PKG-INFO (or setuptools' copy of it in
    `vllm.egg-info/`) the outputs carry no such key or words."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "demo.toml").write_text(DEMO_RECIPE.read_text())
    tree = fixture_source(tmp_path / "tree")

    def outputs():
        run = {fmt: cli("check", "demo.toml", "--source", "tree", "--rev", FIXTURE_REV, "--format", fmt)
               for fmt in ("json", "concise", "markdown", "text")}
        assert {r.code for r in run.values()} == {1}, {f: r.err for f, r in run.items()}
        return {fmt: r.out for fmt, r in run.items()}

    vouched = outputs()
    assert all("unverified" not in out for out in vouched.values())
    assert "identity_unverified" not in json.loads(vouched["json"])["reviews"][0]["revision"]
    (tree / "PKG-INFO").unlink()
    (tree / "vllm.egg-info").mkdir()
    (tree / "vllm.egg-info" / "PKG-INFO").write_text("Name: vllm\nVersion: 0.0.0\n")
    assert outputs() == vouched  # setuptools' copy names the release as well
    (tree / "vllm.egg-info" / "PKG-INFO").unlink()
    alone = outputs()
    data = json.loads(alone["json"])
    assert data["reviews"][0]["revision"]["identity_unverified"] == UNVERIFIED
    assert "source identity unverified (1 review: only vllm/_version.py names the release)" in data["gate"]["summary"]
    gate_line = alone["concise"].splitlines()[-1]
    assert gate_line.startswith("gate: failed (") and "source identity unverified (1 review" in gate_line
    assert "**" + UNVERIFIED.replace("_", "\\_") + "**" in alone["markdown"] and "source identity unverified (1 review" in alone["markdown"]
    assert UNVERIFIED in " ".join(alone["text"].split())
    fetched = cli("fetch", "--rev", FIXTURE_REV, "--source", str(tree))
    assert fetched.code == 0 and fetched.out.rstrip("\n").endswith(f"({UNVERIFIED})"), fetched.out


def test_a_second_marker_that_contradicts_the_version_file_is_refused(cli, cache_dir, tmp_path):
    """With PKG-INFO deleted, setuptools' `vllm.egg-info/PKG-INFO` still names the release the tree
    is; and a `_version.py` whose version's `+g<commit>` is not its `__commit_id__` contradicts itself."""
    files = sdist_files(V029, "0.29.0")
    del files["PKG-INFO"]
    files["vllm.egg-info/PKG-INFO"] = b"Metadata-Version: 2.1\nName: vllm\nVersion: 0.31.0\n"
    egg = write_tree(tmp_path / "t31", files)
    message = one_error(cli("fetch", "--rev", "0.29.0", "--source", str(egg)), EXIT_INCOMPLETE)
    assert message == ("--source t31: vllm/_version.py says vLLM 0.29.0, but vllm.egg-info/PKG-INFO says 0.31.0: "
                       "the tree is not one release")
    files = sdist_files(FAKE_SHA, "0.99.0")
    files["vllm/_version.py"] = b"__version__ = '0.99.1.dev3+gabcdef012'\n__commit_id__ = 'g123456789'\n"
    files["PKG-INFO"] = b"Name: vllm\nVersion: 0.99.1.dev3+gabcdef012\n"
    self_contradicting = write_tree(tmp_path / "dev", files)
    message = one_error(cli("fetch", "--rev", FAKE_SHA[:9], "--source", str(self_contradicting)), EXIT_INCOMPLETE)
    assert message == ("--source dev: vllm/_version.py says version 0.99.1.dev3+gabcdef012 (commit abcdef012), "
                       "but records commit 123456789: the file contradicts itself")
    files["vllm/_version.py"] = b"__version__ = '0.99.1.dev3+g123456789'\n__commit_id__ = 'g123456789'\n"
    agreeing = write_tree(tmp_path / "dev-ok", files)
    assert cli("fetch", "--rev", FAKE_SHA[:9], "--source", str(agreeing)).code == 0


def test_an_archive_without_metadata_is_unverified_unless_it_is_the_pinned_sdist(cli, cache_dir, tmp_path):
    """A tarball of a release pins/ does not know, without PKG-INFO: fetched, its identity unverified."""
    files = sdist_files(FAKE_SHA, "0.99.0")
    del files["PKG-INFO"]
    archive = tmp_path / "vllm-0.99.0.tar.gz"
    archive.write_bytes(make_tar(files, top="vllm-0.99.0"))
    fetched = cli("fetch", "--rev", FAKE_SHA[:9], "--source", str(archive))
    assert fetched.code == 0 and UNVERIFIED in fetched.out, fetched
    with_metadata = tmp_path / "vllm-0.99.0-meta.tar.gz"
    with_metadata.write_bytes(make_tar(sdist_files(FAKE_SHA, "0.99.0"), top="vllm-0.99.0"))
    fetched = cli("fetch", "--rev", FAKE_SHA[:9], "--source", str(with_metadata))
    assert fetched.code == 0 and "unverified" not in fetched.out, fetched
