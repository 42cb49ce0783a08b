"""The command line: parse arguments, call the library, render, return an exit code.

Each subcommand lives in `srcreview.cli.commands.<name>` as `add_parser(subparsers)` and
`run(args) -> int`. Errors the user can cause arrive here as SrcreviewError and leave as
one line on stderr with their exit code; nothing else in the package exits or prints.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from srcreview import __version__
from srcreview.core.errors import (
    EXIT_INCOMPLETE,
    EXIT_USAGE,
    OutputError,
    SrcreviewError,
)

COMMANDS = ("check", "recipe", "fetch", "pins", "show", "graph", "rules", "schema", "audit", "explain", "verify",
            "diff", "bisect", "cache")

DESCRIPTION = """\
Review a vLLM serving recipe against the exact pinned vLLM source, without running it.

Does each setting of the recipe (attention backend, KV-cache dtype, speculative decoding and
its nested settings) take effect at that revision, on the code path the recipe selects?
Findings are classified confirmed / refuted / plausible, each with line-anchored GitHub URLs.
"""

EPILOG = """\
examples:
  srcreview check examples/thinkingcap-awq-vllm029-5090-16k-mtp3-nested-triton.toml --rev 0.29.0
  srcreview fetch --rev 98dff2a
  srcreview show --rev 0.29.0 vllm/v1/worker/gpu/spec_decode/eagle/utils.py:36-49

exit codes: 0 ok / gate passed, 1 gate failed, 2 review incomplete (source unavailable,
            or the output could not be written), 64 usage error, 65 invalid recipe or rule data
