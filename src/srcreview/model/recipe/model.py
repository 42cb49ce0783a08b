"""The one Recipe model every reader produces: settings, env, hardware and pin, each with its line.

Readers (TOML, `vllm serve` command lines, vLLM YAML configs, compose services) differ only
in how they find these; the engine sees nothing else. A setting keeps the line (and column,
where the format has one) it was written on in the user's own file, because findings and
SARIF results are anchored there.
"""

from __future__ import annotations

import re
from typing import Any, Literal, cast

from srcreview.core.records import Field, Record, field_validator
from srcreview.hfconfig.facts import ModelFacts
from srcreview.hfconfig.overrides import ModelOverrides
from srcreview.vllm.anchors import PACKAGE, SPECULATIVE

MAX_SETTINGS = 2_000  # vLLM 0.29 declares about 250 engine arguments; a recipe has tens
_CAPABILITY = re.compile(r"^([0-9]{1,2})\.([0-9])$")  # ASCII digits only: "١٢.٠" is not 12.0
_HEX = re.compile(r"[0-9a-fA-F]{7,40}")
_VERSION = re.compile(r"[vV]?[0-9]+\.[0-9]+(\.[0-9]+)?((rc|\.post)[0-9]+)?")

Format = Literal["toml", "command-line", "vllm-yaml", "compose", "recipes-registry"]


class RecipeInfo(Record):
    name: str
    model: str | None = None
    description: str | None = None


class RuntimePin(Record):
    """The engine a recipe runs on. `version` and `revision` become `--rev` when none is given, so
    they are checked here, as recipe data (exit 65 naming the recipe line), never passed on raw."""

    engine: str = PACKAGE
    version: str | None = None
    revision: str | None = None
    image: str | None = None
    patches: tuple[str, ...] = Field(default=(), description="patch files or overlay directories laid over the pinned "
                                                             "source, relative to the recipe, applied in order")
    platform: str | None = Field(default=None, description="the platform the runtime profile assumes (one of "
                                 "vLLM's, checked by srcreview.vllm.profile); default: the one the recipe's GPU "
                                 "implies")
    packages: dict[str, bool | str] = Field(default_factory=dict, description="packages the runtime profile takes "
                                            "as installed (true, or the version installed) or absent (false), over "
                                            "what the release's requirements install, e.g. {triton = false, "
                                            "transformers = \"5.16.1\"}")

    @field_validator("patches", mode="before")
    @classmethod
    def _patch_paths(cls, value: Any) -> Any:
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) and v.strip() for v in value):
            raise ValueError('must be a list of paths, e.g. ["patches/fix.diff"]')
        return value

    @field_validator("version")
    @classmethod
    def _version(cls, value: str | None) -> str | None:
        if value is not None and not _VERSION.fullmatch(value):
            raise ValueError(f"{value[:40]!r} is not a release version (e.g. 0.29.0)")
        return value

    @field_validator("revision")
    @classmethod
    def _revision(cls, value: str | None) -> str | None:
        if value is not None and not _HEX.fullmatch(value):
            raise ValueError(f"{value[:40]!r} is not a commit id (7 to 40 hex digits)")
        return value.lower() if value is not None else None


