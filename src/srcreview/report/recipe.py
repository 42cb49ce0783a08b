"""`srcreview recipe show`: a recipe as srcreview understood it, each part with its line (pure)."""

from __future__ import annotations

import json

from srcreview.core.textsafe import dumps, printable


def render_text(recipe, revision_label: str | None = None) -> str:
    lines = [f"{recipe.path} ({recipe.format})", f"  name: {recipe.name}"]
    if recipe.info.model:
        lines.append(f"  model: {recipe.info.model}")
    runtime = recipe.runtime
    pin = runtime.revision or runtime.version
    engine = f"  engine: {runtime.engine}" + (f" {pin}" if pin else " (no pinned release)")
    if runtime.image:
        engine += f", image {runtime.image}"
    lines.append(engine + (f"  (line {recipe.pin_line})" if recipe.pin_line else ""))
    hardware = recipe.hardware
    if hardware.gpu or hardware.compute_capability:
        lines.append(f"  hardware: {hardware.gpu or 'GPU not named'}"
                     + (f", compute capability {hardware.compute_capability}" if hardware.compute_capability else ""))
    width = max([len(_where(s.line, s.column)) for s in recipe.settings] + [len(str(e.line)) for e in recipe.env]
                + [len(str(f.line)) for f in recipe.flags] + [4])
    if recipe.settings:
        lines.append("  settings" + (f" (flags as vLLM {revision_label} defines them)" if revision_label else "") + ":")
        for s in recipe.settings:
            written = f"  ({s.written_as})" if s.written_as != s.key else ""
            lines.append(f"    {_where(s.line, s.column):>{width}}  {s.key} = {_value(s.value)}{written}")
    if recipe.flags:
        lines.append("  flags, as written (the revision's EngineArgs maps them to settings; give --rev):")
        for f in recipe.flags:
            words = [str(f.value)] if f.value is not None else [str(w) for w in f.following]
            lines.append(f"    {_where(f.line, f.column):>{width}}  {f.flag} {' '.join(words)}".rstrip())
    if recipe.env:
        lines.append("  env:")
        for e in recipe.env:
            lines.append(f"    {e.line:>{width}}  {e.name} = {_value(e.value)}")
    if recipe.server_options:
        lines.append("  server options (not engine settings; not reviewed):")
        for o in recipe.server_options:
            lines.append(f"    {o.line:>{width}}  {o.flag} {_value(o.value)}")
    if recipe.files:
        lines.append("  files it names, read: " + ", ".join(recipe.files))
    for title, items in (("open (not read as settings)", recipe.open), ("the parser drops", recipe.notes)):
        if items:
            lines.append(f"  {title}:")
            lines.extend(f"    {item.line:>{width}}  {item.what}: {item.reason}" for item in items)
    return "".join(_safe(line) + "\n" for line in lines)


def render_json(recipe) -> str:
    return dumps(recipe.model_dump(mode="json"), indent=2) + "\n"


def _where(line: int, column: int | None) -> str:
    return f"{line}:{column}" if column else str(line)


def _value(value) -> str:
    from srcreview.model.recipe.shell_values import is_unknown

    if is_unknown(value):  # as written, and said: the shell decides it
        return f"{value if not isinstance(value, (list, dict)) else value!r}  (the shell decides it)"
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)


def _safe(line: str) -> str:
    """Printable, on one line (newlines inside values shown escaped)."""
    return printable(line.replace("\r", "\\r").replace("\n", "\\n"))
