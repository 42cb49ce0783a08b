"""A start-up log read as vLLM writes it, in bounded time and memory.

vLLM's records are `LEVEL MM-DD HH:MM:SS [file.py:line] message` (vllm/logger.py), a process
other than the API server prefixing each line with `(NAME pid=N) `; colour codes are dropped.
The file is streamed: at most MAX_BYTES, MAX_LINES lines of at most MAX_LINE_BYTES each, and a
NUL byte means it is not a text log; each limit is a one-line DataError, never a partial answer.
Lines without a record prefix are kept as text (tracebacks, progress bars, other programs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from srcreview.core.errors import DataError

MAX_BYTES = 256 * 1024 * 1024
MAX_LINES = 2_000_000
MAX_LINE_BYTES = 64 * 1024

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PROCESS = re.compile(r"\((?P<name>[A-Za-z][A-Za-z0-9_]{0,63}) pid=(?P<pid>\d{1,10})\) ")
_RECORD = re.compile(r"(?P<level>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<time>\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?) "
                     r"\[(?P<file>[A-Za-z0-9_./-]{1,300}\.py):(?P<line>\d{1,7})\] (?P<message>.*)", re.S)


@dataclass(frozen=True)
class LogLine:
    number: int  # 1-based line of the log file
    process: str  # "NAME pid=N", or "" for the process that prints no prefix (the API server)
    text: str  # the line without process prefix and colour codes
    level: str | None = None  # set when the line is a record's prefix line (or a continuation of one)
    time: str = ""
    file: str = ""
    line: int = 0
    message: str = ""

    @property
    def prefixed(self) -> bool:
        return self.level is not None


def _parse(number: int, raw: str) -> LogLine:
    text = _ANSI.sub("", raw).rstrip("\r\n").rstrip("\r")
    process = ""
    found = _PROCESS.match(text)
    if found:
        process = f"{found['name']} pid={found['pid']}"
        text = text[found.end():]
    record = _RECORD.match(text)
    if record is None:
        return LogLine(number, process, text)
    return LogLine(number, process, text, record["level"], record["time"], record["file"], int(record["line"]),
                   record["message"])


def read_log(path: Path, shown: str | None = None) -> list[LogLine]:
    """Every line of the log, parsed; DataError (exit 65) naming the file and the limit it broke."""
    name = shown or path.name
    lines: list[LogLine] = []
    total = 0
    try:
        with path.open("rb") as stream:
            while True:
                raw = stream.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    break
                total += len(raw)
                if total > MAX_BYTES:
                    raise DataError(f"{name}: longer than {MAX_BYTES // (1024 * 1024)} MiB; a start-up log is "
                                    "shorter (cut it after the engine is up)")
                if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
                    raise DataError(f"{name}:{len(lines) + 1}: a line longer than {MAX_LINE_BYTES} bytes; "
                                    "not a vLLM log")
                if b"\0" in raw:
                    raise DataError(f"{name}:{len(lines) + 1}: binary data (a NUL byte); not a text log")
                if len(lines) >= MAX_LINES:
                    raise DataError(f"{name}: more than {MAX_LINES} lines; a start-up log is shorter")
                lines.append(_parse(len(lines) + 1, raw.decode("utf-8", errors="replace")))
    except OSError as exc:
        raise DataError(f"{name}: cannot be read ({exc.strerror or exc})") from None
    if not any(line.prefixed for line in lines):
        raise DataError(f"{name}: no line in vLLM's log format (LEVEL MM-DD HH:MM:SS [file.py:line] message)")
    return lines
