"""The review's data: anchors, knob rows, findings and the review result (the JSON contract).

Every output format renders a `Review`; `--format json` writes a `ReviewRun` (one shape for
one recipe or many). The field names here are the contract that CI users script against:
fields are added, never renamed or removed, so readers must ignore fields they do not know;
`schema_version` changes only if that promise is ever broken.
"""

from __future__ import annotations

import hashlib
from typing import Any, Final, Literal

from srcreview.core.records import Field, Record

Classification = Literal["confirmed", "refuted", "plausible"]
Problem = Literal["confirmed", "refuted", "none"]
Kind = Literal["problem", "open-question", "fact"]
Severity = Literal["high", "medium", "low", "info"]
KnobStatus = Literal["applied", "ignored", "overridden", "undecided", "accepted", "unknown-knob", "invalid-value"]
Scope = Literal["target", "draft", "engine"]

SEVERITY_ORDER = {"info": 0, "low": 1, "medium": 2, "high": 3}
CLASSIFICATION_ORDER = {"refuted": 0, "plausible": 1, "confirmed": 2}
KIND_ORDER = {"fact": 0, "open-question": 1, "problem": 2}


def kind_of(classification: str, problem: str) -> Kind:
    """What a classification means for a rule: its problem, an open question, or a fact."""
    if classification == "plausible":
        return "open-question"
    return "problem" if classification == problem else "fact"


class AnchorOrigin(Record):
    """Where a patched tree's anchor points: upstream lines, or the lines of a patch that made them."""

    kind: Literal["upstream", "patched"] = Field(
        description="upstream: unchanged lines, `url` is upstream's; patched: lines a patch or overlay added or "
                    "changed")
    file: str = Field(description="upstream tree path, or the patch (overlay file) as given")
    start_line: int = Field(description="first line of `file` that `url` points at")
    end_line: int
    sha256: str = Field(default="", description="of the patch file or overlay (patched only)")


class Anchor(Record):
    """A line range in the pinned source and what it shows."""

    url: str
    path: str
    start_line: int
    end_line: int
    symbol: str = ""
    role: str = ""
    origin: AnchorOrigin | None = Field(
        default=None, omit_none=True,
        description="set when the reviewed tree is patched and a layer touched this file; path and lines stay those of "
                    "the reviewed tree (absent otherwise: plain reviews keep their exact JSON)")

    @property
    def patched(self) -> bool:
        return self.origin is not None and self.origin.kind == "patched"

    def sort_key(self) -> tuple:
        return (self.path, self.start_line, self.end_line, self.symbol, self.role)


class Hop(Record):
    """One step of a trace: recipe key -> config field -> call -> ... -> sink."""

    kind: Literal["recipe", "field", "call", "read", "branch", "sink", "note"]
    text: str
    anchor: Anchor | None = None
    recipe_line: int | None = None


class Knob(Record):
    key: str
    value: object = None
    scope: Scope = "engine"
    recipe_line: int | None = None
    status: KnobStatus
    evidence: tuple[Anchor, ...] = ()
    tags: tuple[str, ...] = ()
    note: str = ""
    effective: str | None = Field(default=None, omit_none=True,
                                  description="what takes effect when the recipe leaves the key unset or "
                                              "automatic, as the source selects it (e.g. the attention backend the "
                                              "platform picks); absent when the recipe's value is what runs")

class WaiverNote(Record):
    """The waiver that accepted a finding: shown with the finding, never hiding it."""

    fingerprint: str
    reason: str
    expires: str = Field(description="ISO date; the waiver holds through that day")
    source: str = Field(description="where the waiver is written, as path:line")


BaselineStatus = Literal["new", "worse", "unchanged", "improved"]


