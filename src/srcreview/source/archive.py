"""Safe extraction of untrusted source archives (.tar.gz, .tar, .zip).

An sdist or a GitHub tarball is data from the network: no member may land outside the
extraction root (absolute names, `..`, links pointing out, writes through links), no device
or fifo is created, and the total size and member count are bounded (decompression bombs;
`SRCREVIEW_ARCHIVE_MAX_BYTES` / `SRCREVIEW_ARCHIVE_MAX_MEMBERS` override the defaults).
Any violation, and any truncated or corrupt archive (a tar must end with its end-of-archive
marker and its compressed stream must check out to the last byte), is one SourceUnavailable
line naming the archive and the member. The single top-level directory (`vllm-0.29.0/`, `vllm-<sha>/`)
is stripped.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
import posixpath
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import IO, cast

from srcreview.core.errors import SourceUnavailable
from srcreview.source.base import VerificationFailed

# The real vLLM 0.29.0 sdist expands to about 110 MB in about 7,700 members: the defaults
# leave room for many times that and still stop a bomb before it fills a disk.
MAX_TOTAL_BYTES = 4 << 30
MAX_MEMBERS = 200_000
_CHUNK = 1 << 20


def default_limits() -> tuple[int, int]:
    """(max bytes, max members): `SRCREVIEW_ARCHIVE_MAX_BYTES` / `_MAX_MEMBERS`, else the defaults."""
    from srcreview.core.errors import UsageError

    found = []
    for name, default in (("SRCREVIEW_ARCHIVE_MAX_BYTES", MAX_TOTAL_BYTES),
                          ("SRCREVIEW_ARCHIVE_MAX_MEMBERS", MAX_MEMBERS)):
        raw = os.environ.get(name, "").strip()
        if not raw:
            found.append(default)
        elif raw.isascii() and raw.isdigit() and len(raw) <= 18 and int(raw) > 0:
            found.append(int(raw))
        else:
            raise UsageError(f"{name}={raw[:40]!r}: expected a positive whole number")
    return found[0], found[1]


class ArchiveInfo:
    """What extraction learned: the stripped top-level name and the tar's pax comment (GitHub: the sha)."""

    def __init__(self, top: str, comment: str | None, members: int, size: int):
        self.top = top
        self.comment = comment
        self.members = members
        self.size = size


class _Limits:
    def __init__(self, name: str, max_bytes: int, max_members: int):
        self.name = name
        self.max_bytes = max_bytes
        self.max_members = max_members
        self.bytes = 0
        self.members = 0

    def member(self, member: str) -> None:
        self.members += 1
        if self.members > self.max_members:
            raise _error(self.name, member, f"more than {self.max_members} members (refusing a decompression bomb)")

    def add(self, member: str, count: int) -> None:
        self.bytes += count
        if self.bytes > self.max_bytes:
            raise _error(self.name, member, f"expands beyond {self.max_bytes} bytes (refusing a decompression bomb)")


def _error(archive: str, member: str | None, reason: str) -> SourceUnavailable:
    where = f" member {member!r}" if member else ""
    return VerificationFailed(f"archive {archive}:{where} {reason}")


def archive_kind(path: Path) -> str | None:
    """"tar" or "zip" from the file name, None for anything else."""
    name = path.name.lower()
    if name.endswith((".tar.gz", ".tgz", ".tar", ".tar.bz2", ".tar.xz")):
        return "tar"
    if name.endswith(".zip"):
        return "zip"
    return None


def _split(archive: str, name: str) -> tuple[str, ...]:
    """The member's path components; refuses absolute names, drive letters and `..`."""
    if "\x00" in name:
        raise _error(archive, name, "has a NUL byte in its name")
    posix = name.replace("\\", "/")
    if posix.startswith("/") or (len(posix) > 1 and posix[1] == ":"):
        raise _error(archive, name, "has an absolute path")
    parts = tuple(p for p in PurePosixPath(posix).parts if p not in ("", "."))
    if ".." in parts:
        raise _error(archive, name, "has a '..' component")
    return parts


