"""Files a recipe names: `vllm serve --config x.yaml`, a compose service's `env_file:`.

They are part of the recipe, so they are read: relative to the recipe's own directory (a
compose `volumes:` entry maps a container path back to the host directory it mounts). A
named file must stay inside the recipe's directory tree: `..` or an absolute path that leaves
it, or a symlink out of it, is refused (an open question saying so), never followed, unless
the caller widens the tree. A file that cannot be read is an open question with the reason,
never a silent pass; only content that is there and malformed is a DataError (exit 65).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from srcreview.core.errors import SrcreviewError

MAX_NAMED_BYTES = 1_000_000


@dataclass(frozen=True)
class FileAccess:
    """Where the files a recipe names may be read from: the recipe's directory on disk and the
    root of the tree they must stay in (the same directory unless widened); None: no file
    system (a recipe read from text), so every named file stays an open question."""

    base: Path | None = None
    root: Path | None = None
    mounts: tuple[tuple[str, str], ...] = field(default=())  # (container path, host path relative to base)

    def within(self, root: Path) -> FileAccess:
        return FileAccess(self.base, root, self.mounts)


@dataclass(frozen=True)
class Named:
    """A named file read (`text`, `shown` relative to the recipe) or why not (`reason`)."""

    shown: str
    text: str | None = None
    reason: str = ""


def read_named(name: str, access: FileAccess, what: str) -> Named:
    """The text of the file `name` (as written in the recipe), or why it cannot be read."""
    if access.base is None:
        return Named(name, reason=f"{what} {name} is not read: the recipe was not read from a file")
    written = PurePosixPath(name)
    host = None
    for container, mounted in access.mounts:
        inside = PurePosixPath(container)
        if written == inside or inside in written.parents:
            host = PurePosixPath(mounted) / written.relative_to(inside)
            break
    if host is None:
        if written.is_absolute():
            return Named(name, reason=f"{what} {name} is refused: an absolute path outside the recipe's "
                                      "directory (no compose volume maps it)")
        host = written
    root = (access.root or access.base).resolve()
    candidate = (access.base / Path(*host.parts)).resolve() if not host.is_absolute() else Path(str(host)).resolve()
    try:
        shown = candidate.relative_to(access.base.resolve()).as_posix()
    except ValueError:
        shown = str(host)
    try:
        candidate.relative_to(root)
    except ValueError:
        return Named(name, reason=f"{what} {name} is refused: it leaves the recipe's directory tree")
    from srcreview.core.userfile import read_user_file

    try:
        raw = read_user_file(candidate, shown, what.removesuffix(" file"), MAX_NAMED_BYTES)
    except SrcreviewError as exc:
        return Named(shown, reason=f"{what} {name} cannot be read: {exc.message.split(': ', 1)[-1]}")
    try:
        return Named(shown, text=raw.decode("utf-8").removeprefix("\ufeff"))
    except UnicodeDecodeError:
        return Named(shown, reason=f"{what} {name} cannot be read: not UTF-8")
