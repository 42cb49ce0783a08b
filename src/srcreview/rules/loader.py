"""Rules: declarative TOML files in rules/, validated on load with errors that point into the file.

A rule states one claim, its severity, when it applies (`when`), one check (`[check]`: a
kind from srcreview.checks and its parameters), how the check's outcome maps to a
classification (`[verdict]`), message templates, the knob rows it settles (`[[knobs]]`), a
doc, and examples that run against fixtures/vllm_snippets/. Rules locate vLLM symbols by
qualified-name suffix, never by file path or line, so they survive releases.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from srcreview.core.errors import DataError
from srcreview.core.records import Field, Record, RecordError, field_validator
from srcreview.model.findings import KnobStatus, Problem, Scope, Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Verdict = Literal["confirmed", "refuted", "plausible", "none"]
RULE_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_RULE_BYTES = 200_000


class Condition(Record):
    """One `when` test on a recipe value; all given tests must hold."""

    set: bool | None = None
    equals: Any = None
    not_equals: Any = None
    in_: tuple[Any, ...] | None = Field(default=None, alias="in")
    not_in: tuple[Any, ...] | None = None
    matches: str | None = None
    not_matches: str | None = None
    startswith: str | None = None
    differs_from: str | None = None

    @field_validator("matches", "not_matches")
    @classmethod
    def _regex(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regular expression: {exc}") from None
        return value


class CheckSpec(Record):
    """The one check of a rule: its kind and the kind's parameters (validated by the kind).

    A rule file writes the parameters beside `kind` (`[check]` kind = ..., entry = ...)."""

    kind: str
    params: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def _prepare(cls, data: dict) -> dict:
        return {"params": {k: v for k, v in data.items() if k != "kind"},
                **({"kind": data["kind"]} if "kind" in data else {})}


class KnobEffect(Record):
    """A knob row this rule settles: which key and scope, and the status per check outcome."""

    key: str
    scope: Scope | Literal["any"] = Field(description='"any": every row the key already has')
    value: str | None = Field(default=None, description="template of the value shown; default: the recipe value of key")
    status: dict[str, KnobStatus | Literal["none"]]
    note: str = ""
    effective: str | None = Field(default=None,
                                  description="template of what takes effect when the recipe leaves the key "
                                              "unset or automatic (the backend the platform selects)")


class Doc(Record):
    what: str
    why: str
    instead: str
    references: tuple[str, ...] = ()


class Probe(Record):
    """A breakage probe for the independent-review format, filled from the finding."""

    axis: str
    input_or_state: str
    wrong_result: str


class Example(Record):
    """A recipe fragment run against a fixture tree, and what the rule must conclude."""

    fixture: str
    settings: dict[str, Any] = Field(default_factory=dict)
    env: dict[str, str] = Field(default_factory=dict)
    hardware: dict[str, Any] = Field(default_factory=dict)
    model: dict[str, Any] | None = Field(default=None, description="the target model's config.json (as the recipe's "
                                         "[model] table would state it); None: no model config is bound")
    name: str = "example"
    recipe_name: str = "example"
    expect: Verdict | Literal["stale", "skipped"]
    knob: dict[str, KnobStatus] = Field(default_factory=dict, description='"key@scope" -> expected knob status')


class Rule(Record):
    id: str
    severity: Severity
    problem: Problem = Field(default="confirmed", description="the classification of the claim that is a problem: "
                             '"refuted" when the claim is a desired property, "none" when it only informs')
    claim: str
    stops_startup: bool = Field(default=False, description="a problem of this rule means vLLM does not start with "
                                "the recipe (the review's start-up verdict is `rejected`; an open question of it "
                                "leaves start-up undecided)")
    when: dict[str, Condition | str | bool] = Field(default_factory=dict)
    for_each: Literal["setting", "nested-setting", "draft-setting"] | None = Field(
        default=None, description='run once per recipe setting: every one ("setting"), each speculative_config key '
        'that may configure the draft ("nested-setting"), each top-level key the draft may inherit ("draft-setting"); '
        "the check sees the key as {key} and its value as {value}")
    requires_runner: Literal["v1", "v2"] | None = None
    check: CheckSpec
    verdict: dict[str, Verdict]
    message: dict[Literal["confirmed", "refuted", "plausible"], str]
    knobs: tuple[KnobEffect, ...] = ()
    probe: Probe | None = None
    doc: Doc
    examples: tuple[Example, ...]
    path: str = Field(default="", exclude=True)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not RULE_ID.match(value):
            raise ValueError("must be lowercase words joined by '-'")
        return value

    @field_validator("examples")
    @classmethod
    def _examples(cls, value: tuple) -> tuple:
        if not value:
            raise ValueError("a rule needs at least one example")
        return value

    @field_validator("when")
    @classmethod
    def _when(cls, value: dict) -> dict:
        out = {}
        for key, cond in value.items():
            if isinstance(cond, bool):
                cond = Condition(equals=cond)
            elif isinstance(cond, str):
                cond = (Condition(set=True) if cond == "set" else Condition(set=False) if cond == "unset"
                        else Condition(equals=cond))
            out[key] = cond
        return out

    def _validated(self) -> None:
        from srcreview.checks import check_kind

        kind = check_kind(self.check.kind)  # raises ValueError for an unknown kind
        kind.validate_params(self.check.params)
        outcomes = set(kind.OUTCOMES)
        unknown = sorted(set(self.verdict) - outcomes)
        if unknown:
            raise ValueError(f"verdict: unknown outcome {unknown[0]!r} for check kind {self.check.kind} "
                             f"(outcomes: {', '.join(kind.OUTCOMES)})")
        missing = sorted(outcomes - set(self.verdict))
        if missing:
            raise ValueError(f"verdict: outcome {missing[0]!r} of {self.check.kind} is not mapped "
                             "(map it to confirmed, refuted, plausible or none)")
        if any(self.verdict[o] in ("confirmed", "refuted") for o in kind.UNDECIDED_OUTCOMES):
            raise ValueError("verdict: an undecided outcome may only map to plausible or none")
        for classification in set(self.verdict.values()) - {"none"}:
            if classification not in self.message:
                raise ValueError(f"message: no template for {classification!r}, which the verdict can produce")
        for effect in self.knobs:
            bad = sorted(set(effect.status) - outcomes)
            if bad:
                raise ValueError(f"knobs: unknown outcome {bad[0]!r} in status of {effect.key}")


# ---------------------------------------------------------------------------------------------
# loading


def _line_of(text: str, loc: tuple) -> int:
    """The line of a validation error's location in the rule text (best effort, never wrong key)."""
    from srcreview.model.recipe import KeyLines

    parts = [str(p) for p in loc if not isinstance(p, int)]
    if loc and loc[0] == "examples":
        index = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else 0
        lines = [n for n, line in enumerate(text.splitlines(), 1) if line.strip().startswith("[[examples]]")]
        start = lines[index] if index < len(lines) else (lines[-1] if lines else 1)
        key = next((str(p) for p in loc[2:] if not isinstance(p, int)), None)
        if key:
            for n, line in enumerate(text.splitlines()[start:], start + 1):
                if line.strip().startswith("[["):
                    break
                if re.match(rf"\s*{re.escape(key)}\s*=", line):
                    return n
        return start
    if loc and loc[0] == "knobs":
        lines = [n for n, line in enumerate(text.splitlines(), 1) if line.strip().startswith("[[knobs]]")]
        index = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else 0
        return lines[index] if index < len(lines) else 1
    return KeyLines(text).of(*parts) if parts else 1


