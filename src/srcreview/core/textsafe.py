"""Untrusted text made safe to print: control and bidi characters shown as escapes, not obeyed.

vLLM source lines, names derived from them and hand-written reviews reach the terminal; an
ESC sequence there could retitle the window, clear the screen or write the clipboard, and a
bidi override could make a line read differently from what it is (Trojan Source). Newline and
tab are kept; everything else that acts instead of showing is written as `\\x1b` / `\\u202e`.
`oneline` also shows line breaks as escapes, for values that must stay on their line.

CI logs obey text too: a GitHub Actions runner takes a line whose first non-blank characters
are `::` as a workflow command (`::error ...`, `::stop-commands::`), and `##[` anywhere in a
line as one in the older syntax. `ci_safe` escapes the first colon of such a line (`\\x3a:`)
and the second `#` of `##[` (`#\\u0023[`, which is also a valid JSON escape of the same
character, so JSON output stays valid and decodes unchanged); the CLI passes everything it
writes to stdout through it.
"""

from __future__ import annotations

import re

_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A))
_UNSAFE = (*(c for c in range(0x20) if chr(c) not in "\n\t"), *range(0x7F, 0xA0), *_BIDI,
           *range(0xD800, 0xE000))  # lone surrogates: unprintable, and they crash a UTF-8 stdout
_ESCAPES = {c: f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}" for c in _UNSAFE}


def printable(text: str) -> str:
    """`text` with C0/C1 controls (but \\n, \\t), DEL, bidi controls and surrogates as visible escapes."""
    return str(text).translate(_ESCAPES)


_JSON_ESCAPES = {c: f"\\u{c:04x}" for c in _UNSAFE if c >= 0x20}


def dumps(data, **options) -> str:
    """JSON text that keeps non-ASCII letters readable but escapes (as `\\uXXXX`, still valid
    JSON with the same decoded values) the DEL, C1, bidi and surrogate characters json.dumps
    leaves raw, so JSON printed to a terminal cannot act on it either."""
    import json

    return json.dumps(data, ensure_ascii=False, **options).translate(_JSON_ESCAPES)


_ONELINE = {**_ESCAPES, 0x0A: "\\n", 0x2028: "\\u2028", 0x2029: "\\u2029"}


def oneline(text: str) -> str:
    """`printable(text)` with line breaks shown as `\\n` (and `\\x0d`, `\\u2028`): a value stays on its line."""
    return str(text).translate(_ONELINE)


# a line start (as the runner splits lines: \n, \r) and the blanks it trims before a command
_COMMAND_LINE = re.compile(r"(^|[\n\r])([^\S\n\r]*):(?=:)")


def ci_safe(text: str) -> str:
    """`text` with no line that a CI runner reads as a workflow command (see the module doc)."""
    return _COMMAND_LINE.sub(r"\1\2\\x3a", text).replace("##[", "#\\u0023[")


class CiSafeStream:
    """A text stream that writes whole lines through `ci_safe` (the CLI's stdout).

    A partial line is held until its end arrives (or `finish`), so a command can never be
    split across two writes to slip past the check.
    """

    def __init__(self, stream):
        self.wrapped = stream
        self._pending = ""

    def write(self, text: str) -> int:
        data = self._pending + text
        cut = max(data.rfind("\n"), data.rfind("\r")) + 1
        self._pending = data[cut:]
        if cut:
            self.wrapped.write(ci_safe(data[:cut]))
        return len(text)

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def write_verbatim(self, text: str) -> int:
        """Write `text` past the guard, after what is pending: for output whose workflow commands
        its writer built and escaped itself (srcreview.report.github), never for other text."""
        self.finish()
        return self.wrapped.write(text)

    def finish(self) -> None:
        """Write what is left of the last line (flushing stays with the wrapped stream)."""
        if self._pending:
            pending, self._pending = self._pending, ""
            self.wrapped.write(ci_safe(pending))

    def __getattr__(self, name):  # isatty, fileno, encoding, flush, ...: the wrapped stream's
        return getattr(self.wrapped, name)
