"""Untrusted text made safe to print: control and bidi characters shown as escapes, not obeyed.

vLLM source lines, names derived from them and hand-written reviews reach the terminal; an
ESC sequence there could retitle the window, clear the screen or write the clipboard, and a
bidi override could make a line read differently from what it is (Trojan Source). Newline and
tab are kept; everything else that acts instead of showing is written as `\\x1b` / `\\u202e`.
"""

from __future__ import annotations

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