class Finding(Record):
    id: str
    rule: str
    classification: Classification
    severity: Severity
    problem: Problem = Field(default="confirmed", description="the rule's classification that is a problem "
                             "(refuted for a rule whose claim is a desired property; none: informational)")
    kind: Kind = Field(default="problem", description="derived from classification and problem: problem (can fail the "
                       "gate), open-question (plausible) or fact (verified behaviour; never fails the gate)")
    knobs: tuple[str, ...] = ()
    claim: str
    message: str
    evidence: tuple[Anchor, ...] = ()
    tags: tuple[str, ...] = ()
    fingerprint: str
    recipe_line: int | None = None
    trace: tuple[Hop, ...] = ()
    assumptions: tuple[str, ...] = Field(default=(),
                                         description="what a plausible finding rests on that the source did not "
                                                     "decide under the recipe; always empty for confirmed and refuted")
    missing_tests: tuple[str, ...] = ()
    outcome: str = Field(default="", description="the check outcome the rule's verdict mapped to this finding")
    waiver: WaiverNote | None = Field(default=None, description="set by the gate when a waiver accepts this finding")
    baseline: BaselineStatus | None = Field(default=None, description="set by the gate when run with --baseline")

    def _validated(self) -> None:
        """`kind` always follows from classification and problem, whatever a saved file says.
        Fail closed by construction: confirmed and refuted are promises, so a finding that
        rests on anything undecided cannot be built as one."""
        object.__setattr__(self, "kind", kind_of(self.classification, self.problem))
        if self.classification in ("confirmed", "refuted") and self.assumptions:
            raise ValueError(f"{self.rule}: a {self.classification} finding cannot rest on open questions "
                             f"({'; '.join(self.assumptions)})")

    def sort_key(self) -> tuple:
        return (-CLASSIFICATION_ORDER[self.classification], -SEVERITY_ORDER[self.severity], self.rule, self.knobs,
                self.id)


def fingerprint(rule: str, recipe_key: str, symbol_path: tuple[str, ...] | list[str]) -> str:
    """An id from meaning (rule, recipe key, symbols), not lines: it survives code motion."""
    text = "\x1f".join([rule, recipe_key, *symbol_path])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class ToolInfo(Record):
    name: str = "srcreview"
    version: str


class RecipeRef(Record):
    path: str
    file: str | None = Field(default=None,
                             description="the file the recipe is read from when `path` names a part of it "
                                         "(a compose service: path file.yml#service)")
    part: str | None = Field(default=None, omit_none=True,
                             description="what `path` names after `#` when not a compose service: `variant` "
                                         "(a recipes-registry model's variant, file.yaml#variant)")
    name: str
    model: str | None = None
    gpu: str | None = None
    compute_capability: str | None = None


class RevisionInfo(Record):
    sha: str
    version: str | None = None
    recipe_pin: str | None = None
    matches_recipe_pin: bool | None = None
    source: str = Field(default="", description="which provider supplied the source")
    release_from: Literal["pins", "index"] | None = Field(
        default=None, description="where the release's commit and sdist digest come from: pins/, or the package index "
                                  "(a release pins/ does not list yet); None for a commit")
    identity_unverified: str | None = Field(
        default=None, omit_none=True,
        description="set when the source's release rests on its vllm/_version.py alone (an sdist tree whose "
                    "PKG-INFO is missing): why the identity is unverified")


class ProfilePackage(Record):
    """One package of the runtime profile: installed or not, and where that fact comes from."""

    name: str = Field(description="the distribution as the requirement names it (torch, triton, flashinfer-python)")
    installed: bool
    requirement: str = Field(default="", description="the requirement line as written (torch==2.13.0), or empty")
    version: str | None = Field(default=None, omit_none=True,
                                description="the version installed, when the recipe's [runtime] packages gives it")
    source: str = Field(description="where the fact comes from: path:line of the pinned tree's requirement file, "
                                    "the recipe's [runtime] packages, or the package that pulls it in")


class EntryPointGroup(Record):
    group: str
    names: tuple[str, ...] = ()


