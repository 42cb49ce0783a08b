"""Errors a user can cause or meet, each carrying the exit code the CLI returns.

Library code raises these; only the CLI turns them into one line on stderr and an exit
code, so a user mistake never becomes a traceback and never looks like a gate decision.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_INCOMPLETE = 2
EXIT_USAGE = 64
EXIT_DATA = 65


class SrcreviewError(Exception):
    """Base of every error shown to the user as one line."""

    exit_code = EXIT_INCOMPLETE

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class UsageError(SrcreviewError):
    """The command line is wrong: a bad flag value, a malformed --rev, a missing file."""

    exit_code = EXIT_USAGE


class DataError(SrcreviewError):
    """A recipe, rule, pin or review file is malformed or has invalid values."""

    exit_code = EXIT_DATA


class SourceUnavailable(SrcreviewError):
    """The exact source could not be obtained or verified: the review cannot complete."""

    exit_code = EXIT_INCOMPLETE


class OutputError(SrcreviewError):
    """The output could not be written (a full disk, an I/O error): the run did not complete."""

    exit_code = EXIT_INCOMPLETE
