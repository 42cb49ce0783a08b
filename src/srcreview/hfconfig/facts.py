"""What srcreview knows about a model: its config files, where they came from, or why it knows nothing.

A review must never fail because a model config is unavailable: then the facts say so once
(`unknown_reason`, tag `model-config-unknown`) and every branch that would read the config
stays open. Local paths never appear here: a file is named by its path inside the model
repository, the model by the reference the recipe wrote.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from srcreview.core.records import Field, Record
from srcreview.hfconfig.config_classes import ConfigClass
from srcreview.hfconfig.files import CONFIG_FILE

MODEL_CONFIG_UNKNOWN: Final = "model-config-unknown"  # a tag (srcreview.core.tags)
_ABSENT = object()


class ConfigFile(Record):
    """One file that was read: its path inside the model repository, digest and Hub commit."""

    path: str = Field(description="inside the model repository, e.g. config.json")
    sha256: str
    size: int
    commit: str | None = Field(default=None,
                               description="the Hub commit the file resolved to (None for a local directory)")


class AppliedOverride(Record):
    """A value the recipe's model table states, with its recipe line and what it replaced."""

    key: str = Field(description="dotted key inside config.json, e.g. text_config.model_type")
    value: Any
    line: int
    replaced: bool = Field(description="whether config.json had a value for the key")
    replaces: Any = Field(default=None, description="that value, when replaced")


class ModelFacts(Record):
    """The model config of one model reference (target or draft), JSON-serialisable and deterministic.

    `documents` maps each file read (`config.json`, `generation_config.json`, ...) to its JSON
    object, `config.json` with the recipe's overrides applied; treat them as read-only.
    """

    source: Literal["local", "hub", "recipe", "local+recipe", "hub+recipe", "none"]
    ref: str | None = Field(default=None, description="the model as the recipe names it")
    kind: Literal["hub", "local"] | None = None
    revision: str | None = Field(default=None, description="the Hub revision asked for; None: the default branch")
    commit: str | None = Field(default=None, description="the Hub commit config.json resolved to")
    files: tuple[ConfigFile, ...] = ()
    documents: dict[str, dict] = Field(default_factory=dict)
    unresolved: tuple[str, ...] = Field(default=(),
                                        description="optional files whose presence is unknown (offline, not cached)")
    overrides: tuple[AppliedOverride, ...] = ()
    # a local directory's entries (srcreview.hfconfig.local.list_directory): what the review
    # answers the server's filesystem questions about it from; never in an output
    listing: tuple[tuple[str, str], ...] | None = Field(default=None, exclude=True, repr=False)
    unknown_reason: str | None = Field(default=None, description="why the config could not be obtained")
    tags: tuple[str, ...] = ()
    config_class: ConfigClass | None = Field(default=None, omit_none=True,
                                             description="what the config class of its model_type does with it, "
                                                         "at the runtime profile's transformers version")

    @property
    def known(self) -> bool:
        """Whether config.json itself was obtained (overrides alone do not make it known)."""
        return self.unknown_reason is None

    @property
    def config(self) -> dict:
        return self.documents.get(CONFIG_FILE, {})

    def get(self, key: str, default: Any = None, *, file: str = CONFIG_FILE) -> Any:
        """The value at dotted `key` (`text_config.model_type`) in `file`, else `default`."""
        value = _lookup(self.documents.get(file), key)
        return default if value is _ABSENT else value

    def has(self, key: str, *, file: str = CONFIG_FILE) -> bool:
        return _lookup(self.documents.get(file), key) is not _ABSENT

    def decided(self, key: str, *, file: str = CONFIG_FILE) -> bool:
        """Whether the value of `key` is known: present, or absent from a file known whole
        (a branch on an undecided key stays open with `model-config-unknown`)."""
        if self.has(key, file=file):
            return True
        return self.known and file not in self.unresolved

    def origin(self, key: str) -> str | None:
        """Where the value of a config.json key comes from: `recipe line N`, `config.json`, or None."""
        for override in self.overrides:
            if key == override.key or key.startswith(override.key + "."):
                return f"recipe line {override.line}"
        return CONFIG_FILE if self.known and self.has(key) else None

    def to_json(self) -> dict:
        return self.model_dump(mode="json")


def unknown_facts(reason: str, *, ref: str | None = None, kind: Literal["hub", "local"] | None = None,
                  revision: str | None = None) -> ModelFacts:
    """Facts that say once why the model config is not known."""
    return ModelFacts(source="none", ref=ref, kind=kind, revision=revision, unknown_reason=reason,
                      tags=(MODEL_CONFIG_UNKNOWN,))


def _lookup(document: dict | None, key: str) -> Any:
    value: Any = document
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return _ABSENT
        value = value[part]
    return value
