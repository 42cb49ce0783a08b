"""`srcreview verify`'s outputs: text, concise (one line per knob), JSON, SARIF (results on the
log's lines) and Markdown. One concept: the renderings of one Verification, pure functions."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from srcreview.core.textsafe import dumps

if TYPE_CHECKING:  # the parser lists the formats without loading the records (tests/store/test_warm_open.py)
    from srcreview.evidence.verify import RowVerdict, Verification

_WORD = {"consistent": "consistent", "contradicted": "CONTRADICTED", "not-shown": "not shown",
         "unprovable": "no log can prove it", "open": "shown (no claim)"}
_LEVEL = {"contradicted": "error", "not-shown": "warning"}
_DECISION = {0: "consistent", 1: "contradicted", 2: "insufficient evidence", 65: "refused"}


def _row_name(row: RowVerdict) -> str:
    return row.knob if row.scope == "engine" else f"{row.knob} ({row.scope})"


def _refused(v: Verification) -> list[str]:
    lines = [f"{v.log}: refused: not a log of {v.revision[:12]} ({v.matched} of {v.records} records are that "
             "tree's logger calls)"]
    lines += [f"  log line {m.line}: [{m.file}:{m.file_line}] {m.message[:100]} -- {m.expected}"
              for m in v.mismatches[:8]]
    return lines


def render_text(v: Verification) -> str:
    if not v.identified:
        return "\n".join(_refused(v)) + "\n"
    out = [f"{v.log}: start-up log of {v.recipe} at {v.revision[:12]}",
           f"identified: {v.matched} of {v.records} records are logger calls of the pinned tree; "
           f"processes: {', '.join(v.processes)}"]
    for row in v.rows:
        claim = f"review: {row.claim}" if row.claim is not None else "review: no claim"
        out.append(f"  {_row_name(row):32} {_WORD[row.verdict]:22} {claim}")
        out.append(f"      {row.basis}")
        for ref in row.log[:3]:
            out.append(f"      log line {ref.line}: {ref.text[:120]}")
    out.append(f"verify: {_DECISION.get(v.exit_code, str(v.exit_code))} (exit {v.exit_code})")
    return "\n".join(out) + "\n"


def render_concise(v: Verification) -> str:
    if not v.identified:
        return "\n".join(_refused(v)[:1]) + "\n"
    out = []
    for row in v.rows:
        where = f":{row.log[0].line}" if row.log else ""
        out.append(f"{v.log}{where}: {_row_name(row)}: {_WORD[row.verdict]}: {row.basis}")
    out.append(f"verify: {_DECISION.get(v.exit_code, str(v.exit_code))} (exit {v.exit_code})")
    return "\n".join(out) + "\n"


def render_json(v: Verification) -> str:
    return dumps(v.model_dump(mode="json"), indent=2) + "\n"


def render_markdown(v: Verification) -> str:
    if not v.identified:
        return "\n".join(["### srcreview verify: refused", "", *(f"- {line.strip()}" for line in _refused(v))]) + "\n"
    out = [f"### srcreview verify: {_DECISION.get(v.exit_code, '')}", "",
           f"`{v.log}` against the review of `{v.recipe}` at `{v.revision[:12]}`", "",
           "| knob | verdict | review | what the log shows |", "|---|---|---|---|"]
    for row in v.rows:
        basis = row.basis.replace("|", "\\|")
        out.append(f"| {_row_name(row)} | {_WORD[row.verdict]} | {row.claim or ''} | {basis} |")
    return "\n".join(out) + "\n"


def render_sarif(v: Verification) -> str:
    results: list[dict] = []
    for row in v.rows:
        if row.verdict not in _LEVEL:
            continue
        line = row.log[0].line if row.log else 1
        results.append({
            "ruleId": f"startup-evidence/{row.knob}",
            "level": _LEVEL[row.verdict],
            "message": {"text": f"{_row_name(row)}: {_WORD[row.verdict]}: {row.basis}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": v.log},
                                                "region": {"startLine": max(line, 1)}}}],
        })
    if not v.identified:
        for m in v.mismatches[:20]:
            results.append({"ruleId": "startup-evidence/revision", "level": "error",
                            "message": {"text": f"not a logger call of {v.revision[:12]}: {m.expected}"},
                            "locations": [{"physicalLocation": {"artifactLocation": {"uri": v.log},
                                                                "region": {"startLine": m.line}}}]})
    doc = {"$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
           "version": "2.1.0",
           "runs": [{"tool": {"driver": {"name": "srcreview", "rules": [
               {"id": rid} for rid in sorted({str(r["ruleId"]) for r in results})]}},
               "results": results}]}
    return dumps(doc, indent=2) + "\n"


FORMATS: dict[str, Callable[[Verification], str]] = {
    "text": render_text, "concise": render_concise, "json": render_json, "sarif": render_sarif,
    "markdown": render_markdown,
}