class RuntimeProfile(Record):
    """What the review assumes of the machine the recipe runs on: the release's official
    container on the recipe's GPU, unless the recipe or the command line says otherwise.
    Import-time probes (`find_spec("triton")`, `current_platform.is_cuda()`, `HAS_TRITON`) are
    answered from it; a verdict that rests on it says so."""

    platform: str | None = Field(description="cuda, rocm, xpu, cpu, tpu; None when no GPU is named")
    platform_from: str = Field(description="what decides the platform: the GPU's vendor, [runtime] platform, --gpu")
    gpu: str | None = None
    gpu_from: str = Field(default="", description="the recipe's [hardware] gpu, or --gpu")
    compute_capability: str | None = None
    compute_capability_from: str | None = Field(default=None, omit_none=True,
                                                description="where the capability comes from when the recipe "
                                                            "names only its GPU")
    container: str = Field(description="the container assumed: the release's official image, or the recipe's image")
    requirements: tuple[str, ...] = Field(default=(), description="the pinned tree's requirement files read, in "
                                          "include order")
    packages: tuple[ProfilePackage, ...] = ()
    plugins: str = Field(default="none", description="out-of-tree platform and general plugins assumed installed")
    entry_points: tuple[EntryPointGroup, ...] | None = Field(
        None, description="the entry points the release's own package declares (its entry_points.txt); with "
                          "no plugins, what `importlib.metadata.entry_points(group=...)` finds; None when the "
                          "tree does not say")
    entry_points_from: str = Field(default="", description="the file the entry points are read from")

    def installed(self) -> tuple[str, ...]:
        """The installed distributions, normalised (PEP 503) and sorted: what the analysis binds."""
        return tuple(sorted({normalized_package(p.name) for p in self.packages if p.installed}))

    def summary(self) -> str:
        """One line: what every output prints first (the full list is in the JSON)."""
        if self.platform is None:
            return (f"runtime profile: platform open ({self.platform_from}): GPU-dependent rows stay undecided; "
                    f"plugins: {self.plugins}")
        gpu = f" on {self.gpu}" if self.gpu else ""
        cap = f" (compute capability {self.compute_capability}" + (
            f": {self.compute_capability_from})" if self.compute_capability_from else ")") \
            if self.compute_capability else ""
        installed = [p for p in self.packages if p.installed]
        files = ", ".join(self.requirements)
        notes = [f"{p.name}{' ' + p.version if p.version else ''} ({p.source})" for p in installed
                 if not p.source.startswith(self.requirements or ("-",))]
        absent = [f"{p.name} ({p.source})" for p in self.packages if not p.installed]
        text = (f"runtime profile: {self.container}{gpu}{cap}; platform {self.platform} ({self.platform_from}); "
                + (f"{len(installed)} packages from {files}" if files else
                   f"packages unknown (the tree has no requirements/{self.platform}.txt)"))
        text += "".join(f"; {note}" for note in notes)
        text += f"; not installed: {', '.join(absent)}" if absent else ""
        return text + f"; plugins: {self.plugins}"


def normalized_package(name: str) -> str:
    """A distribution name as pip compares them (PEP 503): `Flash_Infer.python` -> `flash-infer-python`."""
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


class RunnerInfo(Record):
    value: Literal["v1", "v2"] | None = None
    status: Literal["resolved", "undecided"] = "undecided"
    evidence: tuple[Anchor, ...] = ()
    reason: str = ""


StartupVerdict = Literal["rejected", "undecided", "no-refusal-found"]


class Startup(Record):
    """Whether vLLM starts with the recipe, as far as the review can tell (srcreview.engine.startup)."""

    verdict: StartupVerdict
    reasons: tuple[str, ...] = Field(default=(), description="what decides it: the refusals found, or what leaves it "
                                     "open (an open question of a refusal rule, an undecided knob)")

    def line(self) -> str:
        """`start-up: undecided (2 knobs undecided; startup-rejected open)` in words."""
        words = {"rejected": "rejected: vLLM refuses the recipe",
                 "undecided": "undecided: a refusal may be reached",
                 "no-refusal-found": "no refusal found on the walked path (what runs after the config is built, "
                                     "such as weights, KV-cache sizing and cudagraph capture, is not walked)"}
        shown = "; ".join(self.reasons[:3]) + (f"; {len(self.reasons) - 3} more" if len(self.reasons) > 3 else "")
        return f"start-up: {words[self.verdict]}" + (f" ({shown})" if shown else "")


