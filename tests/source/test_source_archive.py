"""Untrusted archives: nothing escapes the extraction root, bombs and corrupt files are refused."""

from __future__ import annotations

import io
import tarfile

import pytest
from conftest import make_tar, make_zip, sdist_files

from srcreview.core.errors import EXIT_INCOMPLETE, SourceUnavailable
from srcreview.source.archive import extract


def member(name: str, kind=tarfile.REGTYPE, linkname: str = "", size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    info.size = size
    info.mode = 0o644
    return info


def write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    dest = tmp_path / "out"
    dest.mkdir()
    return path, dest


def assert_refused(tmp_path, name, data, pattern):
    path, dest = write(tmp_path, name, data)
    with pytest.raises(SourceUnavailable, match=pattern) as info:
        extract(path, dest)
    assert info.value.exit_code == EXIT_INCOMPLETE
    assert "\n" not in info.value.message
    assert not (tmp_path / "evil").exists() and not (tmp_path.parent / "evil").exists()
    return dest


def test_sdist_tarball_is_extracted_with_its_top_directory_stripped(tmp_path):
    path, dest = write(tmp_path, "vllm-0.0.1.tar.gz", make_tar(sdist_files(), comment="c0ffee"))
    info = extract(path, dest)
    assert info.top == "vllm-0.0.1" and info.comment == "c0ffee"
    assert (dest / "vllm/config/speculative.py").read_bytes().startswith(b"class SpeculativeConfig")
    assert sorted(p.name for p in dest.iterdir()) == ["PKG-INFO", "vllm"]


def test_zip_is_extracted_too(tmp_path):
    path, dest = write(tmp_path, "vllm.zip", make_zip(sdist_files()))
    extract(path, dest)
    assert (dest / "vllm/_version.py").is_file()


def test_symlink_inside_the_tree_is_kept(tmp_path):
    extra = [member("vllm-0.0.1/link.py", tarfile.SYMTYPE, "vllm/__init__.py")]
    path, dest = write(tmp_path, "a.tar.gz", make_tar(sdist_files(), extra=extra))
    extract(path, dest)
    assert (dest / "link.py").is_symlink()


@pytest.mark.parametrize("extra, pattern", [
    ([member("/tmp/evil", size=1)], r"member '/tmp/evil' has an absolute path"),
    ([member("vllm-0.0.1/../../evil", size=1)], r"'vllm-0.0.1/../../evil' has a '\.\.' component"),
    ([member("vllm-0.0.1/s", tarfile.SYMTYPE, "/etc/passwd")], r"member 'vllm-0.0.1/s' is a symbolic link to an absolute"),
    ([member("vllm-0.0.1/s", tarfile.SYMTYPE, "../../evil")], r"symbolic link pointing outside"),
    ([member("vllm-0.0.1/s", tarfile.SYMTYPE, "."), member("vllm-0.0.1/t", tarfile.SYMTYPE, "s/../..")],
     r"member 'vllm-0.0.1/t' is a symbolic link with a non-normalized target"),
    ([member("vllm-0.0.1/s", tarfile.SYMTYPE, "vllm"), member("vllm-0.0.1/s/x.py", size=1)],
     r"'vllm-0.0.1/s/x.py' would be written through a symbolic link"),
    ([member("vllm-0.0.1/h", tarfile.LNKTYPE, "/etc/passwd")], r"member 'vllm-0.0.1/h' is a hard link pointing outside the archive"),
    ([member("vllm-0.0.1/h", tarfile.LNKTYPE, "vllm-0.0.1/../../evil")], r"member 'vllm-0.0.1/h' is a hard link pointing outside"),
    ([member("vllm-0.0.1/h", tarfile.LNKTYPE, "other/file")], r"hard link pointing outside"),
    ([member("vllm-0.0.1/dev", tarfile.CHRTYPE)], r"member 'vllm-0.0.1/dev' is a device or fifo"),
    ([member("vllm-0.0.1/blk", tarfile.BLKTYPE)], r"is a device or fifo"),
    ([member("vllm-0.0.1/fifo", tarfile.FIFOTYPE)], r"is a device or fifo"),
    ([member("other-top/x", size=1)], r"outside the single top-level directory 'vllm-0.0.1'"),
])
def test_hostile_tar_members_are_refused(tmp_path, extra, pattern):
    assert_refused(tmp_path, "evil.tar.gz", make_tar(sdist_files(), extra=extra), pattern)


def test_hard_link_to_an_extracted_file_is_a_copy(tmp_path):
    extra = [member("vllm-0.0.1/copy.py", tarfile.LNKTYPE, "vllm-0.0.1/vllm/_version.py")]
    path, dest = write(tmp_path, "a.tar", make_tar(sdist_files(), extra=extra, compress=False))
    extract(path, dest)
    assert (dest / "copy.py").read_bytes() == (dest / "vllm/_version.py").read_bytes()


@pytest.mark.parametrize("files, links, top, pattern", [
    ({"/abs/evil": b"x"}, None, "", r"has an absolute path"),
    ({"vllm-0.0.1/../evil": b"x"}, None, "", r"'\.\.' component"),
    ({"vllm/__init__.py": b""}, {"s": "../../evil"}, "vllm-0.0.1", r"symbolic link pointing outside"),
])
def test_hostile_zip_members_are_refused(tmp_path, files, links, top, pattern):
    assert_refused(tmp_path, "evil.zip", make_zip(files, top=top, links=links), pattern)


def test_truncated_archive_is_a_clear_error(tmp_path):
    data = make_tar({f"f{i}.txt": bytes(range(256)) * 400 for i in range(20)})
    assert_refused(tmp_path, "cut.tar.gz", data[: len(data) // 2], r"archive cut\.tar\.gz: truncated or corrupt")


def test_corrupt_zip_is_a_clear_error(tmp_path):
    data = bytearray(make_zip({"a.txt": b"hello" * 1000}))
    data[40:60] = b"\0" * 20
    assert_refused(tmp_path, "bad.zip", bytes(data), r"archive bad\.zip: truncated or corrupt")


def test_not_an_archive_is_a_clear_error(tmp_path):
    assert_refused(tmp_path, "plain.tar.gz", b"this is not gzip", r"truncated or corrupt")


def test_decompression_bomb_is_refused_by_size(tmp_path):
    data = make_tar({"zeros.bin": b"\0" * (2 << 20)})
    assert len(data) < 50_000
    path, dest = write(tmp_path, "bomb.tar.gz", data)
    with pytest.raises(SourceUnavailable, match=r"member 'vllm-0.0.1/zeros.bin' expands beyond 1048576 bytes"):
        extract(path, dest, max_bytes=1 << 20)


def test_decompression_bomb_is_refused_by_member_count(tmp_path):
    path, dest = write(tmp_path, "many.tar.gz", make_tar({f"f{i}": b"" for i in range(50)}))
    with pytest.raises(SourceUnavailable, match=r"more than 10 members"):
        extract(path, dest, max_members=10)


def test_zip_size_is_counted_from_the_data_not_the_header(tmp_path):
    raw = io.BytesIO(make_zip({"big.bin": b"\0" * (2 << 20)}))
    path, dest = write(tmp_path, "bomb.zip", raw.getvalue())
    with pytest.raises(SourceUnavailable, match=r"expands beyond"):
        extract(path, dest, max_bytes=1 << 20)