def parse_rule(text: str, shown: str) -> Rule:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        pos = re.search(r"\(at line (\d+)", str(exc))
        raise DataError(f"{shown}:{pos.group(1) if pos else 1}: malformed TOML: "
                        f"{re.sub(r' ?[(]at line.*[)]', '', str(exc))}") from None
    except RecursionError:  # tomllib recurses on nested arrays and inline tables
        raise DataError(f"{shown}:1: malformed TOML: nesting too deep") from None
    try:
        rule = Rule.model_validate({**data, "path": shown})
    except RecursionError:
        raise DataError(f"{shown}:1: rule data nested too deep") from None
    except RecordError as exc:
        err = exc.errors()[0]
        loc = tuple(p for p in err["loc"] if isinstance(p, int) or "[" not in str(p))
        where = ".".join(str(p) for p in loc) or "rule"
        if err["type"] == "extra_forbidden":
            msg = f"unknown key {where}"
        elif err["type"] == "missing":
            msg = f"missing required key {where}"
            loc = loc[:-1]
        elif loc:
            msg = f"{where}: {err['msg'].removeprefix('Value error, ')}"
        else:  # a whole-rule check: its message starts with the key it is about
            msg = err["msg"].removeprefix("Value error, ")
            head = re.match(r"([a-z_]+(?:\.[a-z_]+)*):", msg)
            loc = tuple(head.group(1).split(".")) if head else ()
            quoted = re.search(r"'([^']+)'", msg)
            if loc and loc[0] in ("verdict",) and quoted:
                loc = (*loc, quoted.group(1))
        raise DataError(f"{shown}:{_line_of(text, loc)}: {msg}") from None
    expected = Path(shown).stem
    if rule.id != expected:
        raise DataError(f"{shown}:{_line_of(text, ('id',))}: rule id {rule.id!r} must match the file name {expected!r}")
    return rule


def load_rule_file(path: Path, display: str | None = None) -> Rule:
    from srcreview.core.userfile import read_user_file

    shown = display or path.name
    # a regular file only: a FIFO or a link to /dev/zero named x.toml in --rules is refused unread
    raw = read_user_file(path, shown, "rule", limit=MAX_RULE_BYTES)
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")  # a BOM, as recipes take it (editors on Windows)
    except UnicodeDecodeError:
        raise DataError(f"{shown}:1: rule file is not valid UTF-8") from None
    return parse_rule(text, shown)


def load_rules(directory: Path | None = None) -> tuple[Rule, ...]:
    """Every rules/*.toml, validated, sorted by id; DataError on the first invalid file."""
    if directory is None:
        return _shipped_rules()
    return _load_dir(Path(directory))


@lru_cache(maxsize=1)
def _shipped_rules() -> tuple[Rule, ...]:
    from srcreview.core.resources import data_dir

    return _load_dir(data_dir("rules"))


def _load_dir(directory: Path) -> tuple[Rule, ...]:
    if not directory.is_dir():
        raise DataError(f"{directory.name}: rules directory is missing")
    files = sorted(directory.glob("*.toml"))
    if not files:  # a submodule not checked out: no rule run is no pass
        raise DataError(f"{directory.name}: rules directory holds no rule file (*.toml)")
    rules = [load_rule_file(p, f"rules/{p.name}") for p in files]
    seen: dict[str, str] = {}
    for rule in rules:
        if rule.id in seen:
            raise DataError(f"{rule.path}:1: rule id {rule.id!r} repeats {seen[rule.id]}")
        seen[rule.id] = rule.path
    return tuple(sorted(rules, key=lambda r: r.id))
