"""A model config read from a local directory, as vLLM reads `--model /path/to/model`."""

from __future__ import annotations

import hashlib
import os

from srcreview.hfconfig.facts import ConfigFile, ModelFacts
from srcreview.hfconfig.files import (
    CONFIG_FILE,
    MODEL_FILES,
    ConfigUnavailable,
    parse_document,
)
from srcreview.hfconfig.readfile import read_regular_file
from srcreview.hfconfig.ref import ModelRef


def read_local_config(ref: ModelRef) -> ModelFacts:
    """The config files present in the directory of `ref`; ConfigUnavailable when config.json
    is missing or any present file is unreadable or not a JSON object."""
    directory = ref.path
    if directory is None or not directory.is_dir():
        raise ConfigUnavailable("not a directory here")
    files, documents = [], {}
    for name in MODEL_FILES:
        raw = read_regular_file(directory / name, name)
        if raw is None:
            if name == CONFIG_FILE:
                raise ConfigUnavailable(f"no {CONFIG_FILE} in the directory")
            continue
        documents[name] = parse_document(name, raw)
        files.append(ConfigFile(path=name, sha256=hashlib.sha256(raw).hexdigest(), size=len(raw)))
    return ModelFacts(source="local", ref=ref.text, kind="local", files=tuple(files), documents=documents,
                      listing=list_directory(directory))


MAX_LISTING = 10_000  # entries; a larger tree is not listed (its files stay unknown to the review)


def list_directory(directory) -> tuple[tuple[str, str], ...] | None:
    """Every entry below `directory` as (path inside it, kind), sorted: "file" (a regular file,
    or a link to one), "dir", "opaque" (a link to a directory: not descended into, as pathlib's
    `rglob` does not), "other"; broken links are not there, as for `exists()`. None when a
    directory cannot be read or the tree is larger than MAX_LISTING."""
    entries: list[tuple[str, str]] = []
    failed: list[OSError] = []
    for here, dirs, files in os.walk(directory, onerror=failed.append, followlinks=False):
        rel = os.path.relpath(here, directory).replace(os.sep, "/")
        prefix = "" if rel == "." else f"{rel}/"
        for name in dirs:
            entries.append((prefix + name, "opaque" if os.path.islink(os.path.join(here, name)) else "dir"))
        for name in files:
            full = os.path.join(here, name)
            if os.path.exists(full):
                entries.append((prefix + name, "file" if os.path.isfile(full) else "other"))
        if failed or len(entries) > MAX_LISTING:
            return None
    return tuple(sorted(entries))
