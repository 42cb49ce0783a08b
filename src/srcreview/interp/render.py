"""Render a Trace as a terminal tree, Graphviz DOT or JSON (deterministic: sorted, no absolute paths)."""

from __future__ import annotations

import dataclasses
import json

from srcreview.core.errors import UsageError
from srcreview.core.textsafe import printable

FORMATS = ("text", "dot", "json")


def render_trace(trace, fmt: str = "text") -> str:
    if fmt == "text":
        return _text(trace)
    if fmt == "dot":
        return _dot(trace)
    if fmt == "json":
        return json.dumps(trace_to_dict(trace), indent=2, sort_keys=True) + "\n"
    raise UsageError(f"--format: {fmt!r} is not one of {', '.join(FORMATS)}")


def trace_to_dict(trace) -> dict:
    def convert(value):
        if dataclasses.is_dataclass(value):
            return {f.name: convert(getattr(value, f.name)) for f in dataclasses.fields(value)}
        if hasattr(value, "model_dump"):
            return value.model_dump()
        if isinstance(value, (list, tuple)):
            return [convert(v) for v in value]
        if isinstance(value, dict):
            return {str(k): convert(v) for k, v in value.items()}
        if isinstance(value, (str, int, float, bool)) or value is None:
            return value
        return repr(value)

    data = convert(trace)
    if hasattr(trace, "bindings"):
        data["bindings"] = {k: convert(v) for k, v in trace.bindings}
    return data


def _short(qualname: str) -> str:
    parts = qualname.split(".")
    # keep Class.method (or module.function) readable; the anchor carries the full location
    for i, part in enumerate(parts):
        if part[:1].isupper():
            return ".".join(parts[i:])
    return ".".join(parts[-2:])


def _text(trace) -> str:
    lines = [f"entry: {trace.entry}"]
    if trace.sink:
        reached = "reached" if trace.found_sink else "not reached"
        lines.append(f"sink:  {trace.sink} ({reached} within {trace.depth} call levels)")
    if trace.bindings:
        lines.append("bindings: " + ", ".join(f"{k}={v!r}" for k, v in trace.bindings))
    lines.append("")
    printed: set[tuple] = set()
    for path in trace.paths:
        for depth, hop in enumerate(path):
            prefix = tuple((h.symbol, h.call_line) for h in path[: depth + 1])
            if prefix in printed:
                continue
            printed.add(prefix)
            indent = "  " * depth
            arrow = "" if depth == 0 else "└─ "
            where = f"{hop.path}:{hop.start_line}-{hop.end_line}"
            call = f" (called at line {hop.call_line}, {hop.via})" if hop.call_line else ""
            lines.append(f"{indent}{arrow}{_short(hop.symbol)}  {where}{call}")
            url = hop.call_anchor.url if hop.call_anchor else hop.anchor.url
            lines.append(f"{indent}{'   ' if depth else ''}  {url}")
    for title, items in (("assumptions (undecided branches, both sides followed)", trace.assumptions),
                         ("unresolved calls", trace.unresolved),
                         ("dynamic access", trace.dynamic)):
        lines.append("")
        lines.append(f"{title}: {len(items)}")
        for item in items:
            reason = f"  [{item.reason}]" if getattr(item, "reason", "") else ""
            kind = f"{item.kind}: " if hasattr(item, "kind") else ""
            lines.append(f"  - {kind}{item.text}{reason}")
            lines.append(f"    {item.anchor.url}")
    lines.append("")
    lines.append(f"functions inspected: {len(trace.functions)}")
    for fn in trace.functions:
        lines.append(f"  - {fn}")
    return printable("\n".join(lines)) + "\n"  # names and call text come from the source


def _dot_id(text: str) -> str:
    return '"' + printable(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _dot(trace) -> str:
    lines = ["digraph trace {", "  rankdir=LR;", "  node [shape=box, fontname=monospace];"]
    nodes: dict[str, str] = {}
    edges = set()
    for path in trace.paths:
        previous = None
        for hop in path:
            nodes[hop.symbol] = hop.anchor.url
            if previous is not None:
                edges.add((previous.symbol, hop.symbol, hop.call_line, hop.via))
            previous = hop
    for symbol in sorted(nodes):
        lines.append(f"  {_dot_id(symbol)} [label={_dot_id(_short(symbol))}, URL={_dot_id(nodes[symbol])}];")
    for caller, callee, line, via in sorted(edges):
        lines.append(f"  {_dot_id(caller)} -> {_dot_id(callee)} [label={_dot_id(f'L{line} {via}')}];")
    for i, site in enumerate(trace.unresolved):
        node = f"unresolved{i}"
        lines.append(f"  {node} [label={_dot_id(site.text[:60])}, shape=note, style=dashed];")
        lines.append(f"  {_dot_id(site.function)} -> {node} [style=dashed];")
    lines.append("}")
    return "\n".join(lines) + "\n"