class ModelFile(Record):
    path: str = Field(description="inside the model repository, e.g. config.json")
    sha256: str
    commit: str | None = Field(default=None, description="the Hub commit it resolved to (None for a local directory)")


class StatedValue(Record):
    """A config.json value the recipe's [model] / [draft_model] table states."""

    key: str
    value: Any
    line: int
    replaces: Any = Field(default=None, description="the value config.json had, when it had one")


class ModelInfo(Record):
    """A model the recipe names and the config the review bound for it (srcreview.hfconfig.binding)."""

    ref: str = Field(description="as the recipe names it (a Hub id or a local directory)")
    roles: tuple[Literal["target", "draft"], ...] = ()
    source: str = Field(description="local, hub, recipe, local+recipe, hub+recipe or none")
    revision: str | None = Field(default=None, description="the Hub revision asked for")
    commit: str | None = Field(default=None, description="the Hub commit config.json resolved to")
    files: tuple[ModelFile, ...] = ()
    stated: tuple[StatedValue, ...] = ()
    unknown: str | None = Field(default=None, description="why its config is not known: branches on it stay open")
    read: tuple[str, ...] = Field(default=(), description="config keys the analysis read while deciding branches")
    config_class: str | None = Field(default=None, omit_none=True,
                                     description="the config class whose facts decided names config.json does not "
                                                 "state (LlamaConfig of transformers 5.16.1), or why none did")
    class_decided: tuple[str, ...] | None = Field(default=None, omit_none=True,
                                                  description="what the config class decided: `name: absent`, "
                                                       "`name = value (default)`, `get_text_config(): the config "
                                                       "itself`")

    def summary(self) -> str:
        """One line for reports: where the config came from, or why it is not known."""
        role = f" ({', '.join(self.roles)})" if self.roles else ""
        if self.unknown is not None:
            stated = f"; {len(self.stated)} value(s) the recipe states are bound" if self.stated else ""
            return f"model {self.ref}{role}: config not known ({self.unknown}){stated}; branches on it stay open"
        where = {"local": "a local directory", "hub": "the Hugging Face Hub"}.get(self.source.split("+")[0], "")
        files = ", ".join(f.path for f in self.files) or "config.json"
        at = f" at commit {self.commit[:12]}" if self.commit else ""
        stated = f", {len(self.stated)} value(s) stated by the recipe" if self.stated else ""
        text = f"model {self.ref}{role}: {files} from {where}{at}{stated}"
        if self.config_class:
            text += f"; config class {self.config_class}"
            if self.class_decided:
                text += f" (the runtime profile) decides: {', '.join(self.class_decided)}"
        return text


class PatchRecord(Record):
    """A patch or overlay laid over the pinned source before the review: the engine that runs."""

    file: str = Field(description="the patch file or overlay directory, as given (relative)")
    kind: Literal["patch", "overlay"]
    sha256: str = Field(description="of the patch file; of an overlay's sorted (path, sha256) listing")
    touched: tuple[str, ...] = Field(default=(), description="tree paths it changed, added or deleted")


class StaleRule(Record):
    rule: str
    missing: tuple[str, ...]


class BaselineEntry(Record):
    """A finding of the baseline review, as far as the gate needs it (fixed ones are listed)."""

    fingerprint: str
    rule: str = ""
    classification: Classification
    severity: Severity = "info"
    claim: str = ""


class ReviewGate(Record):
    """The gate's decision for one recipe (the run's exit code combines all recipes)."""

    status: Literal["passed", "failed", "incomplete"]
    fail_on: str
    failing: tuple[str, ...] = Field(default=(), description="fingerprints of the findings that failed the gate")
    baseline: str | None = Field(default=None, description="the --baseline file, when one was given")
    fixed: tuple[BaselineEntry, ...] = Field(default=(), description="baseline findings no longer present")
    stale: tuple[str, ...] = Field(default=(),
                                   description="stale rules that failed the gate (accepted with --allow-stale)")


