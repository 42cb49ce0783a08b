"""The review date: from `--date` or `SOURCE_DATE_EPOCH`, else none, so output stays reproducible.

Reports carry a date only when the caller fixes one; two runs on the same inputs then give
byte-identical output. Waiver expiry still needs "today": it is the review date when given,
else the real UTC date (which never appears in the output).
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping

from srcreview.core.errors import UsageError


def parse_date(text: str, what: str = "--date") -> _dt.date:
    """An ISO calendar date (2026-11-29); UsageError otherwise."""
    try:
        if len(text) != 10:
            raise ValueError
        return _dt.date.fromisoformat(text)
    except (TypeError, ValueError):
        raise UsageError(f"{what}: {str(text)[:40]!r} is not a date like 2026-11-29") from None


def review_date(option: str | None = None, environ: Mapping[str, str] | None = None) -> str | None:
    """The date to print in reports: `--date`, else SOURCE_DATE_EPOCH (UTC), else None."""
    if option is not None:
        return parse_date(option).isoformat()
    environ = os.environ if environ is None else environ
    epoch = environ.get("SOURCE_DATE_EPOCH")
    if epoch is None or epoch == "":
        return None
    if not epoch.isdigit():
        raise UsageError(f"SOURCE_DATE_EPOCH: {epoch[:40]!r} is not a whole number of seconds")
    try:
        moment = _dt.datetime.fromtimestamp(int(epoch), tz=_dt.timezone.utc)
    except (OverflowError, OSError, ValueError):
        raise UsageError(f"SOURCE_DATE_EPOCH: {epoch[:40]!r} is out of range") from None
    return moment.date().isoformat()


def today(date: str | None = None) -> _dt.date:
    """The day waivers are checked against: the review date if fixed, else today in UTC."""
    if date is not None:
        return parse_date(date)
    return _dt.datetime.now(_dt.timezone.utc).date()