class Hardware(Record):
    gpu: str | None = None
    compute_capability: str | None = None
    gpu_from: str | None = Field(default=None, omit_none=True, description="who named the GPU when not the recipe "
                                                                   "(`--gpu`): the runtime profile says so")
    compute_capability_from: str | None = Field(
        default=None, omit_none=True, description="where the capability comes from when the recipe names only "
                                                  "its GPU (srcreview.model.gpus)")
    memory_gib: float | None = Field(default=None, omit_none=True,
                                     description="the memory of one GPU in GiB, as the platform reports it "
                                                 "(vLLM picks its batch defaults by it)")
    gpus: int | None = Field(default=None, omit_none=True,
                             description="how many GPUs the engine sees (`device_count()`: vLLM checks the "
                                         "parallel sizes against it)")

    @field_validator("compute_capability", mode="before")
    @classmethod
    def _capability(cls, value: Any) -> Any:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            # repr, not rounding: 8.95 must be refused, never read as "8.9" or "9.0"
            value = repr(value) if isinstance(value, float) else f"{value}.0"
        if value is not None and (not isinstance(value, str) or not _CAPABILITY.match(value)):
            raise ValueError('must look like "12.0" (major.minor)')
        return value

    @field_validator("memory_gib", mode="before")
    @classmethod
    def _memory(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1 << 20:
            raise ValueError("must be the GPU's memory in GiB, a positive number (80 for an 80 GiB GPU)")
        return float(value)

    @field_validator("gpus", mode="before")
    @classmethod
    def _gpus(cls, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= 1 << 16:
            raise ValueError("must be how many GPUs the engine sees, a positive whole number (8 for a node of 8)")
        return value

    def with_known_capability(self) -> Hardware:
        """This hardware with its GPU's capability when it names a GPU NVIDIA lists and no
        capability (srcreview.model.gpus); itself otherwise."""
        from srcreview.model.gpus import capability_of

        known = capability_of(self.gpu) if self.gpu and self.compute_capability is None else None
        if known is None:
            return self
        return self.model_copy(update={"compute_capability": known[0], "compute_capability_from": known[1]})

    @property
    def capability(self) -> tuple[int, int] | None:
        """(major, minor) of the GPU, as vLLM's capability checks compare it."""
        if self.compute_capability is None:
            return None
        major, minor = cast(re.Match, _CAPABILITY.match(self.compute_capability)).groups()  # validated
        return int(major), int(minor)


class Setting(Record):
    """One engine setting: a dotted snake_case key (`speculative_config.method`), its value and line."""

    key: str
    value: Any
    line: int
    written_as: str = Field(description="the key as written in the recipe (kebab-case kept; a flag with its dashes)")
    column: int | None = Field(default=None,
                               description="1-based column of the setting in its line, where the format has one")


class EnvVar(Record):
    name: str
    value: str
    line: int


class RawFlag(Record):
    """A command-line flag (or vLLM YAML key) as written, before the revision says what it sets.

    Which engine key `--max-model-len` or `-q` names, whether `--no-x` negates a boolean and
    how a value is typed is decided by the pinned revision's argument definitions
    (srcreview.vllm.flags); the reader only keeps what was written and where.
    """

    flag: str = Field(description="as written, with its dashes: --max-model-len, -q, --speculative-config.method")
    value: Any = Field(default=None, description="the text after `=` (--flag=value), or a YAML value with its type")
    following: tuple[Any, ...] = Field(default=(), description="the words after the flag up to the next flag (text, or "
                                                       "an UnknownValue the shell decides); how many it takes "
                                                       "depends on its definition")
    line: int
    column: int | None = None
    origin: str | None = Field(default=None, description="file:line of a flag read from a file the recipe names "
                                                 "(`--config x.yaml`); `line` is then the recipe line naming it")


class ServerOption(Record):
    """A flag of `vllm serve` that is not an engine argument (--host, --port, --api-key ...):
    shown by `recipe show`, not reviewed."""

    flag: str
    value: Any = None
    line: int


class OpenItem(Record):
    """Part of a recipe srcreview cannot read as a setting, said out loud: words the shell
    decides (`$EXTRA_ARGS`, a model `$MODEL`), a `--config` file that cannot be read or is
    refused, a flag form the revision's parser does not let us settle. Each becomes an
    `undecided` knob row with the reason, never a silent pass."""

    what: str = Field(description="as written: the flag, word or file")
    line: int
    reason: str
    source: str = Field(default="", description="path:start-end of the pinned source that decides it (a parser note)")
    incomplete: bool = Field(default=False, description="a file the recipe names that was not read: the review "
                             "does not cover what it sets (the review is incomplete, exit 2)")
    may_set: tuple[str, ...] = Field(default=(), description="engine keys the item may set again (words the shell "
                                     "may split into flags, after the flags that set them): their values are not "
                                     "certain")


class Recipe(Record):
    path: str = Field(description="how the recipe is named in reports: the file, or file#service for compose")
    info: RecipeInfo
    runtime: RuntimePin = RuntimePin()
    hardware: Hardware = Hardware()
    settings: tuple[Setting, ...] = ()
    env: tuple[EnvVar, ...] = ()
    extra_tables: dict[str, Any] = Field(default_factory=dict, description="tables other tools own, e.g. [srcreview]")
    format: Format = "toml"
    file: str = Field(default="", description="the file the recipe is read from (path without #service); default: path")
    flags: tuple[RawFlag, ...] = Field(default=(), description="command-line flags not yet mapped to engine keys")
    server_options: tuple[ServerOption, ...] = ()
    open: tuple[OpenItem, ...] = Field(default=(), description="what the recipe says that srcreview cannot settle "
                                       "(see OpenItem)")
    notes: tuple[OpenItem, ...] = Field(default=(), description="what the revision's parser does with the recipe's "
                                        "words that the words alone do not show (a JSON value replaced by dotted "
                                        "arguments, a false YAML value dropped)")
    files: tuple[str, ...] = Field(default=(), description="other files the recipe names that were read "
                                   "(`--config x.yaml`, env_file), relative to the recipe")
    pin_line: int | None = Field(default=None, description="the line that pins the engine (runtime table, image tag)")
    model_overrides: ModelOverrides = Field(default=ModelOverrides(), description="[model]: config.json values of the "
                                            "target model the recipe states")
    draft_model_overrides: ModelOverrides = Field(default=ModelOverrides(), description="[draft_model]: the same for "
                                                  "speculative_config.model")
    models: tuple[ModelFacts, ...] = Field(default=(), description="the model configs obtained for the review "
                                           "(srcreview.hfconfig.binding), one per model reference")

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def source_file(self) -> str:
        return self.file or self.path

    def _by_key(self) -> dict[str, Setting]:
        """Settings by key, built once per recipe (not a field: a copy builds its own): the
        engine looks keys up once per rule and setting, so this keeps a review linear."""
        found = self.__dict__.get("_index")
        if found is None:
            found = {}
            for setting in self.settings:
                found.setdefault(setting.key, setting)
            object.__setattr__(self, "_index", found)
        return found

    def setting(self, key: str) -> Setting | None:
        return self._by_key().get(key)

    def value(self, key: str, default: Any = None) -> Any:
        found = self.setting(key)
        return default if found is None else found.value

    @property
    def bindings(self) -> dict[str, Any]:
        """What the analysis may assume: engine settings by dotted key, env vars as `env.NAME`."""
        bound: dict[str, Any] = {s.key: s.value for s in self.settings}
        bound.update({f"env.{e.name}": e.value for e in self.env})
        if self.hardware.capability is not None:
            bound["hardware.compute_capability"] = self.hardware.capability
        if self.hardware.gpu is not None:
            bound["hardware.gpu"] = self.hardware.gpu
        if self.hardware.memory_gib is not None:
            bound["hardware.memory_gib"] = self.hardware.memory_gib
        if self.hardware.gpus is not None:
            bound["hardware.gpus"] = self.hardware.gpus
        return bound

    @property
    def uses_speculative_decoding(self) -> bool:
        return any(key.startswith(f"{SPECULATIVE}.") for key in self._by_key())


def normalize_key(key: str) -> str:
    """Engine keys are accepted in kebab-case (as on vLLM's command line) and snake_case."""
    return key.replace("-", "_")
