"""Unified diffs as `git diff`, `git format-patch` and GitHub's `.diff`/`.patch` of a PR write them.

Parsing only (applying is `srcreview.source.patched`): a patch file becomes a list of
FilePatch, each with its hunks and, for every hunk line, the line of the patch file it was
read from, so an anchor on a patched line can cite the patch itself. What the file says
besides diffs (a format-patch mail header and message, the `-- ` signature, prose between
files) is skipped, as `git apply` skips it; hunk bodies are read by their header's counts.
Anything malformed is a DataError (exit 65) naming the patch file and line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, cast

from srcreview.core.errors import DataError, SourceUnavailable

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_DIFF_GIT = "diff --git "
_C_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "r": "\r", "v": "\v"}


@dataclass(frozen=True)
class HunkLine:
    tag: Literal[" ", "-", "+"]
    text: str
    patch_line: int  # 1-based line of the patch file


@dataclass
class Hunk:
    number: int  # 1-based, within its file
    header_line: int  # line of the patch file holding `@@ ... @@`
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: list[HunkLine] = field(default_factory=list)
    old_no_eol: bool = False  # "\ No newline at end of file" after the old side's last line
    new_no_eol: bool = False

    @property
    def header(self) -> str:
        return f"@@ -{self.old_start},{self.old_count} +{self.new_start},{self.new_count} @@"


@dataclass
class FilePatch:
    """The change to one file: modify, add, delete or rename (old_path/new_path None for /dev/null)."""

    old_path: str | None
    new_path: str | None
    line: int  # where this file's section starts in the patch file
    hunks: list[Hunk] = field(default_factory=list)
    binary: bool = False
    copy: bool = False  # `copy from/to`: the old file stays

    @property
    def path(self) -> str:
        return self.new_path or self.old_path or ""


_FILE_MODES = ("100644", "100755", "100664")  # regular files (100664: old git)


def parse_patch(text: str, shown: str) -> list[FilePatch]:
    """Every file change of a unified diff; DataError when it holds none or is malformed."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    files: list[FilePatch] = []
    current: FilePatch | None = None
    in_git_header = False  # between `diff --git` and its first hunk: extended header lines
    prefixed = False  # this git section's names carry `a/` and `b/`
    i = 0
    while i < len(lines):
        line, number = lines[i], i + 1
        if line.startswith(_DIFF_GIT):
            old, new = _git_header_paths(line[len(_DIFF_GIT):], shown, number)
            prefixed = old.startswith("a/") and new.startswith("b/")
            current = FilePatch(_strip(old, prefixed), _strip(new, prefixed), number)
            files.append(current)
            in_git_header = True
        elif in_git_header and current is not None and line.startswith(("rename from ", "copy from ")):
            current.old_path = _unquote(line.split(" ", 2)[2], shown, number)
            current.copy = line.startswith("copy")
        elif in_git_header and current is not None and line.startswith(("rename to ", "copy to ")):
            current.new_path = _unquote(line.split(" ", 2)[2], shown, number)
        elif in_git_header and current is not None and line.startswith(("new file mode ", "new mode ")):
            mode = line.rsplit(" ", 1)[1]
            if mode not in _FILE_MODES:  # git would write a symlink (120000) or a submodule (160000)
                kind = {"120000": "a symlink", "160000": "a submodule"}.get(mode, f"mode {mode[:12]}")
                raise DataError(f"{shown}:{number}: makes {current.path or 'a file'} {kind}: "
                                "srcreview lays regular files only over the source")
            if line.startswith("new file mode"):
                current.old_path = None
        elif in_git_header and current is not None and line.startswith("deleted file mode"):
            current.new_path = None
        elif in_git_header and current is not None and line.startswith(("Binary files ", "GIT binary patch")):
            current.binary = True
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old = _diff_path(line[4:], shown, number)
            new = _diff_path(lines[i + 1][4:], shown, number + 1)
            if in_git_header and current is not None:  # the pair inside a `diff --git` section names the same files
                current.old_path = _strip(old, prefixed) if old is not None else None
                current.new_path = _strip(new, prefixed) if new is not None else None
            else:  # a plain `diff -u`: strip a/ and b/ only when both sides carry them
                plain = (old is None or old.startswith("a/")) and (new is None or new.startswith("b/"))
                current = FilePatch(_strip(old, plain) if old else None, _strip(new, plain) if new else None, number)
                files.append(current)
            in_git_header = False
            i += 2
            continue
        elif line.startswith("@@ ") and current is not None:
            in_git_header = False
            i = _read_hunk(lines, i, current, shown)
            continue
        i += 1
    if not files:
        raise DataError(f"{shown}: not a unified diff (no `diff --git` or `---`/`+++` file header)")
    for change in files:
        change.old_path = _clean(change.old_path, shown, change.line) if change.old_path is not None else None
        change.new_path = _clean(change.new_path, shown, change.line) if change.new_path is not None else None
        if change.old_path is None and change.new_path is None:
            raise DataError(f"{shown}:{change.line}: a file change names no file")
    return files


def _strip(path: str, prefixed: bool) -> str:
    return path[2:] if prefixed else path