class EvidenceLine(Record):
    """A logger call of the pinned tree that a start-up log may show for a knob (srcreview.evidence.plan)."""

    path: str = Field(description="tree path of the module that prints it")
    line: int = Field(description="the line the log prefix prints ([file.py:line]), at this revision")
    file: str = Field(description="the file as the log prefix names it at INFO (the module's basename)")
    level: str = Field(description="the level it prints at (DEBUG, INFO, WARNING, ...)")
    once: bool = Field(description="printed once per process (and only on the ranks its scope names)")
    ranks: str = Field(description="which processes print it: every process, or the first rank of each node")
    format: str | None = Field(description="the format string as the source writes it (None: not a literal)")
    phase: Literal["engine", "target load", "draft load", "cudagraph capture"]
    shows: str = Field(description="what the line proves when it is printed")
    tells_draft: bool = Field(description="whether the line, or its place in the log, tells the draft from the target")
    call: str = Field(default="", description="the logger call as the source writes it (`logger.info_once`): what "
                      "the url's line shows")
    url: str = ""


class EvidenceRow(Record):
    """What a start-up log can prove about one knob of the review, and with which run settings."""

    knob: str = Field(description="the knob: a recipe key, or model_runner, speculative_method, cudagraph_mode")
    scope: Scope
    claim: str | None = Field(description="what the review predicts takes effect (None: the review leaves it open)")
    claim_from: str = Field(description="the knob row or finding the claim comes from, in words")
    not_claimed: str | None = Field(default=None, description="a value the log must not be read as proving "
                                    "(a nested key the review finds ignored)")
    cache_reuse: bool = Field(default=False, description="the review predicts the draft reuses the target's cached "
                              "selection, which prints nothing")
    provable: Literal["yes", "with-settings", "no"]
    run_with: tuple[str, ...] = Field(default=(), description="environment settings of a run that can prove it")
    lines: tuple[EvidenceLine, ...] = ()
    reason: str = Field(description="why a plain log may stay silent, or why no log can prove the row")


class StartupEvidence(Record):
    """The start-up evidence plan of a review: per knob, the log lines of the pinned tree that
    would prove it (`srcreview verify` reads a log against it)."""

    revision: str = Field(description="the commit whose logger calls the lines are")
    rows: tuple[EvidenceRow, ...] = ()
    run_with: tuple[str, ...] = Field(default=(), description="the settings of a run that proves every provable row")
    rejection: tuple[Anchor, ...] = Field(default=(), description="the raises a startup-rejected finding predicts")

    def heading(self) -> str:
        """`Start-up evidence (a run that proves it: ...; then srcreview verify)`."""
        settings = " ".join(self.run_with)
        return "Start-up evidence" + (f" (a run that proves it: {settings}; then srcreview verify)" if settings else "")

    def row_lines(self) -> list[tuple[str, str]]:
        """Per row, (what the lines that prove it are, in words; why a plain log may stay silent)."""
        out = []
        for row in self.rows:
            name = row.knob if row.scope == "engine" else f"{row.knob} ({row.scope})"
            if row.provable == "no":
                out.append((f"{name}: no log can prove it: {row.reason}", ""))
                continue
            telling = sorted({f"{ln.file}:{ln.line}" for ln in row.lines
                              if ln.tells_draft and ln.phase == "draft load"})
            shown = sorted({f"{ln.file}:{ln.line}" for ln in row.lines})
            needs = f"with {' '.join(row.run_with)}: " if row.run_with else ""
            rest = ", ".join(sorted(set(shown) - set(telling)))
            out.append((f"{name}: {needs}{', '.join(telling)} tell the draft; not by name {rest}" if telling
                        else f"{name}: {needs}{', '.join(shown)}", row.reason))
        return out


