"""Where the shipped data (rules/, pins/) lives: inside the wheel, or beside src/ in a checkout."""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parents[1]


def data_dir(name: str) -> Path:
    """The directory of shipped data `name` ("rules" or "pins")."""
    bundled = _PACKAGE / "_data" / name
    if bundled.is_dir():
        return bundled
    checkout = _PACKAGE.parent.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"srcreview data directory {name!r} is missing from this installation")
