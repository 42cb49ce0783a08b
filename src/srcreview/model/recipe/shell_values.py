"""Values the shell decides: `$PORT`, `${PORT:-8000}`, `$(cmd)`, `<placeholder>`.

srcreview reads a launch script as written; it does not run it. A word the shell substitutes
is resolved only from what the recipe itself makes certain (an assignment in the script that
runs on every path before the command, a compose service's `environment:` or `env_file`);
anything else is an `UnknownValue`: its own type, never equal to a value, so no check can
compare it with a Literal member or a bound and call the result confirmed. The engine turns
it into the interpreter's unknown and keeps the knob `undecided`, saying why.
"""

from __future__ import annotations

import re
from typing import Any

from srcreview.core.records import Record
from srcreview.core.tags import Tag
from srcreview.model.recipe.shell import Expansion, Word

_PLACEHOLDER = re.compile(r"<[A-Za-z][A-Za-z0-9 _./:-]{0,60}>")
SHELL_TAG: Tag = "shell-value"


class UnknownValue(Record):
    """A value the shell (or whoever fills in the recipe) decides: `text` as written, why it
    is unknown, and the default the text gives when the variable is unset (`${X:-8000}`)."""

    text: str
    reason: str
    default: str | None = None
    split: bool = False  # unquoted (or `...`): the shell may make any number of words of it, flags included

    def __repr__(self) -> str:  # how messages and traces show it: as the user wrote it
        return self.text

    __str__ = __repr__


def is_unknown(value: Any) -> bool:
    """Whether `value` is, or holds (in a list or JSON object), a value the shell decides."""
    if isinstance(value, UnknownValue):
        return True
    if isinstance(value, (list, tuple)):
        return any(is_unknown(v) for v in value)
    if isinstance(value, dict):
        return any(is_unknown(v) for v in value.values())
    return False


def unknown_in(value: Any) -> UnknownValue | None:
    """The first value the shell decides in `value`, or None."""
    if isinstance(value, UnknownValue):
        return value
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    for item in items:
        found = unknown_in(item)
        if found is not None:
            return found
    return None


def placeholder(text: str) -> UnknownValue | None:
    """`<model>`, `<port>`, `...`: a word the recipe's author leaves to the reader."""
    if _PLACEHOLDER.fullmatch(text):
        return UnknownValue(text=text, reason=f"{text} is a placeholder the recipe leaves to be filled in")
    if text in ("...", "…"):
        return UnknownValue(text=text, reason=f"{text} stands for words the recipe leaves out", split=True)
    return None


def holds_placeholder(text: str) -> UnknownValue | None:
    """A value with a `<placeholder>` inside (`{"model": <eagle3_model_name>}`)."""
    found = _PLACEHOLDER.search(text)
    if found:
        return UnknownValue(text=text, reason=f"{found.group(0)} is a placeholder the recipe leaves to be filled in")
    return None


MAX_VALUE_CHARS = 1_000_000  # a recipe file's own bound: only repeated expansion (A="$A$A") goes past it


def resolve(word: Word, variables: dict[str, Any], where: str = "the script") -> str | UnknownValue:
    """The word's value: its text when nothing is substituted, the substitution when every
    variable it reads is certain (`variables`: name -> str or UnknownValue; a name absent was
    not set by the recipe), else an UnknownValue saying what the shell decides."""
    if not word.expands:
        found = placeholder(word.text) if not word.quoted else None
        return found if found is not None else word.text
    out: list[str] = []
    for part in word.parts:
        if not isinstance(part, Expansion):
            out.append(part)
            continue
        value = _expand(part, variables, where)
        if isinstance(value, UnknownValue):
            default = None
            if value.default is not None and len(word.parts) == 1:
                default = value.default
            return UnknownValue(text=word.text, reason=value.reason, default=default,
                                split=not word.quoted and not part.outer)
        out.append(value)
        if sum(map(len, out)) > MAX_VALUE_CHARS:  # 60 lines of A1="$A0$A0" would be 2**60 characters
            return UnknownValue(text=word.text, reason=f"{word.text[:40]} expands to more than {MAX_VALUE_CHARS} "
                                "characters (a value doubled by its own expansions): not followed")
    return "".join(out)


def _expand(part: Expansion, variables: dict[str, Any], where: str) -> str | UnknownValue:
    if part.op == "command":
        return UnknownValue(text=part.text, reason=f"the shell decides {part.text}: it runs a command")
    if part.outer:
        default = _default_of(part)
        note = f" (it is {default!r} when the variable is unset)" if default is not None else ""
        return UnknownValue(text=part.text, reason=f"compose substitutes {part.text} from the deploying shell's "
                            f"environment or .env{note}", default=default)
    if part.name is None:
        return UnknownValue(text=part.text, reason=f"the shell decides {part.text}: a parameter of the script's caller")
    value = variables.get(part.name)
    if isinstance(value, UnknownValue):
        return UnknownValue(text=part.text, reason=value.reason if value.text == part.name else
                            f"the shell decides {part.text}: {part.name} = {value.text[:80]} ({_short(value.reason)})",
                            default=value.default if part.op in ("", "-", "?", ":?") else _default_of(part))
    if value is None:
        default = _default_of(part)
        note = f" (it is {default!r} when the variable is unset)" if default is not None else ""
        return UnknownValue(text=part.text, reason=f"the shell decides {part.text}: {part.name} is not set in "
                            f"{where}{note}", default=default)
    op, word = part.op, part.word
    if op in (":-", ":="):
        return value or word
    if op in (":+",):
        return word if value else ""
    if op in ("+",):
        return word
    return value  # "", "-", "=", "?", ":?" with the variable set