class _Writer:
    """Writes members under `root`, never through a symlink and never outside it."""

    def __init__(self, archive: str, root: Path, limits: _Limits):
        self.archive = archive
        self.root = root
        self.real_root = os.path.realpath(root)
        self.limits = limits
        self.top: str | None = None

    def rel(self, name: str) -> tuple[str, ...] | None:
        """Path components below the stripped top directory; None for the top directory itself."""
        parts = _split(self.archive, name)
        if not parts:
            return None
        if self.top is None:
            self.top = parts[0]
        elif parts[0] != self.top:
            raise _error(self.archive, name, f"is outside the single top-level directory {self.top!r}")
        return parts[1:] or None

    def _parent(self, name: str, parts: tuple[str, ...]) -> Path:
        parent = self.root.joinpath(*parts[:-1])
        current = self.root
        for part in parts[:-1]:
            current = current / part
            if current.is_symlink():
                raise _error(self.archive, name, "would be written through a symbolic link")
        parent.mkdir(parents=True, exist_ok=True)
        return parent

    def _clear(self, target: Path, name: str) -> None:
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.exists():
            raise _error(self.archive, name, "replaces a directory")

    def directory(self, name: str, parts: tuple[str, ...]) -> None:
        target = self.root.joinpath(*parts)
        self._parent(name, parts)
        if target.is_symlink() or target.is_file():
            raise _error(self.archive, name, "replaces a file or link with a directory")
        target.mkdir(exist_ok=True)

    def file(self, name: str, parts: tuple[str, ...], source, executable: bool) -> None:
        target = self._parent(name, parts) / parts[-1]
        self._clear(target, name)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o755 if executable else 0o644)
        with os.fdopen(fd, "wb") as out:
            while True:
                chunk = source.read(_CHUNK)
                if not chunk:
                    break
                self.limits.add(name, len(chunk))
                out.write(chunk)

    def symlink(self, name: str, parts: tuple[str, ...], link: str) -> None:
        if not link or link.startswith("/") or "\x00" in link:
            raise _error(self.archive, name, f"is a symbolic link to an absolute or empty target {link!r}")
        if posixpath.normpath(link) != link.rstrip("/"):
            raise _error(self.archive, name, f"is a symbolic link with a non-normalized target {link!r}")
        resolved = posixpath.normpath(posixpath.join(*parts[:-1], link) if parts[:-1] else link)
        if resolved == ".." or resolved.startswith("../"):
            raise _error(self.archive, name, f"is a symbolic link pointing outside the archive ({link!r})")
        target = self._parent(name, parts) / parts[-1]
        self._clear(target, name)
        os.symlink(link, target)

    def hardlink(self, name: str, parts: tuple[str, ...], link: str) -> None:
        try:
            link_parts = _split(self.archive, link) if link else ()
        except VerificationFailed:
            link_parts = ()
        if not link_parts or link_parts[0] != self.top or len(link_parts) < 2:
            raise _error(self.archive, name, f"is a hard link pointing outside the archive ({link!r})")
        source = self.root.joinpath(*link_parts[1:])
        if source.is_symlink() or not source.is_file():
            raise _error(self.archive, name, f"is a hard link to {link!r}, which is not a file extracted before it")
        with open(source, "rb") as fh:
            self.file(name, parts, fh, executable=bool(source.stat().st_mode & 0o111))


def extract(archive: Path, dest: Path, *, max_bytes: int | None = None, max_members: int | None = None,
            progress: Callable[[str, int, int | None], None] | None = None) -> ArchiveInfo:
    """Extract `archive` into the existing empty directory `dest`, stripping the top directory.

    Limits default to `default_limits()` (the environment, else MAX_TOTAL_BYTES / MAX_MEMBERS).
    """
    env_bytes, env_members = default_limits()
    max_bytes = env_bytes if max_bytes is None else max_bytes
    max_members = env_members if max_members is None else max_members
    kind = archive_kind(archive)
    label = archive.name
    limits = _Limits(label, max_bytes, max_members)
    writer = _Writer(label, dest, limits)
    try:
        if kind == "tar":
            comment = _extract_tar(archive, writer, limits, progress)
        elif kind == "zip":
            comment = None
            _extract_zip(archive, writer, limits, progress)
        else:
            raise SourceUnavailable(f"archive {label}: not a .tar.gz, .tar or .zip file")
    except SourceUnavailable:
        raise
    except (tarfile.TarError, zipfile.BadZipFile, zlib.error, EOFError, gzip.BadGzipFile, lzma.LZMAError,
            UnicodeDecodeError) as exc:
        raise VerificationFailed(f"archive {label}: truncated or corrupt ({_reason(exc)})") from None
    except OSError as exc:
        raise SourceUnavailable(f"archive {label}: cannot be extracted ({_reason(exc)})") from None
    if writer.top is None:
        raise SourceUnavailable(f"archive {label}: is empty")
    return ArchiveInfo(writer.top, comment, limits.members, limits.bytes)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