class Review(Record):
    tool: ToolInfo
    recipe: RecipeRef
    revision: RevisionInfo
    runner: RunnerInfo = RunnerInfo()
    profile: RuntimeProfile | None = Field(default=None, omit_none=True, description="the runtime the review assumes "
                                           "(srcreview.vllm.profile): import-time probes are answered from it")
    knobs: tuple[Knob, ...] = ()
    findings: tuple[Finding, ...] = ()
    stale_rules: tuple[StaleRule, ...] = ()
    missing_tests: tuple[str, ...] = ()
    incomplete: tuple[str, ...] = Field(default=(), description="why the review could not complete, if it could not")
    patches: tuple[PatchRecord, ...] = Field(default=(), description="layers applied over the pinned source, in order")
    models: tuple[ModelInfo, ...] = Field(default=(), description="the models the recipe names and their bound configs")
    startup: Startup | None = Field(default=None, omit_none=True, description="whether vLLM starts with the recipe, "
                                    "from the refusal rules' findings and the knob rows")
    gate: ReviewGate | None = Field(default=None, description="set by the gate (srcreview.gate.policy.evaluate)")
    startup_evidence: StartupEvidence | None = Field(
        default=None, omit_none=True,
        description="per knob, the start-up log lines of the pinned tree that would prove it "
                    "(srcreview.evidence.plan); `srcreview verify` reads a log against it")

    def _validated(self) -> None:
        """A fingerprint names one finding of a recipe (waivers, baselines and `explain` rely on it)."""
        seen: set[str] = set()
        for finding in self.findings:
            if finding.fingerprint in seen:
                raise ValueError(f"fingerprint {finding.fingerprint} names two findings of {self.recipe.path}")
            seen.add(finding.fingerprint)

    def startup_lines(self) -> list[str]:
        """The start-up verdict in words, shown on the first lines of every output."""
        return [self.startup.line()] if self.startup is not None else []

    def profile_lines(self) -> list[str]:
        """The runtime profile in words; with no GPU known, also the rows decided without one."""
        if self.profile is None:
            return []
        lines = [self.profile.summary()]
        if self.profile.platform is None or (self.profile.gpu is None and self.profile.compute_capability is None):
            decided = sorted({k.key for k in self.knobs if k.status != "undecided"})
            lines.append("decided without a GPU: " + (", ".join(decided) if decided else "no knob row"))
        return lines

    def line_of(self, finding: Finding) -> int:
        """The recipe line a finding is shown on: its own, else its knob's, else a trace hop's, else 1.

        Every finding needs a line (code scanning refuses a result without a region, GitHub's
        GH1003); a finding about the recipe as a whole (its name, the runner) is on line 1.
        """
        if finding.recipe_line:
            return finding.recipe_line
        for key in finding.knobs:
            for knob in self.knobs:
                if knob.key == key and knob.recipe_line:
                    return knob.recipe_line
        return next((hop.recipe_line for hop in finding.trace if hop.recipe_line), 1)


SCHEMA_VERSION: Final = 1


class RunGate(Record):
    """The gate's decision over every review of the run (the exit code is `exit_code`)."""

    decision: Literal["passed", "failed", "incomplete"]
    exit_code: int
    fail_on: str
    summary: str = Field(description="the counts in words, as the text output's gate line says them")
    failing: int = Field(description="findings that fail the gate")
    waived: int = Field(description="findings a waiver accepts (not failing)")
    problems: int = Field(description="other problems: neither failing nor waived")
    open_questions: int = Field(description="open questions neither failing nor waived")
    facts: int = Field(description="facts neither failing nor waived (facts never fail)")
    stale_rules: int = Field(default=0, description="rules stale at a reviewed revision that fail the gate "
                                                    "(0 with --allow-stale: reviews[].stale_rules lists them all)")
    baseline: str | None = Field(default=None, description="the --baseline file, when one was given")


class ReviewRun(Record):
    """`srcreview check --format json`: the reviews of the recipes, in the order given, and the gate."""

    schema_version: Literal[1] = SCHEMA_VERSION
    reviews: tuple[Review, ...]
    gate: RunGate | None = Field(default=None, description="set when the gate was evaluated (always by `check`)")