def _short(reason: str) -> str:
    """A reason quoted inside another's, cut: a chain of 20,000 `A2=$A1` lines would otherwise nest
    every reason in the next (8 MB of text for one value)."""
    return reason if len(reason) <= 240 else reason[:240] + "..."


def _default_of(part: Expansion) -> str | None:
    return part.word if part.op in (":-", "-", ":=", "=") and "$" not in part.word else None


class ScriptVariables:
    """The shell variables a script sets, in order, and whether each is certain where it is read.

    Certain: a command made only of assignments (or `export`/`readonly`/`declare`/`local` of
    them) that runs on every path: at the top level (not inside if/case/for/while/a function),
    not after `&&`, `||` or `|`. A name set anywhere else, read by `read`/`for`, or possibly set
    by a sourced file, is the shell's to decide from then on.
    """

    _OPENERS = {"if", "case", "for", "while", "until", "select", "function", "{", "("}
    _CLOSERS = {"fi", "esac", "done", "}", ")"}
    _DECLARERS = {"export", "readonly", "declare", "local", "typeset"}
    _KEYWORDS = {"then", "else", "elif", "do", "!", "time"}

    def __init__(self, where: str = "the script"):
        self.values: dict[str, Any] = {}
        self.depth = 0
        self.sourced: str | None = None
        self.where = where

    def snapshot(self) -> dict[str, Any]:
        """The variables as a command at this point sees them."""
        if self.sourced is None:
            return dict(self.values)
        return _Sourced(self.values, self.sourced)

    def see(self, words: list[Word], operator: str) -> None:
        """Take in one command of the script (in order)."""
        first = words[0].text if words else ""
        if not words[0].quoted and (first in self._CLOSERS or first.startswith(("}", ")"))):
            self.depth = max(0, self.depth - 1)
        opens = not words[0].quoted and (first in self._OPENERS or first.endswith("()")
                                         or (len(words) > 1 and words[1].text.startswith("()")))
        certain = self.depth == 0 and operator in ("", "&") and not opens
        body = words
        if first in self._KEYWORDS:
            body, certain = words[1:], False
        if body and body[0].text in self._DECLARERS and not body[0].quoted:
            body = body[1:]
        from srcreview.model.recipe.shell import is_assignment

        assignments = body and all(is_assignment(w) for w in body)
        for word in (body if assignments else ()):
            name, _, _ = word.text.partition("=")
            if certain:
                value_word = _value_word(word)
                self.values[name] = resolve(value_word, self.snapshot(), self.where)
            else:
                self.values[name] = UnknownValue(text=name, reason=f"the shell decides ${name}: {self.where} sets "
                                                 f"it only on some paths (line {word.line})")
        if not assignments and body:
            verb = body[0].text
            if verb in ("read", "for", "getopts", "mapfile", "readarray"):
                for word in body[1:]:
                    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word.text):
                        self.values[word.text] = UnknownValue(text=word.text, reason=f"the shell decides "
                                                              f"${word.text}: `{verb}` sets it (line {word.line})")
                        if verb == "for":
                            break
            elif verb in ("source", ".") and len(body) > 1:
                self.sourced = f"{body[1].text} (line {body[1].line})"
                self.values = {k: UnknownValue(text=k, reason=f"the shell decides ${k}: the sourced file "
                                               f"{self.sourced} may set it") for k in self.values}
        if opens:
            self.depth += 1
        for word in words[1:]:  # `if x; then` on one line: `then` comes as its own command
            if word.text in ("fi", "done", "esac") and not word.quoted:
                self.depth = max(0, self.depth - 1)


def _value_word(word: Word) -> Word:
    """The `value` of an assignment word `NAME=value`, with its parts."""
    return tail(word, len(word.text.partition("=")[0]) + 1)


def tail(word: Word, cut: int) -> Word:
    """The word from character `cut` of its text on (after `NAME=` or `--flag=`), with its parts."""
    parts: list = []
    seen = 0
    for part in word.parts:
        text = part.text if isinstance(part, Expansion) else part
        if seen >= cut:
            parts.append(part)
        elif seen + len(text) > cut and not isinstance(part, Expansion):
            parts.append(text[cut - seen:])
        seen += len(text)
    return Word(word.text[cut:], word.line, word.column + cut, word.quoted, tuple(parts))


class _Sourced(dict):
    """Variables after `source FILE`: those set afterwards are certain, others the file may set."""

    def __init__(self, values: dict, sourced: str):
        super().__init__(values)
        self._sourced = sourced

    def get(self, name, default=None):
        if name in self:
            return self[name]
        return UnknownValue(text=name, reason=f"the shell decides ${name}: the sourced file {self._sourced} may set it")
