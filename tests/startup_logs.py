"""Start-up logs built from a review's evidence plan: the pinned tree's own logger calls (file,
line and format string as srcreview.evidence.plan derived them), in vLLM's record format."""

from __future__ import annotations


def record(call_file: str, line: int, message: str, *, level: str = "INFO", process: str = "",
           time: str = "12-01 23:37:21") -> list[str]:
    """One record; a multi-line message repeats the prefix on every line, as vLLM's formatter does."""
    prefix = (f"({process}) " if process else "") + f"{level} {time} [{call_file}:{line}] "
    return [prefix + part for part in message.split("\n")]


def line_of(plan, knob: str, scope: str, fmt_head: str, phase: str | None = None):
    for row in plan.rows:
        if row.knob == knob and row.scope == scope:
            for ln in row.lines:
                if ln.format and ln.format.startswith(fmt_head) and (phase is None or ln.phase == phase):
                    return ln
    raise LookupError(f"{knob}/{scope}: no line {fmt_head!r}")


def emit(ln, *args, process: str = "", time: str = "12-01 23:37:21") -> list[str]:
    return record(ln.file, ln.line, ln.format % args if args else ln.format.replace("%%", "%"),
                  level=ln.level, process=process, time=time)


def structure(model: str, impl: str) -> str:
    """What the loader's inspection print looks like: a tree of modules, attention layers naming their impl."""
    return (f"{model}(\n  (layers): ModuleList(\n    (0-3): 4 x DecoderLayer(\n      (self_attn): Attention("
            f"head_size=256, num_heads=24, num_kv_heads=4, scale=0.0625, backend={impl})\n    )\n  )\n)")