"""


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors with exit code 64 (EX_USAGE), not 2, and takes no
    abbreviated option (`--form` for `--format`): a typo is an error, never a guess."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D401 - argparse API
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the command `only` (what a run of that command needs:
    the other commands' modules are not imported)."""
    parser = _Parser(prog="srcreview", description=DESCRIPTION, epilog=EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"srcreview {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in COMMANDS if only is None else (only,):
        module = _command(name)
        if module is not None:
            module.add_parser(sub)
    return parser


def _named_command(argv: list[str]) -> str | None:
    """The command `argv` runs when it starts with one (else None: the whole parser is built, for
    help, --version and the errors that list the commands)."""
    return argv[0] if argv and argv[0] in COMMANDS else None


def _command(name: str):
    try:
        return importlib.import_module(f"srcreview.cli.commands.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"srcreview.cli.commands.{name}":
            return None
        raise


class _Output:
    """stdout for a command: a write or flush that fails for lack of space or an I/O error
    (`> /dev/full`) raises OutputError, so it ends as one line and exit 2, never a traceback.
    A reader that went away (`| head`, `| true`) is no error and no decision: the rest of the
    output is dropped and the command runs on, so its exit code stays the gate's (a failed
    gate is 1 whoever reads it). A character the stream's encoding cannot hold
    (`PYTHONIOENCODING=ascii`) is written as a JSON escape (`\\u2500`), valid in every format."""

    def __init__(self, stream):
        self._stream = stream
        self.reader_gone = False
        _escape_unencodable(stream)

    def _guarded(self, action, *args):
        if self.reader_gone:
            return len(args[0]) if args else None
        try:
            return action(*args)
        except BrokenPipeError:
            self.reader_gone = True
            _silence_stdout()
            return len(args[0]) if args else None
        except OSError as exc:
            raise OutputError(f"cannot write the output: {exc.strerror or exc}") from None

    def write(self, text):
        return self._guarded(self._stream.write, text)

    def flush(self):
        return self._guarded(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _json_escape(exc: UnicodeError):
    """A codec error handler: each character the encoding lacks as `\\uXXXX` (a surrogate pair
    above U+FFFF), which reads the same in text and keeps JSON valid."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    out = []
    for char in exc.object[exc.start:exc.end]:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out), exc.end


def _escape_unencodable(stream) -> None:
    import codecs

    encoding = (getattr(stream, "encoding", None) or "").lower().replace("_", "-")
    if encoding.startswith("utf") or not hasattr(stream, "reconfigure"):
        return
    codecs.register_error("srcreview-json-escape", _json_escape)
    try:
        stream.reconfigure(errors="srcreview-json-escape")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - a stream that cannot change
        pass


def _closed_standard_streams() -> bool:
    """Whether stdout was closed (`>&-`): fds 0-2 are then given the null device, so that no
    file srcreview opens takes fd 1 and no git child writes into it; true when stdout was."""
    import os

    closed = False
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed = closed or fd == 1
            try:
                null = os.open(os.devnull, os.O_RDWR)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
            except OSError:  # pragma: no cover
                pass
    if sys.stderr is None:  # `2>&-`: errors have nowhere to go, but never onto stdout (print's fallback)
        import io

        sys.stderr = io.TextIOWrapper(open(os.devnull, "wb"), errors="replace")  # noqa: SIM115 - for the run
    return closed or sys.stdout is None


def _silence_stdout() -> None:
    """After a failed write the buffer still holds output: point stdout at the null device so
    the interpreter's last flush neither fails again nor changes the exit code."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture): nothing to flush
        pass


class _Diagnostics:
    """stderr for a command: a line it cannot take (`2>/dev/full`) is lost, never the run or
    its exit code. Progress and notes are written in the middle of a review, so a failed write
    must not turn its decision into an internal error (exit 2); after the first one, stderr is
    /dev/null, so the interpreter's last flush has nothing left to fail on."""

    def __init__(self, stream):
        self._stream = stream

    def _lossy(self, action, *args):
        try:
            return action(*args)
        except (OSError, ValueError):
            _discard_stderr(self._stream)
            return len(args[0]) if args else None

    def write(self, text):
        return self._lossy(self._stream.write, text)

    def flush(self):
        return self._lossy(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _discard_stderr(stream) -> None:
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # not a real file (a test's capture)
        pass


def _say(line: str) -> None:
    """`line` on stderr (lost, with the exit code kept, when stderr cannot take it)."""
    try:
        print(line, file=sys.stderr)
        sys.stderr.flush()
    except (OSError, ValueError):  # outside main's guard
        _discard_stderr(sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run one command; everything it writes to stdout passes through `ci_safe` (no line a CI
    runner would take for a workflow command), and its error is one line on stderr."""
    from srcreview.core.textsafe import CiSafeStream

    if _closed_standard_streams():
        if sys.stderr is not None:
            print("srcreview: error: stdout is closed: nothing can be written "
                  "(redirect it to /dev/null to discard the output)", file=sys.stderr)
        return EXIT_INCOMPLETE
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout = guard = CiSafeStream(_Output(stdout))
    sys.stderr = _Diagnostics(stderr)
    try:
        parser = build_parser(_named_command(sys.argv[1:] if argv is None else list(argv)))
        try:
            args = parser.parse_args(argv)
        except SystemExit:  # --help, --version (or a usage error): their text must be written too
            guard.finish()
            sys.stdout.flush()
            raise
        if not getattr(args, "command", None):
            parser.print_help(sys.stderr)
            return EXIT_USAGE
        code = args.run(args)
        guard.finish()
        sys.stdout.flush()  # a full disk shows here, not at the interpreter's exit
        return code
    except SrcreviewError as exc:
        from srcreview.core.textsafe import ci_safe, oneline

        if isinstance(exc, OutputError):
            _silence_stdout()
        _say(ci_safe(f"srcreview: error: {oneline(exc.message)}"))
        return exc.exit_code
    except KeyboardInterrupt:
        _say("srcreview: interrupted")
        return 130
    except BrokenPipeError:  # stderr's reader went away (stdout's never raises this): no decision was made
        return EXIT_INCOMPLETE
    except Exception:  # a crash is a review that did not complete, never a gate decision (exit 1)
        import traceback

        try:
            traceback.print_exc()
        except OSError:
            pass
        _say("srcreview: internal error: the review could not complete (exit 2)")
        return EXIT_INCOMPLETE
    finally:
        sys.stdout, sys.stderr = stdout, stderr
        try:
            guard.finish()  # what is left of a line written before an error
        except (OSError, ValueError, OutputError):  # the reader went away, stdout is closed or full
            pass
