"""Message templates: `{name}` placeholders filled from a review's values (rules, reports)."""

from __future__ import annotations

import re
from typing import Any

TEMPLATE_NAME = re.compile(r"\{([A-Za-z0-9_.\-]+)\}")


def fill(template: str, values: dict[str, Any]) -> str:
    """Fill `{name}` placeholders (dotted names allowed); an unknown name reads as `unset`."""

    def sub(match: re.Match) -> str:
        value = values.get(match.group(1))
        if value is None:
            return "unset"
        if isinstance(value, (list, tuple)):
            return ", ".join(str(v) for v in value) or "none"
        return str(value)

    return TEMPLATE_NAME.sub(sub, template)