def _read_hunk(lines: list[str], i: int, change: FilePatch, shown: str) -> int:
    """Read the hunk whose header is lines[i]; return the index after it."""
    number = i + 1
    match = _HUNK.match(lines[i])
    if not match:
        raise DataError(f"{shown}:{number}: malformed hunk header {lines[i][:60]!r}")
    old_start, old_count, new_start, new_count = (int(g) if g is not None else 1 for g in match.groups())
    hunk = Hunk(len(change.hunks) + 1, number, old_start, old_count, new_start, new_count)
    old_left, new_left = old_count, new_count
    i += 1
    last_tag = None
    while i < len(lines) and (old_left > 0 or new_left > 0):
        line = lines[i]
        tag = line[:1]
        if line.startswith("\\"):  # "\ No newline at end of file" for the line before
            _mark_no_eol(hunk, last_tag)
            i += 1
            continue
        if line == "":  # some tools drop the space of an empty context line
            tag, line = " ", " "
        if tag not in (" ", "-", "+"):
            raise DataError(f"{shown}:{i + 1}: hunk #{hunk.number} of {change.path} ends early "
                            f"(expected {old_left} more old and {new_left} more new lines)")
        if (tag in " -" and old_left == 0) or (tag in " +" and new_left == 0):
            raise DataError(f"{shown}:{i + 1}: hunk #{hunk.number} of {change.path} has more lines than its "
                            "header says")
        hunk.lines.append(HunkLine(cast(Literal[" ", "-", "+"], tag), line[1:], i + 1))
        old_left -= tag in " -"
        new_left -= tag in " +"
        last_tag = tag
        i += 1
    if old_left > 0 or new_left > 0:
        raise DataError(f"{shown}:{number}: hunk #{hunk.number} of {change.path} is cut short at the end of the patch")
    if i < len(lines) and lines[i].startswith("\\"):
        _mark_no_eol(hunk, last_tag)
        i += 1
    if i < len(lines) and _looks_like_hunk_line(lines[i]):
        raise DataError(f"{shown}:{i + 1}: hunk #{hunk.number} of {change.path} has more lines than its header says")
    change.hunks.append(hunk)
    return i


def _looks_like_hunk_line(line: str) -> bool:
    """A changed line right after a complete hunk: the header's counts are wrong (the `-- `
    signature of git format-patch and a following `---` file header are not)."""
    if line.startswith("+"):
        return not line.startswith("+++ ")
    return line.startswith("-") and line not in ("-- ", "--") and not line.startswith("--- ")


def _mark_no_eol(hunk: Hunk, tag: str | None) -> None:
    if tag in (" ", "-"):
        hunk.old_no_eol = True
    if tag in (" ", "+"):
        hunk.new_no_eol = True


def _diff_path(field_text: str, shown: str, number: int) -> str | None:
    """The path of a `---`/`+++` line: quoted or not, a tab and timestamp after it dropped."""
    name = field_text.split("\t", 1)[0] if not field_text.startswith('"') else field_text
    name = _unquote(name.rstrip() if not name.startswith('"') else name, shown, number)
    if name == "/dev/null":
        return None
    return name


def _git_header_paths(rest: str, shown: str, number: int) -> tuple[str, str]:
    """`a/x b/x` (possibly quoted); for unquoted names with spaces, the halves that agree."""
    if rest.startswith('"'):
        first, remainder = _take_quoted(rest, shown, number)
        second = _unquote(remainder.strip(), shown, number)
        return first, second
    parts = rest.split(" ")
    for cut in range(1, len(parts)):
        a, b = " ".join(parts[:cut]), " ".join(parts[cut:])
        if a.partition("/")[2] == b.partition("/")[2]:
            return a, b
    return (parts[0], parts[-1]) if len(parts) >= 2 else (rest, rest)


def _take_quoted(text: str, shown: str, number: int) -> tuple[str, str]:
    end = 1
    while end < len(text):
        if text[end] == "\\":
            end += 2
            continue
        if text[end] == '"':
            return _unquote(text[: end + 1], shown, number), text[end + 1:]
        end += 1
    raise DataError(f"{shown}:{number}: unterminated quoted file name")


def _unquote(name: str, shown: str, number: int) -> str:
    """git's C-style quoting of unusual file names ("a/caf\\303\\251.py")."""
    if not (len(name) >= 2 and name.startswith('"') and name.endswith('"')):
        return name
    body, out, i = name[1:-1], bytearray(), 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out += char.encode()
            i += 1
            continue
        nxt = body[i + 1:i + 2]
        if nxt in _C_ESCAPES:
            out += _C_ESCAPES[nxt].encode()
            i += 2
        elif re.fullmatch(r"[0-7]{3}", body[i + 1:i + 4]):
            out.append(int(body[i + 1:i + 4], 8))
            i += 4
        else:
            raise DataError(f"{shown}:{number}: bad escape in quoted file name")
    return out.decode("utf-8", errors="replace")


def _clean(path: str, shown: str, number: int) -> str:
    from srcreview.source.base import clean_relpath

    try:
        return clean_relpath(path)
    except SourceUnavailable:
        raise DataError(f"{shown}:{number}: {path!r} is not a path inside the source tree") from None