class _BlockReader:
    """The decompressed tar stream, remembering the last header-sized block tarfile read.

    tarfile stops quietly at a damaged header or a cut-short stream as if the archive had
    ended; the block it stopped at tells: a real end is a block of zeros.
    """

    def __init__(self, raw):
        self.raw = raw
        self.last: bytes | None = None

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        if size == tarfile.BLOCKSIZE:
            self.last = data
        return data

    def seek(self, *args):
        return self.raw.seek(*args)

    def tell(self) -> int:
        return self.raw.tell()

    def close(self) -> None:
        self.raw.close()


def _decompressed(archive: Path):
    """The archive's bytes, decompressed by what its first bytes say it is (not by its name)."""
    with open(archive, "rb") as fh:
        magic = fh.read(6)
    if magic.startswith(b"\x1f\x8b"):
        return gzip.open(archive, "rb")
    if magic.startswith(b"BZh"):
        return bz2.open(archive, "rb")
    if magic.startswith(b"\xfd7zXZ\x00"):
        return lzma.open(archive, "rb")
    return open(archive, "rb")


def _extract_tar(archive: Path, writer: _Writer, limits: _Limits, progress) -> str | None:
    stream = _BlockReader(_decompressed(archive))
    try:
        with tarfile.open(fileobj=cast(IO[bytes], stream), mode="r:") as tar:  # read from, never written
            for member in tar:
                _tar_member(tar, member, writer, limits)
                if progress is not None and limits.members % 500 == 0:
                    progress(f"extracting {writer.archive}", limits.members, None)
            if stream.last != bytes(tarfile.BLOCKSIZE):
                raise _error(writer.archive, None, "truncated or corrupt (a damaged member header, or the "
                                                   "archive ends without its end-of-archive marker)")
            comment = tar.pax_headers.get("comment") if tar.pax_headers else None
        # read to the end, so the compressor checks its own checksum (gzip's CRC is at the very end)
        while True:
            chunk = stream.raw.read(_CHUNK)
            if not chunk:
                break
            limits.add("(end of archive)", len(chunk))
    finally:
        stream.close()
    return comment


def _tar_member(tar: tarfile.TarFile, member: tarfile.TarInfo, writer: _Writer, limits: _Limits) -> None:
    name = member.name
    limits.member(name)
    if member.isdev() or member.isfifo():
        raise _error(writer.archive, name, "is a device or fifo")
    parts = writer.rel(name)
    if member.islnk():
        if parts is None:
            raise _error(writer.archive, name, "is a hard link replacing the top directory")
        writer.hardlink(name, parts, member.linkname)
    elif member.issym():
        if parts is None:
            raise _error(writer.archive, name, "is a symbolic link replacing the top directory")
        writer.symlink(name, parts, member.linkname)
    elif parts is None:
        if not member.isdir():
            raise _error(writer.archive, name, "is a file at the top level; expected one top directory")
    elif member.isdir():
        writer.directory(name, parts)
    elif member.isreg():
        source = tar.extractfile(member)
        writer.file(name, parts, source, executable=bool(member.mode & 0o111))
    else:
        raise _error(writer.archive, name, "has an unsupported member type")


def _extract_zip(archive: Path, writer: _Writer, limits: _Limits, progress) -> None:
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            name = info.filename
            limits.member(name)
            mode = info.external_attr >> 16
            parts = writer.rel(name)
            file_type = stat.S_IFMT(mode) if mode else 0
            if file_type and file_type not in (stat.S_IFREG, stat.S_IFDIR, stat.S_IFLNK):
                raise _error(writer.archive, name, "is a device or fifo")
            if parts is None:
                if not info.is_dir():
                    raise _error(writer.archive, name, "is a file at the top level; expected one top directory")
                continue
            if file_type == stat.S_IFLNK:
                if info.file_size > 4096:
                    raise _error(writer.archive, name, "is a symbolic link with an oversized target")
                writer.symlink(name, parts, zf.read(info).decode("utf-8", errors="replace"))
            elif info.is_dir():
                writer.directory(name, parts)
            else:
                with zf.open(info) as source:
                    writer.file(name, parts, source, executable=bool(mode & 0o111))
            if progress is not None and limits.members % 500 == 0:
                progress(f"extracting {writer.archive}", limits.members, None)
