"""Shell words with their positions: enough of POSIX shell to read how `vllm serve` is launched.

Quoting ('…', "…" with its backslash escapes, \\x), line continuations, comments and the
command separators (newline ; & && | ||) are understood; nothing is expanded or run: `$VAR`
and `$(…)` stay as written. Each word keeps the line and column of its first character, so a
flag is anchored where the user wrote it, even inside a continued or quoted command.
"""

from __future__ import annotations

from dataclasses import dataclass

from srcreview.core.errors import DataError

MAX_WORDS = 200_000


@dataclass(frozen=True)
class Word:
    text: str
    line: int
    column: int
    quoted: bool = False  # any part was quoted: never an operator, an assignment or a comment


def commands(text: str, shown: str, first_line: int = 1, first_column: int = 1) -> list[list[Word]]:
    """The simple commands of `text`, each a list of words (separators dropped)."""
    out: list[list[Word]] = []
    current: list[Word] = []
    chars: list[str] = []
    start: tuple[int, int] | None = None
    quoted = False
    line, column = first_line, first_column
    i, n = 0, len(text)

    def finish_word():
        nonlocal chars, start, quoted
        if start is not None:
            current.append(Word("".join(chars), start[0], start[1], quoted))
            if len(current) > MAX_WORDS:
                raise DataError(f"{shown}:{start[0]}: command line of more than {MAX_WORDS} words")
        chars, start, quoted = [], None, False

    def finish_command():
        nonlocal current
        finish_word()
        if current:
            out.append(current)
        current = []

    while i < n:
        ch = text[i]
        if ch == "\\" and i + 1 < n and text[i + 1] == "\n":  # continuation
            i += 2
            line, column = line + 1, 1
            continue
        if ch == "\\" and i + 1 < n and text[i + 1] == "\r" and i + 2 < n and text[i + 2] == "\n":
            i += 3
            line, column = line + 1, 1
            continue
        if ch in " \t\r":
            finish_word()
            i += 1
            column += 1
            continue
        if ch == "\n":
            finish_command()
            i += 1
            line, column = line + 1, 1
            continue
        if ch == "#" and start is None:  # a comment runs to the end of the line
            while i < n and text[i] != "\n":
                i += 1
                column += 1
            continue
        if ch in ";&|":  # quoted text is consumed below, so this one is an operator
            finish_command()
            i += 1
            column += 1
            continue
        if start is None:
            start = (line, column)
        if ch == "\\" and i + 1 < n:
            chars.append(text[i + 1])
            quoted = True
            i += 2
            column += 2
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise DataError(f"{shown}:{line}: unterminated single quote")
            chars.append(text[i + 1:end])
            quoted = True
            line, column = _advance(line, column, text[i:end + 1])
            i = end + 1
            continue
        if ch == '"':
            j = i + 1
            part = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n and text[j + 1] in '"\\$`\n':
                    if text[j + 1] != "\n":
                        part.append(text[j + 1])
                    j += 2
                    continue
                part.append(text[j])
                j += 1
            if j >= n:
                raise DataError(f"{shown}:{line}: unterminated double quote")
            chars.append("".join(part))
            quoted = True
            line, column = _advance(line, column, text[i:j + 1])
            i = j + 1
            continue
        chars.append(ch)
        i += 1
        column += 1
    finish_command()
    return out


def _advance(line: int, column: int, consumed: str) -> tuple[int, int]:
    newlines = consumed.count("\n")
    if newlines:
        return line + newlines, len(consumed) - consumed.rfind("\n")
    return line, column + len(consumed)


def is_assignment(word: Word) -> bool:
    """`NAME=value` as a shell assignment (the name unquoted, a valid variable name)."""
    name, eq, _ = word.text.partition("=")
    return bool(eq) and name.isidentifier() and name.isascii()
