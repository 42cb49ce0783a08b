"""A start-up log read against a review: is it a log of the review's revision, what does it prove
for each knob of the evidence plan, and does that agree with the review?

The release is identified by the log's `[file.py:line]` prefixes: each must be a logger call of
the pinned tree whose format the message fits (srcreview.vllm.log_calls). A log whose pairs do not
match is refused with them. The records are then split per process into the phases of the plan
(engine, target load, draft load, cudagraph capture) by the runner's own lines, and each row is
consistent, contradicted (the log line beside the review's claim) or not shown (with why): a
missing line is consistent only where the review predicts the cached selection that explains it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from srcreview.core.records import Field, Record
from srcreview.evidence.logfile import LogLine
from srcreview.model.findings import EvidenceRow, Review, StartupEvidence
from srcreview.vllm import log_calls
from srcreview.vllm.anchors import (
    BACKEND_FORCED_LOG,
    BACKEND_SELECTED_LOG,
    CUDAGRAPH_CAPTURE_LOG,
    DRAFTER_LOAD_LOG,
    ENGINE_FAILED_LOG,
    ENGINE_READY_LOG,
    KV_DTYPE_LOG,
    LOG_METHODS,
    MODEL_LOADED_LOG,
    MODEL_STRUCTURE_LOG,
    STRUCTURE_BACKEND_KEY,
    TARGET_KEYS,
)

MIN_MATCHED = 0.8  # of the prefixed records, the share that must be logger calls of the tree
_FRAME = re.compile(r'\s*File "(?P<path>[^"]{1,1000})", line (?P<line>\d{1,7}), in (?P<fn>\S{1,200})')
_EXCEPTION = re.compile(r"(?P<type>[A-Za-z_][\w.]{0,200}(?:Error|Exception)): (?P<message>.{0,2000})")
_IMPL = re.compile(re.escape(STRUCTURE_BACKEND_KEY) + r"(?P<impl>[A-Za-z_]\w{0,100})")

Verdict = Literal["consistent", "contradicted", "not-shown", "unprovable", "open"]

BACKEND_KEY, KV_KEY = TARGET_KEYS  # the knobs a start-up log shows per model
INFO = LOG_METHODS["info"]


class LogRef(Record):
    line: int = Field(description="line of the log file")
    text: str = Field(description="the log line, without process prefix and colour codes")
    process: str = ""


class RowVerdict(Record):
    knob: str
    scope: str
    verdict: Verdict
    claim: str | None = None
    claim_from: str = ""
    observed: tuple[str, ...] = Field(default=(), description="what the log shows for the row")
    basis: str = Field(default="", description="why the verdict follows: the lines read, or the reason none proves it")
    log: tuple[LogRef, ...] = ()


class Mismatch(Record):
    line: int
    file: str
    file_line: int
    message: str
    expected: str = Field(description="what the pinned tree has at that file and line (or where the format is)")


class Verification(Record):
    """`srcreview verify`: one review and one log."""

    recipe: str
    revision: str
    log: str = Field(description="the log file as given")
    identified: bool = Field(description="the log's file:line pairs are logger calls of the review's revision")
    records: int = Field(description="records in vLLM's format")
    matched: int = Field(description="records whose file:line is a logger call of the tree and whose message fits it")
    mismatches: tuple[Mismatch, ...] = ()
    processes: tuple[str, ...] = ()
    startup: Literal["started", "rejected", "unknown"] = "unknown"
    rows: tuple[RowVerdict, ...] = ()
    exit_code: int = 0


@dataclass
class _Rec:
    first: LogLine
    call: log_calls.LogCall | None
    args: tuple[str, ...]
    more: list[LogLine] = field(default_factory=list)
    phase: str = "engine"
    structure: int = 0  # the n-th model structure of its process (1 target, 2 draft)


def _ref(line: LogLine) -> LogRef:
    return LogRef(line=line.number, text=line.text[:400], process=line.process)


def _fmt(call: log_calls.LogCall | None, fmt: str) -> bool:
    return call is not None and call.format is not None and call.format.startswith(fmt)


def _backend(arg: str) -> str:
    return arg.rsplit(".", 1)[-1].strip("'\"")


class _Reading:
    def __init__(self, index, review: Review, lines: list[LogLine]):
        self.index = index
        self.review = review
        self.plan: StartupEvidence = review.startup_evidence  # type: ignore[assignment]  # checked by verify
        self.table = log_calls.LogTable(index)
        self.lines = lines
        self.records: list[_Rec] = []
        self.mismatches: list[Mismatch] = []
        self.matched = 0
        self.texts: list[LogLine] = []

    def identify(self) -> None:
        planned = {(ln.format, ln.path, ln.line) for row in self.plan.rows for ln in row.lines if ln.format}
        formats = {f for f, _, _ in planned}
        last: dict[str, _Rec] = {}
        for line in self.lines:
            if not line.prefixed:
                self.texts.append(line)
                if line.process in last:
                    last[line.process].more.append(line)
                continue
            calls = self.table.calls_at(line.file, line.line)
            fit = next(((c, a) for c in calls if (a := c.match(line.message)) is not None), None)
            previous = last.get(line.process)
            if fit is None and previous is not None and previous.first.file == line.file \
                    and previous.first.line == line.line and previous.first.time == line.time:
                previous.more.append(line)  # a continuation line of a multi-line message
                continue
            if fit is None:
                expected = (f"no logger call at {line.file}:{line.line}" if not calls else
                            f"{calls[0].path}:{calls[0].line} prints {calls[0].format!r}")
                moved = [(p, n) for f, p, n in planned
                         if log_calls.LogCall(p, n, n, INFO, False, "", f, "").match(line.message) is not None
                         and f is not None and len(f.split("%", 1)[0]) > 8]
                if moved:
                    expected += f"; at this revision that message is printed at {moved[0][0]}:{moved[0][1]}"
                self.mismatches.append(Mismatch(line=line.number, file=line.file, file_line=line.line,
                                                message=line.message[:200], expected=expected))
                self.records.append(_Rec(line, None, ()))
                last[line.process] = self.records[-1]
                continue
            self.matched += 1
            record = _Rec(line, fit[0], fit[1])
            self.records.append(record)
            last[line.process] = record
        del formats

    @property
    def identified(self) -> bool:
        records = len(self.records)
        return records > 0 and self.matched >= MIN_MATCHED * records

    def phases(self) -> None:
        starts = {(ln.path, ln.line) for row in self.plan.rows if row.knob == "model_runner"
                  for ln in row.lines if ln.phase == "target load" and not (ln.format or "").startswith(
                      MODEL_LOADED_LOG)}
        state: dict[str, str] = {}
        structures: dict[str, int] = {}
        for record in self.records:
            call, proc = record.call, record.first.process
            phase = state.get(proc, "engine")
            if call is not None and (call.path, call.line) in starts:
                phase = "target load"
            elif _fmt(call, DRAFTER_LOAD_LOG):
                phase = "draft load"
            elif _fmt(call, MODEL_STRUCTURE_LOG):
                structures[proc] = structures.get(proc, 0) + 1
                record.structure = structures[proc]
                phase = "target load" if structures[proc] == 1 and phase != "draft load" else "draft load"
            elif _fmt(call, MODEL_LOADED_LOG):
                phase = "engine"
            elif _fmt(call, CUDAGRAPH_CAPTURE_LOG):
                phase = "cudagraph capture"
            record.phase = phase
            state[proc] = "engine" if _fmt(call, MODEL_LOADED_LOG) else phase

    # -- what the log shows ---------------------------------------------------------------
    def _with(self, fmt: str, phase: str | None = None) -> list[_Rec]:
        return [r for r in self.records if _fmt(r.call, fmt) and (phase is None or r.phase == phase)]

    def _structure_backends(self, records: list[_Rec]) -> tuple[set[str], list[LogLine]]:
        impls = impl_names(self.index)
        found: set[str] = set()
        where: list[LogLine] = []
        for record in records:
            for line in record.more:
                for m in _IMPL.finditer(line.message or line.text):
                    names = impls.get(m["impl"], (m["impl"],))
                    found.update(names)
                    where.append(line)
        return found, where

    def target_backend(self) -> tuple[set[str], list[LogLine], str]:
        lines = self._with(BACKEND_FORCED_LOG, "target load") + self._with(BACKEND_SELECTED_LOG, "target load")
        values = {_backend(r.args[0]) for r in lines if r.args}
        how = "forced" if self._with(BACKEND_FORCED_LOG, "target load") else "selected" if values else ""
        structure, where = self._structure_backends([r for r in self.records if r.structure == 1])
        return values | structure, [r.first for r in lines] + where[:3], how

    def draft_backend(self) -> tuple[set[str], list[LogLine]]:
        structure, where = self._structure_backends([r for r in self.records if r.structure >= 2])
        marked = self._with(DRAFTER_LOAD_LOG) or [r for r in self.records if r.structure == 1]
        lines = self._with(BACKEND_FORCED_LOG, "draft load") + self._with(BACKEND_SELECTED_LOG, "draft load")
        values = {_backend(r.args[0]) for r in lines if r.args} if marked else set()
        return structure | values, where[:3] + ([r.first for r in lines] if marked else [])


_IMPLS: dict[int, dict[str, tuple[str, ...]]] = {}


def impl_names(index) -> dict[str, tuple[str, ...]]:
    key = id(index)
    if key not in _IMPLS:
        _IMPLS[key] = log_calls.impl_backends(index)
    return _IMPLS[key]


def _compare(row: EvidenceRow, observed: set[str], where: list[LogLine], claim: str | None,
             what: str) -> RowVerdict:
    base: dict[str, Any] = dict(knob=row.knob, scope=row.scope, claim=claim, claim_from=row.claim_from,
                observed=tuple(sorted(observed)), log=tuple(_ref(w) for w in where[:6]))
    if not observed and claim is None:  # nothing claimed, nothing shown: no evidence is missing
        return RowVerdict(**base, verdict="open", basis=f"no line shows {what}, and the review makes no claim")
    if not observed:
        return RowVerdict(**base, verdict="not-shown", basis=f"no line shows {what}: {row.reason}")
    if claim is None:
        return RowVerdict(**base, verdict="open", basis=f"the log shows {', '.join(sorted(observed))}; the review "
                                                         "leaves it open")
    if observed == {claim}:
        return RowVerdict(**base, verdict="consistent", basis=f"the log shows {claim} for {what}")
    return RowVerdict(**base, verdict="contradicted",
                      basis=f"the log shows {', '.join(sorted(observed))} for {what}; the review claims {claim}")


def verify(index, review: Review, lines: list[LogLine], log_name: str) -> Verification:
    """Read the log against the review's evidence plan (the Index is the review's revision)."""
    reading = _Reading(index, review, lines)
    reading.identify()
    head: dict[str, Any] = dict(recipe=review.recipe.path, revision=review.revision.sha, log=log_name,
                records=len(reading.records), matched=reading.matched,
                mismatches=tuple(reading.mismatches[:20]))
    if not reading.identified:
        return Verification(**head, identified=False, exit_code=65)
    reading.phases()
    processes = tuple(sorted({r.first.process or "(api server)" for r in reading.records}))
    rows: list[RowVerdict] = []
    target_seen: set[str] = set()
    target_how = ""
    for row in reading.plan.rows:
        if row.knob == BACKEND_KEY and row.scope == "target":
            target_seen, where, target_how = reading.target_backend()
            rows.append(_compare(row, target_seen, where, row.claim, "the target's attention backend"))
        elif row.knob == BACKEND_KEY:
            seen, where = reading.draft_backend()
            claim = row.claim
            if claim is None and row.not_claimed is not None and len(target_seen) == 1:
                claim = next(iter(target_seen))  # ignored: the draft runs the target's selection
            verdict = _compare(row, seen, where, claim, "the draft's attention backend")
            if verdict.verdict == "not-shown":
                if row.cache_reuse and claim is not None and target_seen == {claim} and target_how == "forced":
                    verdict = verdict.model_copy(update={
                        "verdict": "consistent",
                        "basis": f"no draft backend line, as the review predicts: the draft's selection is the "
                                 f"target's {claim}, named by attention_backend and cached, so it prints nothing"})
                elif row.not_claimed is not None:
                    verdict = verdict.model_copy(update={
                        "basis": verdict.basis + f"; a successful start-up does not prove that the nested "
                                 f"{row.not_claimed} reached the draft"})
            rows.append(verdict)
        elif row.knob == KV_KEY:
            if row.provable == "no":
                rows.append(RowVerdict(knob=row.knob, scope=row.scope, verdict="unprovable", claim=row.claim,
                                       claim_from=row.claim_from, basis=row.reason))
                continue
            found = reading._with(KV_DTYPE_LOG)
            rows.append(_compare(row, {r.args[0] for r in found if r.args}, [r.first for r in found], row.claim,
                                 "the KV-cache dtype"))
        elif row.knob == "model_runner":
            runner_of = {}
            for ln in row.lines:
                if ln.phase == "target load":
                    runner_of[(ln.path, ln.line)] = "v2" if "/gpu/" in ln.path else "v1"
            fallback = {(ln.path, ln.line) for ln in row.lines if ln.phase == "engine"}
            seen_runners, where = set(), []
            for record in reading.records:
                key = (record.call.path, record.call.line) if record.call else None
                if key in runner_of:
                    seen_runners.add(runner_of[key])
                    where.append(record.first)
                elif key in fallback:
                    seen_runners.add("v1")
                    where.append(record.first)
            rows.append(_compare(row, seen_runners, where, row.claim, "the model runner"))
        elif row.knob == "speculative_method":
            drafts = reading._with(DRAFTER_LOAD_LOG) + [r for r in reading.records if r.structure >= 2]
            base: dict[str, Any] = dict(knob=row.knob, scope=row.scope, claim=row.claim, claim_from=row.claim_from)
            if drafts:
                rows.append(RowVerdict(**base, verdict="consistent", observed=("a draft model is loaded",),
                                       log=tuple(_ref(r.first) for r in drafts[:3]),
                                       basis="a draft model is loaded (the method itself is not printed by name)"))
            else:
                rows.append(RowVerdict(**base, verdict="not-shown", basis=row.reason))
        elif row.knob == "cudagraph_mode":
            found = reading._with(CUDAGRAPH_CAPTURE_LOG)
            modes = {r.args[0] for r in found if r.args}
            overrides = [r for r in reading.records if r.call is not None
                         and (r.call.path, r.call.line) in {(ln.path, ln.line) for ln in row.lines
                                                            if ln.phase == "engine"}]
            verdict = _compare(row, modes, [r.first for r in overrides + found], row.claim, "the cudagraph mode")
            if overrides and row.claim is not None:
                verdict = verdict.model_copy(update={"verdict": "contradicted", "basis": "the engine overrides the "
                                                     f"cudagraph mode: {overrides[0].first.message[:160]}"})
            rows.append(verdict)
    rows.append(_startup(reading))
    verdicts = {r.verdict for r in rows}
    code = 1 if "contradicted" in verdicts else 2 if "not-shown" in verdicts else 0
    startup = next(r for r in rows if r.knob == "startup")
    return Verification(**head, identified=True, processes=processes,
                        startup="rejected" if "rejected" in startup.observed else
                        "started" if "started" in startup.observed else "unknown",
                        rows=tuple(rows), exit_code=code)


def _startup(reading: _Reading) -> RowVerdict:
    predicted = reading.plan.rejection
    claim = "rejected" if predicted else "starts"
    base: dict[str, Any] = dict(knob="startup", scope="engine", claim=claim,
                claim_from="a confirmed startup-rejected finding" if predicted else
                "no startup-rejected finding is confirmed")
    ready = reading._with(ENGINE_READY_LOG)
    failed = reading._with(ENGINE_FAILED_LOG)
    frames, exceptions = [], []
    for line in reading.lines:
        text = line.message if line.prefixed else line.text
        if (m := _FRAME.match(text)) is not None:
            frames.append((m["path"], int(m["line"]), line))
        elif (m := _EXCEPTION.match(text)) is not None:
            exceptions.append(line)
    if ready and not failed:
        if predicted:
            return RowVerdict(**base, verdict="contradicted", observed=("started",), log=(_ref(ready[0].first),),
                              basis="the engine started; the review predicts a rejection")
        return RowVerdict(**base, verdict="consistent", observed=("started",), log=(_ref(ready[0].first),),
                          basis="the engine started")
    if failed or exceptions:
        last = exceptions[-1] if exceptions else failed[0].first
        hit = [(path, n, line) for path, n, line in frames for a in predicted
               if path.replace("\\", "/").endswith("/" + a.path) and a.start_line <= n <= a.end_line]
        if hit:
            return RowVerdict(**base, verdict="consistent", observed=("rejected",),
                              log=(_ref(hit[-1][2]), _ref(last)),
                              basis="the start-up failed at the raise the review predicts "
                                    f"({hit[-1][0].rsplit('/', 1)[-1]}:{hit[-1][1]})")
        miss = "the review predicts it at " + ", ".join(f"{a.path}:{a.start_line}" for a in predicted) \
            if predicted else "the review predicts no rejection"
        return RowVerdict(**base, verdict="contradicted", observed=("rejected",), log=(_ref(last),),
                          basis=f"the start-up failed ({(last.message if last.prefixed else last.text)[:160]}); {miss}")
    return RowVerdict(**base, verdict="not-shown",
                      basis="the log neither reaches the engine's ready line nor shows a failure (a truncated log?)")
