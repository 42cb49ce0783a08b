"""Resolving a recipe's backend name (`TRITON_ATTN`) to its class through the backend Enum."""

from __future__ import annotations

import re

from srcreview.checks import CheckContext


def backend_class(ctx: CheckContext, enum: str, member: str):
    """(ClassInfo | None, enum anchor | None, missing symbols, reason)."""
    index = ctx.index
    members = index.enum_members(enum)
    if members is None:
        return None, None, (enum,), ""
    wanted = str(member).upper()
    value = next((v for n, v in members if n == wanted), None)
    if value is None:
        return None, None, (), f"{member} is not a member of {enum}"
    if not isinstance(value, str):
        return None, None, (), f"{enum}.{wanted} has no literal class path"
    info = index.class_info(value)
    enum_info = index.class_info(enum)
    anchor = None
    if enum_info is not None:
        line = _member_line(ctx, enum_info, wanted)
        if line:
            anchor = ctx.anchor(enum_info.symbol.path, line[0], line[1], wanted,
                                f"{enum}.{wanted} names {value.rsplit('.', 1)[-1]}")
    if info is None:
        return None, anchor, (value,), ""
    return info, anchor, (), ""


def _member_line(ctx, enum_info, name):
    """Lines of `NAME = value` in the Enum body (a value may span lines in parentheses)."""
    field = enum_info.field(name)
    if field is not None:
        return field.start_line, field.end_line
    text = ctx.tree.read_text(enum_info.symbol.path).splitlines()
    last = min(enum_info.symbol.end_line, len(text))
    for n in range(enum_info.symbol.start_line, last + 1):
        if re.match(rf"\s*{re.escape(name)}\s*=", text[n - 1]):
            end, depth = n, text[n - 1].count("(") - text[n - 1].count(")")
            while depth > 0 and end < last:
                end += 1
                depth += text[end - 1].count("(") - text[end - 1].count(")")
            return n, end
    return None
