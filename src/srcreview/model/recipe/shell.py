"""Shell words with their positions: enough of POSIX shell to read how `vllm serve` is launched.

Quoting ('…', "…" with its backslash escapes, \\x), line continuations, comments, the
command separators (newline ; & && | ||) and here-documents (`<<EOF` … `EOF`: their lines
are input to a command, not commands, unless that command is a shell reading them) are
understood; nothing is expanded or run: `$VAR`, `${VAR:-default}`, `$(…)` and backticks stay
as written in the word's text, and the word also keeps them as `Expansion` parts (unquoted or
double-quoted only: in single quotes `$` is a character), so what the shell decides is never
mistaken for a value (srcreview.model.recipe.shell_values). Each word keeps the line and
column of its first character, so a flag is anchored where the user wrote it, even inside a
continued or quoted command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

from srcreview.core.errors import DataError

MAX_WORDS = 200_000
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACED = re.compile(r"\$\{(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:?[-=+?])(?P<word>.*))?\}\Z", re.S)
_SPECIAL = "0123456789@*#?$!-"
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})  # a here-document given to one of these is run


@dataclass(frozen=True)
class Expansion:
    """What the shell substitutes in a word: `$NAME`, `${NAME<op>word}`, `$(...)`, a backtick
    command, `$1`. `name` is None for a command, an arithmetic or a special parameter."""

    text: str  # as written: ${PORT:-8000}
    name: str | None = None
    op: str = ""  # "", ":-", "-", ":=", "=", ":+", "+", ":?", "?"; "command" for $(...) and backticks
    word: str = ""  # the default / alternative after the operator
    outer: bool = False  # substituted before the shell runs (compose, from the deploying environment)


@dataclass(frozen=True)
class Word:
    text: str
    line: int
    column: int
    quoted: bool = False  # any part was quoted: never an operator, an assignment or a comment
    parts: tuple = ()  # str and Expansion pieces of `text` when it holds an expansion; () when literal

    @property
    def expands(self) -> bool:
        """Whether the shell substitutes something in this word (its value is the shell's)."""
        return any(isinstance(p, Expansion) for p in self.parts)


def commands(text: str, shown: str, first_line: int = 1, first_column: int = 1) -> list[list[Word]]:
    """The simple commands of `text`, each a list of words (separators dropped)."""
    return [words for words, _ in command_list(text, shown, first_line, first_column)]


def command_list(text: str, shown: str, first_line: int = 1, first_column: int = 1) -> list[tuple[list[Word], str]]:
    """The simple commands of `text`, each with the operator before it ("" at the start of a
    line or after `;`, else `&&`, `||`, `|` or `&`): whether it surely runs."""
    out: list[tuple[list[Word], str]] = []
    current: list[Word] = []
    chars: list[str] = []
    parts: list = []  # (text, "bare" | "double" | False) segments of the word: False is literal
    start: tuple[int, int] | None = None
    quoted = False
    operator = ""
    line, column = first_line, first_column
    i, n = 0, len(text)
    delimiter_next: bool | None = None  # after a bare `<<` (True: `<<-`): the next word is the delimiter
    here_docs: list[tuple[str, bool, list[Word]]] = []  # (delimiter, strip tabs, its command) to read at the newline

    def finish_word():
        nonlocal chars, start, quoted, parts, delimiter_next
        if start is not None:
            word = Word("".join(chars), start[0], start[1], quoted, _expansions(parts))
            opened = _here_doc(word, parts)
            if delimiter_next is not None:
                here_docs.append((word.text, delimiter_next, current))
                delimiter_next = None
            elif opened is not None and opened[0]:
                here_docs.append((opened[0], opened[1], current))
            elif opened is not None:
                delimiter_next = opened[1]
            else:
                current.append(word)
            if len(current) > MAX_WORDS:
                raise DataError(f"{shown}:{start[0]}: command line of more than {MAX_WORDS} words")
        chars, start, quoted, parts = [], None, False, []

    def finish_command(op: str = ""):
        nonlocal current, operator
        finish_word()
        if current:
            out.append((current, operator))
            operator = ""
        current = []
        operator = (operator + op) if op else operator

    def read_here_docs(at: int) -> int:
        """Consume the bodies of the line's here-documents from `at` (just past its newline);
        a shell's body is read as its commands. Returns where the script goes on."""
        nonlocal line
        for delimiter, strip_tabs, command in here_docs:
            body_line, body = line, []
            while at < n:
                end = text.find("\n", at)
                end = n if end < 0 else end
                row = text[at:end]
                at, line = end + 1, line + 1
                if (row.lstrip("\t") if strip_tabs else row).rstrip("\r") == delimiter:
                    break
                body.append(row)
            if command and PurePosixPath(command[0].text).name in SHELLS and not command[0].quoted:
                out.extend(command_list("\n".join(body), shown, body_line, 1))
        here_docs.clear()
        return at

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
            if operator not in ("&&", "||", "|"):  # `a &&` + newline: b still depends on a
                operator = ""
            i += 1
            line, column = line + 1, 1
            if here_docs:
                i = read_here_docs(i)
            continue
        if ch == "#" and start is None:  # a comment runs to the end of the line
            while i < n and text[i] != "\n":
                i += 1
                column += 1
            continue
        if ch in ";&|":  # quoted text is consumed below, so this one is an operator
            finish_command(ch)
            if ch == ";":
                operator = ""
            i += 1
            column += 1
            continue
        if start is None:
            start = (line, column)
        if ch in "$`" and i + 1 < n:
            end = _expansion_end(text, i)
            if end > i + 1:  # ${...}, $(...), backticks: one piece, spaces and all
                piece = text[i:end]
                chars.append(piece)
                parts.append((piece, "bare"))
                line, column = _advance(line, column, piece)
                i = end
                continue
        if ch == "\\" and i + 1 < n:
            chars.append(text[i + 1])
            parts.append((text[i + 1], False))
            quoted = True
            i += 2
            column += 2
            continue
        if ch == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise DataError(f"{shown}:{line}: unterminated single quote")
            single = text[i + 1:end]
            chars.append(single)
            parts.append((single, False))
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
            parts.append(("".join(part), "double"))
            quoted = True
            line, column = _advance(line, column, text[i:j + 1])
            i = j + 1
            continue
        chars.append(ch)
        parts.append((ch, "bare"))
        i += 1
        column += 1
    finish_command()
    return out


def _here_doc(word: Word, segments: list) -> tuple[str, bool] | None:
    """A word that opens a here-document (`<<EOF`, `<<-EOF`, `<<'EOF'`, or a bare `<<` whose
    delimiter is the next word): (delimiter or "", whether leading tabs are stripped). The
    `<<` must be unquoted; `<<<` is a here-string, not a document."""
    text = word.text
    if text.startswith("<<<") or [kind for _, kind in segments[:2]] != ["bare", "bare"] \
            or "".join(piece for piece, _ in segments[:2]) != "<<":
        return None
    strip = text.startswith("<<-")
    return text[3 if strip else 2:], strip


def _expansion_end(text: str, i: int) -> int:
    """The end of the `${...}`, `$(...)` or backtick piece starting at `i` (i + 1: none)."""
    opener = text[i:i + 2]
    if text[i] == "`":
        end = text.find("`", i + 1)
        return end + 1 if end > 0 else i + 1
    if opener not in ("${", "$("):
        return i + 1
    close, depth, j = "}" if opener == "${" else ")", 0, i + 1
    while j < len(text):
        ch = text[j]
        if ch == "\\":
            j += 2
            continue
        if ch == "'" and close == ")":
            end = text.find("'", j + 1)
            j = end + 1 if end > 0 else len(text)
            continue
        if ch == opener[1]:
            depth += 1
        elif ch == close:
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return i + 1  # unterminated: read as plain characters


def _expansions(segments: list) -> tuple:
    """The word as literal and Expansion parts, when an expandable segment substitutes something."""
    merged: list[list] = []
    for piece, expandable in segments:  # one piece per run of bare, double-quoted or literal text
        if merged and merged[-1][1] == expandable and expandable != "double":
            merged[-1][0] += piece
        else:
            merged.append([piece, expandable])
    out: list = []
    literal: list[str] = []
    for piece, expandable in merged:
        if not expandable or ("$" not in piece and "`" not in piece):
            literal.append(piece)
            continue
        j = 0
        while j < len(piece):
            found = _expansion_at(piece, j)
            if found is None:
                literal.append(piece[j])
                j += 1
                continue
            expansion, j = found
            if literal:
                out.append("".join(literal))
                literal = []
            out.append(expansion)
    if not any(isinstance(p, Expansion) for p in out):
        return ()
    if literal:
        out.append("".join(literal))
    return tuple(out)


def _expansion_at(piece: str, j: int) -> tuple[Expansion, int] | None:
    if piece[j] == "`":
        end = piece.find("`", j + 1)
        return (Expansion(piece[j:end + 1], op="command"), end + 1) if end > 0 else None
    if piece[j] != "$" or j + 1 >= len(piece):
        return None
    nxt = piece[j + 1]
    if nxt in "({":
        end = _expansion_end(piece, j)
        if end == j + 1:
            return None
        raw = piece[j:end]
        if nxt == "(":
            return Expansion(raw, op="command"), end
        braced = _BRACED.match(raw)
        if braced:
            return Expansion(raw, braced["name"], braced["op"] or "", braced["word"] or ""), end
        return Expansion(raw, op="command"), end  # ${#x}, ${x%y}, ${!x}: the shell computes it
    name = _NAME.match(piece, j + 1)
    if name:
        return Expansion(piece[j:name.end()], name.group(0)), name.end()
    if nxt in _SPECIAL:
        return Expansion(piece[j:j + 2]), j + 2
    return None


def _advance(line: int, column: int, consumed: str) -> tuple[int, int]:
    newlines = consumed.count("\n")
    if newlines:
        return line + newlines, len(consumed) - consumed.rfind("\n")
    return line, column + len(consumed)


def is_assignment(word: Word) -> bool:
    """`NAME=value` as a shell assignment (the name unquoted, a valid variable name)."""
    name, eq, _ = word.text.partition("=")
    return bool(eq) and name.isidentifier() and name.isascii()
