"""JSON written inside a recipe value (a Dockerfile's exec form, `--speculative-config '{…}'`).

`json.loads` raises RecursionError on arrays nested past the interpreter's stack (200,000
`[`), a bare ValueError on an integer of more digits than Python converts, and reads
`NaN`, `Infinity` and `1e999` as floats no JSON output can hold. Here each of them is a
ValueError with a reason, like any other malformed JSON, so a reader turns it into one line.
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite_float(text: str) -> float:
    """json's `parse_float` that refuses what no JSON output holds (`1e999` is inf)."""
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"the number {text[:20]}{'…' if len(text) > 20 else ''} is out of range")
    return number


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number any setting takes")


def loads(text: str) -> Any:
    """`json.loads(text)`, every failure a ValueError (JSONDecodeError where json says where)."""
    try:
        return json.loads(text, parse_float=finite_float, parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("nesting too deep") from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # an integer over Python's digit limit, a non-finite number
        reason = str(exc)
        if "digits" in reason and "limit" in reason.lower():
            reason = "an integer of more digits than Python converts"
        raise ValueError(reason) from None
